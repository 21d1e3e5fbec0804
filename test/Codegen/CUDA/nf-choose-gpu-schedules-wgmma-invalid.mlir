// A wgmma schedule written on a product that wgmma cannot run on sm_90a is
// an error at the op, with the reason: warps that are not whole
// warpgroups along M, a warpgroup's width that is no wgmma's N, more
// accumulators than registers hold, K tiles whose rows are not one
// swizzle, too few stages to copy one ahead, tf32, a warp-specialized
// kernel without wgmma or past shared memory, multicast without it or TMA
// or of a tile too narrow to halve, two teams (pingpong) without it, past shared
// memory (a staging buffer a team) or past 1024 threads.
// RUN: nf-opt %s --nf-choose-gpu-schedules=arch=sm_90a -split-input-file -verify-diagnostics

func.func @warps_not_whole_warpgroups(%a: tensor<256x256xf16>) -> tensor<256x256xf16> {
  // expected-error @+1 {{warpgroups of 2x2 warps (warps along M a multiple of 4) over 128 rows (64 a warpgroup at a time)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3 wgmma"} : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  return %c : tensor<256x256xf16>
}

// -----

func.func @warpgroup_width_no_wgmma_has(%a: tensor<256x256xf16>) -> tensor<256x256xf16> {
  // expected-error @+1 {{warpgroups of 96 columns (64, 128 or 256)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=128x192x32 warps=4x2 stages=3 wgmma"} : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  return %c : tensor<256x256xf16>
}

// -----

func.func @too_many_accumulators(%a: tensor<256x256xf16>) -> tensor<256x256xf16> {
  // expected-error @+1 {{256 accumulators a thread (at most 128)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=128x256x32 warps=4x1 stages=3 wgmma"} : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  return %c : tensor<256x256xf16>
}

// -----

func.func @k_rows_wider_than_a_swizzle(%a: tensor<256x256xf16>) -> tensor<256x256xf16> {
  // expected-error @+1 {{K tiles of 128 (16, 32 or 64: rows of one swizzle)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=64x64x128 warps=4x1 stages=3 wgmma"} : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  return %c : tensor<256x256xf16>
}

// -----

func.func @two_stages(%a: tensor<256x256xf16>) -> tensor<256x256xf16> {
  // expected-error @+1 {{2 stages (wgmma copies stages - 2 ahead: at least 3)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=2 wgmma"} : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  return %c : tensor<256x256xf16>
}

// -----

func.func @wgmma_on_tf32(%a: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{wgmma with tf32 (wgmma here takes f16 or bf16)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 tf32 wgmma"} : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %c : tensor<256x256xf32>
}

// -----

// Warp specialized: the producer warpgroup issues TMA loads, so the
// schedule has `tma`; its result tile has shared memory of its own beside
// the stages (4 stages of 48 KiB and 64 KiB are more than a block has).
func.func @warp_specialized_without_wgmma(%a: tensor<256x256xf16>) -> tensor<256x256xf16> {
  // expected-error @+1 {{warp-specialized without wgmma (its consumers are warpgroups)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3 warp-specialized"} : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  return %c : tensor<256x256xf16>
}

// -----

func.func @warp_specialized_result_tile_past_shared_memory(%a: tensor<256x256xf16>) -> tensor<256x256xf16> {
  // expected-error @+1 {{4 stages of 49168 bytes and a result tile of 65536 bytes (a block of h100-sxm has 232448)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=128x256x64 warps=8x1 stages=4 wgmma tma warp-specialized"} : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  return %c : tensor<256x256xf16>
}

// -----

// Multicast: clusters of warp-specialized blocks, each loading half of B's
// tile in boxes of 64 columns by TMA.
func.func @multicast_without_tma(%a: tensor<256x256xf16>) -> tensor<256x256xf16> {
  // expected-error @+1 {{multicast without tma (the blocks share B's tiles by TMA loads)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma warp-specialized multicast"} : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  return %c : tensor<256x256xf16>
}

// -----

func.func @multicast_without_warp_specialized(%a: tensor<256x256xf16>) -> tensor<256x256xf16> {
  // expected-error @+1 {{multicast without warp-specialized (the clusters' producer warpgroups share B's tiles)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma multicast"} : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  return %c : tensor<256x256xf16>
}

// -----

func.func @multicast_of_a_64_column_tile(%a: tensor<256x256xf16>) -> tensor<256x256xf16> {
  // expected-error @+1 {{multicast halves of 64 columns (a multiple of 128: boxes of 64 a block)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=128x64x32 warps=4x1 stages=3 wgmma tma warp-specialized multicast"} : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  return %c : tensor<256x256xf16>
}

// -----

// Pingpong: two teams of consumers in a warp-specialized block, each with
// its own staging buffer.
func.func @pingpong_without_warp_specialized(%a: tensor<256x256xf16>) -> tensor<256x256xf16> {
  // expected-error @+1 {{pingpong without warp-specialized (its producer warpgroup feeds the two teams in turns)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma pingpong"} : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  return %c : tensor<256x256xf16>
}

// -----

func.func @pingpong_staging_past_shared_memory(%a: tensor<256x256xf16>) -> tensor<256x256xf16> {
  // expected-error @+1 {{3 stages of 49168 bytes and a result tile of 65536 bytes a team (a block of h100-sxm has 232448)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=128x256x64 warps=8x1 stages=3 wgmma tma warp-specialized pingpong"} : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  return %c : tensor<256x256xf16>
}

// -----

func.func @pingpong_past_1024_threads(%a: tensor<256x256xf16>) -> tensor<256x256xf16> {
  // expected-error @+1 {{blocks of 1152 threads (at most 1024)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=256x128x16 warps=16x1 stages=3 wgmma tma warp-specialized pingpong"} : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  return %c : tensor<256x256xf16>
}
