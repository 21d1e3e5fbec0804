//===- RaiseResidualAdd.cpp - x + r of one type -> nf.add -------*- C++ -*-===//
//
// Part of normfuse. A residual connection arrives as tosa.add (or
// arith.addf on tensors) of two tensors of the result's type. As nf.add it
// can join a producer's epilogue or a norm's prologue. Adds of a constant
// (the "+ 1" inside GELU, "+ eps" inside a norm) and adds whose operand is
// a reshaped or broadcast vector (a bias) are left to the other families,
// and so are TOSA adds of dynamic shapes, which broadcast a dimension that
// is 1 at run time.
//
//===----------------------------------------------------------------------===//

#include "ChainMatchers.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/Dialect/NF/Transforms/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::chain;

namespace {

/// A constant, or a value reshaped or broadcast from a smaller one.
bool isConstantOrExpanded(Value v) {
  if (matchPattern(v, m_Constant()))
    return true;
  Operation *def = v.getDefiningOp();
  return def && isa<tosa::ReshapeOp, tensor::ReshapeOp, tensor::ExpandShapeOp,
                    linalg::BroadcastOp>(def);
}

struct RaiseResidualAdd : RewritePattern {
  RaiseResidualAdd(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<tosa::AddOp, arith::AddFOp>(op) || classify(op) != Arith::Add)
      return failure();
    Type type = op->getResult(0).getType();
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    if (!isNFFloatTensor(type) || lhs.getType() != type ||
        rhs.getType() != type)
      return rewriter.notifyMatchFailure(op, "not an add of two full tensors");
    if (isConstantOrExpanded(lhs) || isConstantOrExpanded(rhs))
      return rewriter.notifyMatchFailure(op, "a constant or a bias");
    // tosa.add broadcasts a dimension that is 1 at run time: of dynamic
    // sizes, its operands may differ in shape where their types agree.
    if (isa<tosa::AddOp>(op) && !cast<ShapedType>(type).hasStaticShape())
      return rewriter.notifyMatchFailure(
          op, "a TOSA add of dynamic shapes may broadcast");
    rewriter.replaceOpWithNewOp<AddOp>(op, type, lhs, rhs);
    return success();
  }
};

} // namespace

void nf::populateRaiseResidualAddPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseResidualAdd>(patterns.getContext());
}
