//===- CudaPlanKernel.cpp - what the CUDA targets' kernels share ----------===//
//
// Part of normfuse. See CudaPlanKernel.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/JIT/CudaPlanKernel.h"
#include "HostKernel.h"

using namespace normfuse;
using namespace normfuse::jit;

CudaPlanKernel::CudaPlanKernel(std::string name, Signature signature,
                               std::string source, runtime::LaunchPlan plan)
    : Kernel(std::move(name), std::move(signature)), source(std::move(source)),
      plan(std::move(plan)) {}

llvm::Error CudaPlanKernel::checkCall(llvm::ArrayRef<TensorRef> inputs,
                                      llvm::ArrayRef<TensorRef> outputs,
                                      bool deviceAllowed) const {
  if (auto err =
          checkBuffers(name, inputs, signature.inputs, "input", deviceAllowed))
    return err;
  if (auto err = checkBuffers(name, outputs, signature.outputs, "output",
                              deviceAllowed))
    return err;
  if (inputs.size() + outputs.size() != plan.bufferBytes.size())
    return llvm::createStringError(
        "@%s: the launch plan has %zu buffers for %zu inputs and outputs",
        name.c_str(), plan.bufferBytes.size(), inputs.size() + outputs.size());
  for (size_t i = 0; i < plan.bufferBytes.size(); ++i) {
    const TensorRef &host =
        i < inputs.size() ? inputs[i] : outputs[i - inputs.size()];
    if (host.getNumBytes() != plan.bufferBytes[i])
      return llvm::createStringError(
          "@%s: buffer %zu holds %zu bytes where the launch plan expects %zu",
          name.c_str(), i, host.getNumBytes(), plan.bufferBytes[i]);
  }
  return llvm::Error::success();
}

llvm::Expected<std::shared_ptr<Kernel>> CudaPlanKernel::specialize(
    llvm::ArrayRef<std::vector<int64_t>> inputShapes,
    llvm::ArrayRef<std::vector<int64_t>> outputShapes) const {
  if (auto err = checkOwnShapes(name, signature, inputShapes, outputShapes))
    return std::move(err);
  return std::const_pointer_cast<CudaPlanKernel>(shared_from_this());
}
