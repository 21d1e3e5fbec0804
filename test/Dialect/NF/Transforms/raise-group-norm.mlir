// RUN: nf-opt %s --nf-test-raise-patterns=families=group-norm --split-input-file | FileCheck %s

// GroupNorm(4 groups) on NCHW: reshape (N, C, H, W) -> (N, G, C/G, H, W),
// the LayerNorm chain over the last three axes, reshape back, per-channel
// scale (reshaped from 1-D: the source is reused) and shift (1xCx1x1: a
// reshape to 1-D is inserted).
// CHECK-LABEL: func @nchw_five_d_with_scale_and_shift
//  CHECK-SAME: (%[[X:.*]]: tensor<2x8x4x4xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<1x8x1x1xf32>)
//   CHECK-NOT:   tosa.reduce_sum
//       CHECK:   %[[B1:.*]] = tosa.reshape %[[B]] {new_shape = array<i64: 8>} : (tensor<1x8x1x1xf32>) -> tensor<8xf32>
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.group_norm %[[X]] scale %[[G]] bias %[[B1]] {epsilon = 9.9999997473787516E-6 : f64, num_groups = 4 : i64}
//  CHECK-SAME:     : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x4x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
//   CHECK-NOT:   tosa.
//       CHECK:   return %[[Y]]
func.func @nchw_five_d_with_scale_and_shift(%x: tensor<2x8x4x4xf32>, %g: tensor<8xf32>, %b: tensor<1x8x1x1xf32>) -> tensor<2x8x4x4xf32> {
  %inv_n = "tosa.const"() {value = dense<0.03125> : tensor<1x1x1x1x1xf32>} : () -> tensor<1x1x1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1x1x1xf32>} : () -> tensor<1x1x1x1x1xf32>
  %xg = tosa.reshape %x {new_shape = array<i64: 2, 4, 2, 4, 4>} : (tensor<2x8x4x4xf32>) -> tensor<2x4x2x4x4xf32>
  %s0 = tosa.reduce_sum %xg {axis = 4 : i32} : (tensor<2x4x2x4x4xf32>) -> tensor<2x4x2x4x1xf32>
  %s1 = tosa.reduce_sum %s0 {axis = 3 : i32} : (tensor<2x4x2x4x1xf32>) -> tensor<2x4x2x1x1xf32>
  %sum = tosa.reduce_sum %s1 {axis = 2 : i32} : (tensor<2x4x2x1x1xf32>) -> tensor<2x4x1x1x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x4x1x1x1xf32>, tensor<1x1x1x1x1xf32>) -> tensor<2x4x1x1x1xf32>
  %d = tosa.sub %xg, %mean : (tensor<2x4x2x4x4xf32>, tensor<2x4x1x1x1xf32>) -> tensor<2x4x2x4x4xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x4x2x4x4xf32>, tensor<2x4x2x4x4xf32>) -> tensor<2x4x2x4x4xf32>
  %q0 = tosa.reduce_sum %sq {axis = 4 : i32} : (tensor<2x4x2x4x4xf32>) -> tensor<2x4x2x4x1xf32>
  %q1 = tosa.reduce_sum %q0 {axis = 3 : i32} : (tensor<2x4x2x4x1xf32>) -> tensor<2x4x2x1x1xf32>
  %sqsum = tosa.reduce_sum %q1 {axis = 2 : i32} : (tensor<2x4x2x1x1xf32>) -> tensor<2x4x1x1x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x4x1x1x1xf32>, tensor<1x1x1x1x1xf32>) -> tensor<2x4x1x1x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x4x1x1x1xf32>, tensor<1x1x1x1x1xf32>) -> tensor<2x4x1x1x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x4x1x1x1xf32>) -> tensor<2x4x1x1x1xf32>
  %yg = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x4x2x4x4xf32>, tensor<2x4x1x1x1xf32>) -> tensor<2x4x2x4x4xf32>
  %y = tosa.reshape %yg {new_shape = array<i64: 2, 8, 4, 4>} : (tensor<2x4x2x4x4xf32>) -> tensor<2x8x4x4xf32>
  %g4 = tosa.reshape %g {new_shape = array<i64: 1, 8, 1, 1>} : (tensor<8xf32>) -> tensor<1x8x1x1xf32>
  %ys = tosa.mul %y, %g4 {shift = 0 : i8} : (tensor<2x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<2x8x4x4xf32>
  %yb = tosa.add %ys, %b : (tensor<2x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<2x8x4x4xf32>
  return %yb : tensor<2x8x4x4xf32>
}

// -----

// PyTorch's form: reshape to (N, G, -1) = (N, G, C/G * H * W), one
// reduce_sum; f16, no affine parameters; 1/sqrt as tosa.reciprocal of
// math.sqrt.
// CHECK-LABEL: func @nchw_flattened_groups_f16
//  CHECK-SAME: (%[[X:.*]]: tensor<2x6x2x2xf16>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.group_norm %[[X]] {epsilon = 1.0013580322265625E-5 : f64, num_groups = 3 : i64}
//  CHECK-SAME:     : (tensor<2x6x2x2xf16>) -> (tensor<2x6x2x2xf16>, tensor<2x3xf32>, tensor<2x3xf32>)
//   CHECK-NOT:   tosa.
//       CHECK:   return %[[Y]]
func.func @nchw_flattened_groups_f16(%x: tensor<2x6x2x2xf16>) -> tensor<2x6x2x2xf16> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1x1xf16>} : () -> tensor<1x1x1xf16>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1xf16>} : () -> tensor<1x1x1xf16>
  %xg = tosa.reshape %x {new_shape = array<i64: 2, 3, 8>} : (tensor<2x6x2x2xf16>) -> tensor<2x3x8xf16>
  %sum = tosa.reduce_sum %xg {axis = 2 : i32} : (tensor<2x3x8xf16>) -> tensor<2x3x1xf16>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x3x1xf16>, tensor<1x1x1xf16>) -> tensor<2x3x1xf16>
  %d = tosa.sub %xg, %mean : (tensor<2x3x8xf16>, tensor<2x3x1xf16>) -> tensor<2x3x8xf16>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x3x8xf16>, tensor<2x3x8xf16>) -> tensor<2x3x8xf16>
  %sqsum = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x3x8xf16>) -> tensor<2x3x1xf16>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x3x1xf16>, tensor<1x1x1xf16>) -> tensor<2x3x1xf16>
  %ve = tosa.add %var, %eps : (tensor<2x3x1xf16>, tensor<1x1x1xf16>) -> tensor<2x3x1xf16>
  %std = math.sqrt %ve : tensor<2x3x1xf16>
  %r = tosa.reciprocal %std : (tensor<2x3x1xf16>) -> tensor<2x3x1xf16>
  %yg = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x3x8xf16>, tensor<2x3x1xf16>) -> tensor<2x3x8xf16>
  %y = tosa.reshape %yg {new_shape = array<i64: 2, 6, 2, 2>} : (tensor<2x3x8xf16>) -> tensor<2x6x2x2xf16>
  return %y : tensor<2x6x2x2xf16>
}

