#!/usr/bin/env bash
# Builds normfuse with AddressSanitizer and UndefinedBehaviorSanitizer (in
# ${NF_SANITIZE_BUILD_DIR:-build-asan}) and runs its tests there: the
# GoogleTests, the lit suite (the tools themselves sanitized) and the fuzz
# targets' replays of their corpora and regressions. A report fails the
# test that made it (-fno-sanitize-recover). The Python package, the demo
# and the format check are left to the ordinary build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NF_SANITIZE_BUILD_DIR:-$root/build-asan}

NF_SETUP_EXTRA=libclang-rt-19-dev "$root/scripts/setup.sh"
NF_BUILD_DIR="$build" "$root/scripts/build.sh" \
  -DNF_SANITIZE="address;undefined" -DNF_ENABLE_PYTHON=OFF
export UBSAN_OPTIONS=print_stacktrace=1
# LLVM's headers poison and unpoison the memory of its allocators when
# compiled with ASan, and Debian's MLIR libraries, compiled without it, do
# not: only the real errors count.
export ASAN_OPTIONS=allow_user_poisoning=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
# What the libraries normfuse loads keep for the process (libomp, NVRTC).
export LSAN_OPTIONS=suppressions=$root/scripts/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -E '^clang-format$'
