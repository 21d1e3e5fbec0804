func.func @f(%x: tensor<?xf32>) -> tensor<2x4xf32> {
  %y = tensor.expand_shape %x [[0, 1]] output_shape [2, 4] : tensor<?xf32> into tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
