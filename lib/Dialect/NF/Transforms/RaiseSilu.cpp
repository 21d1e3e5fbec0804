//===- RaiseSilu.cpp - x * sigmoid(x) -> nf.silu ----------------*- C++ -*-===//
//
// Part of normfuse. SiLU (swish) arrives as x * sigmoid(x) (tosa.sigmoid,
// either order), as x / (1 + exp(-x)), or as x * (1 / (1 + exp(-x))) with
// the reciprocal spelled tosa.reciprocal or a division of 1; -x is a
// negation or a multiply by -1.
//
//===----------------------------------------------------------------------===//

#include "ChainMatchers.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/Dialect/NF/Transforms/Patterns.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::chain;

namespace {

using Interior = llvm::SmallVector<Operation *, 4>;

/// Whether `v` is -x: a negation of x or x * -1 (either order).
bool isNegationOf(Value v, Value x, Interior &interior) {
  if (Operation *negate = definedBy(v, Arith::Negate)) {
    interior.push_back(negate);
    return negate->getOperand(0) == x;
  }
  Operation *mul = definedBy(v, Arith::Mul);
  if (!mul)
    return false;
  interior.push_back(mul);
  return matchOperands(
      mul, [&](Value y, Value c) { return y == x && isSplatNear(c, -1.0); });
}

/// Whether `v` is 1 + exp(-x) (either order).
bool isOnePlusExpNeg(Value v, Value x, Interior &interior) {
  Operation *add = definedBy(v, Arith::Add);
  if (!add)
    return false;
  interior.push_back(add);
  return matchOperands(add, [&](Value one, Value e) {
    Operation *exp = definedBy(e, Arith::Exp);
    if (!exp || !isSplatNear(one, 1.0))
      return false;
    interior.push_back(exp);
    return isNegationOf(exp->getOperand(0), x, interior);
  });
}

/// Whether `v` is sigmoid(x): tosa.sigmoid, or 1 / (1 + exp(-x)) with the
/// reciprocal spelled tosa.reciprocal or 1 / d.
bool isSigmoidOf(Value v, Value x, Interior &interior) {
  if (Operation *sigmoid = definedBy(v, Arith::Sigmoid)) {
    interior.push_back(sigmoid);
    return sigmoid->getOperand(0) == x;
  }
  if (Operation *reciprocal = definedBy(v, Arith::Reciprocal)) {
    interior.push_back(reciprocal);
    return isOnePlusExpNeg(reciprocal->getOperand(0), x, interior);
  }
  Operation *div = definedBy(v, Arith::Div);
  if (!div || !isSplatNear(div->getOperand(0), 1.0))
    return false;
  interior.push_back(div);
  return isOnePlusExpNeg(div->getOperand(1), x, interior);
}

/// x * sigmoid(x) (either order) and x / (1 + exp(-x)), where x has the
/// result's type and no intermediate value has a user outside the chain.
struct RaiseSilu : RewritePattern {
  RaiseSilu(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    Arith kind = classify(op);
    if (kind != Arith::Mul && kind != Arith::Div)
      return failure();
    Type type = op->getResult(0).getType();
    if (!isNFFloatTensor(type))
      return rewriter.notifyMatchFailure(op, "not an nf float tensor");
    Value input;
    Interior interior;
    bool matched = matchOperands(op, [&](Value x, Value other) {
      interior.clear();
      input = x;
      if (x.getType() != type)
        return false;
      if (kind == Arith::Div)
        return isOnePlusExpNeg(other, x, interior);
      return isSigmoidOf(other, x, interior);
    });
    if (!matched)
      return rewriter.notifyMatchFailure(op, "not x * sigmoid(x)");
    if (!usesStayInside(interior, op))
      return rewriter.notifyMatchFailure(
          op, "an intermediate value has a user outside the chain");
    rewriter.replaceOpWithNewOp<SiluOp>(op, type, input);
    return success();
  }
};

} // namespace

void nf::populateRaiseSiluPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseSilu>(patterns.getContext());
}
