// nf-specialize-shapes gives one function the static shapes of a call: its
// arguments take the given shapes and every result in its body the shape
// its op's rule derives; other functions are left alone. Each RUN line
// specializes one function.
// RUN: nf-opt %s --nf-specialize-shapes="function=layer_norm_relu shapes=4x768,768,768" | FileCheck %s --check-prefix=LN
// RUN: nf-opt %s --nf-specialize-shapes="function=fused_matmul_bias_gelu shapes=8x128x64,64x256,256" | FileCheck %s --check-prefix=FUSED
// RUN: nf-opt %s --nf-specialize-shapes="function=group_norm_silu shapes=2x16x16x64,64,64" | FileCheck %s --check-prefix=GN
// RUN: nf-opt %s --nf-specialize-shapes="function=conv_bias shapes=2x3x32x32,16x3x3x3,16" | FileCheck %s --check-prefix=CONV
// RUN: nf-opt %s --nf-specialize-shapes="function=layer_norm_grad shapes=6x10,6x10,6x1,6x1,10" | FileCheck %s --check-prefix=GRAD
// RUN: nf-opt %s --nf-specialize-shapes="function=filter_grad shapes=2x3x8x8,2x4x6x6 result-shapes=4x3x3x3" | FileCheck %s --check-prefix=DW
// RUN: nf-opt %s --nf-specialize-shapes="function=cast_to_static shapes=4x8" | FileCheck %s --check-prefix=CAST

// Errors: each one names the problem and leaves the pass failed.
// RUN: not nf-opt %s --nf-specialize-shapes="function=add shapes=2x3,2x4" 2>&1 | FileCheck %s --check-prefix=DISAGREE
// RUN: not nf-opt %s --nf-specialize-shapes="function=layer_norm_relu shapes=4x768,512,768" 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: not nf-opt %s --nf-specialize-shapes="function=group_norm_silu shapes=2x16x16x64,64" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not nf-opt %s --nf-specialize-shapes="function=fused_matmul_bias_gelu shapes=8x128x64,32x256,256" 2>&1 | FileCheck %s --check-prefix=STATIC
// RUN: not nf-opt %s --nf-specialize-shapes="function=cast_to_static shapes=5x8" 2>&1 | FileCheck %s --check-prefix=CONFLICT
// RUN: nf-opt %s --nf-specialize-shapes="function=tosa_abs_transpose shapes=4x8" | FileCheck %s --check-prefix=TOSA
// RUN: not nf-opt %s --nf-specialize-shapes="function=expand_by_argument shapes=8" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not nf-opt %s --nf-specialize-shapes="function=filter_grad shapes=2x3x8x8,2x4x6x6" 2>&1 | FileCheck %s --check-prefix=NORESULT
// RUN: not nf-opt %s --nf-specialize-shapes="function=filter_grad_unreturned shapes=2x3x8x8,2x4x6x6" 2>&1 | FileCheck %s --check-prefix=UNRETURNED
// RUN: not nf-opt %s --nf-specialize-shapes="function=missing shapes=4" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not nf-opt %s --nf-specialize-shapes="function=add shapes=2x3,2xq" 2>&1 | FileCheck %s --check-prefix=PARSE

// LN-LABEL: func.func @layer_norm_relu
// LN-SAME: (%[[X:.+]]: tensor<4x768xf32>, %[[G:.+]]: tensor<768xf32>, %[[B:.+]]: tensor<768xf32>) -> (tensor<4x768xf32>, tensor<4x1xf32>)
// LN: %[[Y:.+]], %{{.+}}, %[[RSTD:.+]] = nf.layer_norm %[[X]] scale %[[G]] bias %[[B]] {axis = 1 : i64} : (tensor<4x768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<4x768xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
// LN: %[[R:.+]] = nf.relu %[[Y]] : tensor<4x768xf32>
// LN: return %[[R]], %[[RSTD]] : tensor<4x768xf32>, tensor<4x1xf32>
// The other functions keep their dynamic dimensions.
// LN-LABEL: func.func @add
// LN-SAME: (%{{.+}}: tensor<?x?xf32>, %{{.+}}: tensor<?x?xf32>) -> tensor<?x?xf32>
func.func @layer_norm_relu(%x: tensor<?x768xf32>, %g: tensor<?xf32>, %b: tensor<?xf32>) -> (tensor<?x768xf32>, tensor<?x1xf32>) {
  %y, %m, %r = nf.layer_norm %x scale %g bias %b {axis = 1 : i64} : (tensor<?x768xf32>, tensor<?xf32>, tensor<?xf32>) -> (tensor<?x768xf32>, tensor<?x1xf32>, tensor<?x1xf32>)
  %0 = nf.relu %y : tensor<?x768xf32>
  return %0, %r : tensor<?x768xf32>, tensor<?x1xf32>
}

