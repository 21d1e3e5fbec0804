//===- LowerNormGrads.cpp - layer_norm_grad and rms_norm_grad ---*- C++ -*-===//
//
// Part of normfuse. The backward trailing-axis norms over (rows, cols)
// views. With xhat = (x - mean) * rstd (x * rstd for RMSNorm), g the scale
// and n = cols, per row:
//   dx = rstd * (g * dy - sum(g * dy) / n - xhat * sum(g * dy * xhat) / n)
// (RMSNorm has no sum(g * dy) term). The rows run in parallel in a few
// dozen chunks; each chunk adds dy * xhat and dy into its own scratch row,
// and the parameter gradients are the f64 sums of those rows.
//
//===----------------------------------------------------------------------===//

#include "LoopUtils.h"
#include "normfuse/Codegen/CPU/Schedule.h"
#include "normfuse/Codegen/Common/NormMath.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;

namespace {

/// The buffers of a trailing-axis norm gradient viewed as rows.
struct RowGrad {
  Value dy, x, dx;               // (rows, cols)
  Value mean, rstd;              // (rows); mean null for RMSNorm
  Value scale;                   // (cols) or null
  Value rows, cols;              // index
  Value dxFull;                  // dx in its own shape
  SmallVector<Value> paramSizes; // the trailing dimensions
  Type acc;
  int64_t width;
};

template <typename GradOp>
RowGrad prepareRowGrad(OpBuilder &b, Location loc, GradOp op,
                       typename GradOp::Adaptor adaptor, Value mean,
                       int64_t width) {
  RowGrad g;
  RankedTensorType type = op.getGradInput().getType();
  int64_t rank = type.getRank();
  int64_t axis = op.getAxisAttr().getInt();
  Value x = getBuffer(b, loc, adaptor.getInput());
  g.rows = getNumElements(b, loc, x, 0, axis);
  g.cols = getNumElements(b, loc, x, axis, rank);
  for (int64_t i = axis; i < rank; ++i)
    g.paramSizes.push_back(getNumElements(b, loc, x, i, i + 1));
  g.x = reshapeBuffer(b, loc, x, {g.rows, g.cols});
  g.dy = reshapeBuffer(b, loc, getBuffer(b, loc, adaptor.getGradOutput()),
                       {g.rows, g.cols});
  g.dxFull = allocBuffer(b, loc, type, x);
  g.dx = reshapeBuffer(b, loc, g.dxFull, {g.rows, g.cols});
  if (mean)
    g.mean = reshapeBuffer(b, loc, getBuffer(b, loc, mean), {g.rows});
  g.rstd =
      reshapeBuffer(b, loc, getBuffer(b, loc, adaptor.getRstd()), {g.rows});
  if (adaptor.getScale())
    g.scale =
        reshapeBuffer(b, loc, getBuffer(b, loc, adaptor.getScale()), {g.cols});
  g.acc = getAccumulationType(type.getElementType());
  g.width = width;
  return g;
}

/// The number of row chunks: min(rows, 64, 2^22 / cols), at least 1.
Value numRowChunks(OpBuilder &b, Location loc, const RowGrad &g) {
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value byScratch = b.createOrFold<arith::DivUIOp>(
      loc, b.create<arith::ConstantIndexOp>(loc, kMaxScratchElements),
      b.createOrFold<arith::MaxUIOp>(loc, g.cols, one));
  Value n = b.createOrFold<arith::MinUIOp>(
      loc, g.rows,
      b.createOrFold<arith::MinUIOp>(
          loc, byScratch,
          b.create<arith::ConstantIndexOp>(loc, kMaxRowChunks)));
  return b.createOrFold<arith::MaxUIOp>(loc, n, one);
}

/// Emits dx and the per-chunk parameter rows; returns the (chunks, cols)
/// scratch buffers of dy * xhat and (with `withBias`) dy, and the chunk
/// count.
std::tuple<Value, Value, Value> emitRowGrad(OpBuilder &b, Location loc,
                                            const RowGrad &g, bool withBias) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value chunks = numRowChunks(b, loc, g);
  Value perChunk = b.createOrFold<arith::CeilDivUIOp>(loc, g.rows, chunks);
  Value partialScale = allocScratch(b, loc, {chunks, g.cols}, g.acc);
  Value partialBias =
      withBias ? allocScratch(b, loc, {chunks, g.cols}, g.acc) : Value();
  Value colsF = indexToFloat(b, loc, g.cols, g.acc);

