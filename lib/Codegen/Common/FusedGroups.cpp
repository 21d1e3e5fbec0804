//===- FusedGroups.cpp - what an nf.fused body computes ---------*- C++ -*-===//
//
// Part of normfuse. See FusedGroups.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Common/FusedGroups.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nf;

FailureOr<PointwiseStep>
nf::matchPointwiseStep(Operation *op, Value chained,
                       llvm::function_ref<Value(Value)> outer) {
  using Kind = PointwiseStepKind;
  // Another operand: one the lowering can read, and not the chained value.
  auto other = [&](Value v) -> Value {
    return v == chained ? Value() : outer(v);
  };
  // add and mul commute exactly in IEEE arithmetic, so either operand may be
  // the chained one.
  auto binary = [&](Kind kind, Value lhs,
                    Value rhs) -> FailureOr<PointwiseStep> {
    Value operand = lhs == chained ? other(rhs) : other(lhs);
    if (!operand || (lhs != chained && rhs != chained))
      return failure();
    return PointwiseStep{kind, GeluApproximation::None, operand, -1};
  };
  auto unary = [&](Kind kind, Value input) -> FailureOr<PointwiseStep> {
    if (input != chained)
      return failure();
    return PointwiseStep{kind, GeluApproximation::None, Value(), -1};
  };
  return llvm::TypeSwitch<Operation *, FailureOr<PointwiseStep>>(op)
      .Case([&](ReluOp relu) { return unary(Kind::Relu, relu.getInput()); })
      .Case([&](SiluOp silu) { return unary(Kind::Silu, silu.getInput()); })
      .Case([&](GeluOp gelu) -> FailureOr<PointwiseStep> {
        FailureOr<PointwiseStep> step = unary(Kind::Gelu, gelu.getInput());
        if (succeeded(step))
          step->approximation = gelu.getApproximate();
        return step;
      })
      .Case([&](AddOp add) {
        return binary(Kind::Add, add.getLhs(), add.getRhs());
      })
      .Case([&](MulOp mul) {
        return binary(Kind::Mul, mul.getLhs(), mul.getRhs());
      })
      .Case([&](BiasAddOp biasAdd) -> FailureOr<PointwiseStep> {
        Value bias = other(biasAdd.getBias());
        if (biasAdd.getInput() != chained || !bias)
          return failure();
        int64_t rank = biasAdd.getType().getRank();
        return PointwiseStep{Kind::BiasAdd, GeluApproximation::None, bias,
                             getChannelAxis(biasAdd.getLayout(), rank)};
      })
      .Default([](Operation *) { return failure(); });
}

Value nf::applyPointwiseStep(OpBuilder &b, Location loc,
                             const PointwiseStep &step, Value v, Value operand,
                             int64_t width, Exp2Form exp2) {
  switch (step.kind) {
  case PointwiseStepKind::BiasAdd:
  case PointwiseStepKind::Add:
    return b.create<arith::AddFOp>(loc, v, operand);
  case PointwiseStepKind::Mul:
    return b.create<arith::MulFOp>(loc, v, operand);
  case PointwiseStepKind::Relu:
    return emitRelu(b, loc, v, width);
  case PointwiseStepKind::Gelu:
    return emitGelu(b, loc, v, width, step.approximation, exp2);
  case PointwiseStepKind::Silu:
    return emitSilu(b, loc, v, width, exp2);
  }
  return v;
}

bool nf::hasBiasStep(ArrayRef<PointwiseStep> steps) {
  return llvm::any_of(steps, [](const PointwiseStep &s) {
    return s.kind == PointwiseStepKind::BiasAdd;
  });
}

bool nf::biasOnlyOnAxis(ArrayRef<PointwiseStep> steps, int64_t axis) {
  return llvm::all_of(steps, [&](const PointwiseStep &s) {
    return s.kind != PointwiseStepKind::BiasAdd || s.channelAxis == axis;
  });
}

Value nf::outerValue(FusedOp op, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &op.getBody().front())
    return Value();
  return op.getInputs()[arg.getArgNumber()];
}

