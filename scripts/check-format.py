#!/usr/bin/env python3
"""Fails, listing the files, when a tracked C++ file is not formatted as
.clang-format (LLVM style) says. Fix with:
    git ls-files '*.cpp' '*.h' | xargs clang-format-19 -i
"""
import argparse
import shutil
import subprocess
import sys
from pathlib import Path


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--clang-format", default="clang-format-19")
    args = ap.parse_args()
    ls = None
    if shutil.which("git"):
        ls = subprocess.run(["git", "ls-files", "*.cpp", "*.h"], capture_output=True, text=True)
    if ls is not None and ls.returncode == 0:
        files = ls.stdout.split()
    else:  # no git or not a checkout: every C++ file of the source directories
        files = sorted(str(p) for d in ("include", "lib", "tools", "unittests")
                       for p in Path(d).rglob("*") if p.suffix in (".cpp", ".h"))
    bad = [f for f in files
           if subprocess.run([args.clang_format, "--dry-run", "--Werror", f],
                             capture_output=True).returncode != 0]
    for f in bad:
        print(f"not clang-formatted: {f}")
    print(f"{len(files)} files checked, {len(bad)} not formatted")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
