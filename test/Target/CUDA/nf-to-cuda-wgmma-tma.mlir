// A product under a written `wgmma tma` schedule, printed for sm_90a: its
// operands' tensor maps are __grid_constant__ parameters; thread 0 makes
// an mbarrier a stage before any use; for each K tile thread 0 expects
// the stage's bytes (A's 128 x 32 and B's 32 x 128 f16: 16384) on the
// stage's mbarrier and loads A's one box (K rows of 32) and B's two boxes
// of 64 columns; the K loop's barrier comes first, then the load of the
// tile two stages on, then the wait for the current stage's phase, then
// the wgmmas. Every cp.async is gone, and the staged epilogue fences its
// shared-memory accesses against the next tile's loads (the async proxy).
// K of 70 f16 (140-byte rows) cannot be a tensor map, nor can an empty
// matrix (K or M of 0): the same schedule stages those by cp.async.
// Warp specialized (`warp-specialized` after `tma`), the block is 128
// consumer threads and a producer warpgroup past them: thread 0 makes a
// full mbarrier (one arrival) and an empty one (the 128 consumers) a
// stage, and the block meets once. Thread 128 alone walks the units' K
// tiles: it waits for the stage to be empty, expects its bytes and loads
// it. The consumers wait for the stage to be full, run its wgmmas, and
// once the group before retires arrive on that one's empty mbarrier (the
// last K tile's after the loop); the result tile is staged past the
// stages (at element 24576, A's and B's 3 stages of 4096 each), and the
// consumers meet at named barrier 1 of 128 threads, never the block's.
// In clusters of two (`multicast` after `warp-specialized`): the empty
// mbarriers count both blocks' consumers (256), the cluster meets once
// after they are made, each producer multicasts its one of B's two boxes
// to both blocks (mask 3) after loading its A, waits after its last tile
// until every stage is empty, and each consumer releases a stage in its
// block and in the other (rank bid % 2 ^ 1).
// In two teams (`pingpong` after `warp-specialized`): 384 threads, the
// producer from thread 256; two staging buffers of 64 x 128 past the 3
// stages of 6144 elements (the mbarriers at byte 69632); an `order`
// mbarrier a team (128 arrivals) past the full and empty ones. A team
// waits on its own before its K loop and arrives on the other's after it
// (index 2 * stages + 1 - team), and meets at named barrier 1 (team 0) or
// 2 (team 1). With two consumer warpgroups the producer's first act is to
// give back all but 40 registers a thread, the consumers' to take 232
// (setmaxnreg); the one consumer warpgroup of ws_matmul launches with 255
// and does neither.
// RUN: nf-translate --nf-to-cuda --cuda-arch=sm_90a %s | FileCheck %s

// CHECK-LABEL: // mlp_matmul: tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(128, 1) mlp_matmul(const __half *__restrict__ a0, const __half *__restrict__ a1, __half *__restrict__ a2, const __grid_constant__ nf_tensor_map a3, const __grid_constant__ nf_tensor_map a4) {
// CHECK-NEXT: NF_DYNAMIC_SMEM_ALIGNED(nf_smem, 1024);
// CHECK-NEXT: __half *const s0 = reinterpret_cast<__half *>(nf_smem + 0);
// CHECK-NEXT: long long *const s1 = reinterpret_cast<long long *>(nf_smem + 49152);
// CHECK-NOT: nf_cp_async
// CHECK-COUNT-3: nf_mbarrier_init((s1 + v{{[0-9]+}}), 1u);
// CHECK-NEXT: nf_mbarrier_init_fence();
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads();
// CHECK: nf_mbarrier_arrive_expect_tx((s1 + v{{[0-9]+}}), 16384u);
// CHECK-NEXT: nf_tma_load<2>((s0 + v{{[0-9]+}}), a3,
// CHECK-NEXT: nf_tma_load<2>((s0 + v{{[0-9]+}}), a4,
// CHECK: nf_tma_load<2>((s0 + v{{[0-9]+}}), a4,
// CHECK: for (
// CHECK-NEXT: __syncthreads();
// CHECK: nf_mbarrier_arrive_expect_tx(
// CHECK: nf_mbarrier_wait((s1 + v{{[0-9]+}}), unsigned(v{{[0-9]+}}));
// CHECK: nf_wgmma_fence();
// CHECK-COUNT-4: nf_wgmma<128, false, true, 64, 16, 512, 128, 4096, 1024>(
// CHECK: nf_wgmma_commit();
// CHECK-NEXT: nf_wgmma_wait<1>();
// CHECK: nf_wgmma_wait<0>();
// CHECK: nf_fence_proxy_async();
// CHECK-NEXT: __syncthreads();
// CHECK-NOT: nf_cp_async
// CHECK: NF_SIM_ENTRY(mlp_matmul)

