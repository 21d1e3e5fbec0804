//===- FusedOp.cpp - nf.fused and nf.yield ----------------------*- C++ -*-===//
//
// Part of normfuse. nf.fused holds one producer (matmul, conv2d or a forward
// norm) and pointwise nf ops around it; code generation emits the region as
// one kernel, so the verifier admits nothing else into it.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::nf;

Operation *FusedOp::getProducer() {
  if (getBody().empty())
    return nullptr;
  for (Operation &op : getBody().front())
    if (isProducerOp(&op))
      return &op;
  return nullptr;
}

LogicalResult FusedOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body has " << body.getNumArguments()
                         << " arguments but the op has " << getInputs().size()
                         << " inputs";
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip_equal(body.getArguments(), getInputs()))) {
    auto [arg, input] = pair;
    if (arg.getType() != input.getType())
      return emitOpError() << "body argument #" << index << " has type "
                           << arg.getType() << " but input #" << index
                           << " has type " << input.getType();
  }

  if (body.empty() || !isa<YieldOp>(body.back()))
    return emitOpError() << "body must end with nf.yield";

  unsigned numProducers = 0;
  for (Operation &op : body.without_terminator()) {
    if (isProducerOp(&op)) {
      ++numProducers;
      continue;
    }
    if (!isPointwiseOp(&op))
      return emitOpError() << "body holds '" << op.getName()
                           << "', which is neither a producer nor a "
                              "pointwise nf op";
  }
  if (numProducers != 1)
    return emitOpError() << "body must hold exactly one producer (nf.matmul, "
                            "nf.conv2d, a forward norm or nf.bias_add_grad), "
                            "found "
                         << numProducers;

  // The producer must reach a yielded value: otherwise it is dead code that
  // folding would erase, leaving a body without a producer.
  llvm::SmallPtrSet<Operation *, 8> dependsOnProducer{getProducer()};
  for (Operation &op : body)
    if (llvm::any_of(op.getOperands(), [&](Value v) {
          return dependsOnProducer.contains(v.getDefiningOp());
        }))
      dependsOnProducer.insert(&op);
  if (!dependsOnProducer.contains(&body.back()))
    return emitOpError() << "no yielded value depends on the producer '"
                         << getProducer()->getName() << "'";
  return success();
}

LogicalResult YieldOp::verify() {
  auto parent = cast<FusedOp>((*this)->getParentOp());
  if (getValues().size() != parent.getNumResults())
    return emitOpError() << "yields " << getValues().size()
                         << " values but the parent nf.fused has "
                         << parent.getNumResults() << " results";
  for (auto [index, pair] : llvm::enumerate(
           llvm::zip_equal(getValues().getTypes(), parent.getResultTypes()))) {
    auto [yielded, result] = pair;
    if (yielded != result)
      return emitOpError() << "value #" << index << " has type " << yielded
                           << " but result #" << index
                           << " of the parent nf.fused has type " << result;
  }
  return success();
}
