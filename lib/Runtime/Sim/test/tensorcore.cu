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
  const unsigned *words[6] = {(const unsigned *)&x4, (const unsigned *)&x2,
                              (const unsigned *)&x1, (const unsigned *)&t4,
                              (const unsigned *)&t2, (const unsigned *)&t1};
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

// wgmma needs sm_90a: under CUDA the kernels below exist only there.
#if defined(NF_CUDA_SIM) || defined(__CUDA_ARCH_FEAT_SM90_ALL)

// wgmma m64nNk16 of one warpgroup, both operands in shared memory, each
// element placed by the swizzled layouts written here (16-byte chunk c of a
// row r of S bytes at chunk c ^ ((r * S / 128) % (S / 16)), a 128-byte
// swizzle's MN-major rows of 64 elements, blocks of 64 a `leading` apart):
//   mode 0: K-major A (64 x 64) and B (128 x 64) in rows of 128 bytes
//           (128-byte swizzle), the K step q at 32 q bytes;
//   mode 1: K-major, rows of 64 bytes (64-byte swizzle), N = 64;
//   mode 2: MN-major A (64) and B (128, two blocks) over 32 rows of K,
//           the K step q at 16 q rows;
//   mode 3: mode 0 on bf16.
// `a` is 64 x 64 and `b` 128 x 64 (row-major, K along the rows) of 16-bit
// bits; thread t writes its N / 2 accumulators at out[64 t].
__device__ int kMajorAt(int r, int k, int rowBytes) {
  int chunks = rowBytes / 16;
  int chunk = (k / 8) ^ ((r * rowBytes / 128) % chunks);
  return r * rowBytes / 2 + chunk * 8 + k % 8;
}
__device__ int mnMajorAt(int mn, int k, int leadingElements) {
  return mn / 64 * leadingElements + k * 64 + (((mn % 64) / 8) ^ (k % 8)) * 8 +
         mn % 8;
}
// The shared tile `s` is the kernel's: GCC 12 (with -fno-weak) made this
// template's 1024-byte-aligned static a common symbol, outside section
// nf_smem, and the simulator then refused it as a wgmma operand.
template <class T>
__device__ void wgmmaTile(T *s, int mode, int q, const unsigned short *a,
                          const unsigned short *b, float *out) {
  T *sb = s + 64 * 64;
  int t = threadIdx.x;
  unsigned short *bits = reinterpret_cast<unsigned short *>(s);
  unsigned short *bbits = reinterpret_cast<unsigned short *>(sb);
  int depth = mode == 1 ? 32 : mode == 2 ? 32 : 64;
  for (int e = t; e < 64 * depth; e += 128) {
    int r = e / depth, k = e % depth;
    int at = mode == 2 ? mnMajorAt(r, k, 64 * 32) : kMajorAt(r, k, 2 * depth);
    bits[at] = a[64 * r + k];
  }
  for (int e = t; e < 128 * depth; e += 128) {
    int r = e / depth, k = e % depth;
    int at = mode == 2 ? mnMajorAt(r, k, 64 * 32) : kMajorAt(r, k, 2 * depth);
    bbits[at] = b[64 * r + k];
  }
  nf_fence_proxy_async();
  __syncthreads();
  nf_vec<float, 64> d{};
  nf_vec<float, 32> d64{};
  nf_wgmma_fence();
  if (mode == 0 || mode == 3)
    d = nf_wgmma<128, false, false, 128, 16, 1024, 128, 16, 1024>(
        s + 16 * q, sb + 16 * q, d);
  else if (mode == 1)
    d64 = nf_wgmma<64, false, false, 64, 16, 512, 64, 16, 512>(
        s + 16 * q, sb + 16 * q, d64);
  else
    d = nf_wgmma<128, true, true, 128, 4096, 1024, 128, 4096, 1024>(
        s + 16 * 64 * q, sb + 16 * 64 * q, d);
  nf_wgmma_commit();
  nf_wgmma_wait<0>();
  d = nf_wgmma_fence_operand(d);
  for (int i = 0; i < 64; ++i)
    nf_stg(out + 64 * t + i, mode == 1 ? (i < 32 ? d64.v[i] : 0.0f) : d.v[i]);
}
extern "C" __global__ void wgmma_tile(int mode, int q,
                                      const unsigned short *__restrict__ a,
                                      const unsigned short *__restrict__ b,
                                      float *__restrict__ out) {
  NF_SHARED_ALIGNED(unsigned short, s, 64 * 64 + 128 * 64, 1024);
  if (mode == 3)
    wgmmaTile(reinterpret_cast<__nv_bfloat16 *>(s), mode, q, a, b, out);
  else
    wgmmaTile(reinterpret_cast<__half *>(s), mode, q, a, b, out);
}
NF_SIM_ENTRY(wgmma_tile)

// wgmma's rules, which the simulator enforces: operands staged by cp.async
// (K-major, rows of 32 bytes: a 32-byte swizzle) and, by `what`,
//   0: nothing missing (thread t writes its 32 accumulators at out[32 t]);
//   1: no fence.proxy.async after the copies land;
//   2: no wgmma.fence before the wgmma;
//   3: a cp.async into an operand while the wgmma is in flight;
//   4: no wgmma.wait_group before the thread exits.
extern "C" __global__ void wgmma_rules(int what, const __half *__restrict__ a,
                                       const __half *__restrict__ b,
                                       float *__restrict__ out) {
  NF_SHARED_ALIGNED(__half, s, 2 * 64 * 16, 1024);
  int t = threadIdx.x;
  // Chunk t of each 64 x 16 operand: row t / 2, K chunk t % 2.
  int r = t / 2, c = t % 2, at = r * 16 + ((c ^ ((r / 4) % 2)) * 8);
  nf_cp_async<16>(s + at, a + 8 * t, 16);
  nf_cp_async<16>(s + 64 * 16 + at, b + 8 * t, 16);
  nf_cp_async_commit();
  nf_cp_async_wait<0>();
  if (what != 1)
    nf_fence_proxy_async();
  __syncthreads();
  if (what != 2)
    nf_wgmma_fence();
  nf_vec<float, 32> d{};
  d = nf_wgmma<64, false, false, 32, 16, 256, 32, 16, 256>(s, s + 64 * 16, d);
  nf_wgmma_commit();
  if (what == 3)
    nf_cp_async<16>(s + 8 * t, a, 16);
  if (what == 4)
    return;
  nf_wgmma_wait<0>();
  d = nf_wgmma_fence_operand(d);
  for (int i = 0; i < 32; ++i)
    nf_stg(out + 32 * t + i, d.v[i]);
}
NF_SIM_ENTRY(wgmma_rules)

#endif // NF_CUDA_SIM || __CUDA_ARCH_FEAT_SM90_ALL
