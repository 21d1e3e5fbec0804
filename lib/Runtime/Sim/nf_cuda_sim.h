//===- nf_cuda_sim.h - CUDA's execution model on the host CPU ---*- C++ -*-===//
//
// Part of normfuse. Force-included (-include) when a printed .cu file is
// compiled for the host with -DNF_CUDA_SIM, much like Numba's CUDA simulator.
// A block's threads run as fibers on one OS thread and blocks run one after
// another. A fiber runs until it reaches __syncthreads(), a named barrier
// (bar.sync id, n), a warp operation or its end; then the next ready fiber
// runs, in forward, reverse or seeded random order (or staggered: a
// cluster's later blocks only while the earlier ones wait). Shared memory is
// poisoned with 0xFF bytes (NaN) at the start of every block, global accesses
// through nf_ldg/nf_stg are checked against the launch's buffers and counted,
// and deadlocks, divergent barriers and shuffles with exited lanes are errors.
// The blocks of a thread-block cluster (a kernel registered with
// NF_SIM_CLUSTER_ENTRY) run together, each with its own shared memory, which
// the cluster's other blocks reach through nf_cluster_st; nf_cluster_sync()
// is the cluster's barrier. So do all the blocks of a kernel that synchronizes
// its grid (NF_SIM_GRID_ENTRY, launched cooperatively under CUDA), whose
// nf_grid_sync(counter) is checked against the counting the device does on
// `counter`. The tensor cores' operations (mma.sync, ldmatrix, cp.async, wgmma)
// follow the PTX ISA's layouts, and TMA loads land only when a thread waits on
// the mbarrier they complete on (whose phases and parities are modelled). An
// error abandons the launch and is returned by nf_sim_launch (see
// normfuse/Runtime/CudaSimABI.h). One .cu is one translation unit and one
// shared object: all simulator state is internal to it, and only the nf_sim_*
// functions are exported. Fibers switch with a few instructions on x86-64 and
// with ucontext elsewhere (or given -DNF_SIM_UCONTEXT).
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_SIM_NF_CUDA_SIM_H
#define NORMFUSE_RUNTIME_SIM_NF_CUDA_SIM_H

#if __has_include("normfuse/Runtime/CudaSimABI.h")
#include "normfuse/Runtime/CudaSimABI.h"
#else
#include "../../../include/normfuse/Runtime/CudaSimABI.h"
#endif

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h>
#include <stdint.h>
#include <sys/mman.h>
#include <type_traits>
#include <ucontext.h>
#include <unistd.h>
#include <utility>

// Everything below and in the .cu stays inside the module; the nf_sim_*
// entry points are exported explicitly.
#pragma GCC visibility push(hidden)

//===----------------------------------------------------------------------===//
// Qualifiers and the macros the printer emits
//===----------------------------------------------------------------------===//

#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ __attribute__((always_inline)) inline
#define __launch_bounds__(...)
#define __grid_constant__
/// The cluster's size comes from NF_SIM_CLUSTER_ENTRY.
#define __cluster_dims__(...)
#define __align__(n) __attribute__((aligned(n)))
/// A function-local static in section nf_smem: blocks run one at a time, so
/// it is the block's shared memory; the section is poisoned for each block.
#define __shared__ __attribute__((section("nf_smem"))) static

/// A static shared array; the same definition serves under CUDA.
#define NF_SHARED(T, name, n) __shared__ __align__(16) T name[n]
/// Dynamic shared memory, at namespace or function scope. CUDA:
/// extern __shared__ __align__(16) unsigned char name[]
#define NF_DYNAMIC_SMEM(name) unsigned char *const name = ::nf_sim::gDynSmem
/// The same with a wider alignment (a power of two up to 1024).
#define NF_SHARED_ALIGNED(T, name, n, a)                                       \
  __shared__ __align__(a)                                                      \
  T name[n]
#define NF_DYNAMIC_SMEM_ALIGNED(name, a) NF_DYNAMIC_SMEM(name)
/// Registers kernel `name` for nf_sim_launch; empty under CUDA.
#define NF_SIM_ENTRY(name)                                                     \
  static ::nf_sim::Registrar nf_sim_entry_##name(                              \
      #name, &::nf_sim::Tramp<decltype(&name)>::call<&name>,                   \
      ::nf_sim::Tramp<decltype(&name)>::numParams);

/// Registers kernel `name` whose blocks run in clusters of `blocks` (1 to
/// 8, along x; the kernel carries __cluster_dims__(blocks, 1, 1) under CUDA).
#define NF_SIM_CLUSTER_ENTRY(name, blocks)                                     \
  static_assert((blocks) >= 1 && (blocks) <= ::nf_sim::kMaxClusterBlocks,      \
                "a cluster holds 1 to 8 blocks");                              \
  static ::nf_sim::Registrar nf_sim_entry_##name(                              \
      #name, &::nf_sim::Tramp<decltype(&name)>::call<&name>,                   \
      ::nf_sim::Tramp<decltype(&name)>::numParams, (blocks));

/// Registers kernel `name` that synchronizes its whole grid (nf_grid_sync):
/// all its blocks run together, as a cooperative launch keeps them all
/// resident on a GPU.
#define NF_SIM_GRID_ENTRY(name)                                                \
  static ::nf_sim::Registrar nf_sim_entry_##name(                              \
      #name, &::nf_sim::Tramp<decltype(&name)>::call<&name>,                   \
      ::nf_sim::Tramp<decltype(&name)>::numParams, ::nf_sim::kWholeGrid);

#define __syncthreads() ::nf_sim::syncThreads(__LINE__)
#define nf_named_barrier(id, threads)                                          \
  ::nf_sim::namedBarrier((id), (threads), __LINE__)
#define nf_grid_sync(counter) ::nf_sim::gridSync((counter), __LINE__)
#define nf_cluster_sync() ::nf_sim::clusterSync(__LINE__)
/// The same barrier here: the simulator models no memory order.
#define nf_cluster_sync_relaxed() ::nf_sim::clusterSync(__LINE__)

using std::isfinite;
using std::isinf;
using std::isnan;

//===----------------------------------------------------------------------===//
// Built-in types and variables
//===----------------------------------------------------------------------===//

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1)
      : x(x), y(y), z(z) {}
};
struct __align__(8) float2 {
  float x, y;
};
struct __align__(16) float4 {
  float x, y, z, w;
};
struct __align__(8) int2 {
  int x, y;
};
struct __align__(16) int4 {
  int x, y, z, w;
};
struct __align__(8) uint2 {
  unsigned x, y;
};
struct __align__(16) uint4 {
  unsigned x, y, z, w;
};

/// A vector of N (a power of two) T: one access where it has at most 16
/// bytes (wgmma's accumulators are wider: registers, never one access).
template <class T, int N>
struct alignas(sizeof(T) * N < 16 ? sizeof(T) * N : 16) nf_vec {
  static_assert(N > 0 && (N & (N - 1)) == 0, "nf_vec is a power-of-two vector");
  T v[N];
};

/// The running thread's coordinates, set by the scheduler at every switch.
static uint3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
static const int warpSize = 32;

//===----------------------------------------------------------------------===//
// 16-bit floats
//===----------------------------------------------------------------------===//

namespace nf_sim {
inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
/// Rounds to nearest even; NaN stays NaN (quieted), overflow gives inf.
inline uint16_t floatToHalf(float f) {
  uint32_t x = bitsOf(f), sign = (x >> 16) & 0x8000, a = x & 0x7fffffff;
  if (a > 0x7f800000) // NaN
    return uint16_t(sign | 0x7e00 | ((a >> 13) & 0x3ff));
  if (a >= 0x477ff000) // at least 65520: inf
    return uint16_t(sign | 0x7c00);
  if (a < 0x38800000) // below 2^-14: the FPU rounds to a multiple of 2^-24
    return uint16_t(sign | (bitsOf(floatOf(a) + 0.5f) - 0x3f000000));
  a += 0xc8000fffu + ((a >> 13) & 1); // rebias by -112 << 23, round
  return uint16_t(sign | (a >> 13));
}
inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, e = (h >> 10) & 0x1f,
           m = h & 0x3ff;
  if (e == 0x1f)
    return floatOf(sign | 0x7f800000 | (m << 13));
  if (e == 0)
    return floatOf(sign | bitsOf(float(m) * 0x1p-24f));
  return floatOf(sign | ((e + 112) << 23) | (m << 13));
}
inline uint16_t floatToBf16(float f) {
  uint32_t x = bitsOf(f);
  if ((x & 0x7fffffff) > 0x7f800000)
    return uint16_t((x >> 16) | 0x40);
  return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}
inline float bf16ToFloat(uint16_t h) { return floatOf(uint32_t(h) << 16); }
} // namespace nf_sim

