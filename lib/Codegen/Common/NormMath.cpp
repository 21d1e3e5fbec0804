//===- NormMath.cpp - the formulas every norm lowering shares ---*- C++ -*-===//
//
// Part of normfuse. rstd, Chan's combination of partial moments and the
// normalize step, as arith/math ops (see NormMath.h).
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Common/NormMath.h"
#include "normfuse/Codegen/Common/ActivationMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::nf;

Value nf::emitRstd(OpBuilder &b, Location loc, Value meanOfSquares,
                   double epsilon) {
  Type t = meanOfSquares.getType();
  Value sum = b.create<arith::AddFOp>(loc, meanOfSquares,
                                      floatConstant(b, loc, epsilon, t, 1));
  return b.create<arith::DivFOp>(loc, floatConstant(b, loc, 1.0, t, 1),
                                 b.create<math::SqrtOp>(loc, sum));
}

Moments nf::emitChanCombine(OpBuilder &b, Location loc, const Moments &a,
                            const Moments &o) {
  Type t = a.mean.getType();
  Value zero = floatConstant(b, loc, 0.0, t, 1);
  Value n = b.create<arith::AddFOp>(loc, a.count, o.count);
  // n_b / n, 0 when both sides are empty.
  Value emptyBoth =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, n, zero);
  Value safeN = b.create<arith::SelectOp>(loc, emptyBoth,
                                          floatConstant(b, loc, 1.0, t, 1), n);
  Value fraction = b.create<arith::DivFOp>(loc, o.count, safeN);
  Value delta = b.create<arith::SubFOp>(loc, o.mean, a.mean);
  Value mean = b.create<math::FmaOp>(loc, delta, fraction, a.mean);
  // delta^2 n_a n_b / n = delta^2 n_a (n_b / n)
  Value cross =
      b.create<arith::MulFOp>(loc, b.create<arith::MulFOp>(loc, delta, delta),
                              b.create<arith::MulFOp>(loc, a.count, fraction));
  // An empty side contributes nothing, even when its mean is garbage.
  Value aEmpty =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, a.count, zero);
  Value oEmpty =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, o.count, zero);
  Value m2 = b.create<arith::AddFOp>(
      loc, b.create<arith::AddFOp>(loc, a.m2, o.m2), cross);
  mean = b.create<arith::SelectOp>(loc, oEmpty, a.mean, mean);
  mean = b.create<arith::SelectOp>(loc, aEmpty, o.mean, mean);
  m2 = b.create<arith::SelectOp>(loc, oEmpty, a.m2, m2);
  m2 = b.create<arith::SelectOp>(loc, aEmpty, o.m2, m2);
  return {n, mean, m2};
}

Value nf::emitScaleAndBias(OpBuilder &b, Location loc, Value y, Value scale,
                           Value bias, NormalizeForm form) {
  if (scale && bias && form == NormalizeForm::FusedScaleBias)
    return b.create<math::FmaOp>(loc, y, scale, bias);
  if (scale)
    y = b.create<arith::MulFOp>(loc, y, scale);
  if (bias)
    y = b.create<arith::AddFOp>(loc, y, bias);
  return y;
}

Value nf::emitNormalize(OpBuilder &b, Location loc, Value x, Value mean,
                        Value rstd, Value scale, Value bias,
                        NormalizeForm form) {
  Value centered = mean ? b.create<arith::SubFOp>(loc, x, mean).getResult() : x;
  Value y = b.create<arith::MulFOp>(loc, centered, rstd);
  return emitScaleAndBias(b, loc, y, scale, bias, form);
}

Value nf::emitShiftedNormalize(OpBuilder &b, Location loc, Value x, Value rstd,
                               Value shift, Value scale, Value bias,
                               NormalizeForm form) {
  Value y = b.create<math::FmaOp>(loc, x, rstd, shift);
  return emitScaleAndBias(b, loc, y, scale, bias, form);
}

Value nf::emitNormalizeShift(OpBuilder &b, Location loc, Value mean,
                             Value rstd) {
  return b.create<arith::NegFOp>(loc, b.create<arith::MulFOp>(loc, mean, rstd));
}

Value nf::emitNormGradInput(OpBuilder &b, Location loc, Value scaledGradOutput,
                            Value xhat, Value meanGradOutputXhat,
                            Value meanGradOutput, Value rstd) {
  Value v = scaledGradOutput;
  if (meanGradOutput)
    v = b.create<arith::SubFOp>(loc, v, meanGradOutput);
  v = b.create<arith::SubFOp>(
      loc, v, b.create<arith::MulFOp>(loc, xhat, meanGradOutputXhat));
  return b.create<arith::MulFOp>(loc, v, rstd);
}
