#!/usr/bin/env python3
"""Runs the GPU check's packages with the runtime-only nf-package-run and
checks every result against a float64 reference (bench/gpu/run.sh calls it
on the GPU machine; with --target cuda-sim it runs here, on small cases).

    check.py --tool BIN/nf-package-run --packages build/gpu-check
             [--target cuda|cuda-sim] [--filter REGEX] [--bench N]
             [--sanitizer compute-sanitizer] [--json OUT.json]

For each case: fresh random inputs (seeded by the case name), rounded to
the storage dtype; the entry run from the package with cubins (and, for
one case per family, from the CUDA-only package through NVRTC); each result
compared with the reference computed in float64 from the rounded inputs:
max |result - reference| / max(1, max |reference|) within the dtype's
tolerance, and every element finite. With --bench, the entry's CUDA-event
timing beside a device copy of the same bytes. With --sanitizer,
compute-sanitizer memcheck and racecheck on one case per family and dtype.
Prints one line per case and a summary; exit status 1 if any case failed.
"""
import argparse
import json
import math
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as cases_mod  # noqa: E402

DESCR = {"f32": "<f4", "f16": "<f2", "f64": "<f8", "bf16": "<V2"}


class TorchOps:
    def __init__(self):
        import torch
        self.torch = torch
        self.device = "cuda" if torch.cuda.is_available() else "cpu"

    def array(self, values, shape):
        t = self.torch
        return t.tensor(values, dtype=t.float64, device=self.device).reshape(shape)

    def values(self, a):
        return a.detach().reshape(-1).cpu().tolist()

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
        import numpy
        self.np = numpy
        self.erf = numpy.vectorize(math.erf)

    def array(self, values, shape):
        return self.np.array(values, dtype=self.np.float64).reshape(shape)

    def values(self, a):
        return self.np.asarray(a).reshape(-1).tolist()

    def mean(self, x, axis):
        return x.mean(axis=axis, keepdims=True)

    def sum0(self, x):
        return x.sum(axis=0)

    def sqrt(self, x):
        return self.np.sqrt(x)

    def permute(self, x, p):
        return x.transpose(p)

    def relu(self, x):
        return self.np.maximum(x, 0)

    def silu(self, x):
        return x / (1 + self.np.exp(-x))

    def gelu(self, x):
        return 0.5 * x * (1 + self.erf(x / math.sqrt(2)))

    def gelu_tanh(self, x):
        return 0.5 * x * (1 + self.np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))

    def einsum(self, spec, *args):
        return self.np.einsum(spec, *args)

    def pad(self, x, top, bottom, left, right):
        return self.np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))

    def zeros(self, shape):
        return self.np.zeros(shape)


def round_to(values, dtype):
    """`values` rounded to `dtype` (bf16: to nearest even), as floats."""
    if dtype == "f32":
        return list(struct.unpack(f"<{len(values)}f", struct.pack(f"<{len(values)}f", *values)))
    if dtype == "f16":
        return list(struct.unpack(f"<{len(values)}e", struct.pack(f"<{len(values)}e", *values)))
    bits = struct.unpack(f"<{len(values)}I", struct.pack(f"<{len(values)}f", *values))
    rounded = [((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16 for b in bits]
    return list(struct.unpack(f"<{len(values)}f", struct.pack(f"<{len(values)}I", *rounded)))


def write_npy(path, values, shape, dtype):
    """bf16 is written as f32 (nf-package-run --bf16-from-f32 rounds it as
    round_to does)."""
    descr = "<f4" if dtype in ("f32", "bf16") else DESCR[dtype]
    fmt = {"<f4": "f", "<f2": "e", "<f8": "d"}[descr]
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack(f"<{len(values)}{fmt}", *values))


def read_npy(path):
    data = open(path, "rb").read()
    n = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + n].decode()
    descr = header.split("'descr': '")[1].split("'")[0]
    payload = data[10 + n:]
    if descr == "<V2":
        bits = struct.unpack(f"<{len(payload) // 2}H", payload)
        return list(struct.unpack(f"<{len(bits)}f", struct.pack(f"<{len(bits)}I", *[b << 16 for b in bits])))
    fmt = {"<f4": "f", "<f2": "e", "<f8": "d"}[descr]
    size = struct.calcsize(fmt)
    return list(struct.unpack(f"<{len(payload) // size}{fmt}", payload))


