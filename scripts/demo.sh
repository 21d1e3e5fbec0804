#!/usr/bin/env bash
# The demo: installs what is missing, builds, then runs normfuse's graph
# pipeline (nf-fuse-pipeline: raise decomposed chains to nf ops, fuse each
# producer with its pointwise prologue and epilogue) over the shipped
# examples (examples/*.mlir). For each it prints how many kernels the
# function needed before and after, and writes the kernel graphs as
# Graphviz DOT and the fused IR to ${NF_DEMO_DIR:-build/demo}:
#   dot -Tsvg build/demo/unet_block_tosa.after.dot -o unet_block_tosa.after.svg
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NF_BUILD_DIR:-$root/build}
out=${NF_DEMO_DIR:-$build/demo}

"$root/scripts/setup.sh"
"$root/scripts/build.sh"
mkdir -p "$out"

for example in "$root"/examples/*.mlir; do
  name=$(basename "$example" .mlir)
  echo
  echo "=== ${example#$root/}"
  # nf-kernel-graph reports on stderr; the first report is before the
  # pipeline, the second after.
  "$build/bin/nf-opt" "$example" \
    --nf-kernel-graph="dot=$out/$name.before.dot" \
    --nf-fuse-pipeline \
    --nf-kernel-graph="dot=$out/$name.after.dot" \
    -o "$out/$name.fused.mlir" 2>"$out/$name.log"
  mapfile -t counts < <(sed -n 's/^nf-kernel-graph: \(@.*\): \([0-9]*\) kernels$/\1 \2/p' "$out/$name.log")
  half=$((${#counts[@]} / 2))
  for ((i = 0; i < half; i++)); do
    read -r function before <<<"${counts[i]}"
    read -r _ after <<<"${counts[i + half]}"
    echo "$function: $before kernels before, $after after nf-fuse-pipeline"
  done
  grep -o 'label="nf.fused\\n[^"]*"' "$out/$name.after.dot" |
    sed 's/label="nf.fused\\n\(.*\)"/  fused kernel: \1/' || true
  echo "  graphs: $out/$name.before.dot $out/$name.after.dot; IR: $out/$name.fused.mlir"
done
echo
echo "demo: every example raised and fused; render a graph with"
echo "  dot -Tsvg $out/unet_block_tosa.after.dot -o unet_block_tosa.after.svg"
