//===- TestFusion.cpp - the fusion driver under other policies --*- C++ -*-===//
//
// Part of normfuse. nf-test-fusion{control=NAME} runs fuseProducerGroups with
// a control function other than normfuse's default, so lit tests can tell
// the driver's legality rules (which no control function can override)
// from the default policy:
//   default    getDefaultControlFusionFn()
//   all        accept every legal fusion
//   none       reject every fusion
//   epilogues  epilogues only, no prologue
//
//===----------------------------------------------------------------------===//

#include "normfuse/Dialect/NF/IR/NFDialect.h"
#include "normfuse/Dialect/NF/IR/NFTraits.h"
#include "normfuse/Dialect/NF/Transforms/Patterns.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {

struct TestFusionPass
    : PassWrapper<TestFusionPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestFusionPass)

  TestFusionPass() = default;
  TestFusionPass(const TestFusionPass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "nf-test-fusion"; }
  StringRef getDescription() const final {
    return "Run the fusion driver with a named control function";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<nf::NFDialect>();
  }

  void runOnOperation() override {
    nf::ControlFusionFn fn;
    if (control == "default")
      fn = nf::getDefaultControlFusionFn();
    else if (control == "all")
      fn = [](OpOperand &) { return true; };
    else if (control == "none")
      fn = [](OpOperand &) { return false; };
    else if (control == "epilogues")
      fn = [](OpOperand &use) { return !nf::isProducerOp(use.getOwner()); };
    if (!fn) {
      getOperation().emitError()
          << "nf-test-fusion: unknown control '" << control
          << "' (known: default, all, none, epilogues)";
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    nf::fuseProducerGroups(getOperation(), rewriter, fn);
  }

  Option<std::string> control{*this, "control",
                              llvm::cl::desc("The control function"),
                              llvm::cl::init("default")};
};

} // namespace

namespace mlir::nf::test {
void registerTestFusionPass() { PassRegistration<TestFusionPass>(); }
} // namespace mlir::nf::test
