//===- BatchNormOneKernel.h - batch norms in one launch ---------*- C++ -*-===//
//
// Part of normfuse. batch_norm_training and batch_norm_grad with their
// channels first (NCHW) in one cooperative launch each
// (ChannelReductionSchedule::oneKernel): each range's moments (sums), their
// merge per channel, the statistics (parameter gradients) and y (dx), where
// three (four) kernels read the input twice from memory.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_CODEGEN_CUDA_BATCHNORMONEKERNEL_H
#define NORMFUSE_LIB_CODEGEN_CUDA_BATCHNORMONEKERNEL_H

#include "normfuse/Codegen/CUDA/Schedule.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::nf::cuda {

/// A batch_norm_training's flat buffers (`scale`, `bias` null where it has
/// none) and sizes: the tensor as (outer, channels, inner), host index
/// values (constants where static); statistics in `acc`.
struct BatchNormTrainingBuffers {
  Value x, scale, bias, runningMean, runningVar;
  Value y, mean, rstd, newRunningMean, newRunningVar;
  Value outer, channels, inner;
  double epsilon = 1e-5, momentum = 0.1;
  /// The running variance takes the unbiased variance (PyTorch), else the
  /// biased one (ONNX).
  bool unbiasedRunningVar = true;
  Type acc;
};

/// A batch_norm_grad's flat buffers (`scale` null where it has none) and
/// sizes, as BatchNormTrainingBuffers'.
struct BatchNormGradBuffers {
  Value dy, x, mean, rstd, scale;
  Value dx, dscale, dbias;
  Value outer, channels, inner;
  Type acc;
};

/// Emits kernel `<base>_one_kernel` under `s` (oneKernel) and launches it
/// before the builder's point, a grid of at most the blocks the device
/// holds of it (decided when the kernels are loaded), none for an empty
/// tensor.
void emitBatchNormOneKernel(OpBuilder &b, Location loc, ModuleOp module,
                            const std::string &base,
                            const BatchNormTrainingBuffers &in,
                            const ChannelReductionSchedule &s,
                            const GpuTarget &target);

/// The same for batch_norm_grad: each range's sums of dy and dy * xhat,
/// their totals per channel (dbias, dscale) after the grid's barrier, then
/// dx of the range, last first.
void emitBatchNormGradOneKernel(OpBuilder &b, Location loc, ModuleOp module,
                                const std::string &base,
                                const BatchNormGradBuffers &in,
                                const ChannelReductionSchedule &s,
                                const GpuTarget &target);

} // namespace mlir::nf::cuda

#endif // NORMFUSE_LIB_CODEGEN_CUDA_BATCHNORMONEKERNEL_H
