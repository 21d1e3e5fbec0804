//===- ExpandMathPass.cpp - nf-expand-math, nf-align-streaming-stores ----===//
//
// Part of normfuse. nf-expand-math replaces math functions with MLIR's
// polynomial approximations (which vectorize, unlike calls into libm),
// bf16 conversions with integer arithmetic (which needs no soft-float
// runtime), and signed floor and ceiling divisions (tosa.resize's source
// positions), which the LLVM conversion does not take, with a division and
// a correction. nf-align-streaming-stores states the alignment of the
// non-temporal vector stores of the nf loops on the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFEXPANDMATHPASS
#define GEN_PASS_DEF_NFALIGNSTREAMINGSTORESPASS
#include "normfuse/Codegen/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;

namespace {
struct NFExpandMathPass : nf::impl::NFExpandMathPassBase<NFExpandMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    arith::populateExpandBFloat16Patterns(patterns);
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

/// The alignment of nf's non-temporal vector stores (kStreamingAlignment
/// in lib/Codegen/CPU/LoopUtils.h).
constexpr int64_t kAlignment = 16;

struct NFAlignStreamingStoresPass
    : nf::impl::NFAlignStreamingStoresPassBase<NFAlignStreamingStoresPass> {
  void runOnOperation() override {
    getOperation()->walk([](LLVM::StoreOp store) {
      auto function = store->getParentOfType<LLVM::LLVMFuncOp>();
      if (!function || !function->hasAttr("nf.streaming_stores"))
        return;
      auto type = dyn_cast<VectorType>(store.getValue().getType());
      if (!store.getNontemporal() || !type || !type.hasStaticShape())
        return;
      int64_t bits = type.getNumElements() * type.getElementTypeBitWidth();
      if (bits % (8 * kAlignment) == 0)
        store.setAlignment(kAlignment);
    });
  }
};
} // namespace