def make_inputs(case, seed):
    rng = random.Random(seed)
    out = []
    for shape, dtype, kind in case.inputs:
        count = math.prod(shape)
        if kind == "scale":
            values = [1 + 0.5 * rng.uniform(-1, 1) for _ in range(count)]
        elif kind == "positive":
            values = [rng.uniform(0.5, 2) for _ in range(count)]
        elif kind == "small":
            values = [0.1 * rng.gauss(0, 1) for _ in range(count)]
        else:
            values = [rng.gauss(0.5, 2) for _ in range(count)]
        out.append(round_to(values, dtype))
    return out


def run_case(args, ops, case, package, workdir, extra=()):
    """(error, worst relative difference, bench JSON or None)"""
    seed = int.from_bytes(case.name.encode()[:8].ljust(8, b"\0"), "little")
    inputs = make_inputs(case, seed)
    cmd = [*extra, args.tool, package, "--entry", case.name, "--target", args.target,
           "--bf16-from-f32"]
    for i, ((shape, dtype, _), values) in enumerate(zip(case.inputs, inputs)):
        path = os.path.join(workdir, f"in{i}.npy")
        write_npy(path, values, shape, dtype)
        cmd += ["--input", path]
    outs = [os.path.join(workdir, f"out{i}.npy") for i in range(len(case.results))]
    for path in outs:
        if os.path.exists(path):
            os.remove(path)
        cmd += ["--output", path]
    if args.bench and not extra:
        cmd += ["--bench", str(args.bench)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
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
    refs = case.reference(ops, *[ops.array(v, s) for v, (s, _, _) in zip(inputs, case.inputs)])
    worst = 0.0
    for i, (path, ref, (shape, dtype)) in enumerate(zip(outs, refs, case.results)):
        got = read_npy(path)
        want = ops.values(ref)
        if len(got) != len(want):
            return f"result {i}: {len(got)} elements, expected {len(want)}", None, bench
        if not all(math.isfinite(g) for g in got):
            return f"result {i}: a non-finite element", None, bench
        scale = max(1.0, max((abs(w) for w in want), default=0.0))
        diff = max((abs(g - w) for g, w in zip(got, want)), default=0.0) / scale
        worst = max(worst, diff)
        tol = cases_mod.tolerance(dtype)
        if diff > tol:
            return f"result {i}: relative difference {diff:.3g} over {tol:g}", worst, bench
    return None, worst, bench


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
    parser.add_argument("--device", default="")
    parser.add_argument("--driver", default="")
    parser.add_argument("--date", default="")
    args = parser.parse_args()
    try:
        ops = TorchOps()
    except ImportError:
        ops = NumpyOps()
    cases = [c for c in cases_mod.all_cases() if re.search(args.filter, c.name)]
    results, failures = [], 0
    nvrtc_done, sanitized = set(), set()
    with tempfile.TemporaryDirectory() as workdir:
        for case in cases:
            record = {"case": case.name, "family": case.family, "dtype": case.dtype}
            err, worst, bench = run_case(args, ops, case, os.path.join(args.packages, "binaries"), workdir)
            record.update(ok=err is None, error=err, max_rel_diff=worst, bench=bench)
            if err is None and case.family not in nvrtc_done:
                nvrtc_done.add(case.family)
                err2, _, _ = run_case(args, ops, case, os.path.join(args.packages, "source"), workdir)
                record["from_source_ok"] = err2 is None
                err = err or (err2 and "from source: " + err2)
            if err is None and args.sanitizer and (case.family, case.dtype) not in sanitized:
                sanitized.add((case.family, case.dtype))
                for tool in ("memcheck", "racecheck"):
                    e, _, _ = run_case(args, ops, case, os.path.join(args.packages, "binaries"), workdir,
                                       extra=(args.sanitizer, "--tool", tool, "--error-exitcode", "1"))
                    record[tool] = "clean" if e is None else e
                    err = err or (e and f"{tool}: {e}")
            record["ok"] = err is None
            failures += err is not None
            results.append(record)
            frac = f" {bench['fraction_of_copy']:.2f} of copy" if bench and "fraction_of_copy" in bench else ""
            print(f"{'ok  ' if err is None else 'FAIL'} {case.name}: max rel diff "
                  f"{worst if worst is not None else float('nan'):.3g}{frac}"
                  + (f"  [{err}]" if err else ""), flush=True)
    print(f"{len(cases) - failures} of {len(cases)} cases passed")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "driver": args.driver,
                       "date": args.date, "target": args.target,
                       "reference": type(ops).__name__, "cases": results},
                      f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
