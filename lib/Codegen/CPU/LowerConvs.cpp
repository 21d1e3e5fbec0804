//===- LowerConvs.cpp - conv2d and its gradients to loops -------*- C++ -*-===//
//
// Part of normfuse. Lowers nf.conv2d and its gradients to loops, arithmetic
// in f32 (f64 for f64 data) with fused multiply-adds, f16/bf16 widened on
// load and narrowed once on the final store.
//
// - conv2d NCHW, conv2d_backprop_input (both layouts) and the NHWC
//   conv2d_backprop_filter accumulate rows along a contiguous dimension
//   (rows of W in NCHW, rows of channels in NHWC): in the result row when
//   it has the accumulation type, and otherwise in tiles of 1024 f32
//   accumulators of a heap scratch with one slot per parallel chunk of
//   rows, written back narrowed. Each filter tap adds a scaled span.
// - conv2d NHWC: one parallel iteration per (n, oh, 32 output channels).
//   Outputs whose window lies wholly in the input are computed in register
//   tiles of 3 positions by 4 channels: 12 vector sums over the window's
//   contiguous spans, each input vector loaded serving 4 channels and each
//   filter vector 3 positions, the lanes added once at the end. Outputs
//   whose window is clipped by the padding are computed one at a time, as
//   a sum of dot products over the clipped spans.
// - The NCHW conv2d_backprop_filter computes each element as a sum of dot
//   products over rows of W (stride 1).
// - conv2d_backprop_input gathers: a dx row takes the taps whose output
//   row oh = (ih + pad - kh * dilation) / stride is whole and in range, so
//   the parallel rows never write to the same element.
//
// An nf.fused conv2d (NHWC) runs its pointwise epilogue (PointwiseChain.h)
// on each sum before the store.
//
// Padding never turns into loads: every window is clipped to the input by
// index ranges, and strided spans are walked element by element (only
// stride 1 spans are vectorized).
//
//===----------------------------------------------------------------------===//

#include "PointwiseChain.h"
#include "ProducerLoops.h"
#include "normfuse/Codegen/CPU/Schedule.h"
#include "normfuse/Codegen/Common/ConvParams.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;
using namespace mlir::nf::cpu::producers;

namespace {

//===----------------------------------------------------------------------===//
// conv2d and its gradients
//===----------------------------------------------------------------------===//

/// The sizes of the result of a conv op, in its layout.
SmallVector<Value> activationSizes(const ConvParams &p, Value n, Value c,
                                   const Value hw[2]) {
  return p.act(n, c, hw[0], hw[1]);
}

/// The outputs of one row (n, oh) of an NHWC conv2d, computed either in
/// register tiles (positions whose window lies wholly in the input) or one
/// at a time (windows clipped by the padding). x3 and w3 are the input and
/// filter with (w, c) and (kw, c) merged into one dimension.
struct ConvTile {
  const ConvParams &p;
  const ConvSizes &s;
  Value x3, w3, y;
  Type acc;
  int64_t vw;
  const PointwiseChain &chain;
  Value n, oh, offH;
  IndexRange khs;

  /// Stores the sum of output (ow, o) through the epilogue; a vector sum
  /// of `width` lanes holds the outputs of channels [o, o + width).
  void store(OpBuilder &b, Location loc, Value sum, Value ow, Value o,
             int64_t width = 1) const {
    storeAs(b, loc, chain.apply(b, loc, sum, {n, oh, ow, o}, width), y,
            {n, oh, ow, o});
  }

