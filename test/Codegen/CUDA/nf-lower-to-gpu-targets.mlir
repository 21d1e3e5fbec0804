// The schedules chosen for four GPU targets (normfuse/Runtime/GpuTarget.h):
// an H100 SXM (sm_90, 132 SMs: the default), an H100 PCIe (sm_90, 114), an
// A100 (sm_80, 108) and a T4 (sm_75, 40 SMs of 1024 threads). Grids of one
// wave follow the SM count and the threads an SM holds, tensor-core tiles
// whether they make a wave, split K how far the tiles are from one.
// RUN: nf-opt %s --nf-cuda-pipeline | FileCheck %s --check-prefixes=CHECK,SXM
// RUN: nf-opt %s --nf-cuda-pipeline=arch=h100-sxm | FileCheck %s --check-prefixes=CHECK,SXM
// RUN: nf-opt %s --nf-cuda-pipeline=arch=h100-pcie | FileCheck %s --check-prefixes=CHECK,PCIE
// RUN: nf-opt %s --nf-cuda-pipeline=arch=sm_90:sms=114 | FileCheck %s --check-prefixes=CHECK,PCIE
// RUN: nf-opt %s --nf-cuda-pipeline=arch=a100 | FileCheck %s --check-prefixes=CHECK,A100
// RUN: nf-opt %s --nf-cuda-pipeline=arch=sm_80 | FileCheck %s --check-prefixes=CHECK,A100
// RUN: nf-opt %s --nf-cuda-pipeline=arch=t4 | FileCheck %s --check-prefixes=CHECK,T4
// RUN: nf-opt %s --nf-cuda-pipeline=arch=sm_75 | FileCheck %s --check-prefixes=CHECK,T4

// The dx kernel's blocks loop over the rows, one block a resident slot:
// SMs x blocks of 256 threads a multiprocessor holds.
// CHECK-LABEL: gpu.func @ln_grad_layer_norm_grad(
// SXM-SAME: chunk=1024 max-blocks=1056 params-warps=32 params-unroll=4"
// PCIE-SAME: chunk=1024 max-blocks=912 params-warps=32 params-unroll=4"
// A100-SAME: chunk=1024 max-blocks=864 params-warps=32 params-unroll=4"
// T4-SAME: chunk=1024 max-blocks=160 params-warps=32 params-unroll=4"
func.func @ln_grad(%dy: tensor<4096x1024xf32>, %x: tensor<4096x1024xf32>, %m: tensor<4096x1xf32>, %r: tensor<4096x1xf32>) -> (tensor<4096x1024xf32>, tensor<1024xf32>, tensor<1024xf32>) {
  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r {axis = 1 : i64} : (tensor<4096x1024xf32>, tensor<4096x1024xf32>, tensor<4096x1xf32>, tensor<4096x1xf32>) -> (tensor<4096x1024xf32>, tensor<1024xf32>, tensor<1024xf32>)
  return %dx, %ds, %db : tensor<4096x1024xf32>, tensor<1024xf32>, tensor<1024xf32>
}

