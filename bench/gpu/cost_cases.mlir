// Shapes whose predicted GPU cost docs/CUDA.md tables ("Predicted costs"):
//   build/bin/nf-translate --nf-gpu-cost --cuda-arch=h100-sxm bench/gpu/cost_cases.mlir
// The same families and sizes as the GPU sweep (bench/gpu/sweep.py), so
// that a measurement can be set beside each line.

func.func @layer_norm_8192x1024_bf16(%x: tensor<8192x1024xbf16>, %g: tensor<1024xbf16>, %b: tensor<1024xbf16>) -> tensor<8192x1024xbf16> {
  %y, %m, %r = nf.layer_norm %x scale %g bias %b {axis = 1 : i64} : (tensor<8192x1024xbf16>, tensor<1024xbf16>, tensor<1024xbf16>) -> (tensor<8192x1024xbf16>, tensor<8192x1xf32>, tensor<8192x1xf32>)
  return %y : tensor<8192x1024xbf16>
}

func.func @rms_norm_4096x8192_bf16(%x: tensor<4096x8192xbf16>, %g: tensor<8192xbf16>) -> tensor<4096x8192xbf16> {
  %y, %r = nf.rms_norm %x scale %g {axis = 1 : i64} : (tensor<4096x8192xbf16>, tensor<8192xbf16>) -> (tensor<4096x8192xbf16>, tensor<4096x1xf32>)
  return %y : tensor<4096x8192xbf16>
}

func.func @layer_norm_256x65536_f32(%x: tensor<256x65536xf32>) -> tensor<256x65536xf32> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<256x65536xf32>) -> (tensor<256x65536xf32>, tensor<256x1xf32>, tensor<256x1xf32>)
  return %y : tensor<256x65536xf32>
}

func.func @layer_norm_grad_8192x1024_bf16(%dy: tensor<8192x1024xbf16>, %x: tensor<8192x1024xbf16>, %m: tensor<8192x1xf32>, %r: tensor<8192x1xf32>, %g: tensor<1024xbf16>) -> (tensor<8192x1024xbf16>, tensor<1024xbf16>, tensor<1024xbf16>) {
  %dx, %dg, %db = nf.layer_norm_grad %dy, %x, %m, %r scale %g {axis = 1 : i64} : (tensor<8192x1024xbf16>, tensor<8192x1024xbf16>, tensor<8192x1xf32>, tensor<8192x1xf32>, tensor<1024xbf16>) -> (tensor<8192x1024xbf16>, tensor<1024xbf16>, tensor<1024xbf16>)
  return %dx, %dg, %db : tensor<8192x1024xbf16>, tensor<1024xbf16>, tensor<1024xbf16>
}

func.func @layer_norm_grad_64x32768_bf16(%dy: tensor<64x32768xbf16>, %x: tensor<64x32768xbf16>, %m: tensor<64x1xf32>, %r: tensor<64x1xf32>, %g: tensor<32768xbf16>) -> (tensor<64x32768xbf16>, tensor<32768xbf16>, tensor<32768xbf16>) {
  %dx, %dg, %db = nf.layer_norm_grad %dy, %x, %m, %r scale %g {axis = 1 : i64} : (tensor<64x32768xbf16>, tensor<64x32768xbf16>, tensor<64x1xf32>, tensor<64x1xf32>, tensor<32768xbf16>) -> (tensor<64x32768xbf16>, tensor<32768xbf16>, tensor<32768xbf16>)
  return %dx, %dg, %db : tensor<64x32768xbf16>, tensor<32768xbf16>, tensor<32768xbf16>
}

