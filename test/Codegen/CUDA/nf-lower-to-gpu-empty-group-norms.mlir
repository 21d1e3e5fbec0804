// Group and instance norms, and their gradients, of no images or no
// channels lower without a division by zero: results with no elements
// launch nothing, and the parameter gradients of no images are zeros from
// the finishing kernel alone.
// RUN: nf-opt %s --nf-lower-to-gpu -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @instance_norm_of_no_channels
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @instance_norm_of_no_channels(%x: tensor<2x3x3x0xf32>) -> tensor<2x3x3x0xf32> {
  %y, %m, %r = nf.instance_norm %x {layout = #nf.layout<nhwc>} : (tensor<2x3x3x0xf32>) -> (tensor<2x3x3x0xf32>, tensor<2x0xf32>, tensor<2x0xf32>)
  return %y : tensor<2x3x3x0xf32>
}

// -----

// CHECK-LABEL: func.func @group_norm_of_no_images
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @group_norm_of_no_images(%x: tensor<0x8x3x3xf16>) -> tensor<0x8x3x3xf16> {
  %y, %m, %r = nf.group_norm %x {num_groups = 4 : i64} : (tensor<0x8x3x3xf16>) -> (tensor<0x8x3x3xf16>, tensor<0x4xf32>, tensor<0x4xf32>)
  return %y : tensor<0x8x3x3xf16>
}

// -----

// CHECK-LABEL: func.func @instance_norm_grad_of_no_channels
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @instance_norm_grad_of_no_channels(%dy: tensor<2x0x3x3xf32>, %x: tensor<2x0x3x3xf32>, %m: tensor<2x0xf32>, %r: tensor<2x0xf32>) -> (tensor<2x0x3x3xf32>, tensor<0xf32>, tensor<0xf32>) {
  %dx, %ds, %db = nf.instance_norm_grad %dy, %x, %m, %r : (tensor<2x0x3x3xf32>, tensor<2x0x3x3xf32>, tensor<2x0xf32>, tensor<2x0xf32>) -> (tensor<2x0x3x3xf32>, tensor<0xf32>, tensor<0xf32>)
  return %dx, %ds, %db : tensor<2x0x3x3xf32>, tensor<0xf32>, tensor<0xf32>
}

// -----

// CHECK-LABEL: func.func @group_norm_grad_of_no_images
// CHECK-NOT: _sums
// CHECK: gpu.launch_func @nf_kernels::@group_norm_grad_of_no_images_group_norm_grad_finish
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @group_norm_grad_of_no_images(%dy: tensor<0x3x3x8xf32>, %x: tensor<0x3x3x8xf32>, %m: tensor<0x4xf32>, %r: tensor<0x4xf32>) -> (tensor<0x3x3x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %dx, %ds, %db = nf.group_norm_grad %dy, %x, %m, %r {layout = #nf.layout<nhwc>, num_groups = 4 : i64} : (tensor<0x3x3x8xf32>, tensor<0x3x3x8xf32>, tensor<0x4xf32>, tensor<0x4xf32>) -> (tensor<0x3x3x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx, %ds, %db : tensor<0x3x3x8xf32>, tensor<8xf32>, tensor<8xf32>
}
