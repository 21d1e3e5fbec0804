// A product under a written wgmma schedule, printed for sm_90a: its one
// shared buffer aligned to 1024 bytes (the swizzles repeat so), the K loop
// waiting for its K tile's copies, making them visible to wgmma's reads
// (fence.proxy.async) before the barrier, then for each 16 of K each m64
// slab's wgmma (A K-major in 64-byte swizzled rows of 32 elements, 512
// bytes a stride of 8 rows; B MN-major in 128-byte swizzled blocks of 64
// columns, 4096 bytes apart), one commit, and a wait that leaves this group
// in flight; after the loop every group is waited for and the accumulators
// fenced before the epilogue reads them. On sm_90, which has no wgmma, the
// schedule is refused.
// RUN: nf-translate --nf-to-cuda --cuda-arch=sm_90a %s | FileCheck %s
// RUN: not nf-translate --nf-to-cuda --cuda-arch=sm_90 %s 2>&1 | FileCheck %s --check-prefix=SM90

// CHECK-LABEL: // mlp_matmul: tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(128, 1) mlp_matmul(
// CHECK-NEXT: NF_SHARED_ALIGNED(__half, s0, 24576, 1024);
// CHECK: nf_cp_async_wait<0>();
// CHECK-NEXT: nf_fence_proxy_async();
// CHECK-NEXT: __syncthreads();
// CHECK: nf_wgmma_fence();
// CHECK-COUNT-4: nf_wgmma<128, false, true, 64, 16, 512, 128, 4096, 1024>(
// CHECK-NEXT: nf_wgmma_commit();
// CHECK-NEXT: nf_wgmma_wait<1>();
// CHECK: nf_cp_async_wait<0>();
// CHECK-NEXT: nf_wgmma_wait<0>();
// CHECK-NEXT: nf_vec<float, 64> [[D0:v[0-9]+]] = nf_wgmma_fence_operand(
// CHECK-NEXT: nf_vec<float, 64> [[D1:v[0-9]+]] = nf_wgmma_fence_operand(
// CHECK-NEXT: __syncthreads();
// CHECK: NF_SIM_ENTRY(mlp_matmul)

// SM90: error: 'nf.matmul' op cannot run under the schedule 'tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma': wgmma needs sm_90a (the target is h100-sxm, which compiles for sm_90)
func.func @mlp(%a: tensor<256x64xf16>, %b: tensor<64x256xf16>) -> tensor<256x256xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma"} : tensor<256x64xf16>, tensor<64x256xf16> -> tensor<256x256xf16>
  return %p : tensor<256x256xf16>
}
