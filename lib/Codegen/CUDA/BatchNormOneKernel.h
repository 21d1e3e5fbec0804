//===- BatchNormOneKernel.h - BatchNorm training in one launch --*- C++ -*-===//
//
// Part of normfuse. batch_norm_training with its channels first (NCHW) in
// one cooperative launch (ChannelReductionSchedule::oneKernel): each
// range's moments, their merge per channel, the statistics and y, where
// three kernels (the partial moments, their merge, the elementwise pass)
// read x twice from memory.
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

/// Emits kernel `<base>_one_kernel` under `s` (oneKernel) and launches it
/// before the builder's point, a grid of at most the blocks the device
/// holds of it (decided when the kernels are loaded), none for an empty
/// tensor.
void emitBatchNormOneKernel(OpBuilder &b, Location loc, ModuleOp module,
                            const std::string &base,
                            const BatchNormTrainingBuffers &in,
                            const ChannelReductionSchedule &s,
                            const GpuTarget &target);

} // namespace mlir::nf::cuda

#endif // NORMFUSE_LIB_CODEGEN_CUDA_BATCHNORMONEKERNEL_H
