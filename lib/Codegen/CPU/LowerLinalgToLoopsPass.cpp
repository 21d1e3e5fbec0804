//===- LowerLinalgToLoopsPass.cpp - linalg to loops -------------*- C++ -*-===//
//
// Part of normfuse. Lowers the linalg ops on buffers that TOSA ops became to
// loops: scf.parallel over the parallel dimensions with scf.for reductions
// inside, sequential loops for convolutions. It visits the functions that
// hold linalg ops only and rewrites those ops alone (no greedy driver,
// which would fold and reorder the constants of the whole function).
//
//===----------------------------------------------------------------------===//

#include "LinalgSums.h"
#include "normfuse/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFLOWERLINALGTOLOOPSPASS
#include "normfuse/Codegen/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;

namespace {
struct NFLowerLinalgToLoopsPass
    : nf::impl::NFLowerLinalgToLoopsPassBase<NFLowerLinalgToLoopsPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (!fn.walk([](linalg::LinalgOp) {
             return WalkResult::interrupt();
           }).wasInterrupted())
      return;
    // Parallel dimensions become one scf.parallel (run on several
    // threads), reductions scf.for loops inside it. Convolutions are the
    // exception: as parallel loops, LLVM 19's OpenMP translation crashes on
    // them (CodeExtractor::findAllocas, seen with a padded NHWC conv), so
    // they become sequential loops. Sums (a tosa.reduce_sum, a matmul) are
    // taken as normfuse's own reductions take theirs, in f64 (LinalgSums.h):
    // upstream's loops add into the output one term at a time. This is the
    // reference route for TOSA input, not the fast one.
    SmallVector<linalg::LinalgOp> ops;
    fn.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      if (nf::cpu::matchLinalgSumTerm(op)) {
        nf::cpu::lowerLinalgSum(rewriter, op);
        continue;
      }
      rewriter.setInsertionPoint(op);
      bool convolution = isa<linalg::ConvolutionOpInterface>(op.getOperation());
      FailureOr<linalg::LinalgLoops> loops =
          convolution ? linalg::linalgOpToLoops(rewriter, op)
                      : linalg::linalgOpToParallelLoops(rewriter, op);
      if (failed(loops)) {
        op->emitOpError() << "cannot be lowered to loops";
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
    // The loops index through affine.apply, mostly identities: fold those
    // ops (and only those) so loads index by the induction variables.
    SmallVector<Operation *> applies;
    fn.walk([&](affine::AffineApplyOp apply) { applies.push_back(apply); });
    RewritePatternSet patterns(&getContext());
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, &getContext());
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingOps;
    (void)applyOpPatternsAndFold(applies, std::move(patterns), config);
  }
};
} // namespace
