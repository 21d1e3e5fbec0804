// RUN: nf-opt %s --nf-test-raise-patterns=families=gelu-erf --split-input-file | FileCheck %s

// 0.5 * x * (1 + erf(x * 1/sqrt(2))) in TOSA.
// CHECK-LABEL: func @tosa_erf_of_x_times_sqrt_half
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
//   CHECK-NOT:   tosa.
//       CHECK:   %[[Y:.*]] = nf.gelu %[[X]] : tensor<4x8xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @tosa_erf_of_x_times_sqrt_half(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %r = "tosa.const"() {value = dense<0.70710678> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %arg = tosa.mul %x, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %e = tosa.erf %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onee = tosa.add %one, %e : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %hx = tosa.mul %half, %x {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %hx, %onee {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// x / sqrt(2) as arith.divf, with math.erf, on tensors.
// CHECK-LABEL: func @arith_divf_by_sqrt_two
//  CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
//   CHECK-NOT:   arith.
//       CHECK:   %[[Y:.*]] = nf.gelu %[[X]] : tensor<8x16xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @arith_divf_by_sqrt_two(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %half = arith.constant dense<0.5> : tensor<8x16xf32>
  %one = arith.constant dense<1.0> : tensor<8x16xf32>
  %sqrt2 = arith.constant dense<1.41421356> : tensor<8x16xf32>
  %arg = arith.divf %x, %sqrt2 : tensor<8x16xf32>
  %e = math.erf %arg : tensor<8x16xf32>
  %onee = arith.addf %e, %one : tensor<8x16xf32>
  %xe = arith.mulf %onee, %x : tensor<8x16xf32>
  %y = arith.mulf %half, %xe : tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// x * Phi(x) with Phi(x) = 0.5 * (1 + erf(x * 0.7071)) computed first, f16.
