//===- HostKernel.h - a JIT-compiled nf function ----------------*- C++ -*-===//
//
// Part of normfuse. The Kernel the JIT returns: an ORC-compiled function
// with MLIR's packed calling convention, and the checks that make a wrong
// call an error instead of a stray write.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_JIT_HOSTKERNEL_H
#define NORMFUSE_LIB_JIT_HOSTKERNEL_H

#include "normfuse/JIT/JIT.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm
namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace normfuse::jit {

class HostKernel final : public Kernel {
public:
  using PackedFn = void (*)(void **);
  HostKernel(std::string name, Signature signature);
  ~HostKernel() override;

  /// JIT-compiles `module` (in the LLVM dialect) at O3 for the host CPU and
  /// looks up the kernel's entry point.
  llvm::Error compile(mlir::ModuleOp module);

  llvm::Error run(llvm::ArrayRef<TensorRef> inputs,
                  llvm::ArrayRef<TensorRef> outputs,
                  int threads) const override;

private:
  /// Checks that `buffers` match `types`; `role` is "input" or "output".
  llvm::Error check(llvm::ArrayRef<TensorRef> buffers,
                    const std::vector<TensorType> &types,
                    llvm::StringRef role) const;

  // The engine holds only a reference (llvm::function_ref) to its IR
  // transformer, and ORC runs the transformer until the engine is destroyed
  // (deinitializers are compiled then): the kernel owns the transformer and
  // its target machine, declared first so that they are destroyed last.
  std::unique_ptr<llvm::TargetMachine> targetMachine;
  std::function<llvm::Error(llvm::Module *)> transformer;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  PackedFn fn = nullptr;
};

} // namespace normfuse::jit

#endif // NORMFUSE_LIB_JIT_HOSTKERNEL_H
