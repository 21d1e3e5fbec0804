// nf-opt loads exactly the dialects normfuse consumes or produces: TOSA and
// arith/math/tensor input round-trips beside nf ops; an unknown pass is an error.
// RUN: nf-opt %s | FileCheck %s
// RUN: not nf-opt %s --no-such-pass 2>&1 | FileCheck %s --check-prefix=PASS
// PASS: Unknown command line argument '--no-such-pass'
// RUN: nf-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS
// DIALECTS: Available Dialects: arith,bufferization,builtin,func,gpu,linalg,llvm,math,memref,nf,nvgpu,omp,scf,tensor,tosa,vector{{$}}

// CHECK-LABEL: func.func @tosa_gelu_pieces
// CHECK: tosa.mul
// CHECK: tosa.tanh
// CHECK: math.erf
// CHECK: tensor.empty
// CHECK: nf.gelu
func.func @tosa_gelu_pieces(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = tosa.tanh %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = math.erf %1 : tensor<4xf32>
  %3 = tensor.empty() : tensor<4xf32>
  %4 = nf.gelu %2 : tensor<4xf32>
  return %4 : tensor<4xf32>
}
