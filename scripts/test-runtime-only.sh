#!/usr/bin/env bash
# Configures, builds and tests normfuse's runtime alone
# (-DNF_ENABLE_COMPILER=OFF), with find_package(MLIR) and find_package(LLVM)
# disabled, then checks that nothing it built links LLVM or MLIR.
#
#   scripts/test-runtime-only.sh BUILD_DIR [CXX_COMPILER] [LAUNCHER]
#
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
for binary in "$build"/unittests/Runtime/NFRuntimeTests; do
  if ldd "$binary" | grep -Ei 'llvm|mlir'; then
    echo "$binary links LLVM or MLIR" >&2
    exit 1
  fi
done
ctest --test-dir "$build" --output-on-failure -j 2
