#!/usr/bin/env bash
# Everything the GPU run carries, made here in one command (bench/README.md
# "GPU run"), so that a lent GPU finds it ready:
#
#   bench/gpu/prepare.sh
#
# builds (scripts/build.sh), writes the device bundle (build/device), the
# kernel packages and the CPU's references (build/gpu-check, packed into
# build/gpu-carry), downloads the wheels the device may lack (build/wheels,
# from PyPI), checks the three fit in the 64 MiB a device call carries, and
# prints the device call. Takes about 10 minutes on the 2-core VM (most of
# it compressing the bundle and running the references).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
python=.venv/bin/python
scripts/device-bundle.sh
"$python" bench/gpu/make_packages.py
"$python" bench/gpu/make_references.py
mkdir -p build/wheels
pip=("$python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all:
     --python-version 3.12 -d build/wheels)
"${pip[@]}" liger-kernel==0.8.5
"${pip[@]}" --platform manylinux2014_x86_64 ml_dtypes==0.5.1
"${pip[@]}" pytest==9.2.0 pluggy==1.7.0 iniconfig==2.3.1 Pygments==2.21.0 packaging==26.4
# onnx (the ONNX step's tests importorskip it: without it they would skip)
"${pip[@]}" --platform manylinux_2_28_x86_64 onnx==1.23.2 protobuf==7.36.2
bytes=$(du -cb build/device build/gpu-carry build/wheels | tail -1 | cut -f1)
limit=$((64 << 20))
echo "carried: $(du -sh build/device build/gpu-carry build/wheels | tr '\n' ' ')= $((bytes >> 20)) MiB of 64"
if [ "$bytes" -gt "$limit" ]; then
  echo "prepare.sh: the carried folders are over the 64 MiB a device call takes" >&2
  exit 1
fi
echo 'device call: run(command="bench/gpu/run.sh", carry=["build/device", "build/gpu-carry", "build/wheels"], timeout_s=480)'
