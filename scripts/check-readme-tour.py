#!/usr/bin/env python3
"""Runs the commands of the README's "A short tour" section, as a reader would.

Each ```sh block is cut into commands (a command goes on over lines that end
in a backslash or leave a quote open); each command runs with bash in a
scratch folder where build/, examples/ and .venv/ are the repository's, and
must succeed. Comment lines right after a command that start with "# nf-"
are output it must print. A command whose comment says "(needs a GPU)" is
skipped. The ```python block runs with the Python that runs this script
(PYTHONPATH must reach the built package). The C++ block is a fragment: its
complete form, examples/jit/layer_norm.cpp, is built and run by the tests.

  check-readme-tour.py README.md BUILD_DIR
"""
import os
import pathlib
import re
import subprocess
import sys
import tempfile


def tour_blocks(readme):
    text = readme.read_text()
    start = text.index("## A short tour")
    end = text.index("\n## ", start + 1)
    return re.findall(r"```(\w+)\n(.*?)```", text[start:end], re.S)


def commands(block):
    """(command, [expected output lines]) in order."""
    result, current = [], []
    for line in block.splitlines():
        if not current and line.startswith("#"):
            if line.startswith("# nf-") and result:
                result[-1][1].append(line[2:])
            continue
        current.append(line)
        joined = "\n".join(current)
        if line.endswith("\\") or joined.count('"') % 2:
            continue
        result.append((joined, []))
        current = []
    return result


def main():
    readme = pathlib.Path(sys.argv[1]).resolve()
    build = pathlib.Path(sys.argv[2]).resolve()
    root = readme.parent
    failures = 0
    ran = 0
    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        (scratch / "build").symlink_to(build)
        (scratch / "examples").symlink_to(root / "examples")
        venv = root / ".venv"
        if not venv.exists():
            venv = pathlib.Path(sys.executable).resolve().parents[1]
        (scratch / ".venv").symlink_to(venv)
        env = dict(os.environ, PYTHONPATH=str(build / "python"))
        for language, block in tour_blocks(readme):
            if language == "sh":
                for command, expected in commands(block):
                    if "(needs a GPU)" in command:
                        print("skipped (needs a GPU):", command.splitlines()[0])
                        continue
                    run = subprocess.run(["bash", "-c", command], cwd=scratch,
                                         env=env, capture_output=True,
                                         text=True)
                    ran += 1
                    output = run.stdout + run.stderr
                    missing = [e for e in expected if e not in output]
                    if run.returncode or missing:
                        failures += 1
                        print("FAILED:", command, "\nexit status",
                              run.returncode, "\nmissing:", missing,
                              "\n", output[-2000:], file=sys.stderr)
                    else:
                        print("ok:", command.splitlines()[0])
            elif language == "python":
                run = subprocess.run([sys.executable, "-c", block],
                                     cwd=scratch, env=env,
                                     capture_output=True, text=True)
                ran += 1
                if run.returncode:
                    failures += 1
                    print("FAILED: the Python block\n", run.stdout,
                          run.stderr[-2000:], file=sys.stderr)
                else:
                    print("ok: the Python block")
    print("readme tour: %d commands run, %d failed" % (ran, failures))
    return 1 if failures or not ran else 0


if __name__ == "__main__":
    sys.exit(main())
