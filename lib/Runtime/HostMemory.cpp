//===- HostMemory.cpp - the machine's memory, for size checks -------------===//
//
// Part of normfuse. See HostMemory.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/HostMemory.h"

#include <limits>
#include <unistd.h>

uint64_t normfuse::runtime::physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0)
    return std::numeric_limits<uint64_t>::max();
  return uint64_t(pages) * uint64_t(pageSize);
}
