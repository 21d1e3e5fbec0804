//===- LowerNorms.cpp - layer_norm and rms_norm to loops --------*- C++ -*-===//
//
// Part of normfuse. A trailing-axis norm views its input as (rows, cols),
// cols = prod(shape[axis:]), and runs one iteration of a parallel loop per
// row. Within a row: a blocked sum for the mean, a second blocked sum of
// squared deviations for the variance (two passes over a row that is in
// cache: never E[x^2] - E[x]^2), then one pass that normalizes, scales,
// shifts and stores. RMSNorm needs only the sum of squares.
//
//===----------------------------------------------------------------------===//

#include "LoopUtils.h"
#include "PointwiseChain.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;

namespace {

/// The buffers of a trailing-axis norm viewed as rows.
struct RowNormBuffers {
  Value xFull, yFull; // input and result buffers in their own shapes
  Value x, y;         // the same viewed as (rows, cols)
  Value scale, bias;  // (cols), or null when absent
  Value rows, cols;   // index values
  PointwiseChain prologue,
      epilogue; // of an nf.fused body, bound to (rows, cols)
};

/// x[row, j..j+w), through the prologue of a fused body.
Value loadRowInput(OpBuilder &b, Location loc, const RowNormBuffers &r,
                   Value row, Value j, int64_t w, Type acc) {
  return r.prologue.apply(b, loc, loadAs(b, loc, r.x, {row, j}, w, acc),
                          {row, j}, w);
}

/// 1 / sqrt(v + eps) in the accumulation type.
Value emitRstd(OpBuilder &b, Location loc, Value meanOfSquares,
               double epsilon) {
  Type t = meanOfSquares.getType();
  Value sum = b.create<arith::AddFOp>(loc, meanOfSquares,
                                      floatConstant(b, loc, epsilon, t, 1));
  return b.create<arith::DivFOp>(loc, floatConstant(b, loc, 1.0, t, 1),
                                 b.create<math::SqrtOp>(loc, sum));
}

template <typename NormOp>
RowNormBuffers prepareRowNorm(OpBuilder &b, Location loc, NormOp op,
                              Value input, Value scale, Value bias,
                              int64_t axis, const NormFusion &fusion) {
  RowNormBuffers r;
  RankedTensorType type = op.getResult().getType();
  int64_t rank = type.getRank();
  r.xFull = getBuffer(b, loc, input);
  r.rows = getNumElements(b, loc, r.xFull, 0, axis);
  r.cols = getNumElements(b, loc, r.xFull, axis, rank);
  r.x = reshapeBuffer(b, loc, r.xFull, {r.rows, r.cols});
  r.yFull = allocBuffer(b, loc, type, r.xFull);
  r.y = reshapeBuffer(b, loc, r.yFull, {r.rows, r.cols});
  if (scale)
    r.scale = reshapeBuffer(b, loc, getBuffer(b, loc, scale), {r.cols});
  if (bias)
    r.bias = reshapeBuffer(b, loc, getBuffer(b, loc, bias), {r.cols});
  for (auto [chain, from] : {std::make_pair(&r.prologue, fusion.prologue),
                             std::make_pair(&r.epilogue, fusion.epilogue)}) {
    if (!from)
      continue;
    *chain = *from;
    chain->bind(b, loc, {r.rows, r.cols}, /*channelDim=*/1);
  }
  return r;
}

/// Allocates a statistics buffer of `type` and returns it with its (rows)
/// view. Its dynamic sizes are leading ones, shared with `input`.
std::pair<Value, Value> allocStats(OpBuilder &b, Location loc,
                                   RankedTensorType type, Value input,
                                   Value rows) {
  Value full = allocBuffer(b, loc, type, input);
  return {full, reshapeBuffer(b, loc, full, {rows})};
}

/// Writes y[r, :] = ((x[r, :] - mean) * rstd) * scale + bias, where `mean`
/// may be null (RMSNorm).
void emitNormalizeRow(OpBuilder &b, Location loc, const RowNormBuffers &r,
                      Value row, Value mean, Value rstd, int64_t width,
                      Type acc, const StreamingStores &streaming) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  emitVectorLoop(
      b, loc, zero, r.cols, width,
      [&](OpBuilder &lb, Location ll, Value j, int64_t w) {
        Value v = loadRowInput(lb, ll, r, row, j, w, acc);
        if (mean)
          v = lb.create<arith::SubFOp>(ll, v, splat(lb, ll, mean, w));
        v = lb.create<arith::MulFOp>(ll, v, splat(lb, ll, rstd, w));
        if (r.scale)
          v = lb.create<arith::MulFOp>(ll, v,
                                       loadAs(lb, ll, r.scale, j, w, acc));
        if (r.bias)
          v = lb.create<arith::AddFOp>(ll, v,
                                       loadAs(lb, ll, r.bias, j, w, acc));
        storeAs(lb, ll, r.epilogue.apply(lb, ll, v, {row, j}, w), r.y, {row, j},
                streaming.enabled);
      });
}

/// Runs `body` for every row, in parallel, with the streaming stores `y`
/// qualifies for (see emitStreamingVersions).
void emitNormRows(OpBuilder &b, Location loc, const RowNormBuffers &r,
                  int64_t width,
                  llvm::function_ref<void(OpBuilder &, Location, Value row,
                                          const StreamingStores &)>
                      body) {
  emitStreamingVersions(
      b, loc, {r.y}, r.cols, width,
      [&](OpBuilder &sb, Location sl, const StreamingStores &streaming) {
        emitParallelRows(
            sb, sl, r.rows,
            [&](OpBuilder &pb, Location pl, Value row) {
              body(pb, pl, row, streaming);
            },
            streaming);
      });
}

