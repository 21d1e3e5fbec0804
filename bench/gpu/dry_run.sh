#!/usr/bin/env bash
# The GPU run's dry run: bench/gpu/run.sh end to end without a GPU, on
# target cuda-sim, so that the script cannot rot between GPUs (ctest runs
# it as `gpu-dry-run`).
#
#   bench/gpu/dry_run.sh BUILD_DIR [PYTHON]
#
# It makes, in BUILD_DIR/gpu-dry-run, a few kernel packages and references
# (make_packages.py and make_references.py, filtered), then runs run.sh with
# NF_GPU_TARGET=cuda-sim (the build tree standing in for the device bundle):
# every step on small cases, the sweep on small shapes with normfuse on NumPy
# arrays in the simulator and float64 NumPy references; timings, peers (no
# PyTorch here) and sanitizers are recorded as skipped, with the reason.
# Then report.py --check-dry-run fails it on any failed step or check, a
# normfuse result off its reference, or a timing where none can be.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR [PYTHON]}" && pwd)
python=${2:-python3}
work=$build/gpu-dry-run
start=$(date +%s)
rm -rf "$work" && mkdir -p "$work"

"$python" "$root/bench/gpu/make_packages.py" --nf-package "$build/bin/nf-package" --out "$work/gpu-check" \
  --archive '' --filter '^(layer_norm_3x1001_f32|group_norm_nhwc_3x6x5x7_g3_bf16|matmul_bias_gelu_37x45x70_f16_(dynamic|wgmma)|matmul_bias_gelu_37x72x136_f16_wgmma_(tma|ws|mc|pp)|conv_bias_relu_nhwc_2x64x32x32_o64_s1_f16_wgmma_ws)$' \
  > "$work/make_packages.log" 2>&1 || { cat "$work/make_packages.log"; exit 1; }
"$python" "$root/bench/gpu/make_references.py" --nf-run "$build/bin/nf-run" --nf-package "$build/bin/nf-package" \
  --out "$work/gpu-check/references" --archive '' --jobs 2 \
  --filter 'nf-run/Inputs/tosa/0/(ln_chain|gelu_tanh)$|raise-relu/5/|raise-silu/1/' \
  > "$work/make_references.log" 2>&1 || { cat "$work/make_references.log"; exit 1; }

status=0
# The row norms also under forced schedules at full size (the sweep's
# variants; the NHWC group norms' three kernels beside their one kernel).
NF_SWEEP_ROW_VARIANTS=split-row:full,cluster-row:full,channels-last-groups:full \
NF_GPU_TARGET=cuda-sim NF_GPU_BUILD_DIR="$build" NF_GPU_CHECKS="$work/gpu-check" \
  NF_GPU_PYTHON="$python" OUT="$work/out" "$root/bench/gpu/run.sh" > "$work/run.log" 2>&1 || status=$?
tail -40 "$work/run.log"
json=$(ls "$work"/out/bench/results/gpu-dry-run-*.json 2>/dev/null | head -1)
[ -n "$json" ] || { echo "dry run: run.sh wrote no JSON (exit $status)"; exit 1; }
"$python" "$root/bench/gpu/report.py" "$json" --check-dry-run || exit 1
[ "$status" = 0 ] || { echo "dry run: run.sh exited $status"; exit 1; }
echo "dry run: $(($(date +%s) - start)) s in all; results in $work/out/bench/results"