struct __half {
  unsigned short __x;
  __half() = default;
  __half(float f) : __x(nf_sim::floatToHalf(f)) {}
  operator float() const { return nf_sim::halfToFloat(__x); }
};
struct __nv_bfloat16 {
  unsigned short __x;
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) : __x(nf_sim::floatToBf16(f)) {}
  operator float() const { return nf_sim::bf16ToFloat(__x); }
};
struct __align__(4) __half2 {
  __half x, y;
};
struct __align__(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
typedef __half half;
typedef __nv_bfloat16 nv_bfloat16;

inline __half __ushort_as_half(unsigned short x) {
  __half h;
  h.__x = x;
  return h;
}
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short x) {
  __nv_bfloat16 h;
  h.__x = x;
  return h;
}
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
inline float __half2float(__half h) { return nf_sim::halfToFloat(h.__x); }
inline float __bfloat162float(__nv_bfloat16 h) {
  return nf_sim::bf16ToFloat(h.__x);
}
inline __half __float2half_rn(float f) {
  return __ushort_as_half(nf_sim::floatToHalf(f));
}
inline __half __float2half(float f) { return __float2half_rn(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  return __ushort_as_bfloat16(nf_sim::floatToBf16(f));
}
inline __nv_bfloat16 __float2bfloat16(float f) {
  return __float2bfloat16_rn(f);
}
namespace nf_sim {
/// `x` rounded once, to nearest even, to a binary format of `digits`
/// significant bits whose normal numbers start at 2^(minExponent - 1) and
/// whose largest finite value is `largest`: that value (exact in a float),
/// or an infinity.
inline double roundDouble(double x, int digits, int minExponent,
                          double largest) {
  if (!std::isfinite(x) || x == 0)
    return x;
  int e;
  std::frexp(x, &e);
  e = e < minExponent ? minExponent : e;
  double r = std::ldexp(std::nearbyint(std::ldexp(x, digits - e)), e - digits);
  return std::fabs(r) > largest ? std::copysign(INFINITY, x) : r;
}
} // namespace nf_sim
// One rounding from double, as CUDA's (rounding to float first could
// round twice).
inline __half __double2half(double d) {
  return __float2half_rn(float(nf_sim::roundDouble(d, 11, -13, 65504.0)));
}
inline __nv_bfloat16 __double2bfloat16(double d) {
  return __float2bfloat16_rn(
      float(nf_sim::roundDouble(d, 8, -125, 0x1.fep127)));
}

//===----------------------------------------------------------------------===//
// Math and bit intrinsics
//===----------------------------------------------------------------------===//

inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
inline float __saturatef(float x) { return x >= 1 ? 1 : (x > 0 ? x : 0); }
inline float __int_as_float(int x) { return nf_sim::floatOf(uint32_t(x)); }
inline int __float_as_int(float x) { return int(nf_sim::bitsOf(x)); }
inline float __uint_as_float(unsigned x) { return nf_sim::floatOf(x); }
inline unsigned __float_as_uint(float x) { return nf_sim::bitsOf(x); }
inline long long __double_as_longlong(double x) {
  long long bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}
inline double __longlong_as_double(long long bits) {
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
template <class T> inline T min(T a, T b) { return b < a ? b : a; }
template <class T> inline T max(T a, T b) { return a < b ? b : a; }
inline void __threadfence() {}
inline void __threadfence_block() {}

//===----------------------------------------------------------------------===//
// Fibers
//===----------------------------------------------------------------------===//

#if defined(__x86_64__) && !defined(NF_SIM_UCONTEXT)
/// Saves the callee-saved registers on the current stack, stores the stack
/// pointer in *save and continues on the stack `sp`, saved the same way.
extern "C" void nf_sim_switch(void **save, void *sp);
__asm__(".pushsection .text\n"
        ".p2align 4\n"
        ".globl nf_sim_switch\n"
        ".hidden nf_sim_switch\n"
        ".type nf_sim_switch, @function\n"
        "nf_sim_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n"
        "  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n"
        "  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size nf_sim_switch, .-nf_sim_switch\n"
        ".popsection\n");
namespace nf_sim {
struct Context {
  void *sp;
};
inline void swapTo(Context &save, Context &to) {
  nf_sim_switch(&save.sp, to.sp);
}
/// Makes `c` start `entry`, which must never return, on the given stack.
inline bool makeContext(Context &c, void (*entry)(), unsigned char *stack,
                        size_t size) {
  auto **sp = reinterpret_cast<void **>(
      (reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t(15));
  *--sp = nullptr; // entry's return address: it is entered as if called
  *--sp = reinterpret_cast<void *>(entry);
  for (int i = 0; i < 6; ++i)
    *--sp = nullptr;
  c.sp = sp;
  return true;
}
} // namespace nf_sim
#else
namespace nf_sim {
struct Context {
  ucontext_t uc;
};
inline void swapTo(Context &save, Context &to) {
  swapcontext(&save.uc, &to.uc);
}
inline bool makeContext(Context &c, void (*entry)(), unsigned char *stack,
                        size_t size) {
  if (getcontext(&c.uc) != 0)
    return false;
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = size;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, entry, 0);
  return true;
}
} // namespace nf_sim
#endif

//===----------------------------------------------------------------------===//
// Simulator state
//===----------------------------------------------------------------------===//

/// The bounds of section nf_smem, which holds every __shared__ variable:
/// weak, so both are null where the module has none. (Until 2026-11-29 an
/// anchor variable in the section kept it present in every module; Clang
/// 19 emits a variable with a section attribute read from a precompiled
/// header as constant, which made the section read-only.)
extern "C"
    __attribute__((weak, visibility("hidden"))) unsigned char __start_nf_smem[],
    __stop_nf_smem[];

namespace nf_sim {
namespace {

constexpr int kMaxThreads = 1024;
/// The most blocks of a cluster (the portable limit), and so the most
/// threads that run together.
constexpr int kMaxClusterBlocks = 8;
constexpr int kMaxRunThreads = NF_SIM_MAX_RUN_THREADS;
static_assert(kMaxRunThreads >= kMaxThreads * kMaxClusterBlocks,
              "a cluster's threads run together");
/// The most blocks that run together: a cluster's, or a whole grid's that
/// synchronizes (of at most kMaxRunThreads threads in all).
constexpr int kMaxRunBlocks = NF_SIM_MAX_RUN_BLOCKS;
/// Kernel::cluster of a kernel whose whole grid runs together.
constexpr int kWholeGrid = -1;
constexpr size_t kStackBytes = size_t(256) << 10;
constexpr size_t kMaxDynSmem = 232448; // 227 KiB, as on sm_90

enum State : unsigned char {
  Ready,
  AtBarrier,
  AtWarp,
  AtCluster,
  AtMbarrier,
  AtNamedBarrier,
  Exited
};
enum Op : unsigned char {
  Idx,
  Up,
  Down,
  Xor,
  Ballot,
  Any,
  All,
  SyncWarp,
  LdMatrix,
  Mma
};
const char *const kOpNames[] = {
    "__shfl_sync",   "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
    "__ballot_sync", "__any_sync",     "__all_sync",       "__syncwarp",
    "ldmatrix",      "mma.sync"};
/// The most cp.async copies a thread may have in flight.
constexpr int kMaxAsyncCopies = 128;
/// The most operand reads of wgmma a thread may have in flight.
constexpr int kMaxWgmmaReads = 128;
/// The most mbarriers, and TMA loads in flight, of the blocks running.
constexpr int kMaxMbarriers = 256;
/// Named barriers a block has (bar.sync id, threads: 1 to 15; 0 is
/// __syncthreads()).
constexpr int kNamedBarriers = 16;
constexpr int kMaxTmaLoads = 1024;

struct Kernel {
  const char *name;
  void (*tramp)(void **);
  int numParams;
  /// Blocks per cluster (1: no clusters; kWholeGrid: the grid's blocks
  /// run together, each a cluster of one).
  int cluster;
};
/// A lane's side of a warp operation: its operands, then its result. The
/// matrix operations (ldmatrix, mma.sync) pass their operands by address
/// (`in`) and receive their results at `out`, in the lane's own frame.
struct Lane {
  uint64_t val, result;
  unsigned mask;
  int arg, width;
  Op op;
  const void *in;
  void *out;
};
/// A cp.async copy that has been issued but has not landed: it lands when
/// its thread waits for its group (cp.async.wait_group), and not before.
struct AsyncCopy {
  unsigned char *dst;
  const unsigned char *src;
  int bytes, srcBytes, group;
};
/// The shared memory one operand of a wgmma reads, [lo, hi), until its
/// thread waits for its group (wgmma.wait_group).
struct WgmmaRead {
  const unsigned char *lo, *hi;
  int group;
};

/// An mbarrier of a block's shared memory (mbarrier.init): the arrivals
/// its phase still waits for (of `count` a phase), the transaction bytes
/// still to come (expect_tx adds, complete_tx takes), and the phase's
/// parity (it flips when both reach 0).
struct Mbarrier {
  int block;
  const void *at;
  int count, pending, phase;
  int64_t tx;
};
/// A TMA load (cp.async.bulk.tensor) issued but not landed: it lands, and
/// completes its bytes on its mbarrier, when a thread of its block waits
/// on that mbarrier, and not before.
struct TmaLoad {
  int block;
  const void *bar;
  unsigned char *dst;
  nf_sim_tensor_map map;
  int coords[5];
};

/// All simulator state; zero-initialized, so usable by static initializers.
struct Sim {
  Kernel *kernels;
  int numKernels, capKernels;
  // The launch.
  const Kernel *kernel;
  void **args;
  const nf_sim_buffer *bufs;
  int numBufs, lastBuf, order, numStacks;
  bool busy, failed;
  char *err;
  size_t errSize, dynPoison, dynBytes;
  nf_sim_stats stats;
  unsigned char *stacks;
  uint64_t rng;
  Context sched;
  // The running cluster (one block without clusters): `blocks` blocks of
  // `blockThreads` threads, `n` threads in all; thread t is thread
  // t % blockThreads of block t / blockThreads. `liveAll` have not exited.
  int n, blockThreads, blocks, cur, liveAll;
  // Per block: its index in the grid, its threads that have not exited,
  // those waiting at its __syncthreads() and where the first one waits.
  // `clusterSize` blocks a cluster (1 where the whole grid runs).
  int clusterSize;
  uint3 bids[kMaxRunBlocks];
  int live[kMaxRunBlocks], atBarrier[kMaxRunBlocks], barrierLine[kMaxRunBlocks],
      barrierThread[kMaxRunBlocks];
  int blockOrder[kMaxRunBlocks];
  // Per block and named barrier (bar.sync id, n; id 0 unused): the threads
  // waiting, the count the first one gave, where and which it is.
  int atNamed[kMaxRunBlocks][kNamedBarriers],
      namedCount[kMaxRunBlocks][kNamedBarriers],
      namedLine[kMaxRunBlocks][kNamedBarriers],
      namedThread[kMaxRunBlocks][kNamedBarriers];
  // The named barrier each thread at AtNamedBarrier waits at.
  unsigned char namedId[kMaxRunThreads];
  // The cluster barrier: threads waiting, where the first one waits, and
  // the barriers the running cluster has completed.
  int atCluster, clusterLine, clusterThread, clusterSyncs;
  // Each block's shared memory (the static section, then the dynamic
  // bytes poisoned), `imageBytes` each; block `liveBlock`'s is in place
  // rather than in its image.
  unsigned char *images;
  size_t imageBytes, imageCap;
  int liveBlock;
  unsigned waiting[kMaxRunThreads / 32], exited[kMaxRunThreads / 32];
  State state[kMaxRunThreads];
  int perm[kMaxRunThreads];
  uint3 tids[kMaxRunThreads];
  Lane lanes[kMaxRunThreads];
  Context ctx[kMaxRunThreads];
  // Each thread's copies in flight (allocated on first use), their count,
  // and the groups it has committed.
  AsyncCopy *copies;
  int numCopies[kMaxRunThreads], groups[kMaxRunThreads];
  // wgmma: each thread's operand reads in flight (allocated on first use)
  // and their count, the groups it has committed, whether it has passed a
  // wgmma.fence since its last wgmma.wait_group, and whether copies of its
  // (cp.async) have landed since its last fence.proxy.async.
  WgmmaRead *wgReads;
  int numWgReads[kMaxRunThreads], wgGroups[kMaxRunThreads];
  bool wgFenced[kMaxRunThreads], unfencedCopies[kMaxRunThreads];
  /// setmaxnreg: the registers each thread holds (as launched until its
  /// warpgroup changes them).
  int regs[kMaxRunThreads];
  /// nf_ldg calls of each thread running.
  uint64_t threadLoads[kMaxRunThreads];
  // The running blocks' mbarriers and TMA loads in flight (allocated on
  // first use), and the mbarrier each thread at AtMbarrier waits on.
  Mbarrier *mbarriers;
  TmaLoad *tmaLoads;
  int numMbarriers, numTmaLoads;
  const void *waitsOn[kMaxRunThreads];
};
Sim S;
/// 1024-byte aligned, as the widest declared alignment (wgmma's swizzles).
alignas(1024) unsigned char gDynSmem[kMaxDynSmem];

struct Cleanup {
  ~Cleanup() {
    if (S.stacks)
      munmap(S.stacks, size_t(S.numStacks) * kStackBytes);
    std::free(S.kernels);
    std::free(S.copies);
    std::free(S.wgReads);
    std::free(S.images);
  }
} gCleanup;

struct Registrar {
  Registrar(const char *name, void (*tramp)(void **), int numParams,
            int cluster = 1) {
    if (S.numKernels == S.capKernels) {
      int cap = S.capKernels ? 2 * S.capKernels : 16;
      void *p = std::realloc(S.kernels, sizeof(Kernel) * size_t(cap));
      if (!p)
        return; // nf_sim_launch then reports an unknown kernel
      S.kernels = static_cast<Kernel *>(p);
      S.capKernels = cap;
    }
    S.kernels[S.numKernels++] = {name, tramp, numParams, cluster};
  }
};

/// Calls a kernel with cuLaunchKernel-style `args`.
template <class Sig> struct Tramp;
template <class... A> struct Tramp<void (*)(A...)> {
  static constexpr int numParams = int(sizeof...(A));
  template <void (*F)(A...), size_t... I>
  static void callImpl(void **args, std::index_sequence<I...>) {
    (void)args;
    F(*static_cast<std::remove_cv_t<std::remove_reference_t<A>> *>(args[I])...);
  }
  template <void (*F)(A...)> static void call(void **args) {
    callImpl<F>(args, std::index_sequence_for<A...>{});
  }
};

//===----------------------------------------------------------------------===//
// Errors and scheduling
//===----------------------------------------------------------------------===//

/// Appends to the caller's error buffer.
inline void appendErrorV(const char *fmt, va_list ap) {
  if (!S.err || !S.errSize)
    return;
  size_t len = std::strlen(S.err);
  std::vsnprintf(S.err + len, S.errSize - len, fmt, ap);
}
__attribute__((format(printf, 1, 2))) inline void appendError(const char *fmt,
                                                              ...) {
  va_list ap;
  va_start(ap, fmt);
  appendErrorV(fmt, ap);
  va_end(ap);
}

/// Starts a message about the running block, and thread if `withThread`.
inline void errorPrefix(bool withThread) {
  S.failed = true;
  if (S.err && S.errSize)
    S.err[0] = 0;
  appendError("kernel '%s' block (%u,%u,%u)", S.kernel->name, blockIdx.x,
              blockIdx.y, blockIdx.z);
  if (withThread)
    appendError(" thread (%u,%u,%u)", threadIdx.x, threadIdx.y, threadIdx.z);
  appendError(": ");
}

inline void yield() { swapTo(S.ctx[S.cur], S.sched); }

/// Reports an error of the running thread and abandons its block: the fiber
/// is never resumed.
[[noreturn]] __attribute__((format(printf, 1, 2))) inline void
fail(const char *fmt, ...) {
  errorPrefix(true);
  va_list ap;
  va_start(ap, fmt);
  appendErrorV(fmt, ap);
  va_end(ap);
  yield();
  std::abort(); // unreachable
}

/// The lanes of warp `w` that exist (blockDim may not be a multiple of 32).
inline unsigned existing(int w) {
  int k = S.n - 32 * w;
  return k >= 32 ? ~0u : (1u << k) - 1;
}

/// Releases the __syncthreads() of block `b` of the cluster.
inline void releaseBarrier(int b) {
  for (int t = b * S.blockThreads; t < (b + 1) * S.blockThreads; ++t)
    if (S.state[t] == AtBarrier)
      S.state[t] = Ready;
  S.atBarrier[b] = 0;
  ++S.stats.barriers;
}

inline void syncThreads(int line) {
  int t = S.cur, b = t / S.blockThreads;
  if (S.atBarrier[b] == 0) {
    S.barrierLine[b] = line;
    S.barrierThread[b] = t;
  } else if (line != S.barrierLine[b]) {
    const uint3 &o = S.tids[S.barrierThread[b]];
    fail("divergent __syncthreads(): this thread is at line %d while thread "
         "(%u,%u,%u) waits at line %d",
         line, o.x, o.y, o.z, S.barrierLine[b]);
  }
  S.state[t] = AtBarrier;
  if (++S.atBarrier[b] == S.live[b])
    releaseBarrier(b);
  yield();
}

/// bar.sync id, threads: the calling thread waits until `threads` threads
/// of its block (whole warps) have arrived at named barrier `id` (1 to
/// 15), all at the same line with the same count; the block's other
/// threads go on. A barrier waiting for more threads than are left to come
/// never completes (a deadlock, as on a GPU).
inline void namedBarrier(unsigned id, unsigned threads, int line) {
  int t = S.cur, b = t / S.blockThreads;
  if (id < 1 || id >= unsigned(kNamedBarriers))
    fail("bar.sync %u at line %d: named barriers are 1 to %d (0 is "
         "__syncthreads())",
         id, line, kNamedBarriers - 1);
  if (threads < 32 || threads % 32 || threads > unsigned(S.blockThreads))
    fail("bar.sync %u, %u at line %d: whole warps of the block's %d threads",
         id, threads, line, S.blockThreads);
  if (S.atNamed[b][id] == 0) {
    S.namedCount[b][id] = int(threads);
    S.namedLine[b][id] = line;
    S.namedThread[b][id] = t;
  } else if (line != S.namedLine[b][id] ||
             int(threads) != S.namedCount[b][id]) {
    const uint3 &o = S.tids[S.namedThread[b][id]];
    fail("divergent bar.sync %u: this thread is at line %d for %u threads "
         "while thread (%u,%u,%u) waits at line %d for %d",
         id, line, threads, o.x, o.y, o.z, S.namedLine[b][id],
         S.namedCount[b][id]);
  }
  S.state[t] = AtNamedBarrier;
  S.namedId[t] = static_cast<unsigned char>(id);
  if (++S.atNamed[b][id] == int(threads)) {
    for (int u = b * S.blockThreads; u < (b + 1) * S.blockThreads; ++u)
      if (S.state[u] == AtNamedBarrier && S.namedId[u] == id)
        S.state[u] = Ready;
    S.atNamed[b][id] = 0;
    ++S.stats.barriers;
  }
  yield();
}

/// The calling thread arrives at the barrier of every thread running (a
/// cluster's, or a whole grid's) at `line`, named `what` ("cluster",
/// "grid") in errors: none may have exited, all at the same line. True
/// when it is the last to arrive; the caller then calls releaseAll().
inline bool arriveAll(int line, const char *what) {
  int t = S.cur;
  if (S.liveAll != S.n)
    fail("%s barrier at line %d after %d threads of the %s exited: every "
         "thread of every block must arrive",
         what, line, S.n - S.liveAll, what);
  if (S.atCluster == 0) {
    S.clusterLine = line;
    S.clusterThread = t;
  } else if (line != S.clusterLine) {
    const uint3 &o = S.tids[S.clusterThread];
    fail("divergent %s barrier: this thread is at line %d while thread "
         "(%u,%u,%u) of block %d of the %s waits at line %d",
         what, line, o.x, o.y, o.z, S.clusterThread / S.blockThreads, what,
         S.clusterLine);
  }
  S.state[t] = AtCluster;
  return ++S.atCluster == S.n;
}

/// Releases every thread from the barrier all arrived at.
inline void releaseAll() {
  for (int u = 0; u < S.n; ++u)
    S.state[u] = Ready;
  S.atCluster = 0;
  ++S.clusterSyncs;
  ++S.stats.clusterBarriers;
}

/// barrier.cluster.arrive.release + wait.acquire (.aligned): every thread
/// of every block of the cluster arrives, at the same barrier, and none has
/// exited (one block is a cluster of one where the launch has none).
inline void clusterSync(int line) {
  if (S.clusterSize != S.blocks)
    fail("cluster barrier at line %d in a kernel that synchronizes its grid "
         "(the simulator does not model both)",
         line);
  if (arriveAll(line, "cluster"))
    releaseAll();
  yield();
}

template <bool Store> inline void access(const void *p, size_t n, size_t align);

/// nf_grid_sync(counter): every thread of every block of the grid arrives
/// (the blocks of a kernel registered with NF_SIM_GRID_ENTRY run together),
/// at the same barrier, none exited. On the device each block adds 1 to
/// `*counter` and waits until it reaches the next multiple of the grid's
/// blocks; so the counter must be a multiple of them when the barrier
/// starts (zero when the launch began, in a zeroed temporary): otherwise
/// some blocks would leave before the others arrive.
inline void gridSync(unsigned *counter, int line) {
  if (S.kernel->cluster != kWholeGrid)
    fail("nf_grid_sync at line %d in a kernel not registered with "
         "NF_SIM_GRID_ENTRY (a GPU would not launch it cooperatively)",
         line);
  if (arriveAll(line, "grid")) {
    access<true>(counter, sizeof(unsigned), alignof(unsigned));
    unsigned blocks = unsigned(S.blocks);
    if (*counter % blocks)
      fail("grid barrier at line %d: its counter holds %u, not a multiple of "
           "the grid's %u blocks (it was not zero when the launch began), so "
           "on a GPU some blocks would leave it before the others arrive",
           line, *counter, blocks);
    *counter += blocks;
    releaseAll();
  }
  yield();
}

/// The lane a shuffle reads, as PTX's shfl.sync defines it for CUDA's width.
inline int partner(Op op, int lane, int arg, int width) {
  int seg = (32 - width) & 31, b = arg & 31, lo = lane & seg,
      hi = lo | (31 & ~seg);
  switch (op) {
  case Up:
    return lane - b >= lo ? lane - b : lane;
  case Down:
    return lane + b <= hi ? lane + b : lane;
  case Xor:
    return (lane ^ b) <= hi ? lane ^ b : lane;
  default:
    return lo | (b & ~seg);
  }
}

/// Whether [p, p + n) lies in the block's shared memory (static, or the
/// launch's dynamic shared memory).
inline bool inShared(const void *p, size_t n) {
  auto a = reinterpret_cast<uintptr_t>(p);
  auto s0 = reinterpret_cast<uintptr_t>(__start_nf_smem);
  auto s1 = reinterpret_cast<uintptr_t>(__stop_nf_smem);
  auto d0 = reinterpret_cast<uintptr_t>(gDynSmem);
  return (a >= s0 && a <= s1 && n <= s1 - a) ||
         (a >= d0 && a <= d0 + S.dynBytes && n <= d0 + S.dynBytes - a);
}

/// Where `n` bytes at `p`, in the calling block's shared memory, lie in
/// block `rank` of its cluster's (mapa.shared::cluster): in place for the
/// block whose memory is, else in that block's image.
inline unsigned char *clusterShared(const void *p, size_t n, unsigned rank,
                                    const char *what) {
  auto a = reinterpret_cast<uintptr_t>(p);
  if (!inShared(p, n) || a % n)
    fail("%s: %p is not %zu-byte aligned shared memory", what, p, n);
  if (rank >= unsigned(S.clusterSize))
    fail("%s: block %u of a cluster of %d", what, rank, S.clusterSize);
  // The block of that rank in the caller's cluster (of those running).
  rank += unsigned(S.cur / S.blockThreads / S.clusterSize * S.clusterSize);
  if (S.live[rank] == 0)
    fail("%s: block %u of the cluster has exited, and its shared memory with "
         "it",
         what, rank);
  if (int(rank) == S.liveBlock)
    return static_cast<unsigned char *>(const_cast<void *>(p));
  auto s0 = reinterpret_cast<uintptr_t>(__start_nf_smem);
  auto s1 = reinterpret_cast<uintptr_t>(__stop_nf_smem);
  size_t offset = a >= s0 && a < s1
                      ? a - s0
                      : (s1 - s0) + (a - reinterpret_cast<uintptr_t>(gDynSmem));
  return S.images + rank * S.imageBytes + offset;
}

/// Puts block `b`'s shared memory in place, the one there into its image.
inline void swapShared(int b) {
  if (b == S.liveBlock)
    return;
  size_t bytes = size_t(__stop_nf_smem - __start_nf_smem);
  unsigned char *out = S.images + size_t(S.liveBlock) * S.imageBytes;
  unsigned char *in = S.images + size_t(b) * S.imageBytes;
  std::memcpy(out, __start_nf_smem, bytes);
  std::memcpy(out + bytes, gDynSmem, S.dynPoison);
  std::memcpy(__start_nf_smem, in, bytes);
  std::memcpy(gDynSmem, in + bytes, S.dynPoison);
  S.liveBlock = b;
}

/// The (row, column) of a fragment element, as PTX's figures give them.
struct RowCol {
  int row, col;
};
// mma.sync.aligned.m16n8k16 with .f16/.bf16 operands and .f32 accumulators
// (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"):
// lane l is in group g = l / 4 at position t = l % 4 in it.
/// A (16x16, row-major): element i of 8 (register i / 2, low half first).
inline RowCol mmaA(int lane, int i) {
  int g = lane >> 2, t = lane & 3;
  return {g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)};
}
/// B (16x8, column-major): element i of 4 (register i / 2); row is k.
inline RowCol mmaB(int lane, int i) {
  int g = lane >> 2, t = lane & 3;
  return {2 * t + (i & 1) + 8 * (i >> 1), g};
}
/// C and D (16x8 f32): element i of 4.
inline RowCol mmaC(int lane, int i) {
  int g = lane >> 2, t = lane & 3;
  return {g + 8 * (i >> 1), 2 * t + (i & 1)};
}
/// ldmatrix .m8n8 .b16: element h (0 low, 1 high) of a lane's register for
/// one 8x8 matrix, whose row r lanes 8j + r address; .trans swaps them.
inline RowCol ldmatrixElement(int lane, int h, bool trans) {
  RowCol rc{lane >> 2, 2 * (lane & 3) + h};
  return trans ? RowCol{rc.col, rc.row} : rc;
}

// mma.sync.aligned.m16n8k8 with .tf32 operands (PTX ISA, "Matrix
// Fragments for mma.m16n8k8", .tf32): one 32-bit element a register.
/// A (16x8, row-major): element i of 4.
inline RowCol mmaATf32(int lane, int i) {
  int g = lane >> 2, t = lane & 3;
  return {g + 8 * (i & 1), t + 4 * (i >> 1)};
}
/// B (8x8, column-major): element i of 2; row is k.
inline RowCol mmaBTf32(int lane, int i) {
  int g = lane >> 2, t = lane & 3;
  return {t + 4 * i, g};
}

/// f32 to tf32 as cvt.rna.tf32.f32 rounds (ptxas emits it as these integer
/// operations, sm_80 and sm_90): the 13 low mantissa bits dropped, to
/// nearest with ties away from zero (a finite value past the largest tf32
/// becomes infinity); infinities and NaN only lose those bits.
inline float roundToTf32(float f) {
  uint32_t x = bitsOf(f);
  if ((x & 0x7f800000) != 0x7f800000)
    x += 0x1000;
  return floatOf(x & 0xffffe000u);
}

/// The operands mma.sync multiplies.
enum MmaKind { MmaF16 = 0, MmaBF16 = 1, MmaTf32 = 2 };

/// What a lane gives mma.sync: m16n8k16 packs two 16-bit elements a
/// register; m16n8k8 .tf32 has one f32 a register (a[0..3], b[0..1]).
struct MmaOperands {
  uint32_t a[4], b[2];
  float c[4];
};

inline float mmaValue(uint32_t reg, int i, bool bf16) {
  auto h = uint16_t(reg >> (16 * (i & 1)));
  return bf16 ? bf16ToFloat(h) : halfToFloat(h);
}

/// ldmatrix of the whole warp: `arg` is the matrix count (1, 2, 4) plus 8
/// for .trans; lane 8j + r gives the address of row r of matrix j.
inline void completeLdMatrix(Lane *L) {
  int count = L[0].arg & 7;
  bool trans = L[0].arg & 8;
  for (int l = 0; l < 8 * count; ++l)
    if (!inShared(L[l].in, 16) || reinterpret_cast<uintptr_t>(L[l].in) % 16)
      fail("ldmatrix: lane %d gives row address %p, which is not 16-byte "
           "aligned shared memory",
           l, L[l].in);
  for (int l = 0; l < 32; ++l) {
    auto *regs = static_cast<uint32_t *>(L[l].out);
    for (int j = 0; j < count; ++j) {
      uint32_t reg = 0;
      for (int h = 0; h < 2; ++h) {
        RowCol rc = ldmatrixElement(l, h, trans);
        uint16_t v;
        std::memcpy(&v,
                    static_cast<const unsigned char *>(L[8 * j + rc.row].in) +
                        2 * rc.col,
                    2);
        reg |= uint32_t(v) << (16 * h);
      }
      regs[j] = reg;
    }
  }
}

/// mma.sync of the whole warp: D = A * B + C, products and sums in f32;
/// `arg` is the MmaKind (m16n8k16 for f16 and bf16, m16n8k8 for tf32, whose
/// operands are rounded as the prelude's cvt.rna.tf32.f32 rounds them).
inline void completeMma(Lane *L) {
  auto kind = MmaKind(L[0].arg);
  int depth = kind == MmaTf32 ? 8 : 16;
  float a[16][16], b[16][8], c[16][8];
  for (int l = 0; l < 32; ++l) {
    const auto *o = static_cast<const MmaOperands *>(L[l].in);
    if (kind == MmaTf32) {
      for (int i = 0; i < 4; ++i) {
        RowCol rc = mmaATf32(l, i);
        a[rc.row][rc.col] = roundToTf32(floatOf(o->a[i]));
      }
      for (int i = 0; i < 2; ++i) {
        RowCol rc = mmaBTf32(l, i);
        b[rc.row][rc.col] = roundToTf32(floatOf(o->b[i]));
      }
    } else {
      for (int i = 0; i < 8; ++i) {
        RowCol rc = mmaA(l, i);
        a[rc.row][rc.col] = mmaValue(o->a[i / 2], i, kind == MmaBF16);
      }
      for (int i = 0; i < 4; ++i) {
        RowCol rc = mmaB(l, i);
        b[rc.row][rc.col] = mmaValue(o->b[i / 2], i, kind == MmaBF16);
      }
    }
    for (int i = 0; i < 4; ++i) {
      RowCol rc = mmaC(l, i);
      c[rc.row][rc.col] = o->c[i];
    }
  }
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i) {
      RowCol rc = mmaC(l, i);
      float acc = c[rc.row][rc.col];
      for (int k = 0; k < depth; ++k)
        acc = std::fma(a[rc.row][k], b[k][rc.col], acc);
      static_cast<float *>(L[l].out)[i] = acc;
    }
}

/// Completes warp `w`'s operation once every lane of `need` waits in it.
inline void complete(int w, unsigned need, unsigned mask) {
  Lane *L = &S.lanes[32 * w];
  for (unsigned m = need; m; m &= m - 1)
    if (L[__builtin_ctz(m)].mask != mask)
      return; // another operation is pending; a deadlock if it stays so
  Op op = L[__builtin_ctz(need)].op;
  unsigned votes = 0;
  for (unsigned m = need; m; m &= m - 1) {
    int l = __builtin_ctz(m);
    if (L[l].op != op)
      fail("lanes of warp %d execute different warp operations (%s and %s)", w,
           kOpNames[op], kOpNames[L[l].op]);
    votes |= unsigned(L[l].val != 0) << l;
  }
  if (op == LdMatrix || op == Mma) {
    // .sync.aligned: every lane of the warp, with the same shape.
    if (need != ~0u)
      fail("%s needs all 32 lanes of warp %d, but only lanes 0x%08x take part",
           kOpNames[op], w, need);
    for (int l = 1; l < 32; ++l)
      if (L[l].arg != L[0].arg)
        fail("lanes 0 and %d of warp %d execute %s of different shapes", l, w,
             kOpNames[op]);
    if (op == LdMatrix)
      completeLdMatrix(L);
    else
      completeMma(L);
  }
  for (unsigned m = need; m; m &= m - 1) {
    int l = __builtin_ctz(m);
    if (op == Ballot || op == Any || op == All) {
      L[l].result = op == Ballot ? votes
                    : op == Any  ? votes != 0
                                 : votes == need;
    } else if (op <= Xor) {
      // A lane outside the operation gives poison, as garbage on a GPU.
      int j = partner(op, l, L[l].arg, L[l].width);
      L[l].result = (need >> j & 1) ? L[j].val : ~uint64_t(0);
    }
    S.state[32 * w + l] = Ready;
  }
  S.waiting[w] &= ~need;
  ++S.stats.shuffles;
}

inline uint64_t warpOp(Op op, unsigned mask, uint64_t val, int arg, int width,
                       const void *in = nullptr, void *out = nullptr) {
  int t = S.cur, w = t / 32, l = t % 32;
  if (!(mask >> l & 1))
    fail("%s with mask 0x%08x, which does not include the calling lane %d",
         kOpNames[op], mask, l);
  if (op <= Xor && (width < 1 || width > 32 || (width & (width - 1))))
    fail("%s with width %d (must be a power of two in [1, 32])", kOpNames[op],
         width);
  unsigned need = mask & existing(w);
  if (need & S.exited[w])
    fail("shuffle with exited lanes: %s with mask 0x%08x in warp %d, but "
         "lanes 0x%08x have exited",
         kOpNames[op], mask, w, need & S.exited[w]);
  S.lanes[t] = {val, 0, mask, arg, width, op, in, out};
  S.state[t] = AtWarp;
  S.waiting[w] |= 1u << l;
  if ((S.waiting[w] & need) == need)
    complete(w, need, mask);
  yield();
  return S.lanes[t].result;
}

template <class T> inline uint64_t toBits(const T &v) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8,
                "warp operations take trivially copyable types of <= 8 bytes");
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T> inline T fromBits(uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

inline void checkNoTmaLoads(int b);
inline void checkRegisters(int b);
inline int launchRegisters();

/// A fiber's body: runs the kernel, then leaves for good.
inline void fiberMain() {
  S.kernel->tramp(S.args);
  int t = S.cur, w = t / 32, b = t / S.blockThreads;
  if (S.numWgReads[t])
    fail("this thread exits with wgmma operations in flight (no "
         "wgmma.wait_group after them)");
  unsigned bit = 1u << (t % 32);
  S.state[t] = Exited;
  S.exited[w] |= bit;
  --S.live[b];
  --S.liveAll;
  if (S.live[b] == 0) {
    checkNoTmaLoads(b);
    checkRegisters(b);
  }
  for (unsigned m = S.waiting[w]; m; m &= m - 1) {
    const Lane &o = S.lanes[32 * w + __builtin_ctz(m)];
    if (o.mask & bit)
      fail("shuffle with exited lanes: this lane exits while lanes 0x%08x of "
           "warp %d wait in %s with mask 0x%08x",
           S.waiting[w], w, kOpNames[o.op], o.mask);
  }
  if (S.atCluster)
    fail(S.clusterSize == S.blocks
             ? "this thread exits while %d threads of its cluster wait at the "
               "cluster barrier at line %d"
             : "this thread exits while %d threads wait at the grid barrier "
               "at line %d",
         S.atCluster, S.clusterLine);
  if (S.atBarrier[b] && S.atBarrier[b] == S.live[b])
    releaseBarrier(b);
  yield();
  std::abort(); // unreachable: an exited fiber is never resumed
}

inline void reportDeadlock() {
  errorPrefix(false);
  int atWarp = 0, atBarrier = 0, line = 0;
  int atMbarrier = 0, atNamed = 0;
  for (int t = 0; t < S.n; ++t) {
    atWarp += S.state[t] == AtWarp;
    atMbarrier += S.state[t] == AtMbarrier;
    atNamed += S.state[t] == AtNamedBarrier;
  }
  for (int b = S.blocks - 1; b >= 0; --b)
    if (S.atBarrier[b]) {
      atBarrier += S.atBarrier[b];
      line = S.barrierLine[b];
    }
  appendError("deadlock: %d threads wait at __syncthreads()", atBarrier);
  if (atBarrier)
    appendError(" (line %d)", line);
  if (S.atCluster)
    appendError(", %d at the cluster barrier (line %d)", S.atCluster,
                S.clusterLine);
  if (atMbarrier)
    appendError(", %d at mbarriers whose phase never completes", atMbarrier);
  if (atNamed)
    appendError(", %d at named barriers (bar.sync id, n) short of their "
                "count",
                atNamed);
  appendError(", %d at warp operations", atWarp);
  for (int w = 0, shown = 0; w * 32 < S.n && shown < 4; ++w) {
    if (!S.waiting[w])
      continue;
    const Lane &o = S.lanes[32 * w + __builtin_ctz(S.waiting[w])];
    appendError("%s warp %d lanes 0x%08x in %s mask 0x%08x",
                shown++ ? ";" : " [", w, S.waiting[w], kOpNames[o.op], o.mask);
  }
  appendError("%s, %d exited", atWarp ? "]" : "", S.n - S.liveAll);
}

/// Runs the cluster of blocks S.bids (one block without clusters); false
/// on error. Each round runs every ready thread once, a block at a time
/// (its shared memory in place), in the launch's order; staggered, only
/// the first block's that has one.
inline bool runCluster() {
  std::memset(__start_nf_smem, 0xff,
              reinterpret_cast<uintptr_t>(__stop_nf_smem) -
                  reinterpret_cast<uintptr_t>(__start_nf_smem));
  std::memset(gDynSmem, 0xff, S.dynPoison);
  if (S.blocks > 1)
    std::memset(S.images, 0xff, size_t(S.blocks) * S.imageBytes);
  S.liveBlock = 0;
  blockIdx = S.bids[0];
  S.liveAll = S.n;
  S.atCluster = 0;
  S.clusterSyncs = 0;
  int bt = S.blockThreads;
  for (int b = 0; b < S.blocks; ++b) {
    S.live[b] = bt;
    S.atBarrier[b] = 0;
    std::memset(S.atNamed[b], 0, sizeof(S.atNamed[b]));
    S.blockOrder[b] = S.order == NF_SIM_ORDER_REVERSE ? S.blocks - 1 - b : b;
  }
  std::memset(S.waiting, 0, sizeof(unsigned) * size_t((S.n + 31) / 32));
  std::memset(S.exited, 0, sizeof(unsigned) * size_t((S.n + 31) / 32));
  std::memset(S.numCopies, 0, sizeof(int) * size_t(S.n));
  std::memset(S.groups, 0, sizeof(int) * size_t(S.n));
  std::memset(S.numWgReads, 0, sizeof(int) * size_t(S.n));
  std::memset(S.wgGroups, 0, sizeof(int) * size_t(S.n));
  std::memset(S.wgFenced, 0, sizeof(bool) * size_t(S.n));
  std::memset(S.unfencedCopies, 0, sizeof(bool) * size_t(S.n));
  for (int t = 0; t < S.n; ++t)
    S.regs[t] = launchRegisters();
  std::memset(S.threadLoads, 0, sizeof(uint64_t) * size_t(S.n));
  S.numMbarriers = S.numTmaLoads = 0;
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  for (int t = 0; t < S.n; ++t) {
    int u = t % bt, first = t - u;
    S.state[t] = Ready;
    S.perm[t] = S.order == NF_SIM_ORDER_REVERSE ? first + bt - 1 - u : t;
    S.tids[t] = {u % blockDim.x, u / blockDim.x % blockDim.y,
                 u / (blockDim.x * blockDim.y)};
    if (!makeContext(S.ctx[t], fiberMain, S.stacks + t * kStackBytes + page,
                     kStackBytes - page)) {
      errorPrefix(false);
      appendError("cannot create fibers");
      return false;
    }
  }
  auto random = [] {
    uint64_t z = (S.rng += 0x9e3779b97f4a7c15ull); // splitmix64
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  for (;;) {
    if (S.order == NF_SIM_ORDER_SHUFFLE) {
      for (int b = 0; b < S.blocks; ++b)
        for (int i = bt - 1; i > 0; --i)
          std::swap(S.perm[b * bt + i],
                    S.perm[b * bt + int(random() % uint64_t(i + 1))]);
      for (int i = S.blocks - 1; i > 0; --i)
        std::swap(S.blockOrder[i],
                  S.blockOrder[int(random() % uint64_t(i + 1))]);
    }
    bool ran = false;
    // Staggered, a round is the first block with a ready thread.
    for (int k = 0; k < S.blocks && !(ran && S.order == NF_SIM_ORDER_STAGGER);
         ++k) {
      int b = S.blockOrder[k];
      for (int i = b * bt; i < (b + 1) * bt; ++i) {
        int t = S.perm[i];
        if (S.state[t] != Ready)
          continue;
        ran = true;
        if (S.blocks > 1)
          swapShared(b);
        S.cur = t;
        threadIdx = S.tids[t];
        blockIdx = S.bids[b];
        swapTo(S.sched, S.ctx[t]);
        if (S.failed)
          return false;
      }
    }
    if (S.liveAll == 0)
      return true;
    if (!ran) {
      reportDeadlock();
      return false;
    }
  }
}

/// Unmaps the fibers' stacks.
inline void releaseStacks() {
  if (S.stacks)
    munmap(S.stacks, size_t(S.numStacks) * kStackBytes);
  S.stacks = nullptr;
  S.numStacks = 0;
}

/// Maps a stack with a guard page for each of `n` fibers (kept until
/// releaseStacks).
inline bool mapStacks(int n) {
  if (n <= S.numStacks)
    return true;
  releaseStacks();
  void *p = mmap(nullptr, size_t(n) * kStackBytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  S.stacks = p == MAP_FAILED ? nullptr : static_cast<unsigned char *>(p);
  if (!S.stacks)
    return false;
  S.numStacks = n;
  for (int t = 0; t < n; ++t)
    mprotect(S.stacks + t * kStackBytes, size_t(sysconf(_SC_PAGESIZE)),
             PROT_NONE);
  return true;
}

//===----------------------------------------------------------------------===//
// Checked global memory access
//===----------------------------------------------------------------------===//

inline bool inBuffer(int b, uintptr_t a, size_t n) {
  auto base = reinterpret_cast<uintptr_t>(S.bufs[b].base);
  size_t size = S.bufs[b].size;
  return a >= base && a - base <= size && n <= size - (a - base);
}

/// Names the buffer nearest to an out-of-bounds access (within its size or
/// 64 KiB), else says that the address is in no buffer.
[[noreturn]] inline void outOfBounds(const char *kind, uintptr_t a, size_t n) {
  int best = -1;
  long long off = 0;
  uint64_t bestDist = ~uint64_t(0);
  for (int b = 0; b < S.numBufs; ++b) {
    auto d = (long long)(a - reinterpret_cast<uintptr_t>(S.bufs[b].base));
    size_t size = S.bufs[b].size;
    uint64_t dist = d < 0 ? uint64_t(-d) : uint64_t(d) + n - size;
    if (dist < bestDist && dist <= (size > 65536 ? size : 65536)) {
      best = b;
      off = d;
      bestDist = dist;
    }
  }
  if (best < 0)
    fail("global %s of %zu bytes at address %p is not in any buffer", kind, n,
         reinterpret_cast<void *>(a));
  char label[96];
  if (S.bufs[best].name)
    std::snprintf(label, sizeof(label), "'%s'", S.bufs[best].name);
  else
    std::snprintf(label, sizeof(label), "#%d", best);
  fail("out-of-bounds global %s of %zu bytes at buffer %s + offset %lld "
       "(buffer size %zu bytes)",
       kind, n, label, off, S.bufs[best].size);
}

template <bool Store>
inline void access(const void *p, size_t n, size_t align) {
  const char *kind = Store ? "store" : "load";
  auto a = reinterpret_cast<uintptr_t>(p);
  int b = S.lastBuf;
  if (b >= S.numBufs || !inBuffer(b, a, n)) {
    for (b = 0; b < S.numBufs && !inBuffer(b, a, n); ++b) {
    }
    if (b == S.numBufs)
      outOfBounds(kind, a, n);
    S.lastBuf = b;
  }
  const char *name = S.bufs[b].name ? S.bufs[b].name : "";
  if (a % align)
    fail("misaligned global %s of %zu bytes at buffer #%d '%s' + offset %zu "
         "(needs %zu-byte alignment)",
         kind, n, b, name,
         size_t(a - reinterpret_cast<uintptr_t>(S.bufs[b].base)), align);
  if (Store && S.bufs[b].readOnly)
    fail("global store into read-only buffer #%d '%s'", b, name);
  (Store ? S.stats.bytesStored : S.stats.bytesLoaded) += n;
  ++(Store ? S.stats.stores : S.stats.loads);
  if (!Store)
    ++S.threadLoads[S.cur];
}

//===----------------------------------------------------------------------===//
// Asynchronous copies (cp.async)
//===----------------------------------------------------------------------===//

/// Fails where [p, p + n) of shared memory is read by a wgmma in flight: the
/// write would race with it. The threads of the block's warps' first lanes
/// are checked (a warpgroup's threads issue and wait for the same wgmma).
inline void checkNotReadByWgmma(const unsigned char *p, int n, const char *what,
                                int block = -1) {
  if (!S.wgReads)
    return;
  int first =
      block < 0 ? S.cur - S.cur % S.blockThreads : block * S.blockThreads;
  for (int t = first; t < first + S.blockThreads; t += 32)
    for (int i = 0; i < S.numWgReads[t]; ++i) {
      const WgmmaRead &r = S.wgReads[t * kMaxWgmmaReads + i];
      if (p < r.hi && r.lo < p + n)
        fail("%s writes shared memory at %p that a wgmma of thread %d still "
             "reads (its wgmma.wait_group has not come)",
             what, static_cast<const void *>(p), t % S.blockThreads);
    }
}

/// Issues a copy of `bytes` (4, 8 or 16) from global memory to shared
/// memory, of which the first `srcBytes` come from `src` and the rest are
/// zeros. It lands only when the thread waits for its group: data read
/// before then is the poison shared memory starts with.
inline void cpAsync(void *dst, const void *src, int bytes, int srcBytes) {
  if (bytes != 4 && bytes != 8 && bytes != 16)
    fail("cp.async of %d bytes (must be 4, 8 or 16)", bytes);
  if (srcBytes < 0 || srcBytes > bytes)
    fail("cp.async of %d bytes with a source size of %d", bytes, srcBytes);
  if (!inShared(dst, size_t(bytes)) ||
      reinterpret_cast<uintptr_t>(dst) % size_t(bytes))
    fail("cp.async destination %p is not %d-byte aligned shared memory", dst,
         bytes);
  if (srcBytes)
    access<false>(src, size_t(srcBytes), size_t(bytes));
  checkNotReadByWgmma(static_cast<const unsigned char *>(dst), bytes,
                      "cp.async");
  if (!S.copies) {
    S.copies = static_cast<AsyncCopy *>(std::calloc(
        size_t(kMaxRunThreads) * kMaxAsyncCopies, sizeof(AsyncCopy)));
    if (!S.copies)
      fail("cannot allocate the cp.async queues");
  }
  int t = S.cur;
  if (S.numCopies[t] == kMaxAsyncCopies)
    fail("more than %d cp.async copies in flight", kMaxAsyncCopies);
  S.copies[t * kMaxAsyncCopies + S.numCopies[t]++] = {
      static_cast<unsigned char *>(dst),
      static_cast<const unsigned char *>(src), bytes, srcBytes, S.groups[t]};
}

/// cp.async.wait_group n: lands every copy of the thread's committed groups
/// but the newest n; copies not yet committed stay in flight.
inline void cpAsyncWait(int n) {
  int t = S.cur, kept = 0;
  AsyncCopy *q = S.copies ? S.copies + t * kMaxAsyncCopies : nullptr;
  for (int i = 0; i < S.numCopies[t]; ++i) {
    AsyncCopy c = q[i];
    if (c.group < S.groups[t] - n) {
      S.unfencedCopies[t] = true;
      std::memcpy(c.dst, c.src, size_t(c.srcBytes));
      std::memset(c.dst + c.srcBytes, 0, size_t(c.bytes - c.srcBytes));
    } else {
      q[kept++] = c;
    }
  }
  S.numCopies[t] = kept;
}

template <MmaKind Kind, class A, class B>
inline nf_vec<float, 4> mma(const A &a, const B &b, const nf_vec<float, 4> &c) {
  static_assert(sizeof(A) == 16 && sizeof(B) == 8, "mma.sync fragments");
  MmaOperands o;
  std::memcpy(o.a, &a, 16);
  std::memcpy(o.b, &b, 8);
  std::memcpy(o.c, &c, 16);
  nf_vec<float, 4> d;
  warpOp(Mma, ~0u, 0, Kind, 32, &o, &d);
  return d;
}

//===----------------------------------------------------------------------===//
// Warpgroup matrix multiply-accumulate (wgmma, sm_90a)
//===----------------------------------------------------------------------===//

/// One operand of wgmma.mma_async in shared memory, as its matrix
/// descriptor gives it: the start address, whether its 16-byte chunks run
/// along M or N ("MN-major", the instruction's imm-trans) or along K, the
/// swizzle (32, 64 or 128 bytes) and the leading and stride byte offsets.
struct WgmmaOperand {
  const unsigned char *start;
  bool mnMajor;
  int swizzle, leading, stride;
};

/// The address of element (mn, k), k < 16, of a 16-bit operand in the PTX
/// ISA's canonical layouts (in elements, T = 8 of a 16-byte chunk, W = the
/// swizzle's chunks):
///   K-major:  ((8, m), (T, 2)) : ((W T, stride), (1, T))
///   MN-major: ((T, W, m), (8, k)) : ((1, T, leading), (W T, stride))
/// then swizzled as the hardware swizzles the address: its bits 4 and up
/// (W - 1 of them) XOR its bits 7 and up.
inline const unsigned char *wgmmaElement(const WgmmaOperand &o, int mn, int k) {
  size_t w = size_t(o.swizzle / 16), off;
  if (o.mnMajor)
    off = size_t(mn / 8) % w * 16 + size_t(mn / 8) / w * size_t(o.leading) +
          size_t(k % 8) * size_t(o.swizzle) + size_t(k / 8) * size_t(o.stride) +
          size_t(mn % 8) * 2;
  else
    off = size_t(mn % 8) * size_t(o.swizzle) +
          size_t(mn / 8) * size_t(o.stride) + size_t(k / 8) * 16 +
          size_t(k % 8) * 2;
  uintptr_t at = reinterpret_cast<uintptr_t>(o.start) + off;
  at ^= ((at >> 7) & (w - 1)) << 4;
  return reinterpret_cast<const unsigned char *>(at);
}

inline void checkWgmmaOperand(const WgmmaOperand &o, const char *which) {
  auto start = reinterpret_cast<uintptr_t>(o.start);
  if (o.swizzle != 32 && o.swizzle != 64 && o.swizzle != 128)
    fail("wgmma operand %s: a swizzle of %d bytes (32, 64 or 128 here)", which,
         o.swizzle);
  if (!inShared(o.start, 16) || start % 16)
    fail("wgmma operand %s starts at %p, not 16-byte aligned shared memory",
         which, static_cast<const void *>(o.start));
  // Base offset 0: the start lies in the first row of the swizzle's
  // pattern of 8 rows.
  if ((start >> 7) & uintptr_t(o.swizzle / 16 - 1))
    fail("wgmma operand %s starts at %p, not in the first row of its "
         "%d-byte swizzle's pattern (the descriptor's base offset is 0)",
         which, static_cast<const void *>(o.start), 8 * o.swizzle);
  for (int off : {o.leading, o.stride})
    if (off < 0 || off % 16 || off >= (1 << 18))
      fail("wgmma operand %s: a byte offset of %d (a multiple of 16 below "
           "2^18)",
           which, off);
}

/// wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16} of the calling
/// thread: its N / 2 accumulators d += A (64 x 16) * B (16 x N). Thread t
/// of the warpgroup (warp w = t / 32 % 4, lane l) holds, as mma.sync's
/// m16n8 C fragments side by side, d[4 j + e] at row 16 w + l / 4 + 8 (e /
/// 2), column 8 j + 2 (l % 4) + e % 2 (PTX ISA, "Register fragments" of
/// wgmma's D). Products and sums in f32, as mma.sync's. The operands'
/// shared memory is read now and recorded as in flight until the thread's
/// wgmma.wait_group retires its group; a cp.async into it before then
/// fails.
inline void wgmma(bool bf16, int n, const WgmmaOperand &a,
                  const WgmmaOperand &b, float *d) {
  int t = S.cur % S.blockThreads;
  if (S.blockThreads % 128)
    fail("wgmma in a block of %d threads (whole warpgroups of 128)",
         S.blockThreads);
  if (n < 8 || n > 256 || n % 8)
    fail("wgmma m64n%dk16 (N a multiple of 8 up to 256)", n);
  if (!S.wgFenced[S.cur])
    fail("wgmma without a wgmma.fence since the thread's last "
         "wgmma.wait_group");
  checkWgmmaOperand(a, "A");
  checkWgmmaOperand(b, "B");
  int first = S.cur - t;
  for (int u = first; u < first + S.blockThreads; ++u)
    if (S.unfencedCopies[u])
      fail("wgmma reads shared memory that cp.async copies of thread %d "
           "wrote without a fence.proxy.async after they landed",
           u - first);
  auto value = [&](const WgmmaOperand &o, int mn, int k, const char *which) {
    const unsigned char *p = wgmmaElement(o, mn, k);
    if (!inShared(p, 2))
      fail("wgmma operand %s: element (%d, %d) at %p is outside shared "
           "memory",
           which, mn, k, static_cast<const void *>(p));
    uint16_t h;
    std::memcpy(&h, p, 2);
    return bf16 ? bf16ToFloat(h) : halfToFloat(h);
  };
  int w = t / 32 % 4, l = t % 32;
  float rowA[2][16];
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 16; ++k)
      rowA[h][k] = value(a, 16 * w + l / 4 + 8 * h, k, "A");
  for (int j = 0; j < n / 8; ++j)
    for (int c = 0; c < 2; ++c) {
      int col = 8 * j + 2 * (l % 4) + c;
      float colB[16];
      for (int k = 0; k < 16; ++k)
        colB[k] = value(b, col, k, "B");
      for (int h = 0; h < 2; ++h) {
        float &acc = d[4 * j + 2 * h + c];
        for (int k = 0; k < 16; ++k)
          acc = std::fma(rowA[h][k], colB[k], acc);
      }
    }
  // What each operand reads, for the races checkNotReadByWgmma finds.
  if (!S.wgReads) {
    S.wgReads = static_cast<WgmmaRead *>(std::calloc(
        size_t(kMaxRunThreads) * kMaxWgmmaReads, sizeof(WgmmaRead)));
    if (!S.wgReads)
      fail("cannot allocate the wgmma queues");
  }
  for (int o = 0; o < 2; ++o) {
    const WgmmaOperand &op = o ? b : a;
    int rows = o ? n : 64;
    const unsigned char *lo = nullptr, *hi = nullptr;
    for (int mn = 0; mn < rows; ++mn)
      for (int k = 0; k < 16; ++k) {
        const unsigned char *p = wgmmaElement(op, mn, k);
        lo = lo && lo < p ? lo : p;
        hi = hi && hi > p + 2 ? hi : p + 2;
      }
    if (S.numWgReads[S.cur] == kMaxWgmmaReads)
      fail("more than %d wgmma operands in flight", kMaxWgmmaReads);
    S.wgReads[S.cur * kMaxWgmmaReads + S.numWgReads[S.cur]++] = {
        lo, hi, S.wgGroups[S.cur]};
  }
}

/// wgmma.wait_group n: retires the thread's committed wgmma groups but the
/// newest n (their operands' shared memory may be written again); it
/// needs a wgmma.fence before the next wgmma.
inline void wgmmaWait(int n) {
  int t = S.cur, kept = 0;
  WgmmaRead *q = S.wgReads ? S.wgReads + t * kMaxWgmmaReads : nullptr;
  for (int i = 0; i < S.numWgReads[t]; ++i)
    if (q[i].group >= S.wgGroups[t] - n)
      q[kept++] = q[i];
  S.numWgReads[t] = kept;
  S.wgFenced[t] = false;
}

//===----------------------------------------------------------------------===//
// mbarriers and TMA loads (sm_90)
//===----------------------------------------------------------------------===//

/// Block `b`'s mbarrier at `at` (an address of shared memory, the same in
/// every block), which mbarrier.init made in that block.
inline Mbarrier &blockMbarrier(int b, const void *at, const char *what) {
  if (!inShared(at, 8) || reinterpret_cast<uintptr_t>(at) % 8)
    fail("%s: %p is not an 8-byte aligned shared-memory mbarrier", what, at);
  for (int i = 0; i < S.numMbarriers; ++i)
    if (S.mbarriers[i].block == b && S.mbarriers[i].at == at)
      return S.mbarriers[i];
  if (b == S.cur / S.blockThreads)
    fail("%s on %p, which no mbarrier.init of this block made", what, at);
  fail("%s on %p of block %d of the cluster, which no mbarrier.init of that "
       "block made",
       what, at, b % S.clusterSize);
  std::abort(); // unreachable
}

/// The calling block's mbarrier at `at`, which mbarrier.init made.
inline Mbarrier &mbarrier(const void *at, const char *what) {
  return blockMbarrier(S.cur / S.blockThreads, at, what);
}

/// The running block of rank `rank` in the caller's cluster: another
/// block only after the cluster's first barrier (before it, that block
/// may not have started) and before it exits (its shared memory goes with
/// it).
inline int clusterBlock(unsigned rank, const char *what) {
  if (rank >= unsigned(S.clusterSize))
    fail("%s: block %u of a cluster of %d", what, rank, S.clusterSize);
  int self = S.cur / S.blockThreads;
  int b = int(rank) + self / S.clusterSize * S.clusterSize;
  if (b != self && S.clusterSyncs == 0)
    fail("%s: block %u of the cluster before the cluster's first barrier: "
         "that block may not have started",
         what, rank);
  if (b != self && S.live[b] == 0)
    fail("%s: block %u of the cluster has exited, and its shared memory with "
         "it",
         what, rank);
  return b;
}

/// Lets the threads waiting on `m` look at it again.
inline void wakeWaiters(const Mbarrier &m) {
  int first = m.block * S.blockThreads;
  for (int t = first; t < first + S.blockThreads; ++t)
    if (S.state[t] == AtMbarrier && S.waitsOn[t] == m.at)
      S.state[t] = Ready;
}

/// Completes the phase of `m` where nothing more is pending, and wakes its
/// waiters then.
inline void advance(Mbarrier &m) {
  if (m.pending == 0 && m.tx == 0) {
    m.phase ^= 1;
    m.pending = m.count;
    wakeWaiters(m);
  }
}

/// mbarrier.init.shared::cta.b64 [at], count.
inline void mbarrierInit(void *at, unsigned count) {
  if (!inShared(at, 8) || reinterpret_cast<uintptr_t>(at) % 8)
    fail("mbarrier.init: %p is not 8-byte aligned shared memory", at);
  if (count < 1 || count > (1u << 20) - 1)
    fail("mbarrier.init with an arrival count of %u (1 to 2^20 - 1)", count);
  int b = S.cur / S.blockThreads;
  for (int i = 0; i < S.numTmaLoads; ++i)
    if (S.tmaLoads[i].block == b && S.tmaLoads[i].bar == at)
      fail("mbarrier.init on %p while a TMA load completes on it", at);
  if (!S.mbarriers) {
    S.mbarriers =
        static_cast<Mbarrier *>(std::calloc(kMaxMbarriers, sizeof(Mbarrier)));
    S.tmaLoads =
        static_cast<TmaLoad *>(std::calloc(kMaxTmaLoads, sizeof(TmaLoad)));
    if (!S.mbarriers || !S.tmaLoads)
      fail("cannot allocate the mbarrier tables");
  }
  Mbarrier *m = nullptr;
  for (int i = 0; i < S.numMbarriers && !m; ++i)
    if (S.mbarriers[i].block == b && S.mbarriers[i].at == at)
      m = &S.mbarriers[i];
  if (!m) {
    if (S.numMbarriers == kMaxMbarriers)
      fail("more than %d mbarriers", kMaxMbarriers);
    m = &S.mbarriers[S.numMbarriers++];
  }
  *m = {b, at, int(count), int(count), 0, 0};
  // The object's bytes are opaque: a plain read sees no count.
  std::memset(at, 0, 8);
}

/// Fails where the current phase of `m` has had all its arrivals (it waits
/// for transaction bytes only): one more would be a later phase's, which
/// the hardware does not define.
inline void checkArrivalLeft(const Mbarrier &m, const char *what) {
  if (m.pending == 0)
    fail("%s on an mbarrier whose phase has had all its %d arrival(s) and "
         "waits for %lld transaction bytes",
         what, m.count, static_cast<long long>(m.tx));
}

/// mbarrier.arrive.expect_tx.shared::cta.b64 _, [at], bytes: `bytes` more
/// transaction bytes for the current phase, then one arrival.
inline void mbarrierArriveExpectTx(void *at, unsigned bytes) {
  Mbarrier &m = mbarrier(at, "mbarrier.arrive.expect_tx");
  checkArrivalLeft(m, "mbarrier.arrive.expect_tx");
  m.tx += bytes;
  --m.pending;
  advance(m);
}

/// mbarrier.arrive.shared::cta.b64 _, [at]: one arrival.
inline void mbarrierArrive(void *at) {
  Mbarrier &m = mbarrier(at, "mbarrier.arrive");
  checkArrivalLeft(m, "mbarrier.arrive");
  --m.pending;
  advance(m);
}

/// mapa + mbarrier.arrive.release.cluster.shared::cluster.b64: one arrival
/// on the mbarrier at `at` of block `rank` of the caller's cluster.
inline void mbarrierArriveCluster(void *at, unsigned rank) {
  const char *what = "mbarrier.arrive.shared::cluster";
  Mbarrier &m = blockMbarrier(clusterBlock(rank, what), at, what);
  checkArrivalLeft(m, what);
  --m.pending;
  advance(m);
}

/// The element at `coords` + `index` (per dimension) of `map`'s tensor, or
/// null outside the tensor (whose elements a TMA load reads as zero).
inline const unsigned char *tensorElement(const nf_sim_tensor_map &map,
                                          const int *coords,
                                          const uint32_t *index) {
  auto p = static_cast<const unsigned char *>(map.base);
  for (int d = 0; d < map.rank; ++d) {
    int64_t x = int64_t(coords[d]) + int64_t(index[d]);
    if (x < 0 || uint64_t(x) >= map.dims[d])
      return nullptr;
    p += uint64_t(x) * (d ? map.strides[d - 1] : uint64_t(map.elementBytes));
  }
  return p;
}

/// Bytes of one load of `map`'s box.
inline uint64_t boxBytes(const nf_sim_tensor_map &map) {
  uint64_t n = uint64_t(map.elementBytes);
  for (int d = 0; d < map.rank; ++d)
    n *= map.box[d];
  return n;
}

/// Lands TMA load `l`: the box's elements, dense with the innermost
/// dimension first, at its destination swizzled as the hardware swizzles
/// the address (bits 4 and up XOR bits 7 and up, as many as the swizzle
/// has 16-byte chunks, less one); zeros outside the tensor.
inline void landTma(const TmaLoad &l) {
  const nf_sim_tensor_map &map = l.map;
  uint64_t elements = boxBytes(map) / uint64_t(map.elementBytes);
  uintptr_t chunks = uintptr_t(map.swizzle ? map.swizzle / 16 : 1);
  uint32_t index[5] = {0, 0, 0, 0, 0};
  for (uint64_t e = 0; e < elements; ++e) {
    uint64_t rest = e;
    for (int d = 0; d < map.rank; ++d) {
      index[d] = uint32_t(rest % map.box[d]);
      rest /= map.box[d];
    }
    uintptr_t at =
        reinterpret_cast<uintptr_t>(l.dst) + e * uint64_t(map.elementBytes);
    at ^= ((at >> 7) & (chunks - 1)) << 4;
    const unsigned char *src = tensorElement(map, l.coords, index);
    if (src) {
      access<false>(src, size_t(map.elementBytes), size_t(map.elementBytes));
      std::memcpy(reinterpret_cast<void *>(at), src, size_t(map.elementBytes));
    } else {
      std::memset(reinterpret_cast<void *>(at), 0, size_t(map.elementBytes));
    }
  }
}

/// A TMA load (cp.async.bulk.tensor) of a box of `map`'s tensor from
/// `coords` (the innermost dimension first) into block `b`'s shared memory
/// at `dst`, its bytes completing on that block's mbarrier at `bar`.
inline void issueTma(int b, void *dst, const nf_sim_tensor_map &map, void *bar,
                     const int *coords, int rank, const char *what) {
  if (rank != map.rank)
    fail("a %d-d TMA load with a tensor map of rank %d", rank, map.rank);
  uint64_t bytes = boxBytes(map);
  unsigned align = map.swizzle ? 8u * unsigned(map.swizzle) : 128u;
  if (!inShared(dst, size_t(bytes)) || reinterpret_cast<uintptr_t>(dst) % align)
    fail(
        "TMA load into %p: not %u-byte aligned shared memory of the box's %llu "
        "bytes",
        dst, align, static_cast<unsigned long long>(bytes));
  Mbarrier &m = blockMbarrier(b, bar, what);
  checkNotReadByWgmma(static_cast<const unsigned char *>(dst), int(bytes),
                      "a TMA load", b);
  if (S.numTmaLoads == kMaxTmaLoads)
    fail("more than %d TMA loads in flight", kMaxTmaLoads);
  TmaLoad &l = S.tmaLoads[S.numTmaLoads++];
  l.block = b;
  l.bar = bar;
  l.dst = static_cast<unsigned char *>(dst);
  l.map = map;
  for (int d = 0; d < 5; ++d)
    l.coords[d] = d < rank ? coords[d] : 0;
  wakeWaiters(m);
}

/// cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx
/// [dst], [map, coords], [bar] of the calling thread: a box of `map`'s
/// tensor from `coords` (the innermost dimension first) into the block's
/// shared memory at `dst`, its bytes completing on `bar`.
inline void tmaLoad(void *dst, const nf_sim_tensor_map &map, void *bar,
                    const int *coords, int rank) {
  issueTma(S.cur / S.blockThreads, dst, map, bar, coords, rank,
           "cp.async.bulk.tensor");
}

/// The same with .multicast::cluster: the box lands at `dst` in every block
/// of the caller's cluster whose rank is a bit of `mask` (its own among
/// them or not), completing on each one's mbarrier at `bar`.
inline void tmaLoadMulticast(void *dst, const nf_sim_tensor_map &map, void *bar,
                             const int *coords, int rank, unsigned mask) {
  const char *what = "cp.async.bulk.tensor.multicast::cluster";
  if (mask == 0 || (mask >> S.clusterSize) != 0)
    fail("%s with a mask of 0x%x for a cluster of %d blocks", what, mask,
         S.clusterSize);
  for (int r = 0; r < S.clusterSize; ++r)
    if (mask & (1u << r))
      issueTma(clusterBlock(unsigned(r), what), dst, map, bar, coords, rank,
               what);
}

/// mbarrier.try_wait.parity in a loop: returns once the phase of parity
/// `parity` of the calling block's mbarrier at `at` has completed. The TMA
/// loads that complete on it land first.
inline void mbarrierWait(void *at, unsigned parity) {
  for (;;) {
    Mbarrier &m = mbarrier(at, "mbarrier.try_wait.parity");
    for (int i = 0; i < S.numTmaLoads;) {
      TmaLoad &l = S.tmaLoads[i];
      if (l.block != m.block || l.bar != at) {
        ++i;
        continue;
      }
      landTma(l);
      m.tx -= int64_t(boxBytes(l.map));
      l = S.tmaLoads[--S.numTmaLoads];
    }
    advance(m);
    if (unsigned(m.phase) != (parity & 1))
      return;
    S.state[S.cur] = AtMbarrier;
    S.waitsOn[S.cur] = at;
    yield();
  }
}

/// The registers a thread of the running kernel is launched with, as
/// ptxas gives a kernel bounded to one block of its threads
/// (__launch_bounds__(threads, 1)): the most that fit 65536 a block, a
/// multiple of 8, at most 255 (168 of 384 threads).
inline int launchRegisters() {
  int most = 65536 / S.blockThreads;
  return (most < 255 ? most : 255) / 8 * 8;
}

/// setmaxnreg.inc/dec.sync.aligned.u32 `n` of the calling thread (sm_90a):
/// a count of 24 to 256, a multiple of 8, no fewer (inc) or no more (dec)
/// than it holds, in a block of whole warpgroups. Whether the block's
/// registers hold what its warpgroups ask for is checked when it exits.
inline void setMaxRegisters(int n, bool increase) {
  const char *op = increase ? "inc" : "dec";
  if (S.blockThreads % 128)
    fail("setmaxnreg.%s in a block of %d threads (whole warpgroups of 128)", op,
         S.blockThreads);
  if (n < 24 || n > 256 || n % 8)
    fail("setmaxnreg.%s %d (a multiple of 8 from 24 to 256)", op, n);
  int &held = S.regs[S.cur];
  if (increase ? n < held : n > held)
    fail("setmaxnreg.%s to %d registers from the %d the thread holds", op, n,
         held);
  held = n;
}

/// Fails where block `b`, whose last thread exits, had warpgroups whose
/// threads set different register counts (setmaxnreg is .aligned: every
/// thread of the warpgroup executes it), or ask for more registers than
/// the block was launched with: on a GPU a setmaxnreg.inc would wait for
/// them forever.
inline void checkRegisters(int b) {
  int bt = S.blockThreads, first = b * bt, launched = launchRegisters();
  long long total = 0;
  bool changed = false;
  for (int t = first; t < first + bt; ++t) {
    total += S.regs[t];
    changed = changed || S.regs[t] != launched;
  }
  if (!changed)
    return;
  for (int t = first; t < first + bt; ++t)
    if (S.regs[t] != S.regs[first + (t - first) / 128 * 128])
      fail("threads of warpgroup %d hold %d and %d registers (setmaxnreg "
           "is .aligned: every thread of the warpgroup executes it)",
           (t - first) / 128, S.regs[first + (t - first) / 128 * 128],
           S.regs[t]);
  if (total > (long long)launched * bt)
    fail("the warpgroups ask for %lld registers, the block was launched with "
         "%lld (%d a thread): a setmaxnreg.inc would wait forever",
         total, (long long)launched * bt, launched);
}

/// Fails where block `b`, whose last thread exits, has TMA loads in flight.
inline void checkNoTmaLoads(int b) {
  for (int i = 0; i < S.numTmaLoads; ++i)
    if (S.tmaLoads[i].block == b)
      fail("the block exits with a TMA load in flight (no thread waited on "
           "its mbarrier)");
}

} // namespace
} // namespace nf_sim

//===----------------------------------------------------------------------===//
// Device-side API
//===----------------------------------------------------------------------===//

template <class T> inline T nf_ldg(const T *p) {
  nf_sim::access<false>(p, sizeof(T), alignof(T));
  return *p;
}
template <class T> inline void nf_stg(T *p, T v) {
  nf_sim::access<true>(p, sizeof(T), alignof(T));
  *p = v;
}
template <class T> inline T __ldg(const T *p) { return nf_ldg(p); }
/// A streaming store: the same store here (no cache is modelled).
template <class T> inline void nf_stcs(T *p, T v) { nf_stg(p, v); }

#define NF_SIM_SHUFFLE(NAME, OP, ARG)                                          \
  template <class T>                                                           \
  inline T NAME(unsigned mask, T var, ARG arg, int width = 32) {               \
    return nf_sim::fromBits<T>(nf_sim::warpOp(                                 \
        nf_sim::OP, mask, nf_sim::toBits(var), int(arg), width));              \
  }
NF_SIM_SHUFFLE(__shfl_sync, Idx, int)
NF_SIM_SHUFFLE(__shfl_up_sync, Up, unsigned)
NF_SIM_SHUFFLE(__shfl_down_sync, Down, unsigned)
NF_SIM_SHUFFLE(__shfl_xor_sync, Xor, int)
#undef NF_SIM_SHUFFLE

inline unsigned __ballot_sync(unsigned mask, int pred) {
  return unsigned(nf_sim::warpOp(nf_sim::Ballot, mask, pred != 0, 0, 32));
}
inline int __any_sync(unsigned mask, int pred) {
  return int(nf_sim::warpOp(nf_sim::Any, mask, pred != 0, 0, 32));
}
inline int __all_sync(unsigned mask, int pred) {
  return int(nf_sim::warpOp(nf_sim::All, mask, pred != 0, 0, 32));
}
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  nf_sim::warpOp(nf_sim::SyncWarp, mask, 0, 0, 32);
}
/// Tensor cores: what the printed prelude defines with PTX under CUDA.
/// D = A * B + C for one m16n8k16 tile (mma.sync .row.col, f32
/// accumulators); a, b and c are the lane's fragments.
inline nf_vec<float, 4>
nf_mma_m16n8k16(nf_vec<__half, 8> a, nf_vec<__half, 4> b, nf_vec<float, 4> c) {
  return nf_sim::mma<nf_sim::MmaF16>(a, b, c);
}
inline nf_vec<float, 4> nf_mma_m16n8k16(nf_vec<__nv_bfloat16, 8> a,
                                        nf_vec<__nv_bfloat16, 4> b,
                                        nf_vec<float, 4> c) {
  return nf_sim::mma<nf_sim::MmaBF16>(a, b, c);
}
/// D = A * B + C for one m16n8k8 tile on f32 data as tf32 (mma.sync .row.col
/// .tf32, f32 accumulators): each A and B element rounded to tf32 first
/// (cvt.rna.tf32.f32).
inline nf_vec<float, 4> nf_mma_m16n8k8_tf32(nf_vec<float, 4> a,
                                            nf_vec<float, 2> b,
                                            nf_vec<float, 4> c) {
  return nf_sim::mma<nf_sim::MmaTf32>(a, b, c);
}
/// ldmatrix.sync.aligned.m8n8.xN(.trans).shared.b16: N 8x8 matrices of
/// 16-bit elements (8x4 of 32-bit ones) whose rows lanes 0 to 8N - 1
/// address, at `row` + Disp elements.
template <int N, bool Trans, int Disp = 0, class T>
inline nf_vec<T, N * 4 / int(sizeof(T))> nf_ldmatrix(const T *row) {
  row += Disp;
  static_assert((sizeof(T) == 2 || (sizeof(T) == 4 && !Trans)) &&
                    (N == 1 || N == 2 || N == 4),
                "ldmatrix loads 1, 2 or 4 matrices of 16-bit elements (or "
                "of 32-bit ones, as pairs of them, without .trans)");
  nf_vec<T, N * 4 / int(sizeof(T))> r;
  nf_sim::warpOp(nf_sim::LdMatrix, ~0u, 0, N | (Trans ? 8 : 0), 32, row, &r);
  return r;
}
/// cp.async of Bytes bytes from global to shared memory at `smem` + Disp
/// bytes, the first `srcBytes` read from `global` and the rest zero.
template <int Bytes, int Disp = 0>
inline void nf_cp_async(void *smem, const void *global, int srcBytes) {
  nf_sim::cpAsync(static_cast<char *>(smem) + Disp, global, Bytes, srcBytes);
}
inline void nf_cp_async_commit() { ++nf_sim::S.groups[nf_sim::S.cur]; }
/// st.shared::cluster at `p` (an address of the caller's shared memory)
/// mapped to block `rank` of its cluster (mapa): that block's copy of the
/// variable. The block must not have exited.
template <class T> inline void nf_cluster_st(T *p, unsigned rank, T v) {
  unsigned char *at =
      nf_sim::clusterShared(p, sizeof(T), rank, "nf_cluster_st");
  if (int(rank) != nf_sim::S.cur / nf_sim::S.blockThreads) {
    // CUDA: a block may not have started before the cluster's first barrier.
    if (nf_sim::S.clusterSyncs == 0)
      nf_sim::fail("nf_cluster_st into block %u before the cluster's first "
                   "barrier: that block may not have started",
                   rank);
    ++nf_sim::S.stats.clusterStores;
  }
  std::memcpy(at, &v, sizeof(T));
}
template <int N> inline void nf_cp_async_wait() { nf_sim::cpAsyncWait(N); }
/// wgmma (sm_90a): the prelude's wrappers of wgmma.mma_async (m64nNk16,
/// f32 accumulators, both operands in shared memory by descriptors whose
/// layouts the template arguments give), wgmma.fence, commit_group and
/// wait_group, and fence.proxy.async.shared::cta.
template <int N, bool MnA, bool MnB, int SwA, int LboA, int SboA, int SwB,
          int LboB, int SboB, class T>
