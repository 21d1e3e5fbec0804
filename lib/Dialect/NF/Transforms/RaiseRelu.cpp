//===- RaiseRelu.cpp - max(x, 0) -> nf.relu ---------------------*- C++ -*-===//
//
// Part of normfuse. ReLU arrives as tosa.maximum(x, 0), as
// arith.maximumf(x, 0) on tensors, or as tosa.clamp to [0, max] (what
// TensorFlow's and torch-mlir's TOSA legalizations emit).
//
//===----------------------------------------------------------------------===//

#include "ChainMatchers.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/Dialect/NF/Transforms/Patterns.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APFloat.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::chain;

namespace {

/// max(x, 0) or max(0, x) with a splat zero, where x has the result's type
/// (the zero may be broadcast; x may not). Both maxima propagate NaN, as
/// nf.relu does.
struct RaiseMaxZero : RewritePattern {
  RaiseMaxZero(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (classify(op) != Arith::Max ||
        !isNFFloatTensor(op->getResult(0).getType()))
      return failure();
    Value input;
    Type type = op->getResult(0).getType();
    bool matched = matchOperands(op, [&](Value x, Value zero) {
      if (x.getType() != type || !isSplatNear(zero, 0.0))
        return false;
      input = x;
      return true;
    });
    if (!matched)
      return rewriter.notifyMatchFailure(op, "not max(x, splat 0)");
    rewriter.replaceOpWithNewOp<ReluOp>(op, type, input);
    return success();
  }
};

/// tosa.clamp(x) to [0, hi] where hi is +inf or at least the largest
/// finite value of x's element type. The latter differs from relu only for
/// x = +inf (clamp gives the largest finite value, relu +inf); frameworks
/// spell ReLU this way for want of an infinite attribute, so it is raised.
struct RaiseClampToRelu : OpRewritePattern<tosa::ClampOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tosa::ClampOp clamp,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(clamp.getType());
    if (!type || !isNFFloatTensor(type) || clamp.getInput().getType() != type)
      return rewriter.notifyMatchFailure(clamp, "not an nf float clamp");
    auto element = cast<FloatType>(type.getElementType());
    if (!clamp.getMinFp().isZero())
      return rewriter.notifyMatchFailure(clamp, "lower bound is not 0");
    APFloat largest = APFloat::getLargest(element.getFloatSemantics());
    bool losesInfo = false;
    APFloat upper = clamp.getMaxFp();
    upper.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
    if (!upper.isInfinity() && upper.compare(largest) != APFloat::cmpEqual)
      return rewriter.notifyMatchFailure(clamp, "upper bound is finite");
    rewriter.replaceOpWithNewOp<ReluOp>(clamp, type, clamp.getInput());
    return success();
  }
};

} // namespace

void nf::populateRaiseReluPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseMaxZero, RaiseClampToRelu>(patterns.getContext());
}
