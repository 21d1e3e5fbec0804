// RUN: nf-opt %s --nf-test-raise-patterns=families=relu --split-input-file | FileCheck %s

// CHECK-LABEL: func @tosa_maximum_with_zero
//  CHECK-SAME: (%[[X:.*]]: tensor<4x7xf32>)
//       CHECK:   %[[Y:.*]] = nf.relu %[[X]] : tensor<4x7xf32>
//       CHECK:   return %[[Y]]
func.func @tosa_maximum_with_zero(%x: tensor<4x7xf32>) -> tensor<4x7xf32> {
  %zero = "tosa.const"() {value = dense<0.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %y = tosa.maximum %x, %zero : (tensor<4x7xf32>, tensor<1x1xf32>) -> tensor<4x7xf32>
  return %y : tensor<4x7xf32>
}

// -----

// The zero may come first.
// CHECK-LABEL: func @tosa_maximum_zero_first
//  CHECK-SAME: (%[[X:.*]]: tensor<3xf16>)
//       CHECK:   nf.relu %[[X]] : tensor<3xf16>
func.func @tosa_maximum_zero_first(%x: tensor<3xf16>) -> tensor<3xf16> {
  %zero = "tosa.const"() {value = dense<0.0> : tensor<3xf16>} : () -> tensor<3xf16>
  %y = tosa.maximum %zero, %x : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  return %y : tensor<3xf16>
}

// -----

// CHECK-LABEL: func @arith_maximumf_on_tensors
//       CHECK:   nf.relu %{{.*}} : tensor<8xf32>
func.func @arith_maximumf_on_tensors(%x: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %y = arith.maximumf %x, %zero : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// TensorFlow and torch-mlir emit ReLU as a clamp to [0, FLT_MAX].
// CHECK-LABEL: func @tosa_clamp_to_largest_float
//       CHECK:   nf.relu %{{.*}} : tensor<2x5xf32>
func.func @tosa_clamp_to_largest_float(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %y = tosa.clamp %x {min_fp = 0.0 : f32, max_fp = 3.40282347E+38 : f32, min_int = 0 : i64, max_int = 2147483647 : i64}
      : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// CHECK-LABEL: func @tosa_clamp_to_infinity_bf16
//       CHECK:   nf.relu %{{.*}} : tensor<6xbf16>
func.func @tosa_clamp_to_infinity_bf16(%x: tensor<6xbf16>) -> tensor<6xbf16> {
  %y = tosa.clamp %x {min_fp = 0.0 : f32, max_fp = 0x7F800000 : f32, min_int = 0 : i64, max_int = 0 : i64}
      : (tensor<6xbf16>) -> tensor<6xbf16>
  return %y : tensor<6xbf16>
}

// -----

// ReLU6 is not ReLU.
// CHECK-LABEL: func @clamp_to_six_is_not_relu
//   CHECK-NOT:   nf.relu
//       CHECK:   tosa.clamp
func.func @clamp_to_six_is_not_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tosa.clamp %x {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64}
      : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @maximum_with_nonzero_is_not_relu
//   CHECK-NOT:   nf.relu
//       CHECK:   tosa.maximum
func.func @maximum_with_nonzero_is_not_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = "tosa.const"() {value = dense<0.01> : tensor<4xf32>} : () -> tensor<4xf32>
  %y = tosa.maximum %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// maxnumf(NaN, 0) is 0; relu(NaN) is NaN: not raised.
// CHECK-LABEL: func @maxnumf_is_not_relu
//   CHECK-NOT:   nf.relu
//       CHECK:   arith.maxnumf
func.func @maxnumf_is_not_relu(%x: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %y = arith.maxnumf %x, %zero : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// A maximum that broadcasts x itself (x is 1x7, the result 4x7) is not
// an elementwise relu of x.
// CHECK-LABEL: func @maximum_broadcasting_x_is_not_relu
//   CHECK-NOT:   nf.relu
func.func @maximum_broadcasting_x_is_not_relu(%x: tensor<1x7xf32>) -> tensor<4x7xf32> {
  %zero = "tosa.const"() {value = dense<0.0> : tensor<4x7xf32>} : () -> tensor<4x7xf32>
  %y = tosa.maximum %x, %zero : (tensor<1x7xf32>, tensor<4x7xf32>) -> tensor<4x7xf32>
  return %y : tensor<4x7xf32>
}