  emitParallelRows(b, loc, chunks, [&](OpBuilder &pb, Location pl, Value k) {
    emitVectorLoop(pb, pl, zero, g.cols, g.width,
                   [&](OpBuilder &lb, Location ll, Value j, int64_t w) {
                     Value z = floatConstant(lb, ll, 0.0, g.acc, w);
                     storeAs(lb, ll, z, partialScale, {k, j});
                     if (partialBias)
                       storeAs(lb, ll, z, partialBias, {k, j});
                   });
    Value first = pb.create<arith::MulIOp>(pl, k, perChunk);
    Value last = pb.create<arith::MinUIOp>(
        pl, pb.create<arith::AddIOp>(pl, first, perChunk), g.rows);
    pb.create<scf::ForOp>(
        pl, first, last, one, std::nullopt,
        [&](OpBuilder &rb, Location rl, Value row, ValueRange) {
          Value rstd = loadAs(rb, rl, g.rstd, row, 1, g.acc);
          Value mean = g.mean ? loadAs(rb, rl, g.mean, row, 1, g.acc) : Value();
          auto xhatAt = [&](OpBuilder &eb, Location el, Value j, int64_t w) {
            Value v = loadAs(eb, el, g.x, {row, j}, w, g.acc);
            if (mean)
              v = eb.create<arith::SubFOp>(el, v, splat(eb, el, mean, w));
            return eb.create<arith::MulFOp>(el, v, splat(eb, el, rstd, w))
                .getResult();
          };
          auto scaled = [&](OpBuilder &eb, Location el, Value v, Value j,
                            int64_t w) {
            if (!g.scale)
              return v;
            return eb
                .create<arith::MulFOp>(el, v,
                                       loadAs(eb, el, g.scale, j, w, g.acc))
                .getResult();
          };
          // sum(g * dy * xhat); the same visit of each element adds
          // dy * xhat and dy to the chunk's parameter rows.
          Value sumDyXhat = emitBlockedSum(
              rb, rl, g.cols, g.width, g.acc,
              [&](OpBuilder &sb, Location sl, Value j, int64_t w) {
                Value dy = loadAs(sb, sl, g.dy, {row, j}, w, g.acc);
                Value dyXhat =
                    sb.create<arith::MulFOp>(sl, dy, xhatAt(sb, sl, j, w));
                auto accumulate = [&](Value partial, Value v) {
                  Value old = loadAs(sb, sl, partial, {k, j}, w, g.acc);
                  storeAs(sb, sl, sb.create<arith::AddFOp>(sl, old, v), partial,
                          {k, j});
                };
                accumulate(partialScale, dyXhat);
                if (partialBias)
                  accumulate(partialBias, dy);
                return scaled(sb, sl, dyXhat, j, w);
              });
          Value sumDy;
          if (withBias)
            sumDy = emitBlockedSum(
                rb, rl, g.cols, g.width, g.acc,
                [&](OpBuilder &sb, Location sl, Value j, int64_t w) {
                  return scaled(sb, sl,
                                loadAs(sb, sl, g.dy, {row, j}, w, g.acc), j, w);
                });
          Value a = rb.create<arith::DivFOp>(rl, sumDyXhat, colsF);
          Value c =
              withBias ? rb.create<arith::DivFOp>(rl, sumDy, colsF) : Value();
          emitVectorLoop(rb, rl, zero, g.cols, g.width,
                         [&](OpBuilder &lb, Location ll, Value j, int64_t w) {
                           Value dy = loadAs(lb, ll, g.dy, {row, j}, w, g.acc);
                           Value v = emitNormGradInput(
                               lb, ll, scaled(lb, ll, dy, j, w),
                               xhatAt(lb, ll, j, w), splat(lb, ll, a, w),
                               c ? splat(lb, ll, c, w) : Value(),
                               splat(lb, ll, rstd, w));
                           storeAs(lb, ll, v, g.dx, {row, j});
                         });
          rb.create<scf::YieldOp>(rl);
        });
  });
  return {partialScale, partialBias, chunks};
}

/// A parameter gradient: the f64 sum of the chunks' rows, in the result's
/// element type and shape.
Value sumChunks(OpBuilder &b, Location loc, const RowGrad &g, Value partial,
                Value chunks, RankedTensorType resultType) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value full = allocScratch(b, loc, g.paramSizes, resultType.getElementType());
  Value flat = reshapeBuffer(b, loc, full, {g.cols});
  emitParallelRows(b, loc, g.cols, [&](OpBuilder &pb, Location pl, Value j) {
    Value init = floatConstant(pb, pl, 0.0, pb.getF64Type(), 1);
    auto loop = pb.create<scf::ForOp>(
        pl, zero, chunks, one, ValueRange{init},
        [&](OpBuilder &fb, Location fl, Value k, ValueRange acc) {
          Value v = loadAs(fb, fl, partial, {k, j}, 1, fb.getF64Type());
          fb.create<scf::YieldOp>(
              fl, ValueRange{fb.create<arith::AddFOp>(fl, acc[0], v)});
        });
    storeAs(pb, pl, loop.getResult(0), flat, j);
  });
  return toTensorOf(b, loc, full, resultType);
}

struct LowerLayerNormGrad : LoopLoweringPattern<LayerNormGradOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(LayerNormGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RowGrad g = prepareRowGrad(rewriter, loc, op, adaptor, adaptor.getMean(),
                               options.vectorWidth);
    auto [partialScale, partialBias, chunks] =
        emitRowGrad(rewriter, loc, g, /*withBias=*/true);
    rewriter.replaceOp(op, {toTensor(rewriter, loc, g.dxFull),
                            sumChunks(rewriter, loc, g, partialScale, chunks,
                                      op.getGradScale().getType()),
                            sumChunks(rewriter, loc, g, partialBias, chunks,
                                      op.getGradBias().getType())});
    return success();
  }
};

struct LowerRMSNormGrad : LoopLoweringPattern<RMSNormGradOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(RMSNormGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RowGrad g = prepareRowGrad(rewriter, loc, op, adaptor, Value(),
                               options.vectorWidth);
    auto [partialScale, partialBias, chunks] =
        emitRowGrad(rewriter, loc, g, /*withBias=*/false);
    (void)partialBias;
    rewriter.replaceOp(op, {toTensor(rewriter, loc, g.dxFull),
                            sumChunks(rewriter, loc, g, partialScale, chunks,
                                      op.getGradScale().getType())});
    return success();
  }
};

} // namespace

void mlir::nf::populateLowerNormGradsToLoopsPatterns(
    RewritePatternSet &patterns, const LoopLoweringOptions &options) {
  patterns.add<LowerLayerNormGrad, LowerRMSNormGrad>(patterns.getContext(),
                                                     options);
}
