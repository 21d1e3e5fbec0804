// Copies, correct and broken.

extern "C" __global__ void copy(const float *__restrict__ in,
                                float *__restrict__ out, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    nf_stg(out + i, nf_ldg(in + i));
}
NF_SIM_ENTRY(copy)

// 128-bit accesses; n is a multiple of 4.
extern "C" __global__ void copy_vec(const float *__restrict__ in,
                                    float *__restrict__ out, int64_t n) {
  int64_t i = 4 * ((int64_t)blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n)
    nf_stg((nf_vec<float, 4> *)(out + i),
           nf_ldg((const nf_vec<float, 4> *)(in + i)));
}
NF_SIM_ENTRY(copy_vec)

// Off by one: reads and writes element n.
extern "C" __global__ void copy_oob(const float *__restrict__ in,
                                    float *__restrict__ out, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n)
    nf_stg(out + i, nf_ldg(in + i));
}
NF_SIM_ENTRY(copy_oob)

// A 16-byte load at a 4-byte offset.
extern "C" __global__ void copy_misaligned(const float *__restrict__ in,
                                           float *__restrict__ out, int64_t n) {
  int64_t i = 4 * ((int64_t)blockIdx.x * blockDim.x + threadIdx.x);
  if (i + 5 <= n)
    nf_stg((nf_vec<float, 4> *)(out + i),
           nf_ldg((const nf_vec<float, 4> *)(in + i + 1)));
}
NF_SIM_ENTRY(copy_misaligned)