/// The operand of a pointwise body op that carries the chain from `op`'s
/// side: the input of a unary op or bias_add, the operand of add/mul that
/// another body op computes (the lhs when both are arguments).
static Value chainedOperand(Operation *op) {
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case<ReluOp, GeluOp, SiluOp, BiasAddOp>(
          [](auto unary) { return unary.getInput(); })
      .Case<AddOp, MulOp>([](auto binary) -> Value {
        Value lhs = binary.getLhs(), rhs = binary.getRhs();
        return isa<BlockArgument>(lhs) && !isa<BlockArgument>(rhs) ? rhs : lhs;
      })
      .Default([](Operation *) { return Value(); });
}

FailureOr<FusedGroup> nf::matchFusedGroup(FusedOp op) {
  FusedGroup m;
  m.producer = op.getProducer();
  if (!isa_and_nonnull<LayerNormOp, RMSNormOp, GroupNormOp, InstanceNormOp,
                       MatmulOp, Conv2DOp>(m.producer))
    return failure();
  bool isMatmulOrConv = isa<MatmulOp, Conv2DOp>(m.producer);
  Block &body = op.getBody().front();
  auto outer = [&](Value v) { return outerValue(op, v); };

  // Prologue: walk back from x while a body op computes it for the norm
  // alone. A matmul or conv reads its operands as they are.
  Value x = m.producer->getOperand(0);
  size_t matched = 1;
  if (isMatmulOrConv && !outer(m.producer->getOperand(1)))
    return failure();
  while (Operation *def = x.getDefiningOp()) {
    if (isMatmulOrConv)
      return failure();
    Value chained = chainedOperand(def);
    if (!chained || !x.hasOneUse())
      return failure();
    FailureOr<PointwiseStep> step = matchPointwiseStep(def, chained, outer);
    if (failed(step))
      return failure();
    m.prologue.insert(m.prologue.begin(), *step);
    x = chained;
    ++matched;
  }
  m.source = outer(x);
  if (!m.source)
    return failure();

  // Epilogue: walk forward from y while its one user is a pointwise op.
  Value y = m.producer->getResult(0);
  while (y.hasOneUse() && !isa<YieldOp>(*y.getUsers().begin())) {
    Operation *user = *y.getUsers().begin();
    FailureOr<PointwiseStep> step = matchPointwiseStep(user, y, outer);
    if (failed(step) || user->getNumResults() != 1)
      return failure();
    m.epilogue.push_back(*step);
    y = user->getResult(0);
    ++matched;
  }
  m.result = y;

  // Nothing else in the body, and only y and the producer's statistics
  // leave it.
  if (matched + 1 != body.getOperations().size())
    return failure();
  for (Value v : body.getTerminator()->getOperands())
    if (v != m.result && v.getDefiningOp() != m.producer)
      return failure();
  for (Operation *user : y.getUsers())
    if (!isa<YieldOp>(user))
      return failure();

  // bias_add needs its channel to be one dimension of the producer's view:
  // the columns of a row norm over the last axis alone or of a matmul, or
  // the channel axis of a channel norm.
  auto type = cast<RankedTensorType>(m.producer->getResult(0).getType());
  int64_t rank = type.getRank();
  int64_t channelAxis = llvm::TypeSwitch<Operation *, int64_t>(m.producer)
                            .Case<LayerNormOp, RMSNormOp>([&](auto norm) {
                              int64_t axis = norm.getAxis();
                              return axis == rank - 1 ? axis : -1;
                            })
                            .Case<GroupNormOp, InstanceNormOp>([&](auto norm) {
                              return getChannelAxis(norm.getLayout(), rank);
                            })
                            .Case([&](MatmulOp) { return rank - 1; })
                            .Case([&](Conv2DOp conv) {
                              return getChannelAxis(conv.getLayout(), rank);
                            });
  for (ArrayRef<PointwiseStep> chain : {ArrayRef<PointwiseStep>(m.prologue),
                                        ArrayRef<PointwiseStep>(m.epilogue)})
    if (hasBiasStep(chain) &&
        (channelAxis < 0 || !biasOnlyOnAxis(chain, channelAxis)))
      return failure();
  return m;
}
