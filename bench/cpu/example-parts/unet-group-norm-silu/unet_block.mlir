// A part of examples/unet_block.mlir:
// the UNet block's first GroupNorm + SiLU alone, with the example's
// signature (unused arguments included) so that nf-bench-cpu-examples can
// time it fused against unfused:
//   nf-bench-cpu-examples --only unet_block --examples bench/cpu/example-parts/unet-group-norm-silu
func.func @unet_resnet_block(
    %x: tensor<2x32x32x320xf16>,
    %g1: tensor<320xf16>, %be1: tensor<320xf16>,
    %w1: tensor<320x3x3x320xf16>, %b1: tensor<320xf16>,
    %g2: tensor<320xf16>, %be2: tensor<320xf16>,
    %w2: tensor<320x3x3x320xf16>, %b2: tensor<320xf16>) -> tensor<2x32x32x320xf16> {
  %n1, %m1, %r1 = nf.group_norm %x scale %g1 bias %be1 {layout = #nf.layout<nhwc>, num_groups = 32 : i64}
      : (tensor<2x32x32x320xf16>, tensor<320xf16>, tensor<320xf16>)
      -> (tensor<2x32x32x320xf16>, tensor<2x32xf32>, tensor<2x32xf32>)
  %a1 = nf.silu %n1 : tensor<2x32x32x320xf16>
  return %a1 : tensor<2x32x32x320xf16>
}
