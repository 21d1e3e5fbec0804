//===- SignlessIntegers.h - unsigned TOSA programs as signless ones -*- C++
//-*-===//
//
// Part of normfuse. TOSA programs may hold unsigned (uiN) and signed (siN)
// integer tensors, as the ONNX importer writes them; upstream's lowerings
// and arith take signless integers only. makeIntegersSignless rewrites a
// function so that every integer is signless and each op whose result
// depends on the sign reads its unsigned operands as unsigned.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_COMMON_SIGNLESSINTEGERS_H
#define NORMFUSE_CODEGEN_COMMON_SIGNLESSINTEGERS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::nf {

/// Rewrites `function` over signless integers, in place, keeping what it
/// computes:
///   - every uiN/siN type (arguments, results, values, constants) becomes
///     iN: the same bits, so callers' buffers are read and written as they
///     were;
///   - ops whose result does not depend on the sign (add, sub, mul without
///     shift, equal, bitwise and logical ops, select, data movement, sums,
///     products, negation) keep their form;
///   - unsigned comparisons, maximum, minimum, reduce_max/min and argmax
///     read their operands with the top bit flipped (a ^ 2^(N-1) orders as
///     signed exactly as a orders as unsigned), and flip it back in the
///     value they return; so do those on i1, which upstream orders as
///     signed (true below false) where TOSA's maximum of booleans is
///     their or;
///   - casts from unsigned integers zero-extend or convert as unsigned
///     (arith.extui, arith.uitofp); casts from floats to unsigned integers
///     round to nearest even and saturate to [0, 2^N - 1] (NaN to 0), as
///     tosa.cast does to signed ones; these become linalg.generic ops.
/// Any other op on an unsigned integer is an error at it, naming it; so is
/// a function with such types that another function calls.
LogicalResult makeIntegersSignless(func::FuncOp function);

/// Makes every integer division and remainder of `function` (arith.divsi,
/// divui, remsi, remui on integers, not indices) total, so that no input
/// traps the CPU (x86's idiv faults) or the simulator: x / 0 and x % 0 are
/// 0, and INT_MIN / -1 is INT_MIN (the wrapped quotient), its remainder 0.
/// TOSA and ONNX leave these undefined; normfuse gives every target the
/// same answer.
void makeIntegerDivisionTotal(func::FuncOp function);

} // namespace mlir::nf

#endif // NORMFUSE_CODEGEN_COMMON_SIGNLESSINTEGERS_H
