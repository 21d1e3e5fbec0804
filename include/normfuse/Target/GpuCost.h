//===- GpuCost.h - what each CUDA kernel is predicted to cost --*- C++ -*-===//
//
// Part of normfuse. The cost report of a lowered module on a GPU target
// (`nf-translate --nf-gpu-cost`): for every launch of every function, its
// schedule, grid and block, registers (from ptxas, through NVRTC, where it
// is at hand), shared memory, the blocks a multiprocessor holds and what
// limits them, the work units a persistent grid's blocks loop over, the
// waves of its grid (or of those units), and the bytes it must move (each
// buffer, temporary or constant it takes, once: the bandwidth-bound
// minimum that the GPU measurement's copy of the same bytes is held to).
// Predictions, made without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_TARGET_GPUCOST_H
#define NORMFUSE_TARGET_GPUCOST_H

#include "normfuse/Runtime/GpuTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::nf {

struct KernelCost {
  std::string kernel, schedule;
  uint64_t grid = 0;
  uint64_t block = 0;
  /// Static and dynamic shared memory of a block.
  uint64_t sharedBytes = 0;
  /// ptxas' count, or -1 where it is not known.
  int64_t registers = -1;
  normfuse::runtime::GpuTarget::Occupancy occupancy;
  /// A persistent grid's work units where they are more than its blocks
  /// (Launch::persistentUnits; 0: none, or as many as blocks).
  uint64_t units = 0;
  /// The grid's blocks (a persistent grid's units) over the blocks all
  /// multiprocessors hold at once.
  double waves = 0;
  /// Each buffer, temporary and constant the launch takes, once.
  uint64_t bytes = 0;
};

struct FunctionCost {
  std::string function;
  std::vector<KernelCost> kernels;
  /// The function's inputs and outputs, once each: what a copy of the same
  /// bytes moves.
  uint64_t ioBytes = 0;
};

/// The costs of every function of `module` (lowered by the
/// nf-cuda-pipeline for `target`, static shapes) with `numOutputs` results
/// each before lowering, with the kernels' `registers` where known. Fails
/// with an error at the op where a launch plan cannot be read.
FailureOr<std::vector<FunctionCost>>
estimateGpuCost(ModuleOp module, const normfuse::runtime::GpuTarget &target,
                const llvm::StringMap<unsigned> &numOutputs,
                const llvm::StringMap<int64_t> &registers);

/// The report as text: a header naming the target, a table a function.
void printGpuCost(llvm::ArrayRef<FunctionCost> costs,
                  const normfuse::runtime::GpuTarget &target,
                  llvm::StringRef registersFrom, llvm::raw_ostream &os);

} // namespace mlir::nf

#endif // NORMFUSE_TARGET_GPUCOST_H
