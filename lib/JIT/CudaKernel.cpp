//===- CudaKernel.cpp - an nf function run on a GPU -----------------------===//
//
// Part of normfuse. See CudaKernel.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/JIT/CudaKernel.h"

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
                            int threads) const {
  (void)threads;
  if (auto err = checkCall(inputs, outputs))
    return err;
  std::vector<const void *> in;
  std::vector<void *> out;
  for (const TensorRef &t : inputs)
    in.push_back(t.data);
  for (const TensorRef &t : outputs)
    out.push_back(t.data);
  std::string error;
  if (!module->run(plan, in, out, error))
    return llvm::createStringError("@%s on the GPU: %s", name.c_str(),
                                   error.c_str());
  return llvm::Error::success();
}
