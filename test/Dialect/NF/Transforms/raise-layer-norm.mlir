// RUN: nf-opt %s --nf-test-raise-patterns=families=layer-norm --split-input-file | FileCheck %s

// What TensorFlow's TOSA legalization emits for LayerNormalization(axis=-1):
// the scale arrives as a reshaped 1-D vector (its source is reused), the
// shift already broadcast (a reshape to 1-D is inserted).
// CHECK-LABEL: func @tosa_2d_with_scale_and_shift
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<1x8xf32>)
//   CHECK-NOT:   tosa.reduce_sum
//       CHECK:   %[[B1:.*]] = tosa.reshape %[[B]] {new_shape = array<i64: 8>} : (tensor<1x8xf32>) -> tensor<8xf32>
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] scale %[[G]] bias %[[B1]] {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
//  CHECK-SAME:     : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
//   CHECK-NOT:   tosa.
//       CHECK:   return %[[Y]]
func.func @tosa_2d_with_scale_and_shift(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %g2 = tosa.reshape %g {new_shape = array<i64: 1, 8>} : (tensor<8xf32>) -> tensor<1x8xf32>
  %ys = tosa.mul %y, %g2 {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %yb = tosa.add %ys, %b : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %yb : tensor<4x8xf32>
}

// -----

// No affine parameters; the operands of the commutative ops come in the
// other order; the 1/N of a non-power-of-two count (N = 6).
// CHECK-LABEL: func @tosa_3d_without_affine_operands_swapped
//  CHECK-SAME: (%[[X:.*]]: tensor<2x5x6xf32>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] {axis = 2 : i64, epsilon = 9.9999999747524271E-7 : f64}
//  CHECK-SAME:     : (tensor<2x5x6xf32>) -> (tensor<2x5x6xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>)
//   CHECK-NOT:   tosa.
//       CHECK:   return %[[Y]]
func.func @tosa_3d_without_affine_operands_swapped(%x: tensor<2x5x6xf32>) -> tensor<2x5x6xf32> {
  %inv_n = "tosa.const"() {value = dense<0.166666672> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-6> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 2 : i32} : (tensor<2x5x6xf32>) -> tensor<2x5x1xf32>
  %mean = tosa.mul %inv_n, %sum {shift = 0 : i8} : (tensor<1x1x1xf32>, tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %d = tosa.sub %x, %mean : (tensor<2x5x6xf32>, tensor<2x5x1xf32>) -> tensor<2x5x6xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x5x6xf32>, tensor<2x5x6xf32>) -> tensor<2x5x6xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x5x6xf32>) -> tensor<2x5x1xf32>
  %var = tosa.mul %inv_n, %sqsum {shift = 0 : i8} : (tensor<1x1x1xf32>, tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %ve = tosa.add %eps, %var : (tensor<1x1x1xf32>, tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %y = tosa.mul %r, %d {shift = 0 : i8} : (tensor<2x5x1xf32>, tensor<2x5x6xf32>) -> tensor<2x5x6xf32>
  return %y : tensor<2x5x6xf32>
}

// -----

// Keras LayerNormalization(axis=(2, 3)): one reduce_sum per trailing axis,
// N = 4 * 12 = 48; the square as tosa.pow(d, 2).
// CHECK-LABEL: func @multi_axis_trailing_with_pow
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x4x12xf32>, %[[G:.*]]: tensor<4x12xf32>, %[[B:.*]]: tensor<4x12xf32>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] scale %[[G]] bias %[[B]] {axis = 2 : i64, epsilon = 0.0010000000474974513 : f64}
//  CHECK-SAME:     -> (tensor<2x3x4x12xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>)
//       CHECK:   return %[[Y]]
func.func @multi_axis_trailing_with_pow(%x: tensor<2x3x4x12xf32>, %g: tensor<4x12xf32>, %b: tensor<4x12xf32>) -> tensor<2x3x4x12xf32> {
  %inv_n = "tosa.const"() {value = dense<0.0208333333> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-3> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %two = "tosa.const"() {value = dense<2.0> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %s0 = tosa.reduce_sum %x {axis = 3 : i32} : (tensor<2x3x4x12xf32>) -> tensor<2x3x4x1xf32>
  %sum = tosa.reduce_sum %s0 {axis = 2 : i32} : (tensor<2x3x4x1xf32>) -> tensor<2x3x1x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x3x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x3x1x1xf32>
  %d = tosa.sub %x, %mean : (tensor<2x3x4x12xf32>, tensor<2x3x1x1xf32>) -> tensor<2x3x4x12xf32>
  %sq = tosa.pow %d, %two : (tensor<2x3x4x12xf32>, tensor<1x1x1x1xf32>) -> tensor<2x3x4x12xf32>
  %q0 = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x3x4x12xf32>) -> tensor<2x3x1x12xf32>
  %sqsum = tosa.reduce_sum %q0 {axis = 3 : i32} : (tensor<2x3x1x12xf32>) -> tensor<2x3x1x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x3x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x3x1x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x3x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x3x1x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x3x1x1xf32>) -> tensor<2x3x1x1xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x3x4x12xf32>, tensor<2x3x1x1xf32>) -> tensor<2x3x4x12xf32>
  %ys = tosa.mul %y, %g {shift = 0 : i8} : (tensor<2x3x4x12xf32>, tensor<4x12xf32>) -> tensor<2x3x4x12xf32>
  %yb = tosa.add %ys, %b : (tensor<2x3x4x12xf32>, tensor<4x12xf32>) -> tensor<2x3x4x12xf32>
  return %yb : tensor<2x3x4x12xf32>
}

// -----

// rstd as tosa.reciprocal(math.sqrt(var + eps)); only a scale.
// CHECK-LABEL: func @reciprocal_of_sqrt_scale_only
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<8xf32>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] scale %[[G]] {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
//       CHECK:   return %[[Y]]
func.func @reciprocal_of_sqrt_scale_only(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %std = math.sqrt %ve : tensor<4x1xf32>
  %r = tosa.reciprocal %std : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %ys = tosa.mul %y, %g {shift = 0 : i8} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}

// -----

// Elementwise arith on the reduced tensors: mean = sum / N with
// arith.divf, rstd = 1 / sqrt with arith.divf; the square with nf.mul;
// only a shift.
// CHECK-LABEL: func @arith_divf_mean_and_rstd_shift_only
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<1x8xf32>)
//       CHECK:   %[[B1:.*]] = tosa.reshape %[[B]] {new_shape = array<i64: 8>}
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] bias %[[B1]] {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
//   CHECK-NOT:   arith.divf
//       CHECK:   return %[[Y]]
func.func @arith_divf_mean_and_rstd_shift_only(%x: tensor<4x8xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %n = arith.constant dense<8.0> : tensor<4x1xf32>
  %one = arith.constant dense<1.0> : tensor<4x1xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<4x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = arith.divf %sum, %n : tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = nf.mul %d, %d : tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = arith.divf %sqsum, %n : tensor<4x1xf32>
  %ve = arith.addf %var, %eps : tensor<4x1xf32>
  %std = math.sqrt %ve : tensor<4x1xf32>
  %r = arith.divf %one, %std : tensor<4x1xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %yb = tosa.add %y, %b : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %yb : tensor<4x8xf32>
}

// -----

// f16, as torch-mlir emits it for a half-precision model; epsilon is the
// f16 constant's value (1e-5 rounds to a subnormal). The nf op keeps its
// statistics in f32.
// CHECK-LABEL: func @f16_with_scale_and_shift
//  CHECK-SAME: (%[[X:.*]]: tensor<2x4x16xf16>, %[[G:.*]]: tensor<16xf16>, %[[B:.*]]: tensor<16xf16>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] scale %[[G]] bias %[[B]] {axis = 2 : i64, epsilon = 1.0013580322265625E-5 : f64}
//  CHECK-SAME:     : (tensor<2x4x16xf16>, tensor<16xf16>, tensor<16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x1xf32>, tensor<2x4x1xf32>)
//       CHECK:   return %[[Y]]
func.func @f16_with_scale_and_shift(%x: tensor<2x4x16xf16>, %g: tensor<16xf16>, %b: tensor<16xf16>) -> tensor<2x4x16xf16> {
  %inv_n = "tosa.const"() {value = dense<0.0625> : tensor<1x1x1xf16>} : () -> tensor<1x1x1xf16>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1xf16>} : () -> tensor<1x1x1xf16>
  %sum = tosa.reduce_sum %x {axis = 2 : i32} : (tensor<2x4x16xf16>) -> tensor<2x4x1xf16>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x4x1xf16>, tensor<1x1x1xf16>) -> tensor<2x4x1xf16>
  %d = tosa.sub %x, %mean : (tensor<2x4x16xf16>, tensor<2x4x1xf16>) -> tensor<2x4x16xf16>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x4x16xf16>, tensor<2x4x16xf16>) -> tensor<2x4x16xf16>
  %sqsum = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x4x16xf16>) -> tensor<2x4x1xf16>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x4x1xf16>, tensor<1x1x1xf16>) -> tensor<2x4x1xf16>
  %ve = tosa.add %var, %eps : (tensor<2x4x1xf16>, tensor<1x1x1xf16>) -> tensor<2x4x1xf16>
  %r = tosa.rsqrt %ve : (tensor<2x4x1xf16>) -> tensor<2x4x1xf16>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x4x16xf16>, tensor<2x4x1xf16>) -> tensor<2x4x16xf16>
  %ys = tosa.mul %y, %g {shift = 0 : i8} : (tensor<2x4x16xf16>, tensor<16xf16>) -> tensor<2x4x16xf16>
  %yb = tosa.add %ys, %b : (tensor<2x4x16xf16>, tensor<16xf16>) -> tensor<2x4x16xf16>
  return %yb : tensor<2x4x16xf16>
}

