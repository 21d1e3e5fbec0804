//===- RaiseNorms.cpp - mean/variance chains -> nf norms --------*- C++ -*-===//
//
// Part of normfuse. Frameworks hand LayerNorm, RMSNorm and GroupNorm over
// decomposed: tosa.reduce_sum per axis times 1/N for each mean, a subtract,
// a square, a second mean, `+ eps`, an rsqrt (or 1/sqrt) and multiplies,
// with elementwise arith/math ops on tensors in places. These patterns find
// such chains, read the axes, epsilon and affine parameters off them, and
// replace them by one nf.layer_norm, nf.rms_norm or nf.group_norm.
//
// The variance may also come in one pass, as mean(x * x) - mean(x)^2 (the
// form of ONNX's LayerNormalization and GroupNormalization function bodies,
// and of Flax's fast variance, there clamped by max(., 0)): the nf op
// computes it stably instead, which is closer to the exact result than the
// chain, whose subtraction cancels catastrophically where the mean is large
// against the deviation.
//
// A chain is raised only when it computes exactly the norm: float tensors
// of static shape, 1/N equal to the reciprocal of the number of reduced
// elements (to the rounding of the element type), the variance over the
// same axes as the mean, and no value inside the chain used outside it,
// except the mean and rstd, which the nf op returns too. The nf ops
// accumulate their statistics in f32 (f64 for f64) also for f16 and bf16
// inputs, where the chain rounds every step to 16 bits: the raised op
// differs from the chain only by that rounding, in its favour.
//
//===----------------------------------------------------------------------===//

#include "ChainMatchers.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/Dialect/NF/Transforms/Patterns.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::chain;

