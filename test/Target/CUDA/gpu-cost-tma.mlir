// nf-translate --nf-gpu-cost on a product whose operands TMA loads stage:
// the bytes count each buffer once, a tensor map's as its buffer's (A
// 200 x 72 and B 72 x 136 f16 in, 200 x 136 out: 0.103 MB), not twice.
// RUN: nf-translate --nf-gpu-cost --cuda-arch=compute_90a %s | FileCheck %s
// RUN: nf-translate --nf-gpu-cost --cuda-arch=compute_90a:sms=131 %s | FileCheck %s --check-prefix=ODD

// CHECK-LABEL: @mlp: 1 launch, 0.103 MB by the kernels, 0.103 MB in and out
// CHECK: mlp_matmul {{.*}} 0.103  tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma
func.func @mlp(%a: tensor<200x72xf16>, %b: tensor<72x136xf16>) -> tensor<200x136xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma"} : tensor<200x72xf16>, tensor<72x136xf16> -> tensor<200x136xf16>
  return %p : tensor<200x136xf16>
}

// Warp specialized, the grid is persistent: 512 tiles of 4096^3 on an
// H100 SXM's 132 SMs (compute_90a: no ptxas, the target's figures) in as
// many blocks as the device holds at once, 132 of 384 threads (one an SM:
// 213,040 bytes of shared memory each), which loop over the 512 units
// (3.88 waves of them: 4 rounds, the last 88% full); and the tiles where
// there are fewer (200 x 136: 2 x 2 of 128 x 128, no units to show).
// CHECK-LABEL: @ws: 1 launch
// CHECK: ws_matmul 132 512 384 ? 213040 1 (shared memory) 3.88 100.663 tensor-core-product tile=128x256x64 warps=8x1 stages=3 wgmma tma warp-specialized
// CHECK-LABEL: @ws_small: 1 launch
// CHECK: ws_small_matmul 4 - 256 ? 81968 2 (shared memory) 0.02 0.103 tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma warp-specialized
func.func @ws(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x256x64 warps=8x1 stages=3 wgmma tma warp-specialized"} : tensor<4096x4096xf16>, tensor<4096x4096xf16> -> tensor<4096x4096xf16>
  return %p : tensor<4096x4096xf16>
}
func.func @ws_small(%a: tensor<200x72xf16>, %b: tensor<72x136xf16>) -> tensor<200x136xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma warp-specialized"} : tensor<200x72xf16>, tensor<72x136xf16> -> tensor<200x136xf16>
  return %p : tensor<200x136xf16>
}

// In clusters of two sharing B's tiles, the grid is persistent in whole
// clusters: 66 of them (132 blocks, the target's count rounded down to
// clusters of two), each looping over pairs of tiles along M (16 x 16
// pairs: 512 units of a block each).
// CHECK-LABEL: @ws_multicast: 1 launch
// On 131 SMs, 65 clusters: 130 blocks over the 512 units.
// ODD: ws_matmul 131 512 384 ? 213040 1 (shared memory) 3.91
// ODD: ws_multicast_matmul 130 512 384 ? 213040 1 (shared memory) 3.94
// CHECK: ws_multicast_matmul 132 512 384 ? 213040 1 (shared memory) 3.88 100.663 tensor-core-product tile=128x256x64 warps=8x1 stages=3 wgmma tma warp-specialized multicast
func.func @ws_multicast(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x256x64 warps=8x1 stages=3 wgmma tma warp-specialized multicast"} : tensor<4096x4096xf16>, tensor<4096x4096xf16> -> tensor<4096x4096xf16>
  return %p : tensor<4096x4096xf16>
}
