//===- NormOps.cpp - verifiers of the nf normalization ops ------*- C++ -*-===//
//
// Part of normfuse. Each normalization family (layer/RMS, group, instance,
// batch) defines the shape of its per-channel or per-element parameters and
// of its saved statistics; the forward and backward ops of a family share
// that definition and the checks built on it.
//
//===----------------------------------------------------------------------===//

#include "VerifyUtils.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::detail;

namespace {
/// The shapes a normalization family expects of its parameters (scale, bias
/// and their gradients) and of its statistics, with their meaning for
/// diagnostics.
struct NormShapes {
  SmallVector<int64_t> param;
  const char *paramMeaning;
  SmallVector<int64_t> stats;
  const char *statsMeaning;
};

/// A named value, for the checks that go over several of them.
using Named = std::pair<Value, StringRef>;
} // namespace

static int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

static FailureOr<NormShapes> getTrailingNormShapes(Operation *op, Value input,
                                                   int64_t axis) {
  int64_t rank = rankOf(input);
  if (axis < 0 || axis >= rank)
    return op->emitOpError()
           << "axis " << axis << " is out of range for an input of rank "
           << rank << " (expected 0 <= axis < " << rank << ")";
  ArrayRef<int64_t> shape = shapeOf(input);
  NormShapes s;
  s.param.assign(shape.begin() + axis, shape.end());
  s.paramMeaning = "input.shape[axis:]";
  s.stats.assign(shape.begin(), shape.begin() + axis);
  s.stats.append(rank - axis, 1);
  s.statsMeaning = "input.shape[:axis] followed by ones";
  return s;
}

static const char *layoutForm(Layout layout) {
  return layout == Layout::NCHW ? "N, C, ..." : "N, ..., C";
}

/// The channel count and batch size of a channel-axis norm's input.
static FailureOr<std::pair<int64_t, int64_t>>
getBatchAndChannels(Operation *op, Value input, Layout layout,
                    int64_t minRank) {
  if (failed(verifyMinRank(op, input, "input", minRank, layoutForm(layout))))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(input);
  return std::make_pair(shape[0], shape[getChannelAxis(layout, shape.size())]);
}

static FailureOr<NormShapes> getGroupNormShapes(Operation *op, Value input,
                                                int64_t numGroups,
                                                Layout layout) {
  auto nc = getBatchAndChannels(op, input, layout, /*minRank=*/2);
  if (failed(nc))
    return failure();
  auto [n, c] = *nc;
  if (numGroups <= 0)
    return op->emitOpError()
           << "num_groups must be positive, got " << numGroups;
  if (!ShapedType::isDynamic(c) && c % numGroups != 0)
    return op->emitOpError() << "num_groups " << numGroups
                             << " does not divide the " << c << " channels";
  return NormShapes{
      {c}, "one value per channel", {n, numGroups}, "(N, num_groups)"};
}

static FailureOr<NormShapes> getInstanceNormShapes(Operation *op, Value input,
                                                   Layout layout) {
  auto nc = getBatchAndChannels(op, input, layout, /*minRank=*/3);
  if (failed(nc))
    return failure();
  auto [n, c] = *nc;
  return NormShapes{{c}, "one value per channel", {n, c}, "(N, C)"};
}

static FailureOr<NormShapes> getBatchNormShapes(Operation *op, Value input,
                                                Layout layout) {
  auto nc = getBatchAndChannels(op, input, layout, /*minRank=*/2);
  if (failed(nc))
    return failure();
  int64_t c = nc->second;
  return NormShapes{{c}, "one value per channel", {c}, "one value per channel"};
}

static LogicalResult verifyParams(Operation *op, ArrayRef<Named> params,
                                  const NormShapes &s, Type inputElement) {
  for (auto [v, name] : params) {
    if (!v)
      continue;
    if (failed(verifyShape(op, v, name, s.param, s.paramMeaning)) ||
        failed(verifyParamElementType(op, v, name, inputElement)))
      return failure();
  }
  return success();
}

static LogicalResult verifyStats(Operation *op, ArrayRef<Named> stats,
                                 ArrayRef<int64_t> shape, StringRef meaning,
                                 Type inputElement) {
  for (auto [v, name] : stats)
    if (failed(verifyShape(op, v, name, shape, meaning)) ||
        failed(verifyStatElementType(op, v, name, inputElement)))
      return failure();
  return success();
}

/// Checks shared by every forward norm: epsilon, the result type, the
/// affine parameters and the saved statistics.
static LogicalResult verifyNormForward(Operation *op, Value input, Value result,
                                       ArrayRef<Named> params,
                                       ArrayRef<Named> stats,
                                       const NormShapes &s, double epsilon) {
  Type element = getElementTypeOrSelf(input);
  if (failed(verifyEpsilon(op, epsilon)) ||
      failed(verifySameType(op, result, "result", input, "input")) ||
      failed(verifyParams(op, params, s, element)))
    return failure();
  return verifyStats(op, stats, s.stats, s.statsMeaning, element);
}

/// Checks shared by every norm backward op. Parameter gradients have the
/// parameters' shape and the input's element type (or f32 for 16-bit data).
static LogicalResult verifyNormBackward(Operation *op, Value gradOutput,
                                        Value input, Value gradInput,
                                        ArrayRef<Named> stats, Value scale,
                                        ArrayRef<Named> paramGrads,
                                        const NormShapes &s) {
  Type element = getElementTypeOrSelf(input);
  if (failed(verifySameType(op, gradOutput, "grad_output", input, "input")) ||
      failed(verifySameType(op, gradInput, "grad_input", input, "input")) ||
      failed(verifyStats(op, stats, s.stats, s.statsMeaning, element)) ||
      failed(verifyParams(op, {{scale, "scale"}}, s, element)))
    return failure();
  for (auto [v, name] : paramGrads)
    if (failed(verifyShape(op, v, name, s.param, s.paramMeaning)) ||
        failed(verifyResultElementType(op, v, name, element)))
      return failure();
  return success();
}

