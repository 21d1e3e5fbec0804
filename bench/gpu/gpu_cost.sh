#!/usr/bin/env bash
# The predicted cost of the sweep's families (bench/gpu/cost_cases.mlir,
# nf-translate --nf-gpu-cost) on this run's GPU: the device's own figures
# (nf-run --gpu-target) on the cuda target, an H100 SXM's (sm_90) off it.
# Usage: gpu_cost.sh BIN_DIR TARGET (a run_steps.py step; prints the report).
set -euo pipefail
bin=$1
target=$2
here=$(cd "$(dirname "$0")" && pwd)
if [ "$target" = cuda ]; then
  gpu=$("$bin/nf-run" --gpu-target)
else
  gpu=sm_90
fi
echo "GPU target: $gpu"
exec "$bin/nf-translate" --nf-gpu-cost --cuda-arch="$gpu" "$here/cost_cases.mlir"
