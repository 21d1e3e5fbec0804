// The CUDA schedule layer's choice for the gradients of layer_norm and
// rms_norm (Schedule.cpp): the chunk of a row that a kernel holds in
// registers (16 elements a thread at most: dy, x and two column sums each
// need a register), (part of) a warp per row up to 512 vectors... of 32
// threads, a block per row up to 512 threads (256 for f64: more threads
// have too few registers a thread, and spilled), then on sm_90 a cluster
// of 2 to 8 such blocks per row, and beyond that (or when the length is
// unknown, or without clusters) chunks of 256 threads with a first kernel
// of chunk sums.
// The grid of the dx kernel is about one wave: the architecture's
// multiprocessors (132 on sm_90, 108 on sm_80) times the blocks one holds.
// RUN: nf-opt %s --nf-lower-to-gpu | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: nf-opt %s --nf-lower-to-gpu=arch=sm_80 | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: nf-opt %s --nf-lower-to-gpu | FileCheck %s --check-prefix=HOST

// The host functions (printed before the kernels): the launches in order,
// the grid of the dx kernel at most max-blocks, temporaries sized on the
// host when the row length is unknown.
// HOST-LABEL: func.func @rows_of_128_f32(
// HOST: gpu.launch_func @nf_kernels::@rows_of_128_f32_layer_norm_grad blocks in (%{{.*}}) threads in (%c256,
// The parameter sums: a lane per column (128 columns: 4 blocks of runs
// of 32), warps over the row slots' partial rows (8 slots: 2 runs of 4,
// so 2 warps).
// HOST: gpu.launch_func @nf_kernels::@rows_of_128_f32_layer_norm_grad_params blocks in (%c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) threads in (%c64
// A cluster row (sm_90) is one kernel before the parameter sums; a split
// row (a row longer than 8 blocks of 512 threads hold) two.
// HOST-LABEL: func.func @rows_of_65536_f32(
// HOST-NOT: _rowsums
// HOST: gpu.launch_func @nf_kernels::@rows_of_65536_f32_layer_norm_grad blocks
// HOST: gpu.launch_func @nf_kernels::@rows_of_65536_f32_layer_norm_grad_params
// HOST-LABEL: func.func @rows_of_262144_f32(
// HOST: gpu.launch_func @nf_kernels::@rows_of_262144_f32_rms_norm_grad_rowsums
// HOST: gpu.launch_func @nf_kernels::@rows_of_262144_f32_rms_norm_grad blocks
// HOST: gpu.launch_func @nf_kernels::@rows_of_262144_f32_rms_norm_grad_params
// HOST-LABEL: func.func @rows_of_unknown_length(
// HOST: arith.ceildivui
// HOST: memref.alloc(%{{.*}}) : memref<?xf32>

