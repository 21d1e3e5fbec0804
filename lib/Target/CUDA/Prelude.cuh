#if !defined(NF_CUDA_SIM)
#include <cuda_fp16.h>
#include <cuda_bf16.h>
/// A vector of N elements of T, loaded and stored as one access where it
/// has at most 16 bytes (wgmma's accumulators are wider: registers only).
template <class T, int N>
struct alignas(sizeof(T) * N < 16 ? sizeof(T) * N : 16) nf_vec { T v[N]; };
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
template <class A, class B> struct nf_same { static constexpr bool value = false; };
template <class A> struct nf_same<A, A> { static constexpr bool value = true; };
/// One wgmma.mma_async of N columns on TYPE ("f16" or "bf16") operands.
#define NF_WGMMA_ASM(TYPE)                                                     \
  if constexpr (N == 64)                                                       \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                  \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE   \
                 " {"                                                          \
                 "%0, %1, %2, %3, %4, %5, %6, %7, "                            \
                 "%8, %9, %10, %11, %12, %13, %14, %15, "                      \
                 "%16, %17, %18, %19, %20, %21, %22, %23, "                    \
                 "%24, %25, %26, %27, %28, %29, %30, %31"                      \
                 "}, %32, %33, p, 1, 1, %35, %36;\n}"                          \
                 : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]),     \
                 "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]),       \
                 "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]),     \
                 "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]),   \
                 "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]),   \
                 "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]),   \
                 "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]),   \
                 "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31])    \
                 : "l"(da), "l"(db), "r"(1), "n"(int(MnA)),                    \
                   "n"(int(MnB))                                               \
                 : "memory");                                                  \
  else if constexpr (N == 128)                                                 \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                  \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE  \
                 " {"                                                          \
                 "%0, %1, %2, %3, %4, %5, %6, %7, "                            \
                 "%8, %9, %10, %11, %12, %13, %14, %15, "                      \
                 "%16, %17, %18, %19, %20, %21, %22, %23, "                    \
                 "%24, %25, %26, %27, %28, %29, %30, %31, "                    \
                 "%32, %33, %34, %35, %36, %37, %38, %39, "                    \
                 "%40, %41, %42, %43, %44, %45, %46, %47, "                    \
                 "%48, %49, %50, %51, %52, %53, %54, %55, "                    \
                 "%56, %57, %58, %59, %60, %61, %62, %63"                      \
                 "}, %64, %65, p, 1, 1, %67, %68;\n}"                          \
                 : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]),     \
                 "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]),       \
                 "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]),     \
                 "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]),   \
                 "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]),   \
                 "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]),   \
                 "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]),   \
                 "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]),   \
                 "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]),   \
                 "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]),   \
                 "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]),   \
                 "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]),   \
                 "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]),   \
                 "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]),   \
                 "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]),   \
                 "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63])    \
                 : "l"(da), "l"(db), "r"(1), "n"(int(MnA)),                    \
                   "n"(int(MnB))                                               \
                 : "memory");                                                  \
  else if constexpr (N == 256)                                                 \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                 \
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE  \
                 " {"                                                          \
                 "%0, %1, %2, %3, %4, %5, %6, %7, "                            \
                 "%8, %9, %10, %11, %12, %13, %14, %15, "                      \
                 "%16, %17, %18, %19, %20, %21, %22, %23, "                    \
                 "%24, %25, %26, %27, %28, %29, %30, %31, "                    \
                 "%32, %33, %34, %35, %36, %37, %38, %39, "                    \
                 "%40, %41, %42, %43, %44, %45, %46, %47, "                    \
                 "%48, %49, %50, %51, %52, %53, %54, %55, "                    \
                 "%56, %57, %58, %59, %60, %61, %62, %63, "                    \
                 "%64, %65, %66, %67, %68, %69, %70, %71, "                    \
                 "%72, %73, %74, %75, %76, %77, %78, %79, "                    \
                 "%80, %81, %82, %83, %84, %85, %86, %87, "                    \
                 "%88, %89, %90, %91, %92, %93, %94, %95, "                    \
                 "%96, %97, %98, %99, %100, %101, %102, %103, "                \
                 "%104, %105, %106, %107, %108, %109, %110, %111, "            \
                 "%112, %113, %114, %115, %116, %117, %118, %119, "            \
                 "%120, %121, %122, %123, %124, %125, %126, %127"              \
                 "}, %128, %129, p, 1, 1, %131, %132;\n}"                      \
                 : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]),     \
                 "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]),       \
                 "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]),     \
                 "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]),   \
                 "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]),   \
                 "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]),   \
                 "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]),   \
                 "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]),   \
                 "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]),   \
                 "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]),   \
                 "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]),   \
                 "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]),   \
                 "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]),   \
                 "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]),   \
                 "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]),   \
                 "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63]),   \
                 "+f"(d.v[64]), "+f"(d.v[65]), "+f"(d.v[66]), "+f"(d.v[67]),   \
                 "+f"(d.v[68]), "+f"(d.v[69]), "+f"(d.v[70]), "+f"(d.v[71]),   \
                 "+f"(d.v[72]), "+f"(d.v[73]), "+f"(d.v[74]), "+f"(d.v[75]),   \
                 "+f"(d.v[76]), "+f"(d.v[77]), "+f"(d.v[78]), "+f"(d.v[79]),   \
                 "+f"(d.v[80]), "+f"(d.v[81]), "+f"(d.v[82]), "+f"(d.v[83]),   \
                 "+f"(d.v[84]), "+f"(d.v[85]), "+f"(d.v[86]), "+f"(d.v[87]),   \
                 "+f"(d.v[88]), "+f"(d.v[89]), "+f"(d.v[90]), "+f"(d.v[91]),   \
                 "+f"(d.v[92]), "+f"(d.v[93]), "+f"(d.v[94]), "+f"(d.v[95]),   \
                 "+f"(d.v[96]), "+f"(d.v[97]), "+f"(d.v[98]), "+f"(d.v[99]),   \
                 "+f"(d.v[100]), "+f"(d.v[101]), "+f"(d.v[102]),               \
                 "+f"(d.v[103]), "+f"(d.v[104]), "+f"(d.v[105]),               \
                 "+f"(d.v[106]), "+f"(d.v[107]), "+f"(d.v[108]),               \
                 "+f"(d.v[109]), "+f"(d.v[110]), "+f"(d.v[111]),               \
                 "+f"(d.v[112]), "+f"(d.v[113]), "+f"(d.v[114]),               \
                 "+f"(d.v[115]), "+f"(d.v[116]), "+f"(d.v[117]),               \
                 "+f"(d.v[118]), "+f"(d.v[119]), "+f"(d.v[120]),               \
                 "+f"(d.v[121]), "+f"(d.v[122]), "+f"(d.v[123]),               \
                 "+f"(d.v[124]), "+f"(d.v[125]), "+f"(d.v[126]),               \
                 "+f"(d.v[127])                                                \
                 : "l"(da), "l"(db), "r"(1), "n"(int(MnA)),                    \
                   "n"(int(MnB))                                               \
                 : "memory");
