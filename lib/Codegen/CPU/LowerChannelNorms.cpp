//===- LowerChannelNorms.cpp - group/instance/batch norm to loops -*- C++ -*-=//
//
// Part of normfuse. The norms with per-channel statistics, forward and
// backward, and bias_add_grad, on the channel loops of ChannelLoops.h.
//
// Forward: the mean and M2 of each (image, channel) by the corrected
// two-pass algorithm on rows or chunks that are in cache (so the tensor is
// read once for them, and never as E[x^2] - E[x]^2), the group's in f64 by
// Chan's combination, then y = (x - mean) * (rstd * scale) + bias.
// GroupNorm and InstanceNorm work on ranges of images that fit in cache, so
// the normalizing pass rereads from cache: with at least kParallelImagesMin
// images, each thread takes whole images (channels-first: one per iteration
// of a parallel loop; channels-last: a slice of consecutive images,
// pipelined so that the next image's moments follow the normalizing pass
// chunk by chunk); with fewer, ranges one after the other, each pass
// parallel.
// BatchNorm's statistics span every image.
//
// Backward, with xhat = (x - mean) * rstd and n values per group:
//   dx = rstd * (scale * dy - sum(scale * dy) / n
//                - xhat * sum(scale * dy * xhat) / n)
//   dscale = sum over images and positions of dy * xhat, dbias of dy.
//
//===----------------------------------------------------------------------===//

#include "ChannelLoops.h"
#include "LoopUtils.h"
#include "PointwiseChain.h"
#include "normfuse/Codegen/CPU/Schedule.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;

namespace {

Value f64Const(OpBuilder &b, Location loc, double v) {
  return floatConstant(b, loc, v, b.getF64Type(), 1);
}

Value indexToF64(OpBuilder &b, Location loc, Value index) {
  return indexToFloat(b, loc, index, b.getF64Type());
}

/// A per-channel parameter (C) as an f64 value at `c`, or `dflt` without one.
Value loadParam(OpBuilder &b, Location loc, Value param, Value c, double dflt) {
  if (!param)
    return f64Const(b, loc, dflt);
  return loadAs(b, loc, param, c, 1, b.getF64Type());
}

/// Which values share a statistic: `groupSize` consecutive channels of one
/// image, or of every image (`acrossImages`, BatchNorm).
struct Grouping {
  Value groupSize; // index
  Value groups;    // C / groupSize
  bool acrossImages = false;
};

/// One statistic: its owner image (0 across images), its group, and the
/// images and channels it covers.
struct StatRange {
  Value owner, group, mLo, mHi, cLo, cHi;
};

/// Runs `body` for every statistic over images [lo, hi).
void emitGroups(
    OpBuilder &b, Location loc, const Grouping &grouping, Value lo, Value hi,
    llvm::function_ref<void(OpBuilder &, Location, const StatRange &)> body) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value ownersLo = grouping.acrossImages ? zero : lo;
  Value ownersHi = grouping.acrossImages ? one : hi;
  emitForEach(b, loc, ownersLo, ownersHi, zero, grouping.groups,
              [&](OpBuilder &gb, Location gl, Value owner, Value g) {
                StatRange r;
                r.owner = owner;
                r.group = g;
                r.mLo = grouping.acrossImages ? lo : owner;
                r.mHi = grouping.acrossImages
                            ? hi
                            : gb.create<arith::AddIOp>(gl, owner, one);
                r.cLo = gb.create<arith::MulIOp>(gl, g, grouping.groupSize);
                r.cHi = gb.create<arith::AddIOp>(gl, r.cLo, grouping.groupSize);
                body(gb, gl, r);
              });
}

/// The number of values a statistic covers, as f64.
Value countOf(OpBuilder &b, Location loc, const StatRange &r, Value spatial) {
  Value images = b.create<arith::SubIOp>(loc, r.mHi, r.mLo);
  Value channels = b.create<arith::SubIOp>(loc, r.cHi, r.cLo);
  return indexToF64(
      b, loc,
      b.create<arith::MulIOp>(
          loc, b.create<arith::MulIOp>(loc, images, channels), spatial));
}

