#!/usr/bin/env python3
"""What compiling a norm kernel costs on the GPU machine, through the
Python package (normfuse.compile on a LayerNorm of 4096 x 1024 f32):

    nvrtc_costs.py [--target cuda] [--jsonl RECORDS.jsonl]

1. cold: a new process, NF_KERNEL_CACHE_DIR an empty folder: parse, lower,
   NVRTC, load;
2. memory hit: the same process compiles the same function again from text
   that differs by a comment (so the JIT's own cache of compiled functions,
   keyed by the text, misses; the CUDA source is the same, so the kernel
   cache answers from memory): parse, lower, load;
3. disk hit: a new process, the same folder: parse, lower, read the cubin
   from disk, load;
4. memory hit in that process (a comment again): parse, lower, load.
Each is the wall time of normfuse.compile in ms (import normfuse not
counted); cold - memory hit is about NVRTC's share, disk hit - its memory
hit the disk cache's. The folder's entries after each step are counted
(1 after the cold compile, the same 1 after the hits). On cuda-sim there is
no NVRTC and no kernel cache: the same steps then time the simulator's
compile, recorded as such (the dry run's check that the script works).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

IR = """func.func @ln(%x: tensor<4096x1024xf32>, %g: tensor<1024xf32>, %b: tensor<1024xf32>)
    -> (tensor<4096x1024xf32>, tensor<4096x1xf32>, tensor<4096x1xf32>) {
  %y, %m, %r = nf.layer_norm %x scale %g bias %b {axis = 1 : i64, epsilon = 1.0e-05}
      : (tensor<4096x1024xf32>, tensor<1024xf32>, tensor<1024xf32>)
      -> (tensor<4096x1024xf32>, tensor<4096x1xf32>, tensor<4096x1xf32>)
  return %y, %m, %r : tensor<4096x1024xf32>, tensor<4096x1xf32>, tensor<4096x1xf32>
}
"""


def probe(target, first, second):
    """In this process: (ms of a compile named `first`, ms of one named
    `second`, entries in the cache folder after each)."""
    import normfuse
    cache = os.environ.get("NF_KERNEL_CACHE_DIR", "")
    times, entries = {}, {}
    for name, comment in ((first, ""), (second, "// the same function again\n")):
        start = time.perf_counter()
        normfuse.compile(comment + IR, "ln", target=target)
        times[name] = round((time.perf_counter() - start) * 1e3, 2)
        entries[name] = len(os.listdir(cache)) if os.path.isdir(cache) else 0
    print(json.dumps({"times_ms": times, "cache_entries": entries}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="cuda")
    parser.add_argument("--jsonl", default="")
    parser.add_argument("--probe", nargs=2, metavar=("FIRST", "SECOND"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        probe(args.target, *args.probe)
        return 0
    rec = {"kind": "nvrtc", "target": args.target, "function": "layer_norm 4096x1024 f32 (scale, bias)"}
    if args.target != "cuda":
        rec["note"] = (f"{args.target}: no NVRTC and no kernel cache; these are the simulator's compile "
                       "times, not NVRTC's")
    ok = True
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NF_KERNEL_CACHE_DIR=cache)
        for first, second in (("cold", "memory_hit"), ("disk_hit", "memory_hit_after_disk")):
            p = subprocess.run([sys.executable, __file__, "--target", args.target, "--probe", first, second],
                               capture_output=True, text=True, env=env, timeout=120)
            if p.returncode != 0:
                rec.setdefault("failures", []).append(f"{first}: {(p.stderr or p.stdout).strip()[-800:]}")
                ok = False
                break
            got = json.loads(p.stdout.strip().splitlines()[-1])
            rec.setdefault("times_ms", {}).update(got["times_ms"])
            rec.setdefault("cache_entries", {}).update(got["cache_entries"])
    t = rec.get("times_ms", {})
    if ok and args.target == "cuda":
        rec["nvrtc_share_ms"] = round(t["cold"] - t["memory_hit"], 2)
        rec["disk_read_share_ms"] = round(t["disk_hit"] - t["memory_hit_after_disk"], 2)
        if not (rec["cache_entries"]["cold"] >= 1 and len(set(rec["cache_entries"].values())) == 1):
            rec["warning"] = "the cache folder's entries changed after the hits: not every step was the hit it names"
    rec["ok"] = ok
    print(json.dumps(rec, indent=1))
    if args.jsonl:
        with open(args.jsonl, "a") as f:
            f.write(json.dumps(rec) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
