// RUN: nf-opt %s --nf-raise --split-input-file | FileCheck %s

// A TensorFlow-style MLP epilogue: tosa.matmul, the bias reshaped to
// 1x1xC and added, then GELU (tanh form) with x^3 as pow(x, 3): one nf op
// each.
// CHECK-LABEL: func @tf_mlp_epilogue_bias_gelu_tanh
//  CHECK-SAME: (%[[A:.*]]: tensor<1x8x16xf32>, %[[W:.*]]: tensor<1x16x32xf32>, %[[B:.*]]: tensor<32xf32>)
//       CHECK:   %[[H:.*]] = nf.matmul %[[A]], %[[W]]
//  CHECK-NEXT:   %[[HB:.*]] = nf.bias_add %[[H]], %[[B]] {layout = #nf.layout<nhwc>} : tensor<1x8x32xf32>, tensor<32xf32>
//  CHECK-NEXT:   %[[Y:.*]] = nf.gelu %[[HB]] {approximate = #nf.approximation<tanh>} : tensor<1x8x32xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @tf_mlp_epilogue_bias_gelu_tanh(%a: tensor<1x8x16xf32>, %w: tensor<1x16x32xf32>, %b: tensor<32xf32>) -> tensor<1x8x32xf32> {
  %h = tosa.matmul %a, %w : (tensor<1x8x16xf32>, tensor<1x16x32xf32>) -> tensor<1x8x32xf32>
  %b3 = tosa.reshape %b {new_shape = array<i64: 1, 1, 32>} : (tensor<32xf32>) -> tensor<1x1x32xf32>
  %x = tosa.add %h, %b3 : (tensor<1x8x32xf32>, tensor<1x1x32xf32>) -> tensor<1x8x32xf32>
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %three = "tosa.const"() {value = dense<3.0> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %k = "tosa.const"() {value = dense<0.044715> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %s = "tosa.const"() {value = dense<0.797884583> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %x3 = tosa.pow %x, %three : (tensor<1x8x32xf32>, tensor<1x1x1xf32>) -> tensor<1x8x32xf32>
  %kx3 = tosa.mul %k, %x3 {shift = 0 : i8} : (tensor<1x1x1xf32>, tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  %inner = tosa.add %x, %kx3 : (tensor<1x8x32xf32>, tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  %arg = tosa.mul %s, %inner {shift = 0 : i8} : (tensor<1x1x1xf32>, tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  %t = tosa.tanh %arg : (tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  %onet = tosa.add %one, %t : (tensor<1x1x1xf32>, tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  %hx = tosa.mul %half, %x {shift = 0 : i8} : (tensor<1x1x1xf32>, tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  %y = tosa.mul %hx, %onet {shift = 0 : i8} : (tensor<1x8x32xf32>, tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  return %y : tensor<1x8x32xf32>
}

// -----

// The same epilogue on a rank-2 matmul output passed in, f16, x^3 as x*x*x.
// CHECK-LABEL: func @mlp_epilogue_from_argument_f16
//  CHECK-SAME: (%[[H:.*]]: tensor<8x32xf16>, %[[B:.*]]: tensor<32xf16>)
//       CHECK:   %[[HB:.*]] = nf.bias_add %[[H]], %[[B]] {layout = #nf.layout<nhwc>} : tensor<8x32xf16>, tensor<32xf16>
//  CHECK-NEXT:   %[[Y:.*]] = nf.gelu %[[HB]] {approximate = #nf.approximation<tanh>} : tensor<8x32xf16>
//  CHECK-NEXT:   return %[[Y]]
func.func @mlp_epilogue_from_argument_f16(%h: tensor<8x32xf16>, %b: tensor<32xf16>) -> tensor<8x32xf16> {
  %b2 = tosa.reshape %b {new_shape = array<i64: 1, 32>} : (tensor<32xf16>) -> tensor<1x32xf16>
  %x = tosa.add %b2, %h : (tensor<1x32xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf16>} : () -> tensor<1x1xf16>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf16>} : () -> tensor<1x1xf16>
  %k = "tosa.const"() {value = dense<0.044715> : tensor<1x1xf16>} : () -> tensor<1x1xf16>
  %s = "tosa.const"() {value = dense<0.797884583> : tensor<1x1xf16>} : () -> tensor<1x1xf16>
  %x2 = tosa.mul %x, %x {shift = 0 : i8} : (tensor<8x32xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
  %x3 = tosa.mul %x2, %x {shift = 0 : i8} : (tensor<8x32xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
  %kx3 = tosa.mul %k, %x3 {shift = 0 : i8} : (tensor<1x1xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
  %inner = tosa.add %x, %kx3 : (tensor<8x32xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
  %arg = tosa.mul %s, %inner {shift = 0 : i8} : (tensor<1x1xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
  %t = tosa.tanh %arg : (tensor<8x32xf16>) -> tensor<8x32xf16>
  %onet = tosa.add %one, %t : (tensor<1x1xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
  %hx = tosa.mul %half, %x {shift = 0 : i8} : (tensor<1x1xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
  %y = tosa.mul %hx, %onet {shift = 0 : i8} : (tensor<8x32xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
  return %y : tensor<8x32xf16>
}
