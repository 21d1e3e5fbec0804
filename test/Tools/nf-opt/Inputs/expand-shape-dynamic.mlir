// tensor.expand_shape of dynamic tensors, with static sizes in output_shape.
func.func @f(%x: tensor<?xf32>) -> tensor<?x4xf32> {
  %c2 = arith.constant 2 : index
  %y = tensor.expand_shape %x [[0, 1]] output_shape [%c2, 4] : tensor<?xf32> into tensor<?x4xf32>
  %z = nf.relu %y : tensor<?x4xf32>
  return %z : tensor<?x4xf32>
}
func.func @g(%x: tensor<?x?xf32>, %n: index) -> tensor<?x2x?xf32> {
  %y = tensor.expand_shape %x [[0], [1, 2]] output_shape [%n, 2, 3] : tensor<?x?xf32> into tensor<?x2x?xf32>
  return %y : tensor<?x2x?xf32>
}
