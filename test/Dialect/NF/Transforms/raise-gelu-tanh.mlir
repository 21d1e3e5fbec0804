// RUN: nf-opt %s --nf-test-raise-patterns=families=gelu-tanh --split-input-file | FileCheck %s

// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3)))), as
// TensorFlow's TOSA legalization writes it.
// CHECK-LABEL: func @tosa_pow_half_times_x_first
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
//   CHECK-NOT:   tosa.
//       CHECK:   %[[Y:.*]] = nf.gelu %[[X]] {approximate = #nf.approximation<tanh>} : tensor<4x8xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @tosa_pow_half_times_x_first(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %three = "tosa.const"() {value = dense<3.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %k = "tosa.const"() {value = dense<0.044715> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %s = "tosa.const"() {value = dense<0.797884583> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %x3 = tosa.pow %x, %three : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %kx3 = tosa.mul %k, %x3 {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %inner = tosa.add %x, %kx3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %arg = tosa.mul %s, %inner {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tosa.tanh %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onet = tosa.add %one, %t : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %hx = tosa.mul %half, %x {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %hx, %onet {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// x * (0.5 * (1 + tanh(...))) with x^3 = (x * x) * x, in f16, every
// commutative operand swapped.
// CHECK-LABEL: func @tosa_cube_as_products_x_times_half_f16
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x16xf16>)
//   CHECK-NOT:   tosa.
//       CHECK:   %[[Y:.*]] = nf.gelu %[[X]] {approximate = #nf.approximation<tanh>} : tensor<2x3x16xf16>
//  CHECK-NEXT:   return %[[Y]]
func.func @tosa_cube_as_products_x_times_half_f16(%x: tensor<2x3x16xf16>) -> tensor<2x3x16xf16> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1x1xf16>} : () -> tensor<1x1x1xf16>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1x1xf16>} : () -> tensor<1x1x1xf16>
  %k = "tosa.const"() {value = dense<0.044715> : tensor<1x1x1xf16>} : () -> tensor<1x1x1xf16>
  %s = "tosa.const"() {value = dense<0.7978846> : tensor<1x1x1xf16>} : () -> tensor<1x1x1xf16>
  %x2 = tosa.mul %x, %x {shift = 0 : i8} : (tensor<2x3x16xf16>, tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %x3 = tosa.mul %x2, %x {shift = 0 : i8} : (tensor<2x3x16xf16>, tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %kx3 = tosa.mul %x3, %k {shift = 0 : i8} : (tensor<2x3x16xf16>, tensor<1x1x1xf16>) -> tensor<2x3x16xf16>
  %inner = tosa.add %kx3, %x : (tensor<2x3x16xf16>, tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %arg = tosa.mul %inner, %s {shift = 0 : i8} : (tensor<2x3x16xf16>, tensor<1x1x1xf16>) -> tensor<2x3x16xf16>
  %t = tosa.tanh %arg : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %onet = tosa.add %t, %one : (tensor<2x3x16xf16>, tensor<1x1x1xf16>) -> tensor<2x3x16xf16>
  %p = tosa.mul %half, %onet {shift = 0 : i8} : (tensor<1x1x1xf16>, tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %y = tosa.mul %x, %p {shift = 0 : i8} : (tensor<2x3x16xf16>, tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  return %y : tensor<2x3x16xf16>
}

// -----

// (1 + tanh) * 0.5, then * x; the cube as x * (x * x) with the
// coefficient inside the product: ((0.044715 * x) * x) * x.
// CHECK-LABEL: func @tosa_one_plus_tanh_times_half_then_x
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
//   CHECK-NOT:   tosa.
//       CHECK:   %[[Y:.*]] = nf.gelu %[[X]] {approximate = #nf.approximation<tanh>} : tensor<4x8xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @tosa_one_plus_tanh_times_half_then_x(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %k = "tosa.const"() {value = dense<0.044715> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %s = "tosa.const"() {value = dense<0.7978845608> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %kx = tosa.mul %k, %x {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %kx2 = tosa.mul %kx, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %kx3 = tosa.mul %x, %kx2 {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %inner = tosa.add %x, %kx3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %arg = tosa.mul %s, %inner {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tosa.tanh %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onet = tosa.add %one, %t : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = tosa.mul %onet, %half {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %p, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The 0.5 applied last: (x * (1 + tanh)) * 0.5.
// CHECK-LABEL: func @tosa_half_applied_last
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
//       CHECK:   %[[Y:.*]] = nf.gelu %[[X]] {approximate = #nf.approximation<tanh>} : tensor<4x8xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @tosa_half_applied_last(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %three = "tosa.const"() {value = dense<3.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %k = "tosa.const"() {value = dense<0.044715> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %s = "tosa.const"() {value = dense<0.797884583> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %x3 = tosa.pow %x, %three : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %kx3 = tosa.mul %k, %x3 {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %inner = tosa.add %x, %kx3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %arg = tosa.mul %s, %inner {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tosa.tanh %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onet = tosa.add %one, %t : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %xt = tosa.mul %x, %onet {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %xt, %half {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The expanded argument sqrt(2/pi) * x + 0.0356774 * x^3 (what a
// constant-folding front end leaves).
// CHECK-LABEL: func @tosa_expanded_argument
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
//       CHECK:   %[[Y:.*]] = nf.gelu %[[X]] {approximate = #nf.approximation<tanh>} : tensor<4x8xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @tosa_expanded_argument(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %three = "tosa.const"() {value = dense<3.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %k = "tosa.const"() {value = dense<0.0356774081> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %s = "tosa.const"() {value = dense<0.797884583> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %x3 = tosa.pow %x, %three : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %kx3 = tosa.mul %x3, %k {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %sx = tosa.mul %x, %s {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %arg = tosa.add %kx3, %sx : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tosa.tanh %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onet = tosa.add %one, %t : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %hx = tosa.mul %x, %half {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %onet, %hx {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Elementwise arith and math on tensors.
// CHECK-LABEL: func @arith_math_on_tensors
//  CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
//   CHECK-NOT:   arith.
//   CHECK-NOT:   math.
//       CHECK:   %[[Y:.*]] = nf.gelu %[[X]] {approximate = #nf.approximation<tanh>} : tensor<8x16xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @arith_math_on_tensors(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %half = arith.constant dense<0.5> : tensor<8x16xf32>
  %one = arith.constant dense<1.0> : tensor<8x16xf32>
  %three = arith.constant dense<3.0> : tensor<8x16xf32>
  %k = arith.constant dense<0.044715> : tensor<8x16xf32>
  %s = arith.constant dense<0.797884583> : tensor<8x16xf32>
  %x3 = math.powf %x, %three : tensor<8x16xf32>
  %kx3 = arith.mulf %x3, %k : tensor<8x16xf32>
  %inner = arith.addf %x, %kx3 : tensor<8x16xf32>
  %arg = arith.mulf %inner, %s : tensor<8x16xf32>
  %t = math.tanh %arg : tensor<8x16xf32>
  %onet = arith.addf %t, %one : tensor<8x16xf32>
  %hx = arith.mulf %x, %half : tensor<8x16xf32>
  %y = arith.mulf %hx, %onet : tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// nf's own add and mul (the tanh from math), in bf16.
// CHECK-LABEL: func @nf_add_mul_bf16
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>)
//       CHECK:   %[[Y:.*]] = nf.gelu %[[X]] {approximate = #nf.approximation<tanh>} : tensor<4x8xbf16>
//  CHECK-NEXT:   return %[[Y]]
func.func @nf_add_mul_bf16(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %half = arith.constant dense<0.5> : tensor<4x8xbf16>
  %one = arith.constant dense<1.0> : tensor<4x8xbf16>
  %k = arith.constant dense<0.044715> : tensor<4x8xbf16>
  %s = arith.constant dense<0.797884583> : tensor<4x8xbf16>
  %x2 = nf.mul %x, %x : tensor<4x8xbf16>
  %x3 = nf.mul %x, %x2 : tensor<4x8xbf16>
  %kx3 = nf.mul %k, %x3 : tensor<4x8xbf16>
  %inner = nf.add %kx3, %x : tensor<4x8xbf16>
  %arg = nf.mul %s, %inner : tensor<4x8xbf16>
  %t = math.tanh %arg : tensor<4x8xbf16>
  %onet = nf.add %one, %t : tensor<4x8xbf16>
  %p = nf.mul %onet, %half : tensor<4x8xbf16>
  %y = nf.mul %x, %p : tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// 0.04 is not 0.044715: not GELU.
// CHECK-LABEL: func @wrong_cube_coefficient_is_not_gelu
//   CHECK-NOT:   nf.gelu
//       CHECK:   %[[T:.*]] = tosa.tanh
//       CHECK:   %[[ONET:.*]] = tosa.add %[[T]],
//       CHECK:   %[[Y:.*]] = tosa.mul %{{.*}}, %[[ONET]]
//  CHECK-NEXT:   return %[[Y]]
func.func @wrong_cube_coefficient_is_not_gelu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %three = "tosa.const"() {value = dense<3.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %k = "tosa.const"() {value = dense<0.04> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %s = "tosa.const"() {value = dense<0.797884583> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %x3 = tosa.pow %x, %three : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %kx3 = tosa.mul %k, %x3 {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %inner = tosa.add %x, %kx3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %arg = tosa.mul %s, %inner {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tosa.tanh %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onet = tosa.add %one, %t : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %hx = tosa.mul %half, %x {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %hx, %onet {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// sqrt(1/pi) is not sqrt(2/pi), even in f16.
// CHECK-LABEL: func @sqrt_one_over_pi_is_not_gelu_f16
//   CHECK-NOT:   nf.gelu
//       CHECK:   %[[T:.*]] = tosa.tanh
//       CHECK:   %[[ONET:.*]] = tosa.add %[[T]],
//       CHECK:   %[[Y:.*]] = tosa.mul %{{.*}}, %[[ONET]]
//  CHECK-NEXT:   return %[[Y]]
func.func @sqrt_one_over_pi_is_not_gelu_f16(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf16>} : () -> tensor<1x1xf16>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf16>} : () -> tensor<1x1xf16>
  %three = "tosa.const"() {value = dense<3.0> : tensor<1x1xf16>} : () -> tensor<1x1xf16>
  %k = "tosa.const"() {value = dense<0.044715> : tensor<1x1xf16>} : () -> tensor<1x1xf16>
  %s = "tosa.const"() {value = dense<0.5641896> : tensor<1x1xf16>} : () -> tensor<1x1xf16>
  %x3 = tosa.pow %x, %three : (tensor<4x8xf16>, tensor<1x1xf16>) -> tensor<4x8xf16>
  %kx3 = tosa.mul %k, %x3 {shift = 0 : i8} : (tensor<1x1xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %inner = tosa.add %x, %kx3 : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %arg = tosa.mul %s, %inner {shift = 0 : i8} : (tensor<1x1xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %t = tosa.tanh %arg : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %onet = tosa.add %one, %t : (tensor<1x1xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %hx = tosa.mul %half, %x {shift = 0 : i8} : (tensor<1x1xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %y = tosa.mul %hx, %onet {shift = 0 : i8} : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// -----

// The cube is of another value: 0.5 * x * (1 + tanh(c * (x + k * z^3))).
// CHECK-LABEL: func @cube_of_another_value_is_not_gelu
//   CHECK-NOT:   nf.gelu
//       CHECK:   tosa.pow
//       CHECK:   %[[T:.*]] = tosa.tanh
//       CHECK:   %[[ONET:.*]] = tosa.add %[[T]],
//       CHECK:   %[[Y:.*]] = tosa.mul %{{.*}}, %[[ONET]]
//  CHECK-NEXT:   return %[[Y]]
func.func @cube_of_another_value_is_not_gelu(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %three = "tosa.const"() {value = dense<3.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %k = "tosa.const"() {value = dense<0.044715> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %s = "tosa.const"() {value = dense<0.797884583> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %z3 = tosa.pow %z, %three : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %kz3 = tosa.mul %k, %z3 {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %inner = tosa.add %x, %kz3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %arg = tosa.mul %s, %inner {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tosa.tanh %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onet = tosa.add %one, %t : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %hx = tosa.mul %half, %x {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %hx, %onet {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// x * x * x with one factor another value (x * x * z) is not x^3.
// CHECK-LABEL: func @product_with_another_factor_is_not_a_cube
//   CHECK-NOT:   nf.gelu
//       CHECK:   %[[T:.*]] = tosa.tanh
//       CHECK:   %[[ONET:.*]] = tosa.add %[[T]],
//       CHECK:   %[[Y:.*]] = tosa.mul %{{.*}}, %[[ONET]]
//  CHECK-NEXT:   return %[[Y]]
func.func @product_with_another_factor_is_not_a_cube(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %k = "tosa.const"() {value = dense<0.044715> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %s = "tosa.const"() {value = dense<0.797884583> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %x2 = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %x2z = tosa.mul %x2, %z {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %kx3 = tosa.mul %k, %x2z {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %inner = tosa.add %x, %kx3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %arg = tosa.mul %s, %inner {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tosa.tanh %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onet = tosa.add %one, %t : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %hx = tosa.mul %half, %x {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %hx, %onet {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The outer factor is another value than tanh's x: 0.5 * z * (1 + tanh(..x..)).
// CHECK-LABEL: func @outer_factor_of_another_value_is_not_gelu
//   CHECK-NOT:   nf.gelu
//       CHECK:   %[[T:.*]] = tosa.tanh
//       CHECK:   %[[ONET:.*]] = tosa.add %[[T]],
//       CHECK:   %[[Y:.*]] = tosa.mul %{{.*}}, %[[ONET]]
//  CHECK-NEXT:   return %[[Y]]
func.func @outer_factor_of_another_value_is_not_gelu(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %three = "tosa.const"() {value = dense<3.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %k = "tosa.const"() {value = dense<0.044715> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %s = "tosa.const"() {value = dense<0.797884583> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %x3 = tosa.pow %x, %three : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %kx3 = tosa.mul %k, %x3 {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %inner = tosa.add %x, %kx3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %arg = tosa.mul %s, %inner {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tosa.tanh %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onet = tosa.add %one, %t : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %hz = tosa.mul %half, %z {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %hz, %onet {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The tanh is also returned: raising would lose it, so the chain stays.
// CHECK-LABEL: func @tanh_with_another_user_is_kept
//   CHECK-NOT:   nf.gelu
//       CHECK:   %[[T:.*]] = tosa.tanh
//       CHECK:   %[[ONET:.*]] = tosa.add %[[T]],
//       CHECK:   %[[Y:.*]] = tosa.mul %{{.*}}, %[[ONET]]
//  CHECK-NEXT:   return %[[Y]], %[[T]]
func.func @tanh_with_another_user_is_kept(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %three = "tosa.const"() {value = dense<3.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %k = "tosa.const"() {value = dense<0.044715> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %s = "tosa.const"() {value = dense<0.797884583> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %x3 = tosa.pow %x, %three : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %kx3 = tosa.mul %k, %x3 {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %inner = tosa.add %x, %kx3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %arg = tosa.mul %s, %inner {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tosa.tanh %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onet = tosa.add %one, %t : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %hx = tosa.mul %half, %x {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %hx, %onet {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %t : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The cube is also returned: the chain stays (the inner product x^3 is an
// intermediate too).
// CHECK-LABEL: func @cube_with_another_user_is_kept
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
//   CHECK-NOT:   nf.gelu
//       CHECK:   %[[X2:.*]] = tosa.mul %[[X]], %[[X]]
//       CHECK:   %[[C:.*]] = tosa.mul %[[X2]], %[[X]]
//       CHECK:   %[[T:.*]] = tosa.tanh
//       CHECK:   %[[ONET:.*]] = tosa.add %[[T]],
//       CHECK:   %[[Y:.*]] = tosa.mul %{{.*}}, %[[ONET]]
//  CHECK-NEXT:   return %[[Y]], %[[C]]
func.func @cube_with_another_user_is_kept(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %k = "tosa.const"() {value = dense<0.044715> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %s = "tosa.const"() {value = dense<0.797884583> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %x2 = tosa.mul %x, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %x3 = tosa.mul %x2, %x {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %kx3 = tosa.mul %k, %x3 {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %inner = tosa.add %x, %kx3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %arg = tosa.mul %s, %inner {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tosa.tanh %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onet = tosa.add %one, %t : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %hx = tosa.mul %half, %x {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %hx, %onet {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %x3 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// x may have other users: only the chain's own values must stay inside.
// CHECK-LABEL: func @input_with_other_users_is_raised
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
//       CHECK:   %[[Y:.*]] = nf.gelu %[[X]] {approximate = #nf.approximation<tanh>} : tensor<4x8xf32>
//       CHECK:   %[[R:.*]] = tosa.add %[[Y]], %[[X]]
//       CHECK:   return %[[R]]
func.func @input_with_other_users_is_raised(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %one = "tosa.const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %three = "tosa.const"() {value = dense<3.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %k = "tosa.const"() {value = dense<0.044715> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %s = "tosa.const"() {value = dense<0.797884583> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %x3 = tosa.pow %x, %three : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %kx3 = tosa.mul %k, %x3 {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %inner = tosa.add %x, %kx3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %arg = tosa.mul %s, %inner {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tosa.tanh %arg : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %onet = tosa.add %one, %t : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %hx = tosa.mul %half, %x {shift = 0 : i8} : (tensor<1x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.mul %hx, %onet {shift = 0 : i8} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = tosa.add %y, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