Value loadF64(OpBuilder &b, Location loc, Value buffer, ValueRange indices) {
  return loadAs(b, loc, buffer, indices, 1, b.getF64Type());
}

/// The forward statistics of one group, in f64, for the op to store.
struct GroupStats {
  Value mean, variance, rstd, count;
};
using StoreStats = llvm::function_ref<void(
    OpBuilder &, Location, const StatRange &, const GroupStats &)>;

/// The operands of a forward channel norm (buffers in their own shapes).
struct ChannelNormForward {
  ChannelShape shape;
  Value x, y, scale, bias;
  Grouping grouping;
  double epsilon;
  Type acc;
  int64_t width;
  NormFusion fusion;     // an nf.fused body's prologue and epilogue
  bool returned = false; // whether y is returned by the function
};

void emitChannelNormForward(OpBuilder &b, Location loc,
                            const ChannelNormForward &f, StoreStats store) {
  const ChannelShape &shape = f.shape;
  Type f64 = b.getF64Type();
  Value spatialF = indexToF64(b, loc, shape.spatial);
  Value mean = allocChannelScratch(b, loc, shape, f.acc);
  Value factor = allocChannelScratch(b, loc, shape, f.acc);
  Value shift = allocChannelScratch(b, loc, shape, f.acc);
  Value channelMean = allocChannelScratch(b, loc, shape, f64);
  Value channelM2 = allocChannelScratch(b, loc, shape, f64);
  ChannelLoop loop{shape, {shape.view(b, loc, f.x)}, {}, f.acc, f.width};
  loop.outputsReturned = f.returned || f.fusion.returned;
  Value y = shape.view(b, loc, f.y);
  PointwiseChain prologue, epilogue;
  for (auto [chain, from, to] :
       {std::make_tuple(&prologue, f.fusion.prologue, &loop.prologue),
        std::make_tuple(&epilogue, f.fusion.epilogue, &loop.epilogue)}) {
    if (!from)
      continue;
    *chain = *from;
    chain->bind(b, loc, shape.viewSizes(), shape.channelDim());
    *to = chain;
  }

  // The coefficients of images [lo, hi) from their channels' moments.
  auto coefsOf = [&](OpBuilder &rb, Location rl, Value lo, Value hi) {
    // A group's moments from its channels' (each of S values):
    // mean = the channels' average, M2 = sum(M2_c) +
    // S * sum((mean_c - mean)^2).
    emitGroups(
        rb, rl, f.grouping, lo, hi,
        [&](OpBuilder &gb, Location gl, const StatRange &r) {
          GroupStats s;
          s.count = countOf(gb, gl, r, shape.spatial);
          Value channels = gb.create<arith::DivFOp>(gl, s.count, spatialF);
          auto sumOf = [&](auto term) {
            return emitSumOver(gb, gl, r.mLo, r.mHi, r.cLo, r.cHi, term);
          };
          s.mean = gb.create<arith::DivFOp>(
              gl, sumOf([&](OpBuilder &tb, Location tl, Value m, Value c) {
                return loadF64(tb, tl, channelMean, {m, c});
              }),
              channels);
          Value within =
              sumOf([&](OpBuilder &tb, Location tl, Value m, Value c) {
                return loadF64(tb, tl, channelM2, {m, c});
              });
          Value between =
              sumOf([&](OpBuilder &tb, Location tl, Value m, Value c) {
                Value d = tb.create<arith::SubFOp>(
                    tl, loadF64(tb, tl, channelMean, {m, c}), s.mean);
                return tb.create<arith::MulFOp>(tl, d, d).getResult();
              });
          Value m2 = gb.create<arith::AddFOp>(
              gl, within, gb.create<arith::MulFOp>(gl, between, spatialF));
          s.variance = gb.create<arith::DivFOp>(gl, m2, s.count);
          s.rstd = gb.create<arith::DivFOp>(
              gl, f64Const(gb, gl, 1.0),
              gb.create<math::SqrtOp>(
                  gl, gb.create<arith::AddFOp>(gl, s.variance,
                                               f64Const(gb, gl, f.epsilon))));
          store(gb, gl, r, s);
          emitForEach(gb, gl, r.mLo, r.mHi, r.cLo, r.cHi,
                      [&](OpBuilder &eb, Location el, Value m, Value c) {
                        Value a = eb.create<arith::MulFOp>(
                            el, s.rstd, loadParam(eb, el, f.scale, c, 1.0));
                        storeAs(eb, el, s.mean, mean, {m, c});
                        storeAs(eb, el, a, factor, {m, c});
                        storeAs(eb, el, loadParam(eb, el, f.bias, c, 0.0),
                                shift, {m, c});
                      });
        });
  };
  loop.coefs = {mean, factor, shift};
  auto normalize = [](OpBuilder &mb, Location ml, ValueRange in,
                      ValueRange coef, int64_t) -> SmallVector<Value> {
    Value d = mb.create<arith::SubFOp>(ml, in[0], coef[0]);
    return {mb.create<math::FmaOp>(ml, d, coef[1], coef[2])};
  };
  auto range = [&](OpBuilder &rb, Location rl, Value lo, Value hi) {
    emitChannelMoments(rb, rl, loop, lo, hi, channelMean, channelM2);
    coefsOf(rb, rl, lo, hi);
    emitChannelMap(rb, rl, loop, lo, hi, {y}, normalize);
  };
  // With enough images, each thread takes whole images: no fork and join
  // per pass, and (channels-last) one image is read while the one before
  // is written.
  std::optional<int64_t> images = getConstantIntValue(shape.images);
  if (!f.grouping.acrossImages && wholeImagesPerThread(images)) {
    if (shape.channelsLast) {
      emitPipelinedImages(
          b, loc, loop, channelMean, channelM2,
          [&](OpBuilder &cb, Location cl, Value m) {
            coefsOf(cb, cl, m,
                    cb.create<arith::AddIOp>(
                        cl, m, cb.create<arith::ConstantIndexOp>(cl, 1)));
          },
          {y}, normalize);
      return;
    }
    loop.sequential = true;
    emitParallelImages(b, loc, shape, range);
  } else {
    emitImageRanges(b, loc, shape, f.grouping.acrossImages, range);
  }
}

