#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test
# (the lit suite and each GoogleTest) through ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NF_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
"$root/scripts/build.sh"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
