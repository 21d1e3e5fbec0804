// A TOSA op that no raising pattern turns into nf ops: the CUDA back end
// lowers nf ops only.
func.func @sine(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = tosa.sin %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
