#!/usr/bin/env bash
# The GPU run, in one device call (bench/README.md "GPU run"; ../shared GPU.md):
#
#   here:   bench/gpu/prepare.sh                     # all of the following:
#           scripts/device-bundle.sh                 # build/device/normfuse-device.tar.xz
#           python3 bench/gpu/make_packages.py       # build/gpu-check -> build/gpu-carry
#           python3 bench/gpu/make_references.py     # build/gpu-check/references -> build/gpu-carry
#           .venv/bin/pip download --no-deps --only-binary=:all: --python-version 3.12 \
#               -d build/wheels liger-kernel==0.8.5
#           .venv/bin/pip download --no-deps --only-binary=:all: --python-version 3.12 \
#               --platform manylinux2014_x86_64 -d build/wheels ml_dtypes==0.5.1
#           .venv/bin/pip download --no-deps --only-binary=:all: --python-version 3.12 \
#               -d build/wheels pytest==9.2.0 pluggy==1.7.0 iniconfig==2.3.1 Pygments==2.21.0 packaging==26.4
#           .venv/bin/pip download --no-deps --only-binary=:all: --python-version 3.12 \
#               --platform manylinux_2_28_x86_64 -d build/wheels onnx==1.23.2 protobuf==7.36.2
#   device: run(command="bench/gpu/run.sh",
#               carry=["build/device", "build/gpu-carry", "build/wheels"])
#   dry run here (CI: ctest -R gpu-dry-run): bench/gpu/dry_run.sh BUILD_DIR
#
# It unpacks the device bundle (the compiler's tools, the Python package and
# the CUDA GoogleTests; no MLIR or LLVM needed), or takes an unpacked one
# from $NF_GPU_BUNDLE_DIR; unpacks the packages and references
# (build/gpu-carry/gpu-check.tar.xz, or a build/gpu-check folder); installs
# the carried wheels the device lacks into a scratch folder; then runs the steps of
# bench/gpu/run_steps.py, each in its own time box, within $NF_GPU_BUDGET_S
# (default 450 s from here: the device call allows 8 minutes). Results:
# $OUT/bench/results/gpu-<suite>-<device>-<date>.{json,txt} and -<family>.png
# (commit them).
#
# Off the GPU (NF_GPU_TARGET=cuda-sim) without NF_GPU_BUNDLE_DIR, the build
# tree ($NF_GPU_BUILD_DIR, default build/) stands in for the bundle, and
# .venv/bin/python for python3; the package checks and the references then
# skip cases over NF_GPU_SIM_MAX_ELEMENTS elements (the simulator is slow).
#
# Knobs: NF_GPU_TARGET=cuda-sim (no GPU: the dry run), NF_GPU_SUITE (name in
# the file names; "full", or "dry-run" on cuda-sim), NF_GPU_STEPS (comma
# list of run_steps.py's steps), NF_GPU_FILTER (package cases),
# NF_GPU_SMALL=1 (the sweep's small shapes), NF_GPU_BOX_<STEP> (a step's
# time box, s), NF_SWEEP_FILTER / NF_SWEEP_COMPILE_BUDGET_S / NF_SWEEP_RUNS
# (sweep.py), NF_GPU_SWEEP_PREFIX (a profiler the sweep runs under: ncu),
# NF_GPU_PYTHON (default python3), NF_GPU_CHECKS (an unpacked gpu-check).
set -uo pipefail
started=$(date +%s.%N)
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${NF_GPU_TARGET:-cuda}
build=${NF_GPU_BUILD_DIR:-$root/build}
python=${NF_GPU_PYTHON:-python3}
# Off the GPU (the dry run), the project's own Python, which has NumPy.
if [ "$target" != cuda ] && [ -z "${NF_GPU_PYTHON:-}" ] && [ -x "$root/.venv/bin/python" ]; then
  python=$root/.venv/bin/python
