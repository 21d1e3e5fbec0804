// Constant tensors that are not splats: a weight row the kernel reads, and
// a table returned as it is.
func.func @weights(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4xi32>) {
  %w = "tosa.const"() <{value = dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>}> : () -> tensor<1x4xf32>
  %k = "tosa.const"() <{value = dense<[5, 6, 7, 8]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %y = tosa.mul %x, %w {shift = 0 : i8} : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  return %y, %k : tensor<2x4xf32>, tensor<4xi32>
}
