//===- RaisePatterns.cpp - the raising families and nf-raise ----*- C++ -*-===//
//
// Part of normfuse. Names each raising family (for nf-test-raise-patterns)
// and runs them all in the nf-raise pass.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Dialect/NF/IR/NFDialect.h"
#include "normfuse/Dialect/NF/Transforms/Passes.h"
#include "normfuse/Dialect/NF/Transforms/Patterns.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFRAISEPASS
#include "normfuse/Dialect/NF/Transforms/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;

namespace {

struct Family {
  llvm::StringLiteral name;
  void (*populate)(RewritePatternSet &);
};

// The order here does not decide what is raised. Where two families can
// match the same root op (a LayerNorm's final "+ shift" is also a
// broadcast add), the norm patterns have the higher benefit, so the larger
// chain wins. Inside a chain, every family reads ops dialect-neutrally (an
// inner add already raised to nf.add still matches), so the order in which
// the greedy driver visits ops does not change the result either.
const Family kFamilies[] = {
    {"producers", nf::populateRaiseProducerPatterns},
    {"layer-norm", nf::populateRaiseLayerNormPatterns},
    {"rms-norm", nf::populateRaiseRMSNormPatterns},
    {"group-norm", nf::populateRaiseGroupNormPatterns},
    {"gelu-tanh", nf::populateRaiseGeluTanhPatterns},
    {"gelu-erf", nf::populateRaiseGeluErfPatterns},
    {"silu", nf::populateRaiseSiluPatterns},
    {"relu", nf::populateRaiseReluPatterns},
    {"bias-add", nf::populateRaiseBiasAddPatterns},
    {"residual-add", nf::populateRaiseResidualAddPatterns},
};

struct NFRaisePass : nf::impl::NFRaisePassBase<NFRaisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    nf::populateRaisePatterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

llvm::ArrayRef<llvm::StringRef> nf::getRaisePatternFamilies() {
  static const llvm::SmallVector<llvm::StringRef> names = [] {
    llvm::SmallVector<llvm::StringRef> result;
    for (const Family &family : kFamilies)
      result.push_back(family.name);
    return result;
  }();
  return names;
}

LogicalResult nf::populateRaisePatternFamily(RewritePatternSet &patterns,
                                             llvm::StringRef name) {
  for (const Family &family : kFamilies) {
    if (family.name == name) {
      family.populate(patterns);
      return success();
    }
  }
  return failure();
}

void nf::populateRaisePatterns(RewritePatternSet &patterns) {
  for (const Family &family : kFamilies)
    family.populate(patterns);
}
