#!/usr/bin/env bash
# CPU benchmark of the norms: builds, then runs nf-bench-cpu-norms with
# ${NF_BENCH_THREADS:-2} threads on 128 MiB tensors and writes
# bench/results/cpu-norms-<machine>-<date>.json, nf-bench-cpu-fused (fused
# norm kernels against their unfused ops), bench/results/cpu-fused-*.json,
# and nf-bench-cpu-examples (examples/ unfused and fused),
# bench/results/cpu-examples-*.json.
#
# Then ONNX Runtime as a peer: bench/cpu/ort_norms.py runs the same cases
# (and GroupNorm / BatchNorm / InstanceNorm, NCHW) with the same thread count
# and runs, and writes bench/results/cpu-norms-ort-<machine>-<date>.json, with
# the C++ JSON just written for comparison. Its Python is the first of:
# $NF_BENCH_PYTHON; python3, if it imports onnxruntime, onnx and numpy;
# <build>/bench-venv/bin/python, created on first use with
# `python3 -m venv` and `pip install $NF_BENCH_ORT_PACKAGES` (default: the
# versions it was written against, onnxruntime==1.31.1 onnx==1.23.2 numpy).
# Nothing is installed into the system Python. If none can be had (no
# python3-venv, no network), it says why and the script still succeeds.
# NF_BENCH_ORT=0 skips it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NF_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
# Result files are named <backend>-<suite>-<machine>-<date>.json
# (NF_BENCH_MACHINE names the machine; the host name by default).
stamp="${NF_BENCH_MACHINE:-$(hostname -s)}-$(date -u +%Y-%m-%d)"
out="$root/bench/results/cpu-norms-$stamp.json"
"$build/bench/cpu/nf-bench-cpu-norms" --threads "${NF_BENCH_THREADS:-2}" \
  --runs "${NF_BENCH_RUNS:-15}" --json "$out"
echo "wrote ${out#$root/}"

# nf.fused kernels (prologue/epilogue in the norm's loop nest) against the
# same ops unfused: bench/results/cpu-fused-<machine>-<date>.json.
fused_out="$root/bench/results/cpu-fused-$stamp.json"
"$build/bench/cpu/nf-bench-cpu-fused" --threads "${NF_BENCH_THREADS:-2}" \
  --runs "${NF_BENCH_RUNS:-15}" --json "$fused_out"
echo "wrote ${fused_out#$root/}"

# The shipped examples as written and through nf-fuse-pipeline, in
# alternating calls: bench/results/cpu-examples-<machine>-<date>.json. 1001
# pairs (about 5 minutes on 2 cores) bound the median pair ratio to about
# +-0.15%: the nf-op examples' fusion gains are 0.5-2%, and with 301 pairs
# the UNet block's 0.6% was inside this VM's drift between runs in 2 of 5.
examples_out="$root/bench/results/cpu-examples-$stamp.json"
"$build/bench/cpu/nf-bench-cpu-examples" --threads "${NF_BENCH_THREADS:-2}" \
  --pairs "${NF_BENCH_EXAMPLE_PAIRS:-1001}" --json "$examples_out"
echo "wrote ${examples_out#$root/}"

[ "${NF_BENCH_ORT:-1}" = 0 ] && exit 0
has_ort() { "$1" -c 'import onnxruntime, onnx, numpy' 2>/dev/null; }
py=${NF_BENCH_PYTHON:-}
venv="$build/bench-venv"
if [ -z "$py" ]; then
  if has_ort python3; then
    py=python3
  elif has_ort "$venv/bin/python"; then
    py=$venv/bin/python
  else
    echo "bench-cpu: setting up $venv for ONNX Runtime"
    if python3 -m venv "$venv" &&
      "$venv/bin/pip" install -q ${NF_BENCH_ORT_PACKAGES:-onnxruntime==1.31.1 onnx==1.23.2 numpy} &&
      has_ort "$venv/bin/python"; then
      py=$venv/bin/python
    else
      echo "bench-cpu: no ONNX Runtime (could not create $venv or pip install" \
        "onnxruntime onnx numpy into it; see above); skipping the ORT peer"
      exit 0
    fi
  fi
fi
ort_out="$root/bench/results/cpu-norms-ort-$stamp.json"
"$py" "$root/bench/cpu/ort_norms.py" --threads "${NF_BENCH_THREADS:-2}" \
  --runs "${NF_BENCH_RUNS:-15}" --cpp-json "$out" --json "$ort_out"
