//===- StridedCopy.h - memref.copy between strided views --------*- C++ -*-===//
//
// Part of normfuse. What a `memref.copy` between two strided views lowers
// to on the host: a call of `memrefCopy(elementBytes, source, target)` with
// unranked descriptors. MLIR's C runner utilities define it in a shared
// library that links Debian's libLLVM.so; normfuse links LLVM statically, so
// the JIT defines the call itself (HostKernel registers it by that name).
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_JIT_STRIDEDCOPY_H
#define NORMFUSE_LIB_JIT_STRIDEDCOPY_H

#include <cstdint>

namespace normfuse::jit {

/// An unranked memref as the lowered code passes it: its rank and a
/// pointer to the ranked descriptor {allocated, aligned, offset,
/// sizes[rank], strides[rank]}.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

/// Copies every element of `source` into `target` (same rank and sizes;
/// strides and offsets in elements of `elementBytes` bytes). Contiguous
/// innermost runs are copied with memcpy.
extern "C" void normfuseStridedCopy(int64_t elementBytes,
                                    UnrankedMemRef *source,
                                    UnrankedMemRef *target);

} // namespace normfuse::jit

#endif // NORMFUSE_LIB_JIT_STRIDEDCOPY_H
