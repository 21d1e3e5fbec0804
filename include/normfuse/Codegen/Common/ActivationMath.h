//===- ActivationMath.h - activation functions as arith/math ----*- C++ -*-===//
//
// Part of normfuse. The math of the pointwise activations and their
// gradients, built from arith and math ops on a scalar or a vector of
// lanes, shared by every back end: the CPU loops and the CUDA kernels apply
// the same formulas, and only the form of 2^t is chosen per target (a
// polynomial the CPU vectorizes, or math.exp2, which CUDA prints as exp2f,
// one hardware instruction).
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_COMMON_ACTIVATIONMATH_H
#define NORMFUSE_CODEGEN_COMMON_ACTIVATIONMATH_H

#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::nf {

/// A scalar (`width` == 1) or splat-vector constant of float type `type`.
Value floatConstant(OpBuilder &b, Location loc, double value, Type type,
                    int64_t width);

/// `type` as a vector of `width` lanes (or itself when `width` == 1).
Type widen(Type type, int64_t width);

/// How a target computes 2^t in the f32 logistic forms of GELU (tanh) and
/// SiLU, x / (1 + 2^t).
enum class Exp2Form {
  /// 2^round(t) made in the exponent bits times a degree-7 polynomial:
  /// vectorizes on any CPU (LLVM's exp2 would call libm per lane).
  Polynomial,
  /// math.exp2: CUDA's exp2f (ex2.approx, one instruction, 2 ulp).
  MathOp,
};

/// relu, gelu and silu of a scalar or vector `x` of `width` lanes (f32 or
/// f64).
Value emitRelu(OpBuilder &b, Location loc, Value x, int64_t width);
Value emitGelu(OpBuilder &b, Location loc, Value x, int64_t width,
               GeluApproximation approximation,
               Exp2Form exp2 = Exp2Form::Polynomial);
Value emitSilu(OpBuilder &b, Location loc, Value x, int64_t width,
               Exp2Form exp2 = Exp2Form::Polynomial);

/// relu_grad (from the forward output), gelu_grad and silu_grad (from the
/// forward input) of `dy` at `x`.
Value emitReluGrad(OpBuilder &b, Location loc, Value dy, Value y,
                   int64_t width);
Value emitGeluGrad(OpBuilder &b, Location loc, Value dy, Value x, int64_t width,
                   GeluApproximation approximation);
Value emitSiluGrad(OpBuilder &b, Location loc, Value dy, Value x,
                   int64_t width);
/// The one of the three `op` (relu_grad, gelu_grad or silu_grad) is.
Value emitActivationGrad(OpBuilder &b, Location loc, Operation *op, Value dy,
                         Value x, int64_t width);

} // namespace mlir::nf

#endif // NORMFUSE_CODEGEN_COMMON_ACTIVATIONMATH_H
