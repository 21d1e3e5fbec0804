//===- HostKernel.cpp - a JIT-compiled nf function --------------*- C++ -*-===//
//
// Part of normfuse. See HostKernel.h. The lowered function takes each
// buffer as an exploded memref descriptor (allocated pointer, aligned
// pointer, offset, sizes, strides); the packed wrapper MLIR's execution
// engine generates takes a pointer to each of those scalars.
//
//===----------------------------------------------------------------------===//

#include "HostKernel.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Target/TargetMachine.h"

#include <omp.h>

using namespace normfuse;
using namespace normfuse::jit;

Kernel::~Kernel() = default;

std::string TensorType::str() const {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + getDTypeName(dtype) + ">";
}

HostKernel::HostKernel(std::string name, Signature signature)
    : Kernel(std::move(name), std::move(signature)) {}

llvm::Error HostKernel::compile(mlir::ModuleOp module) {
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    return jtmb.takeError();
  auto tm = jtmb->createTargetMachine();
  if (!tm)
    return tm.takeError();
  targetMachine = std::move(*tm);
  transformer = mlir::makeOptimizingTransformer(3, 0, targetMachine.get());

  mlir::ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  options.enableGDBNotificationListener = false;
  options.enablePerfNotificationListener = false;
  auto created = mlir::ExecutionEngine::create(module, options);
  if (!created)
    return created.takeError();
  engine = std::move(*created);
  auto packed = engine->lookupPacked(name);
  if (!packed)
    return packed.takeError();
  fn = *packed;
  return llvm::Error::success();
}

HostKernel::~HostKernel() = default;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(message,
                                             llvm::inconvertibleErrorCode());
}

llvm::Error HostKernel::check(llvm::ArrayRef<TensorRef> buffers,
                              const std::vector<TensorType> &types,
                              llvm::StringRef role) const {
  if (buffers.size() != types.size())
    return makeError("@" + name + " takes " + llvm::Twine(types.size()) + " " +
                     role + (types.size() == 1 ? "" : "s") + ", got " +
                     llvm::Twine(buffers.size()));
  for (size_t i = 0; i < buffers.size(); ++i) {
    const TensorRef &b = buffers[i];
    const TensorType &t = types[i];
    std::string what = (role + " #" + llvm::Twine(i) + " of @" + name).str();
    if (b.dtype != t.dtype)
      return makeError(what + " has dtype " + getDTypeName(b.dtype) +
                       "; expected " + getDTypeName(t.dtype) + " (" + t.str() +
                       ")");
    if (b.shape != t.shape)
      return makeError(what + " has shape " + formatShape(b.shape) +
                       "; expected " + formatShape(t.shape) + " (" + t.str() +
                       ")");
    if (!b.isContiguous())
      return makeError(what + " is not contiguous (strides " +
                       formatShape(b.strides) + " for shape " +
                       formatShape(b.shape) +
                       "); the CPU kernels need row-major buffers");
    if (!b.data && b.getNumElements() != 0)
      return makeError(what + " has no data (a null pointer)");
  }
  return llvm::Error::success();
}

llvm::Error HostKernel::run(llvm::ArrayRef<TensorRef> inputs,
                            llvm::ArrayRef<TensorRef> outputs,
                            int threads) const {
  if (auto err = check(inputs, signature.inputs, "input"))
    return err;
  if (auto err = check(outputs, signature.outputs, "output"))
    return err;
  if (threads < 0)
    return makeError("threads must be 0 (the default) or positive, got " +
                     llvm::Twine(threads));

  // One slot per scalar of each exploded descriptor: allocated pointer,
  // aligned pointer, offset, sizes, strides (row-major).
  size_t slots = 0;
  for (const auto *list : {&inputs, &outputs})
    for (const TensorRef &b : *list)
      slots += 3 + 2 * b.shape.size();
  std::vector<int64_t> storage;
  storage.reserve(slots);
  std::vector<void *> args;
  args.reserve(slots);
  auto push = [&](int64_t v) {
    storage.push_back(v);
    args.push_back(&storage.back());
  };
  for (const auto *list : {&inputs, &outputs}) {
    for (const TensorRef &b : *list) {
      push(reinterpret_cast<intptr_t>(b.data));
      push(reinterpret_cast<intptr_t>(b.data));
      push(0);
      for (int64_t d : b.shape)
        push(d);
      int64_t stride = 1;
      std::vector<int64_t> strides(b.shape.size());
      for (size_t i = b.shape.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= b.shape[i];
      }
      for (int64_t s : strides)
        push(s);
    }
  }
  if (threads > 0)
    omp_set_num_threads(threads);
  fn(args.data());
  return llvm::Error::success();
}
