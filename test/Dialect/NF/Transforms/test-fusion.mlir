// The fusion driver under other control functions (nf-test-fusion): what a
// control function may choose, and the legality rules none can override.
// RUN: nf-opt %s --nf-test-fusion=control=none --split-input-file | FileCheck %s --check-prefix=NONE
// RUN: nf-opt %s --nf-test-fusion=control=all --split-input-file | FileCheck %s --check-prefix=ALL
// RUN: nf-opt %s --nf-test-fusion=control=epilogues --split-input-file | FileCheck %s --check-prefix=EPI
// RUN: not nf-opt %s --nf-test-fusion=control=bogus 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: nf-test-fusion: unknown control 'bogus' (known: default, all, none, epilogues)

// A control function that refuses everything leaves the IR as it is.
// NONE-LABEL: func @residual_transformer_tail
//   NONE-NOT:   nf.fused
// With every legal fusion accepted, the residual add is taken by the
// matmul's epilogue (producers are visited in order), and the norm stays
// alone.
// ALL-LABEL: func @residual_transformer_tail
//       ALL:   %[[F:.*]] = nf.fused
//       ALL:     nf.matmul
//       ALL:     nf.bias_add
//       ALL:     %[[SUM:.*]] = nf.add
//       ALL:     nf.yield %[[SUM]]
//       ALL:   nf.layer_norm %[[F]]
//   ALL-NOT:   nf.fused
// Without prologues, the default's refusal of the residual add as an
// epilogue is not made: it also goes to the matmul.
// EPI-LABEL: func @residual_transformer_tail
//       EPI:   %[[F:.*]] = nf.fused
//       EPI:     nf.add
//       EPI:   nf.layer_norm %[[F]]
func.func @residual_transformer_tail(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %m = nf.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %ba = nf.bias_add %m, %b {layout = #nf.layout<nhwc>} : tensor<4x8xf32>, tensor<8xf32>
  %r = nf.add %x, %ba : tensor<4x8xf32>
  %y, %mean, %rstd = nf.layer_norm %r {axis = 1 : i64, epsilon = 1.0e-5}
      : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y : tensor<4x8xf32>
}

// -----

// A prologue with another user, accepted by the control function, is
// computed once inside the group and yielded to that user: never
// duplicated. Without prologues it stays outside.
// ALL-LABEL: func @prologue_with_another_user_is_yielded
//       ALL:   %[[F:.*]]:2 = nf.fused
//       ALL:     %[[SUM:.*]] = nf.add
//       ALL:     %[[Y:.*]], %{{.*}}, %{{.*}} = nf.layer_norm %[[SUM]]
//       ALL:     nf.yield %[[SUM]], %[[Y]]
//   ALL-NOT:   nf.add
//       ALL:   return %[[F]]#1, %[[F]]#0
// EPI-LABEL: func @prologue_with_another_user_is_yielded
//   EPI-NOT:   nf.fused
func.func @prologue_with_another_user_is_yielded(%x: tensor<4x8xf32>, %h: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %r = nf.add %x, %h : tensor<4x8xf32>
  %y, %mean, %rstd = nf.layer_norm %r {axis = 1 : i64, epsilon = 1.0e-5}
      : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y, %r : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Even when every fusion is accepted, an epilogue chain never takes a
// value with two users: the relu and the gelu both read the bias_add,
// so neither joins.
// ALL-LABEL: func @two_consumers_are_never_both_fused
//       ALL:   %[[F:.*]] = nf.fused
//       ALL:     nf.matmul
//       ALL:     %[[BA:.*]] = nf.bias_add
//       ALL:     nf.yield %[[BA]]
//       ALL:   nf.relu %[[F]]
//       ALL:   nf.gelu %[[F]]
// EPI-LABEL: func @two_consumers_are_never_both_fused
func.func @two_consumers_are_never_both_fused(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = nf.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %ba = nf.bias_add %m, %b {layout = #nf.layout<nhwc>} : tensor<4x8xf32>, tensor<8xf32>
  %r = nf.relu %ba : tensor<4x8xf32>
  %g = nf.gelu %ba : tensor<4x8xf32>
  return %r, %g : tensor<4x8xf32>, tensor<4x8xf32>
}
