// Per-channel reductions on the GPU (LowerChannelReductions.cpp): a sums
// kernel, for plain sums a totals kernel (many warps a channel), and a
// finishing kernel per sum (for BatchNorm's moments the finish itself has
// many warps a channel), then elementwise kernels with per-channel
// operands. Channels last: threads across a position's
// channels, several positions a block, blocks looping over positions, one
// partial row per block. Channels first: a block per (channel, part).
// RUN: nf-opt %s --nf-lower-to-gpu | FileCheck %s

// 64 f32 channels: 16 threads of float4 a position, 16 positions a block;
// 8 x 32 x 32 positions need 512 blocks, one trip, where the device holds
// as many blocks of the sums kernel at once (nf.resident_blocks: at most
// 1056 on sm_90, the count known when the kernel is loaded); a part, and
// a partial row of 64 sums, per block. The parts' totals (512 of them
// planned: 128 runs of 4, so 32 warps, a full block) over each run of 32
// channels (2 blocks); then the finish, a thread a channel.
// CHECK-LABEL: func.func @bias_add_grad_nhwc(
// CHECK: %[[R:.+]] = nf.resident_blocks @nf_kernels::@bias_add_grad_nhwc_bias_add_grad_sums block 256 shared 0 planned 1056
// CHECK: %[[ATLEAST1:.+]] = arith.maxui %[[R]], %c1
// CHECK: %[[PARTS:.+]] = arith.minui %[[ATLEAST1]], %c512
// CHECK: %[[SUMS:.+]] = arith.muli %[[PARTS]], %c64
// CHECK: %[[BYTES:.+]] = arith.maxui %[[SUMS]], %c1
// CHECK: memref.alloc(%[[BYTES]]) : memref<?xf32>
// CHECK: gpu.launch_func @nf_kernels::@bias_add_grad_nhwc_bias_add_grad_sums blocks in (%[[PARTS]],
// CHECK: memref.alloc() : memref<64xf32>
// CHECK: gpu.launch_func @nf_kernels::@bias_add_grad_nhwc_bias_add_grad_totals blocks in (%c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) threads in (%c1024
// CHECK: gpu.launch_func @nf_kernels::@bias_add_grad_nhwc_bias_add_grad_finish blocks in (%c1
func.func @bias_add_grad_nhwc(%dy: tensor<8x32x32x64xf32>) -> tensor<64xf32> {
  %g = nf.bias_add_grad %dy {layout = #nf.layout<nhwc>} : tensor<8x32x32x64xf32> -> tensor<64xf32>
  return %g : tensor<64xf32>
}

// 8 x 1024 elements a channel in float4s: 8 parts of 1024 (a vector per
// thread) where the device holds 512 blocks (64 channels x 8), fewer and
// longer where it holds fewer: as many a channel as the blocks it holds
// allow, rounded down, so the grid is at most one wave.
// CHECK-LABEL: func.func @bias_add_grad_nchw(
// CHECK: %[[R:.+]] = nf.resident_blocks @nf_kernels::@bias_add_grad_nchw_bias_add_grad_sums block 256 shared 0 planned 1056
// CHECK: %[[PERCHANNEL:.+]] = arith.divui %[[R]], %c64
// CHECK: %[[ATLEAST1:.+]] = arith.maxui %[[PERCHANNEL]], %c1
// CHECK: %[[PARTS:.+]] = arith.minui %[[ATLEAST1]], %c8
// CHECK: memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK: %[[GRID:.+]] = arith.muli %[[PARTS]], %c64
// CHECK: gpu.launch_func @nf_kernels::@bias_add_grad_nchw_bias_add_grad_sums blocks in (%[[GRID]],
func.func @bias_add_grad_nchw(%dy: tensor<8x64x32x32xf32>) -> tensor<64xf32> {
  %g = nf.bias_add_grad %dy {layout = #nf.layout<nchw>} : tensor<8x64x32x32xf32> -> tensor<64xf32>
  return %g : tensor<64xf32>
}

// BatchNorm training: each part's moments (the mean from a pivot, M2, the
// pivot: three partial rows a block), the finish (Chan's formula over the
// parts: mean, rstd and the running statistics), then y. 64 bf16 channels:
// 8 threads of 8 a position, 32 positions a block, 2048 positions in 64
// blocks: 64 x 3 x 64 partial values. The finish: a block per run of 32
// channels (2), a lane a channel, 16 warps over the 64 parts (4 each).
// CHECK-LABEL: func.func @batch_norm_training(
// CHECK: memref.alloc() : memref<12288xf32>
// CHECK: gpu.launch_func @nf_kernels::@batch_norm_training_batch_norm_training_moments_sums blocks in (%c64
// CHECK: gpu.launch_func @nf_kernels::@batch_norm_training_batch_norm_training_moments_finish blocks in (%c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) threads in (%c512
// CHECK: gpu.launch_func @nf_kernels::@batch_norm_training_batch_norm_training blocks
func.func @batch_norm_training(%x: tensor<8x16x16x64xbf16>, %s: tensor<64xbf16>, %b: tensor<64xbf16>, %rm: tensor<64xf32>, %rv: tensor<64xf32>) -> (tensor<8x16x16x64xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x scale %s bias %b running(%rm, %rv) {layout = #nf.layout<nhwc>} : (tensor<8x16x16x64xbf16>, tensor<64xbf16>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x16x16x64xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %y, %m, %r, %nm, %nv : tensor<8x16x16x64xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// BatchNorm gradient: sum(dy) and sum(dy xhat) in one sums kernel, then dx
// (NCHW takes one kernel unless, as here, this schedule is written on it:
// nf-lower-to-gpu-batch-norm-one-kernel.mlir).
// CHECK-LABEL: func.func @batch_norm_grad(
// CHECK: gpu.launch_func @nf_kernels::@batch_norm_grad_batch_norm_grad_sums
// CHECK: gpu.launch_func @nf_kernels::@batch_norm_grad_batch_norm_grad_totals
// CHECK: gpu.launch_func @nf_kernels::@batch_norm_grad_batch_norm_grad_finish
// CHECK: gpu.launch_func @nf_kernels::@batch_norm_grad_batch_norm_grad blocks
func.func @batch_norm_grad(%dy: tensor<8x64x7x7xf32>, %x: tensor<8x64x7x7xf32>, %m: tensor<64xf32>, %r: tensor<64xf32>) -> (tensor<8x64x7x7xf32>, tensor<64xf32>, tensor<64xf32>) {
  %dx, %ds, %db = nf.batch_norm_grad %dy, %x, %m, %r {layout = #nf.layout<nchw>, nf.gpu_schedule = "channels-first threads-per-row=256 rows-per-block=1 vector=1 registers=1 max-blocks=1056 totals-warps=1 totals-unroll=2 elementwise-block=256 elementwise-vector=4 elementwise-min-blocks-per-sm=4"} : (tensor<8x64x7x7xf32>, tensor<8x64x7x7xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64x7x7xf32>, tensor<64xf32>, tensor<64xf32>)
  return %dx, %ds, %db : tensor<8x64x7x7xf32>, tensor<64xf32>, tensor<64xf32>
}

// The kernels, with their schedules.
// CHECK-LABEL: gpu.func @bias_add_grad_nhwc_bias_add_grad_sums(
// CHECK-SAME: workgroup(%{{.*}} : memref<960xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: nf.schedule = "channels-last threads-per-row=16 rows-per-block=16 vector=4 registers=1 max-blocks=1056 totals-warps=32 totals-unroll=4"
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK-LABEL: gpu.func @bias_add_grad_nhwc_bias_add_grad_totals(
// CHECK-SAME: nf.schedule = "partial-totals warps=32 unroll=4"
// CHECK: scf.for %{{.+}} = %{{.+}} to %arg{{[0-9]+}} step %c128
// The finish loads its channel's total: no loop over the parts.
// CHECK-LABEL: gpu.func @bias_add_grad_nhwc_bias_add_grad_finish(
// CHECK-SAME: nf.schedule = "channel-finish block=256"
// CHECK-NOT: scf.for
// CHECK: memref.load %arg0
// CHECK: memref.store
// CHECK-LABEL: gpu.func @bias_add_grad_nchw_bias_add_grad_sums(
// CHECK-SAME: nf.schedule = "channels-first threads-per-row=256 rows-per-block=1 vector=4 registers=1 max-blocks=1056 totals-warps=2 totals-unroll=4"
// The moments kernel: the pivot (the image's first position) loaded before
// the two sweeps; the block's sums from the pivot combined and its means
// handed to every position group between barriers; the squared deviations;
// three partial rows.
// CHECK-LABEL: gpu.func @batch_norm_training_batch_norm_training_moments_sums(
// CHECK-SAME: nf.schedule = "channels-last threads-per-row=8 rows-per-block=32 vector=8 registers=1
// CHECK: vector.load %arg0
// CHECK: scf.for
// CHECK: arith.subf
// CHECK: gpu.barrier
// CHECK: arith.divf
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: arith.subf
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK-COUNT-3: vector.store
// The finish merges the parts by Chan's formula (each warp its parts in
// four slots, the slots in order, then the warps in order through shared
// memory) and adds the pivot back.
// CHECK-LABEL: gpu.func @batch_norm_training_batch_norm_training_moments_finish(
// CHECK-SAME: nf.schedule = "partial-totals warps=16 unroll=4"
// CHECK: scf.for {{.+}} iter_args({{([^,]+, ){11}[^,]+}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: arith.subf
// CHECK: arith.select
// CHECK: scf.yield
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: memref.load
// CHECK: arith.subf
// CHECK: gpu.barrier
// CHECK: memref.load
// CHECK: arith.addf
// 49 positions: scalars.
// CHECK-LABEL: gpu.func @batch_norm_grad_batch_norm_grad_sums(
// CHECK-SAME: nf.schedule = "channels-first threads-per-row=256 rows-per-block=1 vector=1
