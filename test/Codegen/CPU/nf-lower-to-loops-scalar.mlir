// vector-width=1 emits scalar loops only; a width below 1 is an error.
// RUN: nf-opt %s --pass-pipeline='builtin.module(nf-lower-to-loops{vector-width=1})' | FileCheck %s
// RUN: not nf-opt %s --pass-pipeline='builtin.module(nf-lower-to-loops{vector-width=0})' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: nf-lower-to-loops: vector-width must be at least 1, got 0

// CHECK-LABEL: func.func @relu_scalar
// CHECK-NOT: vector.
// CHECK: arith.maximumf {{.+}} : f32
func.func @relu_scalar(%x: tensor<7xf32>) -> tensor<7xf32> {
  %0 = nf.relu %x : tensor<7xf32>
  return %0 : tensor<7xf32>
}
