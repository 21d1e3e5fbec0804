// A real literal for complex elements: MLIR 19 parses it, stores one number
// per element (half the bytes), and crashes (SIGSEGV) printing it.
func.func @f() -> tensor<1xcomplex<f32>> {
  %c = arith.constant dense<0.5> : tensor<1xcomplex<f32>>
  return %c : tensor<1xcomplex<f32>>
}
func.func @g() -> tensor<2xcomplex<i16>> {
  %c = arith.constant dense<7> : tensor<2xcomplex<i16>>
  return %c : tensor<2xcomplex<i16>>
}
