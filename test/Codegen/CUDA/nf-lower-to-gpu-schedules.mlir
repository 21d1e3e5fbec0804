// The CUDA schedule layer's choice for row norms, by row length and element
// type (Schedule.cpp): (part of) a warp per row up to 1024 elements, a block
// per row with the row in registers up to 32 elements a thread of 256
// threads; longer rows on a cluster of up to 8 such blocks where the target
// has clusters (sm_90), or a block of up to 1024 threads elsewhere; the row
// split across blocks beyond that or when the length is unknown; 16-byte
// vectors that divide the row.
// RUN: nf-opt %s --nf-lower-to-gpu | FileCheck %s --check-prefixes=CHECK,CLUSTERS
// RUN: nf-opt %s --nf-lower-to-gpu=arch=sm_80 | FileCheck %s --check-prefixes=CHECK,BLOCKS
// RUN: nf-opt %s --nf-lower-to-gpu=arch=sm_90:clusters=0 | FileCheck %s --check-prefixes=CHECK,BLOCKS

// CHECK-LABEL: gpu.func @rows_of_128_f32_layer_norm
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME: nf.schedule = "warp-rows threads-per-row=32 rows-per-block=8 vector=4 registers=1"
func.func @rows_of_128_f32(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x1xf32>, tensor<64x1xf32>)
  return %y : tensor<64x128xf32>
}
// Two lanes of a warp per row of 8 (two float4 loads), 128 rows a block.
// CHECK-LABEL: gpu.func @rows_of_8_f32_layer_norm
// CHECK-SAME: nf.schedule = "warp-rows threads-per-row=2 rows-per-block=128 vector=4 registers=1"
func.func @rows_of_8_f32(%x: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<64x8xf32>) -> (tensor<64x8xf32>, tensor<64x1xf32>, tensor<64x1xf32>)
  return %y : tensor<64x8xf32>
}
// CHECK-LABEL: gpu.func @rows_of_1024_bf16_rms_norm
// CHECK-SAME: nf.schedule = "warp-rows threads-per-row=32 rows-per-block=8 vector=8 registers=4"
func.func @rows_of_1024_bf16(%x: tensor<64x1024xbf16>) -> tensor<64x1024xbf16> {
  %y, %r = nf.rms_norm %x {axis = 1 : i64} : (tensor<64x1024xbf16>) -> (tensor<64x1024xbf16>, tensor<64x1xf32>)
  return %y : tensor<64x1024xbf16>
}
// A block of 256 threads a row, two vectors of 8 each (more loads in
// flight a thread, fewer threads in each reduction).
// CHECK-LABEL: gpu.func @rows_of_4096_bf16_rms_norm
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME: nf.schedule = "block-row-registers threads-per-row=256 rows-per-block=1 vector=8 registers=2"
func.func @rows_of_4096_bf16(%x: tensor<64x4096xbf16>) -> tensor<64x4096xbf16> {
  %y, %r = nf.rms_norm %x {axis = 1 : i64} : (tensor<64x4096xbf16>) -> (tensor<64x4096xbf16>, tensor<64x1xf32>)
  return %y : tensor<64x4096xbf16>
}
// Beyond 256 threads of 32 elements: 4 blocks of 256 threads in a
// cluster, or one block of 1024 threads.
// CHECK-LABEL: gpu.func @rows_of_32768_f32_layer_norm
// CLUSTERS-SAME: known_block_size = array<i32: 256, 1, 1>
// CLUSTERS-SAME: nf.cluster_blocks = 4 : i64, nf.schedule = "cluster-row threads-per-row=256 rows-per-block=1 vector=4 registers=8 cluster=4"
// BLOCKS-NOT: nf.cluster_blocks
// BLOCKS-SAME: nf.schedule = "block-row-registers threads-per-row=1024 rows-per-block=1 vector=4 registers=8"
func.func @rows_of_32768_f32(%x: tensor<4x32768xf32>) -> tensor<4x32768xf32> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x32768xf32>) -> (tensor<4x32768xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y : tensor<4x32768xf32>
}
// A cluster of 8 blocks holds the row; without clusters 64 floats a thread
// would not stay in registers: the row is split into chunks of 16384, a
// block each, in two kernels.
// CLUSTERS-LABEL: gpu.func @rows_of_65536_f32_layer_norm(
// CLUSTERS-SAME: nf.schedule = "cluster-row threads-per-row=256 rows-per-block=1 vector=4 registers=8 cluster=8"
// BLOCKS-LABEL: gpu.func @rows_of_65536_f32_layer_norm_partial
// BLOCKS-SAME: nf.schedule = "split-row threads-per-row=512 rows-per-block=1 vector=4 registers=8 chunk=16384"
// BLOCKS-LABEL: gpu.func @rows_of_65536_f32_layer_norm_normalize
func.func @rows_of_65536_f32(%x: tensor<4x65536xf32>) -> tensor<4x65536xf32> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x65536xf32>) -> (tensor<4x65536xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y : tensor<4x65536xf32>
}
// The longest rows a cluster holds: 8 blocks of 1024 threads (bf16 of
// 262144), 8 of 512 threads for f64 of 65536 (16 elements a thread).
// CLUSTERS-LABEL: gpu.func @rows_of_262144_bf16_rms_norm(
// CLUSTERS-SAME: nf.schedule = "cluster-row threads-per-row=1024 rows-per-block=1 vector=8 registers=4 cluster=8"
// BLOCKS-LABEL: gpu.func @rows_of_262144_bf16_rms_norm_partial
func.func @rows_of_262144_bf16(%x: tensor<2x262144xbf16>) -> tensor<2x262144xbf16> {
  %y, %r = nf.rms_norm %x {axis = 1 : i64} : (tensor<2x262144xbf16>) -> (tensor<2x262144xbf16>, tensor<2x1xf32>)
  return %y : tensor<2x262144xbf16>
}
// CLUSTERS-LABEL: gpu.func @rows_of_65536_f64_layer_norm(
// CLUSTERS-SAME: nf.schedule = "cluster-row threads-per-row=512 rows-per-block=1 vector=2 registers=8 cluster=8"
// BLOCKS-LABEL: gpu.func @rows_of_65536_f64_layer_norm_partial
func.func @rows_of_65536_f64(%x: tensor<2x65536xf64>) -> tensor<2x65536xf64> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<2x65536xf64>) -> (tensor<2x65536xf64>, tensor<2x1xf64>, tensor<2x1xf64>)
  return %y : tensor<2x65536xf64>
}
// Longer than any cluster holds: split everywhere.
// CHECK-LABEL: gpu.func @rows_of_524288_f32_layer_norm_partial
// CHECK-SAME: nf.schedule = "split-row threads-per-row=512 rows-per-block=1 vector=4 registers=8 chunk=16384"
func.func @rows_of_524288_f32(%x: tensor<2x524288xf32>) -> tensor<2x524288xf32> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<2x524288xf32>) -> (tensor<2x524288xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %y : tensor<2x524288xf32>
}
// An odd length: no vector divides it; rows are peeled (16-byte vectors
// from each row's first 16-byte boundary, single elements before and
// after): 640 vectors of 8 at most, three a thread (224 threads).
// CHECK-LABEL: gpu.func @rows_of_5121_f16_layer_norm
// CHECK-SAME: nf.schedule = "block-row-registers threads-per-row=224 rows-per-block=1 vector=8 registers=3 peeled"
func.func @rows_of_5121_f16(%x: tensor<4x5121xf16>) -> tensor<4x5121xf16> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x5121xf16>) -> (tensor<4x5121xf16>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y : tensor<4x5121xf16>
}
// A length unknown here: split and peeled.
// CHECK-LABEL: gpu.func @rows_of_unknown_length_layer_norm_partial
// CHECK-SAME: nf.schedule = "split-row threads-per-row=512 rows-per-block=1 vector=4 registers=8 chunk=16384 peeled"
func.func @rows_of_unknown_length(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x?xf32>) -> (tensor<4x?xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y : tensor<4x?xf32>
}
// Shorter than 4 vectors of 4: single elements, not peeled.
// CHECK-LABEL: gpu.func @rows_of_15_f32_layer_norm
// CHECK-SAME: nf.schedule = "warp-rows threads-per-row=16 rows-per-block=16 vector=1 registers=1"
func.func @rows_of_15_f32(%x: tensor<4x15xf32>) -> tensor<4x15xf32> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x15xf32>) -> (tensor<4x15xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y : tensor<4x15xf32>
}
// Rows over two trailing dimensions (2x3 f64): 16-byte vectors of 2.
// CHECK-LABEL: gpu.func @rows_of_2_f64_layer_norm
// CHECK-SAME: nf.schedule = "warp-rows threads-per-row=4 rows-per-block=64 vector=2 registers=1"
func.func @rows_of_2_f64(%x: tensor<64x2x3xf64>) -> tensor<64x2x3xf64> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<64x2x3xf64>) -> (tensor<64x2x3xf64>, tensor<64x1x1xf64>, tensor<64x1x1xf64>)
  return %y : tensor<64x2x3xf64>
}

