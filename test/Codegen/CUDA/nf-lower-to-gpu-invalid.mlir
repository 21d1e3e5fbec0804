// What nf-lower-to-gpu refuses, each with a message at the op.
// RUN: nf-opt %s --nf-lower-to-gpu -split-input-file -verify-diagnostics
// RUN: not nf-opt %s --nf-lower-to-gpu=arch=sm_70 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not nf-opt %s --nf-lower-to-gpu=row-norm-schedule=tiles 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not nf-opt %s --nf-lower-to-gpu=row-norm-schedule=auto:full 2>&1 | FileCheck %s --check-prefix=FULL
// ARCH: nf-lower-to-gpu: GPU target 'sm_70': architectures before sm_75 are not supported
// SCHEDULE: nf-lower-to-gpu: unknown row-norm schedule 'tiles'
// FULL: nf-lower-to-gpu: unknown row-norm schedule 'auto:full' ({{.*}}, cluster-row, each optionally with ':full')

// TOSA ops and arith/math ops on tensors run as linalg kernels
// (nf-lower-to-gpu-linalg.mlir); what has no kernel yet is refused at the
// op, with the reason: 4-bit integers, a pad of sizes known only at run
// time.
func.func @integers_without_a_c_type_are_not_lowered(%x: tensor<4xi4>) -> tensor<4xi4> {
  // expected-error @+1 {{'linalg.generic' op cannot run on the CUDA target: it has i4 elements (the CUDA target takes float, bool and 8- to 64-bit integer tensors)}}
  %y = arith.addi %x, %x : tensor<4xi4>
  return %y : tensor<4xi4>
}

// -----

// A pad whose sizes are known only at run time (a pad of constant sizes
// is a kernel, its value a constant or read from a tensor:
// nf-lower-to-gpu-linalg.mlir).
func.func @pad_sizes_are_not_constants(%x: tensor<4xf32>, %p: tensor<1x2xi32>) -> tensor<?xf32> {
  %v = "tosa.const"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  // expected-error @+1 {{'tensor.extract' op cannot run on the CUDA target: no GPU kernel computes it yet}}
  %y = tosa.pad %x, %p, %v : (tensor<4xf32>, tensor<1x2xi32>, tensor<f32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}
