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

#include "BF16Pairs.h"
#include "LoopUtils.h"
#include "PointwiseChain.h"
#include "normfuse/Codegen/CPU/Schedule.h"
#include "normfuse/Codegen/Common/NormMath.h"
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
  /// bf16 rows normalized as even and odd lanes (BF16Pairs.h), with the
  /// scale and bias copied in pair layout; null without them.
  bool bf16Pairs = false;
  Value scalePairs, biasPairs;
  /// With bf16Pairs: whether the scale and bias (where given) hold no NaN
  /// or infinity (i1).
  Value paramsFinite;
  /// Whether y is returned by the function (it may then be streamed).
  bool returned = false;
};

/// x[row, j..j+w), through the prologue of a fused body.
Value loadRowInput(OpBuilder &b, Location loc, const RowNormBuffers &r,
                   Value row, Value j, int64_t w, Type acc) {
  return r.prologue.apply(b, loc, loadAs(b, loc, r.x, {row, j}, w, acc),
                          {row, j}, w);
}

/// The lanes of a scalar (1) or vector value.
int64_t lanesOf(Value v) {
  auto type = dyn_cast<VectorType>(v.getType());
  return type ? type.getNumElements() : 1;
}

/// The terms of row sums at an element or vector x of a row.
using RowTerms =
    llvm::function_ref<SmallVector<Value>(OpBuilder &, Location, Value x)>;

/// The blocked sums (emitBlockedSumsF64) of the `count` terms of `terms(x)`
/// over the elements x of row `row` (through the prologue), taken in one
/// loop, as f64 totals; bf16 pair rows are read a pair of lanes at a time.
SmallVector<Value> emitRowSums(OpBuilder &b, Location loc,
                               const RowNormBuffers &r, Value row,
                               int64_t width, Type acc, unsigned count,
                               RowTerms terms) {
  if (!r.bf16Pairs)
    return emitBlockedSumsF64(
        b, loc, r.cols, width, acc, count,
        [&](OpBuilder &sb, Location sl, Value j, int64_t w) {
          return terms(sb, sl, loadRowInput(sb, sl, r, row, j, w, acc));
        });
  // The terms of two values, added term by term (a product may contract
  // into an fma).
  auto pairTerms = [&](OpBuilder &sb, Location sl, Value a, Value c) {
    SmallVector<Value> sums = terms(sb, sl, a), other = terms(sb, sl, c);
    for (unsigned i = 0; i < count; ++i)
      sums[i] = sb.create<arith::AddFOp>(sl, sums[i], other[i],
                                         arith::FastMathFlags::contract);
    return sums;
  };
  // Word k holds elements 2k and 2k + 1; an odd last element comes after.
  Value two = b.create<arith::ConstantIndexOp>(loc, 2);
  Value words = b.create<arith::DivUIOp>(loc, r.cols, two);
  SmallVector<Value> sums = emitBlockedSumsF64(
      b, loc, words, width, acc, count,
      [&](OpBuilder &sb, Location sl, Value k, int64_t w) {
        Value j = sb.create<arith::MulIOp>(sl, k, two);
        if (w > 1) {
          auto [even, odd] = loadBF16Pairs(sb, sl, r.x, {row, j}, w);
          return pairTerms(sb, sl, even, odd);
        }
        Value next = sb.create<arith::AddIOp>(
            sl, j, sb.create<arith::ConstantIndexOp>(sl, 1));
        return pairTerms(sb, sl, loadAs(sb, sl, r.x, {row, j}, 1, acc),
                         loadAs(sb, sl, r.x, {row, next}, 1, acc));
      });
  Value last = b.create<arith::MulIOp>(loc, words, two);
  auto odd = b.create<scf::ForOp>(
      loc, last, r.cols, b.create<arith::ConstantIndexOp>(loc, 1), sums,
      [&](OpBuilder &fb, Location fl, Value j, ValueRange total) {
        SmallVector<Value> t =
            terms(fb, fl, loadAs(fb, fl, r.x, {row, j}, 1, acc));
        SmallVector<Value> next;
        for (unsigned i = 0; i < count; ++i)
          next.push_back(fb.create<arith::AddFOp>(
              fl, total[i], convertFloat(fb, fl, t[i], fb.getF64Type())));
        fb.create<scf::YieldOp>(fl, next);
      });
  return odd.getResults();
}

