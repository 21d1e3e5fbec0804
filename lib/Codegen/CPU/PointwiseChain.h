//===- PointwiseChain.h - pointwise nf ops applied in registers -*- C++ -*-===//
//
// Part of normfuse. The pointwise ops of an nf.fused body around its
// producer, as a list of steps a lowering applies to a value while it is in
// registers: an epilogue runs on the producer's result just before it is
// stored, a prologue on the producer's input just after it is loaded. A
// step that reads another tensor (add, mul with a same-shape tensor,
// bias_add with a per-channel bias) loads it at the same element, so the
// lowering only tells the chain where a vector of lanes sits in its view.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_CODEGEN_CPU_POINTWISECHAIN_H
#define NORMFUSE_LIB_CODEGEN_CPU_POINTWISECHAIN_H

#include "normfuse/Codegen/Common/ActivationMath.h"
#include "normfuse/Codegen/Common/FusedGroups.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::nf::cpu {

// The activation math (emitGelu, emitSilu, ...) is shared with every back
// end: Codegen/Common/ActivationMath.h.
using mlir::nf::emitActivationGrad;
using mlir::nf::emitGelu;
using mlir::nf::emitRelu;
using mlir::nf::emitSilu;

/// Pointwise ops applied one after another to the elements of one tensor
/// (the steps Codegen/Common/FusedGroups.h matches), with the buffers the
/// CPU loops read their operands from.
class PointwiseChain {
public:
  using StepKind = PointwiseStepKind;

  struct Step : PointwiseStep {
    Step(const PointwiseStep &step) : PointwiseStep(step) {}
    /// The operand's buffer (add/mul: in the lowering's view); set by bind.
    Value view;
  };

  PointwiseChain() = default;
  /// The chain of `steps`.
  explicit PointwiseChain(ArrayRef<PointwiseStep> steps) {
    for (const PointwiseStep &s : steps)
      append(s);
  }

  void append(const Step &step) { steps.push_back(step); }
  void prepend(const Step &step) { steps.insert(steps.begin(), step); }
  bool empty() const { return steps.empty(); }
  size_t size() const { return steps.size(); }

  /// Whether every bias_add step adds along `axis` (true without one).
  bool biasOnlyOnAxis(int64_t axis) const;
  bool hasBias() const;

  /// Rounds the value after every step to `type` (and back), as the unfused
  /// ops would by storing each result: what a prologue does, so the norm
  /// sees the input the unfused module would have written. Null: never.
  void roundEachStepTo(Type type) { roundTo = type; }

  /// Takes the buffers of the steps' operands, add/mul ones viewed with
  /// row-major `sizes` (the lowering's view of the chained tensor, whose
  /// dimension `channelDim` is the channel for bias_add). Emit once, before
  /// the loops that call apply.
  void bind(OpBuilder &b, Location loc, ArrayRef<Value> sizes,
            unsigned channelDim);

  /// The chain applied to `v` (f32 or f64, scalar or `width` lanes), the
  /// elements at `indices` of the bound view and the next `width - 1` along
  /// its last dimension. Returns `v` for an empty chain.
  Value apply(OpBuilder &b, Location loc, Value v, ValueRange indices,
              int64_t width) const;

private:
  SmallVector<Step, 4> steps;
  Type roundTo;
  unsigned channelDim = 0;
};

/// What an nf.fused lowering adds to a norm: a prologue computing the norm's
/// input as it is read (from the tensor passed as the norm's input) and an
/// epilogue on y before it is stored. Null or empty chains: the plain norm.
struct NormFusion {
  const PointwiseChain *prologue = nullptr;
  const PointwiseChain *epilogue = nullptr;
  /// Whether the nf.fused's result is returned by the function.
  bool returned = false;
};

/// The loops of a forward norm, from its operands' tensors; return the
/// tensors of the norm's results in order. With `fusion`, `input` is the
/// prologue's first tensor and result 0 holds the epilogue's value.
SmallVector<Value> emitLayerNormLoops(OpBuilder &b, LayerNormOp op, Value input,
                                      Value scale, Value bias, int64_t width,
                                      const NormFusion &fusion);
SmallVector<Value> emitRMSNormLoops(OpBuilder &b, RMSNormOp op, Value input,
                                    Value scale, int64_t width,
                                    const NormFusion &fusion);
/// GroupNorm or InstanceNorm (`op`).
SmallVector<Value> emitPerImageNormLoops(OpBuilder &b, Operation *op,
                                         Value input, Value scale, Value bias,
                                         int64_t width,
                                         const NormFusion &fusion);

/// The loops of a matmul from its operands' tensors, with `epilogue` (may be
/// null) applied to each output vector before it is stored; returns the
/// result tensor.
Value emitMatmulLoops(OpBuilder &b, MatmulOp op, Value lhs, Value rhs,
                      int64_t width, const PointwiseChain *epilogue);

/// bias_add_grad of `gradOutput`; with `activationGrad` (relu_grad,
/// gelu_grad or silu_grad of the body, whose result the bias gradient
/// sums), its value is computed from `gradOutput` and `activationInput` in
/// the same pass, written out and summed. Returns {grad_bias} or
/// {activation gradient, grad_bias}.
SmallVector<Value> emitBiasAddGradLoops(OpBuilder &b, BiasAddGradOp op,
                                        Value gradOutput,
                                        Operation *activationGrad,
                                        Value activationInput, int64_t width);

/// conv2d (NHWC only when `epilogue` is set), as emitMatmulLoops.
Value emitConv2DLoops(OpBuilder &b, Conv2DOp op, Value input, Value filter,
                      int64_t width, const PointwiseChain *epilogue);

/// Lowers `op` to one loop nest where its body is a forward norm (layer,
/// rms, group or instance norm) with pointwise ops before and after it, or
/// a matmul or an NHWC conv2d with pointwise ops after it, that the
/// producer's loops can apply in registers. Fails without changing anything
/// otherwise (the caller then inlines the body).
LogicalResult lowerFusedToLoops(RewriterBase &rewriter, FusedOp op,
                                const LoopLoweringOptions &options);

} // namespace mlir::nf::cpu

#endif // NORMFUSE_LIB_CODEGEN_CPU_POINTWISECHAIN_H
