// A part of examples/transformer_block.mlir:
// the transformer block's first matmul + bias + GELU alone, with the example's
// signature (unused arguments included) so that nf-bench-cpu-examples can
// time it fused against unfused:
//   nf-bench-cpu-examples --only transformer_block --examples bench/cpu/example-parts/transformer-matmul-bias-gelu
func.func @transformer_mlp_block(
    %x: tensor<8x128x768xf16>,
    %w1: tensor<768x3072xf16>, %b1: tensor<3072xf16>,
    %w2: tensor<3072x768xf16>, %b2: tensor<768xf16>,
    %gamma: tensor<768xf32>, %beta: tensor<768xf32>) -> tensor<8x128x3072xf16> {
  %up = nf.matmul %x, %w1 : tensor<8x128x768xf16>, tensor<768x3072xf16> -> tensor<8x128x3072xf16>
  %up_b = nf.bias_add %up, %b1 {layout = #nf.layout<nhwc>} : tensor<8x128x3072xf16>, tensor<3072xf16>
  %act = nf.gelu %up_b {approximate = #nf.approximation<tanh>} : tensor<8x128x3072xf16>
  return %act : tensor<8x128x3072xf16>
}
