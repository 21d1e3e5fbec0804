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

/// The alignment the CUDA kernels assume of every buffer they take in
/// place: their vectors are 16-byte loads and stores (a misaligned one is
/// a fault that poisons the CUDA context). Host buffers are copied into
/// fresh device allocations, which are aligned.
constexpr uintptr_t kDeviceBufferAlignment = 16;

/// Checks that `buffers` match `types` (a dynamic dimension matches any
/// size) and are contiguous with data, in host memory unless
/// `deviceAllowed`, device buffers aligned to kDeviceBufferAlignment;
/// `role` is "input" or "output" and `function` names the function in
/// messages.
llvm::Error checkBuffers(llvm::StringRef function,
                         llvm::ArrayRef<TensorRef> buffers,
                         const std::vector<TensorType> &types,
                         llvm::StringRef role, bool deviceAllowed = false);

/// A CUDA stream given to a target other than cuda, or a simulator's
/// thread order other than forward to a target other than cuda-sim, is an
/// error.
llvm::Error checkRunOptions(llvm::StringRef function, const RunOptions &options,
                            Target target);

/// Checks that there are as many `shapes` as `types` and that each fits its
/// type (a dynamic dimension matches any size).
llvm::Error checkShapes(llvm::StringRef function,
                        llvm::ArrayRef<std::vector<int64_t>> shapes,
                        const std::vector<TensorType> &types,
                        llvm::StringRef role);

/// What `specialize` checks for a kernel of static shapes: the input shapes
/// (and the output shapes, when given) are those of `signature`.
llvm::Error checkOwnShapes(llvm::StringRef function, const Signature &signature,
                           llvm::ArrayRef<std::vector<int64_t>> inputShapes,
                           llvm::ArrayRef<std::vector<int64_t>> outputShapes);

/// A compiled function with static shapes.
class HostKernel final : public Kernel,
                         public std::enable_shared_from_this<HostKernel> {
public:
  using PackedFn = void (*)(void **);
  HostKernel(std::string name, Signature signature);
  ~HostKernel() override;

  /// JIT-compiles `module` (in the LLVM dialect) at O3 for the host CPU and
  /// looks up the kernel's entry point. With `cacheBuffers`, the kernel's
  /// malloc and free are those of the buffer cache (BufferCache.h).
  llvm::Error compile(mlir::ModuleOp module, bool cacheBuffers);

  using Kernel::run;
  llvm::Error run(llvm::ArrayRef<TensorRef> inputs,
                  llvm::ArrayRef<TensorRef> outputs,
                  const RunOptions &options) const override;

  /// Itself, when the shapes are those of its signature.
  llvm::Expected<std::shared_ptr<Kernel>>
  specialize(llvm::ArrayRef<std::vector<int64_t>> inputShapes,
             llvm::ArrayRef<std::vector<int64_t>> outputShapes) const override;

private:
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
