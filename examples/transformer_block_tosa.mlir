// The transformer MLP block of transformer_block.mlir as a framework hands
// it over: TOSA, with GELU (tanh form), the bias adds and the LayerNorm
// decomposed into primitive ops (what torch-mlir and TensorFlow's TOSA
// legalization emit), f32, batch 8 x sequence 128 folded into 1024 rows:
//   h = gelu_tanh(x @ W1 + b1) @ W2 + b2;  y = layer_norm(x + h) * gamma + beta
// nf-fuse-pipeline raises every chain to nf ops and fuses them.
func.func @transformer_mlp_block_tosa(
    %x: tensor<1x1024x768xf32>,
    %w1: tensor<1x768x3072xf32>, %b1: tensor<3072xf32>,
    %w2: tensor<1x3072x768xf32>, %b2: tensor<768xf32>,
    %gamma: tensor<768xf32>, %beta: tensor<768xf32>) -> tensor<1x1024x768xf32> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %three = "tosa.const"() {value = dense<3.0> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %k = "tosa.const"() {value = dense<0.044715> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %s2pi = "tosa.const"() {value = dense<0.7978845608028654> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %inv_n = "tosa.const"() {value = dense<0.0013020833333333333> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>

  // up projection + bias + GELU (tanh form)
  %up = tosa.matmul %x, %w1 : (tensor<1x1024x768xf32>, tensor<1x768x3072xf32>) -> tensor<1x1024x3072xf32>
  %b1r = tosa.reshape %b1 {new_shape = array<i64: 1, 1, 3072>} : (tensor<3072xf32>) -> tensor<1x1x3072xf32>
  %h = tosa.add %up, %b1r : (tensor<1x1024x3072xf32>, tensor<1x1x3072xf32>) -> tensor<1x1024x3072xf32>
  %h3 = tosa.pow %h, %three : (tensor<1x1024x3072xf32>, tensor<1x1x1xf32>) -> tensor<1x1024x3072xf32>
  %kh3 = tosa.mul %h3, %k {shift = 0 : i8} : (tensor<1x1024x3072xf32>, tensor<1x1x1xf32>) -> tensor<1x1024x3072xf32>
  %inner = tosa.add %h, %kh3 : (tensor<1x1024x3072xf32>, tensor<1x1024x3072xf32>) -> tensor<1x1024x3072xf32>
  %scaled = tosa.mul %inner, %s2pi {shift = 0 : i8} : (tensor<1x1024x3072xf32>, tensor<1x1x1xf32>) -> tensor<1x1024x3072xf32>
  %t = tosa.tanh %scaled : (tensor<1x1024x3072xf32>) -> tensor<1x1024x3072xf32>
  %t1 = tosa.add %t, %one : (tensor<1x1024x3072xf32>, tensor<1x1x1xf32>) -> tensor<1x1024x3072xf32>
  %xt = tosa.mul %h, %t1 {shift = 0 : i8} : (tensor<1x1024x3072xf32>, tensor<1x1024x3072xf32>) -> tensor<1x1024x3072xf32>
  %act = tosa.mul %xt, %half {shift = 0 : i8} : (tensor<1x1024x3072xf32>, tensor<1x1x1xf32>) -> tensor<1x1024x3072xf32>

  // down projection + bias + residual
  %down = tosa.matmul %act, %w2 : (tensor<1x1024x3072xf32>, tensor<1x3072x768xf32>) -> tensor<1x1024x768xf32>
  %b2r = tosa.reshape %b2 {new_shape = array<i64: 1, 1, 768>} : (tensor<768xf32>) -> tensor<1x1x768xf32>
  %db = tosa.add %down, %b2r : (tensor<1x1024x768xf32>, tensor<1x1x768xf32>) -> tensor<1x1024x768xf32>
  %r = tosa.add %x, %db : (tensor<1x1024x768xf32>, tensor<1x1024x768xf32>) -> tensor<1x1024x768xf32>

  // LayerNorm over the hidden axis, as mean / subtract / square / mean /
  // add eps / rsqrt / multiply / scale / shift
  %sum = tosa.reduce_sum %r {axis = 2 : i32} : (tensor<1x1024x768xf32>) -> tensor<1x1024x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<1x1024x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1024x1xf32>
  %d = tosa.sub %r, %mean : (tensor<1x1024x768xf32>, tensor<1x1024x1xf32>) -> tensor<1x1024x768xf32>
  %d2 = tosa.mul %d, %d {shift = 0 : i8} : (tensor<1x1024x768xf32>, tensor<1x1024x768xf32>) -> tensor<1x1024x768xf32>
  %vsum = tosa.reduce_sum %d2 {axis = 2 : i32} : (tensor<1x1024x768xf32>) -> tensor<1x1024x1xf32>
  %var = tosa.mul %vsum, %inv_n {shift = 0 : i8} : (tensor<1x1024x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1024x1xf32>
  %ve = tosa.add %var, %eps : (tensor<1x1024x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1024x1xf32>
  %rstd = tosa.rsqrt %ve : (tensor<1x1024x1xf32>) -> tensor<1x1024x1xf32>
  %n = tosa.mul %d, %rstd {shift = 0 : i8} : (tensor<1x1024x768xf32>, tensor<1x1024x1xf32>) -> tensor<1x1024x768xf32>
  %g3 = tosa.reshape %gamma {new_shape = array<i64: 1, 1, 768>} : (tensor<768xf32>) -> tensor<1x1x768xf32>
  %be3 = tosa.reshape %beta {new_shape = array<i64: 1, 1, 768>} : (tensor<768xf32>) -> tensor<1x1x768xf32>
  %ns = tosa.mul %n, %g3 {shift = 0 : i8} : (tensor<1x1024x768xf32>, tensor<1x1x768xf32>) -> tensor<1x1024x768xf32>
  %y = tosa.add %ns, %be3 : (tensor<1x1024x768xf32>, tensor<1x1x768xf32>) -> tensor<1x1024x768xf32>
  return %y : tensor<1x1024x768xf32>
}
