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

/// How a target rounds the normalize step's scale and bias.
enum class NormalizeForm {
  /// y * scale, then + bias, each rounded (CUDA: NVRTC contracts them as
  /// it sees fit).
  Separate,
  /// y * scale + bias as one fma where both are given: the CPU's (one
  /// instruction, one rounding).
  FusedScaleBias,
};

/// (x - mean) * rstd, times scale and plus bias where those are non-null
/// (`mean` is null for RMSNorm). All operands of one float type, scalars
/// or vectors of the same lanes (splat mean/rstd first).
Value emitNormalize(OpBuilder &b, Location loc, Value x, Value mean, Value rstd,
                    Value scale, Value bias,
                    NormalizeForm form = NormalizeForm::Separate);

/// The same with the centering folded into one fma, x * rstd + shift,
/// where shift = -mean * rstd (emitNormalizeShift): one instruction less
/// per element, and rounding shift costs |mean| / std * 2^-24 of a result
/// of order 1. The CPU's bf16 rows take it, where that is 2^-15 of what
/// rounding x to bf16 already costs.
Value emitShiftedNormalize(OpBuilder &b, Location loc, Value x, Value rstd,
                           Value shift, Value scale, Value bias,
                           NormalizeForm form);
/// -mean * rstd.
Value emitNormalizeShift(OpBuilder &b, Location loc, Value mean, Value rstd);
/// The last step of both: y times scale and plus bias, where those are
/// non-null, in `form`.
Value emitScaleAndBias(OpBuilder &b, Location loc, Value y, Value scale,
                       Value bias, NormalizeForm form);

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