// -----

// The scale folded into the rstd: (x - mean) * (rstd * scale).
// CHECK-LABEL: func @scale_folded_into_rstd
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] scale %[[G]] bias %[[B]] {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
//       CHECK:   return %[[Y]]
func.func @scale_folded_into_rstd(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %rg = tosa.mul %r, %g {shift = 0 : i8} : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %d, %rg {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %yb = tosa.add %y, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %yb : tensor<4x8xf32>
}

// -----

// The mean and rstd are also returned (saved for the backward pass): the
// nf op's own statistics (f32, same shape) take those uses.
// CHECK-LABEL: func @mean_and_rstd_exported
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
//       CHECK:   %[[Y:.+]], %[[MEAN:.+]], %[[RSTD:.+]] = nf.layer_norm %[[X]] {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
//   CHECK-NOT:   tosa.
//       CHECK:   return %[[Y]], %[[MEAN]], %[[RSTD]]
func.func @mean_and_rstd_exported(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y, %mean, %r : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}

// -----

// 1/7 is not the mean of 8 elements.
// CHECK-LABEL: func @wrong_reciprocal_count_is_not_layer_norm
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @wrong_reciprocal_count_is_not_layer_norm(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.142857149> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The variance over 7 elements (Bessel's correction, N - 1) is not
// LayerNorm's biased variance.
// CHECK-LABEL: func @unbiased_variance_is_not_layer_norm
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @unbiased_variance_is_not_layer_norm(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %inv_n1 = "tosa.const"() {value = dense<0.142857149> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n1 {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The mean over axis 2, the variance over axis 1.
// CHECK-LABEL: func @variance_over_other_axis_is_not_layer_norm
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @variance_over_other_axis_is_not_layer_norm(%x: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %inv_n = "tosa.const"() {value = dense<0.25> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 2 : i32} : (tensor<2x4x4xf32>) -> tensor<2x4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x4x1xf32>, tensor<1x1x1xf32>) -> tensor<2x4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<2x4x4xf32>, tensor<2x4x1xf32>) -> tensor<2x4x4xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<2x4x4xf32>) -> tensor<2x1x4xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x1x4xf32>, tensor<1x1x1xf32>) -> tensor<2x1x4xf32>
  %ve = tosa.add %var, %eps : (tensor<2x1x4xf32>, tensor<1x1x1xf32>) -> tensor<2x1x4xf32>
  %r = tosa.rsqrt %ve : (tensor<2x1x4xf32>) -> tensor<2x1x4xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x4x4xf32>, tensor<2x1x4xf32>) -> tensor<2x4x4xf32>
  return %y : tensor<2x4x4xf32>
}

// -----

// Both statistics over axis 1 of a rank-3 tensor: a norm, but not over
// trailing axes (nf.layer_norm normalizes [axis, rank)).
// CHECK-LABEL: func @non_trailing_axis_is_not_layer_norm
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @non_trailing_axis_is_not_layer_norm(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %inv_n = "tosa.const"() {value = dense<0.25> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<2x4x3xf32>) -> tensor<2x1x3xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x1x3xf32>, tensor<1x1x1xf32>) -> tensor<2x1x3xf32>
  %d = tosa.sub %x, %mean : (tensor<2x4x3xf32>, tensor<2x1x3xf32>) -> tensor<2x4x3xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<2x4x3xf32>) -> tensor<2x1x3xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x1x3xf32>, tensor<1x1x1xf32>) -> tensor<2x1x3xf32>
  %ve = tosa.add %var, %eps : (tensor<2x1x3xf32>, tensor<1x1x1xf32>) -> tensor<2x1x3xf32>
  %r = tosa.rsqrt %ve : (tensor<2x1x3xf32>) -> tensor<2x1x3xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x4x3xf32>, tensor<2x1x3xf32>) -> tensor<2x4x3xf32>
  return %y : tensor<2x4x3xf32>
}

