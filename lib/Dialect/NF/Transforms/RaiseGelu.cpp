//===- RaiseGelu.cpp - GELU chains -> nf.gelu -------------------*- C++ -*-===//
//
// Part of normfuse. GELU arrives as the product of three factors, 0.5, x
// and 1 + cdf, in any order and association (0.5*x*(1+t), x*(0.5*(1+t)),
// (1+t)*0.5*x, x*Phi(x) with Phi computed first ...), where cdf is
//   tanh(sqrt(2/pi) * (x + 0.044715 * x^3))                 (tanh form)
//   tanh(sqrt(2/pi) * x + sqrt(2/pi) * 0.044715 * x^3)      (expanded)
//   erf(x * 1/sqrt(2)) or erf(x / sqrt(2))                  (exact form)
// and x^3 is pow(x, 3) or a product of three x in any association, its
// coefficient anywhere in that product. The argument of tanh or erf fixes
// x; the outer factors must then be that same x and 0.5.
//
//===----------------------------------------------------------------------===//

#include "ChainMatchers.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/Dialect/NF/Transforms/Patterns.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "nf-raise-gelu"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::chain;

namespace {

/// The ops of a matched chain other than its root (an op may appear
/// twice, as x*x*x can reach one product twice).
using Interior = llvm::SmallVector<Operation *, 16>;

constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kCubeCoefficient = 0.044715;
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kSqrt2 = 1.41421356237309504880;

/// Whether `v` is `coefficient * x^3`: a product (any association) of one
/// splat near `coefficient` and x, x, x or pow(x, 3). Adds the products
/// and the pow to `interior`.
bool isScaledCube(Value v, Value x, double coefficient, Interior &interior) {
  // Leaves of the product tree, stopping at x itself (which may be a
  // product of other values).
  llvm::SmallVector<Value, 4> leaves;
  Interior ops;
  llvm::SmallVector<Value, 4> pending = {v};
  while (!pending.empty()) {
    Value next = pending.pop_back_val();
    Operation *mul = next == x ? nullptr : definedBy(next, Arith::Mul);
    if (!mul) {
      leaves.push_back(next);
    } else {
      ops.push_back(mul);
      pending.append({mul->getOperand(0), mul->getOperand(1)});
    }
    if (leaves.size() + pending.size() > 4)
      return false;
  }
  int powers = 0;
  bool scaled = false;
  for (Value leaf : leaves) {
    Operation *pow = definedBy(leaf, Arith::Pow);
    if (leaf == x) {
      ++powers;
    } else if (pow && pow->getOperand(0) == x &&
               isSplatRounded(pow->getOperand(1), 3.0)) {
      powers += 3;
      ops.push_back(pow);
    } else if (!scaled && isSplatNear(leaf, coefficient)) {
      scaled = true;
    } else {
      return false;
    }
  }
  if (powers != 3 || !scaled)
    return false;
  interior.append(ops.begin(), ops.end());
  return true;
}

/// The x of tanh(sqrt(2/pi) * (x + 0.044715 * x^3)) or of its expanded
/// argument sqrt(2/pi) * x + sqrt(2/pi) * 0.044715 * x^3; null if `tanh`'s
/// argument is neither.
Value matchTanhArgument(Operation *tanh, Interior &interior) {
  Value argument = tanh->getOperand(0);
  Value x;
  Interior ops;
  auto sumWithCube = [&](Value linear, Value cubic, double coefficient,
                         bool scaledLinear) {
    Value candidate = linear;
    if (scaledLinear) {
      Operation *mul = definedBy(linear, Arith::Mul);
      if (!mul || !matchOperands(mul, [&](Value c, Value y) {
            candidate = y;
            return isSplatNear(c, kSqrt2OverPi);
          }))
        return false;
      ops.push_back(mul);
    }
    if (!isScaledCube(cubic, candidate, coefficient, ops))
      return false;
    x = candidate;
    return true;
  };
  if (Operation *scale = definedBy(argument, Arith::Mul)) {
    matchOperands(scale, [&](Value c, Value sum) {
      Operation *add = definedBy(sum, Arith::Add);
      if (!add || !isSplatNear(c, kSqrt2OverPi))
        return false;
      ops = {scale, add};
      return matchOperands(add, [&](Value linear, Value cubic) {
        return sumWithCube(linear, cubic, kCubeCoefficient,
                           /*scaledLinear=*/false);
      });
    });
  } else if (Operation *add = definedBy(argument, Arith::Add)) {
    matchOperands(add, [&](Value linear, Value cubic) {
      ops = {add};
      return sumWithCube(linear, cubic, kSqrt2OverPi * kCubeCoefficient,
                         /*scaledLinear=*/true);
    });
  }
  if (x)
    interior.append(ops.begin(), ops.end());
  return x;
}

/// The x of erf(x * 1/sqrt(2)) (either order) or erf(x / sqrt(2)).
Value matchErfArgument(Operation *erf, Interior &interior) {
  Value argument = erf->getOperand(0);
  Value x;
  if (Operation *mul = definedBy(argument, Arith::Mul)) {
    matchOperands(mul, [&](Value y, Value c) {
      x = isSplatNear(c, kSqrtHalf) ? y : Value();
      return bool(x);
    });
    if (x)
      interior.push_back(mul);
  } else if (Operation *div = definedBy(argument, Arith::Div)) {
    if (isSplatNear(div->getOperand(1), kSqrt2)) {
      x = div->getOperand(0);
      interior.push_back(div);
    }
  }
  return x;
}

using ArgumentMatcher = Value (*)(Operation *, Interior &);

/// The x of `v` = 1 + cdf(x) (either order), with cdf computed by `kind`
/// and its argument read by `matchArgument`.
Value matchOnePlusCdf(Value v, Arith kind, ArgumentMatcher matchArgument,
                      Interior &interior) {
  Operation *add = definedBy(v, Arith::Add);
  if (!add)
    return {};
  Value x;
  matchOperands(add, [&](Value one, Value t) {
    Operation *cdf = definedBy(t, kind);
    if (!cdf || !isSplatNear(one, 1.0))
      return false;
    Interior ops = {add, cdf};
    x = matchArgument(cdf, ops);
    if (x)
      interior.append(ops.begin(), ops.end());
    return bool(x);
  });
  return x;
}

/// 0.5 * x * (1 + cdf(x)) in any order and association of the three
/// factors, where x has the result's type and no intermediate value has a
/// user outside the chain.
struct RaiseGelu : RewritePattern {
  RaiseGelu(MLIRContext *context, Arith cdfKind, ArgumentMatcher matchArgument,
            GeluApproximation approximation)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context),
        cdfKind(cdfKind), matchArgument(matchArgument),
        approximation(approximation) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (classify(op) != Arith::Mul)
      return failure();
    Type type = op->getResult(0).getType();
    if (!isNFFloatTensor(type))
      return rewriter.notifyMatchFailure(op, "not an nf float tensor");
    // Three factors: one operand of `op` is a product of two of them.
    for (unsigned i = 0; i < 2; ++i) {
      Operation *inner = definedBy(op->getOperand(i), Arith::Mul);
      if (!inner)
        continue;
      Value factors[3] = {inner->getOperand(0), inner->getOperand(1),
                          op->getOperand(1 - i)};
      for (unsigned j = 0; j < 3; ++j) {
        Interior interior = {inner};
        Value x = matchOnePlusCdf(factors[j], cdfKind, matchArgument, interior);
        if (!x || x.getType() != type)
          continue;
        Value p = factors[(j + 1) % 3], q = factors[(j + 2) % 3];
        if (!(p == x && isSplatNear(q, 0.5)) &&
            !(q == x && isSplatNear(p, 0.5)))
          continue;
        if (!usesStayInside(interior, op))
          return rewriter.notifyMatchFailure(
              op, "an intermediate value has a user outside the chain");
        LLVM_DEBUG(llvm::dbgs()
                   << "raising " << interior.size() + 1 << " ops to nf.gelu\n");
        rewriter.replaceOpWithNewOp<GeluOp>(
            op, type, x,
            GeluApproximationAttr::get(getContext(), approximation));
        return success();
      }
    }
    return rewriter.notifyMatchFailure(op, "not 0.5 * x * (1 + cdf(x))");
  }

  Arith cdfKind;
  ArgumentMatcher matchArgument;
  GeluApproximation approximation;
};

} // namespace

void nf::populateRaiseGeluTanhPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseGelu>(patterns.getContext(), Arith::Tanh, matchTanhArgument,
                          GeluApproximation::Tanh);
}

void nf::populateRaiseGeluErfPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseGelu>(patterns.getContext(), Arith::Erf, matchErfArgument,
                          GeluApproximation::None);
}
