//===- CudaKernel.h - an nf function run on a GPU ---------------*- C++ -*-===//
//
// Part of normfuse. The Kernel of the JIT's cuda target: the function
// lowered by the nf-cuda-pipeline for the device's architecture, its
// kernels printed as CUDA C++, compiled by NVRTC through the kernel cache
// and loaded on the device (normfuse/Runtime/CudaDevice.h), its launch plan
// read off the host IR. A call takes host buffers: the inputs are copied
// to the device, outputs and temporaries filled with NaN bytes, the
// launches run in order and the outputs are copied back.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_JIT_CUDAKERNEL_H
#define NORMFUSE_JIT_CUDAKERNEL_H

#include "normfuse/JIT/CudaPlanKernel.h"
#include "normfuse/Runtime/CudaDevice.h"

namespace normfuse::jit {

class CudaKernel final : public CudaPlanKernel {
public:
  CudaKernel(std::string name, Signature signature, std::string source,
             runtime::LaunchPlan plan,
             std::unique_ptr<runtime::CudaModule> module);
  ~CudaKernel() override;

  Target getTarget() const override { return Target::CUDA; }

  /// Host buffers in and out; `threads` is ignored.
  llvm::Error run(llvm::ArrayRef<TensorRef> inputs,
                  llvm::ArrayRef<TensorRef> outputs,
                  int threads = 0) const override;

private:
  std::unique_ptr<runtime::CudaModule> module;
};

} // namespace normfuse::jit

#endif // NORMFUSE_JIT_CUDAKERNEL_H
