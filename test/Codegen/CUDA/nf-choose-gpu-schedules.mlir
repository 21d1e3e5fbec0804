// The first step of the GPU lowering: each forward row norm, norm
// gradient, per-channel reduction, matrix product and elementwise op gets
// its schedule as text (nf.gpu_schedule), chosen for the target, inside an nf.fused group
// too; a schedule already written on an op is kept (checked
// against it) and the lowering follows it, so one op can be lowered
// under a schedule of its own beside the automatic choice for another.
// RUN: nf-opt %s --nf-choose-gpu-schedules -split-input-file | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: nf-opt %s --nf-choose-gpu-schedules=arch=sm_80 -split-input-file | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: nf-opt %s --nf-choose-gpu-schedules=row-norm-schedule=split-row -split-input-file | FileCheck %s --check-prefix=FORCED
// RUN: nf-opt %s --nf-choose-gpu-schedules=row-norm-schedule=split-row:full -split-input-file | FileCheck %s --check-prefix=FULL
// RUN: nf-opt %s --nf-choose-gpu-schedules=arch=sm_75 -split-input-file | FileCheck %s --check-prefix=SM75
// RUN: nf-opt %s --nf-choose-gpu-schedules=row-norm-schedule=channels-last-groups -split-input-file | FileCheck %s --check-prefix=GROUPS
// RUN: nf-opt %s --nf-choose-gpu-schedules=allow-tf32=true -split-input-file | FileCheck %s --check-prefix=TF32
// RUN: nf-opt %s --nf-lower-to-gpu -split-input-file | FileCheck %s --check-prefix=LOWERED

// CHECK-LABEL: func.func @rows
// SM90: nf.layer_norm %{{.+}} {axis = 1 : i64, nf.gpu_schedule = "cluster-row threads-per-row=256 rows-per-block=1 vector=4 registers=8 cluster=4"}
// SM80: nf.layer_norm %{{.+}} {axis = 1 : i64, nf.gpu_schedule = "block-row-registers threads-per-row=1024 rows-per-block=1 vector=4 registers=8"}
// FORCED: nf.layer_norm %{{.+}} nf.gpu_schedule = "split-row threads-per-row=32 rows-per-block=1 vector=4 registers=2 chunk=256"
// At full size (":full", what the GPU sweep times beside the automatic
// choice), the split row the schedule layer gives a long row.
// FULL: nf.layer_norm %{{.+}} nf.gpu_schedule = "split-row threads-per-row=512 rows-per-block=1 vector=4 registers=8 chunk=16384"
// The schedule written on the second op is its own, whatever the target or
// the forced kind; the lowering follows it (a split row of chunks of 512).
// CHECK: nf.rms_norm %{{.+}} {axis = 1 : i64, nf.gpu_schedule = "split-row threads-per-row=64 rows-per-block=1 vector=4 registers=2 chunk=512"}
// FORCED: nf.rms_norm %{{.+}} nf.gpu_schedule = "split-row threads-per-row=64 rows-per-block=1 vector=4 registers=2 chunk=512"
// LOWERED-LABEL: gpu.func @rows_layer_norm(
// LOWERED-SAME: nf.schedule = "cluster-row threads-per-row=256 rows-per-block=1 vector=4 registers=8 cluster=4"
// LOWERED-LABEL: gpu.func @rows_rms_norm_partial(
// LOWERED-SAME: known_block_size = array<i32: 64, 1, 1>
// LOWERED-SAME: nf.schedule = "split-row threads-per-row=64 rows-per-block=1 vector=4 registers=2 chunk=512"
// LOWERED-LABEL: gpu.func @rows_rms_norm_normalize(
func.func @rows(%x: tensor<4x32768xf32>, %z: tensor<4x1000xf32>) -> (tensor<4x32768xf32>, tensor<4x1000xf32>) {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x32768xf32>) -> (tensor<4x32768xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %w, %s = nf.rms_norm %z {axis = 1 : i64, nf.gpu_schedule = "split-row threads-per-row=64 rows-per-block=1 vector=4 registers=2 chunk=512"} : (tensor<4x1000xf32>) -> (tensor<4x1000xf32>, tensor<4x1xf32>)
  return %y, %w : tensor<4x32768xf32>, tensor<4x1000xf32>
}