/// wgmma's shared-memory matrix descriptor of the operand at `p`: its
/// start address, the leading and stride byte offsets and the swizzle
/// (128, 64 or 32 bytes) of its canonical layout (PTX ISA, "Matrix
/// Descriptor Format"; base offset 0).
template <int Swizzle, int Leading, int Stride>
__device__ __forceinline__ unsigned long long nf_wgmma_desc(const void *p) {
  static_assert(Swizzle == 128 || Swizzle == 64 || Swizzle == 32,
                "wgmma swizzles of 128, 64 or 32 bytes");
  constexpr unsigned long long mode = Swizzle == 128 ? 1 : Swizzle == 64 ? 2 : 3;
  unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(p));
  return (unsigned long long)((at & 0x3ffff) >> 4) |
         ((unsigned long long)((Leading >> 4) & 0x3fff) << 16) |
         ((unsigned long long)((Stride >> 4) & 0x3fff) << 32) | (mode << 62);
}
/// D += A * B for one m64nNk16 tile of the warpgroup (wgmma.mma_async,
/// sm_90a): the thread's N / 2 f32 accumulators (mma.sync's m16n8 C
/// fragments side by side, warp w of the warpgroup rows 16 w to 16 w + 15),
/// A (64 x 16) and B (16 x N) of f16 or bf16 in shared memory, each
/// K-major or MN-major (Mn*: the instruction's imm-trans) with its swizzle
/// and byte offsets. Asynchronous: the accumulators are the caller's only
/// after nf_wgmma_commit and nf_wgmma_wait (then nf_wgmma_fence_operand).
template <int N, bool MnA, bool MnB, int SwA, int LboA, int SboA, int SwB,
          int LboB, int SboB, class T>
