// What nf-lower-to-gpu refuses, each with a message at the op.
// RUN: nf-opt %s --nf-lower-to-gpu -split-input-file -verify-diagnostics
// RUN: not nf-opt %s --nf-lower-to-gpu=arch=sm_70 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not nf-opt %s --nf-lower-to-gpu=row-norm-schedule=tiles 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// ARCH: nf-lower-to-gpu: unknown GPU architecture 'sm_70' (expected sm_XY or compute_XY, 75 or newer)
// SCHEDULE: nf-lower-to-gpu: unknown row-norm schedule 'tiles'

func.func @tosa_is_not_lowered(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tosa.add' op cannot run on the CUDA target: only nf ops are lowered to GPU kernels (raise decomposed graphs first with --nf-fuse-pipeline)}}
  %y = tosa.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Elementwise arith and math on tensors (ONNX's Div and Sqrt as the
// importer writes them) are refused alike, not left unbufferized.
func.func @tensor_arith_is_not_lowered(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.divf' op cannot run on the CUDA target: only nf ops are lowered to GPU kernels (raise decomposed graphs first with --nf-fuse-pipeline)}}
  %y = arith.divf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @tensor_math_is_not_lowered(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'math.sqrt' op cannot run on the CUDA target: only nf ops are lowered to GPU kernels (raise decomposed graphs first with --nf-fuse-pipeline)}}
  %y = math.sqrt %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