inline nf_vec<float, N / 2> nf_wgmma(const T *a, const T *b,
                                     nf_vec<float, N / 2> d) {
  static_assert(sizeof(T) == 2, "wgmma here takes f16 or bf16 operands");
  nf_sim::wgmma(
      std::is_same<T, __nv_bfloat16>::value, N,
      {reinterpret_cast<const unsigned char *>(a), MnA, SwA, LboA, SboA},
      {reinterpret_cast<const unsigned char *>(b), MnB, SwB, LboB, SboB}, d.v);
  return d;
}
inline void nf_wgmma_fence() { nf_sim::S.wgFenced[nf_sim::S.cur] = true; }
inline void nf_wgmma_commit() { ++nf_sim::S.wgGroups[nf_sim::S.cur]; }
template <int N> inline void nf_wgmma_wait() { nf_sim::wgmmaWait(N); }
/// The accumulators, read only after the wait before it.
template <int N>
inline nf_vec<float, N> nf_wgmma_fence_operand(nf_vec<float, N> d) {
  return d;
}
inline void nf_fence_proxy_async() {
  nf_sim::S.unfencedCopies[nf_sim::S.cur] = false;
}
template <bool Increase, int N> inline void nf_setmaxnreg() {
  nf_sim::setMaxRegisters(N, Increase);
}

