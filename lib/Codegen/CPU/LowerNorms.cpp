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
};

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
                              int64_t axis) {
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
                      Type acc) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  emitVectorLoop(
      b, loc, zero, r.cols, width,
      [&](OpBuilder &lb, Location ll, Value j, int64_t w) {
        Value v = loadAs(lb, ll, r.x, {row, j}, w, acc);
        if (mean)
          v = lb.create<arith::SubFOp>(ll, v, splat(lb, ll, mean, w));
        v = lb.create<arith::MulFOp>(ll, v, splat(lb, ll, rstd, w));
        if (r.scale)
          v = lb.create<arith::MulFOp>(ll, v,
                                       loadAs(lb, ll, r.scale, j, w, acc));
        if (r.bias)
          v = lb.create<arith::AddFOp>(ll, v,
                                       loadAs(lb, ll, r.bias, j, w, acc));
        storeAs(lb, ll, v, r.y, {row, j});
      });
}

struct LowerLayerNorm : LoopLoweringPattern<LayerNormOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    int64_t axis = op.getAxisAttr().getInt();
    Type acc = getAccumulationType(op.getResult().getType().getElementType());
    int64_t w = options.vectorWidth;
    double eps = op.getEpsilon().convertToDouble();

    RowNormBuffers r =
        prepareRowNorm(b, loc, op, adaptor.getInput(), adaptor.getScale(),
                       adaptor.getBias(), axis);
    Value meanFull, mean, rstdFull, rstd;
    std::tie(meanFull, mean) =
        allocStats(b, loc, op.getMean().getType(), r.xFull, r.rows);
    std::tie(rstdFull, rstd) =
        allocStats(b, loc, op.getRstd().getType(), r.xFull, r.rows);

    Value colsF = indexToFloat(b, loc, r.cols, acc);
    emitParallelRows(
        b, loc, r.rows, [&](OpBuilder &pb, Location pl, Value row) {
          Value sum = emitBlockedSum(
              pb, pl, r.cols, w, acc,
              [&](OpBuilder &sb, Location sl, Value j, int64_t width) {
                return loadAs(sb, sl, r.x, {row, j}, width, acc);
              });
          Value m = pb.create<arith::DivFOp>(pl, sum, colsF);
          Value sq = emitBlockedSum(
              pb, pl, r.cols, w, acc,
              [&](OpBuilder &sb, Location sl, Value j, int64_t width) {
                Value d = sb.create<arith::SubFOp>(
                    sl, loadAs(sb, sl, r.x, {row, j}, width, acc),
                    splat(sb, sl, m, width));
                return sb.create<arith::MulFOp>(sl, d, d).getResult();
              });
          Value var = pb.create<arith::DivFOp>(pl, sq, colsF);
          Value s = emitRstd(pb, pl, var, eps);
          storeAs(pb, pl, m, mean, row);
          storeAs(pb, pl, s, rstd, row);
          emitNormalizeRow(pb, pl, r, row, m, s, w, acc);
        });
    rewriter.replaceOp(op,
                       {toTensor(b, loc, r.yFull), toTensor(b, loc, meanFull),
                        toTensor(b, loc, rstdFull)});
    return success();
  }
};

struct LowerRMSNorm : LoopLoweringPattern<RMSNormOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(RMSNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    int64_t axis = op.getAxisAttr().getInt();
    Type acc = getAccumulationType(op.getResult().getType().getElementType());
    int64_t w = options.vectorWidth;
    double eps = op.getEpsilon().convertToDouble();

    RowNormBuffers r = prepareRowNorm(b, loc, op, adaptor.getInput(),
                                      adaptor.getScale(), Value(), axis);
    Value rstdFull, rstd;
    std::tie(rstdFull, rstd) =
        allocStats(b, loc, op.getRstd().getType(), r.xFull, r.rows);

    Value colsF = indexToFloat(b, loc, r.cols, acc);
    emitParallelRows(
        b, loc, r.rows, [&](OpBuilder &pb, Location pl, Value row) {
          Value sq = emitBlockedSum(
              pb, pl, r.cols, w, acc,
              [&](OpBuilder &sb, Location sl, Value j, int64_t width) {
                Value v = loadAs(sb, sl, r.x, {row, j}, width, acc);
                return sb.create<arith::MulFOp>(sl, v, v).getResult();
              });
          Value s =
              emitRstd(pb, pl, pb.create<arith::DivFOp>(pl, sq, colsF), eps);
          storeAs(pb, pl, s, rstd, row);
          emitNormalizeRow(pb, pl, r, row, Value(), s, w, acc);
        });
    rewriter.replaceOp(op,
                       {toTensor(b, loc, r.yFull), toTensor(b, loc, rstdFull)});
    return success();
  }
};

} // namespace

void mlir::nf::populateLowerNormsToLoopsPatterns(
    RewritePatternSet &patterns, const LoopLoweringOptions &options) {
  patterns.add<LowerLayerNorm, LowerRMSNorm>(patterns.getContext(), options);
}
