func.func @f(%x: tensor<4xf32>) {
  %0 = nf.frobnicate %x : tensor<4xf32>
  return
}
