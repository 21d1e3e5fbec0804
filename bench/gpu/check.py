#!/usr/bin/env python3
"""Runs the GPU check's packages with the runtime-only nf-package-run and
checks every result against a float64 reference (bench/gpu/run.sh calls it
on the GPU machine; with --target cuda-sim it runs here, on small cases).

    check.py --tool BIN/nf-package-run --packages build/gpu-check
             [--target cuda|cuda-sim] [--filter REGEX] [--bench N]
             [--sanitizer compute-sanitizer] [--json OUT.json]
             [--jsonl RECORDS.jsonl] [--deadline UNIX_TIME]
    check.py ... --sanitizer compute-sanitizer --sanitize-from RECORDS.jsonl
             [--jobs N]       # only the sanitizers, once per family

For each case: fresh random inputs (seeded by the case name), rounded to
the storage dtype; the entry run from the package with cubins (and, for
one case per family, from the CUDA-only package through NVRTC); each result
compared with the reference computed in float64 from the rounded inputs:
max |result - reference| / max(1, max |reference|) within the dtype's
tolerance, and every element finite; a failure says where the wrong
elements lie (how many, the first, and the period along each of the last
two dimensions that they repeat with: a wrong fragment of a product shows
as "columns 8..15 mod 16"). With --bench, the entry's CUDA-event
timing beside a device copy of the same bytes. With --sanitizer,
compute-sanitizer memcheck and racecheck on one case per family (its first
case that passed). With --jsonl, each case's record is appended as it ends
(what survives a time box); with --deadline, cases left when it comes are
recorded as skipped; a case that runs past --case-timeout-s is recorded
as timed out, and the later cases of its kernel (its family, and its wgmma
tile's kind) as skipped. Only the cases make_packages.py packaged (its
cases.json) run. With --sanitize-from, only memcheck and racecheck run, on
the smallest case of each family that passed in those records, N at once
(bench/gpu/run_steps.py runs them last, after the sweep). Prints one line
per case and a summary; exit status 1 if any case failed. Needs NumPy (and
PyTorch for references on the GPU; NumPy computes them without it).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

# A case's run from cubins on a GPU, process start and loading included:
# seconds, so past this its kernel has most likely hung.
BINARY_TIMEOUT_S = 45

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as cases_mod  # noqa: E402
import references as refs  # noqa: E402


class TorchOps:
    def __init__(self):
        import torch
        self.torch = torch
        self.device = "cuda" if torch.cuda.is_available() else "cpu"

    def array(self, values, shape):
        t = self.torch
        return t.from_numpy(np.asarray(values, np.float64).reshape(shape)).to(self.device)

    def values(self, a):
        return a.detach().reshape(-1).cpu().numpy()

    def mean(self, x, axis):
        return x.mean(axis, keepdim=True)

    def sum0(self, x):
        return x.sum(0)

    def sqrt(self, x):
        return self.torch.sqrt(x)

    def permute(self, x, p):
        return x.permute(*p)

    def relu(self, x):
        return self.torch.nn.functional.relu(x)

    def silu(self, x):
        return self.torch.nn.functional.silu(x)

    def gelu(self, x):
        return self.torch.nn.functional.gelu(x)

    def gelu_tanh(self, x):
        return self.torch.nn.functional.gelu(x, approximate="tanh")

    def einsum(self, spec, *args):
        return self.torch.einsum(spec, *args)

    def pad(self, x, top, bottom, left, right):
        return self.torch.nn.functional.pad(x, (left, right, top, bottom))

    def zeros(self, shape):
        return self.torch.zeros(shape, dtype=self.torch.float64, device=self.device)


class NumpyOps:
    def __init__(self):
        self.erf = np.vectorize(math.erf)

    def array(self, values, shape):
        return np.asarray(values, np.float64).reshape(shape)

    def values(self, a):
        return np.asarray(a, np.float64).reshape(-1)

    def mean(self, x, axis):
        return x.mean(axis=axis, keepdims=True)

    def sum0(self, x):
        return x.sum(axis=0)

    def sqrt(self, x):
        return np.sqrt(x)

    def permute(self, x, p):
        return x.transpose(p)

    def relu(self, x):
        return np.maximum(x, 0)

    def silu(self, x):
        return x / (1 + np.exp(-x))

    def gelu(self, x):
        return 0.5 * x * (1 + self.erf(x / math.sqrt(2)))

    def gelu_tanh(self, x):
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))

    def einsum(self, spec, *args):
        return np.einsum(spec, *args)

    def pad(self, x, top, bottom, left, right):
        return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))

    def zeros(self, shape):
        return np.zeros(shape)


def round_to(values, dtype):
    """`values` rounded to `dtype` (bf16: to nearest even), as float64."""
    if dtype == "bf16":
        return refs.from_bf16_bits(refs.to_bf16_bits(values)).astype(np.float64)
    return np.asarray(values).astype(refs.NUMPY[dtype]).astype(np.float64)


def write_input(path, values, dtype):
    """bf16 is written as f32 (nf-package-run --bf16-from-f32 rounds it as
    round_to does, so the values pass unchanged)."""
    refs.write_npy(path, refs.storage(values, "f32" if dtype == "bf16" else dtype),
                   "f32" if dtype == "bf16" else dtype)


def make_inputs(case, seed):
    rng = np.random.default_rng(seed)
    out = []
    for shape, dtype, kind in case.inputs:
        if kind == "scale":
            values = 1 + 0.5 * rng.uniform(-1, 1, shape)
        elif kind == "positive":
            values = rng.uniform(0.5, 2, shape)
        elif kind == "small":
            values = 0.1 * rng.standard_normal(shape)
        else:
            values = rng.normal(0.5, 2, shape)
        out.append(round_to(values, dtype))
    return out


def run_case(args, ops, case, package, workdir, extra=(), timeout=120):
    """(error, worst relative difference, bench JSON or None)"""
    seed = int.from_bytes(case.name.encode()[:8].ljust(8, b"\0"), "little")
    inputs = make_inputs(case, seed)
    cmd = [*extra, args.tool, package, "--entry", case.name, "--target", args.target,
           "--bf16-from-f32"]
    for i, ((shape, dtype, _), values) in enumerate(zip(case.inputs, inputs)):
        path = os.path.join(workdir, f"in{i}.npy")
        write_input(path, values, dtype)
        cmd += ["--input", path]
    outs = [os.path.join(workdir, f"out{i}.npy") for i in range(len(case.results))]
    for path in outs:
        if os.path.exists(path):
            os.remove(path)
        cmd += ["--output", path]
    if args.bench and not extra:
        cmd += ["--bench", str(args.bench)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout} s", None, None
    if proc.returncode != 0:
        return (proc.stderr.strip() or proc.stdout.strip())[-2000:], None, None
    if extra:
        summary = [l for l in proc.stdout.splitlines() + proc.stderr.splitlines()
                   if "ERROR SUMMARY" in l or "RACECHECK SUMMARY" in l]
        if not summary or not all(re.search(r"\b0 (errors|hazards)", l) for l in summary):
            return "; ".join(summary) or proc.stdout[-500:], None, None
        return None, None, None
    bench = None
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            bench = json.loads(line)
    refs_out = case.reference(ops, *[ops.array(v, s) for v, (s, _, _) in zip(inputs, case.inputs)])
    worst = 0.0
    for i, (path, ref, (shape, dtype)) in enumerate(zip(outs, refs_out, case.results)):
        got = refs.read_npy(path)[0].reshape(-1).astype(np.float64)
        want = ops.values(ref)
        if got.size != want.size:
            return f"result {i}: {got.size} elements, expected {want.size}", None, bench
        scale = max(1.0, float(np.abs(want).max(initial=0.0)))
        tol = cases_mod.tolerance(dtype)
        if not np.isfinite(got).all():
            return f"result {i}: {where_wrong(got, want, shape, scale, tol)}", None, bench
        diff = float(np.abs(got - want).max(initial=0.0)) / scale
        worst = max(worst, diff)
        if diff > tol:
            return (f"result {i}: relative difference {diff:.3g} over {tol:g}; "
                    f"{where_wrong(got, want, shape, scale, tol)}"), worst, bench
    return None, worst, bench


# The periods a wrong kernel's errors tend to repeat with: fragments (8,
# 16), warp and block tiles (32 to 256).
PERIODS = (8, 16, 32, 64, 128, 256)


def spans(values):
    """Sorted distinct integers as "a..b" runs: [0, 1, 2, 5] -> "0..2, 5"."""
    runs, start = [], None
    for v, nxt in zip(values, list(values[1:]) + [None]):
        start = v if start is None else start
        if nxt != v + 1:
            runs.append(f"{start}" if start == v else f"{start}..{v}")
            start = None
    return ", ".join(runs)


def where_wrong(got, want, shape, scale, tol):
    """Where a result's wrong elements lie, to tell a bad kernel's pattern
    from a glance: how many, the first (by index, with its value and the
    reference's), and, along each of the last two dimensions, the span of
    the wrong indices and, for the shortest period of PERIODS that they do
    not fill, which residues they take (a fragment or a tile of a product:
    "columns 8..15 mod 16"). Non-finite elements (unwritten outputs are
    NaN) count as wrong."""
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(got - want) <= tol * scale)
    count = int(bad.sum())
    if not count:
        return "no element out of tolerance"
    dims = tuple(int(d) for d in shape)
    if not dims or math.prod(dims) != got.size:
        dims = (got.size,)
    first = int(np.flatnonzero(bad)[0])
    at = tuple(int(x) for x in np.unravel_index(first, dims))
    nonfinite = int((~np.isfinite(got)).sum())
    text = (f"{count} of {got.size} elements wrong"
            + (f" ({nonfinite} not finite)" if nonfinite else "")
            + f", the first at {at}: {got[first]:.6g} for {want[first]:.6g}")
    index = np.nonzero(bad.reshape(dims))
    names = ("rows", "columns") if len(dims) >= 2 else ("elements",)
    for name, axis in zip(names, range(len(dims) - len(names), len(dims))):
        wrong = np.unique(index[axis])
        part = f"{name} {wrong[0]}..{wrong[-1]} of {dims[axis]}"
        for period in PERIODS:
            if dims[axis] < 2 * period:
                break
            residues = np.unique(wrong % period)
            if len(residues) < period:
                part += f", {spans([int(r) for r in residues])} mod {period}"
                break
        text += "; " + part
    return text


def kernel_kind(case):
    """A case's kernel kind: its family, and a wgmma case's tile kind
    ("matmul wgmma_ws": bench/gpu/cases.py's suffixes)."""
    return case.family + re.sub(r".*(_wgmma\w*)$|.*", r"\1", case.name)


def sanitized_cases(cases, passed):
    """The cases the sanitizers run: of each kernel kind, the smallest
    whose name is in `passed` (any, where `passed` is empty)."""
    chosen = {}
    for c in cases:
        if passed and c.name not in passed:
            continue
        size = sum(math.prod(s) for s, _, _ in c.inputs)
        kind = kernel_kind(c)
        if kind not in chosen or size < chosen[kind][0]:
            chosen[kind] = (size, c)
    return [c for _, c in chosen.values()]


def sanitize(args, ops, cases) -> int:
    """compute-sanitizer memcheck and racecheck on one case per kernel kind
    (kernel_kind: each wgmma kernel is its own): its smallest that passed
    (the odd sizes, where bounds go wrong), in parallel; records appended
    to --jsonl."""
    import concurrent.futures
    passed = set()
    if os.path.exists(args.sanitize_from):
        for line in open(args.sanitize_from):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("ok"):
                passed.add(r["case"])
    chosen = sanitized_cases(cases, passed)
    jsonl = open(args.jsonl, "a") if args.jsonl else None
    failures = 0

    def one(case):
        record = {"case": case.name, "family": case.family, "dtype": case.dtype, "sanitized": True}
        with tempfile.TemporaryDirectory() as workdir:
            for tool in ("memcheck", "racecheck"):
                left = args.deadline - time.time() if args.deadline else 600
                if left < 10:
                    record[tool] = "skipped: the time box ran out"
                    continue
                e, _, _ = run_case(args, ops, case, package(args, case, "binaries"), workdir,
                                   extra=(args.sanitizer, "--tool", tool, "--error-exitcode", "1"),
                                   timeout=min(120, max(5, left - 5)))
                record[tool] = "clean" if e is None else e
        record["ok"] = all(record.get(t) == "clean" or str(record.get(t)).startswith("skipped")
                           for t in ("memcheck", "racecheck"))
        return record

    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for record in pool.map(one, chosen):
            failures += not record["ok"]
            if jsonl:
                jsonl.write(json.dumps(record) + "\n")
                jsonl.flush()
            print(f"{'ok  ' if record['ok'] else 'FAIL'} {record['case']}: memcheck {record['memcheck']}, "
                  f"racecheck {record['racecheck']}", flush=True)
    print(f"sanitizers: {len(chosen) - failures} of {len(chosen)} families clean")
    return 1 if failures else 0


def package(args, case, kind):
    """The package folder of `case`: binaries or source, or binaries-ARCH
    and source-ARCH for a case that needs its own target (sm_90a)."""
    return os.path.join(args.packages, kind + ("-" + case.arch if case.arch else ""))


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--packages", default=os.path.join(root, "build/gpu-check"))
    parser.add_argument("--target", default="cuda")
    parser.add_argument("--filter", default="")
    parser.add_argument("--bench", type=int, default=0)
    parser.add_argument("--sanitizer", default="")
    parser.add_argument("--json", default="")
    parser.add_argument("--jsonl", default="", help="append each case's record as it ends")
    parser.add_argument("--deadline", type=float, default=0,
                        help="time.time() after which cases are recorded as skipped")
    parser.add_argument("--sanitize-from", default="",
                        help="run only compute-sanitizer (--sanitizer), memcheck and racecheck, once per family "
                             "on its smallest case that passed in this RECORDS.jsonl (every case if none)")
    parser.add_argument("--jobs", type=int, default=1, help="sanitizer runs at once")
    parser.add_argument("--case-timeout-s", type=float, default=0,
                        help=f"a case's run from cubins (default {BINARY_TIMEOUT_S} on a GPU, 120 "
                             "on the simulator, which compiles the kernels first)")
    parser.add_argument("--max-elements", type=int, default=0,
                        help="record cases with more input elements as skipped (0: no limit; the simulator's)")
    parser.add_argument("--device", default="")
    parser.add_argument("--driver", default="")
    parser.add_argument("--date", default="")
    args = parser.parse_args()
    if not args.case_timeout_s:
        args.case_timeout_s = BINARY_TIMEOUT_S if args.target == "cuda" else 120
    try:
        ops = TorchOps()
    except ImportError:
        ops = NumpyOps()
    cases = [c for c in cases_mod.all_cases() if re.search(args.filter, c.name)]
    # Only what make_packages.py packaged (all cases, or its --filter's).
    listing = os.path.join(args.packages, "cases.json")
    if os.path.exists(listing):
        packaged = {c["name"] for c in json.load(open(listing))}
        cases = [c for c in cases if c.name in packaged]
    if args.sanitize_from:
        return sanitize(args, ops, cases)
    results, failures, skipped = [], 0, 0
    nvrtc_done, sanitized = set(), set()
    jsonl = open(args.jsonl, "a") if args.jsonl else None

    def left():
        return args.deadline - time.time() if args.deadline else float("inf")

    # The kernel kinds (a family, and a wgmma case's tile kind) a case of
    # timed out in, with that case: a kernel that never finishes would
    # take the rest of the time box case by case.
    hung = {}

    with tempfile.TemporaryDirectory() as workdir:
        for case in cases:
            record = {"case": case.name, "family": case.family, "dtype": case.dtype}
            size = sum(math.prod(shape) for shape, _, _ in case.inputs)
            reason = None
            if args.max_elements and size > args.max_elements:
                reason = f"{size} input elements: over --max-elements {args.max_elements}"
            elif left() < 5:
                reason = "the check's time box ran out"
            elif kernel_kind(case) in hung:
                reason = f"{hung[kernel_kind(case)]}, of the same kernel, timed out"
            if reason:
                record.update(ok=None, skipped=reason)
                skipped += 1
                results.append(record)
                if jsonl:
                    jsonl.write(json.dumps(record) + "\n")
                    jsonl.flush()
                continue
            start = time.perf_counter()
            limit = min(args.case_timeout_s, max(1, left()))
            err, worst, bench = run_case(args, ops, case, package(args, case, "binaries"),
                                         workdir, timeout=limit)
            if err and err.startswith("timed out"):
                if limit < args.case_timeout_s:
                    # The time box, not the case's own limit: no sign of a hang.
                    err = f"the check's time box ran out after {limit:.0f} s"
                else:
                    hung[kernel_kind(case)] = case.name
            record.update(ok=err is None, error=err, max_rel_diff=worst, bench=bench)
            if err is None and case.family not in nvrtc_done:
                nvrtc_done.add(case.family)
                err2, _, _ = run_case(args, ops, case, package(args, case, "source"),
                                      workdir, timeout=min(120, max(5, left())))
                record["from_source_ok"] = err2 is None
                err = err or (err2 and "from source: " + err2)
            # compute-sanitizer once per kernel family (its first case that
            # passed), while there is time for it.
            if err is None and args.sanitizer and case.family not in sanitized:
                if left() < 40:
                    record["memcheck"] = record["racecheck"] = "skipped: the time box ran out"
                else:
                    sanitized.add(case.family)
                    for tool in ("memcheck", "racecheck"):
                        e, _, _ = run_case(args, ops, case, package(args, case, "binaries"),
                                           workdir, timeout=min(90, max(5, left() - 5)),
                                           extra=(args.sanitizer, "--tool", tool, "--error-exitcode", "1"))
                        record[tool] = "clean" if e is None else e
                        err = err or (e and f"{tool}: {e}")
            record["ok"] = err is None
            record["error"] = err
            record["seconds"] = round(time.perf_counter() - start, 2)
            failures += err is not None
            results.append(record)
            if jsonl:
                jsonl.write(json.dumps(record) + "\n")
                jsonl.flush()
            frac = f" {bench['fraction_of_copy']:.2f} of copy" if bench and "fraction_of_copy" in bench else ""
            print(f"{'ok  ' if err is None else 'FAIL'} {case.name}: max rel diff "
                  f"{worst if worst is not None else float('nan'):.3g}{frac}"
                  + (f"  [{err}]" if err else ""), flush=True)
    ran = len(cases) - skipped
    print(f"{ran - failures} of {ran} cases passed"
          + (f"; {skipped} skipped (time box or size)" if skipped else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "driver": args.driver,
                       "date": args.date, "target": args.target,
                       "reference": type(ops).__name__, "cases": results},
                      f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
