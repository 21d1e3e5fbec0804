// A static tosa.reshape becomes tensor.collapse_shape/expand_shape before
// the CUDA lowering (upstream's TosaToTensor pattern), which bufferize to
// views of the same buffer: a reshaped scale costs no kernel and no copy.
// A reshape with dynamic sizes that keeps the data in place is a view too.
// RUN: nf-opt %s --nf-lower-to-gpu --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @reshaped_scale
// CHECK: %[[VIEW:.+]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1]] : tensor<1x8xf32> into tensor<8xf32>
// CHECK: %[[S:.+]] = bufferization.to_memref %[[VIEW]] read_only : memref<8xf32>
// CHECK: %[[FLAT:.+]] = memref.cast %[[S]]
// CHECK: gpu.launch_func @nf_kernels::@reshaped_scale_layer_norm {{.+}} args(%{{.+}} : memref<?xf32>, %[[FLAT]] : memref<?xf32>
// CHECK-NOT: gpu.launch_func
// CHECK-NOT: memref.copy
// CHECK: return
func.func @reshaped_scale(%x: tensor<4x8xf32>, %s: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %c = tosa.reshape %s {new_shape = array<i64: 8>} : (tensor<1x8xf32>) -> tensor<8xf32>
  %y, %m, %r = nf.layer_norm %x scale %c {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_reshape
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<?x8xf32> into tensor<?xf32>
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @dynamic_reshape(%s: tensor<?x8xf32>) -> tensor<?xf32> {
  %c = tosa.reshape %s {new_shape = array<i64: -1>} : (tensor<?x8xf32>) -> tensor<?xf32>
  return %c : tensor<?xf32>
}