// 32 float4 vectors: a warp per row, 8 rows a block; 8 blocks fill a
// multiprocessor.
// CHECK-LABEL: gpu.func @rows_of_128_f32_layer_norm_grad(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// SM90-SAME: nf.schedule = "warp-rows threads-per-row=32 rows-per-block=8 vector=4 registers=1 chunk=128 max-blocks=1056 params-warps=2 params-unroll=4"
// SM80-SAME: max-blocks=864 params-warps=2 params-unroll=4"
// CHECK-LABEL: gpu.func @rows_of_128_f32_layer_norm_grad_params(
// CHECK-SAME: nf.schedule = "partial-totals warps=2 unroll=4"
func.func @rows_of_128_f32(%dy: tensor<64x128xf32>, %x: tensor<64x128xf32>, %m: tensor<64x1xf32>, %r: tensor<64x1xf32>) -> (tensor<64x128xf32>, tensor<128xf32>, tensor<128xf32>) {
  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r {axis = 1 : i64} : (tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x1xf32>, tensor<64x1xf32>) -> (tensor<64x128xf32>, tensor<128xf32>, tensor<128xf32>)
  return %dx, %ds, %db : tensor<64x128xf32>, tensor<128xf32>, tensor<128xf32>
}
// 512 vectors of 8 bf16: a block of 256 threads per row, two vectors each.
// CHECK-LABEL: gpu.func @rows_of_4096_bf16_rms_norm_grad(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// SM90-SAME: nf.schedule = "block-row-registers threads-per-row=256 rows-per-block=1 vector=8 registers=2 chunk=4096 max-blocks=1056 params-warps=16 params-unroll=4"
// SM80-SAME: max-blocks=864 params-warps=16 params-unroll=4"
func.func @rows_of_4096_bf16(%dy: tensor<64x4096xbf16>, %x: tensor<64x4096xbf16>, %r: tensor<64x1xf32>, %s: tensor<4096xbf16>) -> (tensor<64x4096xbf16>, tensor<4096xf32>) {
  %dx, %ds = nf.rms_norm_grad %dy, %x, %r scale %s {axis = 1 : i64} : (tensor<64x4096xbf16>, tensor<64x4096xbf16>, tensor<64x1xf32>, tensor<4096xbf16>) -> (tensor<64x4096xbf16>, tensor<4096xf32>)
  return %dx, %ds : tensor<64x4096xbf16>, tensor<4096xf32>
}
// 2048 float4 vectors: a block of 512 threads, 4 vectors each.
// CHECK-LABEL: gpu.func @rows_of_8192_f32_rms_norm_grad(
// CHECK-NOT: nf.cluster_blocks
// SM90-SAME: nf.schedule = "block-row-registers threads-per-row=512 rows-per-block=1 vector=4 registers=4 chunk=8192 max-blocks=528 params-warps=16 params-unroll=4"
func.func @rows_of_8192_f32(%dy: tensor<64x8192xf32>, %x: tensor<64x8192xf32>, %r: tensor<64x1xf32>) -> (tensor<64x8192xf32>, tensor<8192xf32>) {
  %dx, %ds = nf.rms_norm_grad %dy, %x, %r {axis = 1 : i64} : (tensor<64x8192xf32>, tensor<64x8192xf32>, tensor<64x1xf32>) -> (tensor<64x8192xf32>, tensor<8192xf32>)
  return %dx, %ds : tensor<64x8192xf32>, tensor<8192xf32>
}
// 4096 float4 vectors: a cluster of 4 blocks of 256 threads, 4 vectors
// each, block r holding columns 4096 r to 4096 r + 4095 (sm_90); split
// elsewhere (a block of 1024 threads spilled).
// CHECK-LABEL: gpu.func @rows_of_16384_f32_rms_norm_grad(
// SM90-SAME: nf.cluster_blocks = 4
// SM90-SAME: nf.schedule = "cluster-row threads-per-row=256 rows-per-block=1 vector=4 registers=4 cluster=4 chunk=4096 max-blocks=1056 params-warps=16 params-unroll=4"
// SM80-NOT: nf.cluster_blocks
// SM80-SAME: nf.schedule = "split-row threads-per-row=256 rows-per-block=1 vector=4 registers=4 chunk=4096
func.func @rows_of_16384_f32(%dy: tensor<64x16384xf32>, %x: tensor<64x16384xf32>, %r: tensor<64x1xf32>) -> (tensor<64x16384xf32>, tensor<16384xf32>) {
  %dx, %ds = nf.rms_norm_grad %dy, %x, %r {axis = 1 : i64} : (tensor<64x16384xf32>, tensor<64x16384xf32>, tensor<64x1xf32>) -> (tensor<64x16384xf32>, tensor<16384xf32>)
  return %dx, %ds : tensor<64x16384xf32>, tensor<16384xf32>
}
// 16384 float4 vectors would need 16 a thread in one block: a cluster of 8
// blocks of 512 threads, 4 vectors each (sm_90); elsewhere chunks of 4096
// elements (256 threads, 4 vectors each), their sums first.
// SM90-LABEL: gpu.func @rows_of_65536_f32_layer_norm_grad(
// SM90-SAME: nf.cluster_blocks = 8
// SM90-SAME: nf.schedule = "cluster-row threads-per-row=512 rows-per-block=1 vector=4 registers=4 cluster=8 chunk=8192 max-blocks=528 params-warps=2 params-unroll=4"
// SM80-LABEL: gpu.func @rows_of_65536_f32_layer_norm_grad_rowsums(
// SM80-SAME: nf.schedule = "split-row threads-per-row=256 rows-per-block=1 vector=4 registers=4 chunk=4096 max-blocks=864 params-warps=2 params-unroll=4"
// SM80-LABEL: gpu.func @rows_of_65536_f32_layer_norm_grad(
func.func @rows_of_65536_f32(%dy: tensor<8x65536xf32>, %x: tensor<8x65536xf32>, %m: tensor<8x1xf32>, %r: tensor<8x1xf32>) -> (tensor<8x65536xf32>, tensor<65536xf32>, tensor<65536xf32>) {
  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r {axis = 1 : i64} : (tensor<8x65536xf32>, tensor<8x65536xf32>, tensor<8x1xf32>, tensor<8x1xf32>) -> (tensor<8x65536xf32>, tensor<65536xf32>, tensor<65536xf32>)
  return %dx, %ds, %db : tensor<8x65536xf32>, tensor<65536xf32>, tensor<65536xf32>
}
// 65536 float4 vectors: more than 8 blocks of 512 threads hold, split.
// CHECK-LABEL: gpu.func @rows_of_262144_f32_rms_norm_grad_rowsums(
// SM90-SAME: nf.schedule = "split-row threads-per-row=256 rows-per-block=1 vector=4 registers=4 chunk=4096 max-blocks=1056 params-warps=1 params-unroll=2"
func.func @rows_of_262144_f32(%dy: tensor<2x262144xf32>, %x: tensor<2x262144xf32>, %r: tensor<2x1xf32>) -> (tensor<2x262144xf32>, tensor<262144xf32>) {
  %dx, %ds = nf.rms_norm_grad %dy, %x, %r {axis = 1 : i64} : (tensor<2x262144xf32>, tensor<2x262144xf32>, tensor<2x1xf32>) -> (tensor<2x262144xf32>, tensor<262144xf32>)
  return %dx, %ds : tensor<2x262144xf32>, tensor<262144xf32>
}
// A row length known only at run time: split and peeled (float4 vectors
// from each chunk's first 16-byte boundary); the chunk count, grid and
// temporaries are computed on the host.
// CHECK-LABEL: gpu.func @rows_of_unknown_length_layer_norm_grad_rowsums(
// CHECK-SAME: nf.schedule = "split-row threads-per-row=256 rows-per-block=1 vector=4 registers=4 chunk=4096 peeled
func.func @rows_of_unknown_length(%dy: tensor<4x?xf32>, %x: tensor<4x?xf32>, %m: tensor<4x1xf32>, %r: tensor<4x1xf32>) -> (tensor<4x?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r {axis = 1 : i64} : (tensor<4x?xf32>, tensor<4x?xf32>, tensor<4x1xf32>, tensor<4x1xf32>) -> (tensor<4x?xf32>, tensor<?xf32>, tensor<?xf32>)
  return %dx, %ds, %db : tensor<4x?xf32>, tensor<?xf32>, tensor<?xf32>
}
// 5121 bf16 columns, which no 16-byte vector divides: peeled, as the
// forward rows are. One chunk holds the row (ceil(5121 / 8) = 641 vectors'
// room: 352 threads of 2 vectors of 8); each row is its head (the 0 to 7
// elements before its first 16-byte boundary), whole vectors and its tail,
// the head and tail an element a lane. dy, x and dx move 16 bytes at a
// time (the scale an element at a time, once a block), and so do the
// partial rows: partial row `slot` starts where the block's rows do
// within a vector, since those rows are `slot` plus multiples of the row
// slots, a multiple of 8 (67 rows take 72).
// CHECK-LABEL: gpu.func @rows_of_5121_bf16_layer_norm_grad(
// SM90-SAME: nf.schedule = "block-row-registers threads-per-row=352 rows-per-block=1 vector=8 registers=2 peeled chunk=5632 max-blocks=660
// SM80-SAME: nf.schedule = "block-row-registers threads-per-row=352 rows-per-block=1 vector=8 registers=2 peeled chunk=5632 max-blocks=540
// CHECK: vector.load %arg0[%{{.*}}] : memref<?xbf16>, vector<8xbf16>
// CHECK: vector.load %arg1[%{{.*}}] : memref<?xbf16>, vector<8xbf16>
// CHECK: memref.load %arg0[%{{.*}}] : memref<?xbf16>
// CHECK: memref.load %arg0[%{{.*}}] : memref<?xbf16>
// CHECK: vector.store %{{.*}}, %arg5[%{{.*}}] : memref<?xbf16>, vector<8xbf16>
// CHECK: memref.store %{{.*}}, %arg5[%{{.*}}] : memref<?xbf16>
// CHECK: vector.store %{{.*}}, %arg6[%{{.*}}] : memref<?xf32>, vector<4xf32>
// HOST-LABEL: func.func @rows_of_5121_bf16(
// HOST: gpu.launch_func @nf_kernels::@rows_of_5121_bf16_layer_norm_grad blocks in (%{{.*}}) threads in (%c352, {{.*}} %c67 : index, %c5121 : index, %c72 : index, %c1 : index)
func.func @rows_of_5121_bf16(%dy: tensor<67x5121xbf16>, %x: tensor<67x5121xbf16>, %m: tensor<67x1xf32>, %r: tensor<67x1xf32>, %s: tensor<5121xbf16>) -> (tensor<67x5121xbf16>, tensor<5121xf32>, tensor<5121xf32>) {
  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r scale %s {axis = 1 : i64} : (tensor<67x5121xbf16>, tensor<67x5121xbf16>, tensor<67x1xf32>, tensor<67x1xf32>, tensor<5121xbf16>) -> (tensor<67x5121xbf16>, tensor<5121xf32>, tensor<5121xf32>)
  return %dx, %ds, %db : tensor<67x5121xbf16>, tensor<5121xf32>, tensor<5121xf32>
}
