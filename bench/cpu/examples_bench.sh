#!/usr/bin/env bash
# Times each shipped example (examples/*.mlir) with nf-run, as written (op by
# op: nf ops as separate kernels, TOSA ops through linalg loops) and with
# --fuse (nf-fuse-pipeline: raised and fused), on the same random inputs,
# and writes bench/results/cpu-examples-<date>-<host>.json.
# Usage: bench/cpu/examples_bench.sh [RUNS]   (NF_BENCH_THREADS: 2 by default)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${NF_BUILD_DIR:-$root/build}
runs=${1:-5}
threads=${NF_BENCH_THREADS:-2}
npy="$root/test/Tools/nf-run/Inputs/npy_tool.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# gauss FILE DESCR SHAPE SEED [MEAN STD]
gauss() { python3 "$npy" gauss "$work/$1.npy" "$2" "$3" "$4" "${5:-0}" "${6:-1}"; }

# The inputs of each example, in argument order (weights scaled like an
# initialized layer so activations stay in range).
gauss t_x '<f2' 8,128,768 1; gauss t_w1 '<f2' 768,3072 2 0 0.03
gauss t_b1 '<f2' 3072 3; gauss t_w2 '<f2' 3072,768 4 0 0.02
gauss t_b2 '<f2' 768 5; gauss t_g '<f4' 768 6; gauss t_be '<f4' 768 7
gauss tt_x '<f4' 1,1024,768 1; gauss tt_w1 '<f4' 1,768,3072 2 0 0.03
gauss tt_b1 '<f4' 3072 3; gauss tt_w2 '<f4' 1,3072,768 4 0 0.02
gauss tt_b2 '<f4' 768 5
gauss u_x '<f2' 2,32,32,320 1; gauss u_c '<f2' 320 2
gauss u_w '<f2' 320,3,3,320 3 0 0.02
gauss ut_x '<f4' 2,32,32,320 1; gauss ut_c '<f4' 320 2
gauss ut_w '<f4' 320,3,3,320 3 0 0.02

declare -A entry inputs
entry[transformer_block]=transformer_mlp_block
inputs[transformer_block]="t_x t_w1 t_b1 t_w2 t_b2 t_g t_be"
entry[transformer_block_tosa]=transformer_mlp_block_tosa
inputs[transformer_block_tosa]="tt_x tt_w1 tt_b1 tt_w2 tt_b2 t_g t_be"
entry[unet_block]=unet_resnet_block
inputs[unet_block]="u_x u_c u_c u_w u_c u_c u_c u_w u_c"
entry[unet_block_tosa]=unet_resnet_block_tosa
inputs[unet_block_tosa]="ut_x ut_c ut_c ut_w ut_c ut_c ut_c ut_w ut_c"

stamp="$(date -u +%Y-%m-%d)-$(hostname -s)"
out="$root/bench/results/cpu-examples-$stamp.json"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
rows=()
for name in transformer_block transformer_block_tosa unet_block unet_block_tosa; do
  args=()
  for f in ${inputs[$name]}; do args+=(--input "$work/$f.npy"); done
  line=()
  for mode in unfused fused; do
    flag=(); [ $mode = fused ] && flag=(--fuse)
    json=$("$build/bin/nf-run" "$root/examples/$name.mlir" --entry "${entry[$name]}" \
      "${args[@]}" "${flag[@]}" --bench "$runs" --threads "$threads" | tail -1)
    ms=$(python3 -c 'import json,sys; print("%.2f" % (json.loads(sys.argv[1])["median_s"] * 1e3))' "$json")
    line+=("$ms")
  done
  speedup=$(python3 -c "print('%.2f' % (${line[0]} / ${line[1]}))")
  printf '%-24s unfused %10s ms   fused %10s ms   %sx\n' "$name" "${line[0]}" "${line[1]}" "$speedup"
  rows+=("{\"example\": \"$name\", \"unfused_ms\": ${line[0]}, \"fused_ms\": ${line[1]}, \"speedup\": $speedup}")
done
{
  echo "{\"bench\": \"nf-run on examples/, unfused vs --fuse\", \"date\": \"$(date -u +%Y-%m-%d)\","
  echo " \"cpu\": \"$cpu\", \"threads\": $threads, \"runs\": $runs, \"results\": ["
  for ((i = 0; i < ${#rows[@]}; i++)); do
    printf '  %s%s\n' "${rows[i]}" "$([ $i -lt $((${#rows[@]} - 1)) ] && echo ,)"
  done
  echo "]}"
} >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote ${out#$root/}"
