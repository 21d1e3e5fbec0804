//===- NormMath.h - the formulas every norm lowering shares -----*- C++ -*-===//
//
// Part of normfuse. The arithmetic of the norms, independent of how a
// target walks the data: the reciprocal standard deviation, Chan's
// combination of two partial (count, mean, M2) moments, and the normalize
// step. Both back ends build their loops around these, so a change to a
// formula changes it everywhere.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_COMMON_NORMMATH_H
#define NORMFUSE_CODEGEN_COMMON_NORMMATH_H

#include "mlir/IR/Builders.h"

namespace mlir::nf {

/// 1 / sqrt(v + eps) in v's (scalar float) type: a correctly rounded square
/// root and division, not an approximate rsqrt, so targets agree.
Value emitRstd(OpBuilder &b, Location loc, Value meanOfSquares, double epsilon);

/// Partial moments of a set of values: how many, their mean, and M2, the
/// sum of squared deviations from that mean. Scalars of one float type.
struct Moments {
  Value count;
  Value mean;
  Value m2;
};

/// The moments of the union of two disjoint sets (Chan, Golub and LeVeque):
/// delta = mean_b - mean_a, n = n_a + n_b,
/// mean = mean_a + delta n_b / n, M2 = M2_a + M2_b + delta^2 n_a n_b / n.
/// An empty side (count 0) leaves the other unchanged (no 0/0).
Moments emitChanCombine(OpBuilder &b, Location loc, const Moments &a,
                        const Moments &b2);

/// (x - mean) * rstd, times scale and plus bias where those are non-null
/// (`mean` is null for RMSNorm). All operands of one float type, scalars
/// or vectors of the same lanes (splat mean/rstd first).
Value emitNormalize(OpBuilder &b, Location loc, Value x, Value mean, Value rstd,
                    Value scale, Value bias);

/// The input gradient of a norm over n elements, from g*dy (the output
/// gradient times the scale), xhat (the normalized input), rstd, and the
/// means over the n elements of g*dy*xhat and of g*dy:
///   dx = rstd * (g*dy - mean(g*dy) - xhat * mean(g*dy*xhat))
/// `meanGradOutput` is null for RMSNorm, which has no mean to subtract.
/// Operands as for emitNormalize.
Value emitNormGradInput(OpBuilder &b, Location loc, Value scaledGradOutput,
                        Value xhat, Value meanGradOutputXhat,
                        Value meanGradOutput, Value rstd);

} // namespace mlir::nf

#endif // NORMFUSE_CODEGEN_COMMON_NORMMATH_H
