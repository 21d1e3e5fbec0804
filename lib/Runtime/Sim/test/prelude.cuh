// The part of the printed prelude that matters to the simulator: under real
// CUDA it defines what nf_cuda_sim.h defines under NF_CUDA_SIM. The test
// driver prepends this file to every test kernel.
#if !defined(NF_CUDA_SIM)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
template <class T, int N> struct alignas(sizeof(T) * N) nf_vec {
  T v[N];
};
template <class T> __device__ __forceinline__ T nf_ldg(const T *p) {
  return *p;
}
template <class T> __device__ __forceinline__ void nf_stg(T *p, T v) { *p = v; }
#define NF_SHARED(T, name, n) __shared__ __align__(16) T name[n]
#define NF_DYNAMIC_SMEM(name)                                                  \
  extern __shared__ __align__(16) unsigned char name[]
#define NF_SIM_ENTRY(name)
#endif