/// outputs[k][c] = the f64 sum over images of sums[k][m, c].
void emitImageTotals(OpBuilder &b, Location loc, const ChannelShape &shape,
                     ArrayRef<Value> sums, ArrayRef<Value> outputs) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto body = [&](OpBuilder &cb, Location cl, Value c, ValueRange) {
    Value next = cb.create<arith::AddIOp>(cl, c, one);
    for (auto [sum, output] : llvm::zip(sums, outputs)) {
      Value buffer = sum;
      auto term = [&](OpBuilder &tb, Location tl, Value m, Value cc) {
        return loadF64(tb, tl, buffer, {m, cc});
      };
      Value total = emitSumOver(cb, cl, zero, shape.images, c, next, term);
      storeAs(cb, cl, total, output, c);
    }
    cb.create<scf::YieldOp>(cl);
  };
  b.create<scf::ForOp>(loc, zero, shape.channels, one, std::nullopt, body);
}

/// The operands of a backward channel norm.
struct ChannelNormBackward {
  ChannelShape shape;
  Value dy, x, dx, scale;
  Value dscale, dbias; // (C) buffers
  Grouping grouping;
  Type acc;
  int64_t width;
  bool returned = false; // whether dx is returned by the function
};

/// Loads the saved mean and rstd of (m, c), as f64.
using LoadStats = llvm::function_ref<std::pair<Value, Value>(
    OpBuilder &, Location, Value m, Value c)>;

