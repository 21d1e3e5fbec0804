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

FailureOr<PointwiseChain::Step>
PointwiseChain::stepFor(Operation *op, Value chained,
                        llvm::function_ref<Value(Value)> outer) {
  // Another operand: one the lowering can read, and not the chained value.
  auto other = [&](Value v) -> Value {
    return v == chained ? Value() : outer(v);
  };
  // add and mul commute exactly in IEEE arithmetic, so either operand may be
  // the chained one.
  auto binary = [&](StepKind kind, Value lhs, Value rhs) -> FailureOr<Step> {
    Value operand = lhs == chained ? other(rhs) : other(lhs);
    if (!operand || (lhs != chained && rhs != chained))
      return failure();
    return Step{kind, GeluApproximation::None, operand, -1, Value()};
  };
  auto unary = [&](StepKind kind, Value input) -> FailureOr<Step> {
    if (input != chained)
      return failure();
    return Step{kind, GeluApproximation::None, Value(), -1, Value()};
  };
  return llvm::TypeSwitch<Operation *, FailureOr<Step>>(op)
      .Case([&](ReluOp relu) { return unary(StepKind::Relu, relu.getInput()); })
      .Case([&](SiluOp silu) { return unary(StepKind::Silu, silu.getInput()); })
      .Case([&](GeluOp gelu) -> FailureOr<Step> {
        FailureOr<Step> step = unary(StepKind::Gelu, gelu.getInput());
        if (succeeded(step))
          step->approximation = gelu.getApproximate();
        return step;
      })
      .Case([&](AddOp add) {
        return binary(StepKind::Add, add.getLhs(), add.getRhs());
      })
      .Case([&](MulOp mul) {
        return binary(StepKind::Mul, mul.getLhs(), mul.getRhs());
      })
      .Case([&](BiasAddOp biasAdd) -> FailureOr<Step> {
        Value bias = other(biasAdd.getBias());
        if (biasAdd.getInput() != chained || !bias)
          return failure();
        int64_t rank = biasAdd.getType().getRank();
        return Step{StepKind::BiasAdd, GeluApproximation::None, bias,
                    getChannelAxis(biasAdd.getLayout(), rank), Value()};
      })
      .Default([](Operation *) { return failure(); });
}

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
    switch (s.kind) {
    case StepKind::BiasAdd: {
      // Lanes run along the view's last dimension: a channel there gives a
      // vector of biases, any other channel one bias for every lane.
      Value c = indices[channelDim];
      Value bias =
          channelDim + 1 == indices.size()
              ? loadAs(b, loc, s.view, c, width, acc)
              : splat(b, loc, loadAs(b, loc, s.view, c, 1, acc), width);
      v = b.create<arith::AddFOp>(loc, v, bias);
      break;
    }
    case StepKind::Relu:
      v = emitRelu(b, loc, v, width);
      break;
    case StepKind::Gelu:
      v = emitGelu(b, loc, v, width, s.approximation);
      break;
    case StepKind::Silu:
      v = emitSilu(b, loc, v, width);
      break;
    case StepKind::Add:
      v = b.create<arith::AddFOp>(loc, v,
                                  loadAs(b, loc, s.view, indices, width, acc));
      break;
    case StepKind::Mul:
      v = b.create<arith::MulFOp>(loc, v,
                                  loadAs(b, loc, s.view, indices, width, acc));
      break;
    }
    if (roundTo)
      v = convertFloat(b, loc, convertFloat(b, loc, v, roundTo), acc);
  }
  return v;
}
