//===- TestCPUSchedule.cpp - print the CPU schedule layer's choices -------===//
//
// Part of normfuse. nf-test-cpu-schedule{vector-width=8} attaches a remark
// to every nf op with the choices the CPU lowering makes for it
// (normfuse/Codegen/CPU/Schedule.h), so lit tests can check the choice for
// each shape, as the CUDA schedule tests read the nf.schedule attribute.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/CPU/Schedule.h"
#include "normfuse/Dialect/NF/IR/NFDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {

struct TestCPUSchedulePass
    : PassWrapper<TestCPUSchedulePass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestCPUSchedulePass)

  TestCPUSchedulePass() = default;
  TestCPUSchedulePass(const TestCPUSchedulePass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "nf-test-cpu-schedule"; }
  StringRef getDescription() const final {
    return "Remark the CPU schedule layer's choice for every nf op";
  }

  void runOnOperation() override {
    getOperation().walk([&](Operation *op) {
      if (!isa<nf::NFDialect>(op->getDialect()))
        return;
      std::string schedule = nf::cpu::describeCPUSchedule(op, vectorWidth);
      if (!schedule.empty())
        op->emitRemark() << "cpu schedule: " << schedule;
    });
  }

  Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("Lanes of the CPU vectors (nf-cpu-pipeline's default)"),
      llvm::cl::init(8)};
};

} // namespace

namespace mlir::nf::test {
void registerTestCPUSchedulePass() { PassRegistration<TestCPUSchedulePass>(); }
} // namespace mlir::nf::test
