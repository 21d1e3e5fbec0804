func.func @ln(%x: tensor<4x13xf32>) -> (tensor<4x13xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x13xf32>) -> (tensor<4x13xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y, %m, %r : tensor<4x13xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}

func.func @gelu_bf16(%x: tensor<2x8xbf16>) -> tensor<2x8xbf16> {
  %0 = nf.gelu %x : tensor<2x8xbf16>
  return %0 : tensor<2x8xbf16>
}

func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = nf.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}
