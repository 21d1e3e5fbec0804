// A grid that synchronizes: 6 blocks of 64 threads each write their
// block's sum, meet at the grid's barrier (its counter zeroed), and every
// thread writes the grid's total, adding the blocks' sums in block order.

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

extern "C" __global__ void grid_sum(const float *in, float *sums,
                                    unsigned *counter, float *out) {
  (void)counter; // used by the barrier alone, which a test removes
  float s = blockSum(nf_ldg(in + blockIdx.x * 64 + threadIdx.x));
  if (threadIdx.x == 0)
    nf_stg(sums + blockIdx.x, s);
  nf_grid_sync(counter); // @grid
  float total = 0.0f;
  for (unsigned b = 0; b < gridDim.x; ++b)
    total += nf_ldg(sums + b);
  nf_stg(out + blockIdx.x * 64 + threadIdx.x, total);
}
NF_SIM_GRID_ENTRY(grid_sum)

// Misuse, each an error: `what` 0: half of block 2 exits while the others
// wait at the grid barrier; 1: blocks wait at two different grid barriers.
extern "C" __global__ void grid_misuse(unsigned *counter, float *out,
                                       int what) {
  if (what == 0 && blockIdx.x == 2 && threadIdx.x >= 32)
    return;
  if (what == 1 && blockIdx.x == 3) {
    nf_grid_sync(counter);
  } else {
    nf_grid_sync(counter);
  }
  nf_stg(out + blockIdx.x * 64 + threadIdx.x, 1.0f);
}
NF_SIM_GRID_ENTRY(grid_misuse)

// A grid barrier in a kernel registered as a plain one: a GPU would not
// launch it cooperatively.
extern "C" __global__ void grid_unregistered(unsigned *counter) {
  nf_grid_sync(counter);
}
NF_SIM_ENTRY(grid_unregistered)
