/*===- Arc4Random.c - arc4random for LLVM's Support on glibc < 2.36 ------===*\
|*                                                                          *|
|* Part of normfuse. LLVM's Support library (Process.cpp) calls arc4random, *|
|* which glibc has since 2.36 only. normfuse links LLVM statically          *|
|* (NF_LINK_LLVM_STATIC), so this definition takes its place, and the       *|
|* tools, tests and Python module of the device bundle load on glibc 2.34   *|
|* and 2.35 too (Ubuntu 22.04's CUDA images). It is pulled out of NFSupport *|
|* by `-Wl,--undefined=arc4random` on everything that links NFSupport.      *|
|*                                                                          *|
\*===----------------------------------------------------------------------===*/

#include <errno.h>
#include <stdint.h>
#include <sys/random.h>

uint32_t arc4random(void) {
  uint32_t value = 0;
  /* getrandom of 4 bytes from the urandom pool does not block once the pool
     is initialized and is not cut short by signals below 256 bytes; retry
     on EINTR all the same. */
  while (getrandom(&value, sizeof value, 0) != (ssize_t)sizeof value &&
         errno == EINTR) {
  }
  return value;
}