__device__ __forceinline__ nf_vec<float, N / 2>
nf_wgmma(const T *a, const T *b, nf_vec<float, N / 2> d) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  unsigned long long da = nf_wgmma_desc<SwA, LboA, SboA>(a);
  unsigned long long db = nf_wgmma_desc<SwB, LboB, SboB>(b);
  static_assert(N == 64 || N == 128 || N == 256, "wgmma m64nNk16: N of 64, 128 or 256 here");
  if constexpr (nf_same<T, __half>::value) {
    NF_WGMMA_ASM("f16")
  } else {
    NF_WGMMA_ASM("bf16")
  }
#else
  static_assert(sizeof(T) == 0, "wgmma needs sm_90a (compile for sm_90a)");
#endif
  return d;
}
/// wgmma.fence: before a warpgroup's first wgmma, and after its
/// accumulators were last written by other instructions.
__device__ __forceinline__ void nf_wgmma_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#else
  __trap();
#endif
}
__device__ __forceinline__ void nf_wgmma_commit() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#else
  __trap();
#endif
}
/// Waits until at most N of the warpgroup's committed wgmma groups are in
/// flight.
template <int N> __device__ __forceinline__ void nf_wgmma_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#else
  __trap();
#endif
}
/// The accumulators, not read or moved by the compiler across the wait
/// before this.
template <int N>
__device__ __forceinline__ nf_vec<float, N>
nf_wgmma_fence_operand(nf_vec<float, N> d) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile("" : "+f"(d.v[i])::"memory");
  return d;
}
/// fence.proxy.async.shared::cta: the thread's shared-memory writes (its
/// landed cp.async copies) are seen by wgmma's reads (the async proxy).
__device__ __forceinline__ void nf_fence_proxy_async() {
#if __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#else
  __trap();
#endif
}
/// setmaxnreg.inc (Increase) or .dec (sm_90a): the calling warpgroup's
/// registers a thread become N (a multiple of 8 from 24 to 256); an
/// increase waits until the block's other warpgroups have given back
/// enough. Every thread of the warpgroup executes it, as the first act of
/// one branch of the kernel's role `if`, in a kernel under
/// __launch_bounds__(threads, 1).
template <bool Increase, int N> __device__ __forceinline__ void nf_setmaxnreg() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (Increase)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
  else
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
#else
  __trap();
#endif
}
/// A TMA tensor map (CUtensorMap): 128 opaque bytes the runtime encodes
/// with cuTensorMapEncodeTiled; a kernel takes it as a __grid_constant__
/// parameter and hands TMA loads its address.
struct __align__(64) nf_tensor_map {
  unsigned long long opaque[16];
};
/// mbarrier.init.shared::cta: an mbarrier at `bar` whose phases complete
/// after `count` arrivals and the transaction bytes expected of them.
__device__ __forceinline__ void nf_mbarrier_init(long long *bar,
                                                 unsigned count) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;"
               ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))),
                 "r"(count) : "memory");
#else
  __trap();
#endif
}
/// fence.mbarrier_init: the thread's mbarrier.inits are seen by the async
/// proxy (TMA's completions) once a barrier follows.
__device__ __forceinline__ void nf_mbarrier_init_fence() {
#if __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#else
  __trap();
#endif
}
/// mbarrier.arrive.expect_tx: `bytes` more for the current phase, then
/// one arrival.
__device__ __forceinline__ void nf_mbarrier_arrive_expect_tx(long long *bar,
                                                             unsigned bytes) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))),
                 "r"(bytes) : "memory");
#else
  __trap();
#endif
}
/// mbarrier.arrive: one arrival on the current phase.
__device__ __forceinline__ void nf_mbarrier_arrive(long long *bar) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];"
               ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar)))
               : "memory");