// -----

// GroupNorm on NHWC: reshape (N, H, W, C) -> (N, H, W, G, C/G), the chain
// over H, W and C/G (not trailing), reshape back; a 1-D scale (TOSA
// broadcasts by rank) and a 1x1x1xC shift.
// CHECK-LABEL: func @nhwc_with_scale_and_shift
//  CHECK-SAME: (%[[X:.*]]: tensor<2x2x2x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<1x1x1x8xf32>)
//       CHECK:   %[[B1:.*]] = tosa.reshape %[[B]] {new_shape = array<i64: 8>}
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.group_norm %[[X]] scale %[[G]] bias %[[B1]] {epsilon = 9.9999997473787516E-6 : f64, layout = #nf.layout<nhwc>, num_groups = 4 : i64}
//  CHECK-SAME:     : (tensor<2x2x2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x2x2x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
//   CHECK-NOT:   tosa.
//       CHECK:   return %[[Y]]
func.func @nhwc_with_scale_and_shift(%x: tensor<2x2x2x8xf32>, %g: tensor<8xf32>, %b: tensor<1x1x1x8xf32>) -> tensor<2x2x2x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1x1x1x1xf32>} : () -> tensor<1x1x1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1x1x1xf32>} : () -> tensor<1x1x1x1x1xf32>
  %xg = tosa.reshape %x {new_shape = array<i64: 2, 2, 2, 4, 2>} : (tensor<2x2x2x8xf32>) -> tensor<2x2x2x4x2xf32>
  %s0 = tosa.reduce_sum %xg {axis = 4 : i32} : (tensor<2x2x2x4x2xf32>) -> tensor<2x2x2x4x1xf32>
  %s1 = tosa.reduce_sum %s0 {axis = 2 : i32} : (tensor<2x2x2x4x1xf32>) -> tensor<2x2x1x4x1xf32>
  %sum = tosa.reduce_sum %s1 {axis = 1 : i32} : (tensor<2x2x1x4x1xf32>) -> tensor<2x1x1x4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x1x1x4x1xf32>, tensor<1x1x1x1x1xf32>) -> tensor<2x1x1x4x1xf32>
  %d = tosa.sub %xg, %mean : (tensor<2x2x2x4x2xf32>, tensor<2x1x1x4x1xf32>) -> tensor<2x2x2x4x2xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x2x2x4x2xf32>, tensor<2x2x2x4x2xf32>) -> tensor<2x2x2x4x2xf32>
  %q0 = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<2x2x2x4x2xf32>) -> tensor<2x1x2x4x2xf32>
  %q1 = tosa.reduce_sum %q0 {axis = 2 : i32} : (tensor<2x1x2x4x2xf32>) -> tensor<2x1x1x4x2xf32>
  %sqsum = tosa.reduce_sum %q1 {axis = 4 : i32} : (tensor<2x1x1x4x2xf32>) -> tensor<2x1x1x4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x1x1x4x1xf32>, tensor<1x1x1x1x1xf32>) -> tensor<2x1x1x4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x1x1x4x1xf32>, tensor<1x1x1x1x1xf32>) -> tensor<2x1x1x4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x1x1x4x1xf32>) -> tensor<2x1x1x4x1xf32>
  %yg = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x2x2x4x2xf32>, tensor<2x1x1x4x1xf32>) -> tensor<2x2x2x4x2xf32>
  %y = tosa.reshape %yg {new_shape = array<i64: 2, 2, 2, 8>} : (tensor<2x2x2x4x2xf32>) -> tensor<2x2x2x8xf32>
  %ys = tosa.mul %y, %g {shift = 0 : i8} : (tensor<2x2x2x8xf32>, tensor<8xf32>) -> tensor<2x2x2x8xf32>
  %yb = tosa.add %b, %ys : (tensor<1x1x1x8xf32>, tensor<2x2x2x8xf32>) -> tensor<2x2x2x8xf32>
  return %yb : tensor<2x2x2x8xf32>
}

