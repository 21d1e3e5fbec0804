// Group and instance norms whose groups hold at most 1024 elements run as
// warp rows (Schedule.cpp, selectGroupNormSchedule): a power-of-two part
// of a warp per (image, group), the group in registers, several groups a
// block, one kernel; x is read once. Elements are addressed through the
// layout as in the split schedule (LowerRowNorms.cpp, emitAddress). Not
// in NHWC where a group's run at a position is 16 bytes or less: those go
// across the channels.
// RUN: nf-opt %s --nf-lower-to-gpu | FileCheck %s

// An instance norm of 7x7 images, NCHW: 12 (image, channel) groups of 49
// contiguous elements, scalars (4 does not divide 49): a warp a group, 2
// elements a lane, 8 groups a block, so 2 blocks and no second kernel.
// CHECK-LABEL: func.func @instance_norm_7x7
// CHECK: gpu.launch_func @nf_kernels::@instance_norm_7x7_instance_norm blocks in (%c2,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @instance_norm_7x7(%x: tensor<2x6x7x7xf32>, %s: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<2x6x7x7xf32> {
  %y, %m, %r = nf.instance_norm %x scale %s bias %b {layout = #nf.layout<nchw>} : (tensor<2x6x7x7xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<2x6x7x7xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  return %y : tensor<2x6x7x7xf32>
}

// A group norm NHWC of 4 groups of 16 f16 channels (32-byte runs) at 16
// positions (256 elements a group): 8-lane vectors of a group's channels
// at one position, a warp a group, 8 groups (2 images x 4) in one block.
// CHECK-LABEL: func.func @group_norm_nhwc_small
// CHECK: gpu.launch_func @nf_kernels::@group_norm_nhwc_small_group_norm blocks in (%c1,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @group_norm_nhwc_small(%x: tensor<2x4x4x64xf16>, %s: tensor<64xf16>, %b: tensor<64xf16>) -> tensor<2x4x4x64xf16> {
  %y, %m, %r = nf.group_norm %x scale %s bias %b {layout = #nf.layout<nhwc>, num_groups = 4 : i64} : (tensor<2x4x4x64xf16>, tensor<64xf16>, tensor<64xf16>) -> (tensor<2x4x4x64xf16>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y : tensor<2x4x4x64xf16>
}

// Small groups in NHWC whose run at a position is at most 16 bytes (an
// instance norm's one channel, 2 bytes of bf16) go across the channels
// instead (ChannelsLastGroups: 16-byte vectors of every channel at a
// position, a lane's vector 8 instances): a warp row's lanes would each
// read one element 1024 bytes from the next. One kernel where the device
// holds its grid, else three.
// CHECK-LABEL: func.func @instance_norm_nhwc_7x7
// CHECK: gpu.launch_func @nf_kernels::@instance_norm_nhwc_7x7_instance_norm_one_kernel
// CHECK: gpu.launch_func @nf_kernels::@instance_norm_nhwc_7x7_instance_norm_partial
// CHECK: gpu.launch_func @nf_kernels::@instance_norm_nhwc_7x7_instance_norm_finish
// CHECK: gpu.launch_func @nf_kernels::@instance_norm_nhwc_7x7_instance_norm_normalize
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @instance_norm_nhwc_7x7(%x: tensor<8x7x7x512xbf16>) -> tensor<8x7x7x512xbf16> {
  %y, %m, %r = nf.instance_norm %x {layout = #nf.layout<nhwc>} : (tensor<8x7x7x512xbf16>) -> (tensor<8x7x7x512xbf16>, tensor<8x512xf32>, tensor<8x512xf32>)
  return %y : tensor<8x7x7x512xbf16>
}

// 1025 elements a group (odd: scalars), just past a warp row: a block row
// in registers, 224 threads of 5 elements, one kernel (until 2026-11-28 a
// split row in two kernels).
// CHECK-LABEL: func.func @instance_norm_over_a_warp_row
// CHECK: gpu.launch_func @nf_kernels::@instance_norm_over_a_warp_row_instance_norm blocks in (%c2{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c224,
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @instance_norm_over_a_warp_row(%x: tensor<1x2x25x41xf32>) -> tensor<1x2x25x41xf32> {
  %y, %m, %r = nf.instance_norm %x {layout = #nf.layout<nchw>} : (tensor<1x2x25x41xf32>) -> (tensor<1x2x25x41xf32>, tensor<1x2xf32>, tensor<1x2xf32>)
  return %y : tensor<1x2x25x41xf32>
}

// CHECK-LABEL: gpu.func @instance_norm_7x7_instance_norm(
// CHECK-SAME: nf.schedule = "warp-rows threads-per-row=32 rows-per-block=8 vector=1 registers=2"
// A group's element i: rowBase + i (groups are contiguous in NCHW).
// CHECK: %[[ROW:.+]] = arith.minui
// CHECK: %[[BASE:.+]] = arith.muli %[[ROW]], %c49
// CHECK: %[[OFFSET:.+]] = arith.addi %[[BASE]], %{{.+}} : index
// CHECK-NEXT: memref.load %arg0[%[[OFFSET]]]
// The group's sums: shuffles across its 32 lanes alone.
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK-NOT: gpu.barrier
// Its scale and bias: those of its channel, group * cpg (1) + i / 49.
// CHECK: %[[GROUP:.+]] = arith.remui %[[ROW]], %c6
// CHECK: %[[FIRST:.+]] = arith.muli %[[GROUP]], %c1
// CHECK: %[[SPATIAL:.+]] = arith.divui %{{.+}}, %c49
// CHECK: %[[CHANNEL:.+]] = arith.addi %[[FIRST]], %[[SPATIAL]]
// CHECK: memref.load %arg1[%[[CHANNEL]]]
// CHECK: memref.load %arg2[%[[CHANNEL]]]
// CHECK: memref.store %{{.+}}, %arg3[

// CHECK-LABEL: gpu.func @group_norm_nhwc_small_group_norm(
// CHECK-SAME: nf.schedule = "warp-rows threads-per-row=32 rows-per-block=8 vector=8 registers=1"
// In NHWC image n = row / 4, position p = i / 16, channel c = g * 16 +
// i % 16, at (n * 16 + p) * 64 + c.
// CHECK: %[[GROUP:.+]] = arith.remui %{{.+}}, %c4
// CHECK: %[[FIRST:.+]] = arith.muli %[[GROUP]], %c16
// CHECK: %[[IMAGE:.+]] = arith.divui %{{.+}}, %c4
// CHECK: %[[POS:.+]] = arith.divui %{{.+}}, %c16
// CHECK: %[[INSIDE:.+]] = arith.remui %{{.+}}, %c16
// CHECK: %[[CHANNEL:.+]] = arith.addi %[[FIRST]], %[[INSIDE]]
// CHECK: %[[PIXEL_BASE:.+]] = arith.muli %[[IMAGE]], %c16
// CHECK: %[[PIXEL:.+]] = arith.addi %[[PIXEL_BASE]], %[[POS]]
// CHECK: %[[AT:.+]] = arith.muli %[[PIXEL]], %c64
// CHECK: %[[X:.+]] = arith.addi %[[AT]], %[[CHANNEL]] : index
// CHECK: vector.load %arg0[%[[X]]] : memref<?xf16>, vector<8xf16>
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: vector.load %arg1{{.+}} vector<8xf16>
// CHECK: vector.load %arg2{{.+}} vector<8xf16>
// CHECK: vector.store %{{.+}}, %arg3{{.+}} vector<8xf16>
