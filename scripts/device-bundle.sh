#!/usr/bin/env bash
# Builds normfuse (scripts/build.sh) and writes the device bundle: the
# tools, the CUDA tests and the Python package with LLVM and MLIR linked in,
# for the GPU machine, which has neither (../shared GPU.md,
# docs/Development.md#the-device-bundle):
#
#   scripts/device-bundle.sh            # build/device/normfuse-device.tar.xz
#   scripts/device-bundle.sh --stage D  # the bundle's folder D, uncompressed
#
# The Python module is built for a Python 3.12 found here (the GPU
# machine's), or the one --python names. Unpack and use it there with
#   tar xJf build/device/normfuse-device.tar.xz -C DIR && source DIR/env.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" > /dev/null
exec "$root/.venv/bin/python" "$root/scripts/device-bundle.py" "$@"
