// group_norm_grad and instance_norm_grad (LowerGroupNormGrads.cpp): three
// kernels of 256 threads. `_group_sums` takes a block per (image, group)
// and writes the group's sums of g*dy and g*dy*xhat; `_dx` is a grid-stride
// elementwise kernel; `_param_sums` takes a block per channel and writes
// dscale and dbias from thread 0, in a fixed order.
// RUN: nf-opt %s --nf-lower-to-gpu | FileCheck %s

// CHECK-LABEL: func.func @group_norm_grad_nhwc
// Two sums for each of 2 x 4 (image, group): a temporary of 16.
// CHECK: %[[SUMS:.+]] = memref.alloc() : memref<16xf32>
// CHECK: %[[IMAGE_GROUPS:.+]] = arith.constant 8 : index
// CHECK: gpu.launch_func @nf_kernels::@group_norm_grad_nhwc_group_norm_grad_group_sums blocks in (%[[IMAGE_GROUPS]],
// 2 x 4 x 3 x 16 = 384 elements: 2 blocks.
// CHECK: %[[DX_BLOCKS:.+]] = arith.constant 2 : index
// CHECK: gpu.launch_func @nf_kernels::@group_norm_grad_nhwc_group_norm_grad_dx blocks in (%[[DX_BLOCKS]],
// CHECK: %[[CHANNELS:.+]] = arith.constant 16 : index
// CHECK: gpu.launch_func @nf_kernels::@group_norm_grad_nhwc_group_norm_grad_param_sums blocks in (%[[CHANNELS]],
func.func @group_norm_grad_nhwc(%dy: tensor<2x4x3x16xf16>, %x: tensor<2x4x3x16xf16>, %m: tensor<2x4xf32>, %r: tensor<2x4xf32>, %s: tensor<16xf32>) -> (tensor<2x4x3x16xf16>, tensor<16xf32>, tensor<16xf32>) {
  %dx, %ds, %db = nf.group_norm_grad %dy, %x, %m, %r scale %s {layout = #nf.layout<nhwc>, num_groups = 4 : i64} : (tensor<2x4x3x16xf16>, tensor<2x4x3x16xf16>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<16xf32>) -> (tensor<2x4x3x16xf16>, tensor<16xf32>, tensor<16xf32>)
  return %dx, %ds, %db : tensor<2x4x3x16xf16>, tensor<16xf32>, tensor<16xf32>
}

// An instance norm is a group norm of one channel a group: 2 x 5 sums.
// CHECK-LABEL: func.func @instance_norm_grad_nchw
// CHECK: memref.alloc() : memref<20xf64>
// CHECK: gpu.launch_func @nf_kernels::@instance_norm_grad_nchw_instance_norm_grad_group_sums
// CHECK: gpu.launch_func @nf_kernels::@instance_norm_grad_nchw_instance_norm_grad_dx
// CHECK: gpu.launch_func @nf_kernels::@instance_norm_grad_nchw_instance_norm_grad_param_sums
func.func @instance_norm_grad_nchw(%dy: tensor<2x5x7x3xf64>, %x: tensor<2x5x7x3xf64>, %m: tensor<2x5xf64>, %r: tensor<2x5xf64>) -> (tensor<2x5x7x3xf64>, tensor<5xf64>, tensor<5xf64>) {
  %dx, %ds, %db = nf.instance_norm_grad %dy, %x, %m, %r : (tensor<2x5x7x3xf64>, tensor<2x5x7x3xf64>, tensor<2x5xf64>, tensor<2x5xf64>) -> (tensor<2x5x7x3xf64>, tensor<5xf64>, tensor<5xf64>)
  return %dx, %ds, %db : tensor<2x5x7x3xf64>, tensor<5xf64>, tensor<5xf64>
}

// CHECK-LABEL: gpu.func @group_norm_grad_nhwc_group_norm_grad_group_sums
// CHECK-SAME: workgroup(%{{.+}} : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// Blocks loop over the (image, group)s; threads over the group's elements.
// CHECK: scf.for
// CHECK: scf.for {{.+}} iter_args
// CHECK: memref.load {{.+}} : memref<?xf16>
// CHECK: arith.extf
// The block's sums: shuffles within warps, workgroup memory across them.
// CHECK: gpu.shuffle xor
// CHECK: gpu.barrier
// Thread 0 writes the two sums.
// CHECK: arith.cmpi eq
// CHECK: scf.if
// CHECK: memref.store
// CHECK: memref.store

// CHECK-LABEL: gpu.func @group_norm_grad_nhwc_group_norm_grad_dx
// CHECK: scf.for
// CHECK: arith.truncf {{.+}} : f32 to f16
// CHECK: memref.store

// CHECK-LABEL: gpu.func @group_norm_grad_nhwc_group_norm_grad_param_sums
// CHECK: gpu.shuffle xor
// CHECK: scf.if
// CHECK: memref.store
// CHECK: memref.store