// -----

// The f16 mean is also returned: nf.layer_norm's mean is f32, so it cannot
// stand in for it, and the chain stays whole.
// CHECK-LABEL: func @f16_mean_with_another_user_stays
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   %[[MEAN:.*]] = tosa.mul
//       CHECK:   tosa.sub
//       CHECK:   tosa.rsqrt
//       CHECK:   %[[Y:.*]] = tosa.mul
//       CHECK:   return %[[Y]], %[[MEAN]]
func.func @f16_mean_with_another_user_stays(%x: tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x1xf16>) {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf16>} : () -> tensor<1x1xf16>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf16>} : () -> tensor<1x1xf16>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf16>) -> tensor<4x1xf16>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf16>, tensor<1x1xf16>) -> tensor<4x1xf16>
  %d = tosa.sub %x, %mean : (tensor<4x8xf16>, tensor<4x1xf16>) -> tensor<4x8xf16>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf16>) -> tensor<4x1xf16>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf16>, tensor<1x1xf16>) -> tensor<4x1xf16>
  %ve = tosa.add %var, %eps : (tensor<4x1xf16>, tensor<1x1xf16>) -> tensor<4x1xf16>
  %r = tosa.rsqrt %ve : (tensor<4x1xf16>) -> tensor<4x1xf16>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf16>, tensor<4x1xf16>) -> tensor<4x8xf16>
  return %y, %mean : tensor<4x8xf16>, tensor<4x1xf16>
}

