// group_norm_grad and instance_norm_grad (LowerGroupNormGrads.cpp): four
// kernels. `_sums` is the per-channel reduction of BatchNorm's gradient
// kept per (image, channel): partial sums of dy*xhat and dy, with each
// lane's mean and rstd those of its (image, group); `_totals` adds each
// (image, channel)'s parts, a lane per channel and many warps over the
// parts; `_finish` has a thread per (image, group) (its channels' totals
// times their scale) and one per channel (dscale, dbias over the images);
// `_dx` is elementwise, in vectors. In NHWC of a known channel count a
// fifth kernel, `_one_kernel`, does all of it in one cooperative launch
// where the device holds its grid (decided when the kernels are loaded):
// the four kernels' grids are multiplied by 0 then, its own is 0
// otherwise.
// RUN: nf-opt %s --nf-lower-to-gpu | FileCheck %s

// CHECK-LABEL: func.func @group_norm_grad_nhwc
// The one kernel: 256 threads (2 float16x8 a position, 128 positions), the
// device's blocks shared by the 2 images, parts of at least 4 positions
// in whole sweeps of 128: one part an image here. It runs where the
// device holds both blocks.
// CHECK: %[[RESIDENT:.+]] = nf.resident_blocks @nf_kernels::@group_norm_grad_nhwc_group_norm_grad_one_kernel block 256 shared 0 planned 1056
// CHECK: arith.divui %[[RESIDENT]], %c2
// CHECK: arith.maxui %{{.+}}, %c4
// CHECK: %[[PARTS:.+]] = arith.ceildivui %c12, %{{.+}} : index
// CHECK: %[[BLOCKS:.+]] = arith.muli %c2, %[[PARTS]] : index
// CHECK: %[[SOME:.+]] = arith.cmpi ne, %[[BLOCKS]], %c0
// CHECK: %[[HELD:.+]] = arith.cmpi ule, %[[BLOCKS]], %[[RESIDENT]]
// CHECK: %[[FITS:.+]] = arith.andi %[[SOME]], %[[HELD]]
// CHECK: %[[ONE_GRID:.+]] = arith.select %[[FITS]], %[[BLOCKS]], %c0
// CHECK: %[[FOUR:.+]] = arith.select %[[FITS]], %c0{{[_0-9]*}}, %c1
// Its partial sums (2 a channel a block), totals (2 a channel an image)
// and the grid barrier's counter, zeroed by the runtime.
// CHECK: memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK: memref.alloc() : memref<64xf32>
// CHECK: memref.alloc() {nf.zeroed} : memref<1xi32>
// CHECK: gpu.launch_func @nf_kernels::@group_norm_grad_nhwc_group_norm_grad_one_kernel blocks in (%[[ONE_GRID]],
// The four kernels otherwise. 2 images x 1 block x 2 sums x 16 channels
// of partial sums.
// CHECK: %[[PARTIAL:.+]] = memref.alloc() : memref<64xf32>
// CHECK: %[[PARTIAL_FLAT:.+]] = memref.cast %[[PARTIAL]]
// A block per image (12 positions fit one block of 128 position groups).
// CHECK: %[[SUMS_GRID:.+]] = arith.muli %c2{{[_0-9]*}}, %[[FOUR]]
// CHECK: gpu.launch_func @nf_kernels::@group_norm_grad_nhwc_group_norm_grad_sums blocks in (%[[SUMS_GRID]],
// CHECK-SAME: %[[PARTIAL_FLAT]] : memref<?xf32>)
// The totals: 2 images x 2 sums x 16 channels; a block per image (16
// channels are one run of 32 lanes), one warp (one part).
// CHECK: %[[TOTALS:.+]] = memref.alloc() : memref<64xf32>
// CHECK: %[[TOTALS_FLAT:.+]] = memref.cast %[[TOTALS]]
// CHECK: %[[TOTALS_GRID:.+]] = arith.muli %c2{{[_0-9]*}}, %[[FOUR]]
// CHECK: gpu.launch_func @nf_kernels::@group_norm_grad_nhwc_group_norm_grad_totals blocks in (%[[TOTALS_GRID]], %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c32{{[_0-9]*}},
// CHECK-SAME: args(%[[PARTIAL_FLAT]] : memref<?xf32>, %[[TOTALS_FLAT]] : memref<?xf32>)
// Two sums for each of 2 x 4 (image, group).
// CHECK: %[[SUMS:.+]] = memref.alloc() : memref<16xf32>
// CHECK: %[[SUMS_FLAT:.+]] = memref.cast %[[SUMS]]
// 8 (image, group)s and 16 channels: one block of 256 threads.
// CHECK: gpu.launch_func @nf_kernels::@group_norm_grad_nhwc_group_norm_grad_finish blocks in (%[[FOUR]],
// CHECK-SAME: args(%[[TOTALS_FLAT]] : memref<?xf32>, %{{.+}} : memref<?xf32>, %[[SUMS_FLAT]] : memref<?xf32>,
// 384 elements in vectors of 8: one block.
// CHECK: gpu.launch_func @nf_kernels::@group_norm_grad_nhwc_group_norm_grad_dx blocks in (%[[FOUR]],
// CHECK-SAME: %[[SUMS_FLAT]] : memref<?xf32>, %{{.+}} : memref<?xf16>)
func.func @group_norm_grad_nhwc(%dy: tensor<2x4x3x16xf16>, %x: tensor<2x4x3x16xf16>, %m: tensor<2x4xf32>, %r: tensor<2x4xf32>, %s: tensor<16xf32>) -> (tensor<2x4x3x16xf16>, tensor<16xf32>, tensor<16xf32>) {
  %dx, %ds, %db = nf.group_norm_grad %dy, %x, %m, %r scale %s {layout = #nf.layout<nhwc>, num_groups = 4 : i64} : (tensor<2x4x3x16xf16>, tensor<2x4x3x16xf16>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<16xf32>) -> (tensor<2x4x3x16xf16>, tensor<16xf32>, tensor<16xf32>)
  return %dx, %ds, %db : tensor<2x4x3x16xf16>, tensor<16xf32>, tensor<16xf32>
}

// An instance norm is a group norm of one channel a group. NCHW: a block
// per (image, channel) (21 positions are one part), 2 x 5 x 2 partial
// sums, 2 x 5 x 2 totals, 2 x 5 x 2 group sums.
// CHECK-LABEL: func.func @instance_norm_grad_nchw
// CHECK: memref.alloc() : memref<20xf64>
// CHECK: %[[BLOCKS:.+]] = arith.constant 10 : index
// CHECK: gpu.launch_func @nf_kernels::@instance_norm_grad_nchw_instance_norm_grad_sums blocks in (%[[BLOCKS]],
// CHECK: memref.alloc() : memref<20xf64>
// CHECK: gpu.launch_func @nf_kernels::@instance_norm_grad_nchw_instance_norm_grad_totals
// CHECK: memref.alloc() : memref<20xf64>
// CHECK: gpu.launch_func @nf_kernels::@instance_norm_grad_nchw_instance_norm_grad_finish
// CHECK: gpu.launch_func @nf_kernels::@instance_norm_grad_nchw_instance_norm_grad_dx
func.func @instance_norm_grad_nchw(%dy: tensor<2x5x7x3xf64>, %x: tensor<2x5x7x3xf64>, %m: tensor<2x5xf64>, %r: tensor<2x5xf64>) -> (tensor<2x5x7x3xf64>, tensor<5xf64>, tensor<5xf64>) {
  %dx, %ds, %db = nf.instance_norm_grad %dy, %x, %m, %r : (tensor<2x5x7x3xf64>, tensor<2x5x7x3xf64>, tensor<2x5xf64>, tensor<2x5xf64>) -> (tensor<2x5x7x3xf64>, tensor<5xf64>, tensor<5xf64>)
  return %dx, %ds, %db : tensor<2x5x7x3xf64>, tensor<5xf64>, tensor<5xf64>
}

// One image of 300 positions of 40 channels: 19 parts of 16 positions.
// Their totals: 8 warps (5 runs of 4 parts, rounded up to a power of two),
// a block per run of 32 channels (2). Each warp keeps 4 totals a sum, one
// per slot of its runs (4 loads in flight), adds them in slot order, and
// the warps' totals meet in workgroup memory; warp 0 stores.
// CHECK-LABEL: func.func @group_norm_grad_many_parts
// CHECK: gpu.launch_func @nf_kernels::@group_norm_grad_many_parts_group_norm_grad_one_kernel
// CHECK: memref.alloc() : memref<1520xf32>
// CHECK: %[[SUMS_GRID:.+]] = arith.muli %c19, %[[FOUR:.+]] : index
// CHECK: gpu.launch_func @nf_kernels::@group_norm_grad_many_parts_group_norm_grad_sums blocks in (%[[SUMS_GRID]],
// CHECK: %[[TOTALS_GRID:.+]] = arith.muli %c2{{[_0-9]*}}, %[[FOUR]] : index
// CHECK: gpu.launch_func @nf_kernels::@group_norm_grad_many_parts_group_norm_grad_totals blocks in (%[[TOTALS_GRID]], %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c256
func.func @group_norm_grad_many_parts(%dy: tensor<1x300x40xf32>, %x: tensor<1x300x40xf32>, %m: tensor<1x4xf32>, %r: tensor<1x4xf32>) -> (tensor<1x300x40xf32>, tensor<40xf32>, tensor<40xf32>) {
  %dx, %ds, %db = nf.group_norm_grad %dy, %x, %m, %r {layout = #nf.layout<nhwc>, num_groups = 4 : i64} : (tensor<1x300x40xf32>, tensor<1x300x40xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<1x300x40xf32>, tensor<40xf32>, tensor<40xf32>)
  return %dx, %ds, %db : tensor<1x300x40xf32>, tensor<40xf32>, tensor<40xf32>
}

// CHECK-LABEL: gpu.func @group_norm_grad_nhwc_group_norm_grad_sums
// CHECK-SAME: nf.schedule = "channels-last threads-per-row=2 rows-per-block=128 vector=8
// Lane l of a thread's 8 channels: the mean of (image, (channel + l) / 4).
// CHECK: %[[LANE:.+]] = arith.muli %{{.+}}, %c8
// CHECK: %[[IMAGE_BASE:.+]] = arith.muli %{{.+}}, %c4
// CHECK: %[[GROUP:.+]] = arith.divui %{{.+}}, %c4
// CHECK: %[[IG:.+]] = arith.addi %[[IMAGE_BASE]], %[[GROUP]]
// CHECK: memref.load %arg2[%[[IG]]] : memref<?xf32>
// Every element: xhat, then dy * xhat and dy added.
// CHECK: scf.for
// CHECK: vector.load %arg0
// CHECK: vector.load %arg1
// CHECK: arith.subf
// CHECK: arith.mulf
// The 128 position groups combine in workgroup memory, in a loop.
// CHECK: gpu.barrier
// CHECK: scf.for %{{.+}} = %c1{{.*}} to %c128
// CHECK: gpu.barrier
// CHECK: vector.store

// CHECK-LABEL: gpu.func @group_norm_grad_nhwc_group_norm_grad_totals
// CHECK-SAME: nf.schedule = "partial-totals warps=1 unroll=1"

// CHECK-LABEL: gpu.func @group_norm_grad_nhwc_group_norm_grad_finish
// Threads 0..7: (image, group)s; 8..23: channels.
// CHECK: %[[GROUPS:.+]] = arith.cmpi ult, %[[ITEM:.+]], %c8
// CHECK: %[[CHANNELS:.+]] = arith.cmpi ult, %[[ITEM]], %c24
// CHECK: scf.if %[[GROUPS]]
// The group's 4 channels' totals (no loop over parts), times the scale.
// CHECK: scf.for %{{.+}} = %c0{{.*}} to %c4
// CHECK-NOT: scf.for
// CHECK: %[[SCALE:.+]] = memref.load %arg1
// CHECK: memref.load %arg0
// CHECK: arith.mulf %[[SCALE]]
// CHECK: memref.load %arg0
// CHECK: arith.mulf %[[SCALE]]
// Stored as (sum of g*dy, sum of g*dy*xhat).
// CHECK: %[[PAIR:.+]] = vector.from_elements %[[S:.+]]#1, %[[S]]#0
// CHECK: vector.store %[[PAIR]], %arg2
// CHECK: } else {
// CHECK: scf.if %[[CHANNELS]]
// A channel: the 2 images' sums.
// CHECK: scf.for %{{.+}} = %c0{{.*}} to %c2
// CHECK: memref.store %{{.+}}, %arg3
// CHECK: memref.store %{{.+}}, %arg4

// CHECK-LABEL: gpu.func @group_norm_grad_nhwc_group_norm_grad_dx
// CHECK-SAME: nf.schedule = "group-norm-grad-dx grid-stride block=256 vector=8
// CHECK: scf.for
// CHECK: vector.load %arg0{{.+}} vector<8xf16>
// CHECK: vector.load %arg1{{.+}} vector<8xf16>
// The scale of the 8 channels as two f32 vectors.
// CHECK: vector.load %arg4{{.+}} vector<4xf32>
// CHECK: vector.load %arg4{{.+}} vector<4xf32>
// Groups of 4 channels: lanes 0-3 share their group's mean, rstd and sums,
// lanes 4-7 the next group's.
// CHECK-COUNT-2: memref.load %arg2
// CHECK-NOT: memref.load %arg2
// CHECK: vector.store %{{.+}}, %arg6{{.+}} vector<8xf16>

// CHECK-LABEL: gpu.func @instance_norm_grad_nchw_instance_norm_grad_sums
// CHECK-SAME: nf.schedule = "channels-first
// CHECK-LABEL: gpu.func @instance_norm_grad_nchw_instance_norm_grad_dx
// CHECK-SAME: vector=1

// CHECK-LABEL: gpu.func @group_norm_grad_many_parts_group_norm_grad_totals
// CHECK-SAME: nf.schedule = "partial-totals warps=8 unroll=4"
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[WARP:.+]] = arith.divui %[[TID]], %c32
// CHECK: %[[FIRST:.+]] = arith.muli %[[WARP]], %c4
// CHECK: scf.for %{{.+}} = %[[FIRST]] to %c19 step %c32
// CHECK-COUNT-4: scf.if
// CHECK: scf.yield
// CHECK: gpu.barrier
// CHECK: scf.for %{{.+}} = %c1{{.*}} to %c8
// CHECK: gpu.barrier
// CHECK: memref.store
// CHECK: memref.store
