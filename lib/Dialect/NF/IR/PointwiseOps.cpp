//===- PointwiseOps.cpp - pointwise nf ops ----------------------*- C++ -*-===//
//
// Part of normfuse. Verifiers of bias_add and bias_add_grad, and the folds
// of the pointwise ops: relu(relu(x)) -> relu(x), bias_add with a zero
// bias, x + 0 and x * 1 -> x. Adding a zero bias turns -0.0 into +0.0 in
// IEEE arithmetic; like frameworks' graph optimizers we fold it anyway.
//
//===----------------------------------------------------------------------===//

#include "VerifyUtils.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::detail;

/// Checks that `v`, of rank >= 2, has `perChannel` of shape (C) along the
/// channel axis of `layout`.
static LogicalResult verifyPerChannel(Operation *op, Value v, StringRef vName,
                                      Value perChannel, StringRef name,
                                      Layout layout, bool isResult) {
  const char *form = layout == Layout::NCHW ? "N, C, ..." : "N, ..., C";
  if (failed(verifyMinRank(op, v, vName, 2, form)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(v);
  int64_t c = shape[getChannelAxis(layout, shape.size())];
  if (failed(verifyShape(op, perChannel, name, {c}, "one value per channel")))
    return failure();
  if (isResult)
    return verifyResultElementType(op, perChannel, name,
                                   getElementTypeOrSelf(v));
  return verifyParamElementType(op, perChannel, name, getElementTypeOrSelf(v));
}

LogicalResult BiasAddOp::verify() {
  return verifyPerChannel(*this, getInput(), "input", getBias(), "bias",
                          getLayout(), /*isResult=*/false);
}

OpFoldResult BiasAddOp::fold(FoldAdaptor adaptor) {
  if (adaptor.getBias() && matchPattern(adaptor.getBias(), m_AnyZeroFloat()))
    return getInput();
  return {};
}

LogicalResult BiasAddGradOp::verify() {
  return verifyPerChannel(*this, getGradOutput(), "grad_output", getGradBias(),
                          "grad_bias", getLayout(), /*isResult=*/true);
}

OpFoldResult ReluOp::fold(FoldAdaptor) {
  // relu is idempotent: relu(relu(x)) == relu(x).
  if (getInput().getDefiningOp<ReluOp>())
    return getInput();
  return {};
}

/// Folds `op(x, c)` or `op(c, x)` to `x` when `c` is a splat constant that
/// `matcher` accepts (the identity of the operation).
template <typename Matcher>
static OpFoldResult foldIdentityOperand(Value lhs, Value rhs, Attribute lhsCst,
                                        Attribute rhsCst, Matcher matcher) {
  if (rhsCst && matchPattern(rhsCst, matcher))
    return lhs;
  if (lhsCst && matchPattern(lhsCst, matcher))
    return rhs;
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldIdentityOperand(getLhs(), getRhs(), adaptor.getLhs(),
                             adaptor.getRhs(), m_AnyZeroFloat());
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldIdentityOperand(getLhs(), getRhs(), adaptor.getLhs(),
                             adaptor.getRhs(), m_OneFloat());
}
