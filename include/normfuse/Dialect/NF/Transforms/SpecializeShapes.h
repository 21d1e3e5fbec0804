//===- SpecializeShapes.h - static shapes for a call ------------*- C++ -*-===//
//
// Part of normfuse. Rewrites a function with dynamic dimensions (`?`) into
// the function a call with buffers of given shapes runs: every tensor in it
// gets a static type. The JIT compiles functions this way, once per set of
// shapes; nf-opt offers it as the nf-specialize-shapes pass.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_DIALECT_NF_TRANSFORMS_SPECIALIZESHAPES_H
#define NORMFUSE_DIALECT_NF_TRANSFORMS_SPECIALIZESHAPES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"

namespace mlir::nf {

/// Rewrites `fn` in place for arguments of the static shapes `argShapes`
/// (one per argument, each of the argument's rank and equal to it where the
/// argument's dimensions are static). The body is walked in order and each
/// result gets the shape its op's shape rule derives from the now static
/// operands: the operand's for pointwise ops and `tensor.cast`, the input's
/// and the statistics' for norms, the parameters' for norm gradients, the
/// matmul and conv2d rules; `nf.fused` bodies are specialized from their
/// inputs and give their results the yielded types; the function's result
/// types become those of `func.return`.
///
/// `resultShapes`, when not empty, holds one shape per function result (the
/// caller's output buffers). It is used only for dimensions no operand
/// determines: those of `nf.conv2d_backprop_input` / `_filter` results with
/// dynamic dimensions that `func.return` returns directly.
///
/// On success every tensor in `fn` is static and `fn` verifies. Otherwise an
/// error is emitted (a shape the argument cannot take, an op whose result
/// shape cannot be derived, or the op of the rewritten function that does
/// not verify, e.g. two arguments whose shapes disagree) and `fn` is left
/// partly rewritten: specialize a clone.
LogicalResult
specializeShapes(func::FuncOp fn,
                 llvm::ArrayRef<llvm::ArrayRef<int64_t>> argShapes,
                 llvm::ArrayRef<llvm::ArrayRef<int64_t>> resultShapes = {});

} // namespace mlir::nf

#endif // NORMFUSE_DIALECT_NF_TRANSFORMS_SPECIALIZESHAPES_H
