// A layer norm written to hold 64 registers of a row a thread at 256
// threads: ptxas spills it (gpu-cost-registers.test).
func.func @ln(%x: tensor<64x65536xf32>) -> tensor<64x65536xf32> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64, nf.gpu_schedule = "block-row-registers threads-per-row=256 rows-per-block=1 vector=4 registers=64"} : (tensor<64x65536xf32>) -> (tensor<64x65536xf32>, tensor<64x1xf32>, tensor<64x1xf32>)
  return %y : tensor<64x65536xf32>
}