void emitChannelNormBackward(OpBuilder &b, Location loc,
                             const ChannelNormBackward &g, LoadStats stats) {
  const ChannelShape &shape = g.shape;
  Type f64 = b.getF64Type();
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value mean = allocChannelScratch(b, loc, shape, g.acc);
  Value rstd = allocChannelScratch(b, loc, shape, g.acc);
  Value p = allocChannelScratch(b, loc, shape, g.acc);
  Value q = allocChannelScratch(b, loc, shape, g.acc);
  Value r = allocChannelScratch(b, loc, shape, g.acc);
  Value sumDy = allocChannelScratch(b, loc, shape, f64);
  Value sumDyXhat = allocChannelScratch(b, loc, shape, f64);
  ChannelLoop loop{shape,
                   {shape.view(b, loc, g.dy), shape.view(b, loc, g.x)},
                   {},
                   g.acc,
                   g.width};
  loop.outputsReturned = g.returned;
  Value dx = shape.view(b, loc, g.dx);

  emitImageRanges(
      b, loc, shape, g.grouping.acrossImages,
      [&](OpBuilder &rb, Location rl, Value lo, Value hi) {
        emitForEach(rb, rl, lo, hi, zero, shape.channels,
                    [&](OpBuilder &eb, Location el, Value m, Value c) {
                      auto [mu, rs] = stats(eb, el, m, c);
                      storeAs(eb, el, mu, mean, {m, c});
                      storeAs(eb, el, rs, rstd, {m, c});
                    });
        loop.coefs = {mean, rstd};
        emitChannelSums(
            rb, rl, loop, lo, hi, {sumDy, sumDyXhat},
            [](OpBuilder &sb, Location sl, ValueRange in, ValueRange coef,
               int64_t) -> SmallVector<Value> {
              Value xhat = sb.create<arith::MulFOp>(
                  sl, sb.create<arith::SubFOp>(sl, in[1], coef[0]), coef[1]);
              return {in[0], sb.create<arith::MulFOp>(sl, in[0], xhat)};
            });
        emitGroups(
            rb, rl, g.grouping, lo, hi,
            [&](OpBuilder &gb, Location gl, const StatRange &sr) {
              auto scaled = [&](Value sums) {
                return emitSumOver(
                    gb, gl, sr.mLo, sr.mHi, sr.cLo, sr.cHi,
                    [&](OpBuilder &tb, Location tl, Value m, Value c) {
                      return tb
                          .create<arith::MulFOp>(
                              tl, loadParam(tb, tl, g.scale, c, 1.0),
                              loadF64(tb, tl, sums, {m, c}))
                          .getResult();
                    });
              };
              Value n = countOf(gb, gl, sr, shape.spatial);
              Value meanDy = gb.create<arith::DivFOp>(gl, scaled(sumDy), n);
              Value meanDyXhat =
                  gb.create<arith::DivFOp>(gl, scaled(sumDyXhat), n);
              emitForEach(gb, gl, sr.mLo, sr.mHi, sr.cLo, sr.cHi,
                          [&](OpBuilder &eb, Location el, Value m, Value c) {
                            Value rs = loadF64(eb, el, rstd, {m, c});
                            Value pv = eb.create<arith::MulFOp>(
                                el, rs, loadParam(eb, el, g.scale, c, 1.0));
                            Value qv = eb.create<arith::MulFOp>(el, rs, meanDy);
                            Value rv = eb.create<arith::MulFOp>(
                                el, eb.create<arith::MulFOp>(el, rs, rs),
                                meanDyXhat);
                            storeAs(eb, el, pv, p, {m, c});
                            storeAs(eb, el, qv, q, {m, c});
                            storeAs(eb, el, rv, r, {m, c});
                          });
            });
        loop.coefs = {mean, p, q, r};
        emitChannelMap(rb, rl, loop, lo, hi, {dx},
                       [](OpBuilder &mb, Location ml, ValueRange in,
                          ValueRange coef, int64_t) -> SmallVector<Value> {
                         // dx = p * dy - q - (x - mean) * r
                         Value v = mb.create<arith::SubFOp>(
                             ml, mb.create<arith::MulFOp>(ml, coef[1], in[0]),
                             coef[2]);
                         Value d = mb.create<arith::SubFOp>(ml, in[1], coef[0]);
                         return {mb.create<arith::SubFOp>(
                             ml, v, mb.create<arith::MulFOp>(ml, d, coef[3]))};
                       });
      });

  // Parameter gradients: the per-(image, channel) sums added over images.
  emitImageTotals(b, loc, shape, {sumDyXhat, sumDy}, {g.dscale, g.dbias});
}

