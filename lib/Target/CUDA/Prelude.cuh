#if !defined(NF_CUDA_SIM)
#include <cuda_fp16.h>
#include <cuda_bf16.h>
/// A vector of N elements of T, loaded and stored as one access.
template <class T, int N> struct alignas(sizeof(T) * N) nf_vec { T v[N]; };
/// Global memory accesses (the simulator checks and counts them).
template <class T> __device__ __forceinline__ T nf_ldg(const T *p) { return *p; }
template <class T> __device__ __forceinline__ void nf_stg(T *p, T v) { *p = v; }
/// One 16- or 8-byte global store of words. Stored as a struct (or even
/// as a uint4 through a cast pointer), a vector is sometimes split by
/// NVVM into 2- or 4-byte stores; st.global.v4/v2 is one access.
__device__ __forceinline__ void nf_st_words(void *p, uint4 w) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w.x),
               "r"(w.y), "r"(w.z), "r"(w.w));
}
__device__ __forceinline__ void nf_st_words(void *p, uint2 w) {
  asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(p), "r"(w.x), "r"(w.y));
}
/// A streaming store (st.global.cs: evict-first in L1 and L2) of data no
/// later kernel finds in cache, of 2, 4, 8 or 16 bytes (a scalar or an
/// nf_vec).
template <class T> __device__ __forceinline__ void nf_stcs(T *p, T v) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8 ||
                sizeof(T) == 16, "nf_stcs: 2, 4, 8 or 16 bytes");
  if constexpr (sizeof(T) == 16) {
    uint4 w = *reinterpret_cast<const uint4 *>(&v);
    asm volatile("st.global.cs.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p),
                 "r"(w.x), "r"(w.y), "r"(w.z), "r"(w.w));
  } else if constexpr (sizeof(T) == 8) {
    uint2 w = *reinterpret_cast<const uint2 *>(&v);
    asm volatile("st.global.cs.v2.b32 [%0], {%1, %2};" ::"l"(p), "r"(w.x),
                 "r"(w.y));
  } else if constexpr (sizeof(T) == 4) {
    asm volatile("st.global.cs.b32 [%0], %1;" ::"l"(p),
                 "r"(*reinterpret_cast<const unsigned *>(&v)));
  } else {
    asm volatile("st.global.cs.b16 [%0], %1;" ::"l"(p),
                 "h"(*reinterpret_cast<const unsigned short *>(&v)));
  }
}
/// A vector store: 16-bit lanes packed in pairs into words, other lanes'
/// words as they are.
template <class T, int N>
__device__ __forceinline__ void nf_stg(nf_vec<T, N> *p, nf_vec<T, N> v) {
  const unsigned short *h = reinterpret_cast<const unsigned short *>(&v);
  const unsigned *w = reinterpret_cast<const unsigned *>(&v);
  if constexpr (sizeof(T) == 2 && N == 8)
    nf_st_words(p, make_uint4(h[0] | (unsigned(h[1]) << 16),
                              h[2] | (unsigned(h[3]) << 16),
                              h[4] | (unsigned(h[5]) << 16),
                              h[6] | (unsigned(h[7]) << 16)));
  else if constexpr (sizeof(T) == 2 && N == 4)
    nf_st_words(p, make_uint2(h[0] | (unsigned(h[1]) << 16),
                              h[2] | (unsigned(h[3]) << 16)));
  else if constexpr (sizeof(T) != 2 && sizeof(T) * N == 16)
    nf_st_words(p, make_uint4(w[0], w[1], w[2], w[3]));
  else if constexpr (sizeof(T) != 2 && sizeof(T) * N == 8)
    nf_st_words(p, make_uint2(w[0], w[1]));
  else
    *p = v;
}
/// Tensor cores (sm_80 and newer): D = A * B + C for one m16n8k16 tile
/// (mma.sync .row.col, f32 accumulators) of the lane's fragments.
__device__ __forceinline__ nf_vec<float, 4> nf_mma_m16n8k16(
    nf_vec<__half, 8> a, nf_vec<__half, 4> b, nf_vec<float, 4> c) {
  const unsigned *A = reinterpret_cast<const unsigned *>(&a);
  const unsigned *B = reinterpret_cast<const unsigned *>(&b);
  nf_vec<float, 4> d;
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
      : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]),
        "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
  return d;
}
__device__ __forceinline__ nf_vec<float, 4> nf_mma_m16n8k16(
    nf_vec<__nv_bfloat16, 8> a, nf_vec<__nv_bfloat16, 4> b,
    nf_vec<float, 4> c) {
  const unsigned *A = reinterpret_cast<const unsigned *>(&a);
  const unsigned *B = reinterpret_cast<const unsigned *>(&b);
  nf_vec<float, 4> d;
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
      : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]),
        "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
  return d;
}
/// f32 to tf32 (to nearest, ties away from zero), in a 32-bit register.
__device__ __forceinline__ unsigned nf_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
/// Tensor cores on f32 data (sm_80 and newer): D = A * B + C for one
/// m16n8k8 tile (mma.sync .row.col .tf32, f32 accumulators), each A and B
/// element rounded to tf32 first.
__device__ __forceinline__ nf_vec<float, 4> nf_mma_m16n8k8_tf32(
    nf_vec<float, 4> a, nf_vec<float, 2> b, nf_vec<float, 4> c) {
  nf_vec<float, 4> d;
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
      : "r"(nf_tf32(a.v[0])), "r"(nf_tf32(a.v[1])), "r"(nf_tf32(a.v[2])),
        "r"(nf_tf32(a.v[3])), "r"(nf_tf32(b.v[0])), "r"(nf_tf32(b.v[1])),
        "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
  return d;
}
/// ldmatrix.sync.aligned.m8n8.xN(.trans).shared.b16: N 8x8 matrices of
/// 16-bit elements (8x4 of 32-bit ones, without .trans) whose rows lanes 0
/// to 8N - 1 address, at `row` + Disp elements (Disp is the instruction's
/// immediate offset, so that fragments a constant apart share one address
/// register).
template <int N, bool Trans, int Disp = 0, class T>
__device__ __forceinline__ nf_vec<T, N * 4 / int(sizeof(T))>
nf_ldmatrix(const T *row) {
  static_assert(sizeof(T) == 2 || (sizeof(T) == 4 && !Trans),
                "ldmatrix .trans transposes 16-bit elements");
  unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(row));
  constexpr int kBytes = Disp * int(sizeof(T));
  nf_vec<T, N * 4 / int(sizeof(T))> r;
  unsigned *R = reinterpret_cast<unsigned *>(&r);
  if constexpr (N == 4 && Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
                 "{%0, %1, %2, %3}, [%4+%5];"
                 : "=r"(R[0]), "=r"(R[1]), "=r"(R[2]), "=r"(R[3])
                 : "r"(at), "n"(kBytes));
  else if constexpr (N == 4)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
                 "{%0, %1, %2, %3}, [%4+%5];"
                 : "=r"(R[0]), "=r"(R[1]), "=r"(R[2]), "=r"(R[3])
                 : "r"(at), "n"(kBytes));
  else if constexpr (N == 2 && Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 "
                 "{%0, %1}, [%2+%3];"
                 : "=r"(R[0]), "=r"(R[1]) : "r"(at), "n"(kBytes));
  else if constexpr (N == 2)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2+%3];"
                 : "=r"(R[0]), "=r"(R[1]) : "r"(at), "n"(kBytes));
  else if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1+%2];"
                 : "=r"(R[0]) : "r"(at), "n"(kBytes));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1+%2];"
                 : "=r"(R[0]) : "r"(at), "n"(kBytes));
  return r;
}
/// cp.async of Bytes (4, 8 or 16) bytes from global to shared memory at
/// `smem` + Disp bytes (an immediate offset): the first `srcBytes` from
/// `global`, the rest zeros.
template <int Bytes, int Disp = 0>
__device__ __forceinline__ void nf_cp_async(void *smem, const void *global,
                                            int srcBytes) {
  unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0+%3], [%1], 16, %2;"
                 ::"r"(at), "l"(global), "r"(srcBytes), "n"(Disp) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0+%4], [%1], %2, %3;"
                 ::"r"(at), "l"(global), "n"(Bytes), "r"(srcBytes), "n"(Disp)
                 : "memory");
}
__device__ __forceinline__ void nf_cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
/// Waits until at most N of the thread's committed groups are in flight.
template <int N> __device__ __forceinline__ void nf_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
/// The cluster's barrier (barrier.cluster.arrive.release + wait.acquire,
/// .aligned): every thread of every block of the cluster; shared-memory
/// stores before it, to any block of the cluster, are seen after it.
__device__ __forceinline__ void nf_cluster_sync() {
#if __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
               "barrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
  __trap();
#endif
}
/// The cluster's barrier ordering no memory (arrive.relaxed): every block
/// of the cluster has started after it, so stores into its shared memory
/// are allowed.
__device__ __forceinline__ void nf_cluster_sync_relaxed() {
#if __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\t"
               "barrier.cluster.wait.aligned;" ::: "memory");
