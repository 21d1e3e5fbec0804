#!/usr/bin/env bash
# The device bundle runs where LLVM and MLIR are not installed (the ctest
# test device-bundle):
#
#   scripts/check-device-bundle.sh BUILD
#
# stages the bundle of BUILD (scripts/device-bundle.py --stage) in a
# temporary folder (outside the build tree, which the check hides),
# then, in a mount namespace where LLVM's installation (/usr/lib/llvm-19,
# and Debian's libLLVM/libMLIR shared libraries) is hidden under empty
# mounts and the build tree too, with the bundle's env.sh as its only set-up:
# checks every bundled binary resolves each library it loads; runs nf-opt,
# nf-translate and nf-run (the CPU JIT) on a layer norm and compares with
# NumPy; imports the Python package and runs a function on the CPU; runs the
# runtime tests and a few JIT tests; and checks that nf-run --target cuda
# without a GPU says so. Exit 77 (ctest: skipped) where the machine cannot
# make a mount namespace.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
python=${NF_PYTHON:-$root/.venv/bin/python}
work=$(mktemp -d "${TMPDIR:-/tmp}/nf-device-bundle.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$python" "$root/scripts/device-bundle.py" --build "$build" --stage "$work/bundle"

if [ "$(id -u)" -eq 0 ]; then ns=(unshare --mount); else ns=(unshare --user --map-root-user --mount); fi
if ! "${ns[@]}" true 2> /dev/null; then
  echo "device-bundle check: skipped: cannot make a mount namespace here (${ns[*]})"
  exit 77
fi

# The Python the check runs: the venv's, resolved to its real files, which
# live outside what is hidden.
real_python=$("$python" -c 'import sys; print(sys.executable)')

"${ns[@]}" env -i PATH=/usr/bin:/bin HOME="$work" NF_PYTHON="$real_python" \
    NF_VENV_SITE="$("$python" -c 'import site; print(site.getsitepackages()[0])')" \
    NF_BUILD="$build" NF_WORK="$work" NF_ROOT="$root" bash -euo pipefail -c '
  mount --make-rprivate /
  # LLVM and MLIR out of reach: the installation, Debian'"'"'s shared
  # libraries, and the build tree the binaries were linked in.
  mount -t tmpfs none /usr/lib/llvm-19
  for so in /usr/lib/x86_64-linux-gnu/libLLVM* /usr/lib/x86_64-linux-gnu/libMLIR* \
            /usr/lib/x86_64-linux-gnu/libmlir*; do
    [ -e "$so" ] && mount --bind /dev/null "$so"
  done
  mount -t tmpfs none "$NF_BUILD"
  if [ -e /usr/lib/llvm-19/lib/libLLVM.so.19.1 ] || [ -e "$NF_BUILD/bin/nf-run" ]; then
    echo "FAIL: LLVM or the build tree is still visible"; exit 1
  fi
  source "$NF_WORK/bundle/env.sh"
  cd "$NF_WORK"
  echo "== every library each binary loads resolves, none under LLVM or the build"
  for f in bundle/bin/* bundle/tests/* bundle/python/normfuse/*.so; do
    out=$(ldd "$f" 2>&1 || true)
    if echo "$out" | grep -E -q -i "not found|error|llvm|mlir|$NF_BUILD"; then
      echo "FAIL: $f does not load without LLVM and the build tree: $out"; exit 1
    fi
  done
  echo ok
  cat > ln.mlir <<EOF
func.func @ln(%x: tensor<3x37xf32>, %g: tensor<37xf32>, %b: tensor<37xf32>) -> tensor<3x37xf32> {
  %y, %m, %r = nf.layer_norm %x scale %g bias %b {axis = 1 : i64, epsilon = 1.0e-5 : f64}
    : (tensor<3x37xf32>, tensor<37xf32>, tensor<37xf32>) -> (tensor<3x37xf32>, tensor<3x1xf32>, tensor<3x1xf32>)
  return %y : tensor<3x37xf32>
}
EOF
  echo "== nf-opt and nf-translate"
  nf-opt ln.mlir --nf-cuda-pipeline > ln.gpu.mlir
  nf-translate --nf-to-cuda ln.gpu.mlir > ln.cu
  grep -q "__global__" ln.cu && echo ok
  echo "== nf-run on the CPU against NumPy"
  PYTHONPATH="$NF_VENV_SITE" "$NF_PYTHON" - <<EOF
import numpy as np
rng = np.random.default_rng(0)
np.save("x.npy", rng.standard_normal((3, 37)).astype(np.float32))
np.save("g.npy", rng.standard_normal(37).astype(np.float32))
np.save("b.npy", rng.standard_normal(37).astype(np.float32))
EOF
  nf-run ln.mlir --entry ln --input x.npy --input g.npy --input b.npy --output y.npy
  PYTHONPATH="$NF_VENV_SITE:$PYTHONPATH" "$NF_PYTHON" - <<EOF
import numpy as np, normfuse
x, g, b = (np.load(n).astype(np.float64) for n in ("x.npy", "g.npy", "b.npy"))
ref = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * g + b
err = np.abs(np.load("y.npy") - ref).max()
assert err < 1e-5, f"nf-run: max error {err}"
print(f"ok (max error {err:.2e})")
print("== the Python package on the CPU:", normfuse.__file__)
fn = normfuse.compile(open("ln.mlir").read(), "ln")
err = np.abs(fn(*(np.load(n) for n in ("x.npy", "g.npy", "b.npy"))) - ref).max()
assert err < 1e-5, f"python: max error {err}"
print(f"ok (max error {err:.2e})")
EOF
  echo "== nf-run --target cuda without a GPU says so"
  set +e
  msg=$(nf-run ln.mlir --entry ln --target cuda --input x.npy --input g.npy --input b.npy --output yc.npy 2>&1)
  status=$?
  set -e
  if [ $status -eq 0 ] || [ -e yc.npy ]; then echo "FAIL: nf-run --target cuda passed without a GPU: $msg"; exit 1; fi
  echo "$msg" | grep -E -q "GPU|driver|libcuda|CUDA" || { echo "FAIL: unclear message: $msg"; exit 1; }
  echo "ok ($msg)"
  echo "== the runtime tests, and JIT tests on the CPU (the simulator needs the compiler of the build, hidden here)"
  bundle/tests/NFRuntimeTests --gtest_brief=1 > runtime-tests.log 2>&1 || { tail -30 runtime-tests.log; exit 1; }
  tail -1 runtime-tests.log
  bundle/tests/NFJITTests --gtest_brief=1 --gtest_filter="TosaLayoutTest.*:JITErrorsTest.*-*Simulator*" > jit-tests.log 2>&1 || { tail -30 jit-tests.log; exit 1; }
  tail -1 jit-tests.log
'
echo "device bundle: ok"
