// A BERT-base style transformer MLP block on f16 activations (batch 8,
// sequence 128, hidden 768, intermediate 3072), as nf ops:
//   h = gelu_tanh(x @ W1 + b1) @ W2 + b2;  y = layer_norm(x + h)
// The mean/rstd of the LayerNorm are returned for the backward pass.
func.func @transformer_mlp_block(
    %x: tensor<8x128x768xf16>,
    %w1: tensor<768x3072xf16>, %b1: tensor<3072xf16>,
    %w2: tensor<3072x768xf16>, %b2: tensor<768xf16>,
    %gamma: tensor<768xf32>, %beta: tensor<768xf32>)
    -> (tensor<8x128x768xf16>, tensor<8x128x1xf32>, tensor<8x128x1xf32>) {
  %up = nf.matmul %x, %w1 : tensor<8x128x768xf16>, tensor<768x3072xf16> -> tensor<8x128x3072xf16>
  %up_b = nf.bias_add %up, %b1 {layout = #nf.layout<nhwc>} : tensor<8x128x3072xf16>, tensor<3072xf16>
  %act = nf.gelu %up_b {approximate = #nf.approximation<tanh>} : tensor<8x128x3072xf16>
  %down = nf.matmul %act, %w2 : tensor<8x128x3072xf16>, tensor<3072x768xf16> -> tensor<8x128x768xf16>
  %down_b = nf.bias_add %down, %b2 {layout = #nf.layout<nhwc>} : tensor<8x128x768xf16>, tensor<768xf16>
  %res = nf.add %x, %down_b : tensor<8x128x768xf16>
  %y, %mean, %rstd = nf.layer_norm %res scale %gamma bias %beta {axis = 2 : i64, epsilon = 1.0e-12}
      : (tensor<8x128x768xf16>, tensor<768xf32>, tensor<768xf32>)
      -> (tensor<8x128x768xf16>, tensor<8x128x1xf32>, tensor<8x128x1xf32>)
  return %y, %mean, %rstd : tensor<8x128x768xf16>, tensor<8x128x1xf32>, tensor<8x128x1xf32>
}