// CHECK-LABEL: func @tosa_x_times_phi_f16
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x16xf16>)
//   CHECK-NOT:   tosa.
//       CHECK:   %[[Y:.*]] = nf.gelu %[[X]] : tensor<2x3x16xf16>
//  CHECK-NEXT:   return %[[Y]]
func.func @tosa_x_times_phi_f16(%x: tensor<2x3x16xf16>) -> tensor<2x3x16xf16> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1x1xf16>} : () -> tensor<1x1x1xf16>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1x1xf16>} : () -> tensor<1x1x1xf16>
  %r = "tosa.const"() {value = dense<0.7071> : tensor<1x1x1xf16>} : () -> tensor<1x1x1xf16>
  %arg = tosa.mul %r, %x {shift = 0 : i8} : (tensor<1x1x1xf16>, tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %e = tosa.erf %arg : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %onee = tosa.add %e, %one : (tensor<2x3x16xf16>, tensor<1x1x1xf16>) -> tensor<2x3x16xf16>
  %phi = tosa.mul %half, %onee {shift = 0 : i8} : (tensor<1x1x1xf16>, tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %y = tosa.mul %x, %phi {shift = 0 : i8} : (tensor<2x3x16xf16>, tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  return %y : tensor<2x3x16xf16>
}

// -----

// Phi(x) as (1 + erf) * 0.5, then Phi * x.
// CHECK-LABEL: func @tosa_phi_times_x_half_last
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
//       CHECK:   %[[Y:.*]] = nf.gelu %[[X]] : tensor<4x8xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @tosa_phi_times_x_half_last(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %r = "tosa.const"() {value = dense<0.707106769> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %arg = tosa.mul %x, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %e = tosa.erf %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onee = tosa.add %one, %e : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %phi = tosa.mul %onee, %half {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %phi, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// erf(x / 2) is not erf(x / sqrt(2)).
// CHECK-LABEL: func @erf_of_half_x_is_not_gelu
//   CHECK-NOT:   nf.gelu
//       CHECK:   %[[E:.*]] = tosa.erf
//       CHECK:   %[[ONEE:.*]] = tosa.add %[[E]],
//       CHECK:   %[[Y:.*]] = tosa.mul %{{.*}}, %[[ONEE]]
//  CHECK-NEXT:   return %[[Y]]
func.func @erf_of_half_x_is_not_gelu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %arg = tosa.mul %x, %half {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %e = tosa.erf %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onee = tosa.add %one, %e : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %hx = tosa.mul %half, %x {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %hx, %onee {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// sqrt(2) / x is not x / sqrt(2): division does not commute.
// CHECK-LABEL: func @sqrt_two_over_x_is_not_gelu
//   CHECK-NOT:   nf.gelu
//       CHECK:   arith.divf
//       CHECK:   %[[E:.*]] = math.erf
//       CHECK:   %[[ONEE:.*]] = arith.addf %[[E]],
//       CHECK:   %[[Y:.*]] = arith.mulf %{{.*}}, %[[ONEE]]
//  CHECK-NEXT:   return %[[Y]]
func.func @sqrt_two_over_x_is_not_gelu(%x: tensor<8xf32>) -> tensor<8xf32> {
  %half = arith.constant dense<0.5> : tensor<8xf32>
  %one = arith.constant dense<1.0> : tensor<8xf32>
  %sqrt2 = arith.constant dense<1.41421356> : tensor<8xf32>
  %arg = arith.divf %sqrt2, %x : tensor<8xf32>
  %e = math.erf %arg : tensor<8xf32>
  %onee = arith.addf %one, %e : tensor<8xf32>
  %hx = arith.mulf %half, %x : tensor<8xf32>
  %y = arith.mulf %hx, %onee : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// 0.25 * x * (1 + erf(..)) is not GELU.
// CHECK-LABEL: func @quarter_instead_of_half_is_not_gelu
//   CHECK-NOT:   nf.gelu
//       CHECK:   %[[E:.*]] = tosa.erf
//       CHECK:   %[[ONEE:.*]] = tosa.add %[[E]],
//       CHECK:   %[[Y:.*]] = tosa.mul %{{.*}}, %[[ONEE]]
//  CHECK-NEXT:   return %[[Y]]
func.func @quarter_instead_of_half_is_not_gelu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %quarter = "tosa.const"() {value = dense<0.25> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %r = "tosa.const"() {value = dense<0.70710678> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %arg = tosa.mul %x, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %e = tosa.erf %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onee = tosa.add %one, %e : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %hx = tosa.mul %quarter, %x {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %hx, %onee {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Phi(x) is also returned (a model that uses the CDF elsewhere): the
// chain stays.
// CHECK-LABEL: func @phi_with_another_user_is_kept
//   CHECK-NOT:   nf.gelu
//       CHECK:   %[[E:.*]] = tosa.erf
//       CHECK:   %[[ONEE:.*]] = tosa.add %[[E]],
//       CHECK:   %[[PHI:.*]] = tosa.mul %[[ONEE]],
//       CHECK:   %[[Y:.*]] = tosa.mul %{{.*}}, %[[PHI]]
//  CHECK-NEXT:   return %[[Y]], %[[PHI]]
func.func @phi_with_another_user_is_kept(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %r = "tosa.const"() {value = dense<0.70710678> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %arg = tosa.mul %x, %r {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %e = tosa.erf %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onee = tosa.add %one, %e : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %phi = tosa.mul %half, %onee {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %x, %phi {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %phi : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The tanh form is another family: gelu-erf leaves it alone.
// CHECK-LABEL: func @tanh_form_is_not_erf_form
//   CHECK-NOT:   nf.gelu
//       CHECK:   math.tanh
func.func @tanh_form_is_not_erf_form(%x: tensor<8xf32>) -> tensor<8xf32> {
  %half = arith.constant dense<0.5> : tensor<8xf32>
  %one = arith.constant dense<1.0> : tensor<8xf32>
  %r = arith.constant dense<0.70710678> : tensor<8xf32>
  %arg = arith.mulf %x, %r : tensor<8xf32>
  %t = math.tanh %arg : tensor<8xf32>
  %onet = arith.addf %one, %t : tensor<8xf32>
  %hx = arith.mulf %half, %x : tensor<8xf32>
  %y = arith.mulf %hx, %onet : tensor<8xf32>
  return %y : tensor<8xf32>
}
