//===- GroupNormGradOneKernel.h - a group norm gradient in one launch -*- C++
//-*-===//
//
// Part of normfuse. The one-kernel variant of a group or instance norm
// gradient in NHWC of a known channel count (GroupNormGradSchedule::
// OneKernel): the partial sums, their totals, the group sums, dscale,
// dbias and dx in one cooperative launch, with two grid barriers.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_CODEGEN_CUDA_GROUPNORMGRADONEKERNEL_H
#define NORMFUSE_LIB_CODEGEN_CUDA_GROUPNORMGRADONEKERNEL_H

#include "normfuse/Codegen/CUDA/Schedule.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::nf::cuda {

/// A gradient's flat buffers (`scale` null where it has none) and sizes:
/// `images` and `spatial` host index values, the channels and groups
/// constants (groups = channels for an instance norm); sums in `acc`.
struct GroupNormGradBuffers {
  Value dy, x, mean, rstd, scale, dx, dscale, dbias;
  Value images, spatial;
  int64_t channels = 0, groups = 0;
  Type acc;
};

/// Emits kernel `<base>_one_kernel` under `s` and launches it (before the
/// builder's point) where the device holds every block of its grid, as
/// decided when the kernels are loaded. Returns a host index value: 0
/// where it runs, 1 where it does not (an empty tensor, or more images
/// than the device holds blocks), which the other kernels' grids are
/// multiplied by.
Value emitGroupNormGradOneKernel(OpBuilder &b, Location loc, ModuleOp module,
                                 const std::string &base,
                                 const GroupNormGradBuffers &in,
                                 const GroupNormGradSchedule::OneKernel &s,
                                 const GpuTarget &target);

} // namespace mlir::nf::cuda

#endif // NORMFUSE_LIB_CODEGEN_CUDA_GROUPNORMGRADONEKERNEL_H
