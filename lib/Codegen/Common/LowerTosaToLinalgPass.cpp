//===- LowerTosaToLinalgPass.cpp - TOSA to linalg on tensors ----*- C++ -*-===//
//
// Part of normfuse. Lowers the TOSA ops of a function (and elementwise
// arith/math ops on tensors) to linalg, tensor and arith ops on tensors with
// upstream's conversions, run as a dynamic pipeline on the functions that
// need them only (after unsigned integers become signless ones), so that a
// function of nf ops alone is never rewritten. Convolutions of f16/bf16 data
// with f32 results get their operands widened first, which upstream's lowering
// cannot do itself.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Common/BufferizePipeline.h"
#include "normfuse/Codegen/Common/SignlessIntegers.h"
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

/// Widens the float input, weight and bias of a TOSA convolution whose
/// result has a wider float type (f16 or bf16 data accumulated in f32, as
/// TOSA allows) to the result's type with tosa.cast: upstream's lowering
/// extends them with arith.extsi, which takes integers only. Exact: a
/// product of two f16 or bf16 values is exact in f32, and the sum was in
/// f32 already.
void widenMixedPrecisionConvolutions(func::FuncOp fn) {
  fn.walk([](Operation *op) {
    if (!isa<tosa::Conv2DOp, tosa::Conv3DOp, tosa::DepthwiseConv2DOp,
             tosa::TransposeConv2DOp>(op))
      return;
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType)
      return;
    auto wide = dyn_cast<FloatType>(resultType.getElementType());
    if (!wide)
      return;
    OpBuilder builder(op);
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      auto narrow = type ? dyn_cast<FloatType>(type.getElementType()) : nullptr;
      if (!narrow || narrow.getWidth() >= wide.getWidth())
        continue;
      operand.set(builder.create<tosa::CastOp>(op->getLoc(), type.clone(wide),
                                               operand.get()));
    }
  });
}

struct NFLowerTosaToLinalgPass
    : nf::impl::NFLowerTosaToLinalgPassBase<NFLowerTosaToLinalgPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (failed(nf::makeIntegersSignless(fn)))
      return signalPassFailure();
    if (!fn.walk([](Operation *op) {
             return needsLinalgLowering(op) ? WalkResult::interrupt()
                                            : WalkResult::advance();
           }).wasInterrupted())
      return;

    // Upstream's addTosaToLinalgPasses without its canonicalizations and
    // constant folding. tosa-to-linalg broadcasts size-1 dimensions but
    // wants operands of equal rank: tosa-make-broadcastable reshapes them.
    widenMixedPrecisionConvolutions(fn);
    OpPassManager pm(func::FuncOp::getOperationName());
    pm.addPass(tosa::createTosaMakeBroadcastablePass());
    pm.addPass(tosa::createTosaToLinalgNamed());
    pm.addPass(tosa::createTosaToLinalg());
    pm.addPass(tosa::createTosaToArith());
    pm.addPass(tosa::createTosaToTensor());
    pm.addPass(createConvertElementwiseToLinalgPass());
    if (failed(runPipeline(pm, fn)))
      return signalPassFailure();
    nf::makeIntegerDivisionTotal(fn);

    // convert-elementwise-to-linalg writes its results into an operand of
    // the same type; one-shot bufferization would then overwrite the
    // caller's input. Read-only arguments make it copy first.
    nf::markTensorArgumentsReadOnly(fn);
  }
};
} // namespace
