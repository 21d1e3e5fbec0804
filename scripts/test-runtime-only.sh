#!/usr/bin/env bash
# Configures, builds and tests normfuse's runtime alone
# (-DNF_ENABLE_COMPILER=OFF), with find_package(MLIR) and find_package(LLVM)
# disabled, then checks that nothing it built links LLVM or MLIR.
#
#   scripts/test-runtime-only.sh BUILD_DIR [CXX_COMPILER] [LAUNCHER]
#
# With NF_PACKAGE_TOOL and NF_RUN_TOOL (the compiler build's nf-package and
# nf-run), it then makes a kernel package and runs it with the runtime-only
# nf-package-run in the CUDA simulator, against the compiler's cpu target.
# ctest runs it as `runtime-only-build` (into build/runtime-only).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: $0 BUILD_DIR [CXX_COMPILER] [LAUNCHER]}
args=(-S "$src" -B "$build" -DNF_ENABLE_COMPILER=OFF
      -DCMAKE_DISABLE_FIND_PACKAGE_MLIR=ON -DCMAKE_DISABLE_FIND_PACKAGE_LLVM=ON
      -DCMAKE_BUILD_TYPE=Release)
if [ -n "${2:-}" ]; then args+=(-DCMAKE_CXX_COMPILER="$2"); fi
if [ -n "${3:-}" ]; then args+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$3"); fi
if command -v ninja > /dev/null; then args+=(-G Ninja); fi
cmake "${args[@]}" > "$build.configure.log" 2>&1 || {
  cat "$build.configure.log"; exit 1; }
grep -q "NF_ENABLE_COMPILER=OFF: building the runtime alone" \
  "$build.configure.log"
cmake --build "$build" -j 2
# Nothing the runtime build made links MLIR or LLVM.
for binary in "$build"/unittests/Runtime/NFRuntimeTests \
              "$build"/bin/nf-package-run; do
  if ldd "$binary" | grep -Ei 'llvm|mlir'; then
    echo "$binary links LLVM or MLIR" >&2
    exit 1
  fi
done
ctest --test-dir "$build" --output-on-failure -j 2

# The round trip: emitted by the compiler, run by the runtime alone.
if [ -n "${NF_PACKAGE_TOOL:-}" ] && [ -n "${NF_RUN_TOOL:-}" ]; then
  work="$build/round-trip"
  rm -rf "$work" && mkdir -p "$work"
  mlir="$src/test/Tools/nf-run/Inputs/layer_norm.mlir"
  npy_tool="$src/test/Tools/nf-run/Inputs/npy_tool.py"
  "$NF_PACKAGE_TOOL" "$mlir" --entry ln --entry bn_grad -o "$work/pkg"
  python3 "$npy_tool" gauss "$work/x.npy" '<f4' 4,13 1
  python3 "$npy_tool" gauss "$work/dy.npy" '<f4' 2,3,4,4 4
  python3 "$npy_tool" gauss "$work/c.npy" '<f4' 3 5
  "$build/bin/nf-package-run" "$work/pkg" --entry ln --target cuda-sim \
    --input "$work/x.npy" --output "$work/y.npy" --output "$work/mean.npy"
  python3 "$npy_tool" check-layer-norm "$work/x.npy" "$work/y.npy" \
    "$work/mean.npy" 1e-5 | tee /dev/stderr | grep -q ': ok$'
  bn=(--input "$work/dy.npy" --input "$work/dy.npy" --input "$work/c.npy"
      --input "$work/c.npy")
  "$build/bin/nf-package-run" "$work/pkg" --entry bn_grad --target cuda-sim \
    "${bn[@]}" --output "$work/dx-sim.npy"
  "$NF_RUN_TOOL" "$mlir" --entry bn_grad "${bn[@]}" --output "$work/dx-cpu.npy"
  python3 "$npy_tool" close "$work/dx-sim.npy" "$work/dx-cpu.npy" 1e-5 \
    | tee /dev/stderr | grep -q ': ok$'
  echo "round trip: nf-package -> runtime-only nf-package-run (cuda-sim): ok"
fi
