//===- ExpandMathPass.cpp - the nf-expand-math pass -------------*- C++ -*-===//
//
// Part of normfuse. Replaces math functions with MLIR's polynomial
// approximations (which vectorize, unlike calls into libm) and bf16
// conversions with integer arithmetic (which needs no soft-float runtime).
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFEXPANDMATHPASS
#include "normfuse/Codegen/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;

namespace {
struct NFExpandMathPass : nf::impl::NFExpandMathPassBase<NFExpandMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
