#!/usr/bin/env bash
# Configures (once) and builds normfuse with clang-19, lld and ninja into
# ${NF_BUILD_DIR:-build}, with the Python package when scripts/setup.sh made
# its environment (.venv). Extra arguments go to the CMake configure step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NF_BUILD_DIR:-$root/build}

if [ ! -f "$build/build.ninja" ] || [ $# -gt 0 ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  # The Python package and lit use the environment scripts/setup.sh makes.
  python=()
  venv=${NF_VENV:-$root/.venv}
  [ -x "$venv/bin/python" ] && python=(-DPython_EXECUTABLE="$venv/bin/python" -DPython3_EXECUTABLE="$venv/bin/python")
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=${NF_BUILD_TYPE:-Release} \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DLLVM_USE_LINKER=lld \
    "${launcher[@]}" "${python[@]}" "$@"
fi
cmake --build "$build" -- ${NF_NINJA_ARGS:-}
