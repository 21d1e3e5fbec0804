#!/usr/bin/env python3
"""Runs ONNX's backend node tests on normfuse (python/tests/test_onnx_backend.py,
through pytest) and tabulates the outcome per operator and per known limit.

    scripts/onnx-backend-report.py BUILD_DIR --write docs/ONNX-backend.md
    scripts/onnx-backend-report.py BUILD_DIR --check docs/ONNX-backend.md

--check fails if a test fails or the table differs from the file's (the
ctest `onnx-backend` runs it); --write rewrites the file's table. The
table lies between the file's `<!-- table -->` and `<!-- end table -->`
lines."""

from __future__ import annotations

import argparse
import collections
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parents[1]
TESTS = ROOT / "python" / "tests"
BEGIN, END = "<!-- table -->", "<!-- end table -->"
TARGETS = ("cpu", "cuda-sim")


def run_tests(build: pathlib.Path, xml_path: str) -> int:
    env = dict(os.environ, PYTHONPATH=str(build / "python"))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "-W", "ignore::RuntimeWarning", f"--junitxml={xml_path}",
               str(TESTS / "test_onnx_backend.py")]
    return subprocess.run(command, env=env, cwd=ROOT).returncode


def outcomes(xml_path: str):
    """{(test name, target): ("passed" | "xfail" | "failed", reason)}."""
    result = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        cls = case.get("classname", "").rsplit(".", 1)[-1]
        name = case.get("name")
        if not cls.endswith("OnnxBackendNodeModelTest"):
            continue
        target = "cuda-sim" if cls.startswith("CudaSim") else (
            "cuda" if name.endswith("_cuda") else "cpu")
        test = re.sub(r"_(cpu|cuda)$", "", name)
        skipped = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            result[(test, target)] = ("failed", "")
        elif skipped is not None and skipped.get("type") == "pytest.xfail":
            reason = skipped.get("message", "").removeprefix("known limit: ")
            result[(test, target)] = ("xfail", reason)
        elif skipped is None:
            result[(test, target)] = ("passed", "")
    return result


def table(result, build: pathlib.Path) -> str:
    sys.path[:0] = [str(TESTS), str(build / "python")]
    import onnx_backend_cases as cases  # noqa: PLC0415

    selected = cases.selected_cases()
    by_name = {c.name: c for c in cases.node_cases()}
    operator = {c.name: cases.operator_of(c, by_name) for c in selected}
    per_op = collections.defaultdict(lambda: collections.Counter())
    reasons = collections.defaultdict(lambda: collections.Counter())
    totals = collections.Counter()
    for (test, target), (outcome, reason) in result.items():
        if target not in TARGETS:
            continue
        op = operator.get(test, "?")
        per_op[op]["tests", target] += 1
        per_op[op][outcome, target] += 1
        totals[outcome, target] += 1
        totals["tests", target] += 1
        if outcome == "xfail":
            reasons[reason][target] += 1
    node_cases = cases.node_cases()
    unselected = [c for c in node_cases if not cases.is_selected(c)]
    missing = collections.Counter(
        op for c in unselected for op in set(cases.operators(c))
        if op not in cases.normfuse.onnx.SUPPORTED_OPERATORS and op not in cases.FOLDED_ONLY)
    lines = [f"Of the {len(node_cases)} node tests of onnx {cases.onnx.__version__}, "
             f"{len(selected)} use only converted operators and run; "
             f"{len(unselected)} are excluded because their graphs use an operator the "
             f"importer does not convert ({len(missing)} operators; the most tested: "
             + ", ".join(f"{op} ({n})" for op, n in missing.most_common(12)) + ").", "",
             "| target | tests | passed | expected failures | failed |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for t in TARGETS:
        lines.append(f"| {t} | {totals['tests', t]} | {totals['passed', t]} | "
                     f"{totals['xfail', t]} | {totals['failed', t]} |")
    lines += ["", "Expected failures, by reason (the error each matches is in "
              "`python/tests/onnx_backend_cases.py`):", "",
              "| reason | cpu | cuda-sim |", "| --- | ---: | ---: |"]
    for reason, counts in sorted(reasons.items(), key=lambda kv: -sum(kv[1].values())):
        lines.append(f"| {reason} | {counts['cpu']} | {counts['cuda-sim']} |")
    lines += ["", "Per operator (a test's operator is the one it tests; `_expanded` "
              "tests count with it), passed / tests:", "",
              "| operator | cpu | cuda-sim |", "| --- | ---: | ---: |"]
    for op in sorted(per_op):
        c = per_op[op]
        lines.append(f"| {op} | {c['passed', 'cpu']} / {c['tests', 'cpu']} | "
                     f"{c['passed', 'cuda-sim']} / {c['tests', 'cuda-sim']} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", type=pathlib.Path)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", type=pathlib.Path)
    mode.add_argument("--check", type=pathlib.Path)
    args = parser.parse_args()
    doc = args.write or args.check
    text = doc.read_text()
    if BEGIN not in text or END not in text:
        print(f"error: {doc} has no {BEGIN} ... {END} section", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        xml_path = os.path.join(tmp, "results.xml")
        code = run_tests(args.build, xml_path)
        if not os.path.exists(xml_path):
            print("error: pytest wrote no results", file=sys.stderr)
            return 1
        result = outcomes(xml_path)
    new = text[: text.index(BEGIN) + len(BEGIN)] + "\n" + table(result, args.build) + text[text.index(END):]
    if args.write:
        doc.write_text(new)
        print(f"wrote {doc}")
        return code
    if new != text:
        print(f"error: {doc}'s table is out of date; rerun with --write {doc}", file=sys.stderr)
        import difflib  # noqa: PLC0415

        sys.stderr.writelines(difflib.unified_diff(
            text.splitlines(True), new.splitlines(True), str(doc), "now"))
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
