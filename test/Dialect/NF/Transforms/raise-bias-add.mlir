// RUN: nf-opt %s --nf-test-raise-patterns=families=bias-add --split-input-file | FileCheck %s

// TensorFlow's bias after a matmul: the 1-D bias reshaped to 1x1xC. The
// reshape's source is the bias.
// CHECK-LABEL: func @tosa_reshaped_vector_on_last_axis
//  CHECK-SAME: (%[[X:.*]]: tensor<2x16x3072xf32>, %[[B:.*]]: tensor<3072xf32>)
//   CHECK-NOT:   tosa.
//       CHECK:   %[[Y:.*]] = nf.bias_add %[[X]], %[[B]] {layout = #nf.layout<nhwc>} : tensor<2x16x3072xf32>, tensor<3072xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @tosa_reshaped_vector_on_last_axis(%x: tensor<2x16x3072xf32>, %b: tensor<3072xf32>) -> tensor<2x16x3072xf32> {
  %b3 = tosa.reshape %b {new_shape = array<i64: 1, 1, 3072>} : (tensor<3072xf32>) -> tensor<1x1x3072xf32>
  %y = tosa.add %x, %b3 : (tensor<2x16x3072xf32>, tensor<1x1x3072xf32>) -> tensor<2x16x3072xf32>
  return %y : tensor<2x16x3072xf32>
}

// -----

// A 1xCx1x1 bias of an NCHW conv, bias first, f16: a reshape to (C) is
// inserted.
// CHECK-LABEL: func @tosa_nchw_bias_first_f16
//  CHECK-SAME: (%[[X:.*]]: tensor<2x8x5x5xf16>, %[[B:.*]]: tensor<1x8x1x1xf16>)
//       CHECK:   %[[V:.*]] = tosa.reshape %[[B]] {new_shape = array<i64: 8>} : (tensor<1x8x1x1xf16>) -> tensor<8xf16>
//       CHECK:   %[[Y:.*]] = nf.bias_add %[[X]], %[[V]] {layout = #nf.layout<nchw>} : tensor<2x8x5x5xf16>, tensor<8xf16>
//  CHECK-NEXT:   return %[[Y]]
func.func @tosa_nchw_bias_first_f16(%x: tensor<2x8x5x5xf16>, %b: tensor<1x8x1x1xf16>) -> tensor<2x8x5x5xf16> {
  %y = tosa.add %b, %x : (tensor<1x8x1x1xf16>, tensor<2x8x5x5xf16>) -> tensor<2x8x5x5xf16>
  return %y : tensor<2x8x5x5xf16>
}

// -----

