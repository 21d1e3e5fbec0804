// Folds of nf ops under -canonicalize, with the cases that must stay.
// RUN: nf-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @relu_of_relu
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[R:.+]] = nf.relu %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[R]], %[[R]]
func.func @relu_of_relu(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = nf.relu %x : tensor<4x8xf32>
  %1 = nf.relu %0 : tensor<4x8xf32>
  %2 = nf.relu %1 : tensor<4x8xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// relu is not idempotent through another activation: nothing folds.
// CHECK-LABEL: func.func @relu_of_gelu_stays
// CHECK: %[[G:.+]] = nf.gelu
// CHECK: %[[R:.+]] = nf.relu %[[G]]
// CHECK: return %[[R]]
func.func @relu_of_gelu_stays(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = nf.gelu %x : tensor<4x8xf32>
  %1 = nf.relu %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @bias_add_of_zero
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x4x8xf16>)
// CHECK-NOT: nf.bias_add
// CHECK: return %[[X]]
func.func @bias_add_of_zero(%x: tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16> {
  %zero = arith.constant dense<0.0> : tensor<8xf16>
  %0 = nf.bias_add %x, %zero {layout = #nf.layout<nhwc>} : tensor<2x4x4x8xf16>, tensor<8xf16>
  return %0 : tensor<2x4x4x8xf16>
}

// -----

// A mixed-precision zero bias (f32 on f16) folds as well.
// CHECK-LABEL: func.func @bias_add_of_f32_zero_on_f16
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf16>)
// CHECK-NEXT: return %[[X]]
func.func @bias_add_of_f32_zero_on_f16(%x: tensor<2x8xf16>) -> tensor<2x8xf16> {
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %0 = nf.bias_add %x, %zero {layout = #nf.layout<nhwc>} : tensor<2x8xf16>, tensor<8xf32>
  return %0 : tensor<2x8xf16>
}

// -----

// CHECK-LABEL: func.func @bias_add_of_nonzero_or_mixed_constant_stays
// CHECK: nf.bias_add
// CHECK: nf.bias_add
// CHECK: return
func.func @bias_add_of_nonzero_or_mixed_constant_stays(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %half = arith.constant dense<0.5> : tensor<3xf32>
  %mixed = arith.constant dense<[0.0, 1.0, 0.0]> : tensor<3xf32>
  %0 = nf.bias_add %x, %half {layout = #nf.layout<nhwc>} : tensor<2x3xf32>, tensor<3xf32>
  %1 = nf.bias_add %x, %mixed {layout = #nf.layout<nhwc>} : tensor<2x3xf32>, tensor<3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @add_zero_and_mul_one
// CHECK-SAME: (%[[X:.+]]: tensor<5xf32>)
// CHECK-NOT: nf.add
// CHECK-NOT: nf.mul
// CHECK: return %[[X]], %[[X]]
func.func @add_zero_and_mul_one(%x: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
  %zero = arith.constant dense<0.0> : tensor<5xf32>
  %one = arith.constant dense<1.0> : tensor<5xf32>
  %0 = nf.add %zero, %x : tensor<5xf32>
  %1 = nf.mul %x, %one : tensor<5xf32>
  return %0, %1 : tensor<5xf32>, tensor<5xf32>
}

// -----

// CHECK-LABEL: func.func @mul_by_zero_and_add_one_stay
// CHECK: nf.add
// CHECK: nf.mul
func.func @mul_by_zero_and_add_one_stay(%x: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
  %zero = arith.constant dense<0.0> : tensor<5xf32>
  %one = arith.constant dense<1.0> : tensor<5xf32>
  %0 = nf.add %one, %x : tensor<5xf32>
  %1 = nf.mul %x, %zero : tensor<5xf32>
  return %0, %1 : tensor<5xf32>, tensor<5xf32>
}

// -----

// Unused norms are pure and disappear; used ones stay.
// CHECK-LABEL: func.func @dead_norm_is_erased
// CHECK-NOT: nf.layer_norm
// CHECK: nf.rms_norm
func.func @dead_norm_is_erased(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %z, %zr = nf.rms_norm %x {axis = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>)
  return %z : tensor<4x8xf32>
}

// -----

// Folds apply inside an nf.fused body too.
// CHECK-LABEL: func.func @fold_inside_fused
// CHECK: nf.fused
// CHECK: %[[M:.+]] = nf.matmul
// CHECK-NEXT: %[[R:.+]] = nf.relu %[[M]]
// CHECK-NEXT: nf.yield %[[R]]
func.func @fold_inside_fused(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = nf.fused (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %1 = nf.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %2 = nf.relu %1 : tensor<4x4xf32>
    %3 = nf.relu %2 : tensor<4x4xf32>
    nf.yield %3 : tensor<4x4xf32>
  }
  return %0 : tensor<4x4xf32>
}
