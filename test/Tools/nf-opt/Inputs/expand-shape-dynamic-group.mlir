// Two dynamic sizes in one reassociation group of tensor.expand_shape's
// result: MLIR 19 crashes (SIGSEGV in OperandStorage) bufferizing it, with
// static sizes in output_shape (@f) or dynamic ones (@g).
func.func @f(%b: tensor<?xf32>) -> tensor<?x?xf32> {
  %b2 = tensor.expand_shape %b [[0, 1]] output_shape [1, 16] : tensor<?xf32> into tensor<?x?xf32>
  return %b2 : tensor<?x?xf32>
}
func.func @g(%b: tensor<?xf32>, %m: index, %n: index) -> tensor<?x?xf32> {
  %b2 = tensor.expand_shape %b [[0, 1]] output_shape [%m, %n] : tensor<?xf32> into tensor<?x?xf32>
  return %b2 : tensor<?x?xf32>
}
