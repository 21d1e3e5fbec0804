// RUN: nf-opt %s --nf-test-raise-patterns=families=layer-norm --split-input-file | FileCheck %s

// tf.nn.batch_normalization's folded affine form, as Keras'
// LayerNormalization calls it over the last axis: moments (the variance as
// mean of the squared difference), inv = rsqrt(var + eps) * gamma, and
// y = x * inv + (beta - mean * inv).
// CHECK-LABEL: func @keras_layer_norm
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] scale %[[G]] bias %[[B]] {axis = 1 : i64, epsilon = 1.0000000116860974E-7 : f64}
//   CHECK-NOT:   tosa.
//       CHECK:   return %[[Y]]
func.func @keras_layer_norm(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-7> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %g2 = tosa.reshape %g {new_shape = array<i64: 1, 8>} : (tensor<8xf32>) -> tensor<1x8xf32>
  %inv = tosa.mul %r, %g2 {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %xi = tosa.mul %x, %inv {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %mi = tosa.mul %mean, %inv {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %b2 = tosa.reshape %b {new_shape = array<i64: 1, 8>} : (tensor<8xf32>) -> tensor<1x8xf32>
  %shift = tosa.sub %b2, %mi : (tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.add %xi, %shift : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// No scale and no offset: x * inv + (-mean) * inv, with a one-pass
// variance and the operands of the commutative ops the other way round.
// CHECK-LABEL: func @without_scale_and_offset
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x16xf32>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] {axis = 2 : i64, epsilon = 9.9999997473787516E-6 : f64}
//   CHECK-NOT:   tosa.
//       CHECK:   return %[[Y]]
func.func @without_scale_and_offset(%x: tensor<2x3x16xf32>) -> tensor<2x3x16xf32> {
  %inv_n = "tosa.const"() {value = dense<0.0625> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 2 : i32} : (tensor<2x3x16xf32>) -> tensor<2x3x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x3x1xf32>, tensor<1x1x1xf32>) -> tensor<2x3x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<2x3x16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x3x16xf32>) -> tensor<2x3x1xf32>
  %msq = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x3x1xf32>, tensor<1x1x1xf32>) -> tensor<2x3x1xf32>
  %m2 = tosa.mul %mean, %mean {shift = 0 : i8} : (tensor<2x3x1xf32>, tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %var = tosa.sub %msq, %m2 : (tensor<2x3x1xf32>, tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %ve = tosa.add %eps, %var : (tensor<1x1x1xf32>, tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %inv = tosa.rsqrt %ve : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %xi = tosa.mul %inv, %x {shift = 0 : i8} : (tensor<2x3x1xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %nm = tosa.negate %mean : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %mi = tosa.mul %inv, %nm {shift = 0 : i8} : (tensor<2x3x1xf32>, tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %y = tosa.add %mi, %xi : (tensor<2x3x1xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  return %y : tensor<2x3x16xf32>
}

// -----

// x * inv - mean * inv.
// CHECK-LABEL: func @difference_of_products
//       CHECK:   nf.layer_norm %{{.+}} {axis = 1 : i64
//   CHECK-NOT:   tosa.reduce_sum
func.func @difference_of_products(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %inv = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %xi = tosa.mul %x, %inv {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %mi = tosa.mul %mean, %inv {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.sub %xi, %mi : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Look-alike: the shift scales the mean by another value than inv.
// CHECK-LABEL: func @the_shift_with_another_inverse_is_not_raised
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @the_shift_with_another_inverse_is_not_raised(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %inv = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %two = "tosa.const"() {value = dense<2.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %inv2 = tosa.mul %inv, %two {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %xi = tosa.mul %x, %inv {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %mi = tosa.mul %mean, %inv2 {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %shift = tosa.sub %b, %mi : (tensor<1x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = tosa.add %xi, %shift : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Look-alike: z * inv + (b - mean(x) * inv).
// CHECK-LABEL: func @the_input_scaled_is_another_tensor_is_not_raised
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @the_input_scaled_is_another_tensor_is_not_raised(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %inv = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %xi = tosa.mul %z, %inv {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %mi = tosa.mul %mean, %inv {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %shift = tosa.sub %b, %mi : (tensor<1x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = tosa.add %xi, %shift : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Look-alike: x * inv + (mean * inv - b): the mean added, not taken away.
// CHECK-LABEL: func @the_shift_added_the_wrong_way_is_not_raised
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @the_shift_added_the_wrong_way_is_not_raised(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %inv = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %xi = tosa.mul %x, %inv {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %mi = tosa.mul %mean, %inv {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %shift = tosa.sub %mi, %b : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %y = tosa.add %xi, %shift : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
