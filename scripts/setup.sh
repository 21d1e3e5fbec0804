#!/usr/bin/env bash
# Installs what normfuse needs on Debian 12 and skips what is already there.
# Uses apt-get (as root, or through sudo when not root).
set -euo pipefail

packages=(
  cmake ninja-build python3
  libmlir-19-dev mlir-19-tools llvm-19-dev llvm-19-tools
  clang-19 lld-19 clang-format-19 libomp-19-dev libzstd-dev zlib1g-dev libgtest-dev
)
# ccache speeds up rebuilds; it is welcome but not required.
optional=(ccache)

missing=()
for p in "${packages[@]}" "${optional[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: every package is already installed"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
