// Tensor-core operations: ldmatrix, mma.sync m16n8k16 and m16n8k8 .tf32,
// and cp.async. The fragments here are placed by the PTX ISA's tables as
// written in this file (independently of the simulator's); sim_test.cpp
// checks the results.

// ldmatrix of four 8x8 matrices of 16-bit values from shared memory: row r
// of matrix j is row `perm[8j + r]` of a 32x8 array holding 1000 * row +
// column. Each lane writes the registers of .x4, .x2, .x1 and their .trans
// forms: 14 words per lane.
extern "C" __global__ void ldmatrix_all(const int *__restrict__ perm,
                                        unsigned *__restrict__ out) {
  NF_SHARED(__half, tile, 32 * 8);
  int l = threadIdx.x;
  for (int c = 0; c < 8; ++c)
    tile[l * 8 + c] = __ushort_as_half((unsigned short)(1000 * l + c));
  __syncthreads();
  const __half *row = tile + 8 * nf_ldg(perm + l);
  nf_vec<__half, 8> x4 = nf_ldmatrix<4, false>(row);
  nf_vec<__half, 4> x2 = nf_ldmatrix<2, false>(row);
  nf_vec<__half, 2> x1 = nf_ldmatrix<1, false>(row);
  nf_vec<__half, 8> t4 = nf_ldmatrix<4, true>(row);
  nf_vec<__half, 4> t2 = nf_ldmatrix<2, true>(row);
  nf_vec<__half, 2> t1 = nf_ldmatrix<1, true>(row);
  const unsigned *words[6] = {
      (const unsigned *)&x4, (const unsigned *)&x2, (const unsigned *)&x1,
      (const unsigned *)&t4, (const unsigned *)&t2, (const unsigned *)&t1};
  const int counts[6] = {4, 2, 1, 4, 2, 1};
  int k = 0;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < counts[i]; ++j)
      nf_stg(out + 14 * l + k++, words[i][j]);
}
NF_SIM_ENTRY(ldmatrix_all)

// ldmatrix of 32-bit elements (as the tf32 products load their f32
// operands): four 8x4 matrices, row r of matrix j row `perm[8j + r]` of a
// 32x4 array holding 1000 * row + column. Each lane writes the registers
// of .x4, .x2 and .x1: 7 words per lane.
extern "C" __global__ void ldmatrix_b32(const int *__restrict__ perm,
                                        unsigned *__restrict__ out) {
  NF_SHARED(unsigned, tile, 32 * 4);
  int l = threadIdx.x;
  for (int c = 0; c < 4; ++c)
    tile[l * 4 + c] = unsigned(1000 * l + c);
  __syncthreads();
  const float *row = (const float *)(tile + 4 * nf_ldg(perm + l));
  nf_vec<float, 4> x4 = nf_ldmatrix<4, false>(row);
  nf_vec<float, 2> x2 = nf_ldmatrix<2, false>(row);
  nf_vec<float, 1> x1 = nf_ldmatrix<1, false>(row);
  const unsigned *words[3] = {(const unsigned *)&x4, (const unsigned *)&x2,
                              (const unsigned *)&x1};
  const int counts[3] = {4, 2, 1};
  int k = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < counts[i]; ++j)
      nf_stg(out + 7 * l + k++, words[i][j]);
}
NF_SIM_ENTRY(ldmatrix_b32)

// The PTX ISA's fragment tables for mma.m16n8k16 with .f16/.bf16 A and B
// and .f32 C/D, for lane l (group g = l / 4, t = l % 4 in the group).
__device__ int fragRowA(int l, int i) { return l / 4 + (i % 4 >= 2 ? 8 : 0); }
__device__ int fragColA(int l, int i) {
  return 2 * (l % 4) + i % 2 + (i >= 4 ? 8 : 0);
}
__device__ int fragRowB(int l, int i) {
  return 2 * (l % 4) + i % 2 + (i >= 2 ? 8 : 0);
}
__device__ int fragColB(int l, int) { return l / 4; }
__device__ int fragRowC(int l, int i) { return l / 4 + (i >= 2 ? 8 : 0); }
__device__ int fragColC(int l, int i) { return 2 * (l % 4) + i % 2; }

// D = A * B + C for one 16x16 A, 16x8 B and 16x8 C, all row-major f32 in
// global memory, through the lanes' fragments; D goes out row-major.
template <class T>
__device__ void mma_tile(const float *a, const float *b, const float *c,
                         float *d) {
  int l = threadIdx.x;
  nf_vec<T, 8> fa;
  nf_vec<T, 4> fb;
  nf_vec<float, 4> fc;
  for (int i = 0; i < 8; ++i)
    fa.v[i] = T(nf_ldg(a + 16 * fragRowA(l, i) + fragColA(l, i)));
  for (int i = 0; i < 4; ++i) {
    fb.v[i] = T(nf_ldg(b + 8 * fragRowB(l, i) + fragColB(l, i)));
    fc.v[i] = nf_ldg(c + 8 * fragRowC(l, i) + fragColC(l, i));
  }
  nf_vec<float, 4> fd = nf_mma_m16n8k16(fa, fb, fc);
  for (int i = 0; i < 4; ++i)
    nf_stg(d + 8 * fragRowC(l, i) + fragColC(l, i), fd.v[i]);
}
extern "C" __global__ void mma_f16(const float *a, const float *b,
                                   const float *c, float *d) {
  mma_tile<__half>(a, b, c, d);
}
NF_SIM_ENTRY(mma_f16)
extern "C" __global__ void mma_bf16(const float *a, const float *b,
                                    const float *c, float *d) {
  mma_tile<__nv_bfloat16>(a, b, c, d);
}
NF_SIM_ENTRY(mma_bf16)

