#!/usr/bin/env python3
"""Differential fuzzing of the sm_90a product kernels on the CUDA simulator.

Each case is a random f16 or bf16 matmul (M, N and K from 1 up, operands
transposed or not, with or without a bias and tanh GELU) under a random
written wgmma schedule that the schedule check accepts: cp.async, TMA,
warp specialized (its producer staging by TMA or by cp.async), in
clusters of two (`multicast`), in two teams (`pingpong`), with a split K or not, a few blocks looping over many units
(`max-blocks`) or one a unit. `nf-run --target cuda-sim --cuda-arch sm_90a`
runs it in a random thread order (forward, reverse, shuffled), and its
result is compared with float64 on the same inputs: within two units in
the last place of the storage type, plus 1e-4 sqrt(K).

    scripts/fuzz-written-products.py --seed 1 --cases 200

Failing cases are kept (their .mlir, inputs and command) under --keep;
the exit status is 1 if any failed. docs/Development.md has the runs so
far. Needs numpy and ml_dtypes (scripts/setup.sh installs both).
"""

import argparse
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np

# A block's shared memory on an H100 (the schedule check's bound there).
SHARED_BYTES = 232448


def random_schedule(rng):
    """(schedule text, tileM, tileN, multicast) of a kernel the check takes."""
    while True:
        kind = rng.choice(["cp.async", "tma", "ws", "tma ws", "ws pp", "tma ws pp",
                           "tma ws mc", "tma ws mc pp"])
        tma, ws, mc, pp = "tma" in kind, "ws" in kind, "mc" in kind, "pp" in kind
        wm = 4 if pp else rng.choice([4, 8])
        wn = rng.choice([1, 2])
        tm = rng.choice([64, 128, 256])
        tn = rng.choice([64, 128, 256])
        tk = rng.choice([16, 32, 64])
        stages = rng.choice([3, 4])
        group_m, group_n = tm // (wm // 4), tn // wn
        teams = 2 if pp else 1
        threads = 32 * wm * wn
        stage = (tm + tn) * tk * 2 + (8 * (2 if ws else 1) if tma or ws else 0)
        staging = tm * tn * 2 if ws else 0
        if (tm % (64 * (wm // 4)) or tn % wn or group_n not in (64, 128, 256)
                or group_m // 64 * group_n // 2 > 128 or (mc and tn % 128)
                or threads * teams + (128 if ws else 0) > 1024
                or stages * stage + teams * staging + 8 * teams > SHARED_BYTES
                or (tm * tk // 8) % (128 if ws else threads)
                or (tn * tk // 8) % (128 if ws else threads)):
            continue
        words = [f"tensor-core-product tile={tm}x{tn}x{tk} warps={wm}x{wn} stages={stages} wgmma"]
        words += ["tma"] if tma else []
        words += ["warp-specialized"] if ws else []
        words += ["multicast"] if mc else []
        words += ["pingpong"] if pp else []
        return " ".join(words), tm, tn, mc


def random_case(rng):
    schedule, tm, tn, mc = random_schedule(rng)
    dtype = rng.choice(["f16", "bf16"])
    m = rng.randint(1, 3 * tm)
    # N and K mostly whole 16-byte rows (TMA's), sometimes not (cp.async).
    n = rng.choice([rng.randint(1, 2 * tn), 8 * rng.randint(1, 2 * tn // 8 + 1)])
    k = 8 * rng.randint(1, 40) if rng.random() < 0.85 else rng.randint(1, 300)
    if not mc and rng.random() < 0.4:
        vector = 8
        while n % vector:
            vector //= 2
        schedule += (f" split-k={rng.choice([2, 3])} finish-block=256 "
                     f"finish-vector={vector} finish-min-blocks-per-sm=4")
    blocks = rng.choice([None, None, 1, 2, 3])
    if blocks:
        schedule += f" max-blocks={blocks}"
    return dict(schedule=schedule, dtype=dtype, m=m, n=n, k=k,
                ta=rng.random() < 0.3, tb=rng.random() < 0.3,
                epilogue=rng.random() < 0.5,
                order=rng.choice(["forward", "reverse", "shuffle"]))


def source(c):
    t = lambda shape: "tensor<" + "x".join(map(str, shape)) + f"x{c['dtype']}>"
    a = (c["k"], c["m"]) if c["ta"] else (c["m"], c["k"])
    b = (c["n"], c["k"]) if c["tb"] else (c["k"], c["n"])
    y = (c["m"], c["n"])
    attrs = (["transpose_lhs"] if c["ta"] else []) + (["transpose_rhs"] if c["tb"] else [])
    attrs.append(f'nf.gpu_schedule = "{c["schedule"]}"')
    args = f"%a: {t(a)}, %b: {t(b)}"
    body = f"  %p = nf.matmul %a, %b {{{', '.join(attrs)}}} : {t(a)}, {t(b)} -> {t(y)}\n"
    last = "%p"
    if c["epilogue"]:
        args += f", %c: {t((c['n'],))}"
        body += (f"  %q = nf.bias_add %p, %c {{layout = #nf.layout<nhwc>}} : "
                 f"{t(y)}, {t((c['n'],))}\n"
                 f"  %z = nf.gelu %q {{approximate = #nf.approximation<tanh>}} : {t(y)}\n")
        last = "%z"
    return f"func.func @f({args}) -> {t(y)} {{\n{body}  return {last} : {t(y)}\n}}\n", a, b


def check(c, seed, bin_dir, work):
    """'' if case `c` matches float64, else why not."""
    text, a_shape, b_shape = source(c)
    with open(os.path.join(work, "f.mlir"), "w") as f:
        f.write(text)
    storage = np.float16 if c["dtype"] == "f16" else ml_dtypes.bfloat16
    gen = np.random.default_rng(seed)
    arrays = [gen.standard_normal(a_shape).astype(storage),
              gen.standard_normal(b_shape).astype(storage)]
    if c["epilogue"]:
        arrays.append(gen.standard_normal((c["n"],)).astype(storage))
    cmd = [os.path.join(bin_dir, "nf-run"), "--target", "cuda-sim", "--cuda-arch", "sm_90a",
           "--sim-order", c["order"], "--entry", "f"]
    for i, x in enumerate(arrays):
        np.save(os.path.join(work, f"in{i}.npy"), x)
        cmd += ["--input", os.path.join(work, f"in{i}.npy")]
    cmd += ["--output", os.path.join(work, "out.npy"), os.path.join(work, "f.mlir")]
    with open(os.path.join(work, "command"), "w") as f:
        f.write(" ".join(cmd) + "\n")
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if run.returncode:
        return "nf-run failed: " + run.stderr.strip()[:600]
    got = np.load(os.path.join(work, "out.npy"))
    if c["dtype"] == "bf16":  # numpy reads bf16 back as 2-byte voids
        got = (got.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    got = got.astype(np.float64)
    a, b = (x.astype(np.float64) for x in arrays[:2])
    want = (a.T if c["ta"] else a) @ (b.T if c["tb"] else b)
    if c["epilogue"]:
        x = want + arrays[2].astype(np.float64)
        want = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    ulp = 2.0 ** (-10 if c["dtype"] == "f16" else -7)
    bad = ~(np.abs(got - want) <= 2 * ulp * np.abs(want) + 1e-4 * math.sqrt(c["k"]))
    if bad.any():
        i = tuple(int(x) for x in np.argwhere(bad)[0])
        return f"{int(bad.sum())} results off, the first at {i}: {got[i]} for {want[i]}"
    return ""


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--bin-dir", default=os.path.join(here, "..", "build", "bin"))
    parser.add_argument("--keep", default="fuzz-written-products-failures",
                        help="where failing cases are kept")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    failed = 0
    for i in range(args.cases):
        c = random_case(rng)
        work = tempfile.mkdtemp(prefix="nf-products-")
        why = check(c, args.seed * 100003 + i, args.bin_dir, work)
        line = (f"{c['dtype']} {c['m']}x{c['k']}x{c['n']} ta={c['ta']} tb={c['tb']} "
                f"epilogue={c['epilogue']} order={c['order']} '{c['schedule']}'")
        if why:
            failed += 1
            keep = os.path.join(args.keep, f"seed{args.seed}-case{i}")
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(work, keep)
            print(f"FAIL {i}: {line}: {why} (kept in {keep})", flush=True)
        else:
            print(f"ok {i}: {line}", flush=True)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.cases - failed} of {args.cases} cases matched float64 (seed {args.seed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