  /// Output (ow, o) of a window clipped to the input: a sum of dot products
  /// over the window's contiguous spans.
  void emitClipped(OpBuilder &b, Location loc, Value ow, Value o) const {
    int64_t sw = p.stride[1], dh = p.dilation[0], dw = p.dilation[1];
    Value zero = idx(b, loc, 0);
    Value offW =
        subi(b, loc, muli(b, loc, ow, sw), idx(b, loc, p.padBefore[1]));
    IndexRange kws =
        stridedRange(b, loc, zero, s.in[1], dw, offW, zero, s.k[1]);
    // The dot product of input and filter over `len` elements from
    // (x3[n, ih, xAt], w3[o, kh, wAt]).
    auto spanDot = [&](OpBuilder &db, Location dl, Value ih, Value kh,
                       Value xAt, Value wAt, Value len) {
      return emitDot(
          db, dl, len, vw, acc,
          [&](OpBuilder &sb, Location sl, Value j, int64_t width) {
            Value xv =
                loadAs(sb, sl, x3, {n, ih, addi(sb, sl, xAt, j)}, width, acc);
            Value wv =
                loadAs(sb, sl, w3, {o, kh, addi(sb, sl, wAt, j)}, width, acc);
            return sb.create<arith::MulFOp>(sl, xv, wv).getResult();
          });
    };
    Value init = floatConstant(b, loc, 0.0, acc, 1);
    Value sum = emitSumFor(
        b, loc, khs.lo, khs.hi, init,
        [&](OpBuilder &hb, Location hl, Value kh, Value sumH) -> Value {
          Value ih = addi(hb, hl, muli(hb, hl, kh, dh), offH);
          if (dw == 1) {
            Value iwLo = addi(hb, hl, kws.lo, offW);
            Value len = hb.createOrFold<arith::MulIOp>(
                hl, subi(hb, hl, kws.hi, kws.lo), s.c);
            Value d = spanDot(
                hb, hl, ih, kh, hb.createOrFold<arith::MulIOp>(hl, iwLo, s.c),
                hb.createOrFold<arith::MulIOp>(hl, kws.lo, s.c), len);
            return hb.create<arith::AddFOp>(hl, sumH, d);
          }
          return emitSumFor(
              hb, hl, kws.lo, kws.hi, sumH,
              [&](OpBuilder &kb, Location kl, Value kw, Value sumW) -> Value {
                Value iw = addi(kb, kl, muli(kb, kl, kw, dw), offW);
                Value d = spanDot(
                    kb, kl, ih, kh, kb.createOrFold<arith::MulIOp>(kl, iw, s.c),
                    kb.createOrFold<arith::MulIOp>(kl, kw, s.c), s.c);
                return kb.create<arith::AddFOp>(kl, sumW, d);
              });
        });
    store(b, loc, sum, ow, o);
  }

