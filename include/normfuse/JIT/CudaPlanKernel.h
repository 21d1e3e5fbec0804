//===- CudaPlanKernel.h - what the CUDA targets' kernels share --*- C++ -*-===//
//
// Part of normfuse. A function lowered by the nf-cuda-pipeline: its kernels
// printed as CUDA C++ and its launch plan. The cuda target (CudaKernel.h)
// runs the plan on the GPU, the cuda-sim target (CudaSimKernel.h) in the
// CUDA simulator; both check a call's buffers here first.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_JIT_CUDAPLANKERNEL_H
#define NORMFUSE_JIT_CUDAPLANKERNEL_H

#include "normfuse/JIT/JIT.h"
#include "normfuse/Runtime/LaunchPlan.h"

namespace normfuse::jit {

class CudaPlanKernel : public Kernel,
                       public std::enable_shared_from_this<CudaPlanKernel> {
public:
  /// The printed CUDA C++ and the launch plan.
  const std::string &getSource() const { return source; }
  const runtime::LaunchPlan &getPlan() const { return plan; }

  /// The plan is for static shapes: the kernel itself, for its own shapes.
  llvm::Expected<std::shared_ptr<Kernel>>
  specialize(llvm::ArrayRef<std::vector<int64_t>> inputShapes,
             llvm::ArrayRef<std::vector<int64_t>> outputShapes) const override;

protected:
  CudaPlanKernel(std::string name, Signature signature, std::string source,
                 runtime::LaunchPlan plan);

  /// `inputs` and `outputs` against the signature (host memory only unless
  /// `deviceAllowed`), then each buffer's size against the plan's.
  llvm::Error checkCall(llvm::ArrayRef<TensorRef> inputs,
                        llvm::ArrayRef<TensorRef> outputs,
                        bool deviceAllowed = false) const;

  std::string source;
  runtime::LaunchPlan plan;
};

} // namespace normfuse::jit

#endif // NORMFUSE_JIT_CUDAPLANKERNEL_H
