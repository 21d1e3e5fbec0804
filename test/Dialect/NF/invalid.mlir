// Each case breaks one verifier rule of the nf dialect and quotes the whole
// diagnostic it must produce.
// RUN: nf-opt %s -split-input-file -verify-diagnostics

func.func @layer_norm_axis_past_rank(%x: tensor<2x3x8xf32>) {
  // expected-error @+1 {{'nf.layer_norm' op axis 3 is out of range for an input of rank 3 (expected 0 <= axis < 3)}}
  %y, %m, %r = nf.layer_norm %x {axis = 3 : i64} : (tensor<2x3x8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
  return
}

// -----

func.func @layer_norm_negative_axis(%x: tensor<2x3x8xf32>) {
  // expected-error @+1 {{'nf.layer_norm' op axis -1 is out of range for an input of rank 3 (expected 0 <= axis < 3)}}
  %y, %m, %r = nf.layer_norm %x {axis = -1 : i64} : (tensor<2x3x8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
  return
}

// -----

func.func @layer_norm_scale_not_trailing_shape(%x: tensor<2x3x8xf32>, %s: tensor<3x8xf32>) {
  // expected-error @+1 {{'nf.layer_norm' op scale has shape [3, 8]; expected [8] (input.shape[axis:])}}
  %y, %m, %r = nf.layer_norm %x scale %s {axis = 2 : i64} : (tensor<2x3x8xf32>, tensor<3x8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
  return
}

// -----

func.func @layer_norm_bias_wrong_size(%x: tensor<2x3x8xf32>, %b: tensor<3x7xf32>) {
  // expected-error @+1 {{'nf.layer_norm' op bias has shape [3, 7]; expected [3, 8] (input.shape[axis:])}}
  %y, %m, %r = nf.layer_norm %x bias %b {axis = 1 : i64} : (tensor<2x3x8xf32>, tensor<3x7xf32>) -> (tensor<2x3x8xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  return
}

// -----

func.func @layer_norm_mean_without_keepdims(%x: tensor<2x3x8xf32>) {
  // expected-error @+1 {{'nf.layer_norm' op mean has shape [2, 3]; expected [2, 3, 1] (input.shape[:axis] followed by ones)}}
  %y, %m, %r = nf.layer_norm %x {axis = 2 : i64} : (tensor<2x3x8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3xf32>, tensor<2x3x1xf32>)
  return
}

// -----

func.func @layer_norm_scale_of_a_third_type(%x: tensor<4x8xbf16>, %s: tensor<8xf16>) {
  // expected-error @+1 {{'nf.layer_norm' op scale element type 'f16' must be the input element type ('bf16') or f32}}
  %y, %m, %r = nf.layer_norm %x scale %s {axis = 1 : i64} : (tensor<4x8xbf16>, tensor<8xf16>) -> (tensor<4x8xbf16>, tensor<4x1xf32>, tensor<4x1xf32>)
  return
}

// -----

func.func @layer_norm_f64_stats_of_f32_input(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'nf.layer_norm' op mean element type 'f64' is not the accumulation type 'f32' of the input element type 'f32'}}
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf64>, tensor<4x1xf64>)
  return
}

// -----

func.func @layer_norm_f16_stats(%x: tensor<4x8xf16>) {
  // expected-error @+1 {{'nf.layer_norm' op result #1 must be ranked tensor of 32-bit float or 64-bit float values, but got 'tensor<4x1xf16>'}}
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x1xf16>, tensor<4x1xf16>)
  return
}

// -----

func.func @layer_norm_result_changes_type(%x: tensor<4x8xf16>) {
  // expected-error @+1 {{'nf.layer_norm' op result type 'tensor<4x8xf32>' does not match the input type 'tensor<4x8xf16>'}}
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x8xf16>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return
}

// -----

func.func @layer_norm_negative_epsilon(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'nf.layer_norm' op epsilon must be finite and non-negative, got -1.000000e-05}}
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64, epsilon = -1.0e-5} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return
}

// -----