/// The sum of term(x) over row `row` (emitRowSums), in `acc`.
Value emitRowSum(
    OpBuilder &b, Location loc, const RowNormBuffers &r, Value row,
    int64_t width, Type acc,
    llvm::function_ref<Value(OpBuilder &, Location, Value x)> term) {
  Value total = emitRowSums(b, loc, r, row, width, acc, 1,
                            [&](OpBuilder &sb, Location sl, Value x) {
                              return SmallVector<Value>{term(sb, sl, x)};
                            })[0];
  return convertFloat(b, loc, total, acc);
}

/// Whether `v` is neither a NaN nor an infinity (v - v is 0 then, and NaN
/// otherwise).
Value isFinite(OpBuilder &b, Location loc, Value v) {
  return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ,
                                 b.create<arith::SubFOp>(loc, v, v),
                                 floatConstant(b, loc, 0.0, v.getType(), 1));
}

/// The mean (in `acc`) and variance (in f64) of row `row`. One pass sums
/// d = x - K and d^2 around K, the mean of the row's first kCenterElements
/// elements: mean = K + sum(d) / n and M2 = sum(d^2) - sum(d)^2 / n (in
/// f64). They are kept when K lies within a standard deviation of the mean,
/// 2 sum(d)^2 <= n sum(d^2): the correction then cancels at most half of
/// sum(d^2), so M2 loses at most one bit to it. Otherwise a second pass
/// sums (x - mean)^2 around the mean. Never E[x^2] - E[x]^2. Where a sum in
/// `acc` is not finite (a row with a NaN or an infinity, or one whose
/// squares overflow f32, such as ±3e38), both are taken again element by
/// element in f64: finite rows then get their finite statistics, and a NaN
/// or an infinity in the row makes them NaN.
std::pair<Value, Value> emitRowMoments(OpBuilder &b, Location loc,
                                       const RowNormBuffers &r, Value row,
                                       int64_t width, Type acc) {
  Type f64 = b.getF64Type();
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value first = b.create<arith::MinUIOp>(
      loc, r.cols, b.create<arith::ConstantIndexOp>(loc, kCenterElements));
  auto firstSum = b.create<scf::ForOp>(
      loc, zero, first, one, ValueRange{floatConstant(b, loc, 0.0, acc, 1)},
      [&](OpBuilder &fb, Location fl, Value j, ValueRange sum) {
        Value x = loadRowInput(fb, fl, r, row, j, 1, acc);
        fb.create<scf::YieldOp>(
            fl, ValueRange{fb.create<arith::AddFOp>(fl, sum[0], x)});
      });
  Value center = b.create<arith::DivFOp>(loc, firstSum.getResult(0),
                                         indexToFloat(b, loc, first, acc));
  SmallVector<Value> sums = emitRowSums(
      b, loc, r, row, width, acc, 2, [&](OpBuilder &sb, Location sl, Value x) {
        Value d =
            sb.create<arith::SubFOp>(sl, x, splat(sb, sl, center, lanesOf(x)));
        return SmallVector<Value>{
            d,
            sb.create<arith::MulFOp>(sl, d, d, arith::FastMathFlags::contract)};
      });
  Value sumD = sums[0], sumD2 = sums[1];
  Value n = indexToFloat(b, loc, r.cols, f64);
  Value meanD = b.create<arith::DivFOp>(loc, sumD, n);
  Value mean = convertFloat(
      b, loc,
      b.create<arith::AddFOp>(loc, convertFloat(b, loc, center, f64), meanD),
      acc);
  Value twice =
      b.create<arith::MulFOp>(loc, b.create<arith::MulFOp>(loc, sumD, sumD),
                              floatConstant(b, loc, 2.0, f64, 1));
  Value kept = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, twice,
                                       b.create<arith::MulFOp>(loc, n, sumD2));
  // The moments element by element in f64 (two passes).
  auto inF64 = [&](OpBuilder &eb, Location el) -> SmallVector<Value> {
    Value sum = emitRowSums(eb, el, r, row, 1, f64, 1,
                            [](OpBuilder &, Location, Value x) {
                              return SmallVector<Value>{x};
                            })[0];
    Value mean64 = eb.create<arith::DivFOp>(el, sum, n);
    Value sq = emitRowSums(
        eb, el, r, row, 1, f64, 1, [&](OpBuilder &sb, Location sl, Value x) {
          Value d = sb.create<arith::SubFOp>(sl, x, mean64);
          return SmallVector<Value>{sb.create<arith::MulFOp>(sl, d, d)};
        })[0];
    return {convertFloat(eb, el, mean64, acc),
            eb.create<arith::DivFOp>(el, sq, n)};
  };
  Value finite = b.create<arith::AndIOp>(loc, isFinite(b, loc, sumD),
                                         isFinite(b, loc, sumD2));
  auto moments = b.create<scf::IfOp>(
      loc, b.create<arith::AndIOp>(loc, finite, kept),
      [&](OpBuilder &tb, Location tl) {
        Value m2 = tb.create<arith::SubFOp>(
            tl, sumD2, tb.create<arith::MulFOp>(tl, sumD, meanD));
        tb.create<scf::YieldOp>(
            tl, ValueRange{mean, tb.create<arith::DivFOp>(tl, m2, n)});
      },
      [&](OpBuilder &eb, Location el) {
        auto aroundMean = eb.create<scf::IfOp>(
            el, finite,
            [&](OpBuilder &fb, Location fl) {
              Value sq =
                  emitRowSum(fb, fl, r, row, width, acc,
                             [&](OpBuilder &sb, Location sl, Value x) -> Value {
                               Value d = sb.create<arith::SubFOp>(
                                   sl, x, splat(sb, sl, mean, lanesOf(x)));
                               return sb.create<arith::MulFOp>(sl, d, d);
                             });
              Value var = fb.create<arith::DivFOp>(
                  fl, convertFloat(fb, fl, sq, f64), n);
              // Squares that overflow `acc` take the f64 route.
              auto checked = fb.create<scf::IfOp>(
                  fl, isFinite(fb, fl, var),
                  [&](OpBuilder &ob, Location ol) {
                    ob.create<scf::YieldOp>(ol, ValueRange{mean, var});
                  },
                  [&](OpBuilder &ob, Location ol) {
                    ob.create<scf::YieldOp>(ol, inF64(ob, ol));
                  });
              fb.create<scf::YieldOp>(fl, checked.getResults());
            },
            [&](OpBuilder &fb, Location fl) {
              fb.create<scf::YieldOp>(fl, inF64(fb, fl));
            });
        eb.create<scf::YieldOp>(el, aroundMean.getResults());
      });
  return {moments.getResult(0), moments.getResult(1)};
}

