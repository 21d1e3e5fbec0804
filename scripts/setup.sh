#!/usr/bin/env bash
# Installs what normfuse needs on Debian 12 and skips what is already there:
# Debian's packages through apt-get (as root, or through sudo when not
# root), then a Python virtual environment in ${NF_VENV:-.venv} with the
# Python package's build and test dependencies from PyPI
# (python/requirements.txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

packages=(
  cmake ninja-build python3 python3-dev python3-venv
  libmlir-19-dev mlir-19-tools llvm-19-dev llvm-19-tools
  clang-19 lld-19 clang-format-19 libomp-19-dev libzstd-dev zlib1g-dev libgtest-dev
  graphviz
)
# What scripts/fuzz.sh and scripts/sanitize.sh add: clang's sanitizer and
# libFuzzer runtimes.
read -r -a extra <<< "${NF_SETUP_EXTRA:-}"
packages+=("${extra[@]}")
# ccache speeds up rebuilds; it is welcome but not required.
optional=(ccache)

missing=()
for p in "${packages[@]}" "${optional[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: every Debian package is already installed"
else
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The Python package's dependencies, in a virtual environment of the
# project's own (Debian's python3 takes no pip installs of its own).
venv=${NF_VENV:-$root/.venv}
if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating the Python environment $venv"
  python3 -m venv "$venv"
fi
onnx_pin=$(sed -n 's/^onnx==//p' "$root/python/requirements.txt")
if "$venv/bin/python" -c "import numpy, ml_dtypes, nanobind, pytest, scikit_build_core, onnx
assert onnx.__version__ == '$onnx_pin'" 2>/dev/null; then
  echo "setup: every Python package is already installed in $venv"
else
  echo "setup: installing the Python packages of python/requirements.txt into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$root/python/requirements.txt"
fi

# NVIDIA's cuobjdump and nvdisasm (PyPI wheels, into the same environment):
# the NVRTC tests read the SASS of the cubins they compile. Only where a
# CUDA toolkit is installed; the tests skip that check without them.
sass_tools="$venv/lib/python3*/site-packages/nvidia/cu13/bin"
if [ -d /usr/local/cuda/include ] || command -v nvcc > /dev/null; then
  # shellcheck disable=SC2086
  if ls $sass_tools/cuobjdump $sass_tools/nvdisasm > /dev/null 2>&1; then
    echo "setup: cuobjdump and nvdisasm are already installed in $venv"
  else
    echo "setup: installing cuobjdump and nvdisasm into $venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check \
      "nvidia-cuda-cuobjdump==13.5.37" "nvidia-cuda-nvdisasm==13.5.37"
  fi
fi
