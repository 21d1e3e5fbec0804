//===- LowerTosaToLinalgPass.cpp - TOSA to linalg on tensors ----*- C++ -*-===//
//
// Part of normfuse. Lowers the TOSA ops of a function (and elementwise
// arith/math ops on tensors) to linalg, tensor and arith ops on tensors with
// upstream's conversions, run as a dynamic pipeline on the functions that
// need them only, so that a function of nf ops alone is never rewritten.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Passes.h"

#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFLOWERTOSATOLINALGPASS
#include "normfuse/Codegen/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;

namespace {
/// A TOSA op, or an arith/math op that convert-elementwise-to-linalg takes.
bool needsLinalgLowering(Operation *op) {
  if (isa<tosa::TosaDialect>(op->getDialect()))
    return true;
  return OpTrait::hasElementwiseMappableTraits(op) &&
         llvm::any_of(op->getOperandTypes(), llvm::IsaPred<RankedTensorType>);
}

struct NFLowerTosaToLinalgPass
    : nf::impl::NFLowerTosaToLinalgPassBase<NFLowerTosaToLinalgPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (!fn.walk([](Operation *op) {
             return needsLinalgLowering(op) ? WalkResult::interrupt()
                                            : WalkResult::advance();
           }).wasInterrupted())
      return;

    // Upstream's addTosaToLinalgPasses without its canonicalizations and
    // constant folding. tosa-to-linalg broadcasts size-1 dimensions but
    // wants operands of equal rank: tosa-make-broadcastable reshapes them.
    OpPassManager pm(func::FuncOp::getOperationName());
    pm.addPass(tosa::createTosaMakeBroadcastablePass());
    pm.addPass(tosa::createTosaToLinalgNamed());
    pm.addPass(tosa::createTosaToLinalg());
    pm.addPass(tosa::createTosaToArith());
    pm.addPass(tosa::createTosaToTensor());
    pm.addPass(createConvertElementwiseToLinalgPass());
    if (failed(runPipeline(pm, fn)))
      return signalPassFailure();

    // convert-elementwise-to-linalg writes its results into an operand of
    // the same type; one-shot bufferization would then overwrite the
    // caller's input. Read-only arguments make it copy first.
    auto readOnly = BoolAttr::get(&getContext(), false);
    for (BlockArgument arg : fn.getArguments())
      if (isa<TensorType>(arg.getType()))
        fn.setArgAttr(arg.getArgNumber(),
                      bufferization::BufferizationDialect::kWritableAttrName,
                      readOnly);
  }
};
} // namespace
