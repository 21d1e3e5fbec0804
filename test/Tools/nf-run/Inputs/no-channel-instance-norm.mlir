// An instance norm of no channels: an empty result, no kernel launched.
func.func @g(%x: tensor<2x3x3x0xf32>) -> tensor<2x3x3x0xf32> {
  %y, %m, %r = nf.instance_norm %x {layout = #nf.layout<nhwc>} : (tensor<2x3x3x0xf32>) -> (tensor<2x3x3x0xf32>, tensor<2x0xf32>, tensor<2x0xf32>)
  return %y : tensor<2x3x3x0xf32>
}
