// Group and instance norms in NHWC: across the channels
// (channels-last-groups) where a group's run at a position is narrow, a row
// per (image, group) where it is wide on a small image, when the split row
// is forced, and where the channel count is unknown.
// RUN: nf-opt %s --nf-lower-to-gpu -split-input-file | FileCheck %s
// RUN: nf-opt %s --nf-lower-to-gpu="row-norm-schedule=split-row" -split-input-file | FileCheck %s --check-prefix=SPLIT
// RUN: nf-opt %s --nf-lower-to-gpu="row-norm-schedule=channels-last-groups" -split-input-file | FileCheck %s --check-prefix=FORCED

// 320 channels in 32 groups of 10 (Stable Diffusion's): 16-byte vectors of
// 4 channels (80 threads a position, 3 positions a block), so a vector's
// lanes lie in two groups. One kernel where the device holds its grid:
// blocks of 4 positions (whole warps, for its finish), 8 vectors a thread,
// parts of 32 positions, 256 blocks, which 132 SMs hold at 2 blocks each
// (compiled for 2: 102 registers a thread). Its fallback's parts of 9
// positions fill 132 SMs' 8 blocks once (2 x 4096 positions). The split
// row instead reads 10 channels in 8-byte vectors, dividing by the channels
// per group for every vector.
// CHECK: nf.resident_blocks @nf_kernels::@sd_group_norm_one_kernel block 320 shared 0 planned 792
// CHECK: arith.cmpi ule, %c256{{.*}}, %{{.+}}
// CHECK-LABEL: gpu.func @sd_group_norm_partial
// CHECK-SAME: workgroup(%{{.+}} : memref<960xf32, #gpu.address_space<workgroup>>, %{{.+}} : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: nf.schedule = "channels-last-groups threads-per-row=80 rows-per-block=3 vector=4 registers=8 positions-per-part=9 finish-warps=8 resident-blocks=2 parts-from-residency"
// CHECK-COUNT-4: arith.divui %{{.+}}, %c10{{(_[0-9]+)?}} : index
// CHECK: scf.for
// CHECK-NOT: arith.divui
// CHECK: vector.load %{{.+}} : memref<?xf32>, vector<4xf32>
// SPLIT-LABEL: gpu.func @sd_group_norm_partial
// SPLIT-SAME: nf.schedule = "split-row threads-per-row=32 rows-per-block=1 vector=2 registers=2 chunk=128"
// SPLIT-LABEL: gpu.func @sd_group_norm_normalize
// SPLIT: arith.remui %{{.+}}, %c32{{(_[0-9]+)?}} : index
// SPLIT: arith.divui %{{.+}}, %c32{{(_[0-9]+)?}} : index
// SPLIT: arith.divui %{{.+}}, %c10{{(_[0-9]+)?}} : index
// SPLIT: arith.remui %{{.+}}, %c10{{(_[0-9]+)?}} : index
// SPLIT: arith.muli %{{.+}}, %c320{{(_[0-9]+)?}} : index
// SPLIT: vector.load %{{.+}} : memref<?xf32>, vector<2xf32>
// FORCED-LABEL: gpu.func @sd_group_norm_partial
// FORCED-SAME: positions-per-part=3 finish-warps=8"
func.func @sd(%x: tensor<2x64x64x320xf32>, %s: tensor<320xf32>, %b: tensor<320xf32>) -> tensor<2x64x64x320xf32> {
  %y, %m, %r = nf.group_norm %x scale %s bias %b {layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (tensor<2x64x64x320xf32>, tensor<320xf32>, tensor<320xf32>) -> (tensor<2x64x64x320xf32>, tensor<2x32xf32>, tensor<2x32xf32>)
  return %y : tensor<2x64x64x320xf32>
}

// -----

// An instance norm of 30 bf16 channels: 4-byte vectors of 2 (the widest
// that divides 30), 15 threads a position and 17 positions a block; the
// finishing warps write the statistics the function returns, and so do the
// one kernel's blocks of each image's first part (32 positions a block,
// whole warps, of 16 vectors a thread: 3 parts of 512 positions).
// CHECK-LABEL: gpu.func @inst_instance_norm_partial
// CHECK-SAME: nf.schedule = "channels-last-groups threads-per-row=15 rows-per-block=17 vector=2 registers=16
// CHECK: vector.load %{{.+}} : memref<?xbf16>, vector<2xbf16>
// CHECK-LABEL: gpu.func @inst_instance_norm_finish
// CHECK: memref.store %{{.+}}, %arg2[%{{.+}}] : memref<?xf32>
// CHECK-LABEL: gpu.func @inst_instance_norm_normalize
// CHECK: vector.store %{{.+}} : memref<?xbf16>, vector<2xbf16>
// CHECK-LABEL: gpu.func @inst_instance_norm_one_kernel
// CHECK: nf.grid_barrier
// CHECK: memref.store %{{.+}}, %arg2[%{{.+}}] : memref<?xf32>
func.func @inst(%x: tensor<1x33x35x30xbf16>) -> (tensor<1x33x35x30xbf16>, tensor<1x30xf32>) {
  %y, %m, %r = nf.instance_norm %x {layout = #nf.layout<nhwc>} : (tensor<1x33x35x30xbf16>) -> (tensor<1x33x35x30xbf16>, tensor<1x30xf32>, tensor<1x30xf32>)
  return %y, %r : tensor<1x33x35x30xbf16>, tensor<1x30xf32>
}

// -----

// More channels than a block has threads' vectors (2048 vectors of f32):
// the split row.
// CHECK-LABEL: gpu.func @wide_group_norm_partial
// CHECK-SAME: nf.schedule = "split-row
func.func @wide(%x: tensor<1x4x4x8192xf32>) -> tensor<1x4x4x8192xf32> {
  %y, %m, %r = nf.group_norm %x {layout = #nf.layout<nhwc>, num_groups = 8 : i64} : (tensor<1x4x4x8192xf32>) -> (tensor<1x4x4x8192xf32>, tensor<1x8xf32>, tensor<1x8xf32>)
  return %y : tensor<1x4x4x8192xf32>
}

// -----

// Groups of 40 channels (160 bytes a run) on a 16x16 image: the split row,
// which measured faster there on an H100 than the three kernels across
// the channels (Schedule.cpp, selectGroupNormSchedule).
// CHECK-LABEL: gpu.func @wide_runs_group_norm_partial
// CHECK-SAME: nf.schedule = "split-row
// FORCED-LABEL: gpu.func @wide_runs_group_norm_partial
// FORCED-SAME: nf.schedule = "channels-last-groups threads-per-row=320 rows-per-block=1 vector=4
func.func @wide_runs(%x: tensor<1x16x16x1280xf32>) -> tensor<1x16x16x1280xf32> {
  %y, %m, %r = nf.group_norm %x {layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (tensor<1x16x16x1280xf32>) -> (tensor<1x16x16x1280xf32>, tensor<1x32xf32>, tensor<1x32xf32>)
  return %y : tensor<1x16x16x1280xf32>
}