fi
out=${OUT:-$root/build/gpu-run-out}
suite=${NF_GPU_SUITE:-$([ "$target" = cuda ] && echo full || echo dry-run)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nf-gpu-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
preamble=$tmp/preamble.txt
say() { echo "$*" >> "$preamble"; }  # run_steps.py puts these lines first in the log
fail() { echo "run.sh: $*" >&2; exit 2; }

# The bundle.
if [ -n "${NF_GPU_BUNDLE_DIR:-}" ]; then
  bundle=$(cd "$NF_GPU_BUNDLE_DIR" && pwd) || fail "no bundle folder $NF_GPU_BUNDLE_DIR"
  bundle_source="$NF_GPU_BUNDLE_DIR (unpacked)"
elif [ "$target" != cuda ]; then
  # The dry run: the build tree, laid out as the bundle is (symlinks), so
  # that this machine's Python imports the package it built.
  bundle=$tmp/tree-bundle
  mkdir -p "$bundle/tests" "$bundle/lib"
  ln -s "$build/bin" "$bundle/bin"
  ln -s "$build/python" "$bundle/python"
  for t in JIT/NFJITTests CUDA/NFCUDATests CUDA/NFNVRTCTests Runtime/NFRuntimeTests; do
    if [ -e "$build/unittests/$t" ]; then ln -s "$build/unittests/$t" "$bundle/tests/"; fi
  done
  echo "build tree $build at $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown) (symlinks, not a bundle: the dry run)" \
    > "$bundle/VERSION"
  bundle_source="$build (the build tree, on $target)"
else
  archive=${NF_GPU_BUNDLE:-$root/build/device/normfuse-device.tar.xz}
  [ -f "$archive" ] || fail "no device bundle $archive: run scripts/device-bundle.sh here and carry build/device (or set NF_GPU_BUNDLE_DIR to an unpacked one)"
  mkdir -p "$tmp/bundle"
  t0=$(date +%s.%N)
  tar -xJf "$archive" -C "$tmp/bundle" || fail "cannot unpack $archive"
  bundle=$tmp/bundle
  # The archive may hold the bundle's files or one folder holding them.
  if [ ! -d "$bundle/bin" ]; then
    inner=$(find "$bundle" -mindepth 2 -maxdepth 2 -type d -name bin | head -1)
    [ -n "$inner" ] || fail "$archive has no bin/ folder"
    bundle=$(dirname "$inner")
  fi
  bundle_source="$archive ($(du -h "$archive" | cut -f1), unpacked in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }") s)"
fi
for tool in nf-run nf-package-run; do
  [ -x "$bundle/bin/$tool" ] || fail "the bundle has no bin/$tool"
done
version=$(tr '\n' ';' < "$bundle/VERSION" 2>/dev/null | sed 's/;$//; s/;/; /g' || true)
say "# bundle: $bundle_source: ${version:-no VERSION file}"

# The packages and the references.
checks=${NF_GPU_CHECKS:-}
if [ -z "$checks" ]; then
  if [ -f "$root/build/gpu-carry/gpu-check.tar.xz" ]; then
    tar -xJf "$root/build/gpu-carry/gpu-check.tar.xz" -C "$tmp" || fail "cannot unpack build/gpu-carry/gpu-check.tar.xz"
    checks=$tmp/gpu-check
    say "# packages and references: build/gpu-carry/gpu-check.tar.xz"
  elif [ -d "$root/build/gpu-check/binaries" ]; then
    checks=$root/build/gpu-check
    say "# packages and references: build/gpu-check"
  else
    fail "no packages: run bench/gpu/make_packages.py and bench/gpu/make_references.py here and carry build/gpu-carry"
  fi
fi
[ -f "$checks/references/manifest.json" ] || say "# no references in $checks (bench/gpu/make_references.py): that step will fail"

