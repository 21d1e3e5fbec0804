// A part of examples/transformer_block.mlir:
// a residual add (x + x) + LayerNorm on the transformer block's shapes, with the example's
// signature (unused arguments included) so that nf-bench-cpu-examples can
// time it fused against unfused:
//   nf-bench-cpu-examples --only transformer_block --examples bench/cpu/example-parts/transformer-residual-layer-norm
func.func @transformer_mlp_block(
    %x: tensor<8x128x768xf16>,
    %w1: tensor<768x3072xf16>, %b1: tensor<3072xf16>,
    %w2: tensor<3072x768xf16>, %b2: tensor<768xf16>,
    %gamma: tensor<768xf32>, %beta: tensor<768xf32>) -> (tensor<8x128x768xf16>, tensor<8x128x1xf32>, tensor<8x128x1xf32>) {
  %res = nf.add %x, %x : tensor<8x128x768xf16>
  %y, %mean, %rstd = nf.layer_norm %res scale %gamma bias %beta {axis = 2 : i64, epsilon = 1.0e-12}
      : (tensor<8x128x768xf16>, tensor<768xf32>, tensor<768xf32>)
      -> (tensor<8x128x768xf16>, tensor<8x128x1xf32>, tensor<8x128x1xf32>)
  return %y, %mean, %rstd : tensor<8x128x768xf16>, tensor<8x128x1xf32>, tensor<8x128x1xf32>
}
