// nf-fuse with normfuse's default control function: each producer and its
// pointwise neighbours become one nf.fused op.
// RUN: nf-opt %s --nf-fuse --split-input-file | FileCheck %s

// CHECK-LABEL: func @matmul_bias_gelu_is_one_fused_op
//  CHECK-SAME: (%[[X:.*]]: tensor<16x32xf32>, %[[W:.*]]: tensor<32x64xf32>, %[[B:.*]]: tensor<64xf32>)
//       CHECK:   %[[F:.*]] = nf.fused(%[[X]], %[[W]], %[[B]]) : (tensor<16x32xf32>, tensor<32x64xf32>, tensor<64xf32>) -> tensor<16x64xf32> {
//       CHECK:   ^bb0(%[[A0:.*]]: tensor<16x32xf32>, %[[A1:.*]]: tensor<32x64xf32>, %[[A2:.*]]: tensor<64xf32>):
//       CHECK:     %[[M:.*]] = nf.matmul %[[A0]], %[[A1]]
//       CHECK:     %[[BA:.*]] = nf.bias_add %[[M]], %[[A2]]
//       CHECK:     %[[G:.*]] = nf.gelu %[[BA]] {approximate = #nf.approximation<tanh>}
//       CHECK:     nf.yield %[[G]] : tensor<16x64xf32>
//       CHECK:   }
//       CHECK:   return %[[F]]
func.func @matmul_bias_gelu_is_one_fused_op(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> {
  %m = nf.matmul %x, %w : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %ba = nf.bias_add %m, %b {layout = #nf.layout<nhwc>} : tensor<16x64xf32>, tensor<64xf32>
  %g = nf.gelu %ba {approximate = #nf.approximation<tanh>} : tensor<16x64xf32>
  return %g : tensor<16x64xf32>
}

// -----

// The biased value is needed elsewhere: the chain stops there and yields
// it; the GELU stays outside, reading the yielded value.
// CHECK-LABEL: func @epilogue_stops_at_a_value_with_two_users
//       CHECK:   %[[F:.*]] = nf.fused
//       CHECK:     nf.matmul
//       CHECK:     %[[BA:.*]] = nf.bias_add
//   CHECK-NOT:     nf.gelu
//       CHECK:     nf.yield %[[BA]] : tensor<16x64xf32>
//       CHECK:   %[[G:.*]] = nf.gelu %[[F]]
//       CHECK:   return %[[G]], %[[F]]
func.func @epilogue_stops_at_a_value_with_two_users(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>) {
  %m = nf.matmul %x, %w : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %ba = nf.bias_add %m, %b {layout = #nf.layout<nhwc>} : tensor<16x64xf32>, tensor<64xf32>
  %g = nf.gelu %ba : tensor<16x64xf32>
  return %g, %ba : tensor<16x64xf32>, tensor<16x64xf32>
}

// -----

// Post-LN transformer: the residual add joins the LayerNorm as its
// prologue, not the matmul as its epilogue; the norm's statistics are
// yielded because they are returned.
// CHECK-LABEL: func @residual_add_is_the_layer_norm_prologue
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>, %[[W:.*]]: tensor<8x8xf16>, %[[B:.*]]: tensor<8xf16>)
//       CHECK:   %[[F0:.*]] = nf.fused(%[[X]], %[[W]], %[[B]])
//       CHECK:     nf.matmul
//       CHECK:     %[[BA:.*]] = nf.bias_add
//       CHECK:     nf.yield %[[BA]] : tensor<4x8xf16>
//       CHECK:   %[[F1:.*]]:3 = nf.fused(%[[X]], %[[F0]]) : (tensor<4x8xf16>, tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x1xf32>, tensor<4x1xf32>)
//       CHECK:   ^bb0(%[[R0:.*]]: tensor<4x8xf16>, %[[R1:.*]]: tensor<4x8xf16>):
//       CHECK:     %[[SUM:.*]] = nf.add %[[R0]], %[[R1]]
//       CHECK:     %[[Y:.*]], %[[MEAN:.*]], %[[RSTD:.*]] = nf.layer_norm %[[SUM]]
//       CHECK:     nf.yield %[[Y]], %[[MEAN]], %[[RSTD]]
//       CHECK:   return %[[F1]]#0, %[[F1]]#1, %[[F1]]#2
func.func @residual_add_is_the_layer_norm_prologue(%x: tensor<4x8xf16>, %w: tensor<8x8xf16>, %b: tensor<8xf16>)
    -> (tensor<4x8xf16>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %m = nf.matmul %x, %w : tensor<4x8xf16>, tensor<8x8xf16> -> tensor<4x8xf16>
  %ba = nf.bias_add %m, %b {layout = #nf.layout<nhwc>} : tensor<4x8xf16>, tensor<8xf16>
  %r = nf.add %x, %ba : tensor<4x8xf16>
  %y, %mean, %rstd = nf.layer_norm %r {axis = 1 : i64, epsilon = 1.0e-5}
      : (tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y, %mean, %rstd : tensor<4x8xf16>, tensor<4x1xf32>, tensor<4x1xf32>
}

// -----

// Pre-LN: the residual sum is also the next residual, so it must be
// written anyway; the default policy leaves it out of the norm.
// CHECK-LABEL: func @residual_sum_with_other_users_is_not_a_prologue
//       CHECK:   %[[SUM:.*]] = nf.add
//       CHECK:   nf.layer_norm %[[SUM]]
//   CHECK-NOT:   nf.fused
func.func @residual_sum_with_other_users_is_not_a_prologue(%x: tensor<4x8xf32>, %h: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %r = nf.add %x, %h : tensor<4x8xf32>
  %y, %mean, %rstd = nf.layer_norm %r {axis = 1 : i64, epsilon = 1.0e-5}
      : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y, %r : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// UNet: GroupNorm on NHWC with its SiLU; the unused statistics are not
// yielded.
// CHECK-LABEL: func @group_norm_nhwc_with_silu
//       CHECK:   %[[F:.*]] = nf.fused(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x4x4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<2x4x4x8xf16>
//       CHECK:     %[[Y:.*]], %{{.*}}, %{{.*}} = nf.group_norm
//       CHECK:     %[[S:.*]] = nf.silu %[[Y]]
//       CHECK:     nf.yield %[[S]] : tensor<2x4x4x8xf16>
//       CHECK:   return %[[F]]
func.func @group_norm_nhwc_with_silu(%x: tensor<2x4x4x8xf16>, %g: tensor<8xf16>, %b: tensor<8xf16>) -> tensor<2x4x4x8xf16> {
  %y, %m, %r = nf.group_norm %x scale %g bias %b {layout = #nf.layout<nhwc>, num_groups = 4 : i64}
      : (tensor<2x4x4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> (tensor<2x4x4x8xf16>, tensor<2x4xf32>, tensor<2x4xf32>)
  %s = nf.silu %y : tensor<2x4x4x8xf16>
  return %s : tensor<2x4x4x8xf16>
}

// -----

// Backward: the GELU gradient and the bias gradient are one kernel; the
// activation gradient is also needed by the matmul backward, so it is
// yielded beside the bias gradient.
// CHECK-LABEL: func @gelu_grad_with_bias_grad
//  CHECK-SAME: (%[[DY:.*]]: tensor<16x64xf32>, %[[X:.*]]: tensor<16x64xf32>)
//       CHECK:   %[[F:.*]]:2 = nf.fused(%[[DY]], %[[X]]) : (tensor<16x64xf32>, tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<64xf32>)
//       CHECK:     %[[DG:.*]] = nf.gelu_grad
//       CHECK:     %[[DB:.*]] = nf.bias_add_grad %[[DG]]
//       CHECK:     nf.yield %[[DG]], %[[DB]]
//       CHECK:   return %[[F]]#0, %[[F]]#1
func.func @gelu_grad_with_bias_grad(%dy: tensor<16x64xf32>, %x: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<64xf32>) {
  %dg = nf.gelu_grad %dy, %x : tensor<16x64xf32>
  %db = nf.bias_add_grad %dg {layout = #nf.layout<nhwc>} : tensor<16x64xf32> -> tensor<64xf32>
  return %dg, %db : tensor<16x64xf32>, tensor<64xf32>
}

// -----

// CHECK-LABEL: func @a_lone_producer_is_not_wrapped
//   CHECK-NOT:   nf.fused
//       CHECK:   nf.matmul
func.func @a_lone_producer_is_not_wrapped(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = nf.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %m : tensor<4x4xf32>
}

// -----

// The matmul's result is the bias of the bias_add, not its data: no fusion.
// CHECK-LABEL: func @a_value_used_as_the_bias_is_not_fused
//   CHECK-NOT:   nf.fused
func.func @a_value_used_as_the_bias_is_not_fused(%x: tensor<1x4xf32>, %w: tensor<4x4xf32>, %d: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %m = nf.matmul %x, %w : tensor<1x4xf32>, tensor<4x4xf32> -> tensor<1x4xf32>
  %v = tensor.collapse_shape %m [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
  %y = nf.bias_add %d, %v {layout = #nf.layout<nhwc>} : tensor<3x4xf32>, tensor<4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// The norm's mean is read by an op placed before the ReLU. Fusing the ReLU
// would define the mean after that reader, so the group shrinks back to
// the lone norm, which is not wrapped.
// CHECK-LABEL: func @a_group_shrinks_rather_than_move_a_value_past_its_user
//   CHECK-NOT:   nf.fused
//       CHECK:   %[[Y:.*]], %[[MEAN:.*]], %{{.*}} = nf.layer_norm
//       CHECK:   nf.relu %[[MEAN]]
//       CHECK:   nf.relu %[[Y]]
func.func @a_group_shrinks_rather_than_move_a_value_past_its_user(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %y, %mean, %rstd = nf.layer_norm %x {axis = 1 : i64, epsilon = 1.0e-5}
      : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %m = nf.relu %mean : tensor<4x1xf32>
  %z = nf.relu %y : tensor<4x8xf32>
  return %z, %m : tensor<4x8xf32>, tensor<4x1xf32>
}

// -----

// An op already inside an nf.fused op is left alone.
// CHECK-LABEL: func @ops_inside_a_fused_op_are_left_alone
//       CHECK:   nf.fused
//       CHECK:     nf.matmul
//  CHECK-NEXT:     nf.yield
//       CHECK:   nf.relu
func.func @ops_inside_a_fused_op_are_left_alone(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %f = nf.fused (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %m = nf.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    nf.yield %m : tensor<4x4xf32>
  }
  %r = nf.relu %f : tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