// The Stable Diffusion GroupNorm (NHWC, 10 channels a group): a part an
// SM slot, so T4's 40 SMs of 4 blocks take five times the positions a part.
// The one kernel's 128 blocks of 320 threads (4 vectors of 8 a thread) fit
// 2 a multiprocessor on 132, 114 and 108 SMs, not on T4's 40.
// CHECK-LABEL: gpu.func @sd_group_norm_group_norm_partial(
// SXM-SAME: registers=4 positions-per-part=6 finish-warps=8 resident-blocks=2 parts-from-residency"
// PCIE-SAME: registers=4 positions-per-part=6 finish-warps=8 resident-blocks=2 parts-from-residency"
// A100-SAME: registers=4 positions-per-part=6 finish-warps=8 resident-blocks=2 parts-from-residency"
// T4-SAME: registers=0 positions-per-part=30 finish-warps=8 parts-from-residency"
// T4-NOT: gpu.func @sd_group_norm_group_norm_one_kernel
func.func @sd_group_norm(%x: tensor<1x64x64x320xf16>, %s: tensor<320xf16>, %b: tensor<320xf16>) -> tensor<1x64x64x320xf16> {
  %y, %m, %r = nf.group_norm %x scale %s bias %b {layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (tensor<1x64x64x320xf16>, tensor<320xf16>, tensor<320xf16>) -> (tensor<1x64x64x320xf16>, tensor<1x32xf32>, tensor<1x32xf32>)
  return %y : tensor<1x64x64x320xf16>
}

// 11 x 11 tiles of 128: a wave on 114 and 108 SMs, not on 132.
// CHECK-LABEL: gpu.func @mm_1408_matmul(
// SXM-SAME: nf.schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3"
// PCIE-SAME: nf.schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3"
// A100-SAME: nf.schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3"
// T4-SAME: nf.schedule = "tiled-product tile=128x128x8 thread=8x8"
func.func @mm_1408(%a: tensor<1408x4096xf16>, %b: tensor<4096x1408xf16>) -> tensor<1408x1408xf16> {
  %c = nf.matmul %a, %b : tensor<1408x4096xf16>, tensor<4096x1408xf16> -> tensor<1408x1408xf16>
  return %c : tensor<1408x1408xf16>
}

// The batch counts: 8 x 4 x 4 = 128 tiles of 128.
// CHECK-LABEL: gpu.func @mm_batch8_matmul(
// SXM-SAME: nf.schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3"
// PCIE-SAME: nf.schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3"
// A100-SAME: nf.schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3"
// T4-SAME: nf.schedule = "tiled-product tile=128x128x8 thread=8x8"
func.func @mm_batch8(%a: tensor<8x512x512xbf16>, %b: tensor<8x512x512xbf16>) -> tensor<8x512x512xbf16> {
  %c = nf.matmul %a, %b : tensor<8x512x512xbf16>, tensor<8x512x512xbf16> -> tensor<8x512x512xbf16>
  return %c : tensor<8x512x512xbf16>
}

// 256 tokens through a wide layer: 64 tiles of 64, K split to fill twice
// the SMs (264 / 64 -> 5 splits, 228 / 64 and 216 / 64 -> 4); no tensor
// cores on sm_75, whose SIMT kernel splits K too (80 / 64 -> 2).
// CHECK-LABEL: gpu.func @mm_few_matmul(
// SXM-SAME: nf.schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3 split-k=5 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"
// PCIE-SAME: nf.schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3 split-k=4 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"
// A100-SAME: nf.schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3 split-k=4 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"
// T4-SAME: nf.schedule = "tiled-product tile=64x64x8 thread=4x4 split-k=2 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"
func.func @mm_few(%a: tensor<256x8192xf16>, %b: tensor<8192x1024xf16>) -> tensor<256x1024xf16> {
  %c = nf.matmul %a, %b : tensor<256x8192xf16>, tensor<8192x1024xf16> -> tensor<256x1024xf16>
  return %c : tensor<256x1024xf16>
}

// 64 columns of 4096: two groups of 32 columns, 1024 threads each on
// every part (2 blocks do not fill any of them), so each column's rows
// split in 8 parts (as many as leave 16 rows a warp), a block each.
// CHECK-LABEL: gpu.func @column_sums_reduce(
// CHECK-SAME: nf.schedule = "block-columns block=1024 elements=4096 splits=8"
func.func @column_sums(%x: tensor<4096x64xf32>) -> tensor<64xf32> {
  %0 = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<4096x64xf32>) -> tensor<1x64xf32>
  %1 = tosa.reshape %0 {new_shape = array<i64: 64>} : (tensor<1x64xf32>) -> tensor<64xf32>
  return %1 : tensor<64xf32>
}
