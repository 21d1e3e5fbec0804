// RUN: nf-opt %s --nf-test-raise-patterns=families=layer-norm,rms-norm,group-norm --split-input-file | FileCheck %s

// The three norm families together: the largest chain wins, whatever
// order the driver visits the ops in.

// (x - mean) * rstd is also an RMSNorm of x - mean: LayerNorm takes the
// whole chain, scale and shift included.
// CHECK-LABEL: func @layer_norm_not_rms_norm_of_centered
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
//   CHECK-NOT:   nf.rms_norm
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] scale %[[G]] bias %[[B]] {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
//   CHECK-NOT:   nf.rms_norm
//       CHECK:   return %[[Y]]
func.func @layer_norm_not_rms_norm_of_centered(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
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
  %ys = tosa.mul %y, %g {shift = 0 : i8} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %yb = tosa.add %ys, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %yb : tensor<4x8xf32>
}

// -----

// The LayerNorm over the group axes is the inside of a GroupNorm: one
// nf.group_norm, no nf.layer_norm.
// CHECK-LABEL: func @group_norm_not_layer_norm_of_groups
//  CHECK-SAME: (%[[X:.*]]: tensor<2x4x3xf32>, %[[G:.*]]: tensor<1x4x1xf32>)
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   %[[G1:.*]] = tosa.reshape %[[G]] {new_shape = array<i64: 4>}
//       CHECK:   %[[Y:.+]], %{{.+}}, %{{.+}} = nf.group_norm %[[X]] scale %[[G1]] {epsilon = 9.9999997473787516E-6 : f64, num_groups = 2 : i64}
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   return %[[Y]]
func.func @group_norm_not_layer_norm_of_groups(%x: tensor<2x4x3xf32>, %g: tensor<1x4x1xf32>) -> tensor<2x4x3xf32> {
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
  %ys = tosa.mul %y, %g {shift = 0 : i8} : (tensor<2x4x3xf32>, tensor<1x4x1xf32>) -> tensor<2x4x3xf32>
  return %ys : tensor<2x4x3xf32>
}

// -----

// When the f16 mean of a LayerNorm is used elsewhere, LayerNorm cannot
// fire, but d * rsqrt(mean(d^2) + eps) with d = x - mean is exactly an
// RMSNorm of d: that part is raised, the mean and d stay.
// CHECK-LABEL: func @rms_norm_of_centered_when_mean_is_used
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>)
//   CHECK-NOT:   nf.layer_norm
//       CHECK:   %[[MEAN:.*]] = tosa.mul
//       CHECK:   %[[D:.*]] = tosa.sub %[[X]], %[[MEAN]]
//       CHECK:   %[[Y:.+]], %{{.+}} = nf.rms_norm %[[D]] {axis = 1 : i64, epsilon = 1.0013580322265625E-5 : f64}
//       CHECK:   return %[[Y]], %[[MEAN]]
func.func @rms_norm_of_centered_when_mean_is_used(%x: tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x1xf16>) {
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
