// TMA loads (cp.async.bulk.tensor) completing on mbarriers, sm_90. The
// tensor map comes from the host (sim_test.cpp writes the simulator's form
// of it; a GPU runtime encodes it with cuTensorMapEncodeTiled), and
// sim_test.cpp checks where each element lands by its own swizzle formula.
//
// tma_box: one block of 64 threads. Thread 0 initializes an mbarrier for
// one arrival, and each phase p (0 and 1) loads the box at (x0 + p * dx,
// y0, z0) into stage p of a 1024-byte aligned buffer: an arrive.expect_tx
// of the box's bytes, then the load. Every thread waits for phase p's
// parity and copies its share of the stage's bytes, as they lie in shared
// memory, to out (stage p at out + p * bytes), then all meet.
extern "C" __global__ void tma_box(const __grid_constant__ nf_tensor_map map,
                                   int rank, int x0, int y0, int z0, int dx,
                                   int bytes, unsigned char *__restrict__ out) {
  NF_SHARED_ALIGNED(unsigned char, stage, 2 * 8192, 1024);
  NF_SHARED(long long, bar, 1);
  int t = threadIdx.x;
  if (t == 0) {
    nf_mbarrier_init(bar, 1);
    nf_mbarrier_init_fence();
  }
  __syncthreads();
  for (int p = 0; p < 2; ++p) {
    unsigned char *dst = stage + p * 8192;
    if (t == 0) {
      nf_mbarrier_arrive_expect_tx(bar, unsigned(bytes));
      if (rank == 2)
        nf_tma_load<2>(dst, map, bar, x0 + p * dx, y0);
      else
        nf_tma_load<3>(dst, map, bar, x0 + p * dx, y0, z0);
    }
    nf_mbarrier_wait(bar, unsigned(p));
    for (int i = t; i < bytes; i += blockDim.x)
      nf_stg(out + p * bytes + i, dst[i]);
    // Every thread has seen phase p complete before thread 0 arms the
    // next: one that had not would wait for a parity that comes back only
    // a phase later (the simulator completes phases early, which shows it).
    __syncthreads(); // @barrier
  }
}
NF_SIM_ENTRY(tma_box)

// The rules the simulator enforces, by `what`, on a load of the 2-d map's
// box at (0, 0) into a buffer that starts 1024-byte aligned:
//   0: nothing missing (the stage's bytes go to out);
//   1: no wait: the bytes are read before the load lands (out gets the
//      poison shared memory starts with, and the block exits with the load
//      in flight);
//   2: a wait on an mbarrier that no mbarrier.init made;
//   3: a wait for a phase that nothing completes (no arrive.expect_tx);
//   4: a destination 16 bytes off the swizzle's alignment.
extern "C" __global__ void tma_rules(const __grid_constant__ nf_tensor_map map,
                                     int what, int bytes,
                                     unsigned char *__restrict__ out) {
  NF_SHARED_ALIGNED(unsigned char, stage, 8192 + 1024, 1024);
  NF_SHARED(long long, bar, 2);
  int t = threadIdx.x;
  if (t == 0) {
    nf_mbarrier_init(bar, 1);
    nf_mbarrier_init_fence();
  }
  __syncthreads();
  unsigned char *dst = stage + (what == 4 ? 16 : 0);
  if (t == 0) {
    if (what != 3)
      nf_mbarrier_arrive_expect_tx(bar, unsigned(bytes));
    nf_tma_load<2>(dst, map, bar, 0, 0);
  }
  if (what == 2)
    nf_mbarrier_wait(bar + 1, 0);
  else if (what != 1)
    nf_mbarrier_wait(bar, 0);
  for (int i = t; i < bytes; i += blockDim.x)
    nf_stg(out + i, dst[i]);
}
NF_SIM_ENTRY(tma_rules)
