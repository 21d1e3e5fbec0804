//===- GpuOps.cpp - nf ops inside GPU kernels -------------------*- C++ -*-===//
//
// Part of normfuse. The verifiers of the GPU lowering's ops whose
// attributes can disagree: nf.warpgroup_mma (wgmma's shapes and the fields
// of its shared-memory matrix descriptors), nf.tensor_map (what
// cuTensorMapEncodeTiled accepts), nf.tma_load and nf.named_barrier.
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

LogicalResult TensorMapOp::verify() {
  ArrayRef<int64_t> dims = getDims(), strides = getStrides(), box = getBox();
  int64_t rank = int64_t(dims.size());
  if (rank < 2 || rank > 3)
    return emitOpError() << "tensor maps of 2 or 3 dimensions here, not "
                         << rank;
  if (int64_t(strides.size()) != rank - 1 || int64_t(box.size()) != rank)
    return emitOpError() << "a tensor map of " << rank << " dimensions takes "
                         << rank - 1 << " strides and " << rank << " box sizes";
  for (int64_t d : dims)
    if (d < 1 || d > (int64_t(1) << 32))
      return emitOpError() << "dimensions must be 1 to 2^32 elements, not "
                           << d;
  for (int64_t s : strides)
    if (s < 16 || s % 16 || s >= (int64_t(1) << 40))
      return emitOpError() << "strides must be multiples of 16 bytes below "
                              "2^40, not "
                           << s;
  for (int64_t b : box)
    if (b < 1 || b > 256)
      return emitOpError() << "box sizes must be 1 to 256 elements, not " << b;
  int64_t swizzle = getSwizzle();
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitOpError() << "swizzle must be 0, 32, 64 or 128 bytes, not "
                         << swizzle;
  int64_t elementBytes =
      getBuffer().getType().getElementType().getIntOrFloatBitWidth() / 8;
  int64_t inner = box[0] * elementBytes;
  if (inner % 16)
    return emitOpError() << "the box's rows must be multiples of 16 bytes, not "
                         << inner;
  if (swizzle && inner > swizzle)
    return emitOpError() << "the box's rows of " << inner
                         << " bytes are wider than the " << swizzle
                         << "-byte swizzle";
  return success();
}

LogicalResult TmaLoadOp::verify() {
  size_t rank = getCoords().size();
  if (rank < 2 || rank > 3)
    return emitOpError() << "TMA loads of 2 or 3 coordinates here, not "
                         << rank;
  return success();
}

LogicalResult NamedBarrierOp::verify() {
  if (getThreads() % 32)
    return emitOpError() << "a named barrier waits for whole warps: "
                         << getThreads() << " threads is not a multiple of 32";
  return success();
}

LogicalResult SetMaxRegistersOp::verify() {
  int64_t count = getCount();
  if (count < 24 || count > 256 || count % 8)
    return emitOpError() << "setmaxnreg counts are multiples of 8 from 24 to "
                            "256 registers a thread, not "
                         << count;
  return success();
}
