// Row sums of a [rows, n] matrix, one row per block. row_sum needs a
// multiple of 32 threads; row_sum_any handles a partial last warp. The
// driver also runs row_sum with the line marked @barrier removed.

extern "C" __global__ void __launch_bounds__(1024)
    row_sum(const float *__restrict__ in, float *__restrict__ out, int64_t n) {
  NF_SHARED(float, partial, 32);
  const float *row = in + (int64_t)blockIdx.x * n;
  float acc = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    acc += nf_ldg(row + i);
  for (int o = 16; o > 0; o >>= 1)
    acc += __shfl_xor_sync(0xffffffffu, acc, o, 32);
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned numWarps = (blockDim.x + 31) / 32;
  if (lane == 0)
    partial[warp] = acc;
  __syncthreads(); // @barrier
  if (warp == 0) {
    float v = lane < numWarps ? partial[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1)
      v += __shfl_xor_sync(0xffffffffu, v, o, 32);
    if (lane == 0)
      nf_stg(out + blockIdx.x, v);
  }
}
NF_SIM_ENTRY(row_sum)

extern "C" __global__ void row_sum_any(const float *__restrict__ in,
                                       float *__restrict__ out, int64_t n) {
  NF_SHARED(float, partial, 32);
  const float *row = in + (int64_t)blockIdx.x * n;
  float acc = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    acc += nf_ldg(row + i);
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned lanes = min(32u, blockDim.x - warp * 32);
  unsigned mask = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
  for (unsigned o = 16; o > 0; o >>= 1) {
    float other = __shfl_down_sync(mask, acc, o);
    if (lane + o < lanes)
      acc += other;
  }
  if (lane == 0)
    partial[warp] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w)
      s += partial[w];
    nf_stg(out + blockIdx.x, s);
  }
}
NF_SIM_ENTRY(row_sum_any)
