//===- LinalgSums.h - linalg sums as blocked f64 sums -----------*- C++ -*-===//
//
// Part of normfuse. The linalg ops that upstream lowerings leave (a
// tosa.reduce_sum, a tosa.matmul) add their terms one by one into the
// output: a sequential sum in the storage type, whose error grows with the
// length of the reduction (f32 over 32768 terms of mean 100 loses about five
// ulps of the mean; f16 far more). Here such a sum is taken as normfuse's own
// reductions take theirs (emitBlockedSumF64) and rounded once into the output.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_CODEGEN_CPU_LINALGSUMS_H
#define NORMFUSE_LIB_CODEGEN_CPU_LINALGSUMS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::nf::cpu {

/// The value that the body of `op` adds to its output, when `op` is a sum:
/// a linalg op on buffers with one output and one reduction dimension, whose
/// body yields `addf(term, out)` (either order), uses the output's element
/// nowhere else, and reads no linalg.index. Null otherwise.
Value matchLinalgSumTerm(linalg::LinalgOp op);

/// Replaces the sum `op` (matchLinalgSumTerm) with loops: one scf.parallel
/// over its parallel dimensions; inside it, the terms summed in f64 over the
/// reduction dimension and added to the output's element with one rounding.
void lowerLinalgSum(RewriterBase &rewriter, linalg::LinalgOp op);

} // namespace mlir::nf::cpu

#endif // NORMFUSE_LIB_CODEGEN_CPU_LINALGSUMS_H
