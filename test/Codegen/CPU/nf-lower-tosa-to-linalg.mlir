// nf-lower-tosa-to-linalg turns TOSA ops, and elementwise arith/math ops on
// tensors, into linalg, tensor and arith ops on tensors, marks the
// arguments of such functions read-only for bufferization, and leaves
// functions of nf ops alone untouched.
// RUN: nf-opt %s --nf-lower-tosa-to-linalg | FileCheck %s

// A 1-D bias reshaped to a row, then ReLU as a maximum with a constant.
// CHECK-LABEL: func.func @bias_add_relu
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32> {bufferization.writable = false}, %[[B:.+]]: tensor<8xf32> {bufferization.writable = false})
// CHECK-NOT: tosa.
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<1x1xf32>
// CHECK-DAG: %[[ROW:.+]] = tensor.expand_shape %[[B]] {{\[\[}}0, 1]] output_shape [1, 8]
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[ROW]] : tensor<4x8xf32>, tensor<1x8xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {{.+}} ins(%[[SUM]], %[[ZERO]] : tensor<4x8xf32>, tensor<1x1xf32>)
// CHECK: arith.maximumf
// CHECK-NOT: tosa.
func.func @bias_add_relu(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = "tosa.const"() <{value = dense<0.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %b2 = tosa.reshape %b {new_shape = array<i64: 1, 8>} : (tensor<8xf32>) -> tensor<1x8xf32>
  %s = tosa.add %x, %b2 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %y = tosa.maximum %s, %zero : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// An operand of lower rank is reshaped first (tosa-make-broadcastable).
// CHECK-LABEL: func.func @rank_one_bias
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32> {{.+}}, %[[B:.+]]: tensor<8xf32>
// CHECK: %[[ROW:.+]] = tensor.expand_shape %[[B]] {{\[\[}}0, 1]] output_shape [1, 8]
// CHECK: linalg.generic {{.+}} ins(%[[X]], %[[ROW]] : tensor<4x8xf32>, tensor<1x8xf32>)
func.func @rank_one_bias(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = tosa.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @row_sum
// CHECK: %[[INIT:.+]] = linalg.fill
// CHECK: %[[SUM:.+]] = linalg.reduce ins(%{{.+}} : tensor<4x8xf32>) outs(%[[INIT]] : tensor<4xf32>) dimensions = [1]
// CHECK: tensor.expand_shape %[[SUM]] {{\[\[}}0, 1]] output_shape [4, 1]
func.func @row_sum(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %s = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %s : tensor<4x1xf32>
}

// CHECK-LABEL: func.func @matmul_transpose
// CHECK-NOT: tosa.
// CHECK: linalg.batch_matmul
// CHECK: linalg.transpose
func.func @matmul_transpose(%a: tensor<2x4x8xf32>, %b: tensor<2x8x5xf32>) -> tensor<2x5x4xf32> {
  %perm = "tosa.const"() <{value = dense<[0, 2, 1]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %0 = tosa.matmul %a, %b : (tensor<2x4x8xf32>, tensor<2x8x5xf32>) -> tensor<2x4x5xf32>
  %1 = tosa.transpose %0, %perm : (tensor<2x4x5xf32>, tensor<3xi32>) -> tensor<2x5x4xf32>
  return %1 : tensor<2x5x4xf32>
}

// arith and math ops on tensors become linalg.generic ops too; the first
// writes into its operand, which must not be the caller's buffer.
// CHECK-LABEL: func.func @arith_on_tensors
// CHECK-SAME: {bufferization.writable = false}
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: linalg.generic
// CHECK: math.tanh
func.func @arith_on_tensors(%a: tensor<16xf32>) -> tensor<16xf32> {
  %0 = arith.mulf %a, %a : tensor<16xf32>
  %1 = math.tanh %0 : tensor<16xf32>
  return %1 : tensor<16xf32>
}

// In a mixed function only the TOSA ops change.
// CHECK-LABEL: func.func @tosa_then_nf
// CHECK: %[[SUM:.+]] = linalg.generic
// CHECK: nf.layer_norm %[[SUM]]
func.func @tosa_then_nf(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tosa.add %x, %r : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y, %m, %s = nf.layer_norm %0 {axis = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y : tensor<4x8xf32>
}

// A function of nf ops alone is not touched: relu(relu(x)) would fold under
// the greedy rewrites of tosa-make-broadcastable, and no argument is marked.
// CHECK-LABEL: func.func @nf_only_is_untouched
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[R:.+]] = nf.relu %[[X]]
// CHECK-NEXT: %[[RR:.+]] = nf.relu %[[R]]
// CHECK-NEXT: return %[[RR]]
func.func @nf_only_is_untouched(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = nf.relu %x : tensor<4x8xf32>
  %1 = nf.relu %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// A convolution of f16 data with an f32 result (f32 accumulation): input,
// weight and bias are widened to f32 first (upstream's lowering would extend
// them with arith.extsi, which takes integers only); exact, as an f16
// product is exact in f32.
// CHECK-LABEL: func.func @conv_of_f16_data_with_an_f32_result
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4x2xf16> {{.+}}, %[[W:.+]]: tensor<3x1x1x2xf16> {{.+}}, %[[B:.+]]: tensor<3xf16> {{.+}})
// CHECK-NOT: arith.extsi
// CHECK: %[[XW:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<1x4x4x2xf16>) outs(%{{.+}} : tensor<1x4x4x2xf32>)
// CHECK: arith.extf
// CHECK: %[[WW:.+]] = linalg.generic {{.+}} ins(%[[W]] : tensor<3x1x1x2xf16>) outs(%{{.+}} : tensor<3x1x1x2xf32>)
// CHECK: arith.extf
// CHECK: %[[BW:.+]] = linalg.generic {{.+}} ins(%[[B]] : tensor<3xf16>) outs(%{{.+}} : tensor<3xf32>)
// CHECK: arith.extf
// CHECK: linalg.conv_2d_nhwc_fhwc {{.+}} ins(%[[XW]], %[[WW]] : tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>)
// CHECK-NOT: arith.extsi
func.func @conv_of_f16_data_with_an_f32_result(%x: tensor<1x4x4x2xf16>, %w: tensor<3x1x1x2xf16>, %b: tensor<3xf16>) -> tensor<1x4x4x3xf32> {
  %y = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x4x4x2xf16>, tensor<3x1x1x2xf16>, tensor<3xf16>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}
