#!/usr/bin/env bash
# CPU benchmark of the norms: builds, then runs nf-bench-cpu-norms with
# ${NF_BENCH_THREADS:-2} threads on 128 MiB tensors and writes
# bench/results/cpu-norms-<date>-<host>.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NF_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
out="$root/bench/results/cpu-norms-$(date -u +%Y-%m-%d)-$(hostname -s).json"
"$build/bench/cpu/nf-bench-cpu-norms" --threads "${NF_BENCH_THREADS:-2}" \
  --runs "${NF_BENCH_RUNS:-15}" --json "$out"
echo "wrote ${out#$root/}"
