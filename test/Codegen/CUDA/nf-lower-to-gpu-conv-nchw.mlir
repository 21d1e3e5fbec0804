// NCHW convolutions on the tensor-core kernel (LowerProducts.cpp): the
// input's channels are a plane apart, so a tap's channels are not one
// 16-byte run. Three ways, by shape:
//  - input channels a multiple of 8: the input and the filter are copied
//    channels-last first (NHWC, OHWI: two copy kernels), as cuDNN does for
//    NCHW data, and the product stages both by cp.async;
//  - a 1 x 1 filter at stride 1, no padding, planes a multiple of 8: the
//    input is the product's A stored K-major, staged in place;
//  - otherwise the input is gathered one element at a time.
// The result stays NCHW in every case. Where its planes are whole 16-byte
// chunks (56 x 56, 112 x 112), the tile goes through shared memory by
// columns and out a channel's 8 positions a store; planes of runs of 4 (14
// x 14), 4 positions a store.
// RUN: nf-opt %s --nf-lower-to-gpu | FileCheck %s

// The input's copy: 1568 tiles, on as many blocks as the device holds
// (at most 1056 on sm_90); the filter's: 128 tiles, a block each.
// CHECK-LABEL: func.func @resnet_3x3(
// CHECK: %[[RESIDENT:.+]] = nf.resident_blocks @nf_kernels::@resnet_3x3_input_nhwc block 256 shared 0 planned 1056
// CHECK: %[[BLOCKS:.+]] = arith.minui %[[RESIDENT]], %c1568
// CHECK: gpu.launch_func @nf_kernels::@resnet_3x3_input_nhwc blocks in (%[[BLOCKS]],
// CHECK: gpu.launch_func @nf_kernels::@resnet_3x3_filter_ohwi blocks in (%c128{{(_[0-9]+)?}},
// CHECK: gpu.launch_func @nf_kernels::@resnet_3x3_conv2d
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @resnet_3x3(%x: tensor<8x64x56x56xbf16>, %w: tensor<64x64x3x3xbf16>) -> tensor<8x64x56x56xbf16> {
  %y = nf.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<8x64x56x56xbf16>, tensor<64x64x3x3xbf16> -> tensor<8x64x56x56xbf16>
  return %y : tensor<8x64x56x56xbf16>
}

// CHECK-LABEL: func.func @resnet_1x1(
// CHECK-NOT: _nhwc
// CHECK: gpu.launch_func @nf_kernels::@resnet_1x1_conv2d
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @resnet_1x1(%x: tensor<8x256x56x56xf16>, %w: tensor<64x256x1x1xf16>) -> tensor<8x64x56x56xf16> {
  %y = nf.conv2d %x, %w : tensor<8x256x56x56xf16>, tensor<64x256x1x1xf16> -> tensor<8x64x56x56xf16>
  return %y : tensor<8x64x56x56xf16>
}

// CHECK-LABEL: func.func @rgb_stem(
// CHECK-NOT: _nhwc
// CHECK: gpu.launch_func @nf_kernels::@rgb_stem_conv2d
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @rgb_stem(%x: tensor<8x3x224x224xf16>, %w: tensor<64x3x7x7xf16>) -> tensor<8x64x112x112xf16> {
  %y = nf.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>} : tensor<8x3x224x224xf16>, tensor<64x3x7x7xf16> -> tensor<8x64x112x112xf16>
  return %y : tensor<8x64x112x112xf16>
}

// The copy: a block per tile of 32 channels x 32 positions, through a
// padded tile of shared memory (33 a row), 32-bit indices.
// CHECK-LABEL: gpu.func @resnet_3x3_input_nhwc(
// CHECK-SAME: workgroup(%{{.+}} : memref<1056xbf16, #gpu.address_space<workgroup>>)
// CHECK-SAME: nf.index_bits = 32
// CHECK-SAME: nf.schedule = "channels-last-copy tile=32x32 block=256"
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: gpu.return

// The 3 x 3 product reads its A from the NHWC copy: whole 16-byte runs;
// 64 output channels take tiles of 128 x 64.
// CHECK-LABEL: gpu.func @resnet_3x3_conv2d(
// CHECK-SAME: nf.schedule = "tensor-core-product tile=128x64x32 warps=2x2 stages=3"
// CHECK: nvgpu.device_async_copy %arg0[{{.+}}], %arg3[{{.+}}], 8,
// CHECK: memref.store %{{.+}}, %arg3[%{{.+}}] : memref<{{[0-9]+}}xbf16, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: %[[CHUNK:.+]] = vector.load %arg3[%{{.+}}] : memref<{{[0-9]+}}xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: vector.store %[[CHUNK]], %arg2[%{{.+}}] : memref<?xbf16>, vector<8xbf16>
// CHECK: gpu.return

// So does the 1 x 1 product from the input in place (K-major).
// CHECK-LABEL: gpu.func @resnet_1x1_conv2d(
// CHECK: nvgpu.device_async_copy %arg0[{{.+}}], %arg3[{{.+}}], 8,
// CHECK: gpu.return

// The stem's three channels: A element by element, B's rows of 147 too.
// CHECK-LABEL: gpu.func @rgb_stem_conv2d(
// CHECK-NOT: nvgpu.device_async_copy %arg0
// CHECK: gpu.return

// ResNet's third stage: planes of 196 positions, runs of 4 of bf16.
// CHECK-LABEL: gpu.func @resnet_14x14_conv2d(
// CHECK: %[[PART:.+]] = vector.load %arg3[%{{.+}}] : memref<{{[0-9]+}}xbf16, #gpu.address_space<workgroup>>, vector<4xbf16>
// CHECK: vector.store %[[PART]], %arg2[%{{.+}}] : memref<?xbf16>, vector<4xbf16>
// CHECK: gpu.return
func.func @resnet_14x14(%x: tensor<32x256x14x14xbf16>, %w: tensor<256x256x3x3xbf16>) -> tensor<32x256x14x14xbf16> {
  %y = nf.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, layout = #nf.layout<nchw>} : tensor<32x256x14x14xbf16>, tensor<256x256x3x3xbf16> -> tensor<32x256x14x14xbf16>
  return %y : tensor<32x256x14x14xbf16>
}
