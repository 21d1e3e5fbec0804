func.func @ln(%x: tensor<4x13xf32>) -> (tensor<4x13xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x13xf32>) -> (tensor<4x13xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y, %m, %r : tensor<4x13xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}

func.func @gelu_bf16(%x: tensor<2x8xbf16>) -> tensor<2x8xbf16> {
  %0 = nf.gelu %x : tensor<2x8xbf16>
  return %0 : tensor<2x8xbf16>
}

func.func @bn_grad(%dy: tensor<2x3x4x4xf32>, %x: tensor<2x3x4x4xf32>, %m: tensor<3xf32>, %r: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %dx, %ds, %db = nf.batch_norm_grad %dy, %x, %m, %r : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %dx : tensor<2x3x4x4xf32>
}

func.func @gn_grad(%dy: tensor<2x3x4x4xf32>, %x: tensor<2x3x4x4xf32>, %m: tensor<2x3xf32>, %r: tensor<2x3xf32>) -> tensor<2x3x4x4xf32> {
  %dx, %ds, %db = nf.group_norm_grad %dy, %x, %m, %r {num_groups = 3 : i64} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %dx : tensor<2x3x4x4xf32>
}

// Op by op, relu's result is an intermediate of 512 KiB.
func.func @relu_silu(%x: tensor<256x512xf32>) -> tensor<256x512xf32> {
  %0 = nf.relu %x : tensor<256x512xf32>
  %1 = nf.silu %0 : tensor<256x512xf32>
  return %1 : tensor<256x512xf32>
}
