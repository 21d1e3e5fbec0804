//===- ActivationMath.cpp - activation functions as arith/math --*- C++ -*-===//
//
// Part of normfuse. ReLU, GELU (exact and tanh), SiLU and their gradients
// on scalars or vectors, for every back end (see ActivationMath.h).
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Common/ActivationMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mlir::nf;

Type nf::widen(Type type, int64_t width) {
  return width == 1 ? type : VectorType::get({width}, type);
}

Value nf::floatConstant(OpBuilder &b, Location loc, double value, Type type,
                        int64_t width) {
  auto attr = b.getFloatAttr(type, value);
  if (width == 1)
    return b.create<arith::ConstantOp>(loc, attr);
  auto vecType = VectorType::get({width}, type);
  return b.create<arith::ConstantOp>(loc,
                                     DenseElementsAttr::get(vecType, attr));
}

Value nf::emitRelu(OpBuilder &b, Location loc, Value x, int64_t w) {
  // maximumf propagates NaN, as PyTorch's relu does.
  Type t = getElementTypeOrSelf(x.getType());
  return b.create<arith::MaximumFOp>(loc, x, floatConstant(b, loc, 0, t, w));
}

/// 2^t for f32 `t` (scalars or vectors of `w` lanes), for the logistic
/// functions below: 2^n * p(f), n = round(t) made in the exponent bits,
/// p the degree-7 Taylor polynomial of 2^f = e^(f ln 2) for the rest f in
/// [-0.5, 0.5] (truncation error under 1e-8 relative). t is first clamped
/// to [-126, 128] (a NaN to 128): 2^-126 stands for anything smaller, which
/// 1 + 2^t cannot tell apart, and n = 128 sets every exponent bit, which
/// makes infinity, as the exact 2^t would overflow to.
static Value emitExp2(OpBuilder &b, Location loc, Value t, int64_t w,
                      Exp2Form form) {
  if (form == Exp2Form::MathOp)
    return b.create<math::Exp2Op>(loc, t);
  Type f32 = b.getF32Type();
  auto c = [&](double v) { return floatConstant(b, loc, v, f32, w); };
  auto ic = [&](int32_t v) -> Value {
    Type i32 = b.getI32Type();
    if (w == 1)
      return b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(v));
    auto type = VectorType::get({w}, i32);
    return b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(type, b.getI32IntegerAttr(v)));
  };
  // select(t < 128, t, 128) is 128 for a NaN (one vminps on x86).
  auto clampTo = [&](arith::CmpFPredicate keep, double bound) {
    Value limit = c(bound);
    Value inside = b.create<arith::CmpFOp>(loc, keep, t, limit);
    t = b.create<arith::SelectOp>(loc, inside, t, limit);
  };
  clampTo(arith::CmpFPredicate::OLT, 128.0);
  clampTo(arith::CmpFPredicate::OGT, -126.0);
  Value n = b.create<math::RoundEvenOp>(loc, t);
  Value f = b.create<arith::SubFOp>(loc, t, n);
  // ln(2)^i / i!, highest degree first.
  Value p = c(std::pow(M_LN2, 7) / 5040);
  for (int i = 6; i >= 0; --i) {
    double factorial = std::tgamma(i + 1);
    p = b.create<math::FmaOp>(loc, p, f, c(std::pow(M_LN2, i) / factorial));
  }
  Type intType = widen(b.getI32Type(), w);
  Value bits = b.create<arith::ShLIOp>(
      loc,
      b.create<arith::AddIOp>(loc, b.create<arith::FPToSIOp>(loc, intType, n),
                              ic(127)),
      ic(23));
  Value scale = b.create<arith::BitcastOp>(loc, widen(f32, w), bits);
  return b.create<arith::MulFOp>(loc, p, scale);
}

/// x / (1 + 2^t): x times the logistic function of -t ln 2.
static Value divideByOnePlusExp2(OpBuilder &b, Location loc, Value x, Value t,
                                 int64_t w, Exp2Form form) {
  Value one = floatConstant(b, loc, 1.0, b.getF32Type(), w);
  return b.create<arith::DivFOp>(
      loc, x, b.create<arith::AddFOp>(loc, one, emitExp2(b, loc, t, w, form)));
}

Value nf::emitGelu(OpBuilder &b, Location loc, Value x, int64_t w,
                   GeluApproximation approximation, Exp2Form form) {
  Type t = getElementTypeOrSelf(x.getType());
  auto c = [&](double v) { return floatConstant(b, loc, v, t, w); };
  if (approximation == GeluApproximation::Tanh && t.isF32()) {
    // 0.5 x (1 + tanh(u)) = x / (1 + e^(-2u)), u = sqrt(2/pi) (x + a x^3):
    // e^(-2u) = 2^(x (k0 + k1 x^2)) with k0 = -2 sqrt(2/pi) log2(e) and
    // k1 = a k0. About half the operations of x^3 and MLIR's rational
    // tanh (its 11 multiply-adds, small-argument select and the final
    // 0.5 x (1 + t)), and no cancellation in 1 + tanh(u) for negative x.
    double k0 = -2.0 * std::sqrt(2.0 / M_PI) * M_LOG2E;
    double k1 = 0.044715 * k0;
    Value x2 = b.create<arith::MulFOp>(loc, x, x);
    Value exponent = b.create<arith::MulFOp>(
        loc, x, b.create<math::FmaOp>(loc, x2, c(k1), c(k0)));
    return divideByOnePlusExp2(b, loc, x, exponent, w, form);
  }
  Value cdfArg;
  Value special;
  if (approximation == GeluApproximation::Tanh) {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Value x3 =
        b.create<arith::MulFOp>(loc, x, b.create<arith::MulFOp>(loc, x, x));
    Value inner = b.create<arith::AddFOp>(
        loc, x, b.create<arith::MulFOp>(loc, c(0.044715), x3));
    cdfArg = b.create<arith::MulFOp>(loc, c(std::sqrt(2.0 / M_PI)), inner);
    special = b.create<math::TanhOp>(loc, cdfArg);
  } else {
    // 0.5 x (1 + erf(x / sqrt(2)))
    cdfArg = b.create<arith::MulFOp>(loc, c(M_SQRT1_2), x);
    special = b.create<math::ErfOp>(loc, cdfArg);
  }
  Value half = b.create<arith::MulFOp>(loc, c(0.5), x);
  return b.create<arith::MulFOp>(loc, half,
                                 b.create<arith::AddFOp>(loc, c(1.0), special));
}

