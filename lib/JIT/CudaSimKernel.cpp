//===- CudaSimKernel.cpp - an nf function run by the CUDA simulator -*- C++
//-*-===//
//
// Part of normfuse. See CudaSimKernel.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/JIT/CudaSimKernel.h"
#include "HostKernel.h"

using namespace normfuse;
using namespace normfuse::jit;
using namespace normfuse::runtime;

CudaSimKernel::CudaSimKernel(std::string name, Signature signature,
                             std::string source, LaunchPlan plan,
                             std::shared_ptr<SimModule> module)
    : CudaPlanKernel(std::move(name), std::move(signature), std::move(source),
                     std::move(plan)),
      module(std::move(module)) {}

CudaSimKernel::~CudaSimKernel() = default;

llvm::Error CudaSimKernel::run(llvm::ArrayRef<TensorRef> inputs,
                               llvm::ArrayRef<TensorRef> outputs,
                               const RunOptions &options) const {
  if (auto err = checkRunOptions(name, options, Target::CUDASim))
    return err;
  SimOrder order =
      options.simOrder == SimThreadOrder::Reverse   ? SimOrder::Reverse
      : options.simOrder == SimThreadOrder::Shuffle ? SimOrder::Shuffle
      : options.simOrder == SimThreadOrder::Stagger ? SimOrder::Stagger
                                                    : SimOrder::Forward;
  return runInSimulator(inputs, outputs, order, nullptr, options.simSeed);
}

llvm::Error CudaSimKernel::runInSimulator(llvm::ArrayRef<TensorRef> inputs,
                                          llvm::ArrayRef<TensorRef> outputs,
                                          SimOrder order,
                                          std::vector<SimStats> *stats,
                                          unsigned seed) const {
  if (auto err = checkCall(inputs, outputs))
    return err;
  std::vector<const void *> in;
  std::vector<void *> out;
  for (const TensorRef &t : inputs)
    in.push_back(t.data);
  for (const TensorRef &t : outputs)
    out.push_back(t.data);
  std::string error;
  if (!runPlanInSimulator(*module, plan, in, out, error, order, stats, seed))
    return llvm::createStringError("@%s: %s", name.c_str(), error.c_str());
  return llvm::Error::success();
}

llvm::Expected<std::shared_ptr<CudaSimKernel>> CudaSimKernel::withResidency(
    const std::function<int64_t(const Residency &)> &resident) const {
  LaunchPlan resolved = plan;
  std::string error;
  if (!resolveResidencies(resolved, resident, error))
    return llvm::createStringError("@%s: %s", name.c_str(), error.c_str());
  return std::make_shared<CudaSimKernel>(name, signature, source,
                                         std::move(resolved), module);
}
