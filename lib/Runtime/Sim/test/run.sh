#!/bin/sh
# Builds the CUDA simulator tests with the host compiler and runs them with
# the simulated modules compiled by g++, by clang++-19 (if present), and by
# g++ with the portable ucontext fiber switch. CXX picks the compiler of the
# driver itself (default g++). Exits nonzero if any check failed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/nf-sim-test-XXXXXX")
trap 'rm -rf "$out"' EXIT
"${CXX:-g++}" -std=c++17 -O1 -g -Wall -Wextra -Werror -I"$root/include" \
  -DNF_CUDA_SIM_HEADER="\"$here/../nf_cuda_sim.h\"" \
  "$root/lib/Runtime/Sim/CudaSim.cpp" "$here/sim_test.cpp" \
  -o "$out/sim_test" -ldl -lpthread
status=0
run() { # compiler, extra module flags
  command -v "$1" >/dev/null 2>&1 || return 0
  echo "== simulated modules compiled with $1 $2"
  NF_SIM_CXX=$1 NF_SIM_TEST_FLAGS=$2 timeout 300 "$out/sim_test" "$here" ||
    status=1
}
run g++ ""
run clang++-19 ""
run g++ "-DNF_SIM_UCONTEXT"
exit $status
