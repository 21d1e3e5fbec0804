// After nf-cpu-bufferize, a function on tensors writes its results into
// trailing memref arguments, without copies or result allocations.
// RUN: nf-opt %s --nf-cpu-bufferize | FileCheck %s

// CHECK-LABEL: func.func @layer_norm_then_gelu
// CHECK-SAME: (%[[X:.+]]: memref<8x768xf16>, %[[S:.+]]: memref<768xf32>, %[[Y:.+]]: memref<8x768xf16>, %[[R:.+]]: memref<8x1xf32>)
// CHECK-NOT: memref.copy
// The LayerNorm output and its unused mean are temporaries, freed after use.
// CHECK: %[[T:.+]] = memref.alloc() {alignment = 64 : i64} : memref<8x768xf16>
// CHECK: %[[M:.+]] = memref.alloc() {alignment = 64 : i64} : memref<8x1xf32>
// CHECK: %[[YV:.+]] = memref.reinterpret_cast %[[Y]] to offset: [0], sizes: [6144]
// CHECK: vector.store {{.+}}, %[[YV]]
// CHECK-DAG: memref.dealloc %[[T]]
// CHECK-DAG: memref.dealloc %[[M]]
// CHECK: return
// CHECK-NOT: memref.copy
func.func @layer_norm_then_gelu(%x: tensor<8x768xf16>, %s: tensor<768xf32>) -> (tensor<8x768xf16>, tensor<8x1xf32>) {
  %y, %m, %r = nf.layer_norm %x scale %s {axis = 1 : i64} : (tensor<8x768xf16>, tensor<768xf32>) -> (tensor<8x768xf16>, tensor<8x1xf32>, tensor<8x1xf32>)
  %g = nf.gelu %y : tensor<8x768xf16>
  return %g, %r : tensor<8x768xf16>, tensor<8x1xf32>
}
