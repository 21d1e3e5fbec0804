//===- CudaSimKernel.h - an nf function run by the CUDA simulator -*- C++
//-*-===//
//
// Part of normfuse. The Kernel of the JIT's cuda-sim target: the function
// lowered by the nf-cuda-pipeline, its kernels printed as CUDA C++ and
// compiled for the host against normfuse's CUDA simulator, its launch plan
// read off the host IR. A call copies the inputs into fresh "device"
// buffers (aligned as cudaMalloc's; outputs and temporaries filled with NaN
// bytes, so an element no kernel writes shows), runs the launches in order
// and copies the outputs back, as the CUDA target does with host buffers.
// Where no GPU is present (CI), this is how the numbers of every CUDA
// kernel are checked.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_JIT_CUDASIMKERNEL_H
#define NORMFUSE_JIT_CUDASIMKERNEL_H

#include "normfuse/JIT/CudaPlanKernel.h"
#include "normfuse/Runtime/CudaSim.h"

namespace normfuse::jit {

class CudaSimKernel final : public CudaPlanKernel {
public:
  CudaSimKernel(std::string name, Signature signature, std::string source,
                runtime::LaunchPlan plan,
                std::shared_ptr<runtime::SimModule> module);
  ~CudaSimKernel() override;

  Target getTarget() const override { return Target::CUDASim; }

  using Kernel::run;
  /// Host buffers; `options.threads` is ignored (the simulator runs one
  /// block at a time) and a CUDA stream refused.
  llvm::Error run(llvm::ArrayRef<TensorRef> inputs,
                  llvm::ArrayRef<TensorRef> outputs,
                  const RunOptions &options) const override;

  /// run, with the simulator's thread order (and a shuffle's seed), and
  /// what each launch did in `stats` (may be null).
  llvm::Error runInSimulator(llvm::ArrayRef<TensorRef> inputs,
                             llvm::ArrayRef<TensorRef> outputs,
                             runtime::SimOrder order,
                             std::vector<runtime::SimStats> *stats,
                             unsigned seed = 1) const;

  /// This function on a device that holds `resident(r)` blocks of each
  /// residency r of its plan at once (LaunchPlan.h): its grids, sizes and
  /// temporaries resolved so. The simulator itself runs the plan as
  /// planned; tests take this to run every grid size down to one block.
  llvm::Expected<std::shared_ptr<CudaSimKernel>> withResidency(
      const std::function<int64_t(const runtime::Residency &)> &resident) const;

private:
  std::shared_ptr<runtime::SimModule> module;
};

} // namespace normfuse::jit

#endif // NORMFUSE_JIT_CUDASIMKERNEL_H
