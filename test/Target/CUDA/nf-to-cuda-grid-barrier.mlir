// A kernel with a grid barrier (the one-kernel channels-last group norm)
// prints nf.grid_barrier as the prelude's nf_grid_sync on its counter (a
// written argument, so not const), __launch_bounds__ with the blocks an SM
// it is planned for, and registers with the simulator as a kernel whose
// grid runs together. The prelude's nf_grid_sync: a fence, an atomic add,
// an acquire load until the count reaches the next multiple of the grid's
// blocks.
// RUN: nf-translate --nf-to-cuda %s | FileCheck %s

// CHECK: __device__ __forceinline__ void nf_grid_sync(unsigned *counter) {
// CHECK: __threadfence();
// CHECK-NEXT: unsigned arrived = atomicAdd(counter, 1u);
// CHECK-NEXT: unsigned target = (arrived / blocks + 1) * blocks, seen;
// CHECK: ld.acquire.gpu.global.u32
// CHECK-LABEL: // unet_group_norm_one_kernel: channels-last-groups threads-per-row=16 rows-per-block=16 vector=4 registers=8
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(256, 3) unet_group_norm_one_kernel({{.*}}, int *__restrict__ [[COUNTER:a[0-9]+]]) {
// CHECK: nf_grid_sync((unsigned *)[[COUNTER]]);
// CHECK-NOT: nf_grid_sync
// CHECK: NF_SIM_GRID_ENTRY(unet_group_norm_one_kernel)
func.func @unet(%x: tensor<1x32x32x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<1x32x32x64xf32> {
  %y, %m, %r = nf.group_norm %x scale %s bias %b {layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (tensor<1x32x32x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<1x32x32x64xf32>, tensor<1x32xf32>, tensor<1x32xf32>)
  return %y : tensor<1x32x32x64xf32>
}
