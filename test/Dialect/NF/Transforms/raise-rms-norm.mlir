// RUN: nf-opt %s --nf-test-raise-patterns=families=rms-norm --split-input-file | FileCheck %s

// LLaMA's RMSNorm as torch-mlir's TOSA path emits it: x * rsqrt(mean(x^2)
// + eps) * weight, the weight reshaped from 1-D (its source is reused).
// CHECK-LABEL: func @tosa_2d_with_scale
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<8xf32>)
//   CHECK-NOT:   tosa.reduce_sum
//       CHECK:   %[[Y:.+]], %{{.+}} = nf.rms_norm %[[X]] scale %[[G]] {axis = 1 : i64, epsilon = 9.9999999747524271E-7 : f64}
//  CHECK-SAME:     : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>)
//   CHECK-NOT:   tosa.
//       CHECK:   return %[[Y]]
func.func @tosa_2d_with_scale(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-6> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ms = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %ms, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %x, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %g2 = tosa.reshape %g {new_shape = array<i64: 1, 8>} : (tensor<8xf32>) -> tensor<1x8xf32>
  %ys = tosa.mul %g2, %y {shift = 0 : i8} : (tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}

// -----

// f16, 3-D, no scale; the square as tosa.pow(x, 2); 1/N for N = 12.
// CHECK-LABEL: func @f16_3d_pow_without_scale
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x12xf16>)
//       CHECK:   %[[Y:.+]], %{{.+}} = nf.rms_norm %[[X]] {axis = 2 : i64, epsilon = 0.0010004043579101563 : f64}
//  CHECK-SAME:     : (tensor<2x3x12xf16>) -> (tensor<2x3x12xf16>, tensor<2x3x1xf32>)
//       CHECK:   return %[[Y]]
func.func @f16_3d_pow_without_scale(%x: tensor<2x3x12xf16>) -> tensor<2x3x12xf16> {
  %inv_n = "tosa.const"() {value = dense<0.08333> : tensor<1x1x1xf16>} : () -> tensor<1x1x1xf16>
  %eps = "tosa.const"() {value = dense<1.0e-3> : tensor<1x1x1xf16>} : () -> tensor<1x1x1xf16>
  %two = "tosa.const"() {value = dense<2.0> : tensor<1x1x1xf16>} : () -> tensor<1x1x1xf16>
  %sq = tosa.pow %x, %two : (tensor<2x3x12xf16>, tensor<1x1x1xf16>) -> tensor<2x3x12xf16>
  %sum = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x3x12xf16>) -> tensor<2x3x1xf16>
  %ms = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x3x1xf16>, tensor<1x1x1xf16>) -> tensor<2x3x1xf16>
  %ve = tosa.add %ms, %eps : (tensor<2x3x1xf16>, tensor<1x1x1xf16>) -> tensor<2x3x1xf16>
  %r = tosa.rsqrt %ve : (tensor<2x3x1xf16>) -> tensor<2x3x1xf16>
  %y = tosa.mul %x, %r {shift = 0 : i8} : (tensor<2x3x12xf16>, tensor<2x3x1xf16>) -> tensor<2x3x12xf16>
  return %y : tensor<2x3x12xf16>
}

// -----