/// A TMA tensor map parameter: CUDA's 128 opaque bytes (CUtensorMap); here
/// the runtime's nf_sim_tensor_map in them.
struct alignas(64) nf_tensor_map {
  union {
    nf_sim_tensor_map map;
    unsigned long long opaque[16];
  };
};
static_assert(sizeof(nf_tensor_map) == 128, "CUtensorMap's 128 bytes");
/// mbarriers and TMA loads (sm_90): the prelude's wrappers of
/// mbarrier.init, fence.mbarrier_init, mbarrier.arrive(.expect_tx), the
/// arrival on a block of the cluster's, mbarrier.try_wait.parity (until it
/// succeeds) and cp.async.bulk.tensor (.multicast::cluster).
inline void nf_mbarrier_init(long long *bar, unsigned count) {
  nf_sim::mbarrierInit(bar, count);
}
inline void nf_mbarrier_init_fence() {}
inline void nf_mbarrier_arrive_expect_tx(long long *bar, unsigned bytes) {
  nf_sim::mbarrierArriveExpectTx(bar, bytes);
}
inline void nf_mbarrier_arrive(long long *bar) { nf_sim::mbarrierArrive(bar); }
inline void nf_mbarrier_arrive_cluster(long long *bar, unsigned rank) {
  nf_sim::mbarrierArriveCluster(bar, rank);
}
inline void nf_mbarrier_wait(long long *bar, unsigned parity) {
  nf_sim::mbarrierWait(bar, parity);
}
template <int Rank>
inline void nf_tma_load(void *smem, const nf_tensor_map &map, long long *bar,
                        int c0, int c1, int c2 = 0) {
  static_assert(Rank == 2 || Rank == 3, "TMA loads of rank 2 or 3 here");
  int coords[3] = {c0, c1, c2};
  nf_sim::tmaLoad(smem, map.map, bar, coords, Rank);
}
template <int Rank>
inline void nf_tma_load_multicast(void *smem, const nf_tensor_map &map,
                                  long long *bar, unsigned short mask, int c0,
                                  int c1, int c2 = 0) {
  static_assert(Rank == 2 || Rank == 3, "TMA loads of rank 2 or 3 here");
  int coords[3] = {c0, c1, c2};
  nf_sim::tmaLoadMulticast(smem, map.map, bar, coords, Rank, mask);
}

