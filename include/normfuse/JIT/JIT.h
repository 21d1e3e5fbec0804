//===- JIT.h - compile and run nf functions on the host ---------*- C++ -*-===//
//
// Part of normfuse. The host-facing JIT: hand it MLIR text (or a file) and a
// function name, get a Kernel that runs on host buffers. Compilation goes
// through the nf-cpu-pipeline and LLVM's ORC JIT for the host CPU's own
// features, and is cached by (IR hash, function, its argument types,
// options, target): the same request returns the same Kernel.
//
// Every wrong request or call returns an llvm::Error with a message: IR that
// does not parse or verify, an unknown function, a signature the JIT does
// not support, a wrong number of buffers, a wrong dtype or shape, a buffer
// that is not contiguous. A JIT and its Kernels may be used from several
// threads at once.
//
// Example:
//   normfuse::jit::JIT jit;
//   auto kernel = jit.compile(irText, "layer_norm");
//   if (!kernel) { report(kernel.takeError()); ... }
//   llvm::Error err = (*kernel)->run({x, scale, bias}, {y, mean, rstd});
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_JIT_JIT_H
#define NORMFUSE_JIT_JIT_H

#include "normfuse/Support/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace normfuse::jit {

/// The type of one argument or result of a compiled function.
struct TensorType {
  DType dtype;
  std::vector<int64_t> shape;
  /// "tensor<4x8xf32>"
  std::string str() const;
};

/// What a Kernel takes (the function's arguments) and writes (its results).
struct Signature {
  std::vector<TensorType> inputs;
  std::vector<TensorType> outputs;
};

struct Options {
  /// Lanes of the inner vector loops; 0 picks the host's (16 with AVX-512,
  /// 8 with AVX, 4 otherwise).
  int64_t vectorWidth = 0;
  /// Run row loops on several threads (OpenMP).
  bool parallel = true;
};

/// A compiled function. Run it with input buffers matching
/// `getSignature().inputs` and output buffers matching `.outputs`.
class Kernel {
public:
  virtual ~Kernel();
  const Signature &getSignature() const { return signature; }
  const std::string &getName() const { return name; }
  /// Runs the kernel; `threads` > 0 sets the number of threads for this
  /// call, 0 keeps the OpenMP default. Nothing is written when an error is
  /// returned.
  virtual llvm::Error run(llvm::ArrayRef<TensorRef> inputs,
                          llvm::ArrayRef<TensorRef> outputs,
                          int threads = 0) const = 0;

protected:
  Kernel(std::string name, Signature signature)
      : name(std::move(name)), signature(std::move(signature)) {}
  std::string name;
  Signature signature;
};

class JIT {
public:
  explicit JIT(Options options = {});
  ~JIT();
  JIT(const JIT &) = delete;
  JIT &operator=(const JIT &) = delete;

  /// Compiles `function` of the module in `irText` (or returns the cached
  /// kernel).
  llvm::Expected<std::shared_ptr<Kernel>> compile(llvm::StringRef irText,
                                                  llvm::StringRef function);
  /// Same, with the module read from `path`.
  llvm::Expected<std::shared_ptr<Kernel>> compileFile(llvm::StringRef path,
                                                      llvm::StringRef function);

  /// The host target kernels are compiled for, e.g.
  /// "x86_64-pc-linux-gnu skylake-avx512, vector width 16".
  std::string getTargetDescription() const;
  /// How many kernels the cache holds.
  size_t getCacheSize() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace normfuse::jit

#endif // NORMFUSE_JIT_JIT_H
