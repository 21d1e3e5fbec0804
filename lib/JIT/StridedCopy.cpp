//===- StridedCopy.cpp - memref.copy between strided views ------*- C++ -*-===//
//
// Part of normfuse. See StridedCopy.h.
//
//===----------------------------------------------------------------------===//

#include "StridedCopy.h"

#include <cstring>
#include <vector>

using namespace normfuse::jit;

namespace {

/// A ranked descriptor read through its layout: two pointers, the offset,
/// then `rank` sizes and `rank` strides.
struct View {
  char *aligned;
  int64_t offset;
  const int64_t *sizes;
  const int64_t *strides;
};

View readView(const UnrankedMemRef &memref) {
  auto *pointers = static_cast<char **>(memref.descriptor);
  auto *integers = reinterpret_cast<const int64_t *>(pointers + 2);
  return {pointers[1], integers[0], integers + 1, integers + 1 + memref.rank};
}

} // namespace

extern "C" void normfuse::jit::normfuseStridedCopy(int64_t elementBytes,
                                                   UnrankedMemRef *source,
                                                   UnrankedMemRef *target) {
  int64_t rank = source->rank;
  View from = readView(*source), to = readView(*target);
  char *src = from.aligned + from.offset * elementBytes;
  char *dst = to.aligned + to.offset * elementBytes;
  for (int64_t d = 0; d < rank; ++d)
    if (from.sizes[d] == 0)
      return;
  if (rank == 0) {
    std::memcpy(dst, src, elementBytes);
    return;
  }
  // The innermost dimension, copied as one run where both views are
  // contiguous along it.
  int64_t inner = rank - 1;
  int64_t count = from.sizes[inner];
  bool contiguous = from.strides[inner] == 1 && to.strides[inner] == 1;
  std::vector<int64_t> index(rank, 0);
  while (true) {
    if (contiguous) {
      std::memcpy(dst, src, count * elementBytes);
    } else {
      for (int64_t i = 0; i < count; ++i)
        std::memcpy(dst + i * to.strides[inner] * elementBytes,
                    src + i * from.strides[inner] * elementBytes, elementBytes);
    }
    // Step the outer dimensions like an odometer.
    int64_t d = inner - 1;
    for (; d >= 0; --d) {
      src += from.strides[d] * elementBytes;
      dst += to.strides[d] * elementBytes;
      if (++index[d] < from.sizes[d])
        break;
      src -= from.strides[d] * from.sizes[d] * elementBytes;
      dst -= to.strides[d] * to.sizes[d] * elementBytes;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}