// -----

// The f32 mean of each group is also returned: the nf op's (N, G) mean,
// reshaped to (N, G, 1), takes that use.
// CHECK-LABEL: func @group_mean_exported
//  CHECK-SAME: (%[[X:.*]]: tensor<2x4x3xf32>)
//       CHECK:   %[[Y:.+]], %[[MEAN:.+]], %{{.+}} = nf.group_norm %[[X]] {epsilon = 9.9999997473787516E-6 : f64, num_groups = 2 : i64}
//       CHECK:   %[[M:.*]] = tosa.reshape %[[MEAN]] {new_shape = array<i64: 2, 2, 1>} : (tensor<2x2xf32>) -> tensor<2x2x1xf32>
//       CHECK:   return %[[Y]], %[[M]]
func.func @group_mean_exported(%x: tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x2x1xf32>) {
  %inv_n = "tosa.const"() {value = dense<0.166666672> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %xg = tosa.reshape %x {new_shape = array<i64: 2, 2, 6>} : (tensor<2x4x3xf32>) -> tensor<2x2x6xf32>
  %sum = tosa.reduce_sum %xg {axis = 2 : i32} : (tensor<2x2x6xf32>) -> tensor<2x2x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %d = tosa.sub %xg, %mean : (tensor<2x2x6xf32>, tensor<2x2x1xf32>) -> tensor<2x2x6xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x2x6xf32>, tensor<2x2x6xf32>) -> tensor<2x2x6xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x2x6xf32>) -> tensor<2x2x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
  %yg = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x2x6xf32>, tensor<2x2x1xf32>) -> tensor<2x2x6xf32>
  %y = tosa.reshape %yg {new_shape = array<i64: 2, 4, 3>} : (tensor<2x2x6xf32>) -> tensor<2x4x3xf32>
  return %y, %mean : tensor<2x4x3xf32>, tensor<2x2x1xf32>
}

// -----