Value channelsPerGroup(OpBuilder &b, Location loc, const ChannelShape &shape,
                       int64_t numGroups) {
  return b.createOrFold<arith::DivUIOp>(
      loc, shape.channels, b.create<arith::ConstantIndexOp>(loc, numGroups));
}

/// The grouping of GroupNorm (num_groups > 0), InstanceNorm (0) and
/// BatchNorm (acrossImages).
Grouping makeGrouping(OpBuilder &b, Location loc, const ChannelShape &shape,
                      int64_t numGroups, bool acrossImages) {
  Grouping g;
  g.acrossImages = acrossImages;
  if (numGroups > 0) {
    g.groups = b.create<arith::ConstantIndexOp>(loc, numGroups);
    g.groupSize = channelsPerGroup(b, loc, shape, numGroups);
  } else {
    g.groups = shape.channels;
    g.groupSize = b.create<arith::ConstantIndexOp>(loc, 1);
  }
  return g;
}

/// The buffers and attributes every forward channel norm has.
template <typename NormOp>
ChannelNormForward prepareForward(OpBuilder &b, Location loc, NormOp op,
                                  Value input, Value scale, Value bias,
                                  int64_t width) {
  ChannelNormForward f;
  RankedTensorType type = op.getResult().getType();
  f.x = getBuffer(b, loc, input);
  f.y = allocBuffer(b, loc, type, f.x);
  f.shape = getChannelShape(b, loc, f.x, op.getLayout());
  if (scale)
    f.scale = getBuffer(b, loc, scale);
  if (bias)
    f.bias = getBuffer(b, loc, bias);
  f.epsilon = op.getEpsilon().convertToDouble();
  f.acc = getAccumulationType(type.getElementType());
  f.width = width;
  return f;
}

/// GroupNorm (num_groups > 0) and InstanceNorm: statistics (N, groups).
template <typename NormOp>
struct LowerPerImageNorm : LoopLoweringPattern<NormOp> {
  using LoopLoweringPattern<NormOp>::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(NormOp op, typename NormOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, emit(rewriter, op, adaptor.getInput(),
                                adaptor.getScale(), adaptor.getBias(),
                                this->options.vectorWidth, NormFusion()));
    return success();
  }

  /// The loops, from the operands' tensors (see emitPerImageNormLoops).
  static SmallVector<Value> emit(OpBuilder &b, NormOp op, Value input,
                                 Value scale, Value bias, int64_t width,
                                 const NormFusion &fusion) {
    Location loc = op.getLoc();
    ChannelNormForward f =
        prepareForward(b, loc, op, input, scale, bias, width);
    f.fusion = fusion;
    f.returned = isFunctionResult(op.getResult());
    int64_t numGroups = 0;
    if constexpr (std::is_same_v<NormOp, GroupNormOp>)
      numGroups = op.getNumGroups();
    f.grouping = makeGrouping(b, loc, f.shape, numGroups, false);
    Value statSize = f.grouping.groups;
    Value mean = allocScratch(b, loc, {f.shape.images, statSize}, f.acc);
    Value rstd = allocScratch(b, loc, {f.shape.images, statSize}, f.acc);
    emitChannelNormForward(b, loc, f,
                           [&](OpBuilder &sb, Location sl, const StatRange &r,
                               const GroupStats &s) {
                             storeAs(sb, sl, s.mean, mean, {r.owner, r.group});
                             storeAs(sb, sl, s.rstd, rstd, {r.owner, r.group});
                           });
    return {toTensor(b, loc, f.y),
            toTensorOf(b, loc, mean, op.getMean().getType()),
            toTensorOf(b, loc, rstd, op.getRstd().getType())};
  }
};

