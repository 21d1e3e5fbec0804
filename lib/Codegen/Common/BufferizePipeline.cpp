//===- BufferizePipeline.cpp - tensors to buffers, results out --*- C++ -*-===//
//
// Part of normfuse. See BufferizePipeline.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Common/BufferizePipeline.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

void nf::markTensorArgumentsReadOnly(func::FuncOp fn) {
  auto readOnly = BoolAttr::get(fn.getContext(), false);
  for (BlockArgument arg : fn.getArguments())
    if (isa<TensorType>(arg.getType()))
      fn.setArgAttr(arg.getArgNumber(),
                    bufferization::BufferizationDialect::kWritableAttrName,
                    readOnly);
}

namespace {
/// markTensorArgumentsReadOnly on every function with a body.
struct MarkArgumentsReadOnlyPass
    : PassWrapper<MarkArgumentsReadOnlyPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MarkArgumentsReadOnlyPass)
  StringRef getArgument() const override {
    return "nf-mark-arguments-read-only";
  }
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (!fn.isExternal())
        nf::markTensorArgumentsReadOnly(fn);
  }
};
} // namespace

void nf::addBufferizeToOutParamsPasses(OpPassManager &pm) {
  // (Without it, an insert_slice into an argument wrote the caller's
  // input in place and returned it, and buffer-results-to-out-params
  // crashed on the returned argument.)
  pm.addPass(std::make_unique<MarkArgumentsReadOnlyPass>());
  bufferization::OneShotBufferizationOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsOpts outParams;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
}
