// A complex<f32> constant that a verifier refuses: the diagnostic prints the
// op with its constant, large enough to be elided.
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = "tosa.const"() {value = dense<(1.0, 2.0)> : tensor<40xcomplex<f32>>} : () -> tensor<40xcomplex<f32>>
  return %x : tensor<2xf32>
}