  /// The outputs (ow0 + i, o0 + j) for i < positions, j < channels, whose
  /// windows lie wholly in the input: positions x channels accumulators of
  /// vw lanes stay in registers over the whole window, each input vector
  /// is used for `channels` outputs and each filter vector for
  /// `positions`; the lanes are added at the end, with the accumulators of
  /// the spans' scalar tails.
  void emit(OpBuilder &b, Location loc, int64_t positions, int64_t channels,
            Value ow0, Value o0) const {
    int64_t sw = p.stride[1], dh = p.dilation[0], dw = p.dilation[1];
    int64_t tiles = positions * channels;
    Value zero = idx(b, loc, 0), one = idx(b, loc, 1);
    // A window is one span of K * C elements per kh when dw is 1, else K
    // spans of C.
    Value segments = dw == 1 ? one : s.k[1];
    Value len = dw == 1 ? b.createOrFold<arith::MulIOp>(loc, s.k[1], s.c) : s.c;
    Value vecEnd = muli(b, loc, divui(b, loc, len, vw), vw);
    SmallVector<Value> ows, os;
    for (int64_t i = 0; i < positions; ++i)
      ows.push_back(addi(b, loc, ow0, idx(b, loc, i)));
    for (int64_t j = 0; j < channels; ++j)
      os.push_back(addi(b, loc, o0, idx(b, loc, j)));
    SmallVector<Value> init(tiles, floatConstant(b, loc, 0.0, acc, vw));
    init.append(tiles, floatConstant(b, loc, 0.0, acc, 1));
    // Accumulates `width` lanes at [j, j + width) of each span into
    // `accs` (the vectors' or the scalars' half).
    auto step = [&](OpBuilder &lb, Location ll, Value ih, Value kh,
                    ArrayRef<Value> xAt, Value wAt, Value j, int64_t width,
                    ValueRange accs) {
      SmallVector<Value> xs, next(accs.begin(), accs.end());
      for (Value at : xAt)
        xs.push_back(
            loadAs(lb, ll, x3, {n, ih, addi(lb, ll, at, j)}, width, acc));
      for (int64_t c = 0; c < channels; ++c) {
        Value wv =
            loadAs(lb, ll, w3, {os[c], kh, addi(lb, ll, wAt, j)}, width, acc);
        for (int64_t i = 0; i < positions; ++i)
          next[i * channels + c] =
              lb.create<math::FmaOp>(ll, xs[i], wv, accs[i * channels + c]);
      }
      return next;
    };
    auto window = b.create<scf::ForOp>(
        loc, khs.lo, khs.hi, one, init,
        [&](OpBuilder &hb, Location hl, Value kh, ValueRange accH) {
          Value ih = addi(hb, hl, muli(hb, hl, kh, dh), offH);
          auto spans = hb.create<scf::ForOp>(
              hl, zero, segments, one, accH,
              [&](OpBuilder &gb, Location gl, Value seg, ValueRange accS) {
                // First input element of each position's span, and of the
                // filter's.
                Value kwOff = muli(gb, gl, seg, dw);
                SmallVector<Value> xAt;
                for (Value at : ows)
                  xAt.push_back(gb.createOrFold<arith::MulIOp>(
                      gl,
                      addi(gb, gl,
                           subi(gb, gl, muli(gb, gl, at, sw),
                                idx(gb, gl, p.padBefore[1])),
                           kwOff),
                      s.c));
                Value wAt = gb.createOrFold<arith::MulIOp>(gl, seg, s.c);
                if (dw == 1)
                  wAt = zero;
                auto vecs = gb.create<scf::ForOp>(
                    gl, zero, vecEnd, idx(gb, gl, vw), accS.take_front(tiles),
                    [&](OpBuilder &lb, Location ll, Value j, ValueRange a) {
                      lb.create<scf::YieldOp>(
                          ll, step(lb, ll, ih, kh, xAt, wAt, j, vw, a));
                    });
                auto scalars = gb.create<scf::ForOp>(
                    gl, vecEnd, len, one, accS.drop_front(tiles),
                    [&](OpBuilder &lb, Location ll, Value j, ValueRange a) {
                      lb.create<scf::YieldOp>(
                          ll, step(lb, ll, ih, kh, xAt, wAt, j, 1, a));
                    });
                SmallVector<Value> next(vecs.getResults());
                next.append(scalars.getResults().begin(),
                            scalars.getResults().end());
                gb.create<scf::YieldOp>(gl, next);
              });
          hb.create<scf::YieldOp>(hl, spans.getResults());
        });
    // A position's channels are contiguous in y: their sums are reduced
    // together into one vector, which goes through the epilogue and is
    // stored as one (a single channel: one horizontal reduction).
    for (int64_t i = 0; i < positions; ++i) {
      ValueRange vecs = window.getResults().slice(i * channels, channels);
      ValueRange tails =
          window.getResults().slice(tiles + i * channels, channels);
      if (channels == 1 || channels > vw || !llvm::isPowerOf2_64(channels) ||
          !llvm::isPowerOf2_64(vw)) {
        for (int64_t c = 0; c < channels; ++c) {
          // Vectors of one lane are scalars.
          Value lanes = vw == 1
                            ? vecs[c]
                            : b.create<vector::ReductionOp>(
                                  loc, acc, vector::CombiningKind::ADD, vecs[c],
                                  Value(), arith::FastMathFlags::reassoc);
          store(b, loc, b.create<arith::AddFOp>(loc, lanes, tails[c]), ows[i],
                os[c]);
        }
        continue;
      }
      Value tailVec = floatConstant(b, loc, 0.0, acc, channels);
      for (auto [c, tail] : llvm::enumerate(tails))
        tailVec = b.create<vector::InsertOp>(loc, tail, tailVec, int64_t(c));
      Value sums = b.create<arith::AddFOp>(
          loc, sumLanesOfEach(b, loc, SmallVector<Value>(vecs)), tailVec);
      store(b, loc, sums, ows[i], os.front(), channels);
    }
  }
};

/// y[n, o, oh, ow] = sum_{c, kh, kw} x[n, c, ih, iw] * w[o, c, kh, kw],
/// ih = oh * stride - pad_top + kh * dilation (and the same for iw).
struct LowerConv2D : LoopLoweringPattern<Conv2DOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(Conv2DOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, emit(rewriter, op, adaptor.getInput(),
                                adaptor.getFilter(), options.vectorWidth,
                                /*epilogue=*/nullptr));
    return success();
  }

  /// The loops, from the operands' tensors; `epilogue` (may be null; NHWC
  /// only) runs on each output before it is stored. Returns the result.
  static Value emit(OpBuilder &b, Conv2DOp op, Value input, Value filter,
                    int64_t vw, const PointwiseChain *epilogue) {
    Location loc = op.getLoc();
    ConvParams p = ConvParams::get(op);
    Type acc = getAccumulationType(getElementTypeOrSelf(op.getInput()));
    Value x = getBuffer(b, loc, input);
    Value w = getBuffer(b, loc, filter);
    ConvSizes s = convForwardSizes(b, loc, p, x, w, op.getType());
    Value y =
        allocResult(b, loc, op.getType(), activationSizes(p, s.n, s.o, s.out));
    Value zero = idx(b, loc, 0);
    int64_t sh = p.stride[0], sw = p.stride[1];
    int64_t dh = p.dilation[0], dw = p.dilation[1];

    assert((!epilogue || !p.nchw) && "a conv epilogue needs NHWC");
    PointwiseChain chain;
    if (epilogue) {
      chain = *epilogue;
      chain.bind(b, loc, {s.n, s.out[0], s.out[1], s.o}, /*channelDim=*/3);
    }
    if (p.nchw) {
      // Rows (n, o, oh) of OW outputs; the filter taps (c, kh, kw) each
      // add a scaled span of an input row.
      Value rows = b.createOrFold<arith::MulIOp>(
          loc, b.createOrFold<arith::MulIOp>(loc, s.n, s.o), s.out[0]);
      emitParallelAccumulatedRows(
          b, loc, rows, y, acc,
          [&](OpBuilder &pb, Location pl, Value row, RowScratch scratch) {
            SmallVector<Value> r =
                delinearize(pb, pl, row, {s.n, s.o, s.out[0]});
            Value n = r[0], o = r[1], oh = r[2];
            Value offH =
                subi(pb, pl, muli(pb, pl, oh, sh), idx(pb, pl, p.padBefore[0]));
            IndexRange khs =
                stridedRange(pb, pl, zero, s.in[0], dh, offH, zero, s.k[0]);
            emitAccumulatedRow(
                pb, pl, y, {n, o, oh}, s.out[1], acc, vw, scratch,
                [&](OpBuilder &ab, Location al, const AccRow &accRow,
                    Value begin, Value end) {
                  emitFor(
                      ab, al, zero, s.c,
                      [&](OpBuilder &cb, Location cl, Value c) {
                        emitFor(
                            cb, cl, khs.lo, khs.hi,
                            [&](OpBuilder &hb, Location hl, Value kh) {
                              Value ih =
                                  addi(hb, hl, muli(hb, hl, kh, dh), offH);
                              emitFor(
                                  hb, hl, zero, s.k[1],
                                  [&](OpBuilder &kb, Location kl, Value kw) {
                                    Value offW =
                                        subi(kb, kl, muli(kb, kl, kw, dw),
                                             idx(kb, kl, p.padBefore[1]));
                                    IndexRange ows =
                                        stridedRange(kb, kl, zero, s.in[1], sw,
                                                     offW, begin, end);
                                    Value a = loadAs(kb, kl, w, {o, c, kh, kw},
                                                     1, acc);
                                    emitVectorLoop(
                                        kb, kl, ows.lo, ows.hi,
                                        sw == 1 ? vw : 1,
                                        [&](OpBuilder &lb, Location ll,
                                            Value ow, int64_t width) {
                                          Value iw =
                                              addi(lb, ll, muli(lb, ll, ow, sw),
                                                   offW);
                                          Value v =
                                              loadAs(lb, ll, x, {n, c, ih, iw},
                                                     width, acc);
                                          accRow.fma(lb, ll, ow, width,
                                                     splat(lb, ll, a, width),
                                                     v);
                                        });
                                  });
                            });
                      });
                });
          });
    } else {
      emitNHWC(b, loc, p, s, x, w, y, acc, vw, chain);
    }
    return toTensor(b, loc, y);
  }
  /// The NHWC conv loops: one parallel iteration per (n, oh, chunk of
  /// kConvChannelChunk output channels). Positions whose window is wholly in
  /// the input are computed in register tiles of `positions` x `channels`
  /// outputs (see emitTile); the others, where the window is clipped by
  /// the padding, one output at a time.
  static void emitNHWC(OpBuilder &b, Location loc, const ConvParams &p,
                       const ConvSizes &s, Value x, Value w, Value y, Type acc,
                       int64_t vw, const PointwiseChain &chain) {
    int64_t sh = p.stride[0], sw = p.stride[1];
    int64_t dh = p.dilation[0], dw = p.dilation[1];
    Value zero = idx(b, loc, 0);
    // (kw, c) is one contiguous span of input and filter when the dilation
    // along w is 1.
    Value x3 = reshapeBuffer(
        b, loc, x,
        {s.n, s.in[0], b.createOrFold<arith::MulIOp>(loc, s.in[1], s.c)});
    Value w3 = reshapeBuffer(
        b, loc, w,
        {s.o, s.k[0], b.createOrFold<arith::MulIOp>(loc, s.k[1], s.c)});
    Value chunks =
        divui(b, loc, addi(b, loc, s.o, idx(b, loc, kConvChannelChunk - 1)),
              kConvChannelChunk);
    Value rows = b.createOrFold<arith::MulIOp>(
        loc, b.createOrFold<arith::MulIOp>(loc, s.n, s.out[0]), chunks);
    // Positions [owLo, owHi) have their whole window in the input:
    // ow * sw - pad >= 0 and ow * sw - pad + (K - 1) * dw <= W - 1.
    Value outW = s.out[1];
    Value owLo =
        minsi(b, loc, idx(b, loc, (p.padBefore[1] + sw - 1) / sw), outW);
    Value room = subi(
        b, loc, addi(b, loc, s.in[1], idx(b, loc, p.padBefore[1] + sw - 1)),
        muli(b, loc, subi(b, loc, s.k[1], idx(b, loc, 1)), dw));
    Value owHi =
        maxsi(b, loc,
              minsi(b, loc, divui(b, loc, maxsi(b, loc, room, zero), sw), outW),
              owLo);
    emitParallelRows(b, loc, rows, [&](OpBuilder &pb, Location pl, Value row) {
      SmallVector<Value> r = delinearize(pb, pl, row, {s.n, s.out[0], chunks});
      Value n = r[0], oh = r[1];
      Value oBegin = muli(pb, pl, r[2], kConvChannelChunk);
      Value oEnd = minsi(
          pb, pl, addi(pb, pl, oBegin, idx(pb, pl, kConvChannelChunk)), s.o);
      Value offH =
          subi(pb, pl, muli(pb, pl, oh, sh), idx(pb, pl, p.padBefore[0]));
      IndexRange khs =
          stridedRange(pb, pl, zero, s.in[0], dh, offH, zero, s.k[0]);
      ConvTile tile{p, s, x3, w3, y, acc, vw, chain, n, oh, offH, khs};
      // Clipped windows: one output at a time (no loop where the range is
      // known to be empty).
      auto edge = [&](OpBuilder &eb, Location el, Value lo, Value hi) {
        std::optional<int64_t> l = getConstantIntValue(lo),
                               h = getConstantIntValue(hi);
        if (l && h && *l >= *h)
          return;
        emitFor(eb, el, lo, hi, [&](OpBuilder &fb, Location fl, Value ow) {
          emitFor(fb, fl, oBegin, oEnd,
                  [&](OpBuilder &ob, Location ol, Value o) {
                    tile.emitClipped(ob, ol, ow, o);
                  });
        });
      };
      edge(pb, pl, zero, owLo);
      edge(pb, pl, owHi, outW);
      // Whole windows: tiles of kConvTilePositions x kConvTileChannels, then
      // the leftover positions and channels in narrower tiles.
      auto tiles = [&](OpBuilder &cb, Location cl, Value o0, int64_t channels) {
        Value step = idx(cb, cl, kConvTilePositions);
        Value span = subi(cb, cl, owHi, owLo);
        Value whole = addi(cb, cl, owLo,
                           muli(cb, cl, divui(cb, cl, span, kConvTilePositions),
                                kConvTilePositions));
        cb.create<scf::ForOp>(
            cl, owLo, whole, step, std::nullopt,
            [&](OpBuilder &fb, Location fl, Value ow0, ValueRange) {
              tile.emit(fb, fl, kConvTilePositions, channels, ow0, o0);
              fb.create<scf::YieldOp>(fl);
            });
        emitFor(cb, cl, whole, owHi,
                [&](OpBuilder &fb, Location fl, Value ow0) {
                  tile.emit(fb, fl, 1, channels, ow0, o0);
                });
      };
      Value oWhole = addi(
          pb, pl, oBegin,
          muli(pb, pl,
               divui(pb, pl, subi(pb, pl, oEnd, oBegin), kConvTileChannels),
               kConvTileChannels));
      pb.create<scf::ForOp>(
          pl, oBegin, oWhole, idx(pb, pl, kConvTileChannels), std::nullopt,
          [&](OpBuilder &fb, Location fl, Value o0, ValueRange) {
            tiles(fb, fl, o0, kConvTileChannels);
            fb.create<scf::YieldOp>(fl);
          });
      emitFor(pb, pl, oWhole, oEnd, [&](OpBuilder &fb, Location fl, Value o0) {
        tiles(fb, fl, o0, 1);
      });
    });
  }
};

