// The ops a cluster of blocks sharing TMA-loaded tiles takes, printed: a
// TMA load multicast to the blocks of a mask (the prelude's
// nf_tma_load_multicast: .multicast::cluster), an arrival on another
// block's mbarrier (nf_mbarrier_arrive_cluster: mapa, then
// mbarrier.arrive.release.cluster.shared::cluster) beside one on the
// block's own, and the consumers' named barrier.
// RUN: nf-translate --nf-to-cuda --cuda-arch=sm_90a %s | FileCheck %s

// CHECK-LABEL: __cluster_dims__(2, 1, 1) shared_tiles(const __grid_constant__ nf_tensor_map a0, long long a1, long long a2, long long a3) {
// CHECK: nf_tma_load_multicast<2>((s0 + a1), a0, (s1 + a1), (unsigned short)(a2), int(a1), int(a1));
// CHECK-NEXT: nf_tma_load<2>((s0 + a1), a0, (s1 + a1), int(a1), int(a1));
// CHECK-NEXT: nf_mbarrier_arrive((s1 + a1));
// CHECK-NEXT: nf_mbarrier_arrive_cluster((s1 + a1), unsigned(a3));
// CHECK-NEXT: nf_named_barrier(1, 256);
// CHECK: NF_SIM_CLUSTER_ENTRY(shared_tiles, 2)
module attributes {gpu.container_module} {
  gpu.module @nf_kernels {
    gpu.func @shared_tiles(%m: !nf.tensor_map, %i: index, %mask: index, %rank: index) workgroup(%s : memref<8192xf16, #gpu.address_space<workgroup>>, %bars : memref<4xi64, #gpu.address_space<workgroup>>) kernel attributes {nf.cluster_blocks = 2 : i64} {
      nf.tma_load %m[%i, %i], %s[%i], %bars[%i] multicast %mask : memref<8192xf16, #gpu.address_space<workgroup>>, memref<4xi64, #gpu.address_space<workgroup>>
      nf.tma_load %m[%i, %i], %s[%i], %bars[%i] : memref<8192xf16, #gpu.address_space<workgroup>>, memref<4xi64, #gpu.address_space<workgroup>>
      nf.mbarrier_arrive %bars[%i] : memref<4xi64, #gpu.address_space<workgroup>>
      nf.mbarrier_arrive %bars[%i] rank %rank : memref<4xi64, #gpu.address_space<workgroup>>
      nf.named_barrier 1, 256
      gpu.return
    }
  }
}