// The PTX ISA's fragment tables for mma.m16n8k8 with .tf32 A and B (C/D
// as above): one element a register.
__device__ int tf32RowA(int l, int i) { return l / 4 + (i % 2) * 8; }
__device__ int tf32ColA(int l, int i) { return l % 4 + (i / 2) * 4; }
__device__ int tf32RowB(int l, int i) { return l % 4 + i * 4; }
__device__ int tf32ColB(int l, int) { return l / 4; }

// D = A * B + C for one 16x8 A, 8x8 B and 16x8 C on tf32 tensor cores, all
// row-major f32 in global memory, through the lanes' fragments.
extern "C" __global__ void mma_tf32(const float *a, const float *b,
                                    const float *c, float *d) {
  int l = threadIdx.x;
  nf_vec<float, 4> fa, fc;
  nf_vec<float, 2> fb;
  for (int i = 0; i < 4; ++i) {
    fa.v[i] = nf_ldg(a + 8 * tf32RowA(l, i) + tf32ColA(l, i));
    fc.v[i] = nf_ldg(c + 8 * fragRowC(l, i) + fragColC(l, i));
  }
  for (int i = 0; i < 2; ++i)
    fb.v[i] = nf_ldg(b + 8 * tf32RowB(l, i) + tf32ColB(l, i));
  nf_vec<float, 4> fd = nf_mma_m16n8k8_tf32(fa, fb, fc);
  for (int i = 0; i < 4; ++i)
    nf_stg(d + 8 * fragRowC(l, i) + fragColC(l, i), fd.v[i]);
}
NF_SIM_ENTRY(mma_tf32)

// cp.async: thread t copies 16, 8 and 4 bytes of `in` in group 0, the last
// two with source sizes that zero-fill; then 16 bytes in group 1. After
// wait_group 1 group 0 has landed and group 1 must not have (poison); after
// wait_group 0 both have. Each thread writes 4 + 2 + 1 + 4 + 4 words.
extern "C" __global__ void cp_async_groups(const unsigned *__restrict__ in,
                                           unsigned *__restrict__ out) {
  NF_SHARED(unsigned, s, 32 * 16);
  int t = threadIdx.x;
  unsigned *mine = s + 16 * t;
  const unsigned *src = in + 16 * t;
  nf_cp_async<16>(mine, src, 16);
  nf_cp_async<8>(mine + 4, src + 4, 4); // one word, one zero
  nf_cp_async<4>(mine + 6, src + 6, 0); // a zero, reading nothing
  nf_cp_async_commit();
  nf_cp_async<16>(mine + 8, src + 8, 16);
  nf_cp_async_commit();
  nf_cp_async_wait<1>();
  for (int i = 0; i < 7; ++i)
    nf_stg(out + 15 * t + i, mine[i]);
  for (int i = 0; i < 4; ++i)
    nf_stg(out + 15 * t + 7 + i, mine[8 + i]); // not landed yet
  nf_cp_async_wait<0>();
  for (int i = 0; i < 4; ++i)
    nf_stg(out + 15 * t + 11 + i, mine[8 + i]);
}
NF_SIM_ENTRY(cp_async_groups)

// Misuse the simulator reports: what `what` selects.
extern "C" __global__ void tensor_core_misuse(unsigned *out, int what) {
  NF_SHARED(__half, tile, 64);
  NF_SHARED(unsigned, words, 8);
  int l = threadIdx.x;
  if (what == 0) { // cp.async into global memory
    nf_cp_async<4>(out, out + 1, 4);
    nf_cp_async_wait<0>();
  } else if (what == 1) { // ldmatrix with a misaligned row
    nf_vec<__half, 2> r = nf_ldmatrix<1, false>(tile + (l % 8) * 8 + 1);
    nf_stg(out + l, *(const unsigned *)&r);
  } else if (what == 2) { // ldmatrix by half a warp
    if (l < 16) {
      nf_vec<__half, 2> r = nf_ldmatrix<1, false>(tile + (l % 8) * 8);
      nf_stg(out + l, *(const unsigned *)&r);
    }
  } else if (what == 3) { // cp.async from outside every buffer
    nf_cp_async<16>(words, out + 1000000, 16);
    nf_cp_async_wait<0>();
  }
}
NF_SIM_ENTRY(tensor_core_misuse)