/// The lanes of the caller's warp that exist and have not exited.
inline unsigned __activemask() {
  int w = nf_sim::S.cur / 32;
  return nf_sim::existing(w) & ~nf_sim::S.exited[w];
}

//===----------------------------------------------------------------------===//
// Exported entry points (see CudaSimABI.h)
//===----------------------------------------------------------------------===//

#define NF_SIM_EXPORT extern "C" __attribute__((visibility("default"), used))

NF_SIM_EXPORT int nf_sim_abi_version(void) { return NF_SIM_ABI_VERSION; }
NF_SIM_EXPORT int nf_sim_num_kernels(void) { return nf_sim::S.numKernels; }
NF_SIM_EXPORT const char *nf_sim_kernel_name(int i) {
  return i >= 0 && i < nf_sim::S.numKernels ? nf_sim::S.kernels[i].name
                                            : nullptr;
}
NF_SIM_EXPORT int nf_sim_kernel_num_params(int i) {
  return i >= 0 && i < nf_sim::S.numKernels ? nf_sim::S.kernels[i].numParams
                                            : -1;
}

NF_SIM_EXPORT int nf_sim_launch(const char *kernel, const unsigned grid[3],
                                const unsigned block[3],
                                size_t dynamicSmemBytes, void **args,
                                int numArgs, const nf_sim_buffer *buffers,
                                int numBuffers, int order, unsigned seed,
                                nf_sim_stats *stats, char *error,
                                size_t errorSize) {
  using namespace nf_sim;
  S.err = error;
  S.errSize = errorSize;
  if (error && errorSize)
    error[0] = 0;
  if (stats)
    *stats = nf_sim_stats();
  if (S.busy) {
    appendError("concurrent launches into one simulator module");
    return 1;
  }
  S.kernel = nullptr;
  for (int i = 0; i < S.numKernels && kernel && !S.kernel; ++i)
    if (std::strcmp(S.kernels[i].name, kernel) == 0)
      S.kernel = &S.kernels[i];
  uint64_t threads = uint64_t(block[0]) * block[1] * block[2];
  int cluster = S.kernel ? S.kernel->cluster : 1;
  bool wholeGrid = cluster == kWholeGrid;
  // The blocks that run together: a cluster, or the whole grid.
  if (wholeGrid)
    cluster =
        grid[0] >= 1 && grid[0] <= unsigned(kMaxRunBlocks) ? int(grid[0]) : 0;
  bool valid = false;
  if (!S.kernel)
    appendError("unknown kernel '%s'", kernel ? kernel : "(null)");
  else if (numArgs >= 0 && numArgs != S.kernel->numParams)
    appendError("kernel '%s' takes %d arguments, but %d were given", kernel,
                S.kernel->numParams, numArgs);
  else if (block[0] > 1024 || block[1] > 1024 || block[2] > 64 ||
           threads == 0 || threads > kMaxThreads)
    appendError("kernel '%s': invalid block (%u,%u,%u)", kernel, block[0],
                block[1], block[2]);
  else if (!grid[0] || !grid[1] || !grid[2] || grid[0] > 0x7fffffffu ||
           grid[1] > 65535 || grid[2] > 65535)
    appendError("kernel '%s': invalid grid (%u,%u,%u)", kernel, grid[0],
                grid[1], grid[2]);
  else if (dynamicSmemBytes > kMaxDynSmem)
    appendError("kernel '%s': %zu bytes of dynamic shared memory exceed %zu",
                kernel, dynamicSmemBytes, kMaxDynSmem);
  else if (order < NF_SIM_ORDER_FORWARD || order > NF_SIM_ORDER_STAGGER)
    appendError("invalid thread order %d", order);
  else if (wholeGrid &&
           (cluster == 0 || grid[1] != 1 || grid[2] != 1 ||
            threads * unsigned(cluster) > kMaxRunThreads || threads % 32))
    appendError("kernel '%s' synchronizes its grid, whose blocks the simulator "
                "runs together: grid (%u,%u,%u) of blocks of %u threads is "
                "not at most %d blocks along x of whole warps, %d threads in "
                "all",
                kernel, grid[0], grid[1], grid[2], unsigned(threads),
                kMaxRunBlocks, kMaxRunThreads);
  else if (grid[0] % unsigned(cluster))
    appendError("kernel '%s': grid (%u,%u,%u) is not a whole number of "
                "clusters of %d blocks",
                kernel, grid[0], grid[1], grid[2], cluster);
  else if (cluster > 1 && threads % 32)
    appendError("kernel '%s': a cluster's blocks of %u threads are not whole "
                "warps (the simulator's clusters need them)",
                kernel, unsigned(threads));
  else if (!mapStacks(int(threads) * cluster))
    appendError("kernel '%s': cannot map fiber stacks", kernel);
  else
    valid = true;
  if (!valid)
    return 1;

  S.busy = true;
  S.failed = false;
  S.args = args;
  S.bufs = buffers;
  S.numBufs = buffers ? numBuffers : 0;
  S.lastBuf = 0;
  S.order = order;
  S.rng = seed;
  S.stats = nf_sim_stats();
  S.blockThreads = int(threads);
  S.blocks = cluster;
  S.clusterSize = wholeGrid ? 1 : cluster;
  S.n = int(threads) * cluster;
  S.dynBytes = dynamicSmemBytes;
  S.dynPoison = dynamicSmemBytes + 1024 < kMaxDynSmem ? dynamicSmemBytes + 1024
                                                      : kMaxDynSmem;
  S.imageBytes = size_t(__stop_nf_smem - __start_nf_smem) + S.dynPoison;
  if (cluster > 1 && S.imageBytes * size_t(cluster) > S.imageCap) {
    std::free(S.images);
    S.imageCap = S.imageBytes * size_t(cluster);
    S.images = static_cast<unsigned char *>(std::malloc(S.imageCap));
    if (!S.images) {
      S.imageCap = 0;
      appendError("kernel '%s': cannot allocate the cluster's shared memory",
                  kernel);
      releaseStacks();
      S.busy = false;
      return 1;
    }
  }
  blockDim = dim3(block[0], block[1], block[2]);
  gridDim = dim3(grid[0], grid[1], grid[2]);
  for (unsigned z = 0; z < grid[2] && !S.failed; ++z)
    for (unsigned y = 0; y < grid[1] && !S.failed; ++y)
      for (unsigned x = 0; x < grid[0] && !S.failed; x += unsigned(cluster)) {
        for (int b = 0; b < cluster; ++b)
          S.bids[b] = {x + unsigned(b), y, z};
        if (!runCluster())
          break;
        for (int t = 0; t < S.n; ++t)
          S.stats.maxThreadLoads = S.threadLoads[t] > S.stats.maxThreadLoads
                                       ? S.threadLoads[t]
                                       : S.stats.maxThreadLoads;
        S.stats.blocks += unsigned(cluster);
        S.stats.threads += uint64_t(S.n);
      }
  if (stats)
    *stats = S.stats;
  // The stacks go back after every launch: a process that keeps many
  // modules loaded (the JIT's cache) would otherwise keep two mappings per
  // fiber of each, and run out of mappings (vm.max_map_count) after a few
  // hundred modules.
  releaseStacks();
  S.busy = false;
  return S.failed ? 1 : 0;
}

#endif // NORMFUSE_RUNTIME_SIM_NF_CUDA_SIM_H