// Rank 2 (a matmul output): dimension 1 is the channel, named nhwc.
// CHECK-LABEL: func @tosa_rank2_bias_is_nhwc
//  CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>, %[[B:.*]]: tensor<1x16xf32>)
//       CHECK:   %[[V:.*]] = tosa.reshape %[[B]] {new_shape = array<i64: 16>}
//       CHECK:   nf.bias_add %[[X]], %[[V]] {layout = #nf.layout<nhwc>} : tensor<4x16xf32>, tensor<16xf32>
func.func @tosa_rank2_bias_is_nhwc(%x: tensor<4x16xf32>, %b: tensor<1x16xf32>) -> tensor<4x16xf32> {
  %y = tosa.add %x, %b : (tensor<4x16xf32>, tensor<1x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// TOSA broadcasts a lower-rank operand numpy-style: a 1-D bias is the
// last axis.
// CHECK-LABEL: func @tosa_lower_rank_vector
//  CHECK-SAME: (%[[X:.*]]: tensor<4x3072xf32>, %[[B:.*]]: tensor<3072xf32>)
//       CHECK:   nf.bias_add %[[X]], %[[B]] {layout = #nf.layout<nhwc>} : tensor<4x3072xf32>, tensor<3072xf32>
func.func @tosa_lower_rank_vector(%x: tensor<4x3072xf32>, %b: tensor<3072xf32>) -> tensor<4x3072xf32> {
  %y = tosa.add %x, %b : (tensor<4x3072xf32>, tensor<3072xf32>) -> tensor<4x3072xf32>
  return %y : tensor<4x3072xf32>
}

// -----

// One row: x and the reshaped bias share a type, but the operand visibly
// is a vector.
// CHECK-LABEL: func @tosa_one_row_reshaped_vector
//  CHECK-SAME: (%[[X:.*]]: tensor<1x64xf32>, %[[B:.*]]: tensor<64xf32>)
//       CHECK:   nf.bias_add %[[X]], %[[B]] {layout = #nf.layout<nhwc>} : tensor<1x64xf32>, tensor<64xf32>
func.func @tosa_one_row_reshaped_vector(%x: tensor<1x64xf32>, %b: tensor<64xf32>) -> tensor<1x64xf32> {
  %b2 = tosa.reshape %b {new_shape = array<i64: 1, 64>} : (tensor<64xf32>) -> tensor<1x64xf32>
  %y = tosa.add %b2, %x : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

// -----

// arith.addf does not broadcast: the bias arrives through linalg.broadcast
// (here along dimension 1, NCHW).
// CHECK-LABEL: func @arith_addf_of_linalg_broadcast_nchw
//  CHECK-SAME: (%[[X:.*]]: tensor<2x8x4x4xf32>, %[[B:.*]]: tensor<8xf32>)
//   CHECK-NOT:   linalg.broadcast
//       CHECK:   %[[Y:.*]] = nf.bias_add %[[X]], %[[B]] {layout = #nf.layout<nchw>} : tensor<2x8x4x4xf32>, tensor<8xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @arith_addf_of_linalg_broadcast_nchw(%x: tensor<2x8x4x4xf32>, %b: tensor<8xf32>) -> tensor<2x8x4x4xf32> {
  %init = tensor.empty() : tensor<2x8x4x4xf32>
  %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%init : tensor<2x8x4x4xf32>) dimensions = [0, 2, 3]
  %y = arith.addf %x, %bb : tensor<2x8x4x4xf32>
  return %y : tensor<2x8x4x4xf32>
}

// -----

// nf.add of a broadcast along the last axis, bf16.
// CHECK-LABEL: func @nf_add_of_linalg_broadcast_bf16
//  CHECK-SAME: (%[[X:.*]]: tensor<4x6x32xbf16>, %[[B:.*]]: tensor<32xbf16>)
//       CHECK:   nf.bias_add %[[X]], %[[B]] {layout = #nf.layout<nhwc>} : tensor<4x6x32xbf16>, tensor<32xbf16>
func.func @nf_add_of_linalg_broadcast_bf16(%x: tensor<4x6x32xbf16>, %b: tensor<32xbf16>) -> tensor<4x6x32xbf16> {
  %init = tensor.empty() : tensor<4x6x32xbf16>
  %bb = linalg.broadcast ins(%b : tensor<32xbf16>) outs(%init : tensor<4x6x32xbf16>) dimensions = [0, 1]
  %y = nf.add %bb, %x : tensor<4x6x32xbf16>
  return %y : tensor<4x6x32xbf16>
}

// -----

// arith.addf of a one-row x and an expand_shape of the vector.
// CHECK-LABEL: func @arith_addf_of_expanded_vector
//  CHECK-SAME: (%[[X:.*]]: tensor<1x16xf32>, %[[B:.*]]: tensor<16xf32>)
//   CHECK-NOT:   tensor.expand_shape
//       CHECK:   nf.bias_add %[[X]], %[[B]] {layout = #nf.layout<nhwc>} : tensor<1x16xf32>, tensor<16xf32>
func.func @arith_addf_of_expanded_vector(%x: tensor<1x16xf32>, %b: tensor<16xf32>) -> tensor<1x16xf32> {
  %b2 = tensor.expand_shape %b [[0, 1]] output_shape [1, 16] : tensor<16xf32> into tensor<1x16xf32>
  %y = arith.addf %x, %b2 : tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}

// -----

// Two full-shape tensors: a residual add, not a bias.
// CHECK-LABEL: func @full_shape_add_is_not_a_bias
//   CHECK-NOT:   nf.bias_add
//       CHECK:   %[[Y:.*]] = tosa.add
//       CHECK:   return %[[Y]]
func.func @full_shape_add_is_not_a_bias(%x: tensor<4x16xf32>, %r: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = tosa.add %x, %r : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A bias along a middle axis (dimension 2 of 4) has no layout.
// CHECK-LABEL: func @middle_axis_is_not_a_bias
//   CHECK-NOT:   nf.bias_add
//       CHECK:   %[[Y:.*]] = tosa.add
//       CHECK:   return %[[Y]]
func.func @middle_axis_is_not_a_bias(%x: tensor<2x4x8x16xf32>, %b: tensor<1x1x8x1xf32>) -> tensor<2x4x8x16xf32> {
  %y = tosa.add %x, %b : (tensor<2x4x8x16xf32>, tensor<1x1x8x1xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// Dimension 0 of a rank-2 tensor is not a channel axis.
// CHECK-LABEL: func @row_vector_axis_zero_is_not_a_bias
//   CHECK-NOT:   nf.bias_add
//       CHECK:   %[[Y:.*]] = tosa.add
//       CHECK:   return %[[Y]]
func.func @row_vector_axis_zero_is_not_a_bias(%x: tensor<4x16xf32>, %b: tensor<4x1xf32>) -> tensor<4x16xf32> {
  %y = tosa.add %x, %b : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A 1x8x16 operand varies along two axes: not a per-channel vector.
// CHECK-LABEL: func @bias_along_two_axes_is_not_a_bias
//   CHECK-NOT:   nf.bias_add
//       CHECK:   %[[Y:.*]] = tosa.add
//       CHECK:   return %[[Y]]
func.func @bias_along_two_axes_is_not_a_bias(%x: tensor<2x8x16xf32>, %b: tensor<1x8x16xf32>) -> tensor<2x8x16xf32> {
  %y = tosa.add %x, %b : (tensor<2x8x16xf32>, tensor<1x8x16xf32>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// A splat is a scalar add (and the "1 +" of GELU chains): left alone.
// CHECK-LABEL: func @splat_constant_is_not_a_bias
//   CHECK-NOT:   nf.bias_add
//       CHECK:   %[[Y:.*]] = tosa.add
//       CHECK:   return %[[Y]]
func.func @splat_constant_is_not_a_bias(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c = "tosa.const"() {value = dense<1.0> : tensor<1x16xf32>} : () -> tensor<1x16xf32>
  %y = tosa.add %x, %c : (tensor<4x16xf32>, tensor<1x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// The broadcast bias is also returned: the add stays.
// CHECK-LABEL: func @broadcast_with_another_user_is_kept
//   CHECK-NOT:   nf.bias_add
//       CHECK:   %[[BB:.*]] = linalg.broadcast
//       CHECK:   %[[Y:.*]] = arith.addf
//       CHECK:   return %[[Y]], %[[BB]]
func.func @broadcast_with_another_user_is_kept(%x: tensor<4x16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %init = tensor.empty() : tensor<4x16xf32>
  %bb = linalg.broadcast ins(%b : tensor<16xf32>) outs(%init : tensor<4x16xf32>) dimensions = [0]
  %y = arith.addf %x, %bb : tensor<4x16xf32>
  return %y, %bb : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// x itself broadcast (1x16 to 4x16) is not x + bias.
// CHECK-LABEL: func @broadcast_input_is_not_a_bias
//   CHECK-NOT:   nf.bias_add
//       CHECK:   %[[Y:.*]] = tosa.add
//       CHECK:   return %[[Y]]
func.func @broadcast_input_is_not_a_bias(%x: tensor<1x16xf32>, %b: tensor<4x1xf32>) -> tensor<4x16xf32> {
  %y = tosa.add %x, %b : (tensor<1x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