struct LowerLayerNorm : LoopLoweringPattern<LayerNormOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, emit(rewriter, op, adaptor.getInput(),
                                adaptor.getScale(), adaptor.getBias(),
                                options.vectorWidth, NormFusion()));
    return success();
  }

  /// The loops, from the operands' tensors (see emitLayerNormLoops).
  static SmallVector<Value> emit(OpBuilder &b, LayerNormOp op, Value input,
                                 Value scale, Value bias, int64_t w,
                                 const NormFusion &fusion) {
    Location loc = op.getLoc();
    int64_t axis = op.getAxisAttr().getInt();
    Type acc = getAccumulationType(op.getResult().getType().getElementType());
    double eps = op.getEpsilon().convertToDouble();

    RowNormBuffers r =
        prepareRowNorm(b, loc, op, input, scale, bias, axis, fusion);
    Value meanFull, mean, rstdFull, rstd;
    std::tie(meanFull, mean) =
        allocStats(b, loc, op.getMean().getType(), r.xFull, r.rows);
    std::tie(rstdFull, rstd) =
        allocStats(b, loc, op.getRstd().getType(), r.xFull, r.rows);

    Value colsF = indexToFloat(b, loc, r.cols, acc);
    emitNormRows(b, loc, r, w,
                 [&](OpBuilder &pb, Location pl, Value row,
                     const StreamingStores &streaming) {
                   Value sum = emitBlockedSum(
                       pb, pl, r.cols, w, acc,
                       [&](OpBuilder &sb, Location sl, Value j, int64_t width) {
                         return loadRowInput(sb, sl, r, row, j, width, acc);
                       });
                   Value m = pb.create<arith::DivFOp>(pl, sum, colsF);
                   Value sq = emitBlockedSum(
                       pb, pl, r.cols, w, acc,
                       [&](OpBuilder &sb, Location sl, Value j, int64_t width) {
                         Value d = sb.create<arith::SubFOp>(
                             sl, loadRowInput(sb, sl, r, row, j, width, acc),
                             splat(sb, sl, m, width));
                         return sb.create<arith::MulFOp>(sl, d, d).getResult();
                       });
                   Value var = pb.create<arith::DivFOp>(pl, sq, colsF);
                   Value s = emitRstd(pb, pl, var, eps);
                   storeAs(pb, pl, m, mean, row);
                   storeAs(pb, pl, s, rstd, row);
                   emitNormalizeRow(pb, pl, r, row, m, s, w, acc, streaming);
                 });
    return {toTensor(b, loc, r.yFull), toTensor(b, loc, meanFull),
            toTensor(b, loc, rstdFull)};
  }
};

struct LowerRMSNorm : LoopLoweringPattern<RMSNormOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(RMSNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, emit(rewriter, op, adaptor.getInput(),
                                adaptor.getScale(), options.vectorWidth,
                                NormFusion()));
    return success();
  }

  /// The loops, from the operands' tensors (see emitRMSNormLoops).
  static SmallVector<Value> emit(OpBuilder &b, RMSNormOp op, Value input,
                                 Value scale, int64_t w,
                                 const NormFusion &fusion) {
    Location loc = op.getLoc();
    int64_t axis = op.getAxisAttr().getInt();
    Type acc = getAccumulationType(op.getResult().getType().getElementType());
    double eps = op.getEpsilon().convertToDouble();

    RowNormBuffers r =
        prepareRowNorm(b, loc, op, input, scale, Value(), axis, fusion);
    Value rstdFull, rstd;
    std::tie(rstdFull, rstd) =
        allocStats(b, loc, op.getRstd().getType(), r.xFull, r.rows);

    Value colsF = indexToFloat(b, loc, r.cols, acc);
    emitNormRows(
        b, loc, r, w,
        [&](OpBuilder &pb, Location pl, Value row,
            const StreamingStores &streaming) {
          Value sq = emitBlockedSum(
              pb, pl, r.cols, w, acc,
              [&](OpBuilder &sb, Location sl, Value j, int64_t width) {
                Value v = loadRowInput(sb, sl, r, row, j, width, acc);
                return sb.create<arith::MulFOp>(sl, v, v).getResult();
              });
          Value s =
              emitRstd(pb, pl, pb.create<arith::DivFOp>(pl, sq, colsF), eps);
          storeAs(pb, pl, s, rstd, row);
          emitNormalizeRow(pb, pl, r, row, Value(), s, w, acc, streaming);
        });
    return {toTensor(b, loc, r.yFull), toTensor(b, loc, rstdFull)};
  }
};

} // namespace

SmallVector<Value> cpu::emitLayerNormLoops(OpBuilder &b, LayerNormOp op,
                                           Value input, Value scale, Value bias,
                                           int64_t width,
                                           const NormFusion &fusion) {
  return LowerLayerNorm::emit(b, op, input, scale, bias, width, fusion);
}

SmallVector<Value> cpu::emitRMSNormLoops(OpBuilder &b, RMSNormOp op,
                                         Value input, Value scale,
                                         int64_t width,
                                         const NormFusion &fusion) {
  return LowerRMSNorm::emit(b, op, input, scale, width, fusion);
}

void mlir::nf::populateLowerNormsToLoopsPatterns(
    RewritePatternSet &patterns, const LoopLoweringOptions &options) {
  patterns.add<LowerLayerNorm, LowerRMSNorm>(patterns.getContext(), options);
}
