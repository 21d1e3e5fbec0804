// Every nf op prints, re-parses and prints again to the same text, in the
// custom form and through the generic form.
// RUN: nf-opt %s | nf-opt | FileCheck %s
// RUN: nf-opt %s --mlir-print-op-generic | nf-opt | FileCheck %s

// CHECK-LABEL: func.func @layer_norm_with_scale_and_bias
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x8xf32>, %[[S:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK: %{{.+}}, %{{.+}}, %{{.+}} = nf.layer_norm %[[X]] scale %[[S]] bias %[[B]] {axis = 2 : i64, epsilon = 9.9999999999999995E-7 : f64} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
func.func @layer_norm_with_scale_and_bias(%x: tensor<2x3x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %y, %mean, %rstd = nf.layer_norm %x scale %s bias %b {axis = 2 : i64, epsilon = 1.0e-6} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
  return %y : tensor<2x3x8xf32>
}

// The default epsilon (1e-5) is elided; a bias without a scale stays a bias.
// CHECK-LABEL: func.func @layer_norm_bias_only_f16_over_two_dims
// CHECK: nf.layer_norm %{{.+}} bias %{{.+}} {axis = 1 : i64} : (tensor<4x7x5xf16>, tensor<7x5xf32>) -> (tensor<4x7x5xf16>, tensor<4x1x1xf32>, tensor<4x1x1xf32>)
func.func @layer_norm_bias_only_f16_over_two_dims(%x: tensor<4x7x5xf16>, %b: tensor<7x5xf32>) -> tensor<4x7x5xf16> {
  %y, %mean, %rstd = nf.layer_norm %x bias %b {axis = 1 : i64} : (tensor<4x7x5xf16>, tensor<7x5xf32>) -> (tensor<4x7x5xf16>, tensor<4x1x1xf32>, tensor<4x1x1xf32>)
  return %y : tensor<4x7x5xf16>
}

// CHECK-LABEL: func.func @layer_norm_dynamic_rows
// CHECK: nf.layer_norm %{{.+}} {axis = 1 : i64} : (tensor<?x1537xbf16>) -> (tensor<?x1537xbf16>, tensor<?x1xf32>, tensor<?x1xf32>)
func.func @layer_norm_dynamic_rows(%x: tensor<?x1537xbf16>) -> tensor<?x1537xbf16> {
  %y, %mean, %rstd = nf.layer_norm %x {axis = 1 : i64} : (tensor<?x1537xbf16>) -> (tensor<?x1537xbf16>, tensor<?x1xf32>, tensor<?x1xf32>)
  return %y : tensor<?x1537xbf16>
}

// CHECK-LABEL: func.func @rms_norm_bf16
// CHECK: nf.rms_norm %{{.+}} scale %{{.+}} {axis = 1 : i64, epsilon = 9.9999999999999995E-7 : f64} : (tensor<16x4096xbf16>, tensor<4096xbf16>) -> (tensor<16x4096xbf16>, tensor<16x1xf32>)
func.func @rms_norm_bf16(%x: tensor<16x4096xbf16>, %s: tensor<4096xbf16>) -> tensor<16x4096xbf16> {
  %y, %rstd = nf.rms_norm %x scale %s {axis = 1 : i64, epsilon = 1.0e-6} : (tensor<16x4096xbf16>, tensor<4096xbf16>) -> (tensor<16x4096xbf16>, tensor<16x1xf32>)
  return %y : tensor<16x4096xbf16>
}

// CHECK-LABEL: func.func @group_norm_nchw
// CHECK: nf.group_norm %{{.+}} scale %{{.+}} bias %{{.+}} {num_groups = 4 : i64} : (tensor<2x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x5x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
func.func @group_norm_nchw(%x: tensor<2x8x5x5xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8x5x5xf32> {
  %y, %mean, %rstd = nf.group_norm %x scale %s bias %b {num_groups = 4 : i64, layout = #nf.layout<nchw>} : (tensor<2x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x5x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y : tensor<2x8x5x5xf32>
}

// CHECK-LABEL: func.func @group_norm_nhwc
// CHECK: nf.group_norm %{{.+}} scale %{{.+}} bias %{{.+}} {layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (tensor<2x16x16x320xf16>, tensor<320xf16>, tensor<320xf16>) -> (tensor<2x16x16x320xf16>, tensor<2x32xf32>, tensor<2x32xf32>)
func.func @group_norm_nhwc(%x: tensor<2x16x16x320xf16>, %s: tensor<320xf16>, %b: tensor<320xf16>) -> tensor<2x16x16x320xf16> {
  %y, %mean, %rstd = nf.group_norm %x scale %s bias %b {num_groups = 32 : i64, layout = #nf.layout<nhwc>} : (tensor<2x16x16x320xf16>, tensor<320xf16>, tensor<320xf16>) -> (tensor<2x16x16x320xf16>, tensor<2x32xf32>, tensor<2x32xf32>)
  return %y : tensor<2x16x16x320xf16>
}

// CHECK-LABEL: func.func @instance_norm_both_layouts
// CHECK: nf.instance_norm %{{.+}} scale %{{.+}} bias %{{.+}} : (tensor<2x3x7x7xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x7x7xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK: nf.instance_norm %{{.+}} {layout = #nf.layout<nhwc>} : (tensor<2x7x7x3xf64>) -> (tensor<2x7x7x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>)
func.func @instance_norm_both_layouts(%x: tensor<2x3x7x7xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %h: tensor<2x7x7x3xf64>) -> (tensor<2x3x7x7xf32>, tensor<2x7x7x3xf64>) {
  %y, %mean, %rstd = nf.instance_norm %x scale %s bias %b : (tensor<2x3x7x7xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x7x7xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  %z, %zmean, %zrstd = nf.instance_norm %h {layout = #nf.layout<nhwc>} : (tensor<2x7x7x3xf64>) -> (tensor<2x7x7x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>)
  return %y, %z : tensor<2x3x7x7xf32>, tensor<2x7x7x3xf64>
}

// CHECK-LABEL: func.func @batch_norm_training_nhwc
// CHECK-SAME: (%[[X:.+]]: tensor<8x4x4x16xf16>, %[[S:.+]]: tensor<16xf16>, %[[B:.+]]: tensor<16xf16>, %[[RM:.+]]: tensor<16xf32>, %[[RV:.+]]: tensor<16xf32>)
// CHECK: nf.batch_norm_training %[[X]] scale %[[S]] bias %[[B]] running(%[[RM]], %[[RV]]) {layout = #nf.layout<nhwc>, momentum = 3.000000e-01 : f64} : (tensor<8x4x4x16xf16>, tensor<16xf16>, tensor<16xf16>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x4x4x16xf16>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
func.func @batch_norm_training_nhwc(%x: tensor<8x4x4x16xf16>, %s: tensor<16xf16>, %b: tensor<16xf16>, %rm: tensor<16xf32>, %rv: tensor<16xf32>) -> tensor<8x4x4x16xf16> {
  %y, %bm, %br, %nrm, %nrv = nf.batch_norm_training %x scale %s bias %b running(%rm, %rv) {layout = #nf.layout<nhwc>, momentum = 0.3} : (tensor<8x4x4x16xf16>, tensor<16xf16>, tensor<16xf16>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x4x4x16xf16>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %y : tensor<8x4x4x16xf16>
}

// ONNX's biased running-variance update; one value per channel is allowed
// then.
// CHECK-LABEL: func.func @batch_norm_training_biased
// CHECK: nf.batch_norm_training %{{.+}} running(%{{.+}}, %{{.+}}) {unbiased_running_var = false} : (tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
func.func @batch_norm_training_biased(%x: tensor<1x4xf32>, %rm: tensor<4xf32>) -> tensor<1x4xf32> {
  %y, %bm, %br, %nm, %nv = nf.batch_norm_training %x running(%rm, %rm) {unbiased_running_var = false} : (tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<1x4xf32>
}

// CHECK-LABEL: func.func @batch_norm_inference_nchw
// CHECK: nf.batch_norm_inference %{{.+}} running(%{{.+}}, %{{.+}}) : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
func.func @batch_norm_inference_nchw(%x: tensor<8x16x4x4xf32>, %rm: tensor<16xf32>, %rv: tensor<16xf32>) -> tensor<8x16x4x4xf32> {
  %y = nf.batch_norm_inference %x running(%rm, %rv) : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  return %y : tensor<8x16x4x4xf32>
}

// CHECK-LABEL: func.func @norm_grads
// CHECK: nf.layer_norm_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} scale %{{.+}} {axis = 1 : i64} : (tensor<4x1000xf32>, tensor<4x1000xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<1000xf32>) -> (tensor<4x1000xf32>, tensor<1000xf32>, tensor<1000xf32>)
// CHECK: nf.rms_norm_grad %{{.+}}, %{{.+}}, %{{.+}} {axis = 1 : i64} : (tensor<4x1000xf32>, tensor<4x1000xf32>, tensor<4x1xf32>) -> (tensor<4x1000xf32>, tensor<1000xf32>)
// CHECK: nf.group_norm_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} scale %{{.+}} {layout = #nf.layout<nhwc>, num_groups = 2 : i64} : (tensor<2x3x3x8xf16>, tensor<2x3x3x8xf16>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<8xf16>) -> (tensor<2x3x3x8xf16>, tensor<8xf32>, tensor<8xf32>)
// CHECK: nf.instance_norm_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<2x8x3x3xf32>, tensor<2x8x3x3xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> (tensor<2x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: nf.batch_norm_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} scale %{{.+}} : (tensor<2x8x3x3xf32>, tensor<2x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>)
func.func @norm_grads(%dy: tensor<4x1000xf32>, %x: tensor<4x1000xf32>, %m: tensor<4x1xf32>, %r: tensor<4x1xf32>, %s: tensor<1000xf32>,
                      %gdy: tensor<2x3x3x8xf16>, %gx: tensor<2x3x3x8xf16>, %gm: tensor<2x2xf32>, %gs: tensor<8xf16>,
                      %idy: tensor<2x8x3x3xf32>, %ix: tensor<2x8x3x3xf32>, %im: tensor<2x8xf32>, %bm: tensor<8xf32>) {
  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r scale %s {axis = 1 : i64} : (tensor<4x1000xf32>, tensor<4x1000xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<1000xf32>) -> (tensor<4x1000xf32>, tensor<1000xf32>, tensor<1000xf32>)
  %rdx, %rds = nf.rms_norm_grad %dy, %x, %r {axis = 1 : i64} : (tensor<4x1000xf32>, tensor<4x1000xf32>, tensor<4x1xf32>) -> (tensor<4x1000xf32>, tensor<1000xf32>)
  %gdx, %gds, %gdb = nf.group_norm_grad %gdy, %gx, %gm, %gm scale %gs {num_groups = 2 : i64, layout = #nf.layout<nhwc>} : (tensor<2x3x3x8xf16>, tensor<2x3x3x8xf16>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<8xf16>) -> (tensor<2x3x3x8xf16>, tensor<8xf32>, tensor<8xf32>)
  %idx, %ids, %idb = nf.instance_norm_grad %idy, %ix, %im, %im : (tensor<2x8x3x3xf32>, tensor<2x8x3x3xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> (tensor<2x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>)
  %bdx, %bds, %bdb = nf.batch_norm_grad %idy, %ix, %bm, %bm scale %bm : (tensor<2x8x3x3xf32>, tensor<2x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// CHECK-LABEL: func.func @pointwise
// CHECK-SAME: (%[[X:.+]]: tensor<4x3072xf16>, %[[B:.+]]: tensor<3072xf16>, %[[R:.+]]: tensor<4x3072xf16>)
// CHECK: %[[BA:.+]] = nf.bias_add %[[X]], %[[B]] {layout = #nf.layout<nhwc>} : tensor<4x3072xf16>, tensor<3072xf16>
// CHECK: %[[RELU:.+]] = nf.relu %[[BA]] : tensor<4x3072xf16>
// CHECK: %[[GE:.+]] = nf.gelu %[[RELU]] : tensor<4x3072xf16>
// CHECK: %[[GT:.+]] = nf.gelu %[[GE]] {approximate = #nf.approximation<tanh>} : tensor<4x3072xf16>
// CHECK: %[[SI:.+]] = nf.silu %[[GT]] : tensor<4x3072xf16>
// CHECK: %[[ADD:.+]] = nf.add %[[SI]], %[[R]] : tensor<4x3072xf16>
// CHECK: nf.mul %[[ADD]], %[[R]] : tensor<4x3072xf16>
func.func @pointwise(%x: tensor<4x3072xf16>, %b: tensor<3072xf16>, %r: tensor<4x3072xf16>) -> tensor<4x3072xf16> {
  %0 = nf.bias_add %x, %b {layout = #nf.layout<nhwc>} : tensor<4x3072xf16>, tensor<3072xf16>
  %1 = nf.relu %0 : tensor<4x3072xf16>
  %2 = nf.gelu %1 {approximate = #nf.approximation<none>} : tensor<4x3072xf16>
  %3 = nf.gelu %2 {approximate = #nf.approximation<tanh>} : tensor<4x3072xf16>
  %4 = nf.silu %3 : tensor<4x3072xf16>
  %5 = nf.add %4, %r : tensor<4x3072xf16>
  %6 = nf.mul %5, %r : tensor<4x3072xf16>
  return %6 : tensor<4x3072xf16>
}

// CHECK-LABEL: func.func @bias_add_nhwc_with_f32_bias
// CHECK: nf.bias_add %{{.+}}, %{{.+}} {layout = #nf.layout<nhwc>} : tensor<2x5x5x64xbf16>, tensor<64xf32>
func.func @bias_add_nhwc_with_f32_bias(%x: tensor<2x5x5x64xbf16>, %b: tensor<64xf32>) -> tensor<2x5x5x64xbf16> {
  %0 = nf.bias_add %x, %b {layout = #nf.layout<nhwc>} : tensor<2x5x5x64xbf16>, tensor<64xf32>
  return %0 : tensor<2x5x5x64xbf16>
}

// CHECK-LABEL: func.func @pointwise_grads
// CHECK: nf.relu_grad %{{.+}}, %{{.+}} : tensor<7xf32>
// CHECK: nf.gelu_grad %{{.+}}, %{{.+}} {approximate = #nf.approximation<tanh>} : tensor<7xf32>
// CHECK: nf.silu_grad %{{.+}}, %{{.+}} : tensor<7xf32>
// CHECK: nf.bias_add_grad %{{.+}} {layout = #nf.layout<nhwc>} : tensor<2x3x3x5xf16> -> tensor<5xf32>
func.func @pointwise_grads(%dy: tensor<7xf32>, %y: tensor<7xf32>, %g: tensor<2x3x3x5xf16>) {
  %0 = nf.relu_grad %dy, %y : tensor<7xf32>
  %1 = nf.gelu_grad %dy, %y {approximate = #nf.approximation<tanh>} : tensor<7xf32>
  %2 = nf.silu_grad %dy, %y : tensor<7xf32>
  %3 = nf.bias_add_grad %g {layout = #nf.layout<nhwc>} : tensor<2x3x3x5xf16> -> tensor<5xf32>
  return
}

// CHECK-LABEL: func.func @matmuls
// CHECK: nf.matmul %{{.+}}, %{{.+}} : tensor<128x768xf16>, tensor<768x3072xf16> -> tensor<128x3072xf32>
// CHECK: nf.matmul %{{.+}}, %{{.+}} {transpose_lhs, transpose_rhs} : tensor<8x768x128xf16>, tensor<8x3072x768xf16> -> tensor<8x128x3072xf16>
func.func @matmuls(%a: tensor<128x768xf16>, %b: tensor<768x3072xf16>, %ta: tensor<8x768x128xf16>, %tb: tensor<8x3072x768xf16>) {
  %0 = nf.matmul %a, %b : tensor<128x768xf16>, tensor<768x3072xf16> -> tensor<128x3072xf32>
  %1 = nf.matmul %ta, %tb {transpose_lhs, transpose_rhs} : tensor<8x768x128xf16>, tensor<8x3072x768xf16> -> tensor<8x128x3072xf16>
  return
}

// CHECK-LABEL: func.func @convs
// CHECK: nf.conv2d %{{.+}}, %{{.+}} {padding = array<i64: 1, 1, 1, 1>} : tensor<2x3x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<2x16x32x32xf32>
// CHECK: nf.conv2d %{{.+}}, %{{.+}} {dilations = array<i64: 2, 2>, layout = #nf.layout<nhwc>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x17x17x4xf16>, tensor<6x3x3x4xf16> -> tensor<1x8x8x6xf16>
// CHECK: nf.conv2d_backprop_input %{{.+}}, %{{.+}} {padding = array<i64: 1, 1, 1, 1>} : tensor<2x16x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<2x3x32x32xf32>
// CHECK: nf.conv2d_backprop_filter %{{.+}}, %{{.+}} {layout = #nf.layout<nhwc>, strides = array<i64: 2, 2>} : tensor<1x17x17x4xf16>, tensor<1x8x8x6xf16> -> tensor<6x3x3x4xf16>
func.func @convs(%x: tensor<2x3x32x32xf32>, %w: tensor<16x3x3x3xf32>, %hx: tensor<1x17x17x4xf16>, %hw: tensor<6x3x3x4xf16>, %dy: tensor<2x16x32x32xf32>, %hdy: tensor<1x8x8x6xf16>) {
  %0 = nf.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<2x3x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<2x16x32x32xf32>
  %1 = nf.conv2d %hx, %hw {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 2, 2>, layout = #nf.layout<nhwc>} : tensor<1x17x17x4xf16>, tensor<6x3x3x4xf16> -> tensor<1x8x8x6xf16>
  %2 = nf.conv2d_backprop_input %dy, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<2x16x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<2x3x32x32xf32>
  %3 = nf.conv2d_backprop_filter %hx, %hdy {strides = array<i64: 2, 2>, layout = #nf.layout<nhwc>} : tensor<1x17x17x4xf16>, tensor<1x8x8x6xf16> -> tensor<6x3x3x4xf16>
  return
}

// CHECK-LABEL: func.func @fused_matmul_bias_gelu
// CHECK-SAME: (%[[X:.+]]: tensor<128x768xf16>, %[[W:.+]]: tensor<768x3072xf16>, %[[B:.+]]: tensor<3072xf16>)
// CHECK: nf.fused(%[[X]], %[[W]], %[[B]]) : (tensor<128x768xf16>, tensor<768x3072xf16>, tensor<3072xf16>) -> tensor<128x3072xf16> {
// CHECK: ^bb0(%[[A0:.+]]: tensor<128x768xf16>, %[[A1:.+]]: tensor<768x3072xf16>, %[[A2:.+]]: tensor<3072xf16>):
// CHECK: %[[MM:.+]] = nf.matmul %[[A0]], %[[A1]]
// CHECK: %[[BA:.+]] = nf.bias_add %[[MM]], %[[A2]] {layout = #nf.layout<nhwc>}
// CHECK: %[[G:.+]] = nf.gelu %[[BA]] {approximate = #nf.approximation<tanh>}
// CHECK: nf.yield %[[G]] : tensor<128x3072xf16>
func.func @fused_matmul_bias_gelu(%x: tensor<128x768xf16>, %w: tensor<768x3072xf16>, %b: tensor<3072xf16>) -> tensor<128x3072xf16> {
  %0 = nf.fused (%x, %w, %b) : (tensor<128x768xf16>, tensor<768x3072xf16>, tensor<3072xf16>) -> tensor<128x3072xf16> {
  ^bb0(%a: tensor<128x768xf16>, %k: tensor<768x3072xf16>, %c: tensor<3072xf16>):
    %1 = nf.matmul %a, %k : tensor<128x768xf16>, tensor<768x3072xf16> -> tensor<128x3072xf16>
    %2 = nf.bias_add %1, %c {layout = #nf.layout<nhwc>} : tensor<128x3072xf16>, tensor<3072xf16>
    %3 = nf.gelu %2 {approximate = #nf.approximation<tanh>} : tensor<128x3072xf16>
    nf.yield %3 : tensor<128x3072xf16>
  }
  return %0 : tensor<128x3072xf16>
}

// A norm with a residual-add prologue and an epilogue, yielding its stats.
// CHECK-LABEL: func.func @fused_residual_layer_norm
// CHECK: nf.fused(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<4x768xf32>, tensor<4x768xf32>, tensor<768xf32>) -> (tensor<4x768xf32>, tensor<4x1xf32>) {
// CHECK: nf.add
// CHECK: nf.layer_norm
// CHECK: nf.silu
// CHECK: nf.yield %{{.+}}, %{{.+}} : tensor<4x768xf32>, tensor<4x1xf32>
func.func @fused_residual_layer_norm(%x: tensor<4x768xf32>, %r: tensor<4x768xf32>, %s: tensor<768xf32>) -> tensor<4x768xf32> {
  %0:2 = nf.fused (%x, %r, %s) : (tensor<4x768xf32>, tensor<4x768xf32>, tensor<768xf32>) -> (tensor<4x768xf32>, tensor<4x1xf32>) {
  ^bb0(%a: tensor<4x768xf32>, %b: tensor<4x768xf32>, %g: tensor<768xf32>):
    %1 = nf.add %a, %b : tensor<4x768xf32>
    %y, %mean, %rstd = nf.layer_norm %1 scale %g {axis = 1 : i64} : (tensor<4x768xf32>, tensor<768xf32>) -> (tensor<4x768xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
    %2 = nf.silu %y : tensor<4x768xf32>
    nf.yield %2, %rstd : tensor<4x768xf32>, tensor<4x1xf32>
  }
  return %0#0 : tensor<4x768xf32>
}

// Dynamic dimensions match any size; the static ones are still checked.
// CHECK-LABEL: func.func @dynamic_dims_match_any_size
// CHECK: nf.group_norm %{{.+}} {num_groups = 32 : i64} : (tensor<?x?x8x8xf32>) -> (tensor<?x?x8x8xf32>, tensor<?x32xf32>, tensor<?x32xf32>)
// CHECK: nf.conv2d %{{.+}}, %{{.+}} : tensor<?x3x?x16xf32>, tensor<4x3x3x3xf32> -> tensor<?x4x?x14xf32>
// CHECK: nf.matmul %{{.+}}, %{{.+}} : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
func.func @dynamic_dims_match_any_size(%x: tensor<?x?x8x8xf32>, %i: tensor<?x3x?x16xf32>, %w: tensor<4x3x3x3xf32>, %a: tensor<?x?xf32>, %b: tensor<?x8xf32>) {
  %y, %m, %r = nf.group_norm %x {num_groups = 32 : i64} : (tensor<?x?x8x8xf32>) -> (tensor<?x?x8x8xf32>, tensor<?x32xf32>, tensor<?x32xf32>)
  %c = nf.conv2d %i, %w : tensor<?x3x?x16xf32>, tensor<4x3x3x3xf32> -> tensor<?x4x?x14xf32>
  %d = nf.matmul %a, %b : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// wgmma's ops inside a kernel of a warpgroup: the multiply-accumulate on a
// workgroup buffer (A at one index, B at another, each descriptor's layout
// in attributes), the fences, the commit and the wait.
// CHECK-LABEL: gpu.func @warpgroup_ops
// CHECK: nf.async_proxy_fence
// CHECK-NEXT: nf.warpgroup_fence
// CHECK-NEXT: %[[D:.+]] = nf.warpgroup_mma %{{.+}}, %{{.+}}[%{{.+}}], [%{{.+}}] {a_leading = 16 : i64, a_stride = 1024 : i64, a_swizzle = 128 : i64, b_leading = 8192 : i64, b_mn_major, b_stride = 1024 : i64, b_swizzle = 128 : i64, n = 128 : i64} : memref<24576xf16, #gpu.address_space<workgroup>>, vector<64xf32>
// CHECK-NEXT: nf.warpgroup_commit
// CHECK-NEXT: nf.warpgroup_wait 0
// CHECK-NEXT: nf.warpgroup_fence_operand %[[D]] : vector<64xf32>
module attributes {gpu.container_module} {
  gpu.module @nf_kernels {
    gpu.func @warpgroup_ops(%c: vector<64xf32>, %a: index, %b: index) workgroup(%s : memref<24576xf16, #gpu.address_space<workgroup>>) kernel {
      nf.async_proxy_fence
      nf.warpgroup_fence
      %d = nf.warpgroup_mma %c, %s[%a], [%b] {n = 128 : i64, b_mn_major, a_swizzle = 128 : i64, a_leading = 16 : i64, a_stride = 1024 : i64, b_swizzle = 128 : i64, b_leading = 8192 : i64, b_stride = 1024 : i64} : memref<24576xf16, #gpu.address_space<workgroup>>, vector<64xf32>
      nf.warpgroup_commit
      nf.warpgroup_wait 0
      %r = nf.warpgroup_fence_operand %d : vector<64xf32>
      gpu.return
    }
  }
}

// Inside a kernel of a cluster: the cluster's barrier and a store into
// another block's shared memory.
// CHECK-LABEL: gpu.func @cluster_ops
// CHECK: nf.cluster_store %{{.+}}, %{{.+}}[%{{.+}}] rank %{{.+}} : memref<8xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: nf.cluster_barrier
module attributes {gpu.container_module} {
  gpu.module @nf_kernels {
    gpu.func @cluster_ops(%v: f32, %i: index, %r: index) workgroup(%s : memref<8xf32, #gpu.address_space<workgroup>>) kernel attributes {nf.cluster_blocks = 2 : i64} {
      nf.cluster_store %v, %s[%i] rank %r : memref<8xf32, #gpu.address_space<workgroup>>
      nf.cluster_barrier
      gpu.return
    }
  }
}

// TMA: a tensor map made on the host, and inside a kernel the mbarriers a
// load completes on, the load, the wait for its phase, a consumer's
// arrival and a named barrier; a load multicast to a cluster's blocks and
// an arrival on another block's mbarrier.
// CHECK-LABEL: func.func @tensor_map
// CHECK: nf.tensor_map %{{.+}} dims [768, 512] strides [1536] box [64, 128] swizzle 128 : memref<?xf16>
func.func @tensor_map(%a: memref<?xf16>) -> !nf.tensor_map {
  %m = nf.tensor_map %a dims [768, 512] strides [1536] box [64, 128] swizzle 128 : memref<?xf16>
  return %m : !nf.tensor_map
}
// CHECK-LABEL: gpu.func @tma_ops
// CHECK: nf.mbarrier_init %{{.+}}[%{{.+}}] count 1 : memref<4xi64, #gpu.address_space<workgroup>>
// CHECK-NEXT: nf.mbarrier_init_fence
// CHECK-NEXT: nf.mbarrier_arrive_expect_tx %{{.+}}[%{{.+}}] bytes 16384 : memref<4xi64, #gpu.address_space<workgroup>>
// CHECK-NEXT: nf.tma_load %{{.+}}[%{{.+}}, %{{.+}}], %{{.+}}[%{{.+}}], %{{.+}}[%{{.+}}] : memref<32768xf16, #gpu.address_space<workgroup>>, memref<4xi64, #gpu.address_space<workgroup>>
// CHECK-NEXT: nf.mbarrier_wait %{{.+}}[%{{.+}}], %{{.+}} : memref<4xi64, #gpu.address_space<workgroup>>
// CHECK-NEXT: nf.mbarrier_arrive %{{.+}}[%{{.+}}] : memref<4xi64, #gpu.address_space<workgroup>>
// CHECK-NEXT: nf.named_barrier 1, 256
// CHECK-NEXT: nf.set_max_registers decrease 40
// CHECK-NEXT: nf.set_max_registers increase 232
// CHECK-NEXT: nf.tma_load %{{.+}}[%{{.+}}, %{{.+}}], %{{.+}}[%{{.+}}], %{{.+}}[%{{.+}}] multicast %{{.+}} : memref<32768xf16, #gpu.address_space<workgroup>>, memref<4xi64, #gpu.address_space<workgroup>>
// CHECK-NEXT: nf.mbarrier_arrive %{{.+}}[%{{.+}}] rank %{{.+}} : memref<4xi64, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @nf_kernels {
    gpu.func @tma_ops(%m: !nf.tensor_map, %i: index) workgroup(%s : memref<32768xf16, #gpu.address_space<workgroup>>, %bars : memref<4xi64, #gpu.address_space<workgroup>>) kernel {
      nf.mbarrier_init %bars[%i] count 1 : memref<4xi64, #gpu.address_space<workgroup>>
      nf.mbarrier_init_fence
      nf.mbarrier_arrive_expect_tx %bars[%i] bytes 16384 : memref<4xi64, #gpu.address_space<workgroup>>
      nf.tma_load %m[%i, %i], %s[%i], %bars[%i] : memref<32768xf16, #gpu.address_space<workgroup>>, memref<4xi64, #gpu.address_space<workgroup>>
      nf.mbarrier_wait %bars[%i], %i : memref<4xi64, #gpu.address_space<workgroup>>
      nf.mbarrier_arrive %bars[%i] : memref<4xi64, #gpu.address_space<workgroup>>
      nf.named_barrier 1, 256
      nf.set_max_registers decrease 40
      nf.set_max_registers increase 232
      nf.tma_load %m[%i, %i], %s[%i], %bars[%i] multicast %i : memref<32768xf16, #gpu.address_space<workgroup>>, memref<4xi64, #gpu.address_space<workgroup>>
      nf.mbarrier_arrive %bars[%i] rank %i : memref<4xi64, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}