func.func @rms_norm_rstd_wrong_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'nf.rms_norm' op rstd has shape [4, 8]; expected [4, 1] (input.shape[:axis] followed by ones)}}
  %y, %r = nf.rms_norm %x {axis = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @group_norm_groups_do_not_divide_channels_nchw(%x: tensor<2x30x4x4xf32>) {
  // expected-error @+1 {{'nf.group_norm' op num_groups 4 does not divide the 30 channels}}
  %y, %m, %r = nf.group_norm %x {num_groups = 4 : i64} : (tensor<2x30x4x4xf32>) -> (tensor<2x30x4x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @group_norm_groups_do_not_divide_channels_nhwc(%x: tensor<2x4x4x30xf32>) {
  // expected-error @+1 {{'nf.group_norm' op num_groups 4 does not divide the 30 channels}}
  %y, %m, %r = nf.group_norm %x {num_groups = 4 : i64, layout = #nf.layout<nhwc>} : (tensor<2x4x4x30xf32>) -> (tensor<2x4x4x30xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @group_norm_zero_groups(%x: tensor<2x8x4x4xf32>) {
  // expected-error @+1 {{'nf.group_norm' op num_groups must be positive, got 0}}
  %y, %m, %r = nf.group_norm %x {num_groups = 0 : i64} : (tensor<2x8x4x4xf32>) -> (tensor<2x8x4x4xf32>, tensor<2x0xf32>, tensor<2x0xf32>)
  return
}

// -----

func.func @group_norm_stats_per_channel_not_per_group(%x: tensor<2x8x4x4xf32>) {
  // expected-error @+1 {{'nf.group_norm' op mean has shape [2, 8]; expected [2, 2] ((N, num_groups))}}
  %y, %m, %r = nf.group_norm %x {num_groups = 2 : i64} : (tensor<2x8x4x4xf32>) -> (tensor<2x8x4x4xf32>, tensor<2x8xf32>, tensor<2x2xf32>)
  return
}

// -----

func.func @group_norm_nhwc_scale_sized_for_nchw(%x: tensor<2x8x4x16xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{'nf.group_norm' op scale has shape [8]; expected [16] (one value per channel)}}
  %y, %m, %r = nf.group_norm %x scale %s {num_groups = 2 : i64, layout = #nf.layout<nhwc>} : (tensor<2x8x4x16xf32>, tensor<8xf32>) -> (tensor<2x8x4x16xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
  return
}

// -----

func.func @group_norm_rank_1(%x: tensor<8xf32>) {
  // expected-error @+1 {{'nf.group_norm' op input must have rank >= 2 (N, C, ...), got rank 1}}
  %y, %m, %r = nf.group_norm %x {num_groups = 2 : i64} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<1x2xf32>, tensor<1x2xf32>)
  return
}

// -----

func.func @instance_norm_without_spatial_dims(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nf.instance_norm' op input must have rank >= 3 (N, ..., C), got rank 2}}
  %y, %m, %r = nf.instance_norm %x {layout = #nf.layout<nhwc>} : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
  return
}

// -----

func.func @instance_norm_stats_per_group(%x: tensor<2x8x4x4xf32>) {
  // expected-error @+1 {{'nf.instance_norm' op rstd has shape [2, 1]; expected [2, 8] ((N, C))}}
  %y, %m, %r = nf.instance_norm %x : (tensor<2x8x4x4xf32>) -> (tensor<2x8x4x4xf32>, tensor<2x8xf32>, tensor<2x1xf32>)
  return
}

// -----

func.func @batch_norm_training_running_mean_wrong_size(%x: tensor<4x8x2x2xf32>, %rm: tensor<4xf32>, %rv: tensor<8xf32>) {
  // expected-error @+1 {{'nf.batch_norm_training' op running_mean has shape [4]; expected [8] (one value per channel)}}
  %y, %bm, %br, %nm, %nv = nf.batch_norm_training %x running(%rm, %rv) : (tensor<4x8x2x2xf32>, tensor<4xf32>, tensor<8xf32>) -> (tensor<4x8x2x2xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @batch_norm_training_momentum_above_one(%x: tensor<4x8x2x2xf32>, %rm: tensor<8xf32>) {
  // expected-error @+1 {{'nf.batch_norm_training' op momentum must lie in [0, 1], got 1.5}}
  %y, %bm, %br, %nm, %nv = nf.batch_norm_training %x running(%rm, %rm) {momentum = 1.5} : (tensor<4x8x2x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8x2x2xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @batch_norm_training_saved_stats_in_keepdims_shape(%x: tensor<4x8x2x2xf32>, %rm: tensor<8xf32>) {
  // expected-error @+1 {{'nf.batch_norm_training' op batch_mean has shape [1, 8, 1, 1]; expected [8] (one value per channel)}}
  %y, %bm, %br, %nm, %nv = nf.batch_norm_training %x running(%rm, %rm) : (tensor<4x8x2x2xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8x2x2xf32>, tensor<1x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @batch_norm_inference_nhwc_running_var_sized_for_nchw(%x: tensor<4x8x2x3xf32>, %rm: tensor<3xf32>, %rv: tensor<8xf32>) {
  // expected-error @+1 {{'nf.batch_norm_inference' op running_var has shape [8]; expected [3] (one value per channel)}}
  %y = nf.batch_norm_inference %x running(%rm, %rv) {layout = #nf.layout<nhwc>} : (tensor<4x8x2x3xf32>, tensor<3xf32>, tensor<8xf32>) -> tensor<4x8x2x3xf32>
  return
}

// -----

func.func @layer_norm_grad_dy_of_another_shape(%dy: tensor<4x9xf32>, %x: tensor<4x8xf32>, %m: tensor<4x1xf32>) {
  // expected-error @+1 {{'nf.layer_norm_grad' op grad_output type 'tensor<4x9xf32>' does not match the input type 'tensor<4x8xf32>'}}
  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %m {axis = 1 : i64} : (tensor<4x9xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @layer_norm_grad_saved_mean_of_another_norm(%dy: tensor<4x8xf32>, %m: tensor<8xf32>, %r: tensor<4x1xf32>) {
  // expected-error @+1 {{'nf.layer_norm_grad' op mean has shape [8]; expected [4, 1] (input.shape[:axis] followed by ones)}}
  %dx, %ds, %db = nf.layer_norm_grad %dy, %dy, %m, %r {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @rms_norm_grad_grad_scale_wrong_shape(%dy: tensor<4x8xf32>, %r: tensor<4x1xf32>) {
  // expected-error @+1 {{'nf.rms_norm_grad' op grad_scale has shape [4]; expected [8] (input.shape[axis:])}}
  %dx, %ds = nf.rms_norm_grad %dy, %dy, %r {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  return
}

// -----

func.func @group_norm_grad_groups_do_not_divide_channels(%dy: tensor<2x6x3x3xf32>, %m: tensor<2x4xf32>) {
  // expected-error @+1 {{'nf.group_norm_grad' op num_groups 4 does not divide the 6 channels}}
  %dx, %ds, %db = nf.group_norm_grad %dy, %dy, %m, %m {num_groups = 4 : i64} : (tensor<2x6x3x3xf32>, tensor<2x6x3x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<2x6x3x3xf32>, tensor<6xf32>, tensor<6xf32>)
  return
}

// -----

func.func @instance_norm_grad_grad_bias_wrong_shape(%dy: tensor<2x6x3x3xf32>, %m: tensor<2x6xf32>) {
  // expected-error @+1 {{'nf.instance_norm_grad' op grad_bias has shape [2, 6]; expected [6] (one value per channel)}}
  %dx, %ds, %db = nf.instance_norm_grad %dy, %dy, %m, %m : (tensor<2x6x3x3xf32>, tensor<2x6x3x3xf32>, tensor<2x6xf32>, tensor<2x6xf32>) -> (tensor<2x6x3x3xf32>, tensor<6xf32>, tensor<2x6xf32>)
  return
}

// -----

func.func @batch_norm_grad_scale_wrong_shape(%dy: tensor<2x6x3x3xf32>, %m: tensor<6xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{'nf.batch_norm_grad' op scale has shape [3]; expected [6] (one value per channel)}}
  %dx, %ds, %db = nf.batch_norm_grad %dy, %dy, %m, %m scale %s : (tensor<2x6x3x3xf32>, tensor<2x6x3x3xf32>, tensor<6xf32>, tensor<6xf32>, tensor<3xf32>) -> (tensor<2x6x3x3xf32>, tensor<6xf32>, tensor<6xf32>)
  return
}

// -----

func.func @bias_add_nhwc_bias_sized_for_nchw(%x: tensor<2x8x4x16xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'nf.bias_add' op bias has shape [8]; expected [16] (one value per channel)}}
  %y = nf.bias_add %x, %b {layout = #nf.layout<nhwc>} : tensor<2x8x4x16xf32>, tensor<8xf32>
  return
}

// -----

func.func @bias_add_f16_bias_on_bf16_input(%x: tensor<2x8xbf16>, %b: tensor<8xf16>) {
  // expected-error @+1 {{'nf.bias_add' op bias element type 'f16' must be the input element type ('bf16') or f32}}
  %y = nf.bias_add %x, %b {layout = #nf.layout<nhwc>} : tensor<2x8xbf16>, tensor<8xf16>
  return
}

// -----

func.func @bias_add_rank_1(%x: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'nf.bias_add' op input must have rank >= 2 (N, ..., C), got rank 1}}
  %y = nf.bias_add %x, %b {layout = #nf.layout<nhwc>} : tensor<8xf32>, tensor<8xf32>
  return
}

// -----

func.func @bias_add_grad_wrong_channel_count(%dy: tensor<2x8x4x4xf32>) {
  // expected-error @+1 {{'nf.bias_add_grad' op grad_bias has shape [4]; expected [8] (one value per channel)}}
  %db = nf.bias_add_grad %dy {layout = #nf.layout<nchw>} : tensor<2x8x4x4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @bias_add_without_layout(%x: tensor<2x8x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'nf.bias_add' op requires attribute 'layout'}}
  %y = nf.bias_add %x, %b : tensor<2x8x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @bias_add_grad_f32_of_f64(%dy: tensor<2x8xf64>) {
  // expected-error @+1 {{'nf.bias_add_grad' op grad_bias element type 'f32' must be the input element type ('f64'), or f32 for a 16-bit input}}
  %db = nf.bias_add_grad %dy {layout = #nf.layout<nhwc>} : tensor<2x8xf64> -> tensor<8xf32>
  return
}

// -----

func.func @layer_norm_grad_narrows_grad_scale(%dy: tensor<4x8xf64>, %m: tensor<4x1xf64>) {
  // expected-error @+1 {{'nf.layer_norm_grad' op grad_scale element type 'f32' must be the input element type ('f64'), or f32 for a 16-bit input}}
  %dx, %ds, %db = nf.layer_norm_grad %dy, %dy, %m, %m {axis = 1 : i64} : (tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x1xf64>, tensor<4x1xf64>) -> (tensor<4x8xf64>, tensor<8xf32>, tensor<8xf64>)
  return
}

// -----

func.func @batch_norm_training_one_value_per_channel(%x: tensor<1x4xf32>, %rm: tensor<4xf32>) {
  // expected-error @+1 {{'nf.batch_norm_training' op needs more than one value per channel to update the running variance, got 1 (or unbiased_running_var = false)}}
  %y, %bm, %br, %nm, %nv = nf.batch_norm_training %x running(%rm, %rm) : (tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @add_of_mixed_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'nf.add' op requires the same type for all operands and results}}
  %y = "nf.add"(%a, %b) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @relu_of_integers(%a: tensor<4xi32>) {
  // expected-error @+1 {{'nf.relu' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %y = nf.relu %a : tensor<4xi32>
  return
}

// -----

func.func @matmul_contraction_mismatch(%a: tensor<4x64xf32>, %b: tensor<32x8xf32>) {
  // expected-error @+1 {{'nf.matmul' op contraction dimensions differ: lhs has K = 64, rhs has K = 32}}
  %c = nf.matmul %a, %b : tensor<4x64xf32>, tensor<32x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_transposed_rhs_contracts_its_last_dim(%a: tensor<4x64xf32>, %b: tensor<64x8xf32>) {
  // expected-error @+1 {{'nf.matmul' op contraction dimensions differ: lhs has K = 64, rhs has K = 8}}
  %c = nf.matmul %a, %b {transpose_rhs} : tensor<4x64xf32>, tensor<64x8xf32> -> tensor<4x64xf32>
  return
}

// -----

func.func @matmul_batch_mismatch(%a: tensor<2x4x64xf32>, %b: tensor<3x64x8xf32>) {
  // expected-error @+1 {{'nf.matmul' op batch dimensions differ: lhs has [2], rhs has [3]}}
  %c = nf.matmul %a, %b : tensor<2x4x64xf32>, tensor<3x64x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @matmul_result_wrong_shape(%a: tensor<4x64xf32>, %b: tensor<64x8xf32>) {
  // expected-error @+1 {{'nf.matmul' op result has shape [8, 4]; expected [4, 8] (batch..., M, N)}}
  %c = nf.matmul %a, %b : tensor<4x64xf32>, tensor<64x8xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @matmul_mixed_operand_types(%a: tensor<4x64xf16>, %b: tensor<64x8xf32>) {
  // expected-error @+1 {{'nf.matmul' op lhs element type 'f16' does not match the rhs element type 'f32'}}
  %c = nf.matmul %a, %b : tensor<4x64xf16>, tensor<64x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_result_bf16_from_f16(%a: tensor<4x64xf16>, %b: tensor<64x8xf16>) {
  // expected-error @+1 {{'nf.matmul' op result element type 'bf16' must be the input element type ('f16'), or f32 for a 16-bit input}}
  %c = nf.matmul %a, %b : tensor<4x64xf16>, tensor<64x8xf16> -> tensor<4x8xbf16>
  return
}

// -----

func.func @matmul_f64_narrowed_to_f32(%a: tensor<4x64xf64>, %b: tensor<64x8xf64>) {
  // expected-error @+1 {{'nf.matmul' op result element type 'f32' must be the input element type ('f64'), or f32 for a 16-bit input}}
  %c = nf.matmul %a, %b : tensor<4x64xf64>, tensor<64x8xf64> -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_vector_operand(%a: tensor<64xf32>, %b: tensor<64x8xf32>) {
  // expected-error @+1 {{'nf.matmul' op lhs must have rank >= 2 (..., M, K), got rank 1}}
  %c = nf.matmul %a, %b : tensor<64xf32>, tensor<64x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @conv2d_zero_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nf.conv2d' op strides must be 2 positive values [h, w], got [0, 1]}}
  %y = nf.conv2d %x, %w {strides = array<i64: 0, 1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_three_strides(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nf.conv2d' op strides must be 2 positive values [h, w], got [1, 1, 1]}}
  %y = nf.conv2d %x, %w {strides = array<i64: 1, 1, 1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_negative_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nf.conv2d' op dilations must be 2 positive values [h, w], got [1, -2]}}
  %y = nf.conv2d %x, %w {dilations = array<i64: 1, -2>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_negative_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nf.conv2d' op padding must be 4 non-negative values [top, bottom, left, right], got [1, -1, 0, 0]}}
  %y = nf.conv2d %x, %w {padding = array<i64: 1, -1, 0, 0>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_nchw_channel_mismatch(%x: tensor<1x3x8x8xf32>, %w: tensor<4x5x3x3xf32>) {
  // expected-error @+1 {{'nf.conv2d' op input has 3 channels but the filter expects 5}}
  %y = nf.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x5x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_nhwc_channel_mismatch(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x5xf32>) {
  // expected-error @+1 {{'nf.conv2d' op input has 3 channels but the filter expects 5}}
  %y = nf.conv2d %x, %w {layout = #nf.layout<nhwc>} : tensor<1x8x8x3xf32>, tensor<4x3x3x5xf32> -> tensor<1x6x6x4xf32>
  return
}

// -----

func.func @conv2d_result_ignores_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nf.conv2d' op result has shape [1, 4, 6, 6]; expected [1, 4, 3, 3] (the conv2d output shape)}}
  %y = nf.conv2d %x, %w {strides = array<i64: 2, 2>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_dilated_filter_larger_than_input(%x: tensor<1x3x5x5xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nf.conv2d' op the dilated filter ([7, 7]) is larger than the padded input ([5, 5])}}
  %y = nf.conv2d %x, %w {dilations = array<i64: 3, 3>} : tensor<1x3x5x5xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x1x1xf32>
  return
}

// -----

func.func @conv2d_rank_3_input(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nf.conv2d' op input must have rank 4 (N, C, H, W), got rank 3}}
  %y = nf.conv2d %x, %w : tensor<3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_f16_filter_on_f32_input(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) {
  // expected-error @+1 {{'nf.conv2d' op filter element type 'f16' does not match the input element type 'f32'}}
  %y = nf.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_huge_padding_overflows(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x1x1xf32>) {
  // expected-error @+1 {{'nf.conv2d' op padding [9223372036854775807, 9223372036854775807, 0, 0] or dilations [1, 1] overflow a 64-bit size}}
  %y = nf.conv2d %x, %w {padding = array<i64: 9223372036854775807, 9223372036854775807, 0, 0>} : tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32> -> tensor<1x1x2x4xf32>
  return
}

// -----

func.func @conv2d_huge_dilation_overflows(%x: tensor<1x1x8x8xf32>, %w: tensor<1x1x5x5xf32>) {
  // expected-error @+1 {{'nf.conv2d' op padding [0, 0, 0, 0] or dilations [4611686018427387905, 1] overflow a 64-bit size}}
  %y = nf.conv2d %x, %w {dilations = array<i64: 4611686018427387905, 1>} : tensor<1x1x8x8xf32>, tensor<1x1x5x5xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @conv2d_empty_filter_window(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x0x0xf32>) {
  // expected-error @+1 {{'nf.conv2d' op the filter has an empty window [0, 0]; its spatial sizes must be positive}}
  %y = nf.conv2d %x, %w : tensor<1x1x4x4xf32>, tensor<1x1x0x0xf32> -> tensor<1x1x5x5xf32>
  return
}

// -----

func.func @conv2d_filter_rank_3(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{'nf.conv2d' op filter must have rank 4 (O, KH, KW, I), got rank 3}}
  %y = nf.conv2d %x, %w {layout = #nf.layout<nhwc>} : tensor<1x3x8x8xf32>, tensor<4x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_backprop_input_narrows_to_f32(%dy: tensor<1x4x6x6xf64>, %w: tensor<4x3x3x3xf64>) {
  // expected-error @+1 {{'nf.conv2d_backprop_input' op grad_input element type 'f32' must be the input element type ('f64'), or f32 for a 16-bit input}}
  %dx = nf.conv2d_backprop_input %dy, %w : tensor<1x4x6x6xf64>, tensor<4x3x3x3xf64> -> tensor<1x3x8x8xf32>
  return
}

// -----

func.func @conv2d_backprop_filter_mixed_operands(%x: tensor<1x3x8x8xf16>, %dy: tensor<1x4x6x6xf32>) {
  // expected-error @+1 {{'nf.conv2d_backprop_filter' op grad_output element type 'f32' does not match the input element type 'f16'}}
  %dw = nf.conv2d_backprop_filter %x, %dy : tensor<1x3x8x8xf16>, tensor<1x4x6x6xf32> -> tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv2d_backprop_input_grad_input_too_small(%dy: tensor<1x4x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nf.conv2d_backprop_input' op grad_output has shape [1, 4, 6, 6]; expected [1, 4, 5, 5] (the conv2d output shape for grad_input and filter)}}
  %dx = nf.conv2d_backprop_input %dy, %w : tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @conv2d_backprop_filter_wrong_output_channels(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x6x6xf32>) {
  // expected-error @+1 {{'nf.conv2d_backprop_filter' op grad_output has shape [1, 4, 6, 6]; expected [1, 5, 6, 6] (the conv2d output shape for input and grad_filter)}}
  %dw = nf.conv2d_backprop_filter %x, %dy : tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32> -> tensor<5x3x3x3xf32>
  return
}

// -----

func.func @fused_without_producer(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'nf.fused' op body must hold exactly one producer (nf.matmul, nf.conv2d, a forward norm or nf.bias_add_grad), found 0}}
  %0 = nf.fused (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %1 = nf.relu %a : tensor<4x8xf32>
    nf.yield %1 : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// -----

func.func @fused_with_two_producers(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'nf.fused' op body must hold exactly one producer (nf.matmul, nf.conv2d, a forward norm or nf.bias_add_grad), found 2}}
  %0 = nf.fused (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %1 = nf.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %2 = nf.matmul %1, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    nf.yield %2 : tensor<4x4xf32>
  }
  return %0 : tensor<4x4xf32>
}

// -----

// A backward norm is neither a producer nor pointwise: it cannot be fused.
func.func @fused_holding_a_norm_gradient(%x: tensor<4x4xf32>, %m: tensor<4x1xf32>, %r: tensor<4x1xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'nf.fused' op body holds 'nf.layer_norm_grad', which is neither a producer nor a pointwise nf op}}
  %0 = nf.fused (%x, %m, %r) : (tensor<4x4xf32>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>, %mean: tensor<4x1xf32>, %rstd: tensor<4x1xf32>):
    %1 = nf.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %dx, %ds, %db = nf.layer_norm_grad %1, %a, %mean, %rstd {axis = 1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x1xf32>, tensor<4x1xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>)
    nf.yield %dx : tensor<4x4xf32>
  }
  return %0 : tensor<4x4xf32>
}

// -----

// expected-error @+1 {{'nf.fused' op region #0 ('body') failed to verify constraint: region with 1 blocks}}
"nf.fused"() ({}) : () -> ()

// -----

func.func @fused_without_terminator(%x: tensor<4x4xf32>) {
  %0 = "nf.fused"(%x) ({
  ^bb0(%a: tensor<4x4xf32>):
    // expected-error @+1 {{block with no terminator, has %1 = "nf.matmul"(%arg0, %arg0) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>}}
    %1 = nf.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @fused_producer_reaches_no_result(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'nf.fused' op no yielded value depends on the producer 'nf.matmul'}}
  %0 = nf.fused (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %1 = nf.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %2 = nf.relu %a : tensor<4x4xf32>
    nf.yield %2 : tensor<4x4xf32>
  }
  return %0 : tensor<4x4xf32>
}

// -----

func.func @fused_missing_block_argument(%x: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'nf.fused' op body has 1 arguments but the op has 2 inputs}}
  %0 = nf.fused (%x, %b) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %1 = nf.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    nf.yield %1 : tensor<4x4xf32>
  }
  return %0 : tensor<4x4xf32>
}

// -----

func.func @fused_block_argument_of_another_type(%x: tensor<4x4xf32>) -> tensor<4x4xf16> {
  // expected-error @+1 {{'nf.fused' op body argument #0 has type 'tensor<4x4xf16>' but input #0 has type 'tensor<4x4xf32>'}}
  %0 = nf.fused (%x) : (tensor<4x4xf32>) -> tensor<4x4xf16> {
  ^bb0(%a: tensor<4x4xf16>):
    %1 = nf.matmul %a, %a : tensor<4x4xf16>, tensor<4x4xf16> -> tensor<4x4xf16>
    nf.yield %1 : tensor<4x4xf16>
  }
  return %0 : tensor<4x4xf16>
}

// -----

func.func @fused_yields_too_few_values(%x: tensor<4x4xf32>) {
  %0:2 = nf.fused (%x) : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  ^bb0(%a: tensor<4x4xf32>):
    %1 = nf.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    // expected-error @+1 {{'nf.yield' op yields 1 values but the parent nf.fused has 2 results}}
    nf.yield %1 : tensor<4x4xf32>
  }
  return
}

// -----

func.func @fused_yields_another_type(%x: tensor<4x4xf16>) {
  %0 = nf.fused (%x) : (tensor<4x4xf16>) -> tensor<4x4xf16> {
  ^bb0(%a: tensor<4x4xf16>):
    %1 = nf.matmul %a, %a : tensor<4x4xf16>, tensor<4x4xf16> -> tensor<4x4xf32>
    // expected-error @+1 {{'nf.yield' op value #0 has type 'tensor<4x4xf32>' but result #0 of the parent nf.fused has type 'tensor<4x4xf16>'}}
    nf.yield %1 : tensor<4x4xf32>
  }
  return
}

// -----

func.func @yield_outside_fused(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nf.yield' op expects parent op 'nf.fused'}}
  nf.yield %x : tensor<4xf32>
}

// -----

func.func @conv2d_strides_not_an_array(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nf.conv2d' op attribute 'strides' failed to satisfy constraint: i64 dense array attribute}}
  %y = nf.conv2d %x, %w {strides = 2 : i64} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x3x3xf32>
  return
}

// -----

func.func @layer_norm_without_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'nf.layer_norm' op requires attribute 'axis'}}
  %y, %m, %r = nf.layer_norm %x : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return
}

// -----

func.func @layer_norm_of_unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{'nf.layer_norm' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<*xf32>'}}
  %y, %m, %r = nf.layer_norm %x {axis = 0 : i64} : (tensor<*xf32>) -> (tensor<*xf32>, tensor<1xf32>, tensor<1xf32>)
  return
}

// -----

func.func @unknown_layout(%x: tensor<2x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+2 {{expected ::mlir::nf::Layout to be one of: nchw, nhwc}}
  // expected-error @+1 {{failed to parse NF_LayoutAttr parameter 'value' which is to be a `::mlir::nf::Layout`}}
  %y = nf.bias_add %x, %b {layout = #nf.layout<nwhc>} : tensor<2x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @unknown_op(%x: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'nf.layernorm' is unknown}}
  %y = nf.layernorm %x : tensor<4xf32>
  return
}

// -----

func.func @conv2d_dynamic_height_static_width_mismatch(%x: tensor<?x3x?x16xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nf.conv2d' op result has shape [?, 4, ?, 16]; expected [?, 4, ?, 14] (the conv2d output shape)}}
  %y = nf.conv2d %x, %w : tensor<?x3x?x16xf32>, tensor<4x3x3x3xf32> -> tensor<?x4x?x16xf32>
  return
}

// -----

func.func @cluster_store_of_another_type(%v: f64, %s: memref<8xf32, 3>, %i: index) {
  // expected-error @+1 {{'nf.cluster_store' op failed to verify that the value is an element of the buffer}}
  "nf.cluster_store"(%v, %s, %i, %i) : (f64, memref<8xf32, 3>, index, index) -> ()
  return
}

// -----

func.func @warpgroup_mma_of_an_n_wgmma_has_not(%c: vector<48xf32>, %s: memref<4096xf16, 3>, %i: index) {
  // expected-error @+1 {{'nf.warpgroup_mma' op n must be 64, 128 or 256, not 96}}
  %d = nf.warpgroup_mma %c, %s[%i], [%i] {n = 96 : i64, a_swizzle = 128 : i64, a_leading = 16 : i64, a_stride = 1024 : i64, b_swizzle = 128 : i64, b_leading = 16 : i64, b_stride = 1024 : i64} : memref<4096xf16, 3>, vector<48xf32>
  return
}

// -----

func.func @warpgroup_mma_with_accumulators_of_another_n(%c: vector<32xf32>, %s: memref<4096xf16, 3>, %i: index) {
  // expected-error @+1 {{'nf.warpgroup_mma' op a thread holds n / 2 = 64 accumulators of an m64n128 tile, not 32}}
  %d = nf.warpgroup_mma %c, %s[%i], [%i] {n = 128 : i64, a_swizzle = 128 : i64, a_leading = 16 : i64, a_stride = 1024 : i64, b_swizzle = 128 : i64, b_leading = 16 : i64, b_stride = 1024 : i64} : memref<4096xf16, 3>, vector<32xf32>
  return
}

// -----

func.func @warpgroup_mma_with_a_16_byte_swizzle(%c: vector<32xf32>, %s: memref<4096xbf16, 3>, %i: index) {
  // expected-error @+1 {{'nf.warpgroup_mma' op b_swizzle must be 32, 64 or 128 bytes}}
  %d = nf.warpgroup_mma %c, %s[%i], [%i] {n = 64 : i64, a_swizzle = 64 : i64, a_leading = 16 : i64, a_stride = 512 : i64, b_swizzle = 16 : i64, b_leading = 16 : i64, b_stride = 1024 : i64} : memref<4096xbf16, 3>, vector<32xf32>
  return
}

// -----

func.func @warpgroup_mma_with_an_offset_not_of_16_bytes(%c: vector<32xf32>, %s: memref<4096xf16, 3>, %i: index) {
  // expected-error @+1 {{'nf.warpgroup_mma' op a's byte offsets must be multiples of 16 from 16 to 2^18 - 16 (14 bits of 16 bytes), not 1000}}
  %d = nf.warpgroup_mma %c, %s[%i], [%i] {n = 64 : i64, a_swizzle = 128 : i64, a_leading = 16 : i64, a_stride = 1000 : i64, b_swizzle = 128 : i64, b_leading = 16 : i64, b_stride = 1024 : i64} : memref<4096xf16, 3>, vector<32xf32>
  return
}

// -----

func.func @tensor_map_of_one_dimension(%a: memref<?xf16>) {
  // expected-error @+1 {{'nf.tensor_map' op tensor maps of 2 or 3 dimensions here, not 1}}
  %m = nf.tensor_map %a dims [64] strides [] box [64] swizzle 128 : memref<?xf16>
  return
}

// -----

func.func @tensor_map_stride_not_of_16_bytes(%a: memref<?xf16>) {
  // expected-error @+1 {{'nf.tensor_map' op strides must be multiples of 16 bytes below 2^40, not 202}}
  %m = nf.tensor_map %a dims [101, 70] strides [202] box [16, 64] swizzle 32 : memref<?xf16>
  return
}

// -----

func.func @tensor_map_box_wider_than_its_swizzle(%a: memref<?xbf16>) {
  // expected-error @+1 {{'nf.tensor_map' op the box's rows of 128 bytes are wider than the 64-byte swizzle}}
  %m = nf.tensor_map %a dims [512, 512] strides [1024] box [64, 64] swizzle 64 : memref<?xbf16>
  return
}

// -----

func.func @tensor_map_box_past_256(%a: memref<?xf32>) {
  // expected-error @+1 {{'nf.tensor_map' op box sizes must be 1 to 256 elements, not 512}}
  %m = nf.tensor_map %a dims [32, 1024] strides [128] box [32, 512] swizzle 128 : memref<?xf32>
  return
}

// -----

func.func @tma_load_of_four_coordinates(%m: !nf.tensor_map, %s: memref<4096xf16, 3>, %b: memref<2xi64, 3>, %i: index) {
  // expected-error @+1 {{'nf.tma_load' op TMA loads of 2 or 3 coordinates here, not 4}}
  nf.tma_load %m[%i, %i, %i, %i], %s[%i], %b[%i] : memref<4096xf16, 3>, memref<2xi64, 3>
  return
}

// -----

func.func @named_barrier_of_part_of_a_warp() {
  // expected-error @+1 {{'nf.named_barrier' op a named barrier waits for whole warps: 48 threads is not a multiple of 32}}
  nf.named_barrier 1, 48
  return
}

// -----

func.func @setmaxnreg_not_a_multiple_of_8() {
  // expected-error @+1 {{'nf.set_max_registers' op setmaxnreg counts are multiples of 8 from 24 to 256 registers a thread, not 236}}
  nf.set_max_registers increase 236
  return
}

// -----

func.func @setmaxnreg_below_24() {
  // expected-error @+1 {{'nf.set_max_registers' op setmaxnreg counts are multiples of 8 from 24 to 256 registers a thread, not 16}}
  nf.set_max_registers decrease 16
  return
}

// -----

func.func @named_barrier_zero_is_the_blocks() {
  // expected-error @+1 {{'nf.named_barrier' op attribute 'id' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1 whose maximum value is 15}}
  nf.named_barrier 0, 256
  return
}