// DISAGREE: error: 'nf.add' op all non-scalar operands/results must have the same shape and base type
func.func @add(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = nf.add %a, %b : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// SCALE: error: 'nf.layer_norm' op scale has shape [512]; expected [768] (input.shape[axis:])

// FUSED-LABEL: func.func @fused_matmul_bias_gelu
// FUSED-SAME: -> tensor<8x128x256xf32>
// FUSED: nf.fused(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<8x128x64xf16>, tensor<64x256xf16>, tensor<256xf32>) -> tensor<8x128x256xf32>
// FUSED-NEXT: ^bb0(%{{.+}}: tensor<8x128x64xf16>, %{{.+}}: tensor<64x256xf16>, %{{.+}}: tensor<256xf32>):
// FUSED-NEXT: nf.matmul {{.+}} : tensor<8x128x64xf16>, tensor<64x256xf16> -> tensor<8x128x256xf32>
// FUSED-NEXT: nf.bias_add {{.+}} : tensor<8x128x256xf32>, tensor<256xf32>
// FUSED-NEXT: nf.gelu {{.+}} : tensor<8x128x256xf32>
// FUSED-NEXT: nf.yield {{.+}} : tensor<8x128x256xf32>
// FUSED: return {{.+}} : tensor<8x128x256xf32>
// STATIC: error: 'func.func' op argument #1 of type 'tensor<64x?xf16>' cannot take shape [32, 256]
func.func @fused_matmul_bias_gelu(%x: tensor<?x?x64xf16>, %w: tensor<64x?xf16>, %c: tensor<?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.fused (%x, %w, %c) : (tensor<?x?x64xf16>, tensor<64x?xf16>, tensor<?xf32>) -> tensor<?x?x?xf32> {
  ^bb0(%a: tensor<?x?x64xf16>, %k: tensor<64x?xf16>, %bias: tensor<?xf32>):
    %1 = nf.matmul %a, %k : tensor<?x?x64xf16>, tensor<64x?xf16> -> tensor<?x?x?xf32>
    %2 = nf.bias_add %1, %bias {layout = #nf.layout<nhwc>} : tensor<?x?x?xf32>, tensor<?xf32>
    %3 = nf.gelu %2 : tensor<?x?x?xf32>
    nf.yield %3 : tensor<?x?x?xf32>
  }
  return %0 : tensor<?x?x?xf32>
}

// GN-LABEL: func.func @group_norm_silu
// GN-SAME: -> (tensor<2x16x16x64xf16>, tensor<2x32xf32>)
// GN: nf.group_norm {{.+}} -> (tensor<2x16x16x64xf16>, tensor<2x32xf32>, tensor<2x32xf32>)
// GN: nf.silu {{.+}} : tensor<2x16x16x64xf16>
// COUNT: error: 'func.func' op takes 3 arguments, got 2 shapes
func.func @group_norm_silu(%x: tensor<?x?x?x?xf16>, %g: tensor<?xf16>, %b: tensor<?xf16>) -> (tensor<?x?x?x?xf16>, tensor<?x32xf32>) {
  %y, %m, %r = nf.group_norm %x scale %g bias %b {layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (tensor<?x?x?x?xf16>, tensor<?xf16>, tensor<?xf16>) -> (tensor<?x?x?x?xf16>, tensor<?x32xf32>, tensor<?x?xf32>)
  %0 = nf.silu %y : tensor<?x?x?x?xf16>
  return %0, %m : tensor<?x?x?x?xf16>, tensor<?x32xf32>
}

// The conv2d rule: (32 + 1 + 1 - 3) / 1 + 1 = 32.
// CONV-LABEL: func.func @conv_bias
// CONV: nf.conv2d {{.+}} : tensor<2x3x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<2x16x32x32xf32>
// CONV: nf.bias_add {{.+}} {layout = #nf.layout<nchw>} : tensor<2x16x32x32xf32>, tensor<16xf32>
func.func @conv_bias(%x: tensor<?x3x?x?xf32>, %w: tensor<?x3x3x3xf32>, %b: tensor<?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = nf.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<?x3x?x?xf32>, tensor<?x3x3x3xf32> -> tensor<?x?x?x?xf32>
  %1 = nf.bias_add %0, %b {layout = #nf.layout<nchw>} : tensor<?x?x?x?xf32>, tensor<?xf32>
  return %1 : tensor<?x?x?x?xf32>
}

// GRAD-LABEL: func.func @layer_norm_grad
// GRAD-SAME: -> (tensor<6x10xf32>, tensor<10xf32>, tensor<10xf32>)
// GRAD: nf.layer_norm_grad {{.+}} -> (tensor<6x10xf32>, tensor<10xf32>, tensor<10xf32>)
func.func @layer_norm_grad(%dy: tensor<?x?xf32>, %x: tensor<?x?xf32>, %m: tensor<?x1xf32>, %r: tensor<?x1xf32>, %g: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %dx, %dg, %db = nf.layer_norm_grad %dy, %x, %m, %r scale %g {axis = 1 : i64} : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>)
  return %dx, %dg, %db : tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>
}

// The filter's spatial size does not follow from the operands (with a
// stride above 1 several sizes give one output size): it comes from
// result-shapes; O and I come from the operands.
// DW-LABEL: func.func @filter_grad
// DW-SAME: -> tensor<4x3x3x3xf32>
// DW: nf.conv2d_backprop_filter {{.+}} : tensor<2x3x8x8xf32>, tensor<2x4x6x6xf32> -> tensor<4x3x3x3xf32>
// NORESULT: error: 'nf.conv2d_backprop_filter' op result #0 ('tensor<?x?x?x?xf32>') has dimensions its operands do not determine ([4, 3, ?, ?]); they come from the shape of function result #0, which was not given
func.func @filter_grad(%x: tensor<?x?x?x?xf32>, %dy: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = nf.conv2d_backprop_filter %x, %dy : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// UNRETURNED: error: 'nf.conv2d_backprop_filter' op result #0 ('tensor<?x?x?x?xf32>') has dimensions its operands do not determine ([4, 3, ?, ?]); give them in its type, or return it from the function so that the caller's output buffer gives them
func.func @filter_grad_unreturned(%x: tensor<?x?x?x?xf32>, %dy: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = nf.conv2d_backprop_filter %x, %dy : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %1 = nf.relu %0 : tensor<?x?x?x?xf32>
  return %1 : tensor<?x?x?x?xf32>
}

// CAST-LABEL: func.func @cast_to_static
// CAST-SAME: (%[[X:.+]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// CAST: %[[C:.+]] = tensor.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xf32>
// CAST: nf.relu %[[C]] : tensor<4x8xf32>
// CONFLICT: error: 'tensor.cast' op result #0 has type 'tensor<4x8xf32>', but its operands give shape [5, 8]
func.func @cast_to_static(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = tensor.cast %x : tensor<?x8xf32> to tensor<4x8xf32>
  %1 = nf.relu %0 : tensor<4x8xf32>
  %2 = tensor.cast %1 : tensor<4x8xf32> to tensor<?x8xf32>
  return %2 : tensor<?x8xf32>
}

// Ops that infer their result shapes (every TOSA op) take them from their
// operands: the transpose's from its constant permutation.
// TOSA-LABEL: func.func @tosa_abs_transpose
// TOSA-SAME: (%[[X:.+]]: tensor<4x8xf32>) -> tensor<8x4xf32>
// TOSA: %[[A:.+]] = tosa.abs %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// TOSA: tosa.transpose %[[A]], %{{.+}} : (tensor<4x8xf32>, tensor<2xi32>) -> tensor<8x4xf32>
func.func @tosa_abs_transpose(%x: tensor<?x8xf32>) -> tensor<8x?xf32> {
  %0 = tosa.abs %x : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %perms = "tosa.const"() {value = dense<[1, 0]> : tensor<2xi32>} : () -> tensor<2xi32>
  %1 = tosa.transpose %0, %perms : (tensor<?x8xf32>, tensor<2xi32>) -> tensor<8x?xf32>
  return %1 : tensor<8x?xf32>
}

// UNKNOWN: error: 'tensor.expand_shape' op result #0 has type 'tensor<?x4xf32>'; nf-specialize-shapes derives static shapes for nf ops, tensor.cast and ops that infer their result shapes
func.func @expand_by_argument(%x: tensor<?xf32>) -> tensor<?x4xf32> {
  %c2 = arith.constant 2 : index
  %y = tensor.expand_shape %x [[0, 1]] output_shape [%c2, 4] : tensor<?xf32> into tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// MISSING: error: nf-specialize-shapes: no function @missing in the module
// PARSE: error: nf-specialize-shapes: cannot parse shape '2xq' (expected sizes joined by 'x', e.g. 4x768)
