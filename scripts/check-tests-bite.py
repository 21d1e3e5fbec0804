#!/usr/bin/env python3
"""Shows that every positive FileCheck line and every expected-error of the
given lit tests can fail: mutates each in turn, runs the test with lit and
expects it to fail. A CHECK with a typo (or a diagnostic quoted loosely)
would pass either way; this catches it.

    scripts/check-tests-bite.py [--build build] test/Dialect/NF/ops.mlir ...

CHECK-NOT lines are not mutated (a mutated NOT pattern still matches
nothing). Restores every file, even when interrupted.
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

CHECK = re.compile(r"^(\s*(?:(?://|#)\s*)?[A-Z]+(-LABEL|-SAME|-NEXT|-DAG)?:\s*)(.*\S)\s*$")
EXPECTED = re.compile(r"(expected-(error|warning|note|remark)[^{]*\{\{)(.*?)(\}\})")


def mutants(lines):
    for i, line in enumerate(lines):
        m = EXPECTED.search(line)
        if m:
            yield i, line[: m.end(3)] + " MUTANT" + line[m.end(3):]
            continue
        m = CHECK.match(line)
        if m and "-NOT" not in m.group(1) and "RUN" not in m.group(1):
            yield i, m.group(1) + m.group(3) + " MUTANT\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", default="build")
    ap.add_argument("tests", nargs="+")
    args = ap.parse_args()
    lit = ["python3", "/usr/lib/llvm-19/build/utils/lit/lit.py", "-q"]
    survivors = 0
    total = 0
    for test in args.tests:
        path = Path(test)
        original = path.read_text()
        lines = original.splitlines(keepends=True)
        target = Path(args.build) / "test" / path.relative_to("test")
        try:
            for i, mutated in mutants(lines):
                total += 1
                path.write_text("".join(lines[:i] + [mutated] + lines[i + 1:]))
                r = subprocess.run(lit + [str(target)], capture_output=True)
                if r.returncode == 0:
                    survivors += 1
                    print(f"{test}:{i + 1}: still passes when mutated: {lines[i].strip()}")
        finally:
            path.write_text(original)
    print(f"{total} checks mutated, {survivors} survived")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
