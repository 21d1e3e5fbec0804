//===- FusedGroups.h - what an nf.fused body computes -----------*- C++ -*-===//
//
// Part of normfuse. The analysis both back ends run on an nf.fused body
// before lowering it as one kernel: a producer (a forward norm, a matmul,
// a conv2d; the CPU fuses NHWC convs only) with a chain of pointwise steps
// in front of it (the
// prologue, on its input as it is loaded) and after it (the epilogue, on
// its result before it is stored), each step reading at most one other
// tensor (add/mul of a same-shape tensor, bias_add of a per-channel
// bias). Also the math of one step, which the back ends apply to values
// they have loaded their own way.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_COMMON_FUSEDGROUPS_H
#define NORMFUSE_CODEGEN_COMMON_FUSEDGROUPS_H

#include "normfuse/Codegen/Common/ActivationMath.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::nf {

enum class PointwiseStepKind { BiasAdd, Relu, Gelu, Silu, Add, Mul };

/// One pointwise op of a chain, applied to the chained value.
struct PointwiseStep {
  PointwiseStepKind kind;
  GeluApproximation approximation = GeluApproximation::None;
  /// The tensor the step reads besides the chained value (outside the
  /// fused op): the (C) bias, or the other operand of add/mul (the chained
  /// tensor's type). Null for relu, gelu, silu.
  Value operand;
  /// bias_add: the channel axis in the chained tensor.
  int64_t channelAxis = -1;
};

/// The step computing pointwise op `op` from `chained`, one of its
/// operands; `outer(v)` is the value a lowering reads for another operand
/// `v` of the op, or null where it cannot read it (then this fails, as it
/// does for an op that is not pointwise or uses `chained` twice).
FailureOr<PointwiseStep>
matchPointwiseStep(Operation *op, Value chained,
                   llvm::function_ref<Value(Value)> outer);

/// `step` applied to `v` (f32 or f64, scalar or `width` lanes), with
/// `operand` the step's other value at the same element(s), already loaded
/// and extended (null for a unary step).
Value applyPointwiseStep(OpBuilder &b, Location loc, const PointwiseStep &step,
                         Value v, Value operand, int64_t width,
                         Exp2Form exp2 = Exp2Form::Polynomial);

/// Whether any step is a bias_add; whether every bias_add adds along
/// `axis` (true without one).
bool hasBiasStep(ArrayRef<PointwiseStep> steps);
bool biasOnlyOnAxis(ArrayRef<PointwiseStep> steps, int64_t axis);

/// The value a fused op's lowering reads for body value `v`: the fused op's
/// input for a block argument of its body, null for anything else.
Value outerValue(FusedOp op, Value v);

/// A fused body matched as prologue -> producer -> epilogue.
struct FusedGroup {
  /// layer_norm, rms_norm, group_norm, instance_norm, matmul or conv2d.
  Operation *producer = nullptr;
  /// The outer tensor the prologue starts from (the producer's input when
  /// there is no prologue).
  Value source;
  SmallVector<PointwiseStep, 4> prologue, epilogue;
  /// The body value yielded as the producer's (epilogued) first result.
  Value result;
};

/// Matches `op`'s body. Fails where the body has another form: a prologue
/// in front of a matmul or conv, a value used twice, an NCHW conv2d, a
/// bias_add along an axis the producer's loops do not walk as columns.
FailureOr<FusedGroup> matchFusedGroup(FusedOp op);

} // namespace mlir::nf

#endif // NORMFUSE_CODEGEN_COMMON_FUSEDGROUPS_H
