#!/usr/bin/env python3
"""Runs every program of the references manifest (make_references.py: the
shipped examples and the TOSA programs of test/) with `nf-run --target cuda`
(or cuda-sim) on the inputs the manifest describes, and compares each output
with the CPU's, computed where the compiler is and carried here.

    check_references.py --nf-run BUNDLE/bin/nf-run --references DIR
        [--target cuda] [--jsonl RECORDS.jsonl] [--deadline UNIX_TIME]
        [--jobs N] [--filter REGEX]

Inputs are regenerated from their seeds and must hash to the manifest's
SHA-256 (else the program is recorded as an error: not the same inputs).
A program that cuda-sim refused where the references were made ("cannot run
on the CUDA target": TOSA ops that are not raised to nf ops stay on the CPU)
passes when the device refuses it the same way. Tolerances: references.py's
TOLERANCE, by output dtype, on max |cuda - cpu| / max(1, max |cpu|).
Prints a line per program; exit status 1 if any failed.
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import references as refs  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REFUSED = "cannot run on the CUDA target"


def check(args, program, work):
    rec = {"id": program["id"], "group": program["group"], "source": program["source"],
           "entry": program["entry"]}
    expect_refusal = program.get("cuda_sim", "ok").startswith("error") and REFUSED in program.get("cuda_sim", "")
    mlir = (os.path.join(args.references, program["references"]) if "references" in program
            else os.path.join(ROOT, program["repo"]))
    folder = tempfile.mkdtemp(dir=work)
    cmd = [args.nf_run, mlir, "--entry", program["entry"], "--target", args.target]
    for i, spec in enumerate(program["inputs"]):
        array = refs.make_input(spec["shape"], spec["dtype"], spec["seed"], spec["kind"])
        if refs.sha256(array) != spec["sha256"]:
            rec.update(ok=False, error=f"input {i} is not the input the references were made from (SHA-256 differs)")
            return rec
        path = os.path.join(folder, f"in{i}.npy")
        refs.write_npy(path, array, spec["dtype"])
        cmd += ["--input", path]
    outs = [os.path.join(folder, f"out{i}.npy") for i in range(len(program["outputs"]))]
    for path in outs:
        cmd += ["--output", path]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=max(5, min(120, args.deadline - time.time())))
    except subprocess.TimeoutExpired:
        rec.update(ok=False, error="timed out")
        return rec
    rec["seconds"] = round(time.perf_counter() - start, 2)
    if proc.returncode != 0:
        message = (proc.stderr.strip() or proc.stdout.strip())[-600:]
        if expect_refusal and REFUSED in message:
            rec.update(ok=True, refused_as_expected=True)
        else:
            rec.update(ok=False, error=message)
        return rec
    if expect_refusal:
        rec["note"] = "ran on the device although cuda-sim refused it where the references were made"
    worst, errors = 0.0, []
    for i, (path, entry) in enumerate(zip(outs, program["outputs"])):
        got, dtype = refs.read_npy(path)
        err, diff = refs.compare_output(got, entry, os.path.join(args.references, "outputs"))
        if diff is not None:
            worst = max(worst, diff)
        if err:
            errors.append(f"result {i} ({dtype}): {err}")
    rec.update(ok=not errors, max_rel_diff=worst, error="; ".join(errors) or None)
    return rec


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nf-run", required=True)
    parser.add_argument("--references", default=os.path.join(ROOT, "build/gpu-check/references"))
    parser.add_argument("--target", default="cuda")
    parser.add_argument("--jsonl", default="")
    parser.add_argument("--deadline", type=float, default=0)
    parser.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1))
    parser.add_argument("--filter", default="")
    parser.add_argument("--max-elements", type=int, default=0,
                        help="record programs with more input elements as skipped (0: no limit; the simulator's)")
    args = parser.parse_args()
    args.deadline = args.deadline or time.time() + 3600
    manifest = refs.load_manifest(args.references)
    programs = [p for p in manifest["programs"] if re.search(args.filter, p["id"])]
    out = open(args.jsonl, "a") if args.jsonl else None
    failed = passed = refused = 0
    if args.max_elements:
        kept = []
        for p in programs:
            size = sum(math.prod(i["shape"]) for i in p["inputs"])
            if size <= args.max_elements:
                kept.append(p)
                continue
            rec = {"id": p["id"], "ok": None, "skipped": f"{size} input elements: over --max-elements"}
            if out:
                out.write(json.dumps(rec) + "\n")
            print(f"{p['id']}: skipped ({rec['skipped']} {args.max_elements})")
        programs = kept
    with tempfile.TemporaryDirectory() as work, \
            concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = {pool.submit(check, args, p, work): p for p in programs}
        for future in concurrent.futures.as_completed(futures):
            program = futures[future]
            try:
                rec = future.result()
            except Exception as e:  # noqa: BLE001
                rec = {"id": program["id"], "ok": False, "error": f"{type(e).__name__}: {e}"}
            if out:
                out.write(json.dumps(rec) + "\n")
                out.flush()
            if rec.get("refused_as_expected"):
                refused += 1
                status = "ok   (refused, as on cuda-sim)"
            elif rec["ok"]:
                passed += 1
                status = f"ok   max rel diff {rec.get('max_rel_diff', 0):.3g}"
            else:
                failed += 1
                status = f"FAIL {rec.get('error')}"
            print(f"{rec['id']}: {status}", flush=True)
    print(f"references: {passed} agree with the CPU, {refused} refused as cuda-sim refused them, "
          f"{failed} failed, of {len(programs)} programs on {args.target}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
