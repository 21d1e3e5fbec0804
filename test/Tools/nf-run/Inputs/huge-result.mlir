// A one-element input tiled into a result of 4 * 2^50 bytes: nf-run
// refuses to allocate it.
func.func @tile(%x: tensor<1x1xf32>) -> tensor<1048576x1073741824xf32> {
  %0 = tosa.tile %x {multiples = array<i64: 1048576, 1073741824>} : (tensor<1x1xf32>) -> tensor<1048576x1073741824xf32>
  return %0 : tensor<1048576x1073741824xf32>
}