// CHECK-LABEL: // odd_k_matmul: tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma
// CHECK-NOT: nf_tensor_map
// CHECK-NOT: nf_tma_load
// CHECK: NF_SIM_ENTRY(odd_k_matmul)

// CHECK-LABEL: // k0_matmul: tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma
// CHECK-NEXT: k0_matmul(const __half *__restrict__ a0, const __half *__restrict__ a1, __half *__restrict__ a2) {
// CHECK-LABEL: // m0_matmul: tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma
// CHECK-NEXT: m0_matmul(const __half *__restrict__ a0, const __half *__restrict__ a1, __half *__restrict__ a2) {
// CHECK-LABEL: // ws_matmul: tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma warp-specialized
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(256, 1) ws_matmul(
// CHECK: long long *const s1 = reinterpret_cast<long long *>(nf_smem + 81920);
// CHECK-COUNT-3: nf_mbarrier_init((s1 + v{{[0-9]+}}), 128u);
// CHECK-NEXT: nf_mbarrier_init_fence();
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads();
// CHECK-NOT: __syncthreads
// CHECK: bool [[PRODUCER:v[0-9]+]] = (unsigned)v{{[0-9]+}} >= (unsigned)[[C128:v[0-9]+]];
// CHECK-NEXT: if ([[PRODUCER]]) {
// CHECK-NEXT: bool [[FIRST:v[0-9]+]] = v{{[0-9]+}} == [[C128]];
// CHECK-NOT: nf_setmaxnreg
// CHECK-NEXT: if ([[FIRST]]) {
// CHECK: nf_mbarrier_wait((s1 + v{{[0-9]+}}), unsigned(v{{[0-9]+}}));
// CHECK-NEXT: nf_mbarrier_arrive_expect_tx((s1 + v{{[0-9]+}}), 16384u);
// CHECK-COUNT-3: nf_tma_load<2>(
// CHECK: } else {
// CHECK: nf_mbarrier_wait((s1 + v{{[0-9]+}}), unsigned(v{{[0-9]+}}));
// CHECK: nf_wgmma_commit();
// CHECK-NEXT: nf_wgmma_wait<1>();
// CHECK: nf_mbarrier_arrive((s1 + v{{[0-9]+}}));
// CHECK: nf_wgmma_wait<0>();
// CHECK: nf_mbarrier_arrive((s1 + v{{[0-9]+}}));
// CHECK: = v{{[0-9]+}} + v{{[0-9]+}};
// CHECK: *(nf_vec<__half, 2> *)(s0 +
// CHECK: nf_named_barrier(1, 128);
// CHECK: nf_stg((nf_vec<__half, 8> *)
// CHECK: nf_named_barrier(1, 128);
// CHECK-NOT: nf_fence_proxy_async
// CHECK-NOT: __syncthreads
// CHECK: NF_SIM_ENTRY(ws_matmul)
func.func @mlp(%a: tensor<200x72xf16>, %b: tensor<72x136xf16>) -> tensor<200x136xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma"} : tensor<200x72xf16>, tensor<72x136xf16> -> tensor<200x136xf16>
  return %p : tensor<200x136xf16>
}
func.func @odd_k(%a: tensor<200x70xf16>, %b: tensor<70x136xf16>) -> tensor<200x136xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma"} : tensor<200x70xf16>, tensor<70x136xf16> -> tensor<200x136xf16>
  return %p : tensor<200x136xf16>
}
func.func @k0(%a: tensor<64x0xf16>, %b: tensor<0x64xf16>) -> tensor<64x64xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma"} : tensor<64x0xf16>, tensor<0x64xf16> -> tensor<64x64xf16>
  return %p : tensor<64x64xf16>
}
func.func @m0(%a: tensor<0x64xf16>, %b: tensor<64x64xf16>) -> tensor<0x64xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma"} : tensor<0x64xf16>, tensor<64x64xf16> -> tensor<0x64xf16>
  return %p : tensor<0x64xf16>
}
func.func @ws(%a: tensor<200x72xf16>, %b: tensor<72x136xf16>) -> tensor<200x136xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma warp-specialized"} : tensor<200x72xf16>, tensor<72x136xf16> -> tensor<200x136xf16>
  return %p : tensor<200x136xf16>
}

