//===- BufferCache.cpp - reuse of the JIT'd code's large buffers -*- C++
//-*-===//
//
// Part of normfuse. See BufferCache.h.
//
//===----------------------------------------------------------------------===//

#include "BufferCache.h"

#include "normfuse/JIT/JIT.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <vector>

using namespace normfuse::jit;
using buffer_cache::kBlockAlignment;

namespace {

/// What sits in front of every block: the capacity of its size class.
/// A cache line, so that blocks start on one.
struct alignas(kBlockAlignment) Header {
  size_t capacity;
};
static_assert(sizeof(Header) == kBlockAlignment, "blocks start on a line");

struct Cache {
  std::mutex mutex;
  /// Idle blocks (their headers) by capacity.
  std::unordered_map<size_t, std::vector<Header *>> idle;
  BufferCacheStats stats;
};

Cache &getCache() {
  // Never destroyed: kernels may free blocks from static destructors.
  static Cache *cache = [] {
    auto *c = new Cache;
    c->stats.limitBytes = size_t(1) << 30;
    return c;
  }();
  return *cache;
}

/// Frees idle blocks (largest class first) until at most `keep` bytes are
/// idle. Called with the mutex held; returns the headers to free.
std::vector<Header *> evictDownTo(Cache &c, size_t keep) {
  std::vector<Header *> evicted;
  while (c.stats.idleBytes > keep) {
    auto largest = c.idle.end();
    for (auto it = c.idle.begin(); it != c.idle.end(); ++it)
      if (!it->second.empty() &&
          (largest == c.idle.end() || it->first > largest->first))
        largest = it;
    Header *h = largest->second.back();
    largest->second.pop_back();
    c.stats.idleBytes -= h->capacity;
    --c.stats.idleBlocks;
    evicted.push_back(h);
  }
  return evicted;
}

void freeAll(const std::vector<Header *> &headers) {
  for (Header *h : headers)
    std::free(h);
}

} // namespace

size_t buffer_cache::roundToClass(size_t bytes) {
  if (bytes < kMinCachedBytes || bytes > std::numeric_limits<size_t>::max() / 4)
    return bytes;
  size_t base = std::max(bytes - kClassSlack, kMinCachedBytes);
  size_t power = size_t(1) << (63 - __builtin_clzll(base));
  size_t quarter = power / 4;
  return power + (base - power + quarter - 1) / quarter * quarter + kClassSlack;
}

void *buffer_cache::allocate(size_t bytes) {
  if (bytes > std::numeric_limits<size_t>::max() - sizeof(Header) * 2)
    return nullptr;
  size_t capacity = roundToClass(bytes);
  if (capacity >= kMinCachedBytes) {
    Cache &c = getCache();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.idle.find(capacity);
    if (it != c.idle.end() && !it->second.empty()) {
      Header *h = it->second.back();
      it->second.pop_back();
      c.stats.idleBytes -= capacity;
      --c.stats.idleBlocks;
      ++c.stats.reused;
      return h + 1;
    }
    ++c.stats.allocated;
  }
  // aligned_alloc wants a multiple of the alignment.
  size_t total = (sizeof(Header) + capacity + kBlockAlignment - 1) /
                 kBlockAlignment * kBlockAlignment;
  auto *h = static_cast<Header *>(std::aligned_alloc(kBlockAlignment, total));
  if (!h)
    return nullptr;
  h->capacity = capacity;
  return h + 1;
}

void buffer_cache::release(void *block) {
  if (!block)
    return;
  Header *h = static_cast<Header *>(block) - 1;
  if (h->capacity >= kMinCachedBytes) {
    Cache &c = getCache();
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.stats.idleBytes + h->capacity <= c.stats.limitBytes) {
      c.idle[h->capacity].push_back(h);
      c.stats.idleBytes += h->capacity;
      ++c.stats.idleBlocks;
      return;
    }
  }
  std::free(h);
}

static std::atomic<int> &users() {
  static std::atomic<int> count{0};
  return count;
}

void buffer_cache::addUser() { ++users(); }

void buffer_cache::removeUser() {
  if (--users() == 0)
    releaseBufferCache();
}

int buffer_cache::getUsers() { return users(); }

BufferCacheStats normfuse::jit::getBufferCacheStats() {
  Cache &c = getCache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.stats;
}

void normfuse::jit::setBufferCacheLimit(size_t bytes) {
  Cache &c = getCache();
  std::vector<Header *> evicted;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.stats.limitBytes = bytes;
    evicted = evictDownTo(c, bytes);
  }
  freeAll(evicted);
}

void normfuse::jit::releaseBufferCache() {
  Cache &c = getCache();
  std::vector<Header *> evicted;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    evicted = evictDownTo(c, 0);
  }
  freeAll(evicted);
}