// -----

// The centered x - mean is used again (nf.layer_norm does not return it).
// CHECK-LABEL: func @centered_with_another_user_stays
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   %[[D:.*]] = tosa.sub
//       CHECK:   tosa.rsqrt
//       CHECK:   %[[Y:.*]] = tosa.mul %[[D]], %{{.*}}
//       CHECK:   return %[[Y]], %[[D]]
func.func @centered_with_another_user_stays(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y, %d : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The f32 mean has a user that comes before the end of the chain: the nf
// op's mean would not dominate it.
// CHECK-LABEL: func @mean_used_before_the_end_stays
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   %[[MEAN:.*]] = tosa.mul
//       CHECK:   %[[E:.*]] = tosa.exp %[[MEAN]]
//       CHECK:   tosa.rsqrt
//       CHECK:   return %{{.*}}, %[[E]]
func.func @mean_used_before_the_end_stays(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %e = tosa.exp %mean : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y, %e : tensor<4x8xf32>, tensor<4x1xf32>
}

// -----

// The variance (before + eps) is also returned: nf.layer_norm does not
// return it.
// CHECK-LABEL: func @variance_with_another_user_stays
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.sub
//       CHECK:   %[[VAR:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>)
//       CHECK:   tosa.add %[[VAR]]
//       CHECK:   return %{{.*}}, %[[VAR]]
func.func @variance_with_another_user_stays(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y, %var : tensor<4x8xf32>, tensor<4x1xf32>
}

// -----

// A per-row "scale" (4x1) is not a per-feature scale: the norm is raised
// without it and the multiply stays.
// CHECK-LABEL: func @per_row_scale_stays_outside
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[S:.*]]: tensor<4x1xf32>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
//       CHECK:   %[[OUT:.*]] = tosa.mul %[[Y]], %[[S]]
//       CHECK:   return %[[OUT]]
func.func @per_row_scale_stays_outside(%x: tensor<4x8xf32>, %s: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %ys = tosa.mul %y, %s {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}

// -----

// A LayerNorm over the last axis of a group reshape that is reshaped back
// is the inside of a GroupNorm: layer-norm leaves it to group-norm (see
// raise-norm-families.mlir for the two together).
// CHECK-LABEL: func @group_norm_inside_is_left_to_group_norm
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @group_norm_inside_is_left_to_group_norm(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
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
  return %y : tensor<2x4x3xf32>
}

// -----

// A dynamic row count: 1/8 still matches, but the raising wants static
// shapes throughout.
// CHECK-LABEL: func @dynamic_shape_is_not_raised
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @dynamic_shape_is_not_raised(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<?x8xf32>) -> tensor<?x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<?x1xf32>, tensor<1x1xf32>) -> tensor<?x1xf32>
  %d = tosa.sub %x, %mean : (tensor<?x8xf32>, tensor<?x1xf32>) -> tensor<?x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<?x8xf32>) -> tensor<?x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<?x1xf32>, tensor<1x1xf32>) -> tensor<?x1xf32>
  %ve = tosa.add %var, %eps : (tensor<?x1xf32>, tensor<1x1xf32>) -> tensor<?x1xf32>
  %r = tosa.rsqrt %ve : (tensor<?x1xf32>) -> tensor<?x1xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<?x8xf32>, tensor<?x1xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
