#!/usr/bin/env bash
# The GPU check, in one device call (docs/CUDA.md, ../shared GPU.md):
#
#   here:   python3 bench/gpu/make_packages.py      # build/gpu-check
#   device: run(command="bench/gpu/run.sh", carry=["build/gpu-check"])
#
# On the GPU machine it builds the runtime alone (NF_ENABLE_COMPILER=OFF:
# no MLIR or LLVM there), runs every case of bench/gpu/cases.py from the
# packages made here with nf-package-run --target cuda against float64
# references (PyTorch), with compute-sanitizer memcheck and racecheck on one
# case per family and dtype and CUDA-event timings beside a device copy,
# and writes the results, with the device, driver and date, to
# $OUT/bench/results/cuda-check-<gpu>-<date>.{json,txt} (commit them).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
packages=${NF_GPU_PACKAGES:-$root/build/gpu-check}
out=${OUT:-$root/build/gpu-check-out}
build=${NF_GPU_BUILD:-/tmp/nf-runtime-only}
if [ ! -f "$packages/binaries/manifest.json" ]; then
  echo "run.sh: no packages in $packages: run bench/gpu/make_packages.py on the machine with the compiler and carry build/gpu-check" >&2
  exit 1
fi
generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi
cmake -S "$root" -B "$build" -DNF_ENABLE_COMPILER=OFF -DNF_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=Release "${generator[@]}" > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target nf-package-run > "$build.build.log" 2>&1 ||
  { tail -50 "$build.build.log"; exit 1; }

# NF_GPU_TARGET=cuda-sim NF_GPU_FILTER=REGEX try the script without a GPU.
target=${NF_GPU_TARGET:-cuda}
if command -v nvidia-smi > /dev/null; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
else
  gpu="no GPU"; driver="none"
fi
short=$(echo "$gpu" | tr 'A-Z' 'a-z' | grep -oE 'h100|h200|a100|l40s|b200' | head -1 || true)
date=$(date -u +%Y-%m-%d)
mkdir -p "$out/bench/results"
stem="$out/bench/results/cuda-check-${short:-$target}-$date"
args=(--tool "$build/bin/nf-package-run" --packages "$packages"
      --target "$target" --filter "${NF_GPU_FILTER:-}" --json "$stem.json"
      --device "$gpu" --driver "$driver" --date "$date")
if [ "$target" = cuda ]; then
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  args+=(--bench 20 --sanitizer "$sanitizer")
fi
export NF_KERNEL_CACHE_DIR="$build/kernel-cache"
set +e
{
  echo "# normfuse GPU check: $gpu, driver $driver, $date, target $target"
  echo "# command: bench/gpu/run.sh (packages by bench/gpu/make_packages.py at $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown))"
  python3 "$root/bench/gpu/check.py" "${args[@]}"
} 2>&1 | tee "$stem.txt"
status=${PIPESTATUS[0]}
set -e
echo "results: $stem.json, $stem.txt"
exit "$status"
