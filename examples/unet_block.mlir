// A Stable-Diffusion style UNet ResNet block on channels-last (NHWC) f16
// activations (batch 2, 32x32, 320 channels, 32 groups):
//   h = conv3x3(silu(group_norm(x))) + b1
//   h = conv3x3(silu(group_norm(h))) + b2
//   y = x + h
// GroupNorm on NHWC followed by SiLU is one of the gaps normfuse closes.
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
  %c1 = nf.conv2d %a1, %w1 {layout = #nf.layout<nhwc>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<2x32x32x320xf16>, tensor<320x3x3x320xf16> -> tensor<2x32x32x320xf16>
  %h1 = nf.bias_add %c1, %b1 {layout = #nf.layout<nhwc>} : tensor<2x32x32x320xf16>, tensor<320xf16>
  %n2, %m2, %r2 = nf.group_norm %h1 scale %g2 bias %be2 {layout = #nf.layout<nhwc>, num_groups = 32 : i64}
      : (tensor<2x32x32x320xf16>, tensor<320xf16>, tensor<320xf16>)
      -> (tensor<2x32x32x320xf16>, tensor<2x32xf32>, tensor<2x32xf32>)
  %a2 = nf.silu %n2 : tensor<2x32x32x320xf16>
  %c2 = nf.conv2d %a2, %w2 {layout = #nf.layout<nhwc>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<2x32x32x320xf16>, tensor<320x3x3x320xf16> -> tensor<2x32x32x320xf16>
  %h2 = nf.bias_add %c2, %b2 {layout = #nf.layout<nhwc>} : tensor<2x32x32x320xf16>, tensor<320xf16>
  %y = nf.add %x, %h2 : tensor<2x32x32x320xf16>
  return %y : tensor<2x32x32x320xf16>
}