#else
  __trap();
#endif
}
/// Returns once the phase of parity `parity` of the mbarrier has completed
/// (mbarrier.try_wait.parity until it succeeds).
__device__ __forceinline__ void nf_mbarrier_wait(long long *bar,
                                                 unsigned parity) {
#if __CUDA_ARCH__ >= 900
  unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(bar)), done;
  do {
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done) : "r"(at), "r"(parity) : "memory");
  } while (!done);
#else
  __trap();
#endif
}
/// A TMA load (cp.async.bulk.tensor, tile mode): the box of `map`'s tensor
/// at coordinates (c0, c1[, c2]), the innermost first, into shared memory
/// at `smem` (swizzled as the map says), its bytes completing on `bar`.
template <int Rank>
__device__ __forceinline__ void nf_tma_load(void *smem,
                                            const nf_tensor_map &map,
                                            long long *bar, int c0, int c1,
                                            int c2 = 0) {
#if __CUDA_ARCH__ >= 900
  static_assert(Rank == 2 || Rank == 3, "TMA loads of rank 2 or 3 here");
  unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  unsigned long long m = reinterpret_cast<unsigned long long>(&map);
  if constexpr (Rank == 2)
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                 "complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
                 ::"r"(dst), "l"(m), "r"(b), "r"(c0), "r"(c1) : "memory");
  else
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::"
                 "complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
                 ::"r"(dst), "l"(m), "r"(b), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
#else
  __trap();
#endif
}
/// The same with .multicast::cluster: the box lands at `smem` in every
/// block of the cluster whose rank is a bit of `mask`, completing on each
/// one's mbarrier at `bar` (the same offsets in each block).
template <int Rank>
__device__ __forceinline__ void
nf_tma_load_multicast(void *smem, const nf_tensor_map &map, long long *bar,
                      unsigned short mask, int c0, int c1, int c2 = 0) {
#if __CUDA_ARCH__ >= 900
  static_assert(Rank == 2 || Rank == 3, "TMA loads of rank 2 or 3 here");
  unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  unsigned long long m = reinterpret_cast<unsigned long long>(&map);
  if constexpr (Rank == 2)
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                 "complete_tx::bytes.multicast::cluster [%0], [%1, {%4, %5}], "
                 "[%2], %3;"
                 ::"r"(dst), "l"(m), "r"(b), "h"(mask), "r"(c0), "r"(c1)
                 : "memory");
  else
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::"
                 "complete_tx::bytes.multicast::cluster [%0], [%1, {%4, %5, "
                 "%6}], [%2], %3;"
                 ::"r"(dst), "l"(m), "r"(b), "h"(mask), "r"(c0), "r"(c1),
                   "r"(c2)
                 : "memory");
#else
  __trap();
#endif
}
/// One arrival on the mbarrier at `bar` (an address of this block's shared
/// memory) in block `rank` of the cluster: mapa, then
/// mbarrier.arrive.release.cluster.shared::cluster.
__device__ __forceinline__ void nf_mbarrier_arrive_cluster(long long *bar,
                                                           unsigned rank) {
#if __CUDA_ARCH__ >= 900
  unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(bar)), remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote) : "r"(at), "r"(rank));
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];"
               ::"r"(remote) : "memory");
#else
  __trap();
#endif
}
/// bar.sync id, threads: `threads` threads of the block (whole warps)
/// meet at barrier `id` (1 to 15), their shared-memory stores before it
/// seen after it; the block's other threads go on.
__device__ __forceinline__ void nf_named_barrier(unsigned id,
                                                 unsigned threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
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
#define NF_SHARED_ALIGNED(type, name, count, a)                                \
  __shared__ __align__(a) type name[count]
/// (The dynamic buffer starts where the launch puts it: a base off the
/// declared alignment traps rather than give wgmma a misplaced swizzle.)
#define NF_DYNAMIC_SMEM_ALIGNED(name, a)                                       \
  extern __shared__ __align__(a) unsigned char name[];                         \
  if (static_cast<unsigned>(__cvta_generic_to_shared(name)) % (a))             \
  __trap()
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
