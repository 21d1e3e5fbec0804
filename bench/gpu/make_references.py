#!/usr/bin/env python3
"""Makes, here where the compiler is, what the GPU run compares
`nf-run --target cuda` against (bench/gpu/check_references.py there):

    bench/gpu/make_references.py [--nf-run build/bin/nf-run]
        [--nf-package build/bin/nf-package] [--out build/gpu-check/references]
        [--filter REGEX] [--no-sim] [--sim-no-fuse] [--check-sim] [--jobs N]

The programs:
- every function of examples/*.mlir, at the shapes of its signature (as
  scripts/demo.py runs them);
- every TOSA program of test/: each function whose body has tosa.* ops, in
  each `// -----` chunk of a test/**/*.mlir file that expects no diagnostics,
  on float, integer and bool tensors, each dynamic dimension of an argument
  taken as DYNAMIC_SIZE (the nf-run tests' Inputs/tosa.mlir, the raise
  tests' chains, the CPU and GPU lowering tests), but not the error-path inputs of
  test/Tools/*/Inputs that exist to fail (EXCLUDED_FILES).
Each runs here with `nf-run` on the CPU (fused, the default) on inputs
generated from a seed (references.py: uniform in (-1, 1), or in (0.5, 1.5)
where (-1, 1) gives a non-finite result; small integers); its outputs go
into OUT (whole, or sampled with row sums and norms when large; integers
whole or by their SHA-256, compared bit for bit). With cuda-sim (the default;
--no-sim skips it) each program also runs here in the CUDA simulator, so the
manifest says which programs the CUDA back end is expected to run;
--sim-no-fuse runs each op by op there too (against the CPU op by op:
both round every intermediate to its storage type), and --check-sim fails
unless every simulator run agrees with the CPU (ctest's tosa-programs-on-cuda-sim
runs all of them so: issue 29's "every TOSA program the CPU runs also runs
on cuda-sim, fused and op by op"). A program
the CPU cannot run, or whose results are not finite, is listed as excluded
with the reason.

It also packages test/Tools/nf-run/Inputs/layer_norm.mlir's @ln as CUDA
source and as compute_75 PTX (OUT/packages), for the GPU run's equivalent of
test/Tools/nf-package-run/cuda-gpu.test (no nf-package on the GPU machine).

Writes OUT/manifest.json and the .npy and .mlir files it names, then packs
build/gpu-check into build/gpu-carry/gpu-check.tar.xz (what travels).
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    import numpy  # noqa: F401
except ImportError:  # python3 without NumPy: the project's venv has it
    venv = os.path.join(ROOT, ".venv", "bin", "python")
    if os.path.exists(venv) and not os.environ.get("NF_REFERENCES_REEXEC"):
        os.environ["NF_REFERENCES_REEXEC"] = "1"
        os.execv(venv, [venv, *sys.argv])
    raise

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import references as refs  # noqa: E402
from make_packages import pack  # noqa: E402
# test inputs that exist to fail (errors, huge allocations, ops the GPU
# does not take) or to show a diagnostic.
EXCLUDED_FILES = (
    "test/Tools/nf-run/Inputs/huge-intermediate.mlir",
    "test/Tools/nf-run/Inputs/huge-result.mlir",
    "test/Tools/nf-run/Inputs/not-on-gpu.mlir",
    "test/Tools/nf-run/Inputs/one-unlowerable.mlir",
    "test/Tools/nf-opt/Inputs/complex-constant-in-diagnostic.mlir",
)
TYPE = re.compile(r"tensor<((?:(?:\d+|\?)x)*)(f16|bf16|f32|f64|i1|i8|i16|i32|i64|ui8|ui16|ui32|ui64)>")
# The size a dynamic dimension ('?') of an argument takes.
DYNAMIC_SIZE = 6


def split_top(text):
    """`text` split at commas outside <>, (), [] and {}."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:])
    return [p.strip() for p in parts]


