// tosa.reshape on the CUDA target: views of the same buffer (a reshaped
// scale, as exporters write it), a reshaped input returned (a copy: a
// result has its own buffer), and two reshapes of a result.
func.func @reshaped_scale(%x: tensor<4x8xf32>, %s: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %c = tosa.reshape %s {new_shape = array<i64: 8>} : (tensor<1x8xf32>) -> tensor<8xf32>
  %y, %m, %r = nf.layer_norm %x scale %c {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y : tensor<4x8xf32>
}
func.func @reshaped_input(%s: tensor<1x8xf32>) -> tensor<8xf32> {
  %c = tosa.reshape %s {new_shape = array<i64: 8>} : (tensor<1x8xf32>) -> tensor<8xf32>
  return %c : tensor<8xf32>
}
func.func @reshaped_results(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8x4xf32>, tensor<2x16xf32>) {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %a = tosa.reshape %y {new_shape = array<i64: 8, 4>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %b = tosa.reshape %y {new_shape = array<i64: 2, 16>} : (tensor<4x8xf32>) -> tensor<2x16xf32>
  return %y, %a, %b : tensor<4x8xf32>, tensor<8x4xf32>, tensor<2x16xf32>
}