struct LowerBatchNormTraining : LoopLoweringPattern<BatchNormTrainingOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(BatchNormTrainingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    ChannelNormForward f =
        prepareForward(b, loc, op, adaptor.getInput(), adaptor.getScale(),
                       adaptor.getBias(), options.vectorWidth);
    f.grouping = makeGrouping(b, loc, f.shape, 0, true);
    Value runningMean = getBuffer(b, loc, adaptor.getRunningMean());
    Value runningVar = getBuffer(b, loc, adaptor.getRunningVar());
    SmallVector<Value> stats;
    for (int i = 0; i < 4; ++i)
      stats.push_back(allocScratch(b, loc, {f.shape.channels}, f.acc));
    double momentum = op.getMomentum().convertToDouble();
    bool unbiasedRunningVar = op.getUnbiasedRunningVar();
    emitChannelNormForward(
        b, loc, f,
        [&](OpBuilder &sb, Location sl, const StatRange &r,
            const GroupStats &s) {
          Value c = r.group;
          Value keep = f64Const(sb, sl, 1.0 - momentum);
          Value take = f64Const(sb, sl, momentum);
          auto blend = [&](Value old, Value fresh) {
            return sb.create<arith::AddFOp>(
                sl, sb.create<arith::MulFOp>(sl, keep, old),
                sb.create<arith::MulFOp>(sl, take, fresh));
          };
          // The running variance takes var * n / (n - 1) (PyTorch), or var
          // itself (ONNX).
          Value fresh =
              unbiasedRunningVar
                  ? sb.create<arith::DivFOp>(
                          sl, sb.create<arith::MulFOp>(sl, s.variance, s.count),
                          sb.create<arith::SubFOp>(sl, s.count,
                                                   f64Const(sb, sl, 1.0)))
                        .getResult()
                  : s.variance;
          storeAs(sb, sl, s.mean, stats[0], c);
          storeAs(sb, sl, s.rstd, stats[1], c);
          storeAs(sb, sl, blend(loadF64(sb, sl, runningMean, c), s.mean),
                  stats[2], c);
          storeAs(sb, sl, blend(loadF64(sb, sl, runningVar, c), fresh),
                  stats[3], c);
        });
    SmallVector<Value> results{toTensor(b, loc, f.y)};
    for (auto [buffer, result] :
         llvm::zip(stats, op->getResults().drop_front()))
      results.push_back(
          toTensorOf(b, loc, buffer, cast<RankedTensorType>(result.getType())));
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct LowerBatchNormInference : LoopLoweringPattern<BatchNormInferenceOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(BatchNormInferenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    ChannelNormForward f =
        prepareForward(b, loc, op, adaptor.getInput(), adaptor.getScale(),
                       adaptor.getBias(), options.vectorWidth);
    Value runningMean = getBuffer(b, loc, adaptor.getRunningMean());
    Value runningVar = getBuffer(b, loc, adaptor.getRunningVar());
    const ChannelShape &shape = f.shape;
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value mean = allocChannelScratch(b, loc, shape, f.acc);
    Value factor = allocChannelScratch(b, loc, shape, f.acc);
    Value shift = allocChannelScratch(b, loc, shape, f.acc);
    emitForEach(
        b, loc, zero, shape.images, zero, shape.channels,
        [&](OpBuilder &eb, Location el, Value m, Value c) {
          Value var = loadF64(eb, el, runningVar, c);
          Value rstd = eb.create<arith::DivFOp>(
              el, f64Const(eb, el, 1.0),
              eb.create<math::SqrtOp>(
                  el, eb.create<arith::AddFOp>(el, var,
                                               f64Const(eb, el, f.epsilon))));
          storeAs(eb, el, loadF64(eb, el, runningMean, c), mean, {m, c});
          storeAs(eb, el,
                  eb.create<arith::MulFOp>(el, rstd,
                                           loadParam(eb, el, f.scale, c, 1.0)),
                  factor, {m, c});
          storeAs(eb, el, loadParam(eb, el, f.bias, c, 0.0), shift, {m, c});
        });
    ChannelLoop loop{shape,
                     {shape.view(b, loc, f.x)},
                     {mean, factor, shift},
                     f.acc,
                     f.width};
    loop.outputsReturned = isFunctionResult(op.getResult());
    emitChannelMap(b, loc, loop, zero, shape.images, {shape.view(b, loc, f.y)},
                   [](OpBuilder &mb, Location ml, ValueRange in,
                      ValueRange coef, int64_t) -> SmallVector<Value> {
                     Value d = mb.create<arith::SubFOp>(ml, in[0], coef[0]);
                     Value v = mb.create<arith::MulFOp>(ml, d, coef[1]);
                     return {mb.create<arith::AddFOp>(ml, v, coef[2])};
                   });
    rewriter.replaceOp(op, toTensor(b, loc, f.y));
    return success();
  }
};

