#!/usr/bin/env bash
# The demo: installs what is missing, builds, then does normfuse's main job
# on the shipped examples (examples/*.mlir) through the Python package
# (scripts/demo.py): raises and fuses each function, compiles and runs it
# op by op and fused on the same random inputs (on the CPU, and on the GPU
# when one is usable), and prints the kernels before and after, the time of
# each with the speedup, and the largest difference between the two. The
# kernel graphs (DOT and SVG) and the fused IR go to ${NF_DEMO_DIR:-build/demo}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NF_BUILD_DIR:-$root/build}
out=${NF_DEMO_DIR:-$build/demo}
venv=${NF_VENV:-$root/.venv}

"$root/scripts/setup.sh"
"$root/scripts/build.sh"
PYTHONPATH="$build/python" "$venv/bin/python" "$root/scripts/demo.py" --out "$out"
