// batch_norm_training and batch_norm_grad with their channels first (NCHW)
// on the GPU: one cooperative kernel each (BatchNormOneKernel.cpp) where the
// channels-last layout takes three and four
// (nf-lower-to-gpu-channel-reductions.mlir).
// RUN: nf-opt %s --nf-lower-to-gpu | FileCheck %s

// BatchNorm's statistics with the channels first (NCHW), one kernel: its
// (channel, range) tasks are 64 channels times the ranges the device holds
// blocks for (at least 2048 bf16 elements, a vector of 8 a thread: one of
// 8 x 16 x 16 here), a grid of at most the blocks it holds, launched
// cooperatively (a grid barrier between the moments and y, with a zeroed
// counter); no elementwise kernel after it.
// CHECK-LABEL: func.func @batch_norm_training_nchw(
// CHECK: %[[RESIDENT:.+]] = nf.resident_blocks @nf_kernels::@batch_norm_training_nchw_batch_norm_training_one_kernel block 256 shared 0 planned 1056
// CHECK: %[[TASKS:.+]] = arith.muli %c64{{(_[0-9]+)?}}, %{{.+}} : index
// CHECK: %[[GRID:.+]] = arith.minui %[[TASKS]], %[[RESIDENT]] : index
// CHECK: memref.alloc() {nf.zeroed} : memref<1xi32>
// CHECK: gpu.launch_func @nf_kernels::@batch_norm_training_nchw_batch_norm_training_one_kernel blocks in (%[[GRID]],
// CHECK-NOT: gpu.launch_func
// CHECK: return
// CHECK-LABEL: func.func @batch_norm_grad_nchw(
// CHECK: nf.resident_blocks @nf_kernels::@batch_norm_grad_nchw_batch_norm_grad_one_kernel block 256 shared 0 planned 1056
// CHECK: gpu.launch_func @nf_kernels::@batch_norm_grad_nchw_batch_norm_grad_one_kernel
// CHECK-NOT: gpu.launch_func
// CHECK: return
// CHECK-LABEL: gpu.func @batch_norm_training_nchw_batch_norm_training_one_kernel(
// CHECK-SAME: nf.schedule = "channels-first-one-kernel threads-per-row=256 rows-per-block=1 vector=8 registers=3 max-blocks=1056"
// CHECK: vector.load {{.+}} : memref<?xbf16>, vector<8xbf16>
// CHECK: nf.grid_barrier
// CHECK-NOT: nf.grid_barrier
// CHECK: vector.store {{.+}} : memref<?xbf16>, vector<8xbf16>
func.func @batch_norm_training_nchw(%x: tensor<8x64x16x16xbf16>, %rm: tensor<64xf32>) -> tensor<8x64x16x16xbf16> {
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x running(%rm, %rm) {layout = #nf.layout<nchw>} : (tensor<8x64x16x16xbf16>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64x16x16xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %y : tensor<8x64x16x16xbf16>
}

// The gradient: dy and x (8 bf16 a vector, 2 at once each: as many bytes
// in flight as the forward's 4 of x) summed, one grid barrier, dx written.
// CHECK-LABEL: gpu.func @batch_norm_grad_nchw_batch_norm_grad_one_kernel(
// CHECK-SAME: nf.schedule = "channels-first-one-kernel threads-per-row=256 rows-per-block=1 vector=8 registers=2 max-blocks=1056"
// CHECK-COUNT-4: vector.load {{.+}} : memref<?xbf16>, vector<8xbf16>
// CHECK: nf.grid_barrier
// CHECK-NOT: nf.grid_barrier
// CHECK: vector.store {{.+}} : memref<?xbf16>, vector<8xbf16>
func.func @batch_norm_grad_nchw(%dy: tensor<8x64x16x16xbf16>, %x: tensor<8x64x16x16xbf16>, %m: tensor<64xf32>) -> (tensor<8x64x16x16xbf16>, tensor<64xf32>, tensor<64xf32>) {
  %dx, %ds, %db = nf.batch_norm_grad %dy, %x, %m, %m scale %m {layout = #nf.layout<nchw>} : (tensor<8x64x16x16xbf16>, tensor<8x64x16x16xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64x16x16xbf16>, tensor<64xf32>, tensor<64xf32>)
  return %dx, %ds, %db : tensor<8x64x16x16xbf16>, tensor<64xf32>, tensor<64xf32>
}
