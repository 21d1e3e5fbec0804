// Dynamic shared memory and multi-dimensional blocks.

// Reverses each block's slice through dynamic shared memory.
extern "C" __global__ void reverse(const float *__restrict__ in,
                                   float *__restrict__ out) {
  NF_DYNAMIC_SMEM(smem);
  float *s = (float *)smem;
  int64_t base = (int64_t)blockIdx.x * blockDim.x;
  s[threadIdx.x] = nf_ldg(in + base + threadIdx.x);
  __syncthreads(); // @barrier
  nf_stg(out + base + threadIdx.x, s[blockDim.x - 1 - threadIdx.x]);
}
NF_SIM_ENTRY(reverse)

// Only block 0 writes shared memory; other blocks must see poison.
extern "C" __global__ void fresh(float *out) {
  NF_SHARED(float, s, 128);
  NF_DYNAMIC_SMEM(smem);
  float *d = (float *)smem;
  if (blockIdx.x == 0) {
    s[threadIdx.x] = 1.0f;
    d[threadIdx.x] = 2.0f;
  }
  __syncthreads();
  nf_stg(out + blockIdx.x * blockDim.x + threadIdx.x,
         s[threadIdx.x] + d[threadIdx.x]);
}
NF_SIM_ENTRY(fresh)

// Writes each thread's coordinates; checks the dimensions it sees.
extern "C" __global__ void coords(int *out) {
  int64_t block =
      blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  int64_t thread =
      threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  int64_t i = block * blockDim.x * blockDim.y * blockDim.z + thread;
  bool dims = blockDim.x == 8 && blockDim.y == 4 && blockDim.z == 2 &&
              gridDim.x == 2 && gridDim.y == 3 && gridDim.z == 1;
  nf_stg(out + i,
         dims ? (int)(threadIdx.x + 10 * threadIdx.y + 100 * threadIdx.z +
                      1000 * blockIdx.x + 10000 * blockIdx.y)
              : -1);
}
NF_SIM_ENTRY(coords)

// Records the order in which threads first run: no thread yields before its
// store, and the counter starts as poison (-1).
extern "C" __global__ void run_order(int *out) {
  NF_SHARED(int, counter, 1);
  int position = counter[0] + 1;
  counter[0] = position;
  nf_stg(out + threadIdx.x, position);
}
NF_SIM_ENTRY(run_order)

// __shared__ in an inline helper and in a template: their statics are
// COMDAT, which GCC only accepts in section nf_smem with -fno-weak.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float part[32];
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0)
    part[threadIdx.x / 32] = v;
  __syncthreads();
  float s = 0.0f;
  for (unsigned w = 0; w < blockDim.x / 32; ++w)
    s += part[w];
  __syncthreads();
  return s;
}
template <class T> __device__ T block_max(T v) {
  __shared__ T part[32];
  for (int o = 16; o > 0; o >>= 1) {
    T u = __shfl_xor_sync(0xffffffffu, v, o);
    v = (float)u > (float)v ? u : v;
  }
  if (threadIdx.x % 32 == 0)
    part[threadIdx.x / 32] = v;
  __syncthreads();
  T m = part[0];
  for (unsigned w = 1; w < blockDim.x / 32; ++w)
    m = (float)part[w] > (float)m ? part[w] : m;
  __syncthreads();
  return m;
}
extern "C" __global__ void helpers(const float *__restrict__ in,
                                   float *__restrict__ out) {
  float v = nf_ldg(in + threadIdx.x);
  float s = block_sum(v), m = block_max<float>(v);
  float h = __half2float(block_max<__half>(__float2half_rn(v)));
  if (threadIdx.x == 0) {
    nf_stg(out, s);
    nf_stg(out + 1, m);
    nf_stg(out + 2, h);
  }
}
NF_SIM_ENTRY(helpers)