# The carried wheels (Liger-Kernel; ml_dtypes, which the normfuse package
# imports, pytest and onnx (the ONNX step), in case the device lacks them), each installed into a scratch
# folder only where Python does not have that distribution already.
if ls "$root"/build/wheels/*.whl > /dev/null 2>&1 && [ "$target" = cuda ]; then
  wheels=()
  for whl in "$root"/build/wheels/*.whl; do
    dist=$(basename "$whl" | cut -d- -f1)
    if "$python" -c "import importlib.metadata as m, sys; m.version(sys.argv[1])" "$dist" 2> /dev/null; then
      say "# $dist: the device's own ($("$python" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$dist")), not the carried wheel"
    else
      wheels+=("$whl")
    fi
  done
  if [ ${#wheels[@]} -gt 0 ]; then
    if "$python" -m pip install --quiet --no-index --no-deps --target "$tmp/site" "${wheels[@]}" > "$tmp/pip.log" 2>&1; then
      how="pip install --target"
    else
      # No pip: a wheel is a zip of what site-packages gets.
      how="unzipped (pip failed: $(tail -1 "$tmp/pip.log"))"
      for w in "${wheels[@]}"; do "$python" -m zipfile -e "$w" "$tmp/site" || how="FAILED"; done
    fi
    export PYTHONPATH=$tmp/site${PYTHONPATH:+:$PYTHONPATH}
    say "# from build/wheels, $how: $(for w in "${wheels[@]}"; do basename "$w"; done | tr '\n' ' ')"
  fi
else
  say "# no wheels installed: $([ "$target" = cuda ] && echo 'none in build/wheels' || echo "not on $target (no PyTorch here)")"
fi

# The bundle's environment (its env.sh where it has one: PATH, PYTHONPATH,
# LD_LIBRARY_PATH with its libz/libzstd only where the system lacks them).
if [ -f "$bundle/env.sh" ]; then
  # shellcheck disable=SC1091
  . "$bundle/env.sh"
else
  export PATH=$bundle/bin:$PATH
  export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PYTHONPATH=$bundle/python${PYTHONPATH:+:$PYTHONPATH}
fi
export NF_KERNEL_CACHE_DIR=$tmp/kernel-cache
# Temporaries filled with NaN bytes before each call (not in timings), so
# that a kernel reading what no kernel wrote shows in the checks.
export NF_CUDA_POISON=1
if [ -z "${CUDA_HOME:-}" ] && [ -d /usr/local/cuda/include ]; then export CUDA_HOME=/usr/local/cuda; fi
# NVRTC is dlopened as libnvrtc.so(.13): where the loader does not know it,
# the toolkit's own file is named (NF_NVRTC_LIBRARY) and its lib64 goes
# last on the path, for NVRTC's builtins (never the stubs/ folder). The
# loader's cache is read once: `ldconfig -p | grep -q` fails under pipefail
# when grep stops reading early.
ld_cache=$(/sbin/ldconfig -p 2> /dev/null || true)
if ! grep -q 'libnvrtc\.so' <<< "$ld_cache" && [ -d "${CUDA_HOME:-/usr/local/cuda}/lib64" ]; then
  nvrtc=$(ls "${CUDA_HOME:-/usr/local/cuda}"/lib64/libnvrtc.so.1[0-9] 2> /dev/null | tail -1 || true)
  if [ -n "$nvrtc" ]; then export NF_NVRTC_LIBRARY=$nvrtc; fi
  export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}${CUDA_HOME:-/usr/local/cuda}/lib64
fi
# The bundle's binaries need glibc 2.34 (device-bundle.py checks it):
# an older system fails every step, so it is said once, first.
glibc=$(ldd --version 2> /dev/null | head -1 | grep -oE '[0-9]+\.[0-9]+$' || true)
say "# glibc ${glibc:-unknown}; GPU compute mode $(nvidia-smi --query-gpu=compute_mode --format=csv,noheader 2> /dev/null | head -1 || echo unknown)"
if [ -n "$glibc" ] && [ "$(printf '%s\n2.34\n' "$glibc" | sort -V | head -1)" != 2.34 ]; then
  say "# glibc $glibc is older than the 2.34 the device bundle needs: its tools cannot load here"
fi

command="bench/gpu/run.sh"
for v in $(env | grep -oE '^(NF_GPU_[A-Z_]+|NF_SWEEP_[A-Z_]+)=' | tr -d = | sort); do
  case $v in NF_GPU_PYTHON|NF_GPU_BUNDLE_DIR|NF_GPU_CHECKS|NF_GPU_BUILD_DIR) ;; *) command="$v=${!v} $command" ;; esac
done
tree=$(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(cd "$root" && git status --porcelain --untracked-files=no 2>/dev/null)" ]; then tree="$tree+changes"; fi

args=(--bundle "$bundle" --bundle-source "$bundle_source" --bundle-version "$version"
      --checks "$checks" --out "$out" --tmp "$tmp" --target "$target" --suite "$suite"
      --started "$started" --budget-s "${NF_GPU_BUDGET_S:-450}" --command "$command"
      --tree "$tree" --filter "${NF_GPU_FILTER:-}" --preamble "$preamble")
if [ -n "${NF_GPU_STEPS:-}" ]; then args+=(--steps "$NF_GPU_STEPS"); fi
if [ "${NF_GPU_SMALL:-$([ "$target" = cuda ] && echo 0 || echo 1)}" = 1 ]; then args+=(--small); fi
"$python" "$root/bench/gpu/run_steps.py" "${args[@]}"