func.func @group_norm_nhwc_1x64x64x320_f16(%x: tensor<1x64x64x320xf16>, %g: tensor<320xf16>, %b: tensor<320xf16>) -> tensor<1x64x64x320xf16> {
  %y, %m, %r = nf.group_norm %x scale %g bias %b {layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (tensor<1x64x64x320xf16>, tensor<320xf16>, tensor<320xf16>) -> (tensor<1x64x64x320xf16>, tensor<1x32xf32>, tensor<1x32xf32>)
  return %y : tensor<1x64x64x320xf16>
}

func.func @batch_norm_training_nhwc_32x56x56x256_bf16(%x: tensor<32x56x56x256xbf16>, %g: tensor<256xbf16>, %b: tensor<256xbf16>, %rm: tensor<256xf32>, %rv: tensor<256xf32>) -> tensor<32x56x56x256xbf16> {
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x scale %g bias %b running(%rm, %rv) {layout = #nf.layout<nhwc>} : (tensor<32x56x56x256xbf16>, tensor<256xbf16>, tensor<256xbf16>, tensor<256xf32>, tensor<256xf32>) -> (tensor<32x56x56x256xbf16>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>)
  return %y : tensor<32x56x56x256xbf16>
}

func.func @batch_norm_training_nchw_32x256x56x56_bf16(%x: tensor<32x256x56x56xbf16>, %g: tensor<256xbf16>, %b: tensor<256xbf16>, %rm: tensor<256xf32>, %rv: tensor<256xf32>) -> tensor<32x256x56x56xbf16> {
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x scale %g bias %b running(%rm, %rv) {layout = #nf.layout<nchw>} : (tensor<32x256x56x56xbf16>, tensor<256xbf16>, tensor<256xbf16>, tensor<256xf32>, tensor<256xf32>) -> (tensor<32x256x56x56xbf16>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>)
  return %y : tensor<32x256x56x56xbf16>
}

func.func @batch_norm_grad_nchw_32x256x56x56_bf16(%dy: tensor<32x256x56x56xbf16>, %x: tensor<32x256x56x56xbf16>, %m: tensor<256xf32>, %r: tensor<256xf32>, %g: tensor<256xf32>) -> tensor<32x256x56x56xbf16> {
  %dx, %dg, %db = nf.batch_norm_grad %dy, %x, %m, %r scale %g {layout = #nf.layout<nchw>} : (tensor<32x256x56x56xbf16>, tensor<32x256x56x56xbf16>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) -> (tensor<32x256x56x56xbf16>, tensor<256xf32>, tensor<256xf32>)
  return %dx : tensor<32x256x56x56xbf16>
}

func.func @matmul_4096x4096x4096_bf16(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %c = nf.matmul %a, %b : tensor<4096x4096xbf16>, tensor<4096x4096xbf16> -> tensor<4096x4096xbf16>
  return %c : tensor<4096x4096xbf16>
}

func.func @matmul_512x768x768_bf16(%a: tensor<512x768xbf16>, %b: tensor<768x768xbf16>) -> tensor<512x768xbf16> {
  %c = nf.matmul %a, %b : tensor<512x768xbf16>, tensor<768x768xbf16> -> tensor<512x768xbf16>
  return %c : tensor<512x768xbf16>
}

func.func @conv2d_nhwc_32x56x56x64_3x3_bf16(%x: tensor<32x56x56x64xbf16>, %w: tensor<64x3x3x64xbf16>) -> tensor<32x56x56x64xbf16> {
  %y = nf.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, layout = #nf.layout<nhwc>} : tensor<32x56x56x64xbf16>, tensor<64x3x3x64xbf16> -> tensor<32x56x56x64xbf16>
  return %y : tensor<32x56x56x64xbf16>
}

func.func @conv2d_nchw_32x64x56x56_3x3_bf16(%x: tensor<32x64x56x56xbf16>, %w: tensor<64x64x3x3xbf16>) -> tensor<32x64x56x56xbf16> {
  %y = nf.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<32x64x56x56xbf16>, tensor<64x64x3x3xbf16> -> tensor<32x64x56x56xbf16>
  return %y : tensor<32x64x56x56xbf16>
}

func.func @group_norm_grad_nhwc_2x64x64x320_bf16(%dy: tensor<2x64x64x320xbf16>, %x: tensor<2x64x64x320xbf16>, %m: tensor<2x32xf32>, %r: tensor<2x32xf32>, %g: tensor<320xf32>) -> (tensor<2x64x64x320xbf16>, tensor<320xf32>, tensor<320xf32>) {
  %dx, %dg, %db = nf.group_norm_grad %dy, %x, %m, %r scale %g {layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (tensor<2x64x64x320xbf16>, tensor<2x64x64x320xbf16>, tensor<2x32xf32>, tensor<2x32xf32>, tensor<320xf32>) -> (tensor<2x64x64x320xbf16>, tensor<320xf32>, tensor<320xf32>)
  return %dx, %dg, %db : tensor<2x64x64x320xbf16>, tensor<320xf32>, tensor<320xf32>
}

func.func @group_norm_nchw_32x256x56x56_bf16(%x: tensor<32x256x56x56xbf16>, %g: tensor<256xbf16>, %b: tensor<256xbf16>) -> tensor<32x256x56x56xbf16> {
  %y, %m, %r = nf.group_norm %x scale %g bias %b {layout = #nf.layout<nchw>, num_groups = 32 : i64} : (tensor<32x256x56x56xbf16>, tensor<256xbf16>, tensor<256xbf16>) -> (tensor<32x256x56x56xbf16>, tensor<32x32xf32>, tensor<32x32xf32>)
  return %y : tensor<32x256x56x56xbf16>
}
