//===- GpuOps.cpp - nf ops inside GPU kernels -------------------*- C++ -*-===//
//
// Part of normfuse. The verifier of nf.warpgroup_mma, the one op inside GPU
// kernels whose attributes can disagree: wgmma's shapes and the fields of
// its shared-memory matrix descriptors.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Dialect/NF/IR/NFOps.h"

using namespace mlir;
using namespace mlir::nf;

LogicalResult WarpgroupMmaOp::verify() {
  int64_t n = getN();
  if (n != 64 && n != 128 && n != 256)
    return emitOpError() << "n must be 64, 128 or 256, not " << n;
  if (getAcc().getType().getNumElements() != n / 2)
    return emitOpError() << "a thread holds n / 2 = " << n / 2
                         << " accumulators of an m64n" << n << " tile, not "
                         << getAcc().getType().getNumElements();
  auto operand = [&](const char *which, int64_t swizzle, int64_t leading,
                     int64_t stride) -> LogicalResult {
    if (swizzle != 32 && swizzle != 64 && swizzle != 128)
      return emitOpError() << which << "_swizzle must be 32, 64 or 128 bytes";
    for (int64_t offset : {leading, stride})
      if (offset < 16 || offset % 16 || offset >= (int64_t(1) << 18))
        return emitOpError()
               << which
               << "'s byte offsets must be multiples of 16 from 16 to 2^18 - "
                  "16 (14 bits of 16 bytes), not "
               << offset;
    return success();
  };
  if (failed(operand("a", getASwizzle(), getALeading(), getAStride())) ||
      failed(operand("b", getBSwizzle(), getBLeading(), getBStride())))
    return failure();
  return success();
}
