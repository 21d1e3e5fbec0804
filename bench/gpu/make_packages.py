#!/usr/bin/env python3
"""Makes the GPU check's kernel packages here, where the compiler is.

    bench/gpu/make_packages.py [--nf-package build/bin/nf-package] [--out DIR]
                               [--filter REGEX] [--archive FILE.tar.xz]

Writes every case of cases.py as one function of DIR/cases.mlir and
packages them twice: DIR/binaries (cubins for sm_90 and PTX for compute_90,
compiled by NVRTC here) and DIR/source (CUDA only, for NVRTC on the GPU
machine), plus DIR/cases.json (what check.py needs besides the package).
Cases that need another target (Case.arch: sm_90a for wgmma) go to
DIR/cases-ARCH.mlir, DIR/binaries-ARCH and DIR/source-ARCH, for that
target alone.
DIR defaults to build/gpu-check; at the end DIR (with the references
make_references.py writes into it) is packed into
build/gpu-carry/gpu-check.tar.xz, which the device run carries (7.2 MB of
packages are 0.4 MB packed). --filter packages only the cases whose name
matches (the dry run's few).
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as cases_mod  # noqa: E402


def pack(check_dir, archive):
    """`check_dir` (build/gpu-check) as one .tar.xz, what the device run
    carries and unpacks (make_references.py packs with this too)."""
    os.makedirs(os.path.dirname(archive), exist_ok=True)
    tmp = archive + ".tmp"
    subprocess.run(["tar", "-cJf", tmp, "-C", os.path.dirname(check_dir),
                    os.path.basename(check_dir)], check=True)
    os.replace(tmp, archive)
    return os.path.getsize(archive)


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser()
    parser.add_argument("--nf-package", default=os.path.join(root, "build/bin/nf-package"))
    parser.add_argument("--out", default=os.path.join(root, "build/gpu-check"))
    parser.add_argument("--arch", default="sm_90,compute_90")
    parser.add_argument("--filter", default="")
    parser.add_argument("--archive", default=os.path.join(root, "build/gpu-carry/gpu-check.tar.xz"),
                        help="where to pack OUT ('' for nowhere)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cases = [c for c in cases_mod.all_cases() if re.search(args.filter, c.name)]
    for arch in sorted({c.arch for c in cases}):
        group = [c for c in cases if c.arch == arch]
        suffix = "-" + arch if arch else ""
        module = "".join(re.sub(r"^func\.func @f\(", f"func.func @{c.name}(", c.ir)
                         for c in group)
        mlir = os.path.join(args.out, f"cases{suffix}.mlir")
        with open(mlir, "w") as f:
            f.write(module)
        entries = [a for c in group for a in ("--entry", c.name)]
        for c in group:
            if c.dynamic:
                shapes = ",".join("x".join(str(d) for d in shape)
                                  for shape, _, _ in c.inputs)
                entries += ["--input-shapes", f"{c.name}={shapes}"]
        for folder, extra in (("binaries", ["--binaries"]), ("source", [])):
            subprocess.run([args.nf_package, mlir, *entries, "-o",
                            os.path.join(args.out, folder + suffix),
                            "--cuda-arch", arch or args.arch, *extra], check=True)
    with open(os.path.join(args.out, "cases.json"), "w") as f:
        json.dump([{"name": c.name, "family": c.family, "dtype": c.dtype,
                    "inputs": c.inputs, "results": c.results, "arch": c.arch}
                   for c in cases],
                  f, indent=1)
    print(f"{len(cases)} cases packaged in {args.out}")
    if args.archive:
        size = pack(os.path.abspath(args.out), args.archive)
        print(f"packed {args.out} into {args.archive}: {size / 2**20:.2f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
