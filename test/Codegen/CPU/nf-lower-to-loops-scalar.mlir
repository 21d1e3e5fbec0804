// vector-width=1 emits scalar loops only; a width that is not a power of
// two from 1 to 64 is an error (2^40 aborted with "out of memory", issue 17).
// RUN: nf-opt %s --pass-pipeline='builtin.module(nf-lower-to-loops{vector-width=1})' | FileCheck %s
// RUN: not nf-opt %s --pass-pipeline='builtin.module(nf-lower-to-loops{vector-width=0})' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: nf-lower-to-loops: vector-width must be a power of two from 1 to 64, got 0
// RUN: not nf-opt %s --nf-cpu-pipeline=vector-width=1099511627776 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: nf-lower-to-loops: vector-width must be a power of two from 1 to 64, got 1099511627776
// RUN: not nf-opt %s --pass-pipeline='builtin.module(nf-lower-to-loops{vector-width=12})' 2>&1 | FileCheck %s --check-prefix=TWELVE
// TWELVE: error: nf-lower-to-loops: vector-width must be a power of two from 1 to 64, got 12

// CHECK-LABEL: func.func @relu_scalar
// CHECK-NOT: vector.
// CHECK: arith.maximumf {{.+}} : f32
func.func @relu_scalar(%x: tensor<7xf32>) -> tensor<7xf32> {
  %0 = nf.relu %x : tensor<7xf32>
  return %0 : tensor<7xf32>
}
