#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test
# (the lit suite and each GoogleTest) through ctest, then each fuzz target
# for NF_FUZZ_SECONDS (default 60; 0 skips them) in its libFuzzer, ASan and
# UBSan build (scripts/fuzz.sh, build-fuzz).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NF_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
"$root/scripts/build.sh"
# A build with nothing left to do runs nothing (no step that reruns on
# every build, as the tablegen steps once did).
if ! ninja -C "$build" -n | grep -q "no work to do"; then
  echo "test: a second build has work to do; ninja -d explain says why:" >&2
  ninja -C "$build" -n -d explain 2>&1 | grep -v "phony\|/all is dirty" | head -20 >&2
  exit 1
fi
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
seconds=${NF_FUZZ_SECONDS:-60}
if [ "$seconds" != 0 ]; then
  "$root/scripts/fuzz.sh" "$seconds"
fi
