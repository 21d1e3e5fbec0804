//===- FunctionPrep.cpp - shared steps before lowering a function -*- C++
//-*-===//
//
// Part of normfuse. See FunctionPrep.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Common/FunctionPrep.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::nf;

void nf::inlineFusedBody(RewriterBase &rewriter, FusedOp op) {
  Block &body = op.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<Value> results(yield.getValues());
  rewriter.eraseOp(yield);
  rewriter.inlineBlockBefore(&body, op, op.getInputs());
  rewriter.replaceOp(op, results);
}

void nf::copyAliasedResults(func::FuncOp function) {
  function.walk([](func::ReturnOp ret) {
    llvm::SmallPtrSet<Value, 8> seen;
    OpBuilder builder(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      Value value = operand.get();
      auto type = dyn_cast<RankedTensorType>(value.getType());
      bool aliased = isa<BlockArgument>(value) || !seen.insert(value).second;
      if (!type || !aliased)
        continue;
      operand.set(builder.create<bufferization::AllocTensorOp>(
          ret.getLoc(), type, ValueRange{}, /*copy=*/value));
    }
  });
}
