func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = arith.constant dense<[(1.0, 2.0), (3.0, 4.0)]> : tensor<2xcomplex<f32>>
  %y = nf.relu %x : tensor<2xf32>
  return %y : tensor<2xf32>
}
