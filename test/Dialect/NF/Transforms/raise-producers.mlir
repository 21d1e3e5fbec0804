// RUN: nf-opt %s --nf-test-raise-patterns=families=producers --split-input-file | FileCheck %s

// CHECK-LABEL: func @tosa_matmul_widening_to_f32
//  CHECK-SAME: (%[[A:.*]]: tensor<1x16x32xf16>, %[[B:.*]]: tensor<1x32x8xf16>)
//       CHECK:   %[[C:.*]] = nf.matmul %[[A]], %[[B]] : tensor<1x16x32xf16>, tensor<1x32x8xf16> -> tensor<1x16x8xf32>
//       CHECK:   return %[[C]]
func.func @tosa_matmul_widening_to_f32(%a: tensor<1x16x32xf16>, %b: tensor<1x32x8xf16>) -> tensor<1x16x8xf32> {
  %c = tosa.matmul %a, %b : (tensor<1x16x32xf16>, tensor<1x32x8xf16>) -> tensor<1x16x8xf32>
  return %c : tensor<1x16x8xf32>
}

// -----

// The bias built into tosa.conv2d becomes an nf.bias_add the conv's
// epilogue can fuse.
// CHECK-LABEL: func @tosa_conv2d_is_conv_then_bias
//  CHECK-SAME: (%[[X:.*]]: tensor<2x8x8x4xf32>, %[[W:.*]]: tensor<6x3x3x4xf32>, %[[B:.*]]: tensor<6xf32>)
//       CHECK:   %[[Y:.*]] = nf.conv2d %[[X]], %[[W]] {dilations = array<i64: 1, 2>, layout = #nf.layout<nhwc>, padding = array<i64: 1, 2, 3, 4>, strides = array<i64: 2, 1>}
//  CHECK-SAME:     : tensor<2x8x8x4xf32>, tensor<6x3x3x4xf32> -> tensor<2x5x11x6xf32>
//       CHECK:   %[[Z:.*]] = nf.bias_add %[[Y]], %[[B]] {layout = #nf.layout<nhwc>} : tensor<2x5x11x6xf32>, tensor<6xf32>
//       CHECK:   return %[[Z]]
func.func @tosa_conv2d_is_conv_then_bias(%x: tensor<2x8x8x4xf32>, %w: tensor<6x3x3x4xf32>, %b: tensor<6xf32>) -> tensor<2x5x11x6xf32> {
  %y = tosa.conv2d %x, %w, %b {pad = array<i64: 1, 2, 3, 4>, stride = array<i64: 2, 1>, dilation = array<i64: 1, 2>}
      : (tensor<2x8x8x4xf32>, tensor<6x3x3x4xf32>, tensor<6xf32>) -> tensor<2x5x11x6xf32>
  return %y : tensor<2x5x11x6xf32>
}

// -----

// Integer matmuls are not nf's business.
// CHECK-LABEL: func @integer_matmul_is_left_alone
//   CHECK-NOT:   nf.matmul
//       CHECK:   tosa.matmul
func.func @integer_matmul_is_left_alone(%a: tensor<1x4x4xi16>, %b: tensor<1x4x4xi16>) -> tensor<1x4x4xi48> {
  %c = tosa.matmul %a, %b : (tensor<1x4x4xi16>, tensor<1x4x4xi16>) -> tensor<1x4x4xi48>
  return %c : tensor<1x4x4xi48>
}

// -----

// An f16 bias on an f32 conv result is not a valid nf.bias_add: left alone.
// CHECK-LABEL: func @conv_with_a_narrower_bias_is_left_alone
//   CHECK-NOT:   nf.conv2d
//       CHECK:   tosa.conv2d
func.func @conv_with_a_narrower_bias_is_left_alone(%x: tensor<1x4x4x2xf16>, %w: tensor<3x1x1x2xf16>, %b: tensor<3xf16>) -> tensor<1x4x4x3xf32> {
  %y = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x4x4x2xf16>, tensor<3x1x1x2xf16>, tensor<3xf16>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// TOSA's verifier accepts a result shape the convolution does not have;
// nf.conv2d's would not, so the op is left alone.
// CHECK-LABEL: func @conv_with_a_wrong_result_shape_is_left_alone
//   CHECK-NOT:   nf.conv2d
//       CHECK:   tosa.conv2d
func.func @conv_with_a_wrong_result_shape_is_left_alone(%x: tensor<1x4x4x2xf32>, %w: tensor<3x1x1x2xf32>, %b: tensor<3xf32>) -> tensor<1x5x4x3xf32> {
  %y = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>, tensor<3xf32>) -> tensor<1x5x4x3xf32>
  return %y : tensor<1x5x4x3xf32>
}
