// Thread-block clusters of 4 blocks of 64 threads: each block sums its
// 64 inputs, hands the sum to every block of its cluster, and every
// thread writes the cluster's total.

// The block's sum, in every thread (two warps through shared memory).
__device__ float blockSum(float v) {
  NF_SHARED(float, warps, 2);
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0)
    warps[threadIdx.x / 32] = v;
  __syncthreads();
  float s = warps[0] + warps[1];
  __syncthreads();
  return s;
}

extern "C" __global__ void __cluster_dims__(4, 1, 1)
    cluster_sum(const float *in, float *out) {
  NF_SHARED(float, sums, 4);
  unsigned rank = blockIdx.x % 4;
  float s = blockSum(nf_ldg(in + blockIdx.x * 64 + threadIdx.x));
  nf_cluster_sync_relaxed(); // every block has started
  if (threadIdx.x < 4)
    nf_cluster_st(&sums[rank], threadIdx.x, s);
  nf_cluster_sync(); // @cluster
  nf_stg(out + blockIdx.x * 64 + threadIdx.x, sums[0] + sums[1] + sums[2] +
                                                   sums[3]);
}
NF_SIM_CLUSTER_ENTRY(cluster_sum, 4)

// Misuse, each an error: `what` 0: block 1 exits, then the others store
// into its shared memory; 1: half of block 2 exits while the others wait
// at the cluster barrier; 2: blocks wait at two different cluster
// barriers; 3: a store to block 4 of a cluster of 4; 4: a store into
// another block before the cluster's first barrier.
extern "C" __global__ void __cluster_dims__(4, 1, 1)
    cluster_misuse(float *out, int what) {
  NF_SHARED(float, slot, 1);
  unsigned rank = blockIdx.x % 4;
  if (what == 0) {
    nf_cluster_sync();
    if (rank != 1 && threadIdx.x == 0)
      nf_cluster_st(slot, 1u, 1.0f);
    return;
  }
  if (what == 4 && threadIdx.x == 0)
    nf_cluster_st(slot, (rank + 1) % 4, 1.0f);
  if (what == 1 && rank == 2 && threadIdx.x >= 32)
    return;
  if (what == 2 && rank == 3) {
    nf_cluster_sync();
  } else {
    nf_cluster_sync();
  }
  if (what == 3 && threadIdx.x == 0)
    nf_cluster_st(slot, 4u, 1.0f);
  nf_stg(out + blockIdx.x * 64 + threadIdx.x, 1.0f);
}
NF_SIM_CLUSTER_ENTRY(cluster_misuse, 4)

// The order in which a cluster's 2 blocks run: thread 0 of each block takes
// the next number from log[0] at each of 3 steps between its block's
// barriers, and writes it to log[1 + 3 * rank + step].
extern "C" __global__ void __cluster_dims__(2, 1, 1)
    cluster_steps(unsigned *log) {
  for (int step = 0; step < 3; ++step) {
    if (threadIdx.x == 0) {
      unsigned n = nf_ldg(log);
      nf_stg(log, n + 1);
      nf_stg(log + 1 + 3 * (blockIdx.x % 2) + step, n);
    }
    __syncthreads();
  }
}
NF_SIM_CLUSTER_ENTRY(cluster_steps, 2)
