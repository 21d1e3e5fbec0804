//===- HostMemory.h - the machine's memory, for size checks -----*- C++ -*-===//
//
// Part of normfuse. Sizes that come from input (.npy headers, manifests,
// the shapes of an IR function) are checked against the machine's memory
// before anything is allocated; this is the bound they are checked against.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_HOSTMEMORY_H
#define NORMFUSE_RUNTIME_HOSTMEMORY_H

#include <cstdint>

namespace normfuse::runtime {

/// The machine's physical memory in bytes (sysconf), or UINT64_MAX where
/// the system does not say.
uint64_t physicalMemoryBytes();

} // namespace normfuse::runtime

#endif // NORMFUSE_RUNTIME_HOSTMEMORY_H