// The group split as tensor.expand_shape and undone by
// tensor.collapse_shape (any row-major reshape will do).
// CHECK-LABEL: func @tensor_expand_and_collapse_shape
//  CHECK-SAME: (%[[X:.*]]: tensor<2x4x3xf32>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.group_norm %[[X]] {epsilon = 9.9999997473787516E-6 : f64, num_groups = 2 : i64}
//   CHECK-NOT:   tensor.
//       CHECK:   return %[[Y]]
func.func @tensor_expand_and_collapse_shape(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %inv_n = "tosa.const"() {value = dense<0.166666672> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %xg = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [2, 2, 2, 3] : tensor<2x4x3xf32> into tensor<2x2x2x3xf32>
  %s0 = tosa.reduce_sum %xg {axis = 3 : i32} : (tensor<2x2x2x3xf32>) -> tensor<2x2x2x1xf32>
  %sum = tosa.reduce_sum %s0 {axis = 2 : i32} : (tensor<2x2x2x1xf32>) -> tensor<2x2x1x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x2x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x2x1x1xf32>
  %d = tosa.sub %xg, %mean : (tensor<2x2x2x3xf32>, tensor<2x2x1x1xf32>) -> tensor<2x2x2x3xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>) -> tensor<2x2x2x3xf32>
  %q0 = tosa.reduce_sum %sq {axis = 3 : i32} : (tensor<2x2x2x3xf32>) -> tensor<2x2x2x1xf32>
  %sqsum = tosa.reduce_sum %q0 {axis = 2 : i32} : (tensor<2x2x2x1xf32>) -> tensor<2x2x1x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x2x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x2x1x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x2x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x2x1x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x2x1x1xf32>) -> tensor<2x2x1x1xf32>
  %yg = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x2x2x3xf32>, tensor<2x2x1x1xf32>) -> tensor<2x2x2x3xf32>
  %y = tensor.collapse_shape %yg [[0], [1, 2], [3]] : tensor<2x2x2x3xf32> into tensor<2x4x3xf32>
  return %y : tensor<2x4x3xf32>
}

// -----

// 4 groups of 24 elements on 6 channels of 4 elements: a group would hold
// one and a half channels. Not a GroupNorm.
// CHECK-LABEL: func @groups_not_dividing_channels_is_not_group_norm
//   CHECK-NOT:   nf.group_norm
//       CHECK:   tosa.rsqrt
func.func @groups_not_dividing_channels_is_not_group_norm(%x: tensor<2x6x2x2xf32>) -> tensor<2x6x2x2xf32> {
  %inv_n = "tosa.const"() {value = dense<0.166666672> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %xg = tosa.reshape %x {new_shape = array<i64: 2, 4, 6>} : (tensor<2x6x2x2xf32>) -> tensor<2x4x6xf32>
  %sum = tosa.reduce_sum %xg {axis = 2 : i32} : (tensor<2x4x6xf32>) -> tensor<2x4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x4x1xf32>, tensor<1x1x1xf32>) -> tensor<2x4x1xf32>
  %d = tosa.sub %xg, %mean : (tensor<2x4x6xf32>, tensor<2x4x1xf32>) -> tensor<2x4x6xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x4x6xf32>, tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x4x6xf32>) -> tensor<2x4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x4x1xf32>, tensor<1x1x1xf32>) -> tensor<2x4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x4x1xf32>, tensor<1x1x1xf32>) -> tensor<2x4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %yg = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x4x6xf32>, tensor<2x4x1xf32>) -> tensor<2x4x6xf32>
  %y = tosa.reshape %yg {new_shape = array<i64: 2, 6, 2, 2>} : (tensor<2x4x6xf32>) -> tensor<2x6x2x2xf32>
  return %y : tensor<2x6x2x2xf32>
}

// -----

// NHWC (2, 2, 4, 6) reshaped to (2, 2, 2, 12) splits W, not the channels:
// the statistics over axes 1 and 3 are not per group of channels.
// CHECK-LABEL: func @reshape_splitting_width_is_not_group_norm
//   CHECK-NOT:   nf.group_norm
//       CHECK:   tosa.rsqrt
func.func @reshape_splitting_width_is_not_group_norm(%x: tensor<2x2x4x6xf32>) -> tensor<2x2x4x6xf32> {
  %inv_n = "tosa.const"() {value = dense<0.0416666679> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %xg = tosa.reshape %x {new_shape = array<i64: 2, 2, 2, 12>} : (tensor<2x2x4x6xf32>) -> tensor<2x2x2x12xf32>
  %s0 = tosa.reduce_sum %xg {axis = 3 : i32} : (tensor<2x2x2x12xf32>) -> tensor<2x2x2x1xf32>
  %sum = tosa.reduce_sum %s0 {axis = 1 : i32} : (tensor<2x2x2x1xf32>) -> tensor<2x1x2x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x1x2x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x1x2x1xf32>
  %d = tosa.sub %xg, %mean : (tensor<2x2x2x12xf32>, tensor<2x1x2x1xf32>) -> tensor<2x2x2x12xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x2x2x12xf32>, tensor<2x2x2x12xf32>) -> tensor<2x2x2x12xf32>
  %q0 = tosa.reduce_sum %sq {axis = 3 : i32} : (tensor<2x2x2x12xf32>) -> tensor<2x2x2x1xf32>
  %sqsum = tosa.reduce_sum %q0 {axis = 1 : i32} : (tensor<2x2x2x1xf32>) -> tensor<2x1x2x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x1x2x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x1x2x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x1x2x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x1x2x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x1x2x1xf32>) -> tensor<2x1x2x1xf32>
  %yg = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x2x2x12xf32>, tensor<2x1x2x1xf32>) -> tensor<2x2x2x12xf32>
  %y = tosa.reshape %yg {new_shape = array<i64: 2, 2, 4, 6>} : (tensor<2x2x2x12xf32>) -> tensor<2x2x4x6xf32>
  return %y : tensor<2x2x4x6xf32>
}

