//===- BufferCache.h - reuse of the JIT'd code's large buffers ---*- C++
//-*-===//
//
// Part of normfuse. The memory a compiled kernel allocates for itself (its
// intermediate tensors and scratch; outputs are the caller's) comes from
// `malloc` and goes back through `free` before the call returns. glibc
// serves large blocks with fresh pages from the kernel: each call of a
// multi-kernel function then pays page faults and zeroing for every large
// intermediate, which can cost more than the kernels that fill them.
//
// A kernel compiled with CPUOptions::cacheBuffers calls `allocate` and
// `release` instead. Blocks of at least kMinCachedBytes are rounded up to a
// size class (four per power of two, plus a page) and, when freed, kept in a
// free list per class while the idle total stays under the limit; the next
// request of that class reuses one (last freed first: its pages are likely
// still in cache). Smaller blocks are not kept. Every block starts on a cache
// line (64 bytes), behind a header of one line holding its class: glibc's large
// blocks start 16 bytes past a page, so that every other 32-byte vector
// load of a row would straddle two lines.
//
// All functions are thread-safe: the free lists take a mutex, blocks under
// the threshold take no lock.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_JIT_BUFFERCACHE_H
#define NORMFUSE_LIB_JIT_BUFFERCACHE_H

#include <cstddef>
#include <cstdint>

namespace normfuse::jit::buffer_cache {

/// Blocks smaller than this are not cached (glibc serves them from its
/// heap without fresh pages anyway).
constexpr size_t kMinCachedBytes = size_t(128) << 10;
/// The alignment of every block.
constexpr size_t kBlockAlignment = 64;

/// What each size class holds past its nominal size: the lowering of an
/// aligned memref.alloc asks for its bytes plus the alignment, and a tensor
/// of 512 KiB should not take a class of 640 KiB.
constexpr size_t kClassSlack = 4096;

/// The capacity of the size class a request of `bytes` gets: `bytes`
/// itself under kMinCachedBytes, else kClassSlack plus the smallest of 2^k,
/// 1.25 * 2^k, 1.5 * 2^k, 1.75 * 2^k (and at least kMinCachedBytes) that
/// holds `bytes - kClassSlack`.
size_t roundToClass(size_t bytes);

/// malloc's contract: at least `bytes` usable bytes (aligned to
/// kBlockAlignment), or null when memory is exhausted.
void *allocate(size_t bytes);
/// free's contract: `block` from `allocate`, or null.
void release(void *block);

/// Counts the JITs alive: the last one to go (removeUser to 0) frees the
/// idle blocks.
void addUser();
void removeUser();
int getUsers();

} // namespace normfuse::jit::buffer_cache

#endif // NORMFUSE_LIB_JIT_BUFFERCACHE_H
