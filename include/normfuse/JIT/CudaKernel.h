//===- CudaKernel.h - an nf function run on a GPU ---------------*- C++ -*-===//
//
// Part of normfuse. The Kernel of the JIT's cuda target: the function
// lowered by the nf-cuda-pipeline for the device's architecture, its
// kernels printed as CUDA C++, compiled by NVRTC through the kernel cache
// and loaded on the device (normfuse/Runtime/CudaDevice.h), its launch plan
// read off the host IR. A call takes device buffers (MemorySpace::
// CUDADevice), used in place after a check that each lies in a device
// allocation large enough, and host buffers: host inputs are copied to the
// device, host outputs (and temporaries) filled with NaN bytes on the
// device and copied back. It runs on RunOptions::cudaStream.
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

  using Kernel::run;
  /// Device or host buffers; `options.threads` is ignored.
  llvm::Error run(llvm::ArrayRef<TensorRef> inputs,
                  llvm::ArrayRef<TensorRef> outputs,
                  const RunOptions &options) const override;

  /// Times the kernel on device copies of host `inputs` with CUDA events:
  /// `warmup` runs, then `iterations` runs beside as many device copies of
  /// the same bytes (runtime::CudaModule::time).
  llvm::Error time(llvm::ArrayRef<TensorRef> inputs, unsigned warmup,
                   unsigned iterations, runtime::PlanTimings &timings) const;

  /// The device's name and architecture: "NVIDIA H100 80GB HBM3 (sm_90)".
  std::string getDeviceDescription() const;

  /// How many calls replayed a CUDA graph of the plan (CudaModule::enqueue),
  /// and why none do where graphs are off ("" while they are on).
  size_t graphLaunches() const { return module->graphLaunches(); }
  std::string graphsOff() const { return module->graphsOff(); }

private:
  std::unique_ptr<runtime::CudaModule> module;
};

} // namespace normfuse::jit

#endif // NORMFUSE_JIT_CUDAKERNEL_H
