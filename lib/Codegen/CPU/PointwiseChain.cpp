//===- PointwiseChain.cpp - pointwise nf ops applied in registers -*- C++ -*-=//
//
// Part of normfuse. See PointwiseChain.h.
//
//===----------------------------------------------------------------------===//

#include "PointwiseChain.h"
#include "LoopUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;

bool PointwiseChain::hasBias() const {
  return llvm::any_of(
      steps, [](const Step &s) { return s.kind == StepKind::BiasAdd; });
}

bool PointwiseChain::biasOnlyOnAxis(int64_t axis) const {
  return llvm::all_of(steps, [&](const Step &s) {
    return s.kind != StepKind::BiasAdd || s.channelAxis == axis;
  });
}

void PointwiseChain::bind(OpBuilder &b, Location loc, ArrayRef<Value> sizes,
                          unsigned channel) {
  channelDim = channel;
  for (Step &s : steps) {
    if (!s.operand)
      continue;
    s.view = getBuffer(b, loc, s.operand);
    if (s.kind != StepKind::BiasAdd)
      s.view = reshapeBuffer(b, loc, s.view, sizes);
  }
}

Value PointwiseChain::apply(OpBuilder &b, Location loc, Value v,
                            ValueRange indices, int64_t width) const {
  Type acc = getElementTypeOrSelf(v.getType());
  for (const Step &s : steps) {
    Value operand;
    if (s.kind == StepKind::BiasAdd) {
      // Lanes run along the view's last dimension: a channel there gives a
      // vector of biases, any other channel one bias for every lane.
      Value c = indices[channelDim];
      operand = channelDim + 1 == indices.size()
                    ? loadAs(b, loc, s.view, c, width, acc)
                    : splat(b, loc, loadAs(b, loc, s.view, c, 1, acc), width);
    } else if (s.operand) {
      operand = loadAs(b, loc, s.view, indices, width, acc);
    }
    v = applyPointwiseStep(b, loc, s, v, operand, width);
    if (roundTo)
      v = convertFloat(b, loc, convertFloat(b, loc, v, roundTo), acc);
  }
  return v;
}