Value nf::emitSilu(OpBuilder &b, Location loc, Value x, int64_t w,
                   Exp2Form form) {
  // x * sigmoid(x) = x / (1 + e^-x), e^-x = 2^(-x log2(e)) in f32.
  Type t = getElementTypeOrSelf(x.getType());
  if (t.isF32())
    return divideByOnePlusExp2(
        b, loc, x,
        b.create<arith::MulFOp>(loc, x, floatConstant(b, loc, -M_LOG2E, t, w)),
        w, form);
  Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
  Value denom =
      b.create<arith::AddFOp>(loc, floatConstant(b, loc, 1.0, t, w), e);
  return b.create<arith::DivFOp>(loc, x, denom);
}

/// relu_grad from the forward output y: dy where y > 0, else 0. A NaN y
/// passes dy through, as PyTorch's threshold_backward does.
Value nf::emitReluGrad(OpBuilder &b, Location loc, Value dy, Value y,
                       int64_t w) {
  Type t = getElementTypeOrSelf(y.getType());
  Value zero = floatConstant(b, loc, 0.0, t, w);
  Value off = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, y, zero);
  return b.create<arith::SelectOp>(loc, off, zero, dy);
}

/// gelu_grad: dy * d/dx gelu(x).
Value nf::emitGeluGrad(OpBuilder &b, Location loc, Value dy, Value x, int64_t w,
                       GeluApproximation approximation) {
  Type t = getElementTypeOrSelf(x.getType());
  auto c = [&](double v) { return floatConstant(b, loc, v, t, w); };
  auto mul = [&](Value l, Value r) {
    return b.create<arith::MulFOp>(loc, l, r).getResult();
  };
  auto add = [&](Value l, Value r) {
    return b.create<arith::AddFOp>(loc, l, r).getResult();
  };
  Value x2 = mul(x, x);
  Value derivative;
  if (approximation == GeluApproximation::Tanh) {
    // u = k (x + a x^3), t = tanh(u):
    // 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 a x^2)
    const double k = std::sqrt(2.0 / M_PI), a = 0.044715;
    Value u = mul(c(k), add(x, mul(c(a), mul(x2, x))));
    Value th = b.create<math::TanhOp>(loc, u);
    Value du = mul(c(k), add(c(1.0), mul(c(3.0 * a), x2)));
    Value sech2 = b.create<arith::SubFOp>(loc, c(1.0), mul(th, th));
    derivative =
        add(mul(c(0.5), add(c(1.0), th)), mul(mul(c(0.5), x), mul(sech2, du)));
  } else {
    // Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
    Value cdf = mul(
        c(0.5), add(c(1.0), b.create<math::ErfOp>(loc, mul(c(M_SQRT1_2), x))));
    Value pdf = mul(c(1.0 / std::sqrt(2.0 * M_PI)),
                    b.create<math::ExpOp>(loc, mul(c(-0.5), x2)));
    derivative = add(cdf, mul(x, pdf));
  }
  return mul(dy, derivative);
}

/// silu_grad: dy * s * (1 + x * (1 - s)), s = sigmoid(x).
Value nf::emitSiluGrad(OpBuilder &b, Location loc, Value dy, Value x,
                       int64_t w) {
  Type t = getElementTypeOrSelf(x.getType());
  Value one = floatConstant(b, loc, 1.0, t, w);
  Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
  Value s =
      b.create<arith::DivFOp>(loc, one, b.create<arith::AddFOp>(loc, one, e));
  Value inner = b.create<arith::AddFOp>(
      loc, one,
      b.create<arith::MulFOp>(loc, x, b.create<arith::SubFOp>(loc, one, s)));
  return b.create<arith::MulFOp>(loc, dy,
                                 b.create<arith::MulFOp>(loc, s, inner));
}

Value nf::emitActivationGrad(OpBuilder &b, Location loc, Operation *op,
                             Value dy, Value x, int64_t w) {
  if (isa<ReluGradOp>(op))
    return emitReluGrad(b, loc, dy, x, w);
  if (auto gelu = dyn_cast<GeluGradOp>(op))
    return emitGeluGrad(b, loc, dy, x, w, gelu.getApproximate());
  return emitSiluGrad(b, loc, dy, x, w);
}
