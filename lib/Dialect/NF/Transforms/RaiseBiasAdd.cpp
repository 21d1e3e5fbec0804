//===- RaiseBiasAdd.cpp - per-channel add -> nf.bias_add --------*- C++ -*-===//
//
// Part of normfuse. A bias arrives as an add of x and a per-channel vector
// broadcast along every axis but one: in TOSA a rank-equal 1x1xC or 1xCx1x1
// tensor (often tosa.reshape of a 1-D tensor<C>) or a lower-rank tensor
// broadcast numpy-style; with arith.addf or nf.add, which do not
// broadcast, a linalg.broadcast of a 1-D tensor<C> (or a reshape of one
// when every other dimension is 1). The channel axis must be the last
// dimension (nhwc) or dimension 1 (nchw); for rank 2 it is nhwc, as for a
// matmul bias. A splat (a scalar add), a full-shape add (a residual) and a
// bias along several axes or a middle axis are left alone.
//
//===----------------------------------------------------------------------===//

#include "ChainMatchers.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/Dialect/NF/Transforms/Patterns.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::chain;

namespace {

/// A per-channel bias found beside x.
struct ChannelBias {
  /// The bias as it is added (its type may differ from the result's).
  Value value;
  /// An existing 1-D tensor<C> holding the bias, if there is one.
  Value vector;
  /// A linalg.broadcast that only the add uses, if that made the bias.
  Operation *broadcast = nullptr;
  Layout layout;
  int64_t channels;
};

/// The source of `v` if `v` reshapes a 1-D tensor<channels>.
Value reshapedVector(Value v, int64_t channels) {
  Operation *op = v.getDefiningOp();
  if (!isa_and_nonnull<tosa::ReshapeOp, tensor::ReshapeOp,
                       tensor::ExpandShapeOp>(op))
    return {};
  Value source = op->getOperand(0);
  auto type = cast<RankedTensorType>(source.getType());
  bool isVector = type.getRank() == 1 && type.getDimSize(0) == channels;
  return isVector ? source : Value();
}

/// The layout whose channel axis is `axis` of a rank-`rank` tensor.
std::optional<Layout> layoutOfAxis(int64_t axis, int64_t rank) {
  if (axis == rank - 1)
    return Layout::NHWC;
  if (axis == 1)
    return Layout::NCHW;
  return std::nullopt;
}

/// `b` as a bias of x, for an add with result type `type`.
std::optional<ChannelBias> matchChannelBias(Value b, RankedTensorType type) {
  auto biasType = dyn_cast<RankedTensorType>(b.getType());
  if (!biasType || biasType.getElementType() != type.getElementType() ||
      splatValue(b))
    return std::nullopt;
  int64_t rank = type.getRank();
  ChannelBias bias{b, {}, nullptr, Layout::NHWC, 0};
  int64_t axis = -1;
  if (auto broadcast = b.getDefiningOp<linalg::BroadcastOp>()) {
    // dimensions are the axes added to the input: all but the channel.
    auto input = cast<RankedTensorType>(broadcast.getInput().getType());
    if (input.getRank() != 1 || biasType != type)
      return std::nullopt;
    ArrayRef<int64_t> added = broadcast.getDimensions();
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(added, d))
        axis = d;
    bias.vector = broadcast.getInput();
    bias.broadcast = broadcast;
  } else {
    // TOSA broadcasts numpy-style: a lower rank aligns with the trailing
    // dimensions.
    if (!biasType.hasStaticShape() || biasType.getRank() > rank)
      return std::nullopt;
    int64_t leading = rank - biasType.getRank();
    for (int64_t d = 0; d < biasType.getRank(); ++d) {
      if (biasType.getDimSize(d) == 1)
        continue;
      if (axis != -1)
        return std::nullopt; // broadcast along several axes
      axis = leading + d;
    }
    if (axis == -1 ||
        biasType.getDimSize(axis - leading) != type.getDimSize(axis))
      return std::nullopt;
    int64_t channels = type.getDimSize(axis);
    bias.vector = biasType.getRank() == 1 ? b : reshapedVector(b, channels);
    // A full-shape add is a residual unless the operand visibly is a
    // reshaped vector (1x3072 after a one-row matmul).
    if (biasType == type && !bias.vector)
      return std::nullopt;
  }
  std::optional<Layout> layout = layoutOfAxis(axis, rank);
  if (!layout || ShapedType::isDynamic(type.getDimSize(axis)))
    return std::nullopt;
  bias.layout = *layout;
  bias.channels = type.getDimSize(axis);
  return bias;
}

/// x + b (either order) with b a per-channel vector broadcast along every
/// other axis, where x has the result's type.
struct RaiseBroadcastAdd : RewritePattern {
  RaiseBroadcastAdd(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (classify(op) != Arith::Add)
      return failure();
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    if (!isNFFloatTensor(type) || type.getRank() < 2)
      return rewriter.notifyMatchFailure(op, "not an nf tensor of rank >= 2");
    Value input;
    std::optional<ChannelBias> bias;
    bool matched = matchOperands(op, [&](Value x, Value b) {
      input = x;
      bias = x.getType() == type ? matchChannelBias(b, type) : std::nullopt;
      return bias.has_value();
    });
    if (!matched)
      return rewriter.notifyMatchFailure(op, "not x + a per-channel vector");
    if (bias->broadcast && !usesStayInside({bias->broadcast}, op))
      return rewriter.notifyMatchFailure(op, "the broadcast has other users");
    // Only TOSA broadcasts implicitly, so a bias that is not already a
    // vector is an operand of tosa.add: reshape it to (C).
    Value vector = bias->vector;
    if (!vector && !isa<tosa::AddOp>(op))
      return rewriter.notifyMatchFailure(op, "no 1-D bias to reuse");
    if (!vector)
      vector = rewriter.create<tosa::ReshapeOp>(
          op->getLoc(),
          RankedTensorType::get({bias->channels}, type.getElementType()),
          bias->value, rewriter.getDenseI64ArrayAttr({bias->channels}));
    rewriter.replaceOpWithNewOp<BiasAddOp>(
        op, type, input, vector, LayoutAttr::get(getContext(), bias->layout));
    return success();
  }
};

} // namespace

void nf::populateRaiseBiasAddPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseBroadcastAdd>(patterns.getContext());
}
