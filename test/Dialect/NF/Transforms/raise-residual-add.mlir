// RUN: nf-opt %s --nf-test-raise-patterns=families=residual-add --split-input-file | FileCheck %s

// CHECK-LABEL: func @tosa_add_of_two_tensors
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf16>, %[[H:.*]]: tensor<2x3x4xf16>)
//       CHECK:   %[[Y:.*]] = nf.add %[[X]], %[[H]] : tensor<2x3x4xf16>
//       CHECK:   return %[[Y]]
func.func @tosa_add_of_two_tensors(%x: tensor<2x3x4xf16>, %h: tensor<2x3x4xf16>) -> tensor<2x3x4xf16> {
  %y = tosa.add %x, %h : (tensor<2x3x4xf16>, tensor<2x3x4xf16>) -> tensor<2x3x4xf16>
  return %y : tensor<2x3x4xf16>
}

// -----

// CHECK-LABEL: func @arith_addf_on_tensors
//       CHECK:   nf.add %{{.*}}, %{{.*}} : tensor<5xf32>
func.func @arith_addf_on_tensors(%x: tensor<5xf32>, %h: tensor<5xf32>) -> tensor<5xf32> {
  %y = arith.addf %x, %h : tensor<5xf32>
  return %y : tensor<5xf32>
}

// -----

// A broadcasting add is a bias (or something else), not a residual.
// CHECK-LABEL: func @broadcasting_add_is_left_alone
//   CHECK-NOT:   nf.add
//       CHECK:   tosa.add
func.func @broadcasting_add_is_left_alone(%x: tensor<2x4xf32>, %b: tensor<1x4xf32>) -> tensor<2x4xf32> {
  %y = tosa.add %x, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Of dynamic shapes, a TOSA add broadcasts a dimension that is 1 at run
// time (a 1x8 and a 5x8 are both tensor<?x8xf32>): not a residual add.
// An arith.addf of dynamic shapes does not broadcast.
// CHECK-LABEL: func @dynamic_tosa_add_is_left_alone
//   CHECK-NOT:   nf.add
//       CHECK:   tosa.add
// CHECK-LABEL: func @dynamic_arith_addf
//       CHECK:   nf.add
func.func @dynamic_tosa_add_is_left_alone(%x: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = tosa.add %x, %r : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
func.func @dynamic_arith_addf(%x: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = arith.addf %x, %r : tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Adding a constant (the "+ 1" of GELU, the "+ eps" of a norm) is left to
// the chain that holds it.
// CHECK-LABEL: func @add_of_a_constant_is_left_alone
//   CHECK-NOT:   nf.add
//       CHECK:   tosa.add
func.func @add_of_a_constant_is_left_alone(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %one = "tosa.const"() {value = dense<1.0> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
  %y = tosa.add %x, %one : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// A full-shape operand reshaped from a vector is a bias: left to bias-add.
// CHECK-LABEL: func @add_of_a_reshaped_vector_is_left_alone
//   CHECK-NOT:   nf.add
//       CHECK:   tosa.add
func.func @add_of_a_reshaped_vector_is_left_alone(%x: tensor<1x4xf32>, %b: tensor<4xf32>) -> tensor<1x4xf32> {
  %b2 = tosa.reshape %b {new_shape = array<i64: 1, 4>} : (tensor<4xf32>) -> tensor<1x4xf32>
  %y = tosa.add %x, %b2 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// Integer adds are not nf's business.
// CHECK-LABEL: func @integer_add_is_left_alone
//   CHECK-NOT:   nf.add
func.func @integer_add_is_left_alone(%x: tensor<4xi32>, %h: tensor<4xi32>) -> tensor<4xi32> {
  %y = tosa.add %x, %h : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %y : tensor<4xi32>
}
