//===- LowerFused.cpp - an nf.fused body as one loop nest -------*- C++ -*-===//
//
// Part of normfuse. Lowers an nf.fused whose body is a forward norm with
// pointwise ops around it, or a matmul or an NHWC conv2d with pointwise ops
// after it, to the producer's own loops. For a norm: the ops in front of the
// norm (the prologue, such as a residual add) run on every element of x as
// the norm loads it, in both the statistics and the normalizing passes, so
// x is never written; the ops after it (the epilogue: bias_add, relu, gelu,
// silu, add, mul) run on y in registers before it is stored, so only the
// body's final values reach memory. The norm's statistics are written when
// the body yields them.
//
// The prologue rounds every result to the storage type, as the unfused ops
// would by storing it, so the norm sees the same input; the epilogue keeps
// f32 between its steps (at least as accurate as the unfused ops).
//
// A matmul applies its epilogue to each output vector after its k loop,
// while the sums are in registers; an NHWC conv2d to each output after its
// window's dot product.
//
// A backward body, an activation gradient summed by nf.bias_add_grad, is
// one pass over dy and x that writes the activation gradient and adds it
// into the bias gradient.
//
// A body of any other form (an NCHW conv2d, a prologue in front of a
// producer, a value used twice) is left alone: the pass then inlines it.
//
//===----------------------------------------------------------------------===//

#include "LoopUtils.h"
#include "PointwiseChain.h"

#include "normfuse/Codegen/Common/FusedGroups.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "nf-lower-fused"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;

namespace {

/// A fused body (Codegen/Common/FusedGroups.h) with its chains as the CPU
/// loops apply them.
struct FusedNorm {
  Operation *norm = nullptr; // the producer
  Value source;
  PointwiseChain prologue, epilogue;
  Value result;
};

FailureOr<FusedNorm> matchFusedNorm(FusedOp op) {
  FailureOr<FusedGroup> group = matchFusedGroup(op);
  if (failed(group))
    return failure();
  // A conv's epilogue runs where NHWC outputs are stored one by one; the
  // NCHW loops accumulate rows in scratch first, so an NCHW group runs op
  // by op on the CPU.
  if (auto conv = dyn_cast<Conv2DOp>(group->producer);
      conv && conv.getLayout() != Layout::NHWC)
    return failure();
  FusedNorm m;
  m.norm = group->producer;
  m.source = group->source;
  m.prologue = PointwiseChain(group->prologue);
  m.epilogue = PointwiseChain(group->epilogue);
  m.result = group->result;
  m.prologue.roundEachStepTo(
      cast<RankedTensorType>(m.norm->getResult(0).getType()).getElementType());
  return m;
}

/// A backward body: relu_grad, gelu_grad or silu_grad of two fused-op
/// inputs, whose result nf.bias_add_grad sums (the activation gradient may
/// also be yielded). One pass over dy and x computes the activation
/// gradient, writes it and adds it into the bias gradient.
LogicalResult lowerActivationBiasGrad(RewriterBase &rewriter, FusedOp op,
                                      const LoopLoweringOptions &options) {
  auto grad = dyn_cast_or_null<BiasAddGradOp>(op.getProducer());
  Block &body = op.getBody().front();
  if (!grad || body.getOperations().size() != 3)
    return failure();
  Operation *activation = grad.getGradOutput().getDefiningOp();
  if (!isa_and_nonnull<ReluGradOp, GeluGradOp, SiluGradOp>(activation))
    return failure();
  Value dy = outerValue(op, activation->getOperand(0));
  Value x = outerValue(op, activation->getOperand(1));
  if (!dy || !x)
    return failure();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> results = emitBiasAddGradLoops(
      rewriter, grad, dy, activation, x, options.vectorWidth);
  SmallVector<Value> replacements;
  for (Value v : body.getTerminator()->getOperands())
    replacements.push_back(v.getDefiningOp() == activation ? results[0]
                                                           : results[1]);
  rewriter.replaceOp(op, replacements);
  return success();
}

} // namespace

LogicalResult cpu::lowerFusedToLoops(RewriterBase &rewriter, FusedOp op,
                                     const LoopLoweringOptions &options) {
  if (succeeded(lowerActivationBiasGrad(rewriter, op, options)))
    return success();
  FailureOr<FusedNorm> m = matchFusedNorm(op);
  if (failed(m)) {
    LLVM_DEBUG(llvm::dbgs() << "nf.fused at " << op.getLoc()
                            << ": not a norm with a pointwise prologue and "
                               "epilogue; inlined\n");
    return failure();
  }
  LLVM_DEBUG(llvm::dbgs() << "nf.fused at " << op.getLoc() << ": "
                          << m->norm->getName() << " with "
                          << m->prologue.size() << " prologue and "
                          << m->epilogue.size() << " epilogue ops\n");
  rewriter.setInsertionPoint(op);
  NormFusion fusion{&m->prologue, &m->epilogue,
                    isFunctionResult(op->getResult(0))};
  auto outer = [&](Value v) { return v ? outerValue(op, v) : Value(); };
  int64_t width = options.vectorWidth;
  SmallVector<Value> results =
      llvm::TypeSwitch<Operation *, SmallVector<Value>>(m->norm)
          .Case([&](LayerNormOp ln) {
            return emitLayerNormLoops(rewriter, ln, m->source,
                                      outer(ln.getScale()), outer(ln.getBias()),
                                      width, fusion);
          })
          .Case([&](RMSNormOp rms) {
            return emitRMSNormLoops(rewriter, rms, m->source,
                                    outer(rms.getScale()), width, fusion);
          })
          .Case<GroupNormOp, InstanceNormOp>([&](auto norm) {
            return emitPerImageNormLoops(rewriter, norm, m->source,
                                         outer(norm.getScale()),
                                         outer(norm.getBias()), width, fusion);
          })
          .Case([&](MatmulOp mm) {
            return SmallVector<Value>{emitMatmulLoops(rewriter, mm, m->source,
                                                      outer(mm.getRhs()), width,
                                                      &m->epilogue)};
          })
          .Case([&](Conv2DOp conv) {
            return SmallVector<Value>{emitConv2DLoops(rewriter, conv, m->source,
                                                      outer(conv.getFilter()),
                                                      width, &m->epilogue)};
          });

  SmallVector<Value> replacements;
  for (Value v : op.getBody().front().getTerminator()->getOperands())
    replacements.push_back(v == m->result
                               ? results[0]
                               : results[cast<OpResult>(v).getResultNumber()]);
  rewriter.replaceOp(op, replacements);
  return success();
}