// A batch-1 NCHW GroupNorm (32 groups of 2 x 4096 f32): each group a
// contiguous row of 2048 float4s, a block row of 256 threads of 8 (one
// kernel, x read once).
// CHECK-LABEL: gpu.func @nchw_group_norm_batch1_group_norm
// CHECK-SAME: nf.schedule = "block-row-registers threads-per-row=256 rows-per-block=1 vector=4 registers=8"
func.func @nchw_group_norm_batch1(%x: tensor<1x64x64x64xf32>) -> tensor<1x64x64x64xf32> {
  %y, %m, %r = nf.group_norm %x {num_groups = 32 : i64} : (tensor<1x64x64x64xf32>) -> (tensor<1x64x64x64xf32>, tensor<1x32xf32>, tensor<1x32xf32>)
  return %y : tensor<1x64x64x64xf32>
}

// Groups longer than a cluster holds (4 of 2 x 512 x 512 f32; 8 blocks of
// 1024 threads hold 262144) are split rows: 4 groups of 32 chunks of
// 16384 would be 128 blocks where the device holds 528 (sm_90) of 512
// threads; chunks of 4096 (two sweeps) make 512.
// CHECK-LABEL: gpu.func @nchw_group_norm_long_groups_group_norm_partial
// CLUSTERS-SAME: nf.schedule = "split-row threads-per-row=512 rows-per-block=1 vector=4 registers=8 chunk=4096"
// BLOCKS-SAME: nf.schedule = "split-row threads-per-row=512 rows-per-block=1 vector=4 registers=8 chunk={{[0-9]+}}"
func.func @nchw_group_norm_long_groups(%x: tensor<1x8x512x512xf32>) -> tensor<1x8x512x512xf32> {
  %y, %m, %r = nf.group_norm %x {num_groups = 4 : i64} : (tensor<1x8x512x512xf32>) -> (tensor<1x8x512x512xf32>, tensor<1x4xf32>, tensor<1x4xf32>)
  return %y : tensor<1x8x512x512xf32>
}
