// The CPU pipelines take TOSA ops beside nf ops: after nf-cpu-bufferize no
// TOSA or linalg op is left, only parallel loops over buffers (results are
// out-parameters, as for nf functions), and nf-cpu-pipeline ends in the
// LLVM dialect with the loops under OpenMP.
// RUN: nf-opt %s --nf-cpu-bufferize | FileCheck %s
// RUN: nf-opt %s --nf-cpu-pipeline | FileCheck %s --check-prefix=LLVM
// RUN: nf-opt %s --nf-cpu-pipeline='parallel=false' | FileCheck %s --check-prefix=SERIAL

// LayerNorm over the last axis as a framework exports it.
// CHECK-LABEL: func.func @layer_norm_chain
// CHECK-SAME: (%[[X:.+]]: memref<2x3x8xf32>, %{{.+}}: memref<8xf32>, %{{.+}}: memref<1x1x8xf32>, %[[Y:.+]]: memref<2x3x8xf32>)
// CHECK-NOT: tosa.
// CHECK-NOT: linalg.
// The row sums: zeroed, then summed in parallel over rows and in f64
// along each row.
// CHECK: scf.parallel
// CHECK-NEXT: memref.store %{{.+}}, %[[ACC:.+]][
// CHECK: scf.parallel (%[[I:.+]], %[[J:.+]]) =
// CHECK: scf.for %[[K:[a-z0-9_]+]] = {{.+}} -> (f64)
// CHECK-NEXT: memref.load %[[X]][%[[I]], %[[J]], %[[K]]]
// CHECK: memref.load %[[ACC]][%[[I]], %[[J]]]
// CHECK: math.rsqrt
// CHECK: memref.store %{{.+}}, %[[Y]]
// CHECK: return
// LLVM-LABEL: llvm.func @layer_norm_chain
// LLVM-NOT: builtin.unrealized_conversion_cast
// LLVM: omp.wsloop
// LLVM-NOT: builtin.unrealized_conversion_cast
// LLVM: llvm.return
// SERIAL-LABEL: llvm.func @layer_norm_chain
// SERIAL-NOT: omp.
// SERIAL: llvm.return
func.func @layer_norm_chain(%x: tensor<2x3x8xf32>, %scale: tensor<8xf32>, %bias: tensor<1x1x8xf32>) -> tensor<2x3x8xf32> {
  %invn = "tosa.const"() <{value = dense<0.125> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() <{value = dense<1.0e-5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 2 : i32} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %mean = tosa.mul %sum, %invn {shift = 0 : i8} : (tensor<2x3x1xf32>, tensor<1x1x1xf32>) -> tensor<2x3x1xf32>
  %d = tosa.sub %x, %mean : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %d2 = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %ss = tosa.reduce_sum %d2 {axis = 2 : i32} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %var = tosa.mul %ss, %invn {shift = 0 : i8} : (tensor<2x3x1xf32>, tensor<1x1x1xf32>) -> tensor<2x3x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x3x1xf32>, tensor<1x1x1xf32>) -> tensor<2x3x1xf32>
  %rstd = tosa.rsqrt %ve : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %n = tosa.mul %d, %rstd {shift = 0 : i8} : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %s = tosa.reshape %scale {new_shape = array<i64: 1, 1, 8>} : (tensor<8xf32>) -> tensor<1x1x8xf32>
  %ns = tosa.mul %n, %s {shift = 0 : i8} : (tensor<2x3x8xf32>, tensor<1x1x8xf32>) -> tensor<2x3x8xf32>
  %y = tosa.add %ns, %bias : (tensor<2x3x8xf32>, tensor<1x1x8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// A TOSA add feeds nf.layer_norm, whose output a TOSA tanh takes: the nf
// op still becomes vector loops, the TOSA ops scalar loops.
// CHECK-LABEL: func.func @tosa_nf_tosa
// CHECK-SAME: (%[[X:.+]]: memref<4x768xf32>, %[[R:.+]]: memref<4x768xf32>, %[[Z:.+]]: memref<4x768xf32>)
// CHECK-NOT: tosa.
// CHECK-NOT: nf.
// CHECK: %[[SUM:.+]] = memref.alloc()
// CHECK: scf.parallel
// CHECK: memref.load %[[X]]
// CHECK: memref.load %[[R]]
// CHECK: memref.store %{{.+}}, %[[SUM]]
// CHECK: vector.load
// CHECK: math.tanh
// CHECK: memref.store %{{.+}}, %[[Z]]
// LLVM-LABEL: llvm.func @tosa_nf_tosa
// LLVM-NOT: math.
// LLVM: llvm.return
func.func @tosa_nf_tosa(%x: tensor<4x768xf32>, %r: tensor<4x768xf32>) -> tensor<4x768xf32> {
  %0 = tosa.add %x, %r : (tensor<4x768xf32>, tensor<4x768xf32>) -> tensor<4x768xf32>
  %y, %m, %s = nf.layer_norm %0 {axis = 1 : i64} : (tensor<4x768xf32>) -> (tensor<4x768xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %1 = tosa.tanh %y : (tensor<4x768xf32>) -> tensor<4x768xf32>
  return %1 : tensor<4x768xf32>
}

// An arith op on tensors writes into its operand; the caller's input is
// read, never written.
// CHECK-LABEL: func.func @square_does_not_write_input
// CHECK-SAME: (%[[A:.+]]: memref<16xf32>, %[[OUT:.+]]: memref<16xf32>)
// CHECK-NOT: memref.store %{{.+}}, %[[A]]
// CHECK: %[[V:.+]] = memref.load %[[A]]
// CHECK: %[[SQ:.+]] = arith.mulf %[[V]], %[[V]]
// CHECK: memref.store %[[SQ]], %[[OUT]]
// CHECK-NOT: memref.store %{{.+}}, %[[A]]
// CHECK: return
func.func @square_does_not_write_input(%a: tensor<16xf32>) -> tensor<16xf32> {
  %0 = arith.mulf %a, %a : tensor<16xf32>
  return %0 : tensor<16xf32>
}