// -----

// Inside an nf.fused group, on the norm; a group norm's schedule too (a
// split row of chunks about filling the target's SMs).
// CHECK-LABEL: func.func @fused
// CHECK: nf.fused
// CHECK: nf.group_norm
// CHECK-SAME: nf.gpu_schedule = "split-row threads-per-row=512 rows-per-block=1 vector=2 registers=8 chunk={{[0-9]+}}"
// CHECK: nf.silu
// LOWERED-LABEL: gpu.func @fused_group_norm_partial(
func.func @fused(%x: tensor<2x16x16x320xf32>) -> tensor<2x16x16x320xf32> {
  %0 = nf.fused (%x) : (tensor<2x16x16x320xf32>) -> tensor<2x16x16x320xf32> {
  ^bb0(%a: tensor<2x16x16x320xf32>):
    %y, %m, %r = nf.group_norm %a {layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (tensor<2x16x16x320xf32>) -> (tensor<2x16x16x320xf32>, tensor<2x32xf32>, tensor<2x32xf32>)
    %s = nf.silu %y : tensor<2x16x16x320xf32>
    nf.yield %s : tensor<2x16x16x320xf32>
  }
  return %0 : tensor<2x16x16x320xf32>
}

// -----

// Norm gradients too: the dx kernel's schedule, the most blocks its
// persistent grid takes (the target's SMs' worth of them: 132 x 8 on an
// H100, 108 x 8 on an A100) and how the parameter gradients' partial rows
// (one a block) are added (a warp a run of 4 rows, at most 32 warps); the
// one written on the RMS norm gradient is kept, and the lowering follows
// it (blocks of 64 threads, chunks of 512, a grid of at most 6 blocks: 3
// partial rows, added by one warp 3 at a time).
// CHECK-LABEL: func.func @grads
// SM90: nf.layer_norm_grad {{.+}} nf.gpu_schedule = "block-row-registers threads-per-row=256 rows-per-block=1 vector=4 registers=1 chunk=1024 max-blocks=1056 params-warps=32 params-unroll=4"
// SM80: nf.layer_norm_grad {{.+}} nf.gpu_schedule = "block-row-registers threads-per-row=256 rows-per-block=1 vector=4 registers=1 chunk=1024 max-blocks=864 params-warps=32 params-unroll=4"
// A forced split row of 2 blocks: 2 partial rows, one warp; at full size,
// the gradient's split row over a wave of blocks.
// FORCED: nf.layer_norm_grad {{.+}} nf.gpu_schedule = "split-row threads-per-row=32 rows-per-block=1 vector=4 registers=2 chunk=256 max-blocks=2 params-warps=1 params-unroll=1"
// FULL: nf.layer_norm_grad {{.+}} nf.gpu_schedule = "split-row threads-per-row=256 rows-per-block=1 vector=4 registers=4 chunk=4096 max-blocks=1056 params-warps=32 params-unroll=4"
// CHECK: nf.rms_norm_grad {{.+}} nf.gpu_schedule = "split-row threads-per-row=64 rows-per-block=1 vector=8 registers=1 chunk=512 max-blocks=6 params-warps=1 params-unroll=3"
// LOWERED-LABEL: gpu.func @grads_layer_norm_grad(
// LOWERED-SAME: nf.schedule = "block-row-registers threads-per-row=256 rows-per-block=1 vector=4 registers=1 chunk=1024 max-blocks=1056 params-warps=32 params-unroll=4"
// LOWERED-LABEL: gpu.func @grads_layer_norm_grad_params(
// LOWERED-SAME: known_block_size = array<i32: 1024, 1, 1>
// LOWERED-SAME: nf.schedule = "partial-totals warps=32 unroll=4"
// LOWERED-LABEL: gpu.func @grads_rms_norm_grad_rowsums(
// LOWERED-SAME: known_block_size = array<i32: 64, 1, 1>
// LOWERED-SAME: nf.schedule = "split-row threads-per-row=64 rows-per-block=1 vector=8 registers=1 chunk=512 max-blocks=6 params-warps=1 params-unroll=3"
// LOWERED-LABEL: gpu.func @grads_rms_norm_grad_params(
// LOWERED-SAME: known_block_size = array<i32: 32, 1, 1>
// LOWERED-SAME: nf.schedule = "partial-totals warps=1 unroll=3"
func.func @grads(%dy: tensor<4096x1024xf32>, %x: tensor<4096x1024xf32>, %m: tensor<4096x1xf32>, %r: tensor<4096x1xf32>, %s: tensor<1024xf32>, %dz: tensor<64x1000xbf16>, %z: tensor<64x1000xbf16>, %rz: tensor<64x1xf32>) -> (tensor<4096x1024xf32>, tensor<64x1000xbf16>) {
  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r scale %s {axis = 1 : i64} : (tensor<4096x1024xf32>, tensor<4096x1024xf32>, tensor<4096x1xf32>, tensor<4096x1xf32>, tensor<1024xf32>) -> (tensor<4096x1024xf32>, tensor<1024xf32>, tensor<1024xf32>)
  %dzz, %dsz = nf.rms_norm_grad %dz, %z, %rz {axis = 1 : i64, nf.gpu_schedule = "split-row threads-per-row=64 rows-per-block=1 vector=8 registers=1 chunk=512 max-blocks=6 params-warps=1 params-unroll=3"} : (tensor<64x1000xbf16>, tensor<64x1000xbf16>, tensor<64x1xf32>) -> (tensor<64x1000xbf16>, tensor<1000xbf16>)
  return %dx, %dzz : tensor<4096x1024xf32>, tensor<64x1000xbf16>
}

// -----

// BatchNorm's statistics and gradient with the channels first (NCHW): one
// kernel each, a block per (channel, range) task, 3 vectors of 8 bf16 a
// thread at once (56 x 56 planes; the gradient 2 of dy and 2 of x), at
// most the target's SMs' worth of blocks (256 threads: 8 an SM); odd 7 x 7
// f32 planes single elements, 8 at once. The split row, as asked for,
// keeps the three kernels it replaces (sums, their merge, the elementwise
// pass; the gradient's four).
// CHECK-LABEL: func.func @batch_norm_nchw
// SM90: nf.batch_norm_training {{.+}}nf.gpu_schedule = "channels-first-one-kernel threads-per-row=256 rows-per-block=1 vector=8 registers=3 max-blocks=1056"
// SM80: nf.batch_norm_training {{.+}}nf.gpu_schedule = "channels-first-one-kernel threads-per-row=256 rows-per-block=1 vector=8 registers=3 max-blocks=864"
// SM90: nf.batch_norm_training {{.+}}nf.gpu_schedule = "channels-first-one-kernel threads-per-row=256 rows-per-block=1 vector=1 registers=8 max-blocks=1056"
// SM90: nf.batch_norm_grad {{.+}}nf.gpu_schedule = "channels-first-one-kernel threads-per-row=256 rows-per-block=1 vector=8 registers=2 max-blocks=1056"
// FORCED-LABEL: func.func @batch_norm_nchw
// FORCED: nf.batch_norm_training {{.+}}nf.gpu_schedule = "channels-first threads-per-row=256 rows-per-block=1 vector=8 registers=1 max-blocks=1056 totals-warps=1 totals-unroll=4 elementwise-block=256 elementwise-vector=8
func.func @batch_norm_nchw(%x: tensor<32x256x56x56xbf16>, %x2: tensor<32x2048x7x7xf32>, %rm: tensor<256xf32>, %rm2: tensor<2048xf32>) -> (tensor<32x256x56x56xbf16>, tensor<32x2048x7x7xf32>) {
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x running(%rm, %rm) {layout = #nf.layout<nchw>} : (tensor<32x256x56x56xbf16>, tensor<256xf32>, tensor<256xf32>) -> (tensor<32x256x56x56xbf16>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>)
  %y2, %m2, %r2, %nm2, %nv2 = nf.batch_norm_training %x2 running(%rm2, %rm2) {layout = #nf.layout<nchw>} : (tensor<32x2048x7x7xf32>, tensor<2048xf32>, tensor<2048xf32>) -> (tensor<32x2048x7x7xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>)
  %dx, %ds, %db = nf.batch_norm_grad %y, %x, %rm, %rm scale %rm {layout = #nf.layout<nchw>} : (tensor<32x256x56x56xbf16>, tensor<32x256x56x56xbf16>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) -> (tensor<32x256x56x56xbf16>, tensor<256xf32>, tensor<256xf32>)
  return %dx, %y2 : tensor<32x256x56x56xbf16>, tensor<32x2048x7x7xf32>
}

// -----

// Per-channel reductions too (bias_add_grad, batch_norm_training,
// batch_norm_grad): across the channels where they are last (8 threads of
// 8 bf16 channels, 32 positions a block), a block per (channel, range)
// where they are first; at most the target's SMs' worth of blocks; a
// batch norm's elementwise pass after its sums (y: 16-byte vectors of
// bf16); and how each channel's partial sums are added, a warp a run of 4
// parts: BatchNorm's 784 parts (a block per 32 of 25088 positions) merged
// by 16 warps, the most that keep Chan's merge in registers; the bias
// gradient's 256 channels in at most 1056 blocks (sm_90: 4 parts a
// channel, one warp) or 864 (sm_80: 3 parts, one warp of 3 at a time).
// The schedule written on the second bias_add_grad is kept and followed
// (64 threads a block, the totals 2 warps of 2 parts at a time).
// CHECK-LABEL: func.func @channels
// SM90: nf.batch_norm_training {{.+}} nf.gpu_schedule = "channels-last threads-per-row=8 rows-per-block=32 vector=8 registers=1 max-blocks=1056 totals-warps=16 totals-unroll=4 elementwise-block=256 elementwise-vector=8 elementwise-min-blocks-per-sm=4"
// SM80: nf.batch_norm_training {{.+}} nf.gpu_schedule = "channels-last threads-per-row=8 rows-per-block=32 vector=8 registers=1 max-blocks=864 totals-warps=16 totals-unroll=4 elementwise-block=256 elementwise-vector=8 elementwise-min-blocks-per-sm=4"
// SM90: nf.bias_add_grad {{.+}} nf.gpu_schedule = "channels-first threads-per-row=256 rows-per-block=1 vector=4 registers=1 max-blocks=1056 totals-warps=1 totals-unroll=4"
// SM80: nf.bias_add_grad {{.+}} nf.gpu_schedule = "channels-first threads-per-row=256 rows-per-block=1 vector=4 registers=1 max-blocks=864 totals-warps=1 totals-unroll=3"
// CHECK: nf.bias_add_grad {{.+}} nf.gpu_schedule = "channels-first threads-per-row=64 rows-per-block=1 vector=2 registers=1 max-blocks=40 totals-warps=2 totals-unroll=2"
// LOWERED-LABEL: gpu.func @channels_bias_add_grad_sums_1(
// LOWERED-SAME: known_block_size = array<i32: 64, 1, 1>
// LOWERED-SAME: nf.schedule = "channels-first threads-per-row=64 rows-per-block=1 vector=2 registers=1 max-blocks=40 totals-warps=2 totals-unroll=2"
// LOWERED-LABEL: gpu.func @channels_bias_add_grad_totals_1(
// LOWERED-SAME: known_block_size = array<i32: 64, 1, 1>
// LOWERED-SAME: nf.schedule = "partial-totals warps=2 unroll=2"
func.func @channels(%x: tensor<8x56x56x64xbf16>, %rm: tensor<64xf32>, %rv: tensor<64xf32>, %dy: tensor<32x256x14x14xf32>) -> (tensor<8x56x56x64xbf16>, tensor<256xf32>, tensor<256xf32>) {
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x running(%rm, %rv) {layout = #nf.layout<nhwc>} : (tensor<8x56x56x64xbf16>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x56x56x64xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  %db = nf.bias_add_grad %dy {layout = #nf.layout<nchw>} : tensor<32x256x14x14xf32> -> tensor<256xf32>
  %db2 = nf.bias_add_grad %dy {layout = #nf.layout<nchw>, nf.gpu_schedule = "channels-first threads-per-row=64 rows-per-block=1 vector=2 registers=1 max-blocks=40 totals-warps=2 totals-unroll=2"} : tensor<32x256x14x14xf32> -> tensor<256xf32>
  return %y, %db, %db2 : tensor<8x56x56x64xbf16>, tensor<256xf32>, tensor<256xf32>
}

// -----

// Group and instance norm gradients: the per-(image, channel) sums and
// their totals (528 parts an image: 32 warps), the dx kernel and the
// finish, and in NHWC the one kernel that does it all where the device
// holds its grid (a position's 320 channels in 80 float4s, 4 positions a
// block; parts of at least 2 positions); row-norm-schedule=
// channels-last-groups leaves it out. A hand-written one (dx blocks of
// 128 threads of 2-element vectors, the totals 4 warps of one part at a
// time, no one kernel) is followed, and so is one with a one kernel of 2
// positions a block.
// CHECK-LABEL: func.func @group_grads
// SM90: nf.group_norm_grad {{.+}} nf.gpu_schedule = "channels-last threads-per-row=128 rows-per-block=2 vector=4 registers=1 max-blocks=1056 totals-warps=32 totals-unroll=4 dx-block=256 dx-vector=4 dx-min-blocks-per-sm=4 finish-block=256 one-kernel-threads-per-row=80 one-kernel-rows=4 one-kernel-vector=4 one-kernel-min-part=2"
// SM80: nf.group_norm_grad {{.+}} nf.gpu_schedule = "channels-last threads-per-row=128 rows-per-block=2 vector=4 registers=1 max-blocks=864 totals-warps=32 totals-unroll=4 dx-block=256 dx-vector=4 dx-min-blocks-per-sm=4 finish-block=256 one-kernel-threads-per-row=80 one-kernel-rows=4 one-kernel-vector=4 one-kernel-min-part=2"
// GROUPS: nf.group_norm_grad {{.+}} nf.gpu_schedule = "channels-last threads-per-row=128 rows-per-block=2 vector=4 registers=1 max-blocks=1056 totals-warps=32 totals-unroll=4 dx-block=256 dx-vector=4 dx-min-blocks-per-sm=4 finish-block=256"
// CHECK: nf.group_norm_grad {{.+}} nf.gpu_schedule = "channels-last threads-per-row=128 rows-per-block=2 vector=4 registers=1 max-blocks=64 totals-warps=4 totals-unroll=1 dx-block=128 dx-vector=2 dx-min-blocks-per-sm=2 finish-block=128"
// CHECK: nf.group_norm_grad {{.+}} one-kernel-rows=2
// LOWERED-LABEL: gpu.func @group_grads_group_norm_grad_sums_1(
// LOWERED-SAME: nf.schedule = "channels-last threads-per-row=128 rows-per-block=2 vector=4 registers=1 max-blocks=64 totals-warps=4 totals-unroll=1"
// LOWERED-LABEL: gpu.func @group_grads_group_norm_grad_totals_1(
// LOWERED-SAME: nf.schedule = "partial-totals warps=4 unroll=1"
// LOWERED-LABEL: gpu.func @group_grads_group_norm_grad_finish_1(
// LOWERED-SAME: known_block_size = array<i32: 128, 1, 1>
// LOWERED-LABEL: gpu.func @group_grads_group_norm_grad_dx_1(
// LOWERED-SAME: known_block_size = array<i32: 128, 1, 1>
// LOWERED-SAME: nf.schedule = "group-norm-grad-dx grid-stride block=128 vector=2 min-blocks-per-sm=2"
// LOWERED-LABEL: gpu.func @group_grads_group_norm_grad_one_kernel_1(
// LOWERED-SAME: known_block_size = array<i32: 160, 1, 1>
// LOWERED-SAME: nf.schedule = "group-norm-grad-one-kernel threads-per-row=80 rows=2 vector=4 min-part=2"
func.func @group_grads(%dy: tensor<2x16x16x320xf32>, %x: tensor<2x16x16x320xf32>, %m: tensor<2x32xf32>, %r: tensor<2x32xf32>) -> (tensor<2x16x16x320xf32>, tensor<2x16x16x320xf32>, tensor<2x16x16x320xf32>) {
  %dx, %ds, %db = nf.group_norm_grad %dy, %x, %m, %r {layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (tensor<2x16x16x320xf32>, tensor<2x16x16x320xf32>, tensor<2x32xf32>, tensor<2x32xf32>) -> (tensor<2x16x16x320xf32>, tensor<320xf32>, tensor<320xf32>)
  %dx2, %ds2, %db2 = nf.group_norm_grad %dy, %x, %m, %r {layout = #nf.layout<nhwc>, num_groups = 32 : i64, nf.gpu_schedule = "channels-last threads-per-row=128 rows-per-block=2 vector=4 registers=1 max-blocks=64 totals-warps=4 totals-unroll=1 dx-block=128 dx-vector=2 dx-min-blocks-per-sm=2 finish-block=128"} : (tensor<2x16x16x320xf32>, tensor<2x16x16x320xf32>, tensor<2x32xf32>, tensor<2x32xf32>) -> (tensor<2x16x16x320xf32>, tensor<320xf32>, tensor<320xf32>)
  %dx3, %ds3, %db3 = nf.group_norm_grad %dy, %x, %m, %r {layout = #nf.layout<nhwc>, num_groups = 32 : i64, nf.gpu_schedule = "channels-last threads-per-row=128 rows-per-block=2 vector=4 registers=1 max-blocks=64 totals-warps=4 totals-unroll=1 dx-block=128 dx-vector=2 dx-min-blocks-per-sm=2 finish-block=128 one-kernel-threads-per-row=80 one-kernel-rows=2 one-kernel-vector=4 one-kernel-min-part=2"} : (tensor<2x16x16x320xf32>, tensor<2x16x16x320xf32>, tensor<2x32xf32>, tensor<2x32xf32>) -> (tensor<2x16x16x320xf32>, tensor<320xf32>, tensor<320xf32>)
  return %dx, %dx2, %dx3 : tensor<2x16x16x320xf32>, tensor<2x16x16x320xf32>, tensor<2x16x16x320xf32>
}

// -----

// Matrix products: tensor cores where they take the operands, in 128 x 128
// tiles for a product of a wave of them and split K for few tiles over a
// long K (256 tokens through a wide layer: 5 ranges on 132 SMs, 4 on 108);
// the SIMT kernel for f32 (unless tf32 is allowed) and before sm_80, which
// splits K too (2 ranges on an sm_75's 40 SMs). In an
// nf.fused group the producer carries it. A hand-written schedule (the
// SIMT kernel in 64 x 128 tiles where the layer gives tensor cores) is
// followed.
// CHECK-LABEL: func.func @products
// SM90: nf.matmul {{.+}} {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3"}
// SM80: nf.matmul {{.+}} {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3"}
// SM75: nf.matmul {{.+}} {nf.gpu_schedule = "tiled-product tile=128x128x8 thread=8x8"}
// CHECK: nf.matmul {{.+}} {nf.gpu_schedule = "tiled-product tile=64x128x16 thread=4x8"}
// SM90: nf.matmul {{.+}} {nf.gpu_schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3 split-k=5 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"}
// SM80: nf.matmul {{.+}} {nf.gpu_schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3 split-k=4 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"}
// SM75: nf.matmul {{.+}} {nf.gpu_schedule = "tiled-product tile=64x64x8 thread=4x4 split-k=2 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"}
// SM90: nf.conv2d {{.+}} nf.gpu_schedule = "tiled-product tile=128x128x8 thread=8x8"
// TF32: nf.conv2d {{.+}} nf.gpu_schedule = "tensor-core-product tile=128x64x32 warps=2x2 stages=3 tf32"
// CHECK: nf.fused
// SM90: nf.matmul {{.+}} {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3"}
// SM75: nf.matmul {{.+}} {nf.gpu_schedule = "tiled-product tile=128x128x8 thread=8x8"}
// CHECK: nf.bias_add
// LOWERED-LABEL: gpu.func @products_matmul_epilogue(
// LOWERED-SAME: nf.schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3"
// LOWERED-LABEL: gpu.func @products_matmul(
// LOWERED-SAME: nf.schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3"
// LOWERED-LABEL: gpu.func @products_matmul_1(
// LOWERED-SAME: nf.schedule = "tiled-product tile=64x128x16 thread=4x8"
// LOWERED-LABEL: gpu.func @products_matmul_2(
// LOWERED-SAME: nf.schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3 split-k=5
// LOWERED-LABEL: gpu.func @products_matmul_split_sum(
// LOWERED-SAME: nf.schedule = "split-k-sum splits=5 grid-stride block=256 vector=8 min-blocks-per-sm=4"
// LOWERED-LABEL: gpu.func @products_conv2d(
// LOWERED-SAME: nf.schedule = "tiled-product tile=128x128x8 thread=8x8"
func.func @products(%a: tensor<4096x1024xf16>, %b: tensor<1024x4096xf16>, %c: tensor<256x8192xbf16>, %d: tensor<8192x1024xbf16>, %x: tensor<8x56x56x64xf32>, %w: tensor<64x3x3x64xf32>, %bias: tensor<4096xf16>) -> (tensor<4096x4096xf16>, tensor<4096x4096xf16>, tensor<256x1024xbf16>, tensor<8x56x56x64xf32>, tensor<4096x4096xf16>) {
  %0 = nf.matmul %a, %b : tensor<4096x1024xf16>, tensor<1024x4096xf16> -> tensor<4096x4096xf16>
  %1 = nf.matmul %a, %b {nf.gpu_schedule = "tiled-product tile=64x128x16 thread=4x8"} : tensor<4096x1024xf16>, tensor<1024x4096xf16> -> tensor<4096x4096xf16>
  %2 = nf.matmul %c, %d : tensor<256x8192xbf16>, tensor<8192x1024xbf16> -> tensor<256x1024xbf16>
  %3 = nf.conv2d %x, %w {layout = #nf.layout<nhwc>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : tensor<8x56x56x64xf32>, tensor<64x3x3x64xf32> -> tensor<8x56x56x64xf32>
  %4 = nf.fused (%a, %b, %bias) : (tensor<4096x1024xf16>, tensor<1024x4096xf16>, tensor<4096xf16>) -> tensor<4096x4096xf16> {
  ^bb0(%p: tensor<4096x1024xf16>, %q: tensor<1024x4096xf16>, %r: tensor<4096xf16>):
    %m = nf.matmul %p, %q : tensor<4096x1024xf16>, tensor<1024x4096xf16> -> tensor<4096x4096xf16>
    %g = nf.bias_add %m, %r {layout = #nf.layout<nhwc>} : tensor<4096x4096xf16>, tensor<4096xf16>
    nf.yield %g : tensor<4096x4096xf16>
  }
  return %0, %1, %2, %3, %4 : tensor<4096x4096xf16>, tensor<4096x4096xf16>, tensor<256x1024xbf16>, tensor<8x56x56x64xf32>, tensor<4096x4096xf16>
}

// -----

// Tokens known only at launch: 128 x 128 tiles, K split at launch into
// ranges that make about two blocks a multiprocessor, and 64 x 64 tiles in
// their place where the large ones are fewer than the multiprocessors (132
// on sm_90, 108 on sm_80); before sm_80 the SIMT kernel, which chooses
// nothing at launch.
// CHECK-LABEL: func.func @tokens_at_launch
// SM90: nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3 split-k-max=16 split-k-blocks=264 split-k-min-tiles=8 small-tile=64x64x32/3/2x2 small-tile-below=132 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"
// SM80: nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3 split-k-max=16 split-k-blocks=216 split-k-min-tiles=8 small-tile=64x64x32/3/2x2 small-tile-below=108 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"
// SM75: nf.gpu_schedule = "tiled-product tile=128x128x8 thread=8x8"
func.func @tokens_at_launch(%a: tensor<?x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<?x4096xf16> {
  %c = nf.matmul %a, %b : tensor<?x4096xf16>, tensor<4096x4096xf16> -> tensor<?x4096xf16>
  return %c : tensor<?x4096xf16>
}

// -----

// Elementwise ops: 16-byte vectors, peeled where they do not divide the
// elements (33 x 777 f32), whole where they do; a hand-written one (blocks
// of 128 threads of 4-element vectors, 8 an SM) is followed.
// CHECK-LABEL: func.func @elementwise
// CHECK: nf.gelu {{.+}} {nf.gpu_schedule = "grid-stride block=256 vector=4 peeled min-blocks-per-sm=4"}
// CHECK: nf.bias_add {{.+}} nf.gpu_schedule = "grid-stride block=256 vector=8 min-blocks-per-sm=4"
// CHECK: nf.silu {{.+}} {nf.gpu_schedule = "grid-stride block=128 vector=4 min-blocks-per-sm=8"}
// LOWERED-LABEL: gpu.func @elementwise_gelu(
// LOWERED-SAME: nf.schedule = "grid-stride block=256 vector=4 peeled min-blocks-per-sm=4"
// LOWERED-LABEL: gpu.func @elementwise_silu(
// LOWERED-SAME: known_block_size = array<i32: 128, 1, 1>
// LOWERED-SAME: nf.min_blocks_per_sm = 8
// LOWERED-SAME: nf.schedule = "grid-stride block=128 vector=4 min-blocks-per-sm=8"
func.func @elementwise(%x: tensor<33x777xf32>, %y: tensor<8x1024xbf16>, %b: tensor<1024xbf16>) -> (tensor<33x777xf32>, tensor<8x1024xbf16>, tensor<8x1024xbf16>) {
  %0 = nf.gelu %x : tensor<33x777xf32>
  %1 = nf.bias_add %y, %b {layout = #nf.layout<nhwc>} : tensor<8x1024xbf16>, tensor<1024xbf16>
  %2 = nf.silu %y {nf.gpu_schedule = "grid-stride block=128 vector=4 min-blocks-per-sm=8"} : tensor<8x1024xbf16>
  return %0, %1, %2 : tensor<33x777xf32>, tensor<8x1024xbf16>, tensor<8x1024xbf16>
}

// -----

// A batch norm's elementwise pass written by hand (blocks of 128 threads
// of 2-element vectors, 8 an SM) is followed by its last kernel.
// CHECK-LABEL: func.func @batch_norm_pass
// CHECK: nf.batch_norm_grad {{.+}}nf.gpu_schedule = "channels-first threads-per-row=64 rows-per-block=1 vector=1 registers=1 max-blocks=40 elementwise-block=128 elementwise-vector=2 elementwise-min-blocks-per-sm=8"
// LOWERED-LABEL: gpu.func @batch_norm_pass_batch_norm_grad(
// LOWERED-SAME: known_block_size = array<i32: 128, 1, 1>
// LOWERED-SAME: nf.min_blocks_per_sm = 8
// LOWERED-SAME: nf.schedule = "grid-stride block=128 vector=2 min-blocks-per-sm=8"
func.func @batch_norm_pass(%dy: tensor<4x16x7x7xf32>, %x: tensor<4x16x7x7xf32>, %m: tensor<16xf32>, %r: tensor<16xf32>) -> tensor<4x16x7x7xf32> {
  %dx, %ds, %db = nf.batch_norm_grad %dy, %x, %m, %r {layout = #nf.layout<nchw>, nf.gpu_schedule = "channels-first threads-per-row=64 rows-per-block=1 vector=1 registers=1 max-blocks=40 elementwise-block=128 elementwise-vector=2 elementwise-min-blocks-per-sm=8"} : (tensor<4x16x7x7xf32>, tensor<4x16x7x7xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<4x16x7x7xf32>, tensor<16xf32>, tensor<16xf32>)
  return %dx : tensor<4x16x7x7xf32>
}