def parse_type(text):
    """(shape, dtype) of a ranked tensor type of floats, integers or bools
    (DYNAMIC_SIZE for each '?'), else None."""
    m = TYPE.fullmatch(text.strip())
    if not m:
        return None
    return [DYNAMIC_SIZE if d == "?" else int(d) for d in m.group(1).split("x") if d], m.group(2)


def functions(text):
    """(name, [(shape, dtype) or None per argument], [... per result],
    body) of each func.func in `text`."""
    found = []
    for m in re.finditer(r"func\.func\s+(?:private\s+)?@([\w.$-]+)\s*\(", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        args = [a.split(":", 1)[1] if ":" in a else a
                for a in split_top(text[m.end():i - 1])]
        arg_types = [parse_type(re.sub(r"\{.*\}$", "", a).strip()) for a in args]
        brace = text.find("{", i)
        tail = text[i:brace].strip()
        results = []
        if tail.startswith("->"):
            tail = tail[2:].strip()
            if tail.startswith("("):
                tail = tail[1:tail.rfind(")")]
            results = [parse_type(r) for r in split_top(tail)]
        end = text.find("func.func", brace)
        found.append((m.group(1), arg_types, results,
                      text[brace:end if end > 0 else len(text)]))
    return found


def programs(filter_re):
    """Every program: dicts with id, group, source, text, entry, inputs,
    results; and the excluded ones as (source, entry, reason)."""
    chosen, excluded = [], []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.mlir"))):
        rel = os.path.relpath(path, ROOT)
        text = open(path).read()
        for name, ins, outs, _ in functions(text):
            chosen.append({"id": f"example/{os.path.basename(path)[:-5]}/{name}",
                           "group": "example", "source": rel, "file": rel,
                           "text": None, "entry": name, "inputs": ins,
                           "results": outs})
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"), recursive=True)):
        rel = os.path.relpath(path, ROOT)
        text = open(path).read()
        if "tosa." not in text:
            continue
        chunks = text.split("// -----")
        for index, chunk in enumerate(chunks):
            for name, ins, outs, body in functions(chunk):
                if "tosa." not in body:
                    continue
                where = f"{rel}" + (f" chunk {index}" if len(chunks) > 1 else "")
                if rel in EXCLUDED_FILES:
                    excluded.append((where, name, "an error-path input of a test"))
                elif "expected-" in chunk:
                    excluded.append((where, name, "its chunk expects diagnostics"))
                elif None in ins or None in outs or not outs:
                    excluded.append((where, name, "not every argument and result is a ranked tensor "
                                     "of f16, bf16, f32, f64, bools or 8- to 64-bit integers"))
                else:
                    stem = os.path.splitext(rel)[0].replace("test/", "", 1)
                    chosen.append({"id": f"tosa/{stem}/{index}/{name}",
                                   "group": "tosa-test", "source": where,
                                   "file": None, "text": chunk, "entry": name,
                                   "inputs": ins, "results": outs})
    chosen = [p for p in chosen if re.search(filter_re, p["id"])]
    return chosen, excluded


def slug(text):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")


def run_program(args, program, out, work):
    """The manifest entry of one program, or (None, reason)."""
    pid = program["id"]
    name = slug(pid)
    if program["text"] is not None:
        # One file per chunk (its functions share it).
        program["file"] = "programs/" + slug(pid.rsplit("/", 1)[0]) + ".mlir"
        mlir = os.path.join(out, program["file"])
        with open(mlir + f".{os.getpid()}.{name}", "w") as f:
            f.write(program["text"])
        os.replace(mlir + f".{os.getpid()}.{name}", mlir)
        file_entry = {"references": program["file"]}
    else:
        mlir = os.path.join(ROOT, program["file"])
        file_entry = {"repo": program["file"]}
    folder = os.path.join(work, name)
    os.makedirs(folder, exist_ok=True)
    last_error = None
    for kind in ("uniform", "positive"):
        inputs, cmd = [], [args.nf_run, mlir, "--entry", program["entry"]]
        for i, (shape, dtype) in enumerate(program["inputs"]):
            seed = refs.seed_of(pid, "input", i, kind)
            array = refs.make_input(shape, dtype, seed, kind)
            path = os.path.join(folder, f"in{i}.npy")
            refs.write_npy(path, array, dtype)
            cmd += ["--input", path]
            inputs.append({"shape": shape, "dtype": dtype, "seed": seed,
                           "kind": kind, "sha256": refs.sha256(array)})
        outs = [os.path.join(folder, f"out{i}.npy") for i in range(len(program["results"]))]
        for path in outs:
            cmd += ["--output", path]
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        cpu_s = time.perf_counter() - start
        if proc.returncode != 0:
            return None, "nf-run on the CPU failed: " + (proc.stderr.strip() or proc.stdout.strip())[-300:]
        values = [refs.read_npy(p) for p in outs]
        if all(v[0].size == 0 or refs.np.isfinite(v[0]).all() for v in values):
            break
        last_error = f"a non-finite CPU result with {kind} inputs"
    else:
        return None, last_error
    results = []
    # A result computed from f16 or bf16 values carries their rounding
    # whatever its own type (an f32 mean of f16 sums): it is held to the
    # tolerance of the program's least precise floating-point type.
    loosest = refs.loosest_float([d for _, d in program["inputs"]] + [d for _, d in values])
    for i, (array, dtype) in enumerate(values):
        results.append(refs.digest_output(array, dtype, refs.seed_of(pid, "output", i),
                                          os.path.join(out, "outputs"), f"{name}.out{i}"))
        if loosest and dtype not in refs.INTEGERS and refs.loosest_float([dtype, loosest]) != dtype:
            results[-1]["tolerance_dtype"] = loosest
    entry = {"id": pid, "group": program["group"], "source": program["source"],
             "entry": program["entry"], **file_entry, "inputs": inputs,
             "outputs": results, "cpu_process_s": round(cpu_s, 3)}
    sim_runs = [] if args.no_sim else [("cuda_sim", [])]
    if args.sim_no_fuse:
        sim_runs.append(("cuda_sim_no_fuse", ["--no-fuse"]))
    for key, flags in sim_runs:
        # Op by op rounds every intermediate to its storage type, as the
        # CPU does op by op: that is the reference, not the fused results.
        want, want_dir = results, os.path.join(out, "outputs")
        if flags:
            cpu_cmd = [c if c not in outs else c + ".cpu.npy" for c in cmd] + flags
            proc = subprocess.run(cpu_cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                entry[key] = "error on the CPU: " + (proc.stderr.strip() or proc.stdout.strip())[-300:]
                continue
            want_dir = folder
            want = [refs.digest_output(refs.read_npy(path + ".cpu.npy")[0], dtype,
                                       refs.seed_of(pid, "output", i), folder, f"cpu{i}")
                    for i, (path, (_, dtype)) in enumerate(zip(outs, values))]
        sim_cmd = [c if c not in outs else c + ".sim.npy" for c in cmd] + ["--target", "cuda-sim"] + flags
        proc = subprocess.run(sim_cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            entry[key] = "error: " + (proc.stderr.strip() or proc.stdout.strip())[-300:]
            continue
        errors = []
        for i, path in enumerate(outs):
            got, _ = refs.read_npy(path + ".sim.npy")
            err, _ = refs.compare_output(got, want[i], want_dir)
            if err:
                errors.append(f"result {i}: {err}")
        entry[key] = "ok" if not errors else "differs: " + "; ".join(errors)
    shutil.rmtree(folder, ignore_errors=True)
    return entry, None


def make_packages(args, out):
    """The packages of cuda-gpu.test (nf-package-run on the GPU machine)."""
    mlir = os.path.join(ROOT, "test/Tools/nf-run/Inputs/layer_norm.mlir")
    made = {}
    for folder, extra in (("ln-source", []),
                          ("ln-ptx-compute_75", ["--cuda-arch", "compute_75", "--binaries"])):
        target = os.path.join(out, "packages", folder)
        shutil.rmtree(target, ignore_errors=True)
        subprocess.run([args.nf_package, mlir, "--entry", "ln", "-o", target, *extra],
                       check=True, capture_output=True)
        made[folder] = os.path.relpath(target, out)
    return made


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nf-run", default=os.path.join(ROOT, "build/bin/nf-run"))
    parser.add_argument("--nf-package", default=os.path.join(ROOT, "build/bin/nf-package"))
    parser.add_argument("--out", default=os.path.join(ROOT, "build/gpu-check/references"))
    parser.add_argument("--filter", default="", help="only programs whose id matches")
    parser.add_argument("--no-sim", action="store_true", help="skip the cuda-sim run of each program")
    parser.add_argument("--sim-no-fuse", action="store_true",
                        help="also run each program op by op (--no-fuse) in the CUDA simulator")
    parser.add_argument("--check-sim", action="store_true",
                        help="exit 1 unless every program's cuda-sim runs agree with the CPU")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--archive", default=os.path.join(ROOT, "build/gpu-carry/gpu-check.tar.xz"),
                        help="the archive of OUT's parent to write ('' for none)")
    args = parser.parse_args()
    start = time.perf_counter()
    shutil.rmtree(args.out, ignore_errors=True)
    for sub in ("programs", "outputs", "packages"):
        os.makedirs(os.path.join(args.out, sub))
    chosen, excluded = programs(args.filter)
    manifest = {"made_by": "bench/gpu/make_references.py",
                "commit": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                         capture_output=True, text=True).stdout.strip(),
                "tolerance": refs.TOLERANCE, "full_bytes": refs.FULL_BYTES,
                "samples": refs.SAMPLES, "programs": [],
                "excluded": [{"source": s, "entry": e, "reason": r} for s, e, r in excluded]}
    with tempfile.TemporaryDirectory() as work:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            futures = [pool.submit(run_program, args, p, args.out, work) for p in chosen]
            for program, future in zip(chosen, futures):
                entry, reason = future.result()
                if entry is None:
                    manifest["excluded"].append({"source": program["source"],
                                                 "entry": program["entry"], "reason": reason})
                    print(f"excluded {program['id']}: {reason}")
                else:
                    manifest["programs"].append(entry)
                    print(f"ok       {program['id']}" +
                          (f" (cuda-sim: {entry['cuda_sim']})" if "cuda_sim" in entry else "") +
                          (f" (op by op: {entry['cuda_sim_no_fuse']})"
                           if "cuda_sim_no_fuse" in entry else ""))
    # Chunk files no kept program runs are not carried.
    used = {p.get("references") for p in manifest["programs"]}
    for name in os.listdir(os.path.join(args.out, "programs")):
        if f"programs/{name}" not in used:
            os.remove(os.path.join(args.out, "programs", name))
    manifest["packages"] = make_packages(args, args.out)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    size = sum(os.path.getsize(os.path.join(d, n)) for d, _, files in os.walk(args.out) for n in files)
    print(f"{len(manifest['programs'])} programs ({len(manifest['excluded'])} excluded) in "
          f"{args.out}: {size / 2**20:.2f} MiB, {time.perf_counter() - start:.0f} s")
    if args.check_sim:
        bad = [(p["id"], k, p[k]) for p in manifest["programs"]
               for k in ("cuda_sim", "cuda_sim_no_fuse") if p.get(k, "ok") != "ok"]
        for pid, key, what in bad:
            print(f"{pid}: {key}: {what}", file=sys.stderr)
        print(f"cuda-sim: {len(manifest['programs']) - len({b[0] for b in bad})} of "
              f"{len(manifest['programs'])} programs agree with the CPU"
              f"{' fused and op by op' if args.sim_no_fuse else ''}")
        if bad:
            return 1
    if args.archive:
        packed = pack(os.path.dirname(os.path.abspath(args.out)), args.archive)
        print(f"packed {os.path.dirname(os.path.abspath(args.out))} into {args.archive}: "
              f"{packed / 2**20:.2f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