#else
  __trap();
#endif
}
/// Stores `v` at `p`, an address of this block's shared memory, mapped to
/// block `rank` of the cluster (mapa; st.shared::cluster): that block's copy.
template <class T>
__device__ __forceinline__ void nf_cluster_st(T *p, unsigned rank, T v) {
#if __CUDA_ARCH__ >= 900
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "nf_cluster_st: 4 or 8 bytes");
  unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(p)), remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote) : "r"(at), "r"(rank));
  if constexpr (sizeof(T) == 4)
    asm volatile("st.shared::cluster.b32 [%0], %1;"
                 ::"r"(remote), "r"(*reinterpret_cast<const unsigned *>(&v))
                 : "memory");
  else
    asm volatile("st.shared::cluster.b64 [%0], %1;"
                 ::"r"(remote),
                 "l"(*reinterpret_cast<const unsigned long long *>(&v))
                 : "memory");
#else
  __trap();
#endif
}
/// The grid's barrier: the block's threads meet, its first thread adds 1
/// to `*counter` (after a fence: the block's global stores go first) and
/// waits (an acquire load) until the count reaches the next multiple of the
/// grid's blocks, then the block's threads meet again. `counter` holds 0
/// when the launch begins, and every block is resident (a cooperative
/// launch).
__device__ __forceinline__ void nf_grid_sync(unsigned *counter) {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
    __threadfence();
    unsigned arrived = atomicAdd(counter, 1u);
    unsigned target = (arrived / blocks + 1) * blocks, seen;
    do {
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
                   : "=r"(seen) : "l"(counter) : "memory");
    } while (int(seen - target) < 0);
  }
  __syncthreads();
}
#define NF_SHARED(type, name, count) __shared__ __align__(16) type name[count]
#define NF_DYNAMIC_SMEM(name) extern __shared__ __align__(16) unsigned char name[]
#define NF_SIM_ENTRY(name)
#define NF_SIM_CLUSTER_ENTRY(name, blocks)
#define NF_SIM_GRID_ENTRY(name)
#endif

/// arith.maximumf / minimumf: NaN if either is NaN, -0 below +0.
__device__ __forceinline__ float nf_maximumf(float a, float b) {
  return (a != a || b != b) ? a + b : (a > b || (a == b && b == 0.0f && __float_as_int(b) < 0) ? a : b);
}
__device__ __forceinline__ float nf_minimumf(float a, float b) {
  return (a != a || b != b) ? a + b : (a < b || (a == b && a == 0.0f && __float_as_int(a) < 0) ? a : b);
}
__device__ __forceinline__ double nf_maximumf(double a, double b) {
  return (a != a || b != b) ? a + b : (a > b || (a == b && b == 0.0 && __double_as_longlong(b) < 0) ? a : b);
}
__device__ __forceinline__ double nf_minimumf(double a, double b) {
  return (a != a || b != b) ? a + b : (a < b || (a == b && a == 0.0 && __double_as_longlong(a) < 0) ? a : b);
}
