// Synchronization errors; each launch must fail instead of hanging.

// Lanes 0-15 wait in a full-warp shuffle, lanes 16-31 at the barrier.
extern "C" __global__ void shuffle_vs_barrier(float *out) {
  float v = (float)threadIdx.x;
  if (threadIdx.x % 32 < 16)
    v = __shfl_xor_sync(0xffffffffu, v, 1);
  __syncthreads();
  nf_stg(out + threadIdx.x, v);
}
NF_SIM_ENTRY(shuffle_vs_barrier)

// Lanes 16-31 exit before a full-warp shuffle.
extern "C" __global__ void shuffle_exited(float *out) {
  if (threadIdx.x % 32 >= 16)
    return;
  float v = __shfl_xor_sync(0xffffffffu, (float)threadIdx.x, 1);
  nf_stg(out + threadIdx.x, v);
}
NF_SIM_ENTRY(shuffle_exited)

// Two halves of the block at two different barriers.
extern "C" __global__ void divergent_barrier(float *out) {
  if (threadIdx.x < 64) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  nf_stg(out + threadIdx.x, 1.0f);
}
NF_SIM_ENTRY(divergent_barrier)

// Legal: the barrier counts only threads that have not exited.
extern "C" __global__ void barrier_after_exit(float *out) {
  if (threadIdx.x >= 64)
    return;
  __syncthreads();
  nf_stg(out + threadIdx.x, 1.0f);
}
NF_SIM_ENTRY(barrier_after_exit)
