//===- FunctionPrep.h - shared steps before lowering a function -*- C++ -*-===//
//
// Part of normfuse. What every back end does to a function of nf ops on
// tensors before lowering its ops: inline an nf.fused group it does not
// lower as one kernel (its ops then run one after the other), and give
// each returned value a buffer of its own.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_COMMON_FUNCTIONPREP_H
#define NORMFUSE_CODEGEN_COMMON_FUNCTIONPREP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::nf {

class FusedOp;

/// Replaces `op` by the ops of its body.
void inlineFusedBody(RewriterBase &rewriter, FusedOp op);

/// Gives each returned value a buffer of its own: an argument returned as
/// it is (what folding makes of `bias_add %x, zeros`) or a value returned
/// twice becomes a copy. Results become out-parameters after
/// bufferization, and an out-parameter cannot alias an input or another
/// out-parameter (buffer-results-to-out-params crashes on the former).
void copyAliasedResults(func::FuncOp function);

} // namespace mlir::nf

#endif // NORMFUSE_CODEGEN_COMMON_FUNCTIONPREP_H