/// group_norm_grad, instance_norm_grad and batch_norm_grad.
template <typename GradOp>
struct LowerChannelNormGrad : LoopLoweringPattern<GradOp> {
  using LoopLoweringPattern<GradOp>::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(GradOp op, typename GradOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    ChannelNormBackward g;
    g.x = getBuffer(b, loc, adaptor.getInput());
    g.dy = getBuffer(b, loc, adaptor.getGradOutput());
    g.dx = allocBuffer(b, loc, op.getGradInput().getType(), g.x);
    g.returned = isFunctionResult(op.getGradInput());
    if (adaptor.getScale())
      g.scale = getBuffer(b, loc, adaptor.getScale());
    g.shape = getChannelShape(b, loc, g.x, op.getLayout());
    auto paramType = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getElementType();
    };
    g.dscale =
        allocScratch(b, loc, {g.shape.channels}, paramType(op.getGradScale()));
    g.dbias =
        allocScratch(b, loc, {g.shape.channels}, paramType(op.getGradBias()));
    g.acc = getAccumulationType(op.getGradInput().getType().getElementType());
    g.width = this->options.vectorWidth;
    int64_t numGroups = 0;
    if constexpr (std::is_same_v<GradOp, GroupNormGradOp>)
      numGroups = op.getNumGroups();
    constexpr bool acrossImages = std::is_same_v<GradOp, BatchNormGradOp>;
    g.grouping = makeGrouping(b, loc, g.shape, numGroups, acrossImages);
    Value mean = getBuffer(b, loc, adaptor.getMean());
    Value rstd = getBuffer(b, loc, adaptor.getRstd());
    Value groupSize = g.grouping.groupSize;
    emitChannelNormBackward(
        b, loc, g,
        [&](OpBuilder &sb, Location sl, Value m,
            Value c) -> std::pair<Value, Value> {
          if (acrossImages)
            return {loadF64(sb, sl, mean, c), loadF64(sb, sl, rstd, c)};
          Value group = sb.create<arith::DivUIOp>(sl, c, groupSize);
          return {loadF64(sb, sl, mean, {m, group}),
                  loadF64(sb, sl, rstd, {m, group})};
        });
    rewriter.replaceOp(
        op, {toTensor(b, loc, g.dx),
             toTensorOf(b, loc, g.dscale, op.getGradScale().getType()),
             toTensorOf(b, loc, g.dbias, op.getGradBias().getType())});
    return success();
  }
};

