#!/usr/bin/env bash
# Configures (once) and builds normfuse with clang-19, lld and ninja into
# ${NF_BUILD_DIR:-build}. Extra arguments go to the CMake configure step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NF_BUILD_DIR:-$root/build}

if [ ! -f "$build/build.ninja" ] || [ $# -gt 0 ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=${NF_BUILD_TYPE:-Release} \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DLLVM_USE_LINKER=lld \
    "${launcher[@]}" "$@"
fi
cmake --build "$build" -- ${NF_NINJA_ARGS:-}
