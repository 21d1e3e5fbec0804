// nf-cuda-pipeline: the host function on buffers after bufferization. Its
// results become out-parameters; the value passed between two kernels is a
// temporary (memref.alloc) that lives for the whole call; grid and block
// sizes are constants for static shapes, and an empty tensor launches
// nothing.
// RUN: nf-opt %s --nf-cuda-pipeline -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @add_then_layer_norm
// CHECK-SAME: (%[[A:.+]]: memref<64x768xf16>, %[[B:.+]]: memref<64x768xf16>, %[[Y:.+]]: memref<64x768xf16>)
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK: %[[SUM:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x768xf16>
// CHECK: gpu.launch_func @nf_kernels::@add_then_layer_norm_add blocks in
// CHECK: gpu.launch_func @nf_kernels::@add_then_layer_norm_layer_norm blocks in (%[[C8]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]])
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @add_then_layer_norm(%a: tensor<64x768xf16>, %b: tensor<64x768xf16>) -> tensor<64x768xf16> {
  %s = nf.add %a, %b : tensor<64x768xf16>
  %y, %m, %r = nf.layer_norm %s {axis = 1 : i64} : (tensor<64x768xf16>) -> (tensor<64x768xf16>, tensor<64x1xf32>, tensor<64x1xf32>)
  return %y : tensor<64x768xf16>
}

// -----

// CHECK-LABEL: func.func @empty
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @empty(%x: tensor<0x16xf32>) -> tensor<0x16xf32> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<0x16xf32>) -> (tensor<0x16xf32>, tensor<0x1xf32>, tensor<0x1xf32>)
  return %y : tensor<0x16xf32>
}

// -----

// Dynamic rows: the grid is computed on the host from the buffer's size,
// at most the blocks the device holds at once (each looping over row
// groups), and y is written straight into the out-parameter (no allocation
// of its own, copied at the end).
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-SAME: (%[[X:.+]]: memref<?x64xf32>, %[[Y:.+]]: memref<?x64xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[ROWS:.+]] = memref.dim
// CHECK: %[[YFLAT:.+]] = memref.collapse_shape %[[Y]]
// CHECK: %[[GROUPS:.+]] = arith.ceildivui %[[ROWS]]
// CHECK: %[[RESIDENT:.+]] = nf.resident_blocks @nf_kernels::@dynamic_rows_layer_norm block 256 shared 0 planned 1056
// CHECK: %[[BLOCKS:.+]] = arith.minui %[[GROUPS]], %[[RESIDENT]]
// CHECK: scf.if
// CHECK: gpu.launch_func @nf_kernels::@dynamic_rows_layer_norm blocks in (%[[BLOCKS]],
// CHECK-SAME: %[[YFLAT]] : memref<?xf32>
// CHECK-NOT: memref.copy
// CHECK: return
func.func @dynamic_rows(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x1xf32>, tensor<?x1xf32>)
  return %y : tensor<?x64xf32>
}