// -----

// After the group reshape (2, 4, 2, 8), statistics over the last axis only
// are per (n, group, channel), not per group.
// CHECK-LABEL: func @stats_over_part_of_group_is_not_group_norm
//   CHECK-NOT:   nf.group_norm
//       CHECK:   tosa.rsqrt
func.func @stats_over_part_of_group_is_not_group_norm(%x: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %xg = tosa.reshape %x {new_shape = array<i64: 2, 4, 2, 8>} : (tensor<2x8x8xf32>) -> tensor<2x4x2x8xf32>
  %sum = tosa.reduce_sum %xg {axis = 3 : i32} : (tensor<2x4x2x8xf32>) -> tensor<2x4x2x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x4x2x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x4x2x1xf32>
  %d = tosa.sub %xg, %mean : (tensor<2x4x2x8xf32>, tensor<2x4x2x1xf32>) -> tensor<2x4x2x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x4x2x8xf32>, tensor<2x4x2x8xf32>) -> tensor<2x4x2x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 3 : i32} : (tensor<2x4x2x8xf32>) -> tensor<2x4x2x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x4x2x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x4x2x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x4x2x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x4x2x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x4x2x1xf32>) -> tensor<2x4x2x1xf32>
  %yg = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x4x2x8xf32>, tensor<2x4x2x1xf32>) -> tensor<2x4x2x8xf32>
  %y = tosa.reshape %yg {new_shape = array<i64: 2, 8, 8>} : (tensor<2x4x2x8xf32>) -> tensor<2x8x8xf32>
  return %y : tensor<2x8x8xf32>
}

// -----

// The variance of each group is also returned (nf.group_norm returns the
// mean and rstd, not the variance): the chain stays whole.
// CHECK-LABEL: func @group_variance_with_another_user_stays
//   CHECK-NOT:   nf.group_norm
//       CHECK:   tosa.sub
//       CHECK:   %[[VAR:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<2x2x1xf32>, tensor<1x1x1xf32>)
//       CHECK:   tosa.add %[[VAR]]
//       CHECK:   %[[Y:.*]] = tosa.reshape
//       CHECK:   return %[[Y]], %[[VAR]]
func.func @group_variance_with_another_user_stays(%x: tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x2x1xf32>) {
  %inv_n = "tosa.const"() {value = dense<0.166666672> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %xg = tosa.reshape %x {new_shape = array<i64: 2, 2, 6>} : (tensor<2x4x3xf32>) -> tensor<2x2x6xf32>
  %sum = tosa.reduce_sum %xg {axis = 2 : i32} : (tensor<2x2x6xf32>) -> tensor<2x2x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %d = tosa.sub %xg, %mean : (tensor<2x2x6xf32>, tensor<2x2x1xf32>) -> tensor<2x2x6xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x2x6xf32>, tensor<2x2x6xf32>) -> tensor<2x2x6xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x2x6xf32>) -> tensor<2x2x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
  %yg = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x2x6xf32>, tensor<2x2x1xf32>) -> tensor<2x2x6xf32>
  %y = tosa.reshape %yg {new_shape = array<i64: 2, 4, 3>} : (tensor<2x2x6xf32>) -> tensor<2x4x3xf32>
  return %y, %var : tensor<2x4x3xf32>, tensor<2x2x1xf32>
}

// -----

