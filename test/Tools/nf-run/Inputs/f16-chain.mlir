// An f16 chain of TOSA ops, op by op: each op's result is rounded to f16 on
// the CPU and in the CUDA kernel alike (the kernel computes in f32 and
// rounds where the CPU does), so the two agree to the bit.
func.func @chain(%x: tensor<7x33xf16>, %y: tensor<7x33xf16>) -> tensor<7x33xf16> {
  %s = tosa.add %x, %y : (tensor<7x33xf16>, tensor<7x33xf16>) -> tensor<7x33xf16>
  %p = tosa.mul %s, %x {shift = 0 : i8} : (tensor<7x33xf16>, tensor<7x33xf16>) -> tensor<7x33xf16>
  %d = tosa.sub %p, %y : (tensor<7x33xf16>, tensor<7x33xf16>) -> tensor<7x33xf16>
  %q = tosa.mul %d, %d {shift = 0 : i8} : (tensor<7x33xf16>, tensor<7x33xf16>) -> tensor<7x33xf16>
  return %q : tensor<7x33xf16>
}
