// The whole CPU pipeline: nf ops on tensors become LLVM dialect functions
// whose chunk and row loops run under OpenMP (a loop of one chunk is folded
// away), with no math calls left to vectorize around.
// RUN: nf-opt %s --nf-cpu-pipeline | FileCheck %s
// RUN: nf-opt %s --nf-cpu-pipeline='parallel=false' | FileCheck %s --check-prefix=SERIAL

// CHECK-LABEL: llvm.func @silu_rows
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK: llvm.load {{.+}} -> vector<8xf32>
// CHECK-NOT: math.
// CHECK-NOT: llvm.call @expf
// SERIAL-LABEL: llvm.func @silu_rows
// SERIAL-NOT: omp.
func.func @silu_rows(%x: tensor<4x10000xf32>) -> tensor<4x10000xf32> {
  %0 = nf.silu %x : tensor<4x10000xf32>
  return %0 : tensor<4x10000xf32>
}
