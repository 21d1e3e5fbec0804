// What nf-lower-to-gpu refuses, each with a message at the op.
// RUN: nf-opt %s --nf-lower-to-gpu -split-input-file -verify-diagnostics
// RUN: not nf-opt %s --nf-lower-to-gpu=arch=sm_70 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not nf-opt %s --nf-lower-to-gpu=row-norm-schedule=tiles 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// ARCH: nf-lower-to-gpu: unknown GPU architecture 'sm_70' (expected sm_XY or compute_XY, 75 or newer)
// SCHEDULE: nf-lower-to-gpu: unknown row-norm schedule 'tiles'

func.func @group_norm_grad_of_dynamic_shape(%dy: tensor<?x4x4x16xf32>, %x: tensor<?x4x4x16xf32>, %m: tensor<?x4xf32>, %r: tensor<?x4xf32>) -> tensor<?x4x4x16xf32> {
  // expected-error @+1 {{'nf.group_norm_grad' op has no CUDA lowering yet}}
  %dx, %ds, %db = nf.group_norm_grad %dy, %x, %m, %r {layout = #nf.layout<nhwc>, num_groups = 4 : i64} : (tensor<?x4x4x16xf32>, tensor<?x4x4x16xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> (tensor<?x4x4x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %dx : tensor<?x4x4x16xf32>
}

// -----

func.func @batch_norm_training_of_dynamic_shape(%x: tensor<?x4x4x16xf16>, %rm: tensor<16xf32>, %rv: tensor<16xf32>) -> tensor<?x4x4x16xf16> {
  // expected-error @+1 {{'nf.batch_norm_training' op has no CUDA lowering yet}}
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x running(%rm, %rv) {layout = #nf.layout<nhwc>} : (tensor<?x4x4x16xf16>, tensor<16xf32>, tensor<16xf32>) -> (tensor<?x4x4x16xf16>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %y : tensor<?x4x4x16xf16>
}

// -----

func.func @group_norm_of_dynamic_shape(%x: tensor<?x64x4x4xf32>) -> tensor<?x64x4x4xf32> {
  // expected-error @+1 {{'nf.group_norm' op has no CUDA lowering yet}}
  %y, %m, %r = nf.group_norm %x {num_groups = 8 : i64} : (tensor<?x64x4x4xf32>) -> (tensor<?x64x4x4xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
  return %y : tensor<?x64x4x4xf32>
}

// -----

func.func @tosa_is_not_lowered(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tosa.add' op cannot run on the CUDA target: only nf ops are lowered to GPU kernels (raise decomposed graphs first with --nf-fuse-pipeline)}}
  %y = tosa.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @matmul_of_dynamic_shape(%a: tensor<?x8xf32>, %b: tensor<8x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'nf.matmul' op has no CUDA lowering yet}}
  %c = nf.matmul %a, %b : tensor<?x8xf32>, tensor<8x4xf32> -> tensor<?x4xf32>
  return %c : tensor<?x4xf32>
}