// CHECK-LABEL: // pp_matmul: tensor-core-product tile=64x128x32 warps=4x1 stages=3 wgmma tma warp-specialized pingpong
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(384, 1) pp_matmul(
// CHECK: long long *const s1 = reinterpret_cast<long long *>(nf_smem + 69632);
// CHECK-COUNT-3: nf_mbarrier_init((s1 + v{{[0-9]+}}), 1u);{{[[:space:]]+}}nf_mbarrier_init((s1 + v{{[0-9]+}}), 128u);
// CHECK-NEXT: nf_mbarrier_init((s1 + v{{[0-9]+}}), 128u);
// CHECK-NEXT: nf_mbarrier_init((s1 + v{{[0-9]+}}), 128u);
// CHECK-NEXT: nf_mbarrier_init_fence();
// CHECK: bool [[PRODUCER:v[0-9]+]] = (unsigned)v{{[0-9]+}} >= (unsigned)[[C256:v[0-9]+]];
// CHECK-NEXT: if ([[PRODUCER]]) {
// CHECK-NEXT: nf_setmaxnreg<false, 40>();
// CHECK: } else {
// CHECK-NEXT: nf_setmaxnreg<true, 232>();
// CHECK: bool [[FIRST_TEAM:v[0-9]+]] = [[TEAM:v[0-9]+]] == v{{[0-9]+}};
// CHECK: for (
// CHECK: int [[MINE:v[0-9]+]] = [[TEAM]] + v{{[0-9]+}};
// CHECK-NEXT: nf_mbarrier_wait((s1 + [[MINE]]), unsigned(v{{[0-9]+}}));
// CHECK: for (
// CHECK: nf_wgmma_wait<1>();
// CHECK: int [[OTHERS:v[0-9]+]] = v{{[0-9]+}} - [[TEAM]];
// CHECK-NEXT: nf_mbarrier_arrive((s1 + [[OTHERS]]));
// CHECK-NEXT: nf_wgmma_wait<0>();
// CHECK: if ([[FIRST_TEAM]]) {
// CHECK-NEXT: nf_named_barrier(1, 128);
// CHECK-NEXT: } else {
// CHECK-NEXT: nf_named_barrier(2, 128);
// CHECK: NF_SIM_ENTRY(pp_matmul)
func.func @pp(%a: tensor<200x72xf16>, %b: tensor<72x136xf16>) -> tensor<200x136xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=64x128x32 warps=4x1 stages=3 wgmma tma warp-specialized pingpong"} : tensor<200x72xf16>, tensor<72x136xf16> -> tensor<200x136xf16>
  return %p : tensor<200x136xf16>
}

// CHECK-LABEL: // mc_matmul: tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma warp-specialized multicast
// CHECK-NEXT: __cluster_dims__(2, 1, 1) mc_matmul(
// CHECK-COUNT-3: nf_mbarrier_init((s1 + v{{[0-9]+}}), 256u);
// CHECK-NEXT: nf_mbarrier_init_fence();
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: nf_cluster_sync();
// CHECK: nf_mbarrier_arrive_expect_tx((s1 + v{{[0-9]+}}), 16384u);
// CHECK: nf_tma_load<2>(
// CHECK: nf_tma_load_multicast<2>((s0 + v{{[0-9]+}}), a4, (s1 + v{{[0-9]+}}), (unsigned short)(v{{[0-9]+}}),
// CHECK-NOT: nf_tma_load
// CHECK: nf_mbarrier_wait((s1 + v{{[0-9]+}}), unsigned(v{{[0-9]+}}));
// CHECK: } else {
// CHECK: nf_mbarrier_arrive((s1 + [[EMPTY:v[0-9]+]]));
// CHECK-NEXT: nf_mbarrier_arrive_cluster((s1 + [[EMPTY]]), unsigned(v{{[0-9]+}}));
// CHECK: NF_SIM_CLUSTER_ENTRY(mc_matmul, 2)
func.func @mc(%a: tensor<200x72xf16>, %b: tensor<72x136xf16>) -> tensor<200x136xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma warp-specialized multicast"} : tensor<200x72xf16>, tensor<72x136xf16> -> tensor<200x136xf16>
  return %p : tensor<200x136xf16>
}
