//===- CudaKernel.cpp - an nf function run on a GPU -----------------------===//
//
// Part of normfuse. See CudaKernel.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/JIT/CudaKernel.h"
#include "HostKernel.h"

using namespace normfuse;
using namespace normfuse::jit;
using namespace normfuse::runtime;

CudaKernel::CudaKernel(std::string name, Signature signature,
                       std::string source, LaunchPlan plan,
                       std::unique_ptr<CudaModule> module)
    : CudaPlanKernel(std::move(name), std::move(signature), std::move(source),
                     std::move(plan)),
      module(std::move(module)) {}

CudaKernel::~CudaKernel() = default;

llvm::Error CudaKernel::run(llvm::ArrayRef<TensorRef> inputs,
                            llvm::ArrayRef<TensorRef> outputs,
                            const RunOptions &options) const {
  if (auto err = checkRunOptions(name, options, Target::CUDA))
    return err;
  if (auto err = checkCall(inputs, outputs, /*deviceAllowed=*/true))
    return err;
  std::vector<CallBuffer> buffers;
  std::string error;
  for (size_t i = 0; i < inputs.size() + outputs.size(); ++i) {
    bool isInput = i < inputs.size();
    const TensorRef &t = isInput ? inputs[i] : outputs[i - inputs.size()];
    if (t.space == MemorySpace::Host) {
      buffers.push_back(CallBuffer::onHost(t.data));
      continue;
    }
    auto pointer = cu::DevicePtr(reinterpret_cast<uintptr_t>(t.data));
    if (!module->device().checkDeviceRange(pointer, t.getNumBytes(), error))
      return llvm::createStringError(
          "@%s: %s #%zu (device buffer 0x%llx) %s", name.c_str(),
          isInput ? "input" : "output", isInput ? i : i - inputs.size(),
          (unsigned long long)pointer, error.c_str());
    buffers.push_back(CallBuffer::onDevice(pointer));
  }
  if (!module->run(plan, buffers, error,
                   static_cast<cu::Stream>(options.cudaStream)))
    return llvm::createStringError("@%s on the GPU: %s", name.c_str(),
                                   error.c_str());
  return llvm::Error::success();
}

llvm::Error CudaKernel::time(llvm::ArrayRef<TensorRef> inputs, unsigned warmup,
                             unsigned iterations, PlanTimings &timings) const {
  if (auto err = checkBuffers(name, inputs, signature.inputs, "input"))
    return err;
  std::vector<const void *> in;
  for (const TensorRef &t : inputs)
    in.push_back(t.data);
  std::string error;
  if (!module->time(plan, in, warmup, iterations, timings, error))
    return llvm::createStringError("@%s on the GPU: %s", name.c_str(),
                                   error.c_str());
  return llvm::Error::success();
}

std::string CudaKernel::getDeviceDescription() const {
  CudaDevice &device = module->device();
  return device.name() + " (sm_" + std::to_string(device.computeCapability()) +
         ")";
}