// rstd as tosa.reciprocal(math.sqrt(v)); a scale already broadcast (a
// reshape to 1-D is inserted).
// CHECK-LABEL: func @reciprocal_of_sqrt_broadcast_scale
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<1x8xf32>)
//       CHECK:   %[[G1:.*]] = tosa.reshape %[[G]] {new_shape = array<i64: 8>} : (tensor<1x8xf32>) -> tensor<8xf32>
//       CHECK:   %[[Y:.+]], %{{.+}} = nf.rms_norm %[[X]] scale %[[G1]] {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
//       CHECK:   return %[[Y]]
func.func @reciprocal_of_sqrt_broadcast_scale(%x: tensor<4x8xf32>, %g: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ms = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %ms, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %std = math.sqrt %ve : tensor<4x1xf32>
  %r = tosa.reciprocal %std : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %x, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %ys = tosa.mul %y, %g {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}

// -----

// rstd as tosa.pow(v, -0.5), mean as arith.divf by N, multi-axis.
// CHECK-LABEL: func @pow_minus_half_multi_axis
//  CHECK-SAME: (%[[X:.*]]: tensor<2x4x6xf32>)
//       CHECK:   %[[Y:.+]], %{{.+}} = nf.rms_norm %[[X]] {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
//  CHECK-SAME:     -> (tensor<2x4x6xf32>, tensor<2x1x1xf32>)
//       CHECK:   return %[[Y]]
func.func @pow_minus_half_multi_axis(%x: tensor<2x4x6xf32>) -> tensor<2x4x6xf32> {
  %n = arith.constant dense<24.0> : tensor<2x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %mhalf = "tosa.const"() {value = dense<-0.5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<2x4x6xf32>, tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s0 = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<2x4x6xf32>) -> tensor<2x1x6xf32>
  %sum = tosa.reduce_sum %s0 {axis = 2 : i32} : (tensor<2x1x6xf32>) -> tensor<2x1x1xf32>
  %ms = arith.divf %sum, %n : tensor<2x1x1xf32>
  %ve = tosa.add %ms, %eps : (tensor<2x1x1xf32>, tensor<1x1x1xf32>) -> tensor<2x1x1xf32>
  %r = tosa.pow %ve, %mhalf : (tensor<2x1x1xf32>, tensor<1x1x1xf32>) -> tensor<2x1x1xf32>
  %y = tosa.mul %r, %x {shift = 0 : i8} : (tensor<2x1x1xf32>, tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  return %y : tensor<2x4x6xf32>
}

// -----

// x * (rstd * scale), and the f32 rstd is also returned: the nf op's rstd
// takes that use.
// CHECK-LABEL: func @scale_folded_into_rstd_rstd_exported
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<8xf32>)
//       CHECK:   %[[Y:.+]], %[[RSTD:.+]] = nf.rms_norm %[[X]] scale %[[G]] {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
//   CHECK-NOT:   tosa.
//       CHECK:   return %[[Y]], %[[RSTD]]
func.func @scale_folded_into_rstd_rstd_exported(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ms = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %ms, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %rg = tosa.mul %r, %g {shift = 0 : i8} : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %x, %rg {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %r : tensor<4x8xf32>, tensor<4x1xf32>
}

// -----

// A shift after the scale is not part of RMSNorm: the add stays.
// CHECK-LABEL: func @shift_stays_outside
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
//       CHECK:   %[[Y:.+]], %{{.+}} = nf.rms_norm %[[X]] scale %[[G]] {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
//       CHECK:   %[[OUT:.*]] = tosa.add %[[Y]], %[[B]]
//       CHECK:   return %[[OUT]]
func.func @shift_stays_outside(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ms = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %ms, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %x, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %ys = tosa.mul %y, %g {shift = 0 : i8} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %yb = tosa.add %ys, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %yb : tensor<4x8xf32>
}

// -----

// 1/4 is not the mean of 8 elements.
// CHECK-LABEL: func @wrong_reciprocal_count_is_not_rms_norm
//   CHECK-NOT:   nf.rms_norm
//       CHECK:   tosa.rsqrt
func.func @wrong_reciprocal_count_is_not_rms_norm(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.25> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ms = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %ms, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %x, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The mean of squares over axis 0: not the trailing axes.
// CHECK-LABEL: func @leading_axis_is_not_rms_norm
//   CHECK-NOT:   nf.rms_norm
//       CHECK:   tosa.rsqrt
func.func @leading_axis_is_not_rms_norm(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.25> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = tosa.reduce_sum %sq {axis = 0 : i32} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %ms = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<1x8xf32>, tensor<1x1xf32>) -> tensor<1x8xf32>
  %ve = tosa.add %ms, %eps : (tensor<1x8xf32>, tensor<1x1xf32>) -> tensor<1x8xf32>
  %r = tosa.rsqrt %ve : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %y = tosa.mul %x, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The rstd of x scales another tensor z: not x * rstd(x).
// CHECK-LABEL: func @rstd_of_other_tensor_is_not_rms_norm
//   CHECK-NOT:   nf.rms_norm
//       CHECK:   tosa.rsqrt
func.func @rstd_of_other_tensor_is_not_rms_norm(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ms = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %ms, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %z, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The square x*x is used again: the chain stays whole.
// CHECK-LABEL: func @square_with_another_user_stays
//   CHECK-NOT:   nf.rms_norm
//       CHECK:   %[[SQ:.*]] = tosa.mul
//       CHECK:   tosa.reduce_sum %[[SQ]]
//       CHECK:   tosa.rsqrt
//       CHECK:   return %{{.*}}, %[[SQ]]
func.func @square_with_another_user_stays(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ms = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %ms, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %x, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y, %sq : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Without + eps there is nothing to read epsilon from: not raised.
// CHECK-LABEL: func @no_epsilon_is_not_rms_norm
//   CHECK-NOT:   nf.rms_norm
//       CHECK:   tosa.rsqrt
func.func @no_epsilon_is_not_rms_norm(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ms = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ms : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %x, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
