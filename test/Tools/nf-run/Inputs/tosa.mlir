// TOSA functions for nf-run: a LayerNorm chain returning y and the mean,
// the tanh form of GELU, and ReLU as a clamp.
func.func @ln_chain(%x: tensor<4x13xf32>) -> (tensor<4x13xf32>, tensor<4x1xf32>) {
  %invn = "tosa.const"() <{value = dense<0.076923076923076927> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %eps = "tosa.const"() <{value = dense<1.0e-5> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x13xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %invn {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x13xf32>, tensor<4x1xf32>) -> tensor<4x13xf32>
  %d2 = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x13xf32>, tensor<4x13xf32>) -> tensor<4x13xf32>
  %ss = tosa.reduce_sum %d2 {axis = 1 : i32} : (tensor<4x13xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %ss, %invn {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %rstd = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %d, %rstd {shift = 0 : i8} : (tensor<4x13xf32>, tensor<4x1xf32>) -> tensor<4x13xf32>
  return %y, %mean : tensor<4x13xf32>, tensor<4x1xf32>
}

// The LayerNorm chain over rows of 32768: its sums are long enough that
// sequential f32 sums lose several ulps of the mean.
func.func @ln_chain_wide(%x: tensor<4x32768xf32>) -> (tensor<4x32768xf32>, tensor<4x1xf32>) {
  %invn = "tosa.const"() <{value = dense<3.0517578125e-05> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %eps = "tosa.const"() <{value = dense<1.0e-5> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x32768xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %invn {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x32768xf32>, tensor<4x1xf32>) -> tensor<4x32768xf32>
  %d2 = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x32768xf32>, tensor<4x32768xf32>) -> tensor<4x32768xf32>
  %ss = tosa.reduce_sum %d2 {axis = 1 : i32} : (tensor<4x32768xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %ss, %invn {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %rstd = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %d, %rstd {shift = 0 : i8} : (tensor<4x32768xf32>, tensor<4x1xf32>) -> tensor<4x32768xf32>
  return %y, %mean : tensor<4x32768xf32>, tensor<4x1xf32>
}

func.func @gelu_tanh(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = "tosa.const"() <{value = dense<0.5> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %one = "tosa.const"() <{value = dense<1.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %three = "tosa.const"() <{value = dense<3.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c = "tosa.const"() <{value = dense<0.044715> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %k = "tosa.const"() <{value = dense<0.7978845608028654> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %x3 = tosa.pow %x, %three : (tensor<2x8xf32>, tensor<1x1xf32>) -> tensor<2x8xf32>
  %cx3 = tosa.mul %x3, %c {shift = 0 : i8} : (tensor<2x8xf32>, tensor<1x1xf32>) -> tensor<2x8xf32>
  %inner = tosa.add %x, %cx3 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %scaled = tosa.mul %inner, %k {shift = 0 : i8} : (tensor<2x8xf32>, tensor<1x1xf32>) -> tensor<2x8xf32>
  %t = tosa.tanh %scaled : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %t1 = tosa.add %t, %one : (tensor<2x8xf32>, tensor<1x1xf32>) -> tensor<2x8xf32>
  %hx = tosa.mul %x, %half {shift = 0 : i8} : (tensor<2x8xf32>, tensor<1x1xf32>) -> tensor<2x8xf32>
  %y = tosa.mul %hx, %t1 {shift = 0 : i8} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

func.func @relu(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %y = tosa.clamp %x {min_fp = 0.0 : f32, max_fp = 3.4028235e+38 : f32, min_int = 0 : i64, max_int = 2147483647 : i64} : (tensor<3x8xf32>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}
