// Products whose schedules are written on them (nf.gpu_schedule), for
// sm_90a: warp specialized with two consumer warpgroups (8 x 1 warps by
// TMA, and two teams of 4 x 1), and with one (4 x 1 warps).
func.func @two(%a: tensor<256x128xf16>, %b: tensor<128x256xf16>) -> tensor<256x256xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x256x64 warps=8x1 stages=3 wgmma tma warp-specialized"} : tensor<256x128xf16>, tensor<128x256xf16> -> tensor<256x256xf16>
  return %p : tensor<256x256xf16>
}

func.func @teams(%a: tensor<256x128xf16>, %b: tensor<128x256xf16>) -> tensor<256x256xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x128x64 warps=4x1 stages=4 wgmma tma warp-specialized pingpong"} : tensor<256x128xf16>, tensor<128x256xf16> -> tensor<256x256xf16>
  return %p : tensor<256x256xf16>
}

func.func @one(%a: tensor<256x128xf16>, %b: tensor<128x256xf16>) -> tensor<256x256xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x128x64 warps=4x1 stages=4 wgmma tma warp-specialized"} : tensor<256x128xf16>, tensor<128x256xf16> -> tensor<256x256xf16>
  return %p : tensor<256x256xf16>
}