/// dx[n, c, ih, iw] = sum over the (oh, kh) with oh * stride - pad_top +
/// kh * dilation = ih (and the same along w) and over o of
/// dy[n, o, oh, ow] * w[o, c, kh, kw]. Each row of dx gathers its terms,
/// so rows are independent.
struct LowerConv2DBackpropInput : LoopLoweringPattern<Conv2DBackpropInputOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(Conv2DBackpropInputOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    ConvParams p = ConvParams::get(op);
    RankedTensorType type = op.getType();
    Type acc = getAccumulationType(getElementTypeOrSelf(op.getGradOutput()));
    int64_t vw = options.vectorWidth;
    Value dy = getBuffer(b, loc, adaptor.getGradOutput());
    Value w = getBuffer(b, loc, adaptor.getFilter());
    Value zero = idx(b, loc, 0);

    ConvSizes s = convBackpropInputSizes(b, loc, p, dy, w, type);
    Value dx = allocResult(b, loc, type, activationSizes(p, s.n, s.c, s.in));
    int64_t sh = p.stride[0], sw = p.stride[1];
    int64_t dh = p.dilation[0], dw = p.dilation[1];

    // The kh (of [0, KH)) whose output row oh = (i + pad - kh * dilation)
    // / stride lies in [0, OH): i + pad - kh * dilation in
    // [0, (OH - 1) * stride + 1); divisibility is checked separately.
    auto tapRange = [&](OpBuilder &rb, Location rl, Value base, int d) {
      Value reach = addi(
          rb, rl,
          muli(rb, rl, subi(rb, rl, s.out[d], idx(rb, rl, 1)), p.stride[d]),
          idx(rb, rl, 1));
      return reverseRange(rb, rl, reach, p.dilation[d], base, s.k[d]);
    };

    if (p.nchw) {
      // Rows (n, c, ih) of W elements; for each tap (kh, o, kw), a span of
      // the dy row adds into the dx row (every stride-th element).
      Value rows = b.createOrFold<arith::MulIOp>(
          loc, b.createOrFold<arith::MulIOp>(loc, s.n, s.c), s.in[0]);
      emitParallelAccumulatedRows(
          b, loc, rows, dx, acc,
          [&](OpBuilder &pb, Location pl, Value row, RowScratch scratch) {
            SmallVector<Value> r =
                delinearize(pb, pl, row, {s.n, s.c, s.in[0]});
            Value n = r[0], c = r[1], ih = r[2];
            Value baseH = addi(pb, pl, ih, idx(pb, pl, p.padBefore[0]));
            IndexRange khs = tapRange(pb, pl, baseH, 0);
            emitAccumulatedRow(
                pb, pl, dx, {n, c, ih}, s.in[1], acc, vw, scratch,
                [&](OpBuilder &ab, Location al, const AccRow &accRow,
                    Value begin, Value end) {
                  emitFor(
                      ab, al, khs.lo, khs.hi,
                      [&](OpBuilder &hb, Location hl, Value kh) {
                        Value t = subi(hb, hl, baseH, muli(hb, hl, kh, dh));
                        ifDivisible(
                            hb, hl, t, sh,
                            [&](OpBuilder &db, Location dl, Value oh) {
                              emitFor(
                                  db, dl, zero, s.o,
                                  [&](OpBuilder &ob, Location ol, Value o) {
                                    emitFor(
                                        ob, ol, zero, s.k[1],
                                        [&](OpBuilder &kb, Location kl,
                                            Value kw) {
                                          // dx[iw] += w * dy[ow] for iw = ow *
                                          // sw + offW.
                                          Value offW =
                                              subi(kb, kl, muli(kb, kl, kw, dw),
                                                   idx(kb, kl, p.padBefore[1]));
                                          IndexRange ows = stridedRange(
                                              kb, kl, begin, end, sw, offW,
                                              zero, s.out[1]);
                                          Value a =
                                              loadAs(kb, kl, w, {o, c, kh, kw},
                                                     1, acc);
                                          emitVectorLoop(
                                              kb, kl, ows.lo, ows.hi,
                                              sw == 1 ? vw : 1,
                                              [&](OpBuilder &lb, Location ll,
                                                  Value ow, int64_t width) {
                                                Value iw = addi(
                                                    lb, ll,
                                                    muli(lb, ll, ow, sw), offW);
                                                Value v = loadAs(lb, ll, dy,
                                                                 {n, o, oh, ow},
                                                                 width, acc);
                                                accRow.fma(
                                                    lb, ll, iw, width,
                                                    splat(lb, ll, a, width), v);
                                              });
                                        });
                                  });
                            });
                      });
                });
          });
    } else {
      // Rows (n, ih, iw) of C elements; each tap (kh, kw) and output
      // channel o adds dy[n, oh, ow, o] times a filter row of channels.
      Value rows = b.createOrFold<arith::MulIOp>(
          loc, b.createOrFold<arith::MulIOp>(loc, s.n, s.in[0]), s.in[1]);
      emitParallelAccumulatedRows(
          b, loc, rows, dx, acc,
          [&](OpBuilder &pb, Location pl, Value row, RowScratch scratch) {
            SmallVector<Value> r =
                delinearize(pb, pl, row, {s.n, s.in[0], s.in[1]});
            Value n = r[0], ih = r[1], iw = r[2];
            Value baseH = addi(pb, pl, ih, idx(pb, pl, p.padBefore[0]));
            Value baseW = addi(pb, pl, iw, idx(pb, pl, p.padBefore[1]));
            IndexRange khs = tapRange(pb, pl, baseH, 0);
            IndexRange kws = tapRange(pb, pl, baseW, 1);
            emitAccumulatedRow(
                pb, pl, dx, {n, ih, iw}, s.c, acc, vw, scratch,
                [&](OpBuilder &ab, Location al, const AccRow &accRow,
                    Value begin, Value end) {
                  emitFor(
                      ab, al, khs.lo, khs.hi,
                      [&](OpBuilder &hb, Location hl, Value kh) {
                        Value t = subi(hb, hl, baseH, muli(hb, hl, kh, dh));
                        ifDivisible(
                            hb, hl, t, sh,
                            [&](OpBuilder &db, Location dl, Value oh) {
                              emitFor(
                                  db, dl, kws.lo, kws.hi,
                                  [&](OpBuilder &kb, Location kl, Value kw) {
                                    Value u = subi(kb, kl, baseW,
                                                   muli(kb, kl, kw, dw));
                                    ifDivisible(
                                        kb, kl, u, sw,
                                        [&](OpBuilder &eb, Location el,
                                            Value ow) {
                                          emitFor(
                                              eb, el, zero, s.o,
                                              [&](OpBuilder &ob, Location ol,
                                                  Value o) {
                                                Value a = loadAs(ob, ol, dy,
                                                                 {n, oh, ow, o},
                                                                 1, acc);
                                                emitVectorLoop(
                                                    ob, ol, begin, end, vw,
                                                    [&](OpBuilder &lb,
                                                        Location ll, Value c,
                                                        int64_t width) {
                                                      Value v =
                                                          loadAs(lb, ll, w,
                                                                 {o, kh, kw, c},
                                                                 width, acc);
                                                      accRow.fma(
                                                          lb, ll, c, width,
                                                          splat(lb, ll, a,
                                                                width),
                                                          v);
                                                    });
                                              });
                                        });
                                  });
                            });
                      });
                });
          });
    }
    rewriter.replaceOp(op, toTensor(b, loc, dx));
    return success();
  }
};

