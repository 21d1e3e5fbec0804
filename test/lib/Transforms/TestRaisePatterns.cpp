//===- TestRaisePatterns.cpp - run raising families alone -------*- C++ -*-===//
//
// Part of normfuse. nf-test-raise-patterns{families=gelu-tanh,silu} applies
// only the named raising families (greedily, to a fixed point), so each
// pattern's lit tests show what it does without the others' help.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Dialect/NF/IR/NFDialect.h"
#include "normfuse/Dialect/NF/Transforms/Patterns.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace {

struct TestRaisePatternsPass
    : PassWrapper<TestRaisePatternsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestRaisePatternsPass)

  TestRaisePatternsPass() = default;
  TestRaisePatternsPass(const TestRaisePatternsPass &other)
      : PassWrapper(other), frozen(other.frozen) {}

  StringRef getArgument() const final { return "nf-test-raise-patterns"; }
  StringRef getDescription() const final {
    return "Apply only the named raising pattern families";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<nf::NFDialect, tensor::TensorDialect, tosa::TosaDialect>();
  }

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet patterns(context);
    for (const std::string &family : families) {
      if (failed(nf::populateRaisePatternFamily(patterns, family)))
        return emitError(UnknownLoc::get(context))
               << "nf-test-raise-patterns: unknown family '" << family
               << "' (known: "
               << llvm::join(nf::getRaisePatternFamilies(), ", ") << ")";
    }
    frozen = std::move(patterns);
    return success();
  }

  void runOnOperation() override {
    if (failed(applyPatternsAndFoldGreedily(getOperation(), frozen)))
      signalPassFailure();
  }

  ListOption<std::string> families{
      *this, "families",
      llvm::cl::desc("Raising families to apply (e.g. gelu-tanh,silu)")};
  FrozenRewritePatternSet frozen;
};

} // namespace

namespace mlir::nf::test {
void registerTestRaisePatternsPass() {
  PassRegistration<TestRaisePatternsPass>();
}
} // namespace mlir::nf::test
