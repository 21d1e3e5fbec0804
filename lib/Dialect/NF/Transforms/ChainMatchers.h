//===- ChainMatchers.h - dialect-neutral matching of op chains --*- C++ -*-===//
//
// Part of normfuse. The raising patterns read decomposed graphs written in
// TOSA, in elementwise arith/math ops on tensors, or in nf's own add and
// mul. These helpers let a pattern ask "is this a multiply by 0.5?" once,
// whatever the dialect.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_DIALECT_NF_TRANSFORMS_CHAINMATCHERS_H
#define NORMFUSE_LIB_DIALECT_NF_TRANSFORMS_CHAINMATCHERS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace mlir::nf::chain {

/// What an elementwise op computes, whichever dialect spells it.
enum class Arith {
  None,
  Add,        // tosa.add, arith.addf, nf.add
  Sub,        // tosa.sub, arith.subf
  Mul,        // tosa.mul (shift 0), arith.mulf, nf.mul
  Div,        // arith.divf
  Pow,        // tosa.pow, math.powf
  Max,        // tosa.maximum, arith.maximumf (NaN-propagating only)
  Tanh,       // tosa.tanh, math.tanh
  Erf,        // tosa.erf, math.erf
  Sigmoid,    // tosa.sigmoid
  Exp,        // tosa.exp, math.exp
  Rsqrt,      // tosa.rsqrt, math.rsqrt
  Sqrt,       // math.sqrt
  Reciprocal, // tosa.reciprocal
  Negate,     // tosa.negate, arith.negf
};

/// Classifies `op` (None for anything that is not one of the ops above on
/// floating-point tensors).
Arith classify(Operation *op);

/// Whether the op computes a commutative function of its two operands.
bool isCommutative(Arith kind);

/// `v`'s defining op if it computes `kind`, else null.
Operation *definedBy(Value v, Arith kind);

/// The value of a floating-point splat constant (tosa.const or
/// arith.constant, possibly through tosa.reshape or tensor.reshape /
/// expand_shape / collapse_shape of a constant).
std::optional<double> splatValue(Value v);

/// Whether `v` is a splat constant equal to `expected` within the rounding
/// of its element type: a relative 1e-4 for f32 and f64 (frameworks print
/// sqrt(2/pi) to 8-10 digits), one ulp for f16 and bf16.
bool isSplatNear(Value v, double expected);

/// For a binary op: calls `fn(lhs, rhs)`, and for a commutative one also
/// `fn(rhs, lhs)` if the first call returned false.
bool matchOperands(Operation *op, llvm::function_ref<bool(Value, Value)> fn);

/// Whether every use of a result of an op in `interior` is an op of
/// `interior` or `root`: replacing `root` then loses no value that another
/// op still needs.
bool usesStayInside(llvm::ArrayRef<Operation *> interior, Operation *root);

/// Whether `type` is a ranked tensor of an element type that nf ops take
/// (f16, bf16, f32, f64): classify() accepts any float, nf ops do not.
bool isNFFloatTensor(Type type);

/// Whether `v` is a splat constant equal to `expected` to within one unit
/// in the last place of its element type: tighter than isSplatNear's 1e-4
/// for f32, which cannot tell 1/N from 1/(N+1) for a large N, nor an
/// exponent of 3 from 3.0003.
bool isSplatRounded(Value v, double expected);

} // namespace mlir::nf::chain

#endif // NORMFUSE_LIB_DIALECT_NF_TRANSFORMS_CHAINMATCHERS_H
