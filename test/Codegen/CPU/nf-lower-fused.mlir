// On the CPU an nf.fused runs as its ops in order: the region is inlined
// with its block arguments replaced by the fused op's inputs, and its yield
// values replace the fused op's results.
// RUN: nf-opt %s --pass-pipeline='builtin.module(func.func(nf-lower-to-loops{vector-width=4}))' | FileCheck %s

// CHECK-LABEL: func.func @layer_norm_bias_relu
// CHECK-SAME: (%[[X:.+]]: tensor<3x8xf32>, %[[C:.+]]: tensor<8xf32>)
// CHECK-NOT: nf.
// CHECK: bufferization.to_memref %[[X]] read_only
// CHECK: %[[LN:.+]] = bufferization.to_tensor
// CHECK: %[[MEAN:.+]] = bufferization.to_tensor
// CHECK: %[[RSTD:.+]] = bufferization.to_tensor
// CHECK: bufferization.to_memref %[[LN]] read_only
// CHECK: bufferization.to_memref %[[C]] read_only
// CHECK: %[[BIAS:.+]] = bufferization.to_tensor
// CHECK: bufferization.to_memref %[[BIAS]] read_only
// CHECK: %[[RELU:.+]] = bufferization.to_tensor
// CHECK-NOT: nf.
// CHECK: return %[[RELU]], %[[MEAN]]
func.func @layer_norm_bias_relu(%x: tensor<3x8xf32>, %c: tensor<8xf32>) -> (tensor<3x8xf32>, tensor<3x1xf32>) {
  %0:2 = nf.fused (%x, %c) : (tensor<3x8xf32>, tensor<8xf32>) -> (tensor<3x8xf32>, tensor<3x1xf32>) {
  ^bb0(%a: tensor<3x8xf32>, %bias: tensor<8xf32>):
    %1:3 = nf.layer_norm %a {axis = 1 : i64} : (tensor<3x8xf32>) -> (tensor<3x8xf32>, tensor<3x1xf32>, tensor<3x1xf32>)
    %2 = nf.bias_add %1#0, %bias {layout = #nf.layout<nhwc>} : tensor<3x8xf32>, tensor<8xf32>
    %3 = nf.relu %2 : tensor<3x8xf32>
    nf.yield %3, %1#1 : tensor<3x8xf32>, tensor<3x1xf32>
  }
  return %0#0, %0#1 : tensor<3x8xf32>, tensor<3x1xf32>
}
