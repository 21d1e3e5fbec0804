// A warp-specialized pipeline, as the wgmma product kernel's producer and
// consumer warpgroups run one (sm_90): mbarriers that say a stage is full
// (TMA loads complete on them) or empty again (the consumers arrive), and
// a named barrier (bar.sync 1, n) that only the consumers meet at.
//
// ws_pipeline: one block of 32 + 64 threads. Thread 0 produces: for each
// tile i of `tiles` (rows 4 i to 4 i + 3 of a 2-d map of 32 x 16-bit
// elements a row: 256 bytes a box), it waits until stage i % 2 is empty
// (parity (i / 2) % 2 ^ 1: the first wait of each stage passes), expects
// the box's bytes on its full mbarrier and loads it; the rest of warp 0
// exits at once. Consumer c (threads 32 to 95) waits until stage i % 2 is
// full, adds elements 2 c and 2 c + 1 of it and arrives on the stage's
// empty mbarrier (64 arrivals a phase). Then the consumers meet at named
// barrier 1 (`named` threads: 64) and consumer c writes its sum plus
// consumer (c + 1) % 64's, which it reads from shared memory.
extern "C" __global__ void ws_pipeline(const __grid_constant__ nf_tensor_map map,
                                       int tiles, unsigned named,
                                       unsigned *__restrict__ out) {
  NF_SHARED_ALIGNED(unsigned short, stage, 2 * 128, 1024);
  NF_SHARED(long long, full, 2);
  NF_SHARED(long long, empty, 2);
  NF_SHARED(unsigned, sums, 64);
  int t = threadIdx.x;
  if (t == 0) {
    for (int s = 0; s < 2; ++s) {
      nf_mbarrier_init(&full[s], 1);
      nf_mbarrier_init(&empty[s], 64);
    }
    nf_mbarrier_init_fence();
  }
  __syncthreads();
  if (t < 32) {
    if (t == 0)
      for (int i = 0; i < tiles; ++i) {
        int s = i % 2;
        nf_mbarrier_wait(&empty[s], unsigned((i / 2) % 2 ^ 1)); // @empty
        nf_mbarrier_arrive_expect_tx(&full[s], 256u);
        nf_tma_load<2>(stage + s * 128, map, &full[s], 0, 4 * i);
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
  }
  sums[c] = acc;
  (void)named; // (the test may remove the barrier)
  nf_named_barrier(1, named); // @named
  nf_stg(out + c, sums[c] + sums[(c + 1) % 64]);
}
NF_SIM_ENTRY(ws_pipeline)
