//===- MemoryBounds.h - the memory a function's tensors need ----*- C++ -*-===//
//
// Part of normfuse. A function's shapes may ask for far more memory than
// its inputs hold (a matmul of a column by a row, summed over one axis):
// the JIT checks what its tensors need against the machine's memory before
// it compiles, instead of letting the kernel's allocation fail.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_JIT_MEMORYBOUNDS_H
#define NORMFUSE_LIB_JIT_MEMORYBOUNDS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace normfuse::jit {

/// The most bytes that the tensors computed in `fn`'s body (the results of
/// its top-level ops; not its arguments) hold at once, when each lives from
/// its op to its last use (the results until the function returns).
/// Saturates at UINT64_MAX; tensors of dynamic shape count nothing.
/// `largest` is set to the type of the largest of them (null if none).
uint64_t peakTensorBytes(mlir::func::FuncOp fn, mlir::Type &largest);

/// An error naming `fn` when its tensors need more than `memoryBytes` at
/// once.
llvm::Error checkTensorMemory(mlir::func::FuncOp fn, uint64_t memoryBytes);

} // namespace normfuse::jit

#endif // NORMFUSE_LIB_JIT_MEMORYBOUNDS_H
