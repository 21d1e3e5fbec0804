// TMA multicast in a cluster of two blocks (sm_90), as a warp-specialized
// product whose blocks share an operand's tile would run it: each block's
// producer loads half of every tile into the same stage of both blocks,
// and a stage is empty again only when the consumers of both have
// released it, on each block's empty mbarrier.
//
// ws_multicast: clusters of 2 blocks of 32 + 64 threads. Thread 0 of each
// makes a full mbarrier (one arrival: its producer's, expecting the whole
// tile's 256 bytes, half of them from the other block's load) and an empty
// one (the 128 consumers of both blocks) a stage; then the cluster meets.
// Thread 0 produces: for tile i of `tiles` (rows 4 i to 4 i + 3 of a 2-d
// map of 32 16-bit elements a row, loaded as boxes of 2 rows), it waits
// until stage i % 2 is empty, expects 256 bytes, and multicasts rows
// 4 i + 2 rank and 4 i + 2 rank + 1 to both blocks, at row 2 rank of the
// stage. After its last tile it waits until every stage is empty (the
// other block's consumers arrive on this block's mbarriers until then;
// the block may not exit before). Consumer c adds elements 2 c and 2 c + 1
// of each tile and releases the stage in both blocks, then writes its sum
// to out[64 rank + c].
extern "C" __global__ void __cluster_dims__(2, 1, 1)
    ws_multicast(const __grid_constant__ nf_tensor_map map, int tiles,
                 unsigned *__restrict__ out) {
  NF_SHARED_ALIGNED(unsigned short, stage, 2 * 128, 1024);
  NF_SHARED(long long, full, 2);
  NF_SHARED(long long, empty, 2);
  int t = threadIdx.x;
  unsigned rank = blockIdx.x % 2, peer = rank ^ 1;
  if (t == 0) {
    for (int s = 0; s < 2; ++s) {
      nf_mbarrier_init(&full[s], 1);
      nf_mbarrier_init(&empty[s], 128);
    }
    nf_mbarrier_init_fence();
  }
  __syncthreads();
  nf_cluster_sync(); // @cluster
  if (t < 32) {
    if (t == 0) {
      for (int i = 0; i < tiles; ++i) {
        int s = i % 2;
        nf_mbarrier_wait(&empty[s], unsigned((i / 2) % 2 ^ 1));
        nf_mbarrier_arrive_expect_tx(&full[s], 256u);
        nf_tma_load_multicast<2>(stage + s * 128 + rank * 64, map, &full[s],
                                 3, 0, 4 * i + 2 * int(rank));
      }
      for (int i = tiles; i < tiles + 2; ++i) // @tail
        nf_mbarrier_wait(&empty[i % 2], unsigned((i / 2) % 2 ^ 1)); // @tail
    }
    return;
  }
  int c = t - 32;
  unsigned acc = 0;
  for (int i = 0; i < tiles; ++i) {
    int s = i % 2;
    nf_mbarrier_wait(&full[s], unsigned((i / 2) % 2));
    acc += stage[s * 128 + 2 * c] + stage[s * 128 + 2 * c + 1];
    nf_mbarrier_arrive(&empty[s]);
    nf_mbarrier_arrive_cluster(&empty[s], peer); // @peer
  }
  (void)peer; // (the test may remove the arrival)
  nf_stg(out + 64 * rank + c, acc);
}
NF_SIM_CLUSTER_ENTRY(ws_multicast, 2)