/// dw[o, c, kh, kw] = sum_{n, oh, ow} dy[n, o, oh, ow] * x[n, c, ih, iw],
/// ih = oh * stride - pad_top + kh * dilation (and the same for iw): a
/// convolution of x with dy.
struct LowerConv2DBackpropFilter : LoopLoweringPattern<Conv2DBackpropFilterOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(Conv2DBackpropFilterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    ConvParams p = ConvParams::get(op);
    RankedTensorType type = op.getType();
    Type acc = getAccumulationType(getElementTypeOrSelf(op.getInput()));
    int64_t vw = options.vectorWidth;
    Value x = getBuffer(b, loc, adaptor.getInput());
    Value dy = getBuffer(b, loc, adaptor.getGradOutput());
    Value zero = idx(b, loc, 0);

    ConvSizes s = convBackpropFilterSizes(b, loc, p, x, dy, type);
    SmallVector<Value> sizes =
        p.filter(s.o, s.c, s.k[0], s.k[1]); // OIHW or OHWI
    Value dw = allocResult(b, loc, type, sizes);
    int64_t sh = p.stride[0], sw = p.stride[1];

    // The offset k * dilation - pad_before of the tap at `k`, and the
    // outputs (oh of [0, OH)) whose input row oh * stride + offset lies in
    // the input.
    auto tapOffset = [&](OpBuilder &rb, Location rl, Value k, int d) {
      return subi(rb, rl, muli(rb, rl, k, p.dilation[d]),
                  idx(rb, rl, p.padBefore[d]));
    };
    auto outputRange = [&](OpBuilder &rb, Location rl, Value off, int d) {
      return stridedRange(rb, rl, zero, s.in[d], p.stride[d], off, zero,
                          s.out[d]);
    };

    if (p.nchw) {
      // Rows (o, c, kh) of KW elements, each a sum over n and the valid oh
      // of dot products along ow (vectors when the stride along w is 1).
      Value rows = b.createOrFold<arith::MulIOp>(
          loc, b.createOrFold<arith::MulIOp>(loc, s.o, s.c), s.k[0]);
      emitParallelRows(
          b, loc, rows, [&](OpBuilder &pb, Location pl, Value row) {
            SmallVector<Value> r = delinearize(pb, pl, row, {s.o, s.c, s.k[0]});
            Value o = r[0], c = r[1], kh = r[2];
            Value offH = tapOffset(pb, pl, kh, 0);
            IndexRange ohs = outputRange(pb, pl, offH, 0);
            Value init = floatConstant(pb, pl, 0.0, acc, 1);
            emitFor(
                pb, pl, zero, s.k[1],
                [&](OpBuilder &kb, Location kl, Value kw) {
                  Value offW = tapOffset(kb, kl, kw, 1);
                  IndexRange ows = outputRange(kb, kl, offW, 1);
                  Value len = subi(kb, kl, ows.hi, ows.lo);
                  Value sum = emitSumFor(
                      kb, kl, zero, s.n, init,
                      [&](OpBuilder &nb, Location nl, Value n,
                          Value sumN) -> Value {
                        return emitSumFor(
                            nb, nl, ohs.lo, ohs.hi, sumN,
                            [&](OpBuilder &hb, Location hl, Value oh,
                                Value sumH) -> Value {
                              Value ih =
                                  addi(hb, hl, muli(hb, hl, oh, sh), offH);
                              Value d = emitDot(
                                  hb, hl, len, sw == 1 ? vw : 1, acc,
                                  [&](OpBuilder &sb, Location sl, Value j,
                                      int64_t width) {
                                    Value ow = addi(sb, sl, ows.lo, j);
                                    Value iw = addi(sb, sl,
                                                    muli(sb, sl, ow, sw), offW);
                                    Value g = loadAs(sb, sl, dy, {n, o, oh, ow},
                                                     width, acc);
                                    Value v = loadAs(sb, sl, x, {n, c, ih, iw},
                                                     width, acc);
                                    return sb.create<arith::MulFOp>(sl, g, v)
                                        .getResult();
                                  });
                              return hb.create<arith::AddFOp>(hl, sumH, d);
                            });
                      });
                  storeAs(kb, kl, sum, dw, {o, c, kh, kw});
                });
          });
    } else {
      // Rows (o, kh, kw) of C elements; each (n, oh, ow) in the tap's
      // reach adds dy[n, oh, ow, o] times an input row of channels.
      Value rows = b.createOrFold<arith::MulIOp>(
          loc, b.createOrFold<arith::MulIOp>(loc, s.o, s.k[0]), s.k[1]);
      emitParallelAccumulatedRows(
          b, loc, rows, dw, acc,
          [&](OpBuilder &pb, Location pl, Value row, RowScratch scratch) {
            SmallVector<Value> r =
                delinearize(pb, pl, row, {s.o, s.k[0], s.k[1]});
            Value o = r[0], kh = r[1], kw = r[2];
            Value offH = tapOffset(pb, pl, kh, 0);
            Value offW = tapOffset(pb, pl, kw, 1);
            IndexRange ohs = outputRange(pb, pl, offH, 0);
            IndexRange ows = outputRange(pb, pl, offW, 1);
            emitAccumulatedRow(
                pb, pl, dw, {o, kh, kw}, s.c, acc, vw, scratch,
                [&](OpBuilder &ab, Location al, const AccRow &accRow,
                    Value begin, Value end) {
                  emitFor(
                      ab, al, zero, s.n,
                      [&](OpBuilder &nb, Location nl, Value n) {
                        emitFor(
                            nb, nl, ohs.lo, ohs.hi,
                            [&](OpBuilder &hb, Location hl, Value oh) {
                              Value ih =
                                  addi(hb, hl, muli(hb, hl, oh, sh), offH);
                              emitFor(
                                  hb, hl, ows.lo, ows.hi,
                                  [&](OpBuilder &wb, Location wl, Value ow) {
                                    Value iw = addi(wb, wl,
                                                    muli(wb, wl, ow, sw), offW);
                                    Value a = loadAs(wb, wl, dy, {n, oh, ow, o},
                                                     1, acc);
                                    emitVectorLoop(
                                        wb, wl, begin, end, vw,
                                        [&](OpBuilder &lb, Location ll, Value c,
                                            int64_t width) {
                                          Value v =
                                              loadAs(lb, ll, x, {n, ih, iw, c},
                                                     width, acc);
                                          accRow.fma(lb, ll, c, width,
                                                     splat(lb, ll, a, width),
                                                     v);
                                        });
                                  });
                            });
                      });
                });
          });
    }
    rewriter.replaceOp(op, toTensor(b, loc, dw));
    return success();
  }
};

} // namespace

Value cpu::emitConv2DLoops(OpBuilder &b, Conv2DOp op, Value input, Value filter,
                           int64_t width, const PointwiseChain *epilogue) {
  return LowerConv2D::emit(b, op, input, filter, width, epilogue);
}

void producers::populateLowerConvPatterns(RewritePatternSet &patterns,
                                          const LoopLoweringOptions &options) {
  patterns
      .add<LowerConv2D, LowerConv2DBackpropInput, LowerConv2DBackpropFilter>(
          patterns.getContext(), options);
}