// ONNX GroupNormalization-21's function body as normfuse.onnx imports it:
// x reshaped to (N, G, -1) through a 5-D view, a one-pass variance, the
// result reshaped back through x's shape to (N, C, H * W), where the scale
// and bias apply, and to x's shape at the end (outside the chain). The
// raised op's result is reshaped to (N, C, H * W) for that last reshape,
// and the two reshapes fold away.
// CHECK-LABEL: func @onnx_group_norm_21_body
//  CHECK-SAME: (%[[X:.*]]: tensor<3x4x2x2xf32>, %[[S:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.group_norm %[[X]] scale %[[S]] bias %[[B]] {epsilon = 9.9999997473787516E-6 : f64, num_groups = 2 : i64}
//  CHECK-SAME:     : (tensor<3x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<3x4x2x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>)
//   CHECK-NOT:   tosa.reduce_sum
//   CHECK-NOT:   tosa.reshape
//       CHECK:   return %[[Y]]
func.func @onnx_group_norm_21_body(%arg0: tensor<3x4x2x2xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>) -> tensor<3x4x2x2xf32> {
  %0 = "tosa.reshape"(%arg0) {new_shape = array<i64: 3, 2, 2, 2, 2>} : (tensor<3x4x2x2xf32>) -> tensor<3x2x2x2x2xf32>
  %1 = "tosa.reshape"(%0) {new_shape = array<i64: 3, 2, 8>} : (tensor<3x2x2x2x2xf32>) -> tensor<3x2x8xf32>
  %2 = "tosa.reduce_sum"(%1) {axis = 2 : i32} : (tensor<3x2x8xf32>) -> tensor<3x2x1xf32>
  %3 = "tosa.const"() {value = dense<0x3E000000> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %4 = "tosa.mul"(%2, %3) {shift = 0 : i8} : (tensor<3x2x1xf32>, tensor<1x1x1xf32>) -> tensor<3x2x1xf32>
  %5 = "tosa.mul"(%1, %1) {shift = 0 : i8} : (tensor<3x2x8xf32>, tensor<3x2x8xf32>) -> tensor<3x2x8xf32>
  %6 = "tosa.reduce_sum"(%5) {axis = 2 : i32} : (tensor<3x2x8xf32>) -> tensor<3x2x1xf32>
  %7 = "tosa.mul"(%6, %3) {shift = 0 : i8} : (tensor<3x2x1xf32>, tensor<1x1x1xf32>) -> tensor<3x2x1xf32>
  %8 = "tosa.mul"(%4, %4) {shift = 0 : i8} : (tensor<3x2x1xf32>, tensor<3x2x1xf32>) -> tensor<3x2x1xf32>
  %9 = "tosa.sub"(%7, %8) : (tensor<3x2x1xf32>, tensor<3x2x1xf32>) -> tensor<3x2x1xf32>
  %10 = "tosa.const"() {value = dense<0x3727C5AC> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %11 = "tosa.add"(%9, %10) : (tensor<3x2x1xf32>, tensor<1x1x1xf32>) -> tensor<3x2x1xf32>
  %12 = "math.sqrt"(%11) : (tensor<3x2x1xf32>) -> tensor<3x2x1xf32>
  %13 = "tosa.sub"(%1, %4) : (tensor<3x2x8xf32>, tensor<3x2x1xf32>) -> tensor<3x2x8xf32>
  %14 = "tosa.reciprocal"(%12) : (tensor<3x2x1xf32>) -> tensor<3x2x1xf32>
  %15 = "tosa.mul"(%13, %14) {shift = 0 : i8} : (tensor<3x2x8xf32>, tensor<3x2x1xf32>) -> tensor<3x2x8xf32>
  %16 = "tosa.reshape"(%15) {new_shape = array<i64: 3, 4, 2, 2>} : (tensor<3x2x8xf32>) -> tensor<3x4x2x2xf32>
  %17 = "tosa.reshape"(%16) {new_shape = array<i64: 3, 4, 4>} : (tensor<3x4x2x2xf32>) -> tensor<3x4x4xf32>
  %18 = "tosa.reshape"(%arg1) {new_shape = array<i64: 1, 4, 1>} : (tensor<4xf32>) -> tensor<1x4x1xf32>
  %19 = "tosa.reshape"(%arg2) {new_shape = array<i64: 1, 4, 1>} : (tensor<4xf32>) -> tensor<1x4x1xf32>
  %20 = "tosa.mul"(%18, %17) {shift = 0 : i8} : (tensor<1x4x1xf32>, tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %21 = "tosa.add"(%20, %19) : (tensor<3x4x4xf32>, tensor<1x4x1xf32>) -> tensor<3x4x4xf32>
  %22 = "tosa.reshape"(%21) {new_shape = array<i64: 3, 4, 2, 2>} : (tensor<3x4x4xf32>) -> tensor<3x4x2x2xf32>
  return %22 : tensor<3x4x2x2xf32>
}


// -----

// Look-alike: the chain ends in a (N, C * H, W) view, not the per-channel
// flattening, so a scale over its middle axis is not per channel.
// CHECK-LABEL: func @a_view_that_is_not_per_channel_is_not_raised
//   CHECK-NOT:   nf.group_norm
//       CHECK:   tosa.rsqrt
func.func @a_view_that_is_not_per_channel_is_not_raised(%x: tensor<2x4x2x3xf32>, %s: tensor<1x8x1xf32>) -> tensor<2x8x3xf32> {
  %inv_n = "tosa.const"() {value = dense<0.0833333358> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %xg = tosa.reshape %x {new_shape = array<i64: 2, 2, 12>} : (tensor<2x4x2x3xf32>) -> tensor<2x2x12xf32>
  %sum = tosa.reduce_sum %xg {axis = 2 : i32} : (tensor<2x2x12xf32>) -> tensor<2x2x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %d = tosa.sub %xg, %mean : (tensor<2x2x12xf32>, tensor<2x2x1xf32>) -> tensor<2x2x12xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x2x12xf32>, tensor<2x2x12xf32>) -> tensor<2x2x12xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x2x12xf32>) -> tensor<2x2x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
  %yg = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x2x12xf32>, tensor<2x2x1xf32>) -> tensor<2x2x12xf32>
  %y = tosa.reshape %yg {new_shape = array<i64: 2, 8, 3>} : (tensor<2x2x12xf32>) -> tensor<2x8x3xf32>
  %ys = tosa.mul %y, %s {shift = 0 : i8} : (tensor<2x8x3xf32>, tensor<1x8x1xf32>) -> tensor<2x8x3xf32>
  return %ys : tensor<2x8x3xf32>
}

// -----

// ONNX GroupNormalization-18's body as normfuse.onnx imports it: the scale
// and bias are per group, applied as (1, G, 1) in the grouped shape before
// the reshape back. One nf.group_norm, each parameter repeated for the
// C / G channels of its group.
// CHECK-LABEL: func @onnx_group_norm_18_body
//  CHECK-SAME: (%[[X:.*]]: tensor<3x4x2x2xf32>, %[[S:.*]]: tensor<2xf32>, %[[B:.*]]: tensor<2xf32>)
//       CHECK:   %[[SC:.+]] = tosa.reshape %[[S]] {new_shape = array<i64: 2, 1>}
//       CHECK:   %[[ST:.+]] = tosa.tile %[[SC]] {multiples = array<i64: 1, 2>} : (tensor<2x1xf32>) -> tensor<2x2xf32>
//       CHECK:   %[[SP:.+]] = tosa.reshape %[[ST]] {new_shape = array<i64: 4>}
//       CHECK:   %[[BC:.+]] = tosa.reshape %[[B]] {new_shape = array<i64: 2, 1>}
//       CHECK:   %[[BT:.+]] = tosa.tile %[[BC]] {multiples = array<i64: 1, 2>}
//       CHECK:   %[[BP:.+]] = tosa.reshape %[[BT]] {new_shape = array<i64: 4>}
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.group_norm %[[X]] scale %[[SP]] bias %[[BP]] {epsilon = 9.9999997473787516E-6 : f64, num_groups = 2 : i64}
//   CHECK-NOT:   tosa.reduce_sum
//       CHECK:   return %[[Y]]
func.func @onnx_group_norm_18_body(%arg0: tensor<3x4x2x2xf32>, %arg1: tensor<2xf32>, %arg2: tensor<2xf32>) -> tensor<3x4x2x2xf32> {
  %0 = "tosa.reshape"(%arg0) {new_shape = array<i64: 3, 2, 2, 2, 2>} : (tensor<3x4x2x2xf32>) -> tensor<3x2x2x2x2xf32>
  %1 = "tosa.reshape"(%0) {new_shape = array<i64: 3, 2, 8>} : (tensor<3x2x2x2x2xf32>) -> tensor<3x2x8xf32>
  %2 = "tosa.reduce_sum"(%1) {axis = 2 : i32} : (tensor<3x2x8xf32>) -> tensor<3x2x1xf32>
  %3 = "tosa.const"() {value = dense<0x3E000000> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %4 = "tosa.mul"(%2, %3) {shift = 0 : i8} : (tensor<3x2x1xf32>, tensor<1x1x1xf32>) -> tensor<3x2x1xf32>
  %5 = "tosa.mul"(%1, %1) {shift = 0 : i8} : (tensor<3x2x8xf32>, tensor<3x2x8xf32>) -> tensor<3x2x8xf32>
  %6 = "tosa.reduce_sum"(%5) {axis = 2 : i32} : (tensor<3x2x8xf32>) -> tensor<3x2x1xf32>
  %7 = "tosa.mul"(%6, %3) {shift = 0 : i8} : (tensor<3x2x1xf32>, tensor<1x1x1xf32>) -> tensor<3x2x1xf32>
  %8 = "tosa.mul"(%4, %4) {shift = 0 : i8} : (tensor<3x2x1xf32>, tensor<3x2x1xf32>) -> tensor<3x2x1xf32>
  %9 = "tosa.sub"(%7, %8) : (tensor<3x2x1xf32>, tensor<3x2x1xf32>) -> tensor<3x2x1xf32>
  %10 = "tosa.const"() {value = dense<0x3727C5AC> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %11 = "tosa.add"(%9, %10) : (tensor<3x2x1xf32>, tensor<1x1x1xf32>) -> tensor<3x2x1xf32>
  %12 = "math.sqrt"(%11) : (tensor<3x2x1xf32>) -> tensor<3x2x1xf32>
  %13 = "tosa.sub"(%1, %4) : (tensor<3x2x8xf32>, tensor<3x2x1xf32>) -> tensor<3x2x8xf32>
  %14 = "tosa.reciprocal"(%12) : (tensor<3x2x1xf32>) -> tensor<3x2x1xf32>
  %15 = "tosa.mul"(%13, %14) {shift = 0 : i8} : (tensor<3x2x8xf32>, tensor<3x2x1xf32>) -> tensor<3x2x8xf32>
  %16 = "tosa.reshape"(%arg1) {new_shape = array<i64: 1, 2, 1>} : (tensor<2xf32>) -> tensor<1x2x1xf32>
  %17 = "tosa.reshape"(%arg2) {new_shape = array<i64: 1, 2, 1>} : (tensor<2xf32>) -> tensor<1x2x1xf32>
  %18 = "tosa.mul"(%16, %15) {shift = 0 : i8} : (tensor<1x2x1xf32>, tensor<3x2x8xf32>) -> tensor<3x2x8xf32>
  %19 = "tosa.add"(%18, %17) : (tensor<3x2x8xf32>, tensor<1x2x1xf32>) -> tensor<3x2x8xf32>
  %20 = "tosa.reshape"(%19) {new_shape = array<i64: 3, 4, 2, 2>} : (tensor<3x2x8xf32>) -> tensor<3x4x2x2xf32>
  return %20 : tensor<3x4x2x2xf32>
}


// -----

// Without scale or bias, a chain over the group axes of a reshape that is
// not reshaped back is a LayerNorm of the reshaped tensor: left to the
// layer-norm family (not run here).
// CHECK-LABEL: func @a_bare_grouped_chain_is_not_a_group_norm
//   CHECK-NOT:   nf.group_norm
//       CHECK:   tosa.rsqrt
func.func @a_bare_grouped_chain_is_not_a_group_norm(%x: tensor<2x4x3xf32>) -> tensor<2x2x6xf32> {
  %inv_n = "tosa.const"() {value = dense<0.166666672> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %xg = tosa.reshape %x {new_shape = array<i64: 2, 2, 6>} : (tensor<2x4x3xf32>) -> tensor<2x2x6xf32>
  %sum = tosa.reduce_sum %xg {axis = 2 : i32} : (tensor<2x2x6xf32>) -> tensor<2x2x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %d = tosa.sub %xg, %mean : (tensor<2x2x6xf32>, tensor<2x2x1xf32>) -> tensor<2x2x6xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x2x6xf32>, tensor<2x2x6xf32>) -> tensor<2x2x6xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x2x6xf32>) -> tensor<2x2x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
  %yg = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x2x6xf32>, tensor<2x2x1xf32>) -> tensor<2x2x6xf32>
  return %yg : tensor<2x2x6xf32>
}

// -----

// Look-alike: a scale over the grouped tensor's last axis (per element of
// a group, not per group) is not a GroupNorm's.
// CHECK-LABEL: func @a_scale_within_the_group_is_not_per_group
//   CHECK-NOT:   nf.group_norm
//       CHECK:   tosa.rsqrt
func.func @a_scale_within_the_group_is_not_per_group(%x: tensor<2x4x3xf32>, %s: tensor<1x1x6xf32>) -> tensor<2x2x6xf32> {
  %inv_n = "tosa.const"() {value = dense<0.166666672> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %xg = tosa.reshape %x {new_shape = array<i64: 2, 2, 6>} : (tensor<2x4x3xf32>) -> tensor<2x2x6xf32>
  %sum = tosa.reduce_sum %xg {axis = 2 : i32} : (tensor<2x2x6xf32>) -> tensor<2x2x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %d = tosa.sub %xg, %mean : (tensor<2x2x6xf32>, tensor<2x2x1xf32>) -> tensor<2x2x6xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x2x6xf32>, tensor<2x2x6xf32>) -> tensor<2x2x6xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x2x6xf32>) -> tensor<2x2x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
  %yg = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x2x6xf32>, tensor<2x2x1xf32>) -> tensor<2x2x6xf32>
  %ys = tosa.mul %yg, %s {shift = 0 : i8} : (tensor<2x2x6xf32>, tensor<1x1x6xf32>) -> tensor<2x2x6xf32>
  return %ys : tensor<2x2x6xf32>
}
