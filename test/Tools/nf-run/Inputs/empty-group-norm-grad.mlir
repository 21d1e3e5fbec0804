// A group norm gradient over images with no positions: dx is empty and the
// parameter gradients are zeros (nothing to sum).
func.func @f(%dy: tensor<2x4x0x16xf32>, %x: tensor<2x4x0x16xf32>, %m: tensor<2x4xf32>, %r: tensor<2x4xf32>) -> (tensor<2x4x0x16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %dx, %ds, %db = nf.group_norm_grad %dy, %x, %m, %r {layout = #nf.layout<nhwc>, num_groups = 4 : i64} : (tensor<2x4x0x16xf32>, tensor<2x4x0x16xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<2x4x0x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %dx, %ds, %db : tensor<2x4x0x16xf32>, tensor<16xf32>, tensor<16xf32>
}