/// bias_add_grad: the output gradient summed over all but the channel axis.
struct LowerBiasAddGrad : LoopLoweringPattern<BiasAddGradOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(BiasAddGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, emit(rewriter, op, adaptor.getGradOutput(), nullptr,
                                nullptr, options.vectorWidth));
    return success();
  }

  /// See emitBiasAddGradLoops.
  static SmallVector<Value> emit(OpBuilder &b, BiasAddGradOp op,
                                 Value gradOutput, Operation *activationGrad,
                                 Value activationInput, int64_t width) {
    Location loc = op.getLoc();
    Value dy = getBuffer(b, loc, gradOutput);
    ChannelShape shape = getChannelShape(b, loc, dy, op.getLayout());
    if (shape.channelsLast) {
      // The sum runs over every position of every image alike: one image of
      // N*S positions (the same memory) gives chunks of positions to the
      // threads, and partial sums of (chunks, C) rather than one row of C
      // per image (for a (rows, C) matmul gradient: a row per row).
      shape.spatial =
          b.createOrFold<arith::MulIOp>(loc, shape.images, shape.spatial);
      shape.images = b.create<arith::ConstantIndexOp>(loc, 1);
    }
    Type acc =
        getAccumulationType(op.getGradOutput().getType().getElementType());
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value sums = allocChannelScratch(b, loc, shape, b.getF64Type());
    ChannelLoop loop{shape, {shape.view(b, loc, dy)}, {}, acc, width};
    Value activation;
    if (activationGrad) {
      Value x = getBuffer(b, loc, activationInput);
      loop.inputs.push_back(shape.view(b, loc, x));
      activation = allocBuffer(
          b, loc,
          cast<RankedTensorType>(activationGrad->getResult(0).getType()), dy);
      loop.termOutput = shape.view(b, loc, activation);
    }
    emitChannelSums(
        b, loc, loop, zero, shape.images, {sums},
        [&](OpBuilder &fb, Location fl, ValueRange in, ValueRange,
            int64_t w) -> SmallVector<Value> {
          if (!activationGrad)
            return {in[0]};
          return {emitActivationGrad(fb, fl, activationGrad, in[0], in[1], w)};
        });
    Value grad = allocScratch(b, loc, {shape.channels},
                              op.getGradBias().getType().getElementType());
    emitImageTotals(b, loc, shape, {sums}, {grad});
    Value db = toTensorOf(b, loc, grad, op.getGradBias().getType());
    if (!activationGrad)
      return {db};
    return {toTensor(b, loc, activation), db};
  }
};

} // namespace

SmallVector<Value> cpu::emitBiasAddGradLoops(OpBuilder &b, BiasAddGradOp op,
                                             Value gradOutput,
                                             Operation *activationGrad,
                                             Value activationInput,
                                             int64_t width) {
  return LowerBiasAddGrad::emit(b, op, gradOutput, activationGrad,
                                activationInput, width);
}

SmallVector<Value> cpu::emitPerImageNormLoops(OpBuilder &b, Operation *op,
                                              Value input, Value scale,
                                              Value bias, int64_t width,
                                              const NormFusion &fusion) {
  if (auto groupNorm = dyn_cast<GroupNormOp>(op))
    return LowerPerImageNorm<GroupNormOp>::emit(b, groupNorm, input, scale,
                                                bias, width, fusion);
  return LowerPerImageNorm<InstanceNormOp>::emit(
      b, cast<InstanceNormOp>(op), input, scale, bias, width, fusion);
}

void mlir::nf::populateLowerChannelNormsToLoopsPatterns(
    RewritePatternSet &patterns, const LoopLoweringOptions &options) {
  patterns.add<LowerPerImageNorm<GroupNormOp>,
               LowerPerImageNorm<InstanceNormOp>, LowerBatchNormTraining,
               LowerBatchNormInference, LowerChannelNormGrad<GroupNormGradOp>,
               LowerChannelNormGrad<InstanceNormGradOp>,
               LowerChannelNormGrad<BatchNormGradOp>, LowerBiasAddGrad>(
      patterns.getContext(), options);
}
