//===- LinalgBody.h - a linalg.generic's body in a GPU kernel ---*- C++ -*-===//
//
// Part of normfuse. What the CUDA kernels of linalg ops share (the
// elementwise ones, LowerLinalg.cpp, and the reductions,
// LowerLinalgReductions.cpp): which generics they take, the types they
// compute in, constants as immediates, and the generic's body cloned into
// the kernel on values in the compute types.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_CODEGEN_CUDA_LINALGBODY_H
#define NORMFUSE_LIB_CODEGEN_CUDA_LINALGBODY_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <string>

namespace mlir::nf::cuda {

/// The type a kernel computes a value of `type` in: f32 for f16 and bf16.
Type computeType(Type type);

/// The splat value of `v` when it is a splat constant (or a scalar one).
TypedAttr splatOf(Value v);

/// `value` (a float attribute) in the compute type.
TypedAttr toComputeType(OpBuilder &b, TypedAttr value);

/// An indexing map result of the form `d * scale + offset` (a dimension,
/// strided and shifted: slices), or a constant (dim -1).
struct DimTerm {
  int64_t dim = -1;
  int64_t scale = 0;
  int64_t offset = 0;
};

/// `e` as a DimTerm, or none (a sum of dimensions: a window).
std::optional<DimTerm> asDimTerm(AffineExpr e);

/// An indexing map result that is a sum of scaled dimensions and a constant
/// (a window of a pooling or a convolution: `d1 * stride + d4 *
/// dilation`). Each term's offset is 0.
struct LinearForm {
  SmallVector<DimTerm> terms;
  int64_t offset = 0;
};

/// `e` as a LinearForm, or none (a division, a modulo, a product of
/// dimensions).
std::optional<LinearForm> asLinearForm(AffineExpr e);

/// Why `generic` cannot become a kernel of either kind, or "": what both
/// need (tensors of float, bool or integer elements (of static shape where
/// the body gathers from them) or
/// constant scalars, operands read through sums of scaled dimensions and
/// constants, a body of ops without regions that captures only constants,
/// scalars computed from constants, and tensors it gathers from). The
/// number of results is for each kind to check.
std::string whyNotKernelGeneric(linalg::GenericOp generic);

/// The tensors from outside `generic` that its body reads with
/// tensor.extract at computed positions (what TOSA's gather becomes), each
/// once, in the order the body reads them.
SmallVector<Value> capturedTensors(linalg::GenericOp generic);

/// The generic's body at `b` on `args` (one per block argument, in the
/// compute types; null for an argument the body does not read); returns
/// the value of `result` (the yielded value when null), in the compute
/// type. Each op whose result is f16/bf16 is rounded to its type, as the
/// CPU computes it; `skip` (a reduction's combining op) is not emitted.
/// `captured` maps each of capturedTensors(generic) to the flat buffer the
/// kernel reads it from.
Value emitBody(OpBuilder &b, Location loc, linalg::GenericOp generic,
               ArrayRef<Value> args,
               llvm::function_ref<Value(int64_t)> loopIndex,
               Operation *skip = nullptr, Value result = Value(),
               const llvm::DenseMap<Value, Value> *captured = nullptr);

/// As emitBody, the value `result` of the body without the ops of `skip`
/// (an argmax's comparison and selections, which read the results).
Value emitBodyValue(OpBuilder &b, Location loc, linalg::GenericOp generic,
                    ArrayRef<Value> args,
                    llvm::function_ref<Value(int64_t)> loopIndex,
                    ArrayRef<Operation *> skip, Value result,
                    const llvm::DenseMap<Value, Value> *captured = nullptr);

/// As emitBody, every value the body yields (a generic of several results:
/// an argmax yields the index and the value).
SmallVector<Value>
emitBodyYields(OpBuilder &b, Location loc, linalg::GenericOp generic,
               ArrayRef<Value> args,
               llvm::function_ref<Value(int64_t)> loopIndex,
               const llvm::DenseMap<Value, Value> *captured = nullptr);

struct GPULoweringOptions;

/// Replaces `generic`, which has reduction loops, by its kernel
/// (LowerLinalgReductions.cpp), or emits an error at it naming the reason.
LogicalResult lowerLinalgReduction(RewriterBase &rewriter,
                                   linalg::GenericOp generic,
                                   const GPULoweringOptions &options);

} // namespace mlir::nf::cuda

#endif // NORMFUSE_LIB_CODEGEN_CUDA_LINALGBODY_H