namespace {

//===----------------------------------------------------------------------===//
// Pieces of a chain
//===----------------------------------------------------------------------===//

/// `v`'s type if it is a statically shaped tensor of an element type the nf
/// norms take (f16, bf16, f32, f64), else null.
RankedTensorType normTensorType(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return nullptr;
  Type element = type.getElementType();
  if (!element.isF16() && !element.isBF16() && !element.isF32() &&
      !element.isF64())
    return nullptr;
  return type;
}

/// The source of the reshape (tosa.reshape, tensor.reshape, expand_shape or
/// collapse_shape: all row-major) that defines `v`, or null.
Value reshapeSource(Value v) {
  Operation *op = v.getDefiningOp();
  if (isa_and_nonnull<tosa::ReshapeOp, tensor::ReshapeOp, tensor::ExpandShapeOp,
                      tensor::CollapseShapeOp>(op))
    return op->getOperand(0);
  return nullptr;
}

/// The value a chain of reshapes defining `v` starts from (`v` itself if
/// none does), each reshape added to `ops` if given.
Value viewSource(Value v, SmallVectorImpl<Operation *> *ops = nullptr) {
  while (Value source = reshapeSource(v)) {
    if (ops)
      ops->push_back(v.getDefiningOp());
    v = source;
  }
  return v;
}

/// mean(source) over `axes`: one tosa.reduce_sum per axis (in any order),
/// then a multiply by 1/N or an arith.divf by N, N the number of elements
/// reduced. The result keeps the reduced axes as ones.
struct Mean {
  Value source;
  SmallVector<int64_t> axes; // ascending
  SmallVector<Operation *> ops;
};

std::optional<Mean> matchMean(Value v) {
  Operation *scaling = v.getDefiningOp();
  Arith kind = classify(scaling);
  Value sum, factor;
  auto takeSum = [&](Value s, Value c) {
    // The factor must not broadcast the sum to a larger shape.
    if (s.getType() != v.getType() || !splatValue(c))
      return false;
    sum = s;
    factor = c;
    return true;
  };
  if (!(kind == Arith::Mul && matchOperands(scaling, takeSum)) &&
      !(kind == Arith::Div &&
        takeSum(scaling->getOperand(0), scaling->getOperand(1))))
    return std::nullopt;

  Mean mean;
  mean.ops.push_back(scaling);
  Value current = sum;
  while (auto reduce = current.getDefiningOp<tosa::ReduceSumOp>()) {
    mean.axes.push_back(reduce.getAxis());
    mean.ops.push_back(reduce);
    current = reduce.getInput();
  }
  RankedTensorType type = normTensorType(current);
  if (mean.axes.empty() || !type)
    return std::nullopt;
  llvm::sort(mean.axes);
  if (std::adjacent_find(mean.axes.begin(), mean.axes.end()) != mean.axes.end())
    return std::nullopt; // an axis summed twice: not a mean
  int64_t count = 1;
  for (int64_t axis : mean.axes)
    count *= type.getDimSize(axis);
  if (count == 0)
    return std::nullopt; // the mean of nothing
  double expected = kind == Arith::Mul ? 1.0 / double(count) : double(count);
  if (!isSplatRounded(factor, expected))
    return std::nullopt;
  mean.source = current;
  return mean;
}

/// The `a` of a * a or pow(a, 2), with the op in `square`; else null.
Value matchSquare(Value v, Operation *&square) {
  square = v.getDefiningOp();
  Arith kind = classify(square);
  if (kind == Arith::Mul && square->getOperand(0) == square->getOperand(1))
    return square->getOperand(0);
  if (kind == Arith::Pow && square->getOperand(0).getType() == v.getType() &&
      isSplatRounded(square->getOperand(1), 2.0))
    return square->getOperand(0);
  return nullptr;
}

/// Whether `op` is max(v, 0) (its `v` returned): tosa.maximum or
/// arith.maximumf with a zero splat, tosa.clamp from 0 with no upper bound
/// (infinity or the largest float), or nf.relu (what raising makes of a
/// max(v, 0) it sees first). Null for any other bound.
Value matchClampAtZero(Operation *op) {
  if (auto relu = dyn_cast_or_null<ReluOp>(op))
    return relu.getInput();
  if (auto clamp = dyn_cast_or_null<tosa::ClampOp>(op)) {
    double high = clamp.getMaxFp().convertToDouble();
    if (clamp.getMinFp().convertToDouble() == 0.0 &&
        (std::isinf(high) || high >= 3.4028234663852886e38))
      return clamp.getInput();
    return nullptr;
  }
  Value v;
  if (classify(op) == Arith::Max)
    matchOperands(op, [&](Value x, Value zero) {
      std::optional<double> value = splatValue(zero);
      if (x.getType() != op->getResult(0).getType() || !value || *value != 0.0)
        return false;
      v = x;
      return true;
    });
  return v;
}

/// A variance computed in one pass: mean(y * y) - mean(y)^2 over the same
/// axes, optionally clamped by max(., 0).
struct OnePassVariance {
  Value input; // y
  Value mean;  // mean(y), the value squared
  SmallVector<int64_t> axes;
  SmallVector<Operation *> ops;
};

std::optional<OnePassVariance> matchOnePassVariance(Value v) {
  OnePassVariance variance;
  if (Operation *op = v.getDefiningOp(); Value clamped = matchClampAtZero(op)) {
    variance.ops.push_back(op);
    v = clamped;
  }
  Operation *sub = definedBy(v, Arith::Sub);
  if (!sub)
    return std::nullopt;
  Operation *square, *squareOfMean;
  std::optional<Mean> meanOfSquares = matchMean(sub->getOperand(0));
  Value mean = matchSquare(sub->getOperand(1), squareOfMean);
  std::optional<Mean> meanOfInput = mean ? matchMean(mean) : std::nullopt;
  if (!meanOfSquares || !meanOfInput ||
      sub->getOperand(0).getType() != v.getType() ||
      sub->getOperand(1).getType() != v.getType() ||
      meanOfSquares->axes != meanOfInput->axes)
    return std::nullopt;
  Value y = matchSquare(meanOfSquares->source, square);
  if (!y || y != meanOfInput->source)
    return std::nullopt;
  variance.input = y;
  variance.mean = mean;
  variance.axes = meanOfInput->axes;
  variance.ops.append({sub, squareOfMean, square});
  variance.ops.append(meanOfSquares->ops);
  variance.ops.append(meanOfInput->ops);
  return variance;
}

/// The `v` of sqrt(v) (math.sqrt or pow(v, 0.5)), its op added to `ops`.
Value matchSqrt(Value s, SmallVectorImpl<Operation *> &ops) {
  Operation *op = s.getDefiningOp();
  Arith kind = classify(op);
  if (kind != Arith::Sqrt &&
      !(kind == Arith::Pow && op->getOperand(0).getType() == s.getType() &&
        isSplatRounded(op->getOperand(1), 0.5)))
    return nullptr;
  ops.push_back(op);
  return op->getOperand(0);
}

/// rstd = 1 / sqrt(variance + epsilon), spelled rsqrt(v), pow(v, -0.5),
/// reciprocal(sqrt(v)) or divf(1, sqrt(v)), epsilon a positive splat.
struct Rstd {
  Value variance;
  double epsilon;
  SmallVector<Operation *> ops;
};

std::optional<Rstd> matchRstd(Value r) {
  Rstd rstd;
  Value radicand;
  Operation *op = r.getDefiningOp();
  switch (classify(op)) {
  case Arith::Rsqrt:
    radicand = op->getOperand(0);
    break;
  case Arith::Pow:
    if (op->getOperand(0).getType() == r.getType() &&
        isSplatRounded(op->getOperand(1), -0.5))
      radicand = op->getOperand(0);
    break;
  case Arith::Reciprocal:
    radicand = matchSqrt(op->getOperand(0), rstd.ops);
    break;
  case Arith::Div:
    if (op->getOperand(1).getType() == r.getType() &&
        isSplatRounded(op->getOperand(0), 1.0))
      radicand = matchSqrt(op->getOperand(1), rstd.ops);
    break;
  default:
    break;
  }
  Operation *add = radicand ? definedBy(radicand, Arith::Add) : nullptr;
  if (!add)
    return std::nullopt;
  rstd.ops.append({op, add});
  bool matched = matchOperands(add, [&](Value variance, Value eps) {
    std::optional<double> value = splatValue(eps);
    if (variance.getType() != radicand.getType() || !value ||
        !std::isfinite(*value) || *value <= 0.0)
      return false;
    rstd.variance = variance;
    rstd.epsilon = *value;
    return true;
  });
  if (!matched)
    return std::nullopt;
  return rstd;
}

/// The normalizing multiply `of * rstd(mean(of^2))` (RMSNorm; LayerNorm
/// with `of` = x - mean(x)), optionally with a scale folded into the rstd:
/// `of * (rstd * scale)`.
struct NormCore {
  Value input;
  SmallVector<int64_t> axes;
  double epsilon = 0.0;
  Value mean, rstd;  // the chain's statistics (no mean for RMSNorm)
  Value foldedScale; // the scale of of * (rstd * scale)
  // A one-pass variance of this input and mean, where the chain has one
  // (then `of` must be input - mean: a LayerNorm).
  Value onePassInput, onePassMean;
  SmallVector<Operation *> ops;
};

/// Matches `r` as rstd(mean(of^2)) or rstd(mean(of^2)) * scale.
bool matchNormalizer(Value r, Value of, NormCore &core) {
  std::optional<Rstd> rstd = matchRstd(r);
  if (rstd) {
    core.rstd = r;
  } else if (Operation *mul = definedBy(r, Arith::Mul)) {
    matchOperands(mul, [&](Value inner, Value scale) {
      rstd = matchRstd(inner);
      if (!rstd)
        return false;
      core.rstd = inner;
      core.foldedScale = scale;
      core.ops.push_back(mul);
      return true;
    });
  }
  if (!rstd)
    return false;
  core.epsilon = rstd->epsilon;
  core.ops.append(rstd->ops);
  std::optional<Mean> variance = matchMean(rstd->variance);
  Operation *square;
  if (variance && matchSquare(variance->source, square) == of) {
    core.axes = variance->axes;
    core.ops.append(variance->ops);
    core.ops.push_back(square);
    return true;
  }
  std::optional<OnePassVariance> onePass = matchOnePassVariance(rstd->variance);
  if (!onePass)
    return false;
  core.axes = onePass->axes;
  core.onePassInput = onePass->input;
  core.onePassMean = onePass->mean;
  core.ops.append(onePass->ops);
  return true;
}

/// `normalized * r` at `root` (in either order), `r` matched by
/// matchNormalizer and the rest by `complete`, which sets core.input.
std::optional<NormCore>
matchNormalizingMul(Operation *root,
                    llvm::function_ref<bool(Value, NormCore &)> complete) {
  if (classify(root) != Arith::Mul)
    return std::nullopt;
  Type type = root->getResult(0).getType();
  std::optional<NormCore> result;
  matchOperands(root, [&](Value normalized, Value r) {
    NormCore core;
    if (normalized.getType() != type || !matchNormalizer(r, normalized, core) ||
        !complete(normalized, core))
      return false;
    core.ops.push_back(root);
    result = std::move(core);
    return true;
  });
  return result;
}

/// x * rstd(mean(x^2)) at `root`.
std::optional<NormCore> matchRMSCore(Operation *root) {
  return matchNormalizingMul(root, [](Value x, NormCore &core) {
    // A one-pass variance is of y - mean(y), not of x itself.
    if (core.onePassInput)
      return false;
    core.input = x;
    return true;
  });
}

/// (x - mean(x)) * rstd(mean((x - mean(x))^2)) at `root`, both means over
/// the same axes.
std::optional<NormCore> matchLayerNormCore(Operation *root) {
  return matchNormalizingMul(root, [](Value centered, NormCore &core) {
    Operation *sub = definedBy(centered, Arith::Sub);
    if (!sub)
      return false;
    Value x = sub->getOperand(0);
    std::optional<Mean> mean = matchMean(sub->getOperand(1));
    if (x.getType() != centered.getType() || !mean || mean->source != x ||
        core.axes != mean->axes)
      return false;
    // A one-pass variance must be of this x (its mean may be this mean
    // or another computation of it).
    if (core.onePassInput && core.onePassInput != x)
      return false;
    core.input = x;
    core.mean = sub->getOperand(1);
    if (core.onePassMean != core.mean)
      core.ops.append(mean->ops);
    core.ops.push_back(sub);
    return true;
  });
}

//===----------------------------------------------------------------------===//
// Whole norms: core, affine parameters, uses
//===----------------------------------------------------------------------===//

/// A norm chain ending at `root`, ready to be replaced.
struct NormMatch {
  Operation *root = nullptr;
  Value input;
  SmallVector<Operation *> ops; // every op of the chain, root included
  double epsilon = 0.0;
  Value mean, rstd;  // the chain's statistics, which the nf op also returns
  Value scale, bias; // as the chain has them, broadcast against the input
  /// What a scale or bias must look like in the chain (the input's rank,
  /// ones where it broadcasts) and what the nf op takes.
  SmallVector<int64_t> paramBroadcast, paramShape;
  int64_t axis = 0;      // layer_norm, rms_norm
  int64_t numGroups = 0; // group_norm
  // group_norm: scale and bias are per group (shape (G)), as
  // GroupNormalization-18 has them; the nf op takes them per channel.
  bool perGroupParams = false;
  Layout layout = Layout::NCHW;
};

/// Whether `p` can be a scale or bias of `m`: its shape, padded with
/// leading ones to the input's rank (numpy broadcasting, as TOSA does),
/// is m.paramBroadcast, and its element type is the input's or f32.
bool isParam(Value p, const NormMatch &m) {
  RankedTensorType type = normTensorType(p);
  size_t rank = m.paramBroadcast.size();
  if (!type || size_t(type.getRank()) > rank)
    return false;
  SmallVector<int64_t> padded(rank - type.getRank(), 1);
  llvm::append_range(padded, type.getShape());
  Type element = type.getElementType();
  return padded == m.paramBroadcast &&
         (element == getElementTypeOrSelf(m.input) || element.isF32());
}

using InnerMatcher = llvm::function_ref<std::optional<NormMatch>(Operation *)>;

/// `inner [* scale] [+ bias]` ending at `op`, `inner` what `matchInner`
/// accepts. `stage` says what may still be peeled off: 0 a bias or a
/// scale, 1 a scale, 2 nothing.
std::optional<NormMatch> matchAffine(Operation *op, unsigned stage,
                                     InnerMatcher matchInner) {
  if (op->getNumResults() != 1)
    return std::nullopt;
  Type type = op->getResult(0).getType();
  std::optional<NormMatch> result;
  auto peel = [&](Arith kind, unsigned next, bool isBias) {
    if (classify(op) != kind)
      return false;
    return matchOperands(op, [&](Value in, Value param) {
      Operation *inOp = in.getDefiningOp();
      if (in.getType() != type || !inOp)
        return false;
      std::optional<NormMatch> m = matchAffine(inOp, next, matchInner);
      if (!m)
        return false;
      Value &slot = isBias ? m->bias : m->scale;
      if (slot || !isParam(param, *m))
        return false;
      slot = param;
      m->ops.push_back(op);
      m->root = op;
      result = std::move(m);
      return true;
    });
  };
  if (stage == 0 && peel(Arith::Add, 1, /*isBias=*/true))
    return result;
  if (stage <= 1 && peel(Arith::Mul, 2, /*isBias=*/false))
    return result;
  return matchInner(op);
}

/// Whether `user` comes after `root` in root's block (at any depth), so
/// that a value the nf op defines in root's place dominates it.
bool isAfter(Operation *user, Operation *root) {
  Operation *ancestor = root->getBlock()->findAncestorOpInBlock(*user);
  return ancestor && root->isBeforeInBlock(ancestor);
}

/// Whether the chain may be replaced: no value inside it is used outside,
/// except its mean and rstd where the nf op's statistics (of the
/// accumulation type) can take the outside uses.
bool usesAllowReplacement(const NormMatch &m) {
  llvm::SmallPtrSet<Operation *, 16> inside(m.ops.begin(), m.ops.end());
  Type acc = getAccumulationType(getElementTypeOrSelf(m.input));
  for (Operation *op : m.ops) {
    if (op == m.root)
      continue;
    for (OpOperand &use : op->getUses()) {
      Operation *user = use.getOwner();
      if (inside.contains(user))
        continue;
      Value v = use.get();
      bool exported = (v == m.mean || v == m.rstd) &&
                      getElementTypeOrSelf(v) == acc && isAfter(user, m.root);
      if (!exported)
        return false;
    }
  }
  return true;
}

/// Where `axes` start if they are the trailing axes of a tensor of rank
/// `rank`, else nullopt.
std::optional<int64_t> trailingAxis(ArrayRef<int64_t> axes, int64_t rank) {
  int64_t first = rank - int64_t(axes.size());
  if (!llvm::equal(axes, llvm::seq<int64_t>(first, rank)))
    return std::nullopt;
  return first;
}

/// The norm over trailing axes that `core` (if any) computes.
std::optional<NormMatch> trailingNorm(Operation *root,
                                      std::optional<NormCore> core) {
  if (!core)
    return std::nullopt;
  auto type = cast<RankedTensorType>(core->input.getType());
  std::optional<int64_t> axis = trailingAxis(core->axes, type.getRank());
  if (!axis)
    return std::nullopt;
  NormMatch m;
  m.root = root;
  m.input = core->input;
  m.ops = std::move(core->ops);
  m.epsilon = core->epsilon;
  m.mean = core->mean;
  m.rstd = core->rstd;
  m.axis = *axis;
  m.paramShape.assign(type.getShape().begin() + *axis, type.getShape().end());
  m.paramBroadcast.assign(*axis, 1);
  llvm::append_range(m.paramBroadcast, m.paramShape);
  if (core->foldedScale && !isParam(core->foldedScale, m))
    return std::nullopt;
  m.scale = core->foldedScale;
  return m;
}

/// A LayerNorm of an f16 or bf16 x computed in f32 (ONNX's stash_type):
/// tosa.cast(core(tosa.cast(x) to f32)) back to x's type at `op`. nf's
/// kernel for x computes in f32 too, and rounds once where the chain
/// rounds the normalized value before its scale and bias.
std::optional<NormMatch> matchStashedLayerNorm(Operation *op) {
  auto back = dyn_cast<tosa::CastOp>(op);
  Operation *coreRoot = back ? back.getInput().getDefiningOp() : nullptr;
  std::optional<NormCore> core =
      coreRoot ? matchLayerNormCore(coreRoot) : std::nullopt;
  if (!core || core->foldedScale)
    return std::nullopt;
  auto in = core->input.getDefiningOp<tosa::CastOp>();
  Value x = in ? in.getInput() : Value();
  RankedTensorType type = x ? normTensorType(x) : nullptr;
  if (!type || type != back.getType() ||
      !isa<Float16Type, BFloat16Type>(type.getElementType()) ||
      !getElementTypeOrSelf(core->input).isF32())
    return std::nullopt;
  core->input = x;
  core->ops.append({in, back});
  return trailingNorm(op, std::move(core));
}

/// The layout and group count of a GroupNorm of `x` computed as a
/// LayerNorm-style chain over `axes` of `grouped`, a reshape of x.
/// Sufficient conditions, from row-major order within one sample:
/// - nchw: x = (N, C, S...), grouped = (N, G, R...), G divides C, axes
///   [2, rank): each row of `grouped` holds C/G consecutive channels
///   (also the (N, G, C/G * H * W) form);
/// - nhwc: x = (N, S..., C), grouped = (N, S'..., G, C/G), axes all but 0
///   and the G axis: the last two axes split the channel axis.
std::optional<std::pair<Layout, int64_t>> groupLayout(ArrayRef<int64_t> x,
                                                      ArrayRef<int64_t> grouped,
                                                      ArrayRef<int64_t> axes) {
  int64_t rank = grouped.size();
  if (x.size() < 2 || rank < 3 || grouped[0] != x[0] ||
      llvm::is_contained(grouped, 0))
    return std::nullopt;
  if (llvm::equal(axes, llvm::seq<int64_t>(2, rank)) && x[1] % grouped[1] == 0)
    return std::make_pair(Layout::NCHW, grouped[1]);
  SmallVector<int64_t> nhwcAxes = llvm::to_vector(llvm::seq<int64_t>(1, rank));
  nhwcAxes.erase(nhwcAxes.end() - 2);
  if (axes == ArrayRef<int64_t>(nhwcAxes) &&
      grouped[rank - 2] * grouped[rank - 1] == x.back())
    return std::make_pair(Layout::NHWC, grouped[rank - 2]);
  return std::nullopt;
}

/// Whether `back` is x of type `x` with its spatial dimensions flattened:
/// (N, C, H * W * ...), the shape ONNX's GroupNormalization-21 body applies
/// its per-channel scale and bias in.
bool isChannelsFirstFlattening(RankedTensorType back, RankedTensorType x) {
  return back.getRank() == 3 && x.getRank() >= 3 &&
         back.getElementType() == x.getElementType() &&
         back.getDimSize(0) == x.getDimSize(0) &&
         back.getDimSize(1) == x.getDimSize(1) &&
         back.getNumElements() == x.getNumElements();
}

/// reshape(LayerNorm chain over the group axes of reshape(x)) to x's type,
/// or, for NCHW, to x's (N, C, H * W) flattening; either reshape may be a
/// chain of reshapes (ONNX's GroupNormalization-21 body has both).
std::optional<NormMatch> matchGroupNormInner(Operation *back) {
  SmallVector<Operation *> views;
  Value normalized = reshapeSource(back->getResult(0))
                         ? viewSource(back->getResult(0), &views)
                         : Value();
  Operation *coreRoot = normalized ? normalized.getDefiningOp() : nullptr;
  std::optional<NormCore> core =
      coreRoot ? matchLayerNormCore(coreRoot) : std::nullopt;
  if (!core || core->foldedScale)
    return std::nullopt;
  Value x = reshapeSource(core->input) ? viewSource(core->input) : Value();
  RankedTensorType type = x ? normTensorType(x) : nullptr;
  auto backType = dyn_cast<RankedTensorType>(back->getResult(0).getType());
  if (!type || !backType)
    return std::nullopt;
  bool flattened =
      backType != type && isChannelsFirstFlattening(backType, type);
  if (backType != type && !flattened)
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  auto layout = groupLayout(
      shape, cast<RankedTensorType>(core->input.getType()).getShape(),
      core->axes);
  if (!layout || (flattened && layout->first != Layout::NCHW))
    return std::nullopt;
  NormMatch m;
  m.root = back;
  m.input = x;
  m.ops = std::move(core->ops);
  m.ops.append(views); // back and the reshapes between it and the core
  m.epsilon = core->epsilon;
  m.mean = core->mean;
  m.rstd = core->rstd;
  std::tie(m.layout, m.numGroups) = *layout;
  int64_t channelAxis = getChannelAxis(m.layout, shape.size());
  m.paramShape = {shape[channelAxis]};
  // Scale and bias broadcast against the chain's shape after `back`.
  m.paramBroadcast.assign(backType.getRank(), 1);
  m.paramBroadcast[channelAxis] = shape[channelAxis];
  return m;
}

/// The variance of x over `axes` as the chain computes it: two-pass,
/// mean((x - mean(x))^2) (a mean of x over the same axes, this one or
/// another computation of it), or one-pass. Its ops are added to `ops`.
bool matchVarianceOf(Value variance, Value x, ArrayRef<int64_t> axes,
                     SmallVectorImpl<Operation *> &ops) {
  if (std::optional<Mean> mean = matchMean(variance)) {
    Operation *square;
    Value centered = matchSquare(mean->source, square);
    Operation *sub = centered ? definedBy(centered, Arith::Sub) : nullptr;
    std::optional<Mean> inner =
        sub ? matchMean(sub->getOperand(1)) : std::nullopt;
    if (!inner || sub->getOperand(0) != x || inner->source != x ||
        mean->axes != axes || inner->axes != axes)
      return false;
    ops.append(mean->ops);
    ops.append({square, sub});
    ops.append(inner->ops);
    return true;
  }
  std::optional<OnePassVariance> onePass = matchOnePassVariance(variance);
  if (!onePass || onePass->input != x || onePass->axes != axes)
    return false;
  ops.append(onePass->ops);
  return true;
}

/// tf.nn.batch_normalization's folded affine form of a LayerNorm over
/// trailing axes (what Keras' LayerNormalization calls):
///   inv = rstd(var(x)) [* scale];  y = x * inv + (bias - mean(x) * inv)
/// and without a bias x * inv - mean(x) * inv, x * inv + (-(mean(x) * inv))
/// or x * inv + (-mean(x)) * inv. The variance is two-pass or one-pass.
std::optional<NormMatch> matchFoldedLayerNorm(Operation *root) {
  Arith kind = classify(root);
  if (kind != Arith::Add && kind != Arith::Sub)
    return std::nullopt;
  Type type = root->getResult(0).getType();
  std::optional<NormMatch> result;
  auto tryTerms = [&](Value scaledInput, Value shift) {
    // scaledInput = x * inv
    Operation *mulX = definedBy(scaledInput, Arith::Mul);
    if (!mulX || scaledInput.getType() != type)
      return false;
    return matchOperands(mulX, [&](Value x, Value inv) {
      if (x.getType() != type || !normTensorType(x))
        return false;
      // shift = bias - mean * inv, -(mean * inv), or (for a Sub root)
      // mean * inv itself.
      SmallVector<Operation *> ops = {root, mulX};
      Value bias, meanTimesInv = shift;
      bool negatedMean = false;
      if (kind == Arith::Add) {
        if (Operation *sub = definedBy(shift, Arith::Sub)) {
          bias = sub->getOperand(0);
          meanTimesInv = sub->getOperand(1);
          ops.push_back(sub);
        } else if (Operation *neg = definedBy(shift, Arith::Negate)) {
          meanTimesInv = neg->getOperand(0);
          ops.push_back(neg);
        } else {
          negatedMean = true; // (-mean) * inv, as Python's -mean * inv
        }
      }
      Operation *mulMean = definedBy(meanTimesInv, Arith::Mul);
      Value mean;
      if (!mulMean || !matchOperands(mulMean, [&](Value m, Value i) {
            if (i != inv)
              return false;
            mean = m;
            return true;
          }))
        return false;
      ops.push_back(mulMean);
      if (negatedMean) {
        Operation *neg = definedBy(mean, Arith::Negate);
        if (!neg)
          return false;
        ops.push_back(neg);
        mean = neg->getOperand(0);
      }
      std::optional<Mean> meanOfX = matchMean(mean);
      if (!meanOfX || meanOfX->source != x)
        return false;
      ops.append(meanOfX->ops);
      // inv = rstd or rstd * scale
      Value rstdValue = inv, scale;
      std::optional<Rstd> rstd = matchRstd(inv);
      if (!rstd) {
        Operation *mulScale = definedBy(inv, Arith::Mul);
        if (!mulScale || !matchOperands(mulScale, [&](Value r, Value g) {
              rstd = matchRstd(r);
              if (!rstd)
                return false;
              rstdValue = r;
              scale = g;
              return true;
            }))
          return false;
        ops.push_back(mulScale);
      }
      ops.append(rstd->ops);
      if (!matchVarianceOf(rstd->variance, x, meanOfX->axes, ops))
        return false;
      NormCore core;
      core.input = x;
      core.axes = meanOfX->axes;
      core.epsilon = rstd->epsilon;
      core.mean = mean;
      core.rstd = rstdValue;
      core.foldedScale = scale;
      core.ops = std::move(ops);
      std::optional<NormMatch> m = trailingNorm(root, std::move(core));
      if (!m || (bias && !isParam(bias, *m)))
        return false;
      m->bias = bias;
      result = std::move(m);
      return true;
    });
  };
  if (kind == Arith::Add)
    matchOperands(root, tryTerms);
  else
    tryTerms(root->getOperand(0), root->getOperand(1));
  return result;
}

/// A GroupNorm whose scale and bias apply per group in the grouped shape,
/// before the reshape back (ONNX GroupNormalization-18's body): `op` is
/// the LayerNorm chain over the group axes of reshape(x), NCHW, and the
/// affine parameters broadcast as (1, G, 1, ...).
std::optional<NormMatch> matchPerGroupInner(Operation *op) {
  std::optional<NormCore> core = matchLayerNormCore(op);
  if (!core || core->foldedScale)
    return std::nullopt;
  Value x = reshapeSource(core->input) ? viewSource(core->input) : Value();
  RankedTensorType type = x ? normTensorType(x) : nullptr;
  auto grouped = cast<RankedTensorType>(core->input.getType());
  auto layout =
      type ? groupLayout(type.getShape(), grouped.getShape(), core->axes)
           : std::nullopt;
  if (!layout || layout->first != Layout::NCHW)
    return std::nullopt;
  NormMatch m;
  m.root = op;
  m.input = x;
  m.ops = std::move(core->ops);
  m.epsilon = core->epsilon;
  m.mean = core->mean;
  m.rstd = core->rstd;
  std::tie(m.layout, m.numGroups) = *layout;
  m.perGroupParams = true;
  m.paramShape = {m.numGroups};
  m.paramBroadcast.assign(grouped.getRank(), 1);
  m.paramBroadcast[1] = m.numGroups;
  return m;
}

enum class NormKind { Layer, RMS, Group };

/// The whole norm of `kind` ending at `root`, with its affine parameters,
/// if its values are used only as usesAllowReplacement allows.
std::optional<NormMatch> matchNorm(NormKind kind, Operation *root) {
  std::optional<NormMatch> m;
  switch (kind) {
  case NormKind::Layer:
    m = matchAffine(root, /*stage=*/0, [](Operation *op) {
      if (std::optional<NormMatch> m = trailingNorm(op, matchLayerNormCore(op)))
        return m;
      return matchStashedLayerNorm(op);
    });
    if (!m)
      m = matchFoldedLayerNorm(root);
    break;
  case NormKind::RMS: // no bias
    m = matchAffine(root, /*stage=*/1, [](Operation *op) {
      return trailingNorm(op, matchRMSCore(op));
    });
    break;
  case NormKind::Group:
    m = matchAffine(root, /*stage=*/0, matchGroupNormInner);
    // Only with a per-group scale or bias: a bare chain over a reshape is
    // a LayerNorm of the reshaped tensor, and left to that pattern.
    if (!m)
      m = matchAffine(root, /*stage=*/0, matchPerGroupInner);
    if (m && m->perGroupParams && !m->scale && !m->bias)
      m.reset();
    break;
  }
  if (!m || !usesAllowReplacement(*m))
    return std::nullopt;
  return m;
}

/// Whether a larger norm chain that contains `root` ends at root's only
/// user: then that chain is raised as a whole, not this part of it (a
/// LayerNorm without the scale that follows, the LayerNorm inside a
/// GroupNorm), whatever order the driver visits the ops in.
bool extendsIntoUser(Operation *root) {
  if (!root->getResult(0).hasOneUse())
    return false;
  Operation *user = *root->getUsers().begin();
  for (NormKind kind : {NormKind::Layer, NormKind::RMS, NormKind::Group})
    if (std::optional<NormMatch> m = matchNorm(kind, user);
        m && llvm::is_contained(m->ops, root))
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

/// `p` with shape `shape`: its own value, the source of the reshape that
/// broadcast it, or a new tosa.reshape.
Value reshapeParam(PatternRewriter &rewriter, Location loc, Value p,
                   ArrayRef<int64_t> shape) {
  if (!p)
    return p;
  auto hasShape = [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && type.getShape() == shape;
  };
  if (hasShape(p))
    return p;
  if (Value source = reshapeSource(p); source && hasShape(source))
    return source;
  return rewriter.create<tosa::ReshapeOp>(
      loc, RankedTensorType::get(shape, getElementTypeOrSelf(p)), p,
      rewriter.getDenseI64ArrayAttr(shape));
}

/// A per-group parameter `p` (shape (G)) repeated for each channel of its
/// group: shape (C), channel c taking p[c / (C / G)].
Value perChannel(PatternRewriter &rewriter, Location loc, Value p,
                 int64_t groups, int64_t channels) {
  if (!p)
    return p;
  Type element = getElementTypeOrSelf(p);
  int64_t perGroup = channels / groups;
  Value column = rewriter.create<tosa::ReshapeOp>(
      loc, RankedTensorType::get({groups, 1}, element), p,
      rewriter.getDenseI64ArrayAttr({groups, 1}));
  Value tiled = rewriter.create<tosa::TileOp>(
      loc, RankedTensorType::get({groups, perGroup}, element), column,
      rewriter.getDenseI64ArrayAttr({1, perGroup}));
  return rewriter.create<tosa::ReshapeOp>(
      loc, RankedTensorType::get({channels}, element), tiled,
      rewriter.getDenseI64ArrayAttr({channels}));
}

/// Hands the outside uses of the chain's mean and rstd to the nf op's.
void exportStatistics(PatternRewriter &rewriter, const NormMatch &m, Value mean,
                      Value rstd) {
  llvm::SmallPtrSet<Operation *, 16> inside(m.ops.begin(), m.ops.end());
  auto isOutside = [&](OpOperand &use) {
    return !inside.contains(use.getOwner());
  };
  for (auto [chainValue, nfValue] : {std::pair(m.mean, mean), {m.rstd, rstd}}) {
    if (!chainValue || !nfValue ||
        llvm::none_of(chainValue.getUses(), isOutside))
      continue;
    auto type = cast<RankedTensorType>(chainValue.getType());
    if (nfValue.getType() != type)
      nfValue = rewriter.create<tosa::ReshapeOp>(
          m.root->getLoc(), type, nfValue,
          rewriter.getDenseI64ArrayAttr(type.getShape()));
    rewriter.replaceUsesWithIf(chainValue, nfValue, isOutside);
  }
}

/// The nf op for `m`, built in `root`'s place; returns its y, mean and
/// rstd (no mean for RMSNorm).
std::tuple<Value, Value, Value> createNorm(PatternRewriter &rewriter,
                                           NormKind kind, const NormMatch &m) {
  Location loc = m.root->getLoc();
  Value scale = reshapeParam(rewriter, loc, m.scale, m.paramShape);
  Value bias = reshapeParam(rewriter, loc, m.bias, m.paramShape);
  auto type = cast<RankedTensorType>(m.input.getType());
  Type acc = getAccumulationType(type.getElementType());
  FloatAttr epsilon = rewriter.getF64FloatAttr(m.epsilon);
  if (kind == NormKind::Group) {
    if (m.perGroupParams) {
      int64_t channels =
          type.getDimSize(getChannelAxis(m.layout, type.getRank()));
      scale = perChannel(rewriter, loc, scale, m.numGroups, channels);
      bias = perChannel(rewriter, loc, bias, m.numGroups, channels);
    }
    auto stats = RankedTensorType::get({type.getDimSize(0), m.numGroups}, acc);
    auto norm = rewriter.create<GroupNormOp>(
        loc, type, stats, stats, m.input, scale, bias,
        rewriter.getI64IntegerAttr(m.numGroups), epsilon,
        LayoutAttr::get(rewriter.getContext(), m.layout));
    return {norm.getResult(), norm.getMean(), norm.getRstd()};
  }
  // input.shape[:axis] followed by ones.
  SmallVector<int64_t> statShape(type.getShape().take_front(m.axis));
  statShape.append(type.getRank() - m.axis, 1);
  auto stats = RankedTensorType::get(statShape, acc);
  IntegerAttr axis = rewriter.getI64IntegerAttr(m.axis);
  if (kind == NormKind::RMS) {
    auto norm = rewriter.create<RMSNormOp>(loc, type, stats, m.input, scale,
                                           axis, epsilon);
    return {norm.getResult(), Value(), norm.getRstd()};
  }
  auto norm = rewriter.create<LayerNormOp>(loc, type, stats, stats, m.input,
                                           scale, bias, axis, epsilon);
  return {norm.getResult(), norm.getMean(), norm.getRstd()};
}

/// Raises the norm chain of one kind that ends at an op.
struct RaiseNorm : RewritePattern {
  RaiseNorm(MLIRContext *context, NormKind kind, PatternBenefit benefit)
      : RewritePattern(MatchAnyOpTypeTag(), benefit, context), kind(kind) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    std::optional<NormMatch> m = matchNorm(kind, op);
    if (!m)
      return rewriter.notifyMatchFailure(op, "no norm chain ends here");
    if (extendsIntoUser(op))
      return rewriter.notifyMatchFailure(op, "a larger chain ends at the user");
    auto [result, mean, rstd] = createNorm(rewriter, kind, *m);
    exportStatistics(rewriter, *m, mean, rstd);
    // A chain that ends in another view of the input (a GroupNorm's
    // (N, C, H * W) flattening) gets that view of the result.
    auto rootType = cast<RankedTensorType>(op->getResult(0).getType());
    if (result.getType() != rootType)
      result = rewriter.create<tosa::ReshapeOp>(
          op->getLoc(), rootType, result,
          rewriter.getDenseI64ArrayAttr(rootType.getShape()));
    rewriter.replaceOp(op, result);
    return success();
  }

  NormKind kind;
};

} // namespace

// LayerNorm goes before RMSNorm on the same root: the LayerNorm multiply
// (x - mean) * rstd is also an RMSNorm of x - mean.
void nf::populateRaiseLayerNormPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseNorm>(patterns.getContext(), NormKind::Layer,
                          /*benefit=*/2);
}

void nf::populateRaiseRMSNormPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseNorm>(patterns.getContext(), NormKind::RMS,
                          /*benefit=*/1);
}

void nf::populateRaiseGroupNormPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseNorm>(patterns.getContext(), NormKind::Group,
                          /*benefit=*/2);
}