/// Whether every element of the (n) buffer `param` is finite: the sum of
/// v - v over them is 0 then, and NaN otherwise.
Value allFinite(OpBuilder &b, Location loc, Value param, Value n) {
  Type f32 = b.getF32Type();
  auto sum = b.create<scf::ForOp>(
      loc, b.create<arith::ConstantIndexOp>(loc, 0), n,
      b.create<arith::ConstantIndexOp>(loc, 1),
      ValueRange{floatConstant(b, loc, 0.0, f32, 1)},
      [&](OpBuilder &fb, Location fl, Value j, ValueRange acc) {
        Value v = loadAs(fb, fl, param, j, 1, f32);
        fb.create<scf::YieldOp>(
            fl, ValueRange{fb.create<arith::AddFOp>(
                    fl, acc[0], fb.create<arith::SubFOp>(fl, v, v))});
      });
  return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ,
                                 sum.getResult(0),
                                 floatConstant(b, loc, 0.0, f32, 1));
}

template <typename NormOp>
RowNormBuffers prepareRowNorm(OpBuilder &b, Location loc, NormOp op,
                              Value input, Value scale, Value bias,
                              int64_t axis, int64_t width,
                              const NormFusion &fusion) {
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
  r.returned = fusion.returned || isFunctionResult(op.getResult());
  // bf16 in and out, nothing fused (a fused body's operands would need the
  // pair layout too): rows by even and odd lanes.
  r.bf16Pairs = width > 1 && type.getElementType().isBF16() &&
                getElementTypeOrSelf(input.getType()).isBF16() &&
                r.prologue.empty() && r.epilogue.empty();
  if (r.bf16Pairs) {
    r.paramsFinite = b.create<arith::ConstantIntOp>(loc, 1, 1);
    for (auto [param, copy] : {std::make_pair(r.scale, &r.scalePairs),
                               std::make_pair(r.bias, &r.biasPairs)}) {
      if (!param)
        continue;
      *copy = copyInPairLayout(b, loc, param, r.cols, width);
      r.paramsFinite = b.create<arith::AndIOp>(
          loc, r.paramsFinite, allFinite(b, loc, param, r.cols));
    }
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

/// The next row of x fetched into cache while this one is normalized (one
/// prefetch per 2 * width elements, the last row fetching itself): the
/// moments pass of the next row then reads from cache, and this row's
/// arithmetic overlaps the reads from memory. LayerNorm + GELU on
/// 32768x1024 f32 went from 0.56-0.60 to 0.75-0.80 of copy, LayerNorm
/// alone from 10.8-12.1 to 8.7-9.1 ms.
struct NextRowPrefetch {
  NextRowPrefetch(OpBuilder &b, Location loc, const RowNormBuffers &r,
                  Value row)
      : x(r.x) {
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    next = b.create<arith::MinUIOp>(loc, b.create<arith::AddIOp>(loc, row, one),
                                    b.create<arith::SubIOp>(loc, r.rows, one));
  }
  /// The prefetch of column `j` of the next row.
  void at(OpBuilder &b, Location loc, Value j) const {
    b.create<memref::PrefetchOp>(loc, x, ValueRange{next, j},
                                 /*isWrite=*/false, /*localityHint=*/3,
                                 /*isDataCache=*/true);
  }
  Value x, next;
};

/// The normalize step of `w` lanes `v` of a row, with the lanes of the
/// scale and bias buffers (null when absent) at column `at`.
using NormalizeLanesFn =
    llvm::function_ref<Value(OpBuilder &, Location, Value v, Value scale,
                             Value bias, Value at, int64_t w)>;

/// A bf16 pair row (BF16Pairs.h): 2 * width elements at a time as even and
/// odd lanes, the scale and bias from their pair-layout copies, the
/// elements after the last whole block one at a time.
///
/// The rounding to bf16 leaves out its NaN case where no result can be a
/// NaN: when the parameters, meanSquare and rstd are finite. Then every
/// x - mean is finite (its square sums to a finite value), and so is
/// (x - mean) * rstd (at most sqrt(n) in magnitude); scaling and shifting
/// by finite values can overflow to an infinity, which rounds as it
/// should, but not make a NaN.
void emitNormalizeBF16PairRow(OpBuilder &b, Location loc,
                              const RowNormBuffers &r, Value row,
                              Value meanSquare, Value rstd, int64_t width,
                              Type acc, const NextRowPrefetch &prefetch,
                              NormalizeLanesFn normalize, bool streaming) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  auto rowLoop = [&](OpBuilder &rb, Location rl, bool noNaN) {
    emitVectorLoop(
        rb, rl, zero, r.cols, 2 * width,
        [&](OpBuilder &lb, Location ll, Value j, int64_t w) {
          if (w == 1) {
            Value v = loadAs(lb, ll, r.x, {row, j}, 1, acc);
            storeAs(lb, ll, normalize(lb, ll, v, r.scale, r.bias, j, 1), r.y,
                    {row, j});
            return;
          }
          prefetch.at(lb, ll, j);
          auto [even, odd] = loadBF16Pairs(lb, ll, r.x, {row, j}, width);
          Value oddAt = lb.create<arith::AddIOp>(
              ll, j, lb.create<arith::ConstantIndexOp>(ll, width));
          storeBF16Pairs(
              lb, ll,
              normalize(lb, ll, even, r.scalePairs, r.biasPairs, j, width),
              normalize(lb, ll, odd, r.scalePairs, r.biasPairs, oddAt, width),
              r.y, {row, j}, streaming, noNaN);
        });
  };
  Value finite = b.create<arith::AndIOp>(
      loc, r.paramsFinite,
      b.create<arith::AndIOp>(loc, isFinite(b, loc, meanSquare),
                              isFinite(b, loc, rstd)));
  b.create<scf::IfOp>(
      loc, finite,
      [&](OpBuilder &tb, Location tl) {
        rowLoop(tb, tl, /*noNaN=*/true);
        tb.create<scf::YieldOp>(tl);
      },
      [&](OpBuilder &eb, Location el) {
        rowLoop(eb, el, /*noNaN=*/false);
        eb.create<scf::YieldOp>(el);
      });
}

/// Writes y[r, :] = ((x[r, :] - mean) * rstd) * scale + bias, where `mean`
/// may be null (RMSNorm) and `meanSquare` is the mean of (x - mean)^2: the
/// shared normalize step (NormMath.h) in the CPU's form (scale and bias as
/// one fma; bf16 pair rows also center by one fma), over the row in wide
/// vectors through a fused body's prologue and epilogue, or in bf16 pairs.
void emitNormalizeRow(OpBuilder &b, Location loc, const RowNormBuffers &r,
                      Value row, Value mean, Value meanSquare, Value rstd,
                      int64_t width, Type acc,
                      const StreamingStores &streaming) {
  const NormalizeForm form = NormalizeForm::FusedScaleBias;
  Value shift =
      mean && r.bf16Pairs ? emitNormalizeShift(b, loc, mean, rstd) : Value();
  auto normalize = [&](OpBuilder &lb, Location ll, Value v, Value scale,
                       Value bias, Value at, int64_t w) -> Value {
    Value y;
    if (shift) {
      Value rs = splat(lb, ll, rstd, w);
      y = emitShiftedNormalize(lb, ll, v, rs, splat(lb, ll, shift, w), Value(),
                               Value(), form);
    } else {
      Value m = mean ? splat(lb, ll, mean, w) : Value();
      y = emitNormalize(lb, ll, v, m, splat(lb, ll, rstd, w), Value(), Value(),
                        form);
    }
    // The lanes of the scale and bias next to their fma.
    Value s = scale ? loadAs(lb, ll, scale, at, w, acc) : Value();
    Value t = bias ? loadAs(lb, ll, bias, at, w, acc) : Value();
    return emitScaleAndBias(lb, ll, y, s, t, form);
  };
  NextRowPrefetch prefetch(b, loc, r, row);
  if (r.bf16Pairs) {
    emitNormalizeBF16PairRow(b, loc, r, row, meanSquare, rstd, width, acc,
                             prefetch, normalize, streaming.enabled);
    return;
  }
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  emitWideVectorLoop(b, loc, zero, r.cols, 2 * width, width,
                     [&](OpBuilder &lb, Location ll, Value j, int64_t w) {
                       if (w > width)
                         prefetch.at(lb, ll, j);
                       Value v = normalize(
                           lb, ll, loadRowInput(lb, ll, r, row, j, w, acc),
                           r.scale, r.bias, j, w);
                       storeAs(lb, ll, r.epilogue.apply(lb, ll, v, {row, j}, w),
                               r.y, {row, j}, streaming.enabled);
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
      b, loc, {r.y}, r.cols, width, r.returned,
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
        prepareRowNorm(b, loc, op, input, scale, bias, axis, w, fusion);
    Value meanFull, mean, rstdFull, rstd;
    std::tie(meanFull, mean) =
        allocStats(b, loc, op.getMean().getType(), r.xFull, r.rows);
    std::tie(rstdFull, rstd) =
        allocStats(b, loc, op.getRstd().getType(), r.xFull, r.rows);

    emitNormRows(
        b, loc, r, w,
        [&](OpBuilder &pb, Location pl, Value row,
            const StreamingStores &streaming) {
          auto [m, var64] = emitRowMoments(pb, pl, r, row, w, acc);
          // rstd in f64: the variance of a finite f32 row may
          // exceed f32 (rows of ±3e38) while its rstd does not.
          Value s = convertFloat(pb, pl, emitRstd(pb, pl, var64, eps), acc);
          Value var = convertFloat(pb, pl, var64, acc);
          storeAs(pb, pl, m, mean, row);
          storeAs(pb, pl, s, rstd, row);
          emitNormalizeRow(pb, pl, r, row, m, var, s, w, acc, streaming);
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
        prepareRowNorm(b, loc, op, input, scale, Value(), axis, w, fusion);
    Value rstdFull, rstd;
    std::tie(rstdFull, rstd) =
        allocStats(b, loc, op.getRstd().getType(), r.xFull, r.rows);

    Value colsF = indexToFloat(b, loc, r.cols, acc);
    emitNormRows(b, loc, r, w,
                 [&](OpBuilder &pb, Location pl, Value row,
                     const StreamingStores &streaming) {
                   Value sq = emitRowSum(
                       pb, pl, r, row, w, acc,
                       [](OpBuilder &sb, Location sl, Value x) -> Value {
                         return sb.create<arith::MulFOp>(sl, x, x);
                       });
                   Value meanSquare = pb.create<arith::DivFOp>(pl, sq, colsF);
                   Value s = emitRstd(pb, pl, meanSquare, eps);
                   storeAs(pb, pl, s, rstd, row);
                   emitNormalizeRow(pb, pl, r, row, Value(), meanSquare, s, w,
                                    acc, streaming);
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
