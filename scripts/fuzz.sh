#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer (in ${NF_FUZZ_BUILD_DIR:-build-fuzz}) and runs
# each one, from its seed corpus, for a bounded number of inputs:
#
#   scripts/fuzz.sh              npy and manifest 200000 inputs, jit-args 20000,
#                                mlir 2000, one after another
#                                (about a minute each on 2 cores)
#   scripts/fuzz.sh 300          each target: 300 seconds instead, as many
#                                side by side as there are cores (the test
#                                command, scripts/test.sh, runs this with 60)
#
# Runs are seeded (-seed=1), so a count-bounded run is repeatable. A crash
# stops the run with exit status 1 and leaves the input in
# fuzz/regressions/<target>/, where ctest's fuzz-*-replay tests replay it on
# every build once it is committed (docs/Development.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NF_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${1:-}

NF_SETUP_EXTRA=libclang-rt-19-dev "$root/scripts/setup.sh"
NF_BUILD_DIR="$build" NF_NINJA_ARGS="nf-fuzz-npy nf-fuzz-mlir nf-fuzz-jit-args nf-fuzz-manifest" \
  "$root/scripts/build.sh" -DNF_SANITIZE="address;undefined" \
  -DNF_FUZZ_WITH_LIBFUZZER=ON -DNF_BUILD_TESTS=OFF -DNF_ENABLE_PYTHON=OFF

# LLVM's headers poison and unpoison the memory of its allocators when
# compiled with ASan, and Debian's MLIR libraries, compiled without it, do
# not: only the real errors count.
export ASAN_OPTIONS=allow_user_poisoning=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
# What the libraries normfuse loads keep for the process (libomp, NVRTC).
export LSAN_OPTIONS=suppressions=$root/scripts/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {
  local target=$1 runs=$2
  shift 2
  local corpus="$work/$target"
  mkdir -p "$corpus" "$root/fuzz/regressions/$target"
  # The seeds (and the regressions) are copied: libFuzzer adds to its
  # corpus folder, and the committed ones stay as they are.
  for seeds in "$@" "$root/fuzz/regressions/$target"; do
    find "$seeds" -type f \( -name '*.mlir' -o -name '*.npy' -o -name '*.json' -o -path '*jit-args*' \) \
      -exec cp --backup=numbered -t "$corpus" {} + 2>/dev/null || true
  done
  local bound=(-runs="$runs")
  [ -n "$seconds" ] && bound=(-max_total_time="$seconds")
  echo "fuzz: $target (${bound[*]})"
  if ! "$build/bin/nf-fuzz-$target" "${bound[@]}" -seed=1 -timeout=30 \
      -rss_limit_mb=4096 -max_len=16384 -print_final_stats=1 \
      -artifact_prefix="$root/fuzz/regressions/$target/" "$corpus" \
      > "$work/$target.log" 2>&1; then
    tail -40 "$work/$target.log" >&2
    echo "fuzz: $target found a crash: see fuzz/regressions/$target/" >&2
    return 1
  fi
  echo "fuzz: $target clean:" $(grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/$target.log")
}
targets=(
  "npy 200000 $root/fuzz/corpus/npy"
  "jit-args 20000 $root/fuzz/corpus/jit-args"
  "manifest 200000 $root/fuzz/corpus/manifest"
  "mlir 2000 $root/test/Dialect $root/test/Codegen/CPU $root/test/Codegen/CUDA $root/examples"
)
status=0
if [ -z "$seconds" ]; then
  for t in "${targets[@]}"; do
    run $t || status=1
  done
else
  # Time-bounded runs go side by side, one per core.
  cores=$(nproc)
  pids=()
  for t in "${targets[@]}"; do
    run $t &
    pids+=($!)
    if [ ${#pids[@]} -ge "$cores" ]; then
      for p in "${pids[@]}"; do wait "$p" || status=1; done
      pids=()
    fi
  done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
fi
exit $status
