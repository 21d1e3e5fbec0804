// RUN: nf-opt %s --nf-test-raise-patterns=families=layer-norm,group-norm --split-input-file | FileCheck %s

// The one-pass variance mean(x*x) - mean(x)^2, as ONNX's LayerNormalization
// function body computes it after flattening to two dimensions (what
// normfuse.onnx imports: Div by the standard deviation as a reciprocal and
// a multiply, Sqrt as math.sqrt), is raised to the same nf.layer_norm as
// the two-pass form: nf's kernel computes the variance stably.
// CHECK-LABEL: func @onnx_function_body
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<1x8xf32>, %[[B:.*]]: tensor<1x8xf32>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] scale %{{.+}} bias %{{.+}} {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
//   CHECK-NOT:   tosa.reduce_sum
//   CHECK-NOT:   math.sqrt
//       CHECK:   return %[[Y]]
func.func @onnx_function_body(%x: tensor<4x8xf32>, %g: tensor<1x8xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %msq = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %m2 = tosa.mul %mean, %mean {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %var = tosa.sub %msq, %m2 : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %std = math.sqrt %ve : tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %inv = tosa.reciprocal %std : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = tosa.mul %d, %inv {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %ns = tosa.mul %n, %g {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %y = tosa.add %ns, %b : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Flax's fast variance: clamped by max(0, .), rsqrt, the square of the mean
// as pow(mean, 2), and the centering mean computed a second time.
// CHECK-LABEL: func @clamped_with_a_second_mean
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x16xf32>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] {axis = 2 : i64, epsilon = 9.9999999747524271E-7 : f64}
//   CHECK-NOT:   tosa.
//       CHECK:   return %[[Y]]
func.func @clamped_with_a_second_mean(%x: tensor<2x3x16xf32>) -> tensor<2x3x16xf32> {
  %inv_n = "tosa.const"() {value = dense<0.0625> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-6> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %zero = "tosa.const"() {value = dense<0.0> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %two = "tosa.const"() {value = dense<2.0> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 2 : i32} : (tensor<2x3x16xf32>) -> tensor<2x3x1xf32>
  %mean = tosa.mul %inv_n, %sum {shift = 0 : i8} : (tensor<1x1x1xf32>, tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<2x3x16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x3x16xf32>) -> tensor<2x3x1xf32>
  %msq = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x3x1xf32>, tensor<1x1x1xf32>) -> tensor<2x3x1xf32>
  %m2 = tosa.pow %mean, %two : (tensor<2x3x1xf32>, tensor<1x1x1xf32>) -> tensor<2x3x1xf32>
  %var0 = tosa.sub %msq, %m2 : (tensor<2x3x1xf32>, tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %var = tosa.maximum %zero, %var0 : (tensor<1x1x1xf32>, tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x3x1xf32>, tensor<1x1x1xf32>) -> tensor<2x3x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %sum2 = tosa.reduce_sum %x {axis = 2 : i32} : (tensor<2x3x16xf32>) -> tensor<2x3x1xf32>
  %mean2 = tosa.mul %sum2, %inv_n {shift = 0 : i8} : (tensor<2x3x1xf32>, tensor<1x1x1xf32>) -> tensor<2x3x1xf32>
  %d = tosa.sub %x, %mean2 : (tensor<2x3x16xf32>, tensor<2x3x1xf32>) -> tensor<2x3x16xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x3x16xf32>, tensor<2x3x1xf32>) -> tensor<2x3x16xf32>
  return %y : tensor<2x3x16xf32>
}

// -----

// The clamp as raising leaves it when it sees max(v, 0) first (nf.relu),
// and as tosa.clamp from 0 to infinity.
// CHECK-LABEL: func @clamped_by_relu_and_by_clamp
//       CHECK:   nf.layer_norm
//       CHECK:   nf.layer_norm
//   CHECK-NOT:   tosa.reduce_sum
func.func @clamped_by_relu_and_by_clamp(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %msq = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %m2 = tosa.mul %mean, %mean {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %var0 = tosa.sub %msq, %m2 : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %var = nf.relu %var0 : tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>

  %sumb = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %meanb = tosa.mul %sumb, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %sqb = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsumb = tosa.reduce_sum %sqb {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %msqb = tosa.mul %sqsumb, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %m2b = tosa.mul %meanb, %meanb {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %var0b = tosa.sub %msqb, %m2b : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %varb = tosa.clamp %var0b {min_fp = 0.0 : f32, max_fp = 0x7F800000 : f32, min_int = 0 : i64, max_int = 0 : i64} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %veb = tosa.add %varb, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %rb = tosa.rsqrt %veb : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %db = tosa.sub %x, %meanb : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %yb = tosa.mul %db, %rb {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y, %yb : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// GroupNorm NCHW through the [N, G, -1] reshape with a one-pass variance
// (ONNX GroupNormalization-21's function body).
// CHECK-LABEL: func @group_norm_one_pass
//  CHECK-SAME: (%[[X:.*]]: tensor<2x4x3xf32>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.group_norm %[[X]] {epsilon = 9.9999997473787516E-6 : f64, num_groups = 2 : i64}
//   CHECK-NOT:   tosa.reduce_sum
//       CHECK:   return %[[Y]]
func.func @group_norm_one_pass(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %inv_n = "tosa.const"() {value = dense<0.166666672> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1x1xf32>} : () -> tensor<1x1x1xf32>
  %xg = tosa.reshape %x {new_shape = array<i64: 2, 2, 6>} : (tensor<2x4x3xf32>) -> tensor<2x2x6xf32>
  %sum = tosa.reduce_sum %xg {axis = 2 : i32} : (tensor<2x2x6xf32>) -> tensor<2x2x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %sq = tosa.mul %xg, %xg {shift = 0 : i8} : (tensor<2x2x6xf32>, tensor<2x2x6xf32>) -> tensor<2x2x6xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x2x6xf32>) -> tensor<2x2x1xf32>
  %msq = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %m2 = tosa.mul %mean, %mean {shift = 0 : i8} : (tensor<2x2x1xf32>, tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
  %var = tosa.sub %msq, %m2 : (tensor<2x2x1xf32>, tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x2x1xf32>, tensor<1x1x1xf32>) -> tensor<2x2x1xf32>
  %r = tosa.rsqrt %ve : (tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
  %d = tosa.sub %xg, %mean : (tensor<2x2x6xf32>, tensor<2x2x1xf32>) -> tensor<2x2x6xf32>
  %yg = tosa.mul %d, %r {shift = 0 : i8} : (tensor<2x2x6xf32>, tensor<2x2x1xf32>) -> tensor<2x2x6xf32>
  %y = tosa.reshape %yg {new_shape = array<i64: 2, 4, 3>} : (tensor<2x2x6xf32>) -> tensor<2x4x3xf32>
  return %y : tensor<2x4x3xf32>
}

// -----

// Look-alike: max(var, 1e-3) is not max(var, 0).
// CHECK-LABEL: func @a_clamp_with_another_bound_is_not_raised
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @a_clamp_with_another_bound_is_not_raised(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %bound = "tosa.const"() {value = dense<1.0e-3> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %msq = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %m2 = tosa.mul %mean, %mean {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %var0 = tosa.sub %msq, %m2 : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %var = tosa.maximum %var0, %bound : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Look-alike: mean(z*z) - mean(x)^2.
// CHECK-LABEL: func @squares_of_another_tensor_are_not_a_variance
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @squares_of_another_tensor_are_not_a_variance(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %bound = "tosa.const"() {value = dense<1.0e-3> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %sq = tosa.mul %z, %z {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %msq = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %m2 = tosa.mul %mean, %mean {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %var = tosa.sub %msq, %m2 : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Look-alike: mean(x)^2 - mean(x*x), the negated variance.
// CHECK-LABEL: func @the_terms_swapped_are_not_a_variance
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @the_terms_swapped_are_not_a_variance(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %bound = "tosa.const"() {value = dense<1.0e-3> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %msq = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %m2 = tosa.mul %mean, %mean {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %var = tosa.sub %m2, %msq : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Look-alike: eps added to mean(x*x) before the subtraction.
// CHECK-LABEL: func @epsilon_in_another_place_is_not_raised
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @epsilon_in_another_place_is_not_raised(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %bound = "tosa.const"() {value = dense<1.0e-3> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %msq0 = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %msq = tosa.add %msq0, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %m2 = tosa.mul %mean, %mean {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %var = tosa.sub %msq, %m2 : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %var : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Look-alike: the variance is also returned.
// CHECK-LABEL: func @a_variance_with_another_use_is_not_raised
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @a_variance_with_another_use_is_not_raised(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %bound = "tosa.const"() {value = dense<1.0e-3> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %msq = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %m2 = tosa.mul %mean, %mean {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %var = tosa.sub %msq, %m2 : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y, %var : tensor<4x8xf32>, tensor<4x1xf32>
}

// -----

// Look-alike: mean(x*x) over another axis than mean(x).
// CHECK-LABEL: func @squares_over_another_axis_are_not_a_variance
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @squares_over_another_axis_are_not_a_variance(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %inv_n = "tosa.const"() {value = dense<0.25> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x4xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 0 : i32} : (tensor<4x4xf32>) -> tensor<1x4xf32>
  %msq0 = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %perm = "tosa.const"() {value = dense<[1, 0]> : tensor<2xi32>} : () -> tensor<2xi32>
  %msq = tosa.transpose %msq0, %perm : (tensor<1x4xf32>, tensor<2xi32>) -> tensor<4x1xf32>
  %m2 = tosa.mul %mean, %mean {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %var = tosa.sub %msq, %m2 : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<4x4xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Look-alike: a clamp with an upper bound (ReLU6's) is not max(var, 0).
// CHECK-LABEL: func @a_clamp_with_an_upper_bound_is_not_raised
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   tosa.rsqrt
func.func @a_clamp_with_an_upper_bound_is_not_raised(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %msq = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %m2 = tosa.mul %mean, %mean {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %var0 = tosa.sub %msq, %m2 : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %var = tosa.clamp %var0 {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// ONNX's LayerNormalization body for f16 data with stash_type = float: the
// input cast to f32, the statistics and the normalization in f32, the
// result cast back to f16, then the f16 scale and bias. One nf.layer_norm
// of the f16 input (which computes in f32).
// CHECK-LABEL: func @stash_type_casts
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>, %[[G:.*]]: tensor<1x8xf16>, %[[B:.*]]: tensor<1x8xf16>)
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] scale %{{.+}} bias %{{.+}} {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
//  CHECK-SAME:     -> (tensor<4x8xf16>, tensor<4x1xf32>, tensor<4x1xf32>)
//   CHECK-NOT:   tosa.cast
//       CHECK:   return %[[Y]]
func.func @stash_type_casts(%x16: tensor<4x8xf16>, %g: tensor<1x8xf16>, %b: tensor<1x8xf16>) -> tensor<4x8xf16> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %x = tosa.cast %x16 : (tensor<4x8xf16>) -> tensor<4x8xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %sq = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %msq = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %m2 = tosa.mul %mean, %mean {shift = 0 : i8} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %var = tosa.sub %msq, %m2 : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %std = math.sqrt %ve : tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %inv = tosa.reciprocal %std : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = tosa.mul %d, %inv {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %n16 = tosa.cast %n : (tensor<4x8xf32>) -> tensor<4x8xf16>
  %ns = tosa.mul %n16, %g {shift = 0 : i8} : (tensor<4x8xf16>, tensor<1x8xf16>) -> tensor<4x8xf16>
  %y = tosa.add %ns, %b : (tensor<4x8xf16>, tensor<1x8xf16>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// -----

// Look-alike: an f16 input whose f32 result is cast to bf16 is not a
// LayerNorm of its input's type: the f32 LayerNorm of the widened input is
// raised, and both casts stay.
// CHECK-LABEL: func @a_cast_to_another_type_is_not_raised
//  CHECK-SAME: (%[[X16:.*]]: tensor<4x8xf16>)
//       CHECK:   %[[X:.*]] = tosa.cast %[[X16]] : (tensor<4x8xf16>) -> tensor<4x8xf32>
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] {axis = 1 : i64
//       CHECK:   tosa.cast %[[Y]] : (tensor<4x8xf32>) -> tensor<4x8xbf16>
func.func @a_cast_to_another_type_is_not_raised(%x16: tensor<4x8xf16>) -> tensor<4x8xbf16> {
  %inv_n = "tosa.const"() {value = dense<0.125> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %eps = "tosa.const"() {value = dense<1.0e-5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %x = tosa.cast %x16 : (tensor<4x8xf16>) -> tensor<4x8xf32>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %sum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %d, %d {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %sqsum, %inv_n {shift = 0 : i8} : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %r = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = tosa.mul %d, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = tosa.cast %n : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}
