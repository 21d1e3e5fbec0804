// RUN: nf-opt %s --nf-test-raise-patterns=families=silu --split-input-file | FileCheck %s

// CHECK-LABEL: func @tosa_x_times_sigmoid
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
//   CHECK-NOT:   tosa.
//       CHECK:   %[[Y:.*]] = nf.silu %[[X]] : tensor<4x8xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @tosa_x_times_sigmoid(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = tosa.sigmoid %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %x, %s {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func @tosa_sigmoid_times_x_f16
//  CHECK-SAME: (%[[X:.*]]: tensor<2x16x16x8xf16>)
//   CHECK-NOT:   tosa.
//       CHECK:   %[[Y:.*]] = nf.silu %[[X]] : tensor<2x16x16x8xf16>
//  CHECK-NEXT:   return %[[Y]]
func.func @tosa_sigmoid_times_x_f16(%x: tensor<2x16x16x8xf16>) -> tensor<2x16x16x8xf16> {
  %s = tosa.sigmoid %x : (tensor<2x16x16x8xf16>) -> tensor<2x16x16x8xf16>
  %y = tosa.mul %s, %x {shift = 0 : i8} : (tensor<2x16x16x8xf16>, tensor<2x16x16x8xf16>) -> tensor<2x16x16x8xf16>
  return %y : tensor<2x16x16x8xf16>
}

// -----

// x / (1 + exp(-x)) with arith and math on tensors.
// CHECK-LABEL: func @arith_x_over_one_plus_exp_neg_x
//  CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
//   CHECK-NOT:   arith.
//   CHECK-NOT:   math.
//       CHECK:   %[[Y:.*]] = nf.silu %[[X]] : tensor<8x16xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @arith_x_over_one_plus_exp_neg_x(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %one = arith.constant dense<1.0> : tensor<8x16xf32>
  %n = arith.negf %x : tensor<8x16xf32>
  %e = math.exp %n : tensor<8x16xf32>
  %d = arith.addf %e, %one : tensor<8x16xf32>
  %y = arith.divf %x, %d : tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// x * reciprocal(1 + exp(-x)) in TOSA, f16.
// CHECK-LABEL: func @tosa_x_times_reciprocal_f16
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>)
//   CHECK-NOT:   tosa.
//       CHECK:   %[[Y:.*]] = nf.silu %[[X]] : tensor<4x8xf16>
//  CHECK-NEXT:   return %[[Y]]
func.func @tosa_x_times_reciprocal_f16(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf16>} : () -> tensor<1x1xf16>
  %n = tosa.negate %x : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %e = tosa.exp %n : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %d = tosa.add %one, %e : (tensor<1x1xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %r = tosa.reciprocal %d : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %y = tosa.mul %r, %x {shift = 0 : i8} : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// -----

// x * (1 / (1 + exp(x * -1))) with nf.mul outside.
// CHECK-LABEL: func @nf_mul_x_times_one_over_one_plus_exp
//  CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32>)
//       CHECK:   %[[Y:.*]] = nf.silu %[[X]] : tensor<8x4xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @nf_mul_x_times_one_over_one_plus_exp(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %one = arith.constant dense<1.0> : tensor<8x4xf32>
  %minus = arith.constant dense<-1.0> : tensor<8x4xf32>
  %n = arith.mulf %x, %minus : tensor<8x4xf32>
  %e = math.exp %n : tensor<8x4xf32>
  %d = arith.addf %one, %e : tensor<8x4xf32>
  %r = arith.divf %one, %d : tensor<8x4xf32>
  %y = nf.mul %x, %r : tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// x * sigmoid(z) is not silu(x).
// CHECK-LABEL: func @sigmoid_of_another_value_is_not_silu
//   CHECK-NOT:   nf.silu
//       CHECK:   tosa.sigmoid
//       CHECK:   %[[Y:.*]] = tosa.mul
//       CHECK:   return %[[Y]]
func.func @sigmoid_of_another_value_is_not_silu(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = tosa.sigmoid %z : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %x, %s {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The sigmoid is also returned: the chain stays.
// CHECK-LABEL: func @sigmoid_with_another_user_is_kept
//   CHECK-NOT:   nf.silu
//       CHECK:   %[[S:.*]] = tosa.sigmoid
//       CHECK:   %[[Y:.*]] = tosa.mul
//       CHECK:   return %[[Y]], %[[S]]
func.func @sigmoid_with_another_user_is_kept(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = tosa.sigmoid %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %x, %s {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// x / (1 + exp(x)) lacks the negation: not silu.
// CHECK-LABEL: func @exp_without_negation_is_not_silu
//   CHECK-NOT:   nf.silu
//       CHECK:   math.exp
//       CHECK:   %[[Y:.*]] = arith.divf
//       CHECK:   return %[[Y]]
func.func @exp_without_negation_is_not_silu(%x: tensor<8xf32>) -> tensor<8xf32> {
  %one = arith.constant dense<1.0> : tensor<8xf32>
  %e = math.exp %x : tensor<8xf32>
  %d = arith.addf %e, %one : tensor<8xf32>
  %y = arith.divf %x, %d : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// x / (2 + exp(-x)) is not silu.
// CHECK-LABEL: func @two_plus_exp_is_not_silu
//   CHECK-NOT:   nf.silu
//       CHECK:   arith.negf
//       CHECK:   %[[Y:.*]] = arith.divf
//       CHECK:   return %[[Y]]
func.func @two_plus_exp_is_not_silu(%x: tensor<8xf32>) -> tensor<8xf32> {
  %two = arith.constant dense<2.0> : tensor<8xf32>
  %n = arith.negf %x : tensor<8xf32>
  %e = math.exp %n : tensor<8xf32>
  %d = arith.addf %two, %e : tensor<8xf32>
  %y = arith.divf %x, %d : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// The exp is also returned: x / (1 + exp(-x)) stays.
// CHECK-LABEL: func @exp_with_another_user_is_kept
//   CHECK-NOT:   nf.silu
//       CHECK:   %[[E:.*]] = math.exp
//       CHECK:   %[[Y:.*]] = arith.divf
//       CHECK:   return %[[Y]], %[[E]]
func.func @exp_with_another_user_is_kept(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %one = arith.constant dense<1.0> : tensor<8xf32>
  %n = arith.negf %x : tensor<8xf32>
  %e = math.exp %n : tensor<8xf32>
  %d = arith.addf %e, %one : tensor<8xf32>
  %y = arith.divf %x, %d : tensor<8xf32>
  return %y, %e : tensor<8xf32>, tensor<8xf32>
}
