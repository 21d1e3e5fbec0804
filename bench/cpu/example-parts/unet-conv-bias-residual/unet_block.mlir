// A part of examples/unet_block.mlir:
// the UNet block's 3x3 conv + bias + residual add alone, with the example's
// signature (unused arguments included) so that nf-bench-cpu-examples can
// time it fused against unfused:
//   nf-bench-cpu-examples --only unet_block --examples bench/cpu/example-parts/unet-conv-bias-residual
func.func @unet_resnet_block(
    %x: tensor<2x32x32x320xf16>,
    %g1: tensor<320xf16>, %be1: tensor<320xf16>,
    %w1: tensor<320x3x3x320xf16>, %b1: tensor<320xf16>,
    %g2: tensor<320xf16>, %be2: tensor<320xf16>,
    %w2: tensor<320x3x3x320xf16>, %b2: tensor<320xf16>) -> tensor<2x32x32x320xf16> {
  %c1 = nf.conv2d %x, %w1 {layout = #nf.layout<nhwc>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<2x32x32x320xf16>, tensor<320x3x3x320xf16> -> tensor<2x32x32x320xf16>
  %h1 = nf.bias_add %c1, %b1 {layout = #nf.layout<nhwc>} : tensor<2x32x32x320xf16>, tensor<320xf16>
  %y = nf.add %x, %h1 : tensor<2x32x32x320xf16>
  return %y : tensor<2x32x32x320xf16>
}
