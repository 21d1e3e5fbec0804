// RUN: nf-opt %s --nf-fuse-pipeline | FileCheck %s

// ONNX's LayerNormalization function body (opset 17, axis 1 of a 2x3x5
// input) as normfuse.onnx imports it: flattened to 2x15, the one-pass
// variance, Div by the standard deviation as its reciprocal times, and a
// second reciprocal of the same standard deviation for the InvStdDev
// output. CSE before raising makes the two reciprocals one; the chain is
// raised to one nf.layer_norm whose mean and rstd are the Mean and
// InvStdDev outputs.
// CHECK-LABEL: func.func @onnx_layer_norm_function_body
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x5xf32>, %[[G:.*]]: tensor<3x5xf32>, %[[B:.*]]: tensor<3x5xf32>)
//       CHECK:   %[[X2:.*]] = tosa.reshape %[[X]] {new_shape = array<i64: 2, 15>}
//       CHECK:   %[[Y:.*]], %[[MEAN:.*]], %[[RSTD:.*]] = nf.layer_norm %[[X2]] scale %{{.*}} bias %{{.*}} {axis = 1 : i64, epsilon = 0.10000000149011612 : f64}
//   CHECK-NOT:   tosa.reduce_sum
//   CHECK-NOT:   math.sqrt
//   CHECK-NOT:   tosa.reciprocal
//       CHECK:   %[[Y3:.*]] = tosa.reshape %[[Y]] {new_shape = array<i64: 2, 3, 5>}
//       CHECK:   %[[M3:.*]] = tosa.reshape %[[MEAN]] {new_shape = array<i64: 2, 1, 1>}
//       CHECK:   %[[R3:.*]] = tosa.reshape %[[RSTD]] {new_shape = array<i64: 2, 1, 1>}
//       CHECK:   return %[[Y3]], %[[M3]], %[[R3]]
func.func @onnx_layer_norm_function_body(%arg0: tensor<2x3x5xf32>, %arg1: tensor<3x5xf32>, %arg2: tensor<3x5xf32>) -> (tensor<2x3x5xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) {
  %0 = "tosa.reshape"(%arg0) {new_shape = array<i64: 2, 15>} : (tensor<2x3x5xf32>) -> tensor<2x15xf32>
  %1 = "tosa.reduce_sum"(%0) {axis = 1 : i32} : (tensor<2x15xf32>) -> tensor<2x1xf32>
  %2 = "tosa.const"() {value = dense<0x3D888889> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %3 = "tosa.mul"(%1, %2) {shift = 0 : i8} : (tensor<2x1xf32>, tensor<1x1xf32>) -> tensor<2x1xf32>
  %4 = "tosa.mul"(%0, %0) {shift = 0 : i8} : (tensor<2x15xf32>, tensor<2x15xf32>) -> tensor<2x15xf32>
  %5 = "tosa.reduce_sum"(%4) {axis = 1 : i32} : (tensor<2x15xf32>) -> tensor<2x1xf32>
  %6 = "tosa.mul"(%5, %2) {shift = 0 : i8} : (tensor<2x1xf32>, tensor<1x1xf32>) -> tensor<2x1xf32>
  %7 = "tosa.mul"(%3, %3) {shift = 0 : i8} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %8 = "tosa.sub"(%6, %7) : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %9 = "tosa.const"() {value = dense<0x3DCCCCCD> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %10 = "tosa.add"(%8, %9) : (tensor<2x1xf32>, tensor<1x1xf32>) -> tensor<2x1xf32>
  %11 = "math.sqrt"(%10) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %12 = "tosa.sub"(%0, %3) : (tensor<2x15xf32>, tensor<2x1xf32>) -> tensor<2x15xf32>
  %13 = "tosa.reciprocal"(%11) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %14 = "tosa.mul"(%12, %13) {shift = 0 : i8} : (tensor<2x15xf32>, tensor<2x1xf32>) -> tensor<2x15xf32>
  %15 = "tosa.reshape"(%arg1) {new_shape = array<i64: 1, 15>} : (tensor<3x5xf32>) -> tensor<1x15xf32>
  %16 = "tosa.mul"(%14, %15) {shift = 0 : i8} : (tensor<2x15xf32>, tensor<1x15xf32>) -> tensor<2x15xf32>
  %17 = "tosa.reshape"(%arg2) {new_shape = array<i64: 1, 15>} : (tensor<3x5xf32>) -> tensor<1x15xf32>
  %18 = "tosa.add"(%16, %17) : (tensor<2x15xf32>, tensor<1x15xf32>) -> tensor<2x15xf32>
  %19 = "tosa.reshape"(%18) {new_shape = array<i64: 2, 3, 5>} : (tensor<2x15xf32>) -> tensor<2x3x5xf32>
  %20 = "tosa.reciprocal"(%11) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %21 = "tosa.reshape"(%3) {new_shape = array<i64: 2, 1, 1>} : (tensor<2x1xf32>) -> tensor<2x1x1xf32>
  %22 = "tosa.reshape"(%20) {new_shape = array<i64: 2, 1, 1>} : (tensor<2x1xf32>) -> tensor<2x1x1xf32>
  return %19, %21, %22 : tensor<2x3x5xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>
}