/// Forward norms with scale, bias, mean and rstd (layer, group, instance).
template <typename NormOp>
static LogicalResult verifyAffineNorm(NormOp op, FailureOr<NormShapes> s) {
  if (failed(s))
    return failure();
  return verifyNormForward(op, op.getInput(), op.getResult(),
                           {{op.getScale(), "scale"}, {op.getBias(), "bias"}},
                           {{op.getMean(), "mean"}, {op.getRstd(), "rstd"}}, *s,
                           op.getEpsilon().convertToDouble());
}

/// Backward ops of the norms with mean and rstd and with dscale and dbias.
template <typename GradOp>
static LogicalResult verifyAffineNormGrad(GradOp op, FailureOr<NormShapes> s) {
  if (failed(s))
    return failure();
  return verifyNormBackward(
      op, op.getGradOutput(), op.getInput(), op.getGradInput(),
      {{op.getMean(), "mean"}, {op.getRstd(), "rstd"}}, op.getScale(),
      {{op.getGradScale(), "grad_scale"}, {op.getGradBias(), "grad_bias"}}, *s);
}

//===----------------------------------------------------------------------===//
// Forward ops
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::verify() {
  return verifyAffineNorm(
      *this, getTrailingNormShapes(*this, getInput(), getAxisAttr().getInt()));
}

LogicalResult RMSNormOp::verify() {
  auto s = getTrailingNormShapes(*this, getInput(), getAxisAttr().getInt());
  if (failed(s))
    return failure();
  return verifyNormForward(*this, getInput(), getResult(),
                           {{getScale(), "scale"}}, {{getRstd(), "rstd"}}, *s,
                           getEpsilon().convertToDouble());
}

LogicalResult GroupNormOp::verify() {
  return verifyAffineNorm(*this, getGroupNormShapes(*this, getInput(),
                                                    getNumGroupsAttr().getInt(),
                                                    getLayout()));
}

LogicalResult InstanceNormOp::verify() {
  return verifyAffineNorm(
      *this, getInstanceNormShapes(*this, getInput(), getLayout()));
}

LogicalResult BatchNormTrainingOp::verify() {
  auto s = getBatchNormShapes(*this, getInput(), getLayout());
  if (failed(s))
    return failure();
  // The running variance is updated with the unbiased variance, n / (n - 1),
  // unless asked for the biased one (ONNX).
  ArrayRef<int64_t> shape = shapeOf(getInput());
  int64_t axis = getChannelAxis(getLayout(), shape.size());
  int64_t perChannel = 1;
  for (auto [i, size] : llvm::enumerate(shape))
    if (static_cast<int64_t>(i) != axis)
      perChannel =
          ShapedType::isDynamic(size) || ShapedType::isDynamic(perChannel)
              ? ShapedType::kDynamic
              : perChannel * size;
  if (perChannel == 1 && getUnbiasedRunningVar())
    return emitOpError() << "needs more than one value per channel to "
                            "update the running variance, got 1 (or "
                            "unbiased_running_var = false)";
  double momentum = getMomentum().convertToDouble();
  if (!(momentum >= 0.0 && momentum <= 1.0))
    return emitOpError() << "momentum must lie in [0, 1], got " << momentum;
  return verifyNormForward(*this, getInput(), getResult(),
                           {{getScale(), "scale"}, {getBias(), "bias"}},
                           {{getRunningMean(), "running_mean"},
                            {getRunningVar(), "running_var"},
                            {getBatchMean(), "batch_mean"},
                            {getBatchRstd(), "batch_rstd"},
                            {getNewRunningMean(), "new_running_mean"},
                            {getNewRunningVar(), "new_running_var"}},
                           *s, getEpsilon().convertToDouble());
}

LogicalResult BatchNormInferenceOp::verify() {
  auto s = getBatchNormShapes(*this, getInput(), getLayout());
  if (failed(s))
    return failure();
  return verifyNormForward(
      *this, getInput(), getResult(),
      {{getScale(), "scale"}, {getBias(), "bias"}},
      {{getRunningMean(), "running_mean"}, {getRunningVar(), "running_var"}},
      *s, getEpsilon().convertToDouble());
}

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

LogicalResult LayerNormGradOp::verify() {
  return verifyAffineNormGrad(
      *this, getTrailingNormShapes(*this, getInput(), getAxisAttr().getInt()));
}

LogicalResult RMSNormGradOp::verify() {
  auto s = getTrailingNormShapes(*this, getInput(), getAxisAttr().getInt());
  if (failed(s))
    return failure();
  return verifyNormBackward(*this, getGradOutput(), getInput(), getGradInput(),
                            {{getRstd(), "rstd"}}, getScale(),
                            {{getGradScale(), "grad_scale"}}, *s);
}

LogicalResult GroupNormGradOp::verify() {
  return verifyAffineNormGrad(
      *this, getGroupNormShapes(*this, getInput(), getNumGroupsAttr().getInt(),
                                getLayout()));
}

LogicalResult InstanceNormGradOp::verify() {
  return verifyAffineNormGrad(
      *this, getInstanceNormShapes(*this, getInput(), getLayout()));
}

LogicalResult BatchNormGradOp::verify() {
  return verifyAffineNormGrad(
      *this, getBatchNormShapes(*this, getInput(), getLayout()));
}
