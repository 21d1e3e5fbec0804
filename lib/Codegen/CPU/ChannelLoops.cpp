//===- ChannelLoops.cpp - loops over (N, C, spatial) tensors ----*- C++ -*-===//
//
// Part of normfuse. See ChannelLoops.h.
//
//===----------------------------------------------------------------------===//

#include "ChannelLoops.h"
#include "LoopUtils.h"
#include "PointwiseChain.h"
#include "normfuse/Codegen/CPU/Schedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;

Value ChannelShape::view(OpBuilder &b, Location loc, Value buffer) const {
  return reshapeBuffer(b, loc, buffer, viewSizes());
}

SmallVector<Value, 3> ChannelShape::viewSizes() const {
  if (channelsLast)
    return {images, spatial, channels};
  return {images, channels, spatial};
}

ChannelShape cpu::getChannelShape(OpBuilder &b, Location loc, Value buffer,
                                  Layout layout) {
  int64_t rank = cast<MemRefType>(buffer.getType()).getRank();
  ChannelShape s;
  s.channelsLast = layout == Layout::NHWC;
  s.images = getNumElements(b, loc, buffer, 0, 1);
  if (s.channelsLast) {
    s.spatial = getNumElements(b, loc, buffer, 1, rank - 1);
    s.channels = getNumElements(b, loc, buffer, rank - 1, rank);
  } else {
    s.channels = getNumElements(b, loc, buffer, 1, 2);
    s.spatial = getNumElements(b, loc, buffer, 2, rank);
  }
  return s;
}

static Value cst(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

/// A 2-D scf.parallel over [lo0, hi0) x [lo1, hi1), or two nested scf.for
/// loops when `sequential` (the loops of a single thread).
static void emitParallel2D(
    OpBuilder &b, Location loc, Value lo0, Value hi0, Value lo1, Value hi1,
    llvm::function_ref<void(OpBuilder &, Location, Value, Value)> body,
    bool sequential) {
  Value one = cst(b, loc, 1);
  if (sequential) {
    emitForEach(b, loc, lo0, hi0, lo1, hi1, body);
    return;
  }
  b.create<scf::ParallelOp>(loc, ValueRange{lo0, lo1}, ValueRange{hi0, hi1},
                            ValueRange{one, one},
                            [&](OpBuilder &pb, Location pl, ValueRange ivs) {
                              body(pb, pl, ivs[0], ivs[1]);
                              pb.create<scf::ReduceOp>(pl);
                            });
}

/// Input `k` at `indices` of its view, `width` lanes, through the prologue.
static Value loadInput(OpBuilder &b, Location loc, const ChannelLoop &loop,
                       unsigned k, ValueRange indices, int64_t width) {
  Value v = loadAs(b, loc, loop.inputs[k], indices, width, loop.acc);
  if (k == 0 && loop.prologue)
    v = loop.prologue->apply(b, loc, v, indices, width);
  return v;
}

/// The elements of every input at (m, row, j) of its view, `width` lanes.
static SmallVector<Value> loadInputs(OpBuilder &b, Location loc,
                                     const ChannelLoop &loop,
                                     ValueRange indices, int64_t width) {
  SmallVector<Value> values;
  for (unsigned k = 0; k < loop.inputs.size(); ++k)
    values.push_back(loadInput(b, loc, loop, k, indices, width));
  return values;
}

/// The coefficients of (m, c): scalars, each splat to `width` lanes.
static SmallVector<Value> loadScalarCoefs(OpBuilder &b, Location loc,
                                          const ChannelLoop &loop, Value m,
                                          Value c) {
  SmallVector<Value> values;
  for (Value coef : loop.coefs)
    values.push_back(loadAs(b, loc, coef, {m, c}, 1, loop.acc));
  return values;
}

static SmallVector<Value> splatAll(OpBuilder &b, Location loc,
                                   ValueRange scalars, int64_t width) {
  SmallVector<Value> values;
  for (Value v : scalars)
    values.push_back(splat(b, loc, v, width));
  return values;
}

/// The coefficients of (m, c..c+width): vectors loaded from the (M, C)
/// buffers.
static SmallVector<Value> loadVectorCoefs(OpBuilder &b, Location loc,
                                          const ChannelLoop &loop, Value m,
                                          Value c, int64_t width) {
  SmallVector<Value> values;
  for (Value coef : loop.coefs)
    values.push_back(loadAs(b, loc, coef, {m, c}, width, loop.acc));
  return values;
}

/// Number of channels-last chunks of `size` positions of a range of
/// `spatial` positions.
static Value numChunks(OpBuilder &b, Location loc, Value spatial,
                       int64_t size = kChunkPositions) {
  return b.createOrFold<arith::DivUIOp>(
      loc, b.createOrFold<arith::AddIOp>(loc, spatial, cst(b, loc, size - 1)),
      cst(b, loc, size));
}

/// Runs `body(m, p)` for every position p of images [lo, hi), in parallel
/// over (image, chunk of `chunkPositions` positions), then `chunkEnd` on the
/// chunk's positions [p0, p1); `streaming` closes each chunk.
static void emitPositionChunks(
    OpBuilder &b, Location loc, const ChannelShape &shape, Value lo, Value hi,
    llvm::function_ref<void(OpBuilder &, Location, Value m, Value t,
                            Value chunk)>
        chunkStart,
    llvm::function_ref<void(OpBuilder &, Location, Value m, Value t,
                            Value chunk, Value p)>
        body,
    bool sequential, int64_t chunkPositions = kChunkPositions,
    const StreamingStores &streaming = {},
    llvm::function_ref<void(OpBuilder &, Location, Value p0, Value p1)>
        chunkEnd = nullptr) {
  Value zero = cst(b, loc, 0);
  Value chunks = numChunks(b, loc, shape.spatial, chunkPositions);
  Value images = b.createOrFold<arith::SubIOp>(loc, hi, lo);
  emitParallel2D(
      b, loc, zero, images, zero, chunks,
      [&](OpBuilder &pb, Location pl, Value t, Value chunk) {
        Value m = pb.create<arith::AddIOp>(pl, lo, t);
        Value p0 =
            pb.create<arith::MulIOp>(pl, chunk, cst(pb, pl, chunkPositions));
        Value p1 = pb.create<arith::MinUIOp>(
            pl, pb.create<arith::AddIOp>(pl, p0, cst(pb, pl, chunkPositions)),
            shape.spatial);
        if (chunkStart)
          chunkStart(pb, pl, m, t, chunk);
        if (!body)
          return;
        pb.create<scf::ForOp>(
            pl, p0, p1, cst(pb, pl, 1), std::nullopt,
            [&](OpBuilder &fb, Location fl, Value p, ValueRange) {
              body(fb, fl, m, t, chunk, p);
              fb.create<scf::YieldOp>(fl);
            });
        if (chunkEnd)
          chunkEnd(pb, pl, p0, p1);
        streaming.fence(pb, pl);
      },
      sequential);
}

void cpu::emitChannelSums(OpBuilder &b, Location loc, const ChannelLoop &loop,
                          Value lo, Value hi, ArrayRef<Value> sums,
                          ChannelFn fn) {
  const ChannelShape &shape = loop.shape;
  Value zero = cst(b, loc, 0);
  if (!shape.channelsLast) {
    // One blocked sum per row (m, c) and term.
    emitParallel2D(
        b, loc, lo, hi, zero, shape.channels,
        [&](OpBuilder &pb, Location pl, Value m, Value c) {
          SmallVector<Value> coefs = loadScalarCoefs(pb, pl, loop, m, c);
          for (size_t k = 0; k < sums.size(); ++k) {
            Value total = emitBlockedSumF64(
                pb, pl, shape.spatial, loop.width, loop.acc,
                [&](OpBuilder &sb, Location sl, Value j, int64_t w) {
                  Value term =
                      fn(sb, sl, loadInputs(sb, sl, loop, {m, c, j}, w),
                         splatAll(sb, sl, coefs, w), w)[k];
                  if (k == 0 && loop.termOutput)
                    storeAs(sb, sl, term, loop.termOutput, {m, c, j});
                  return term;
                });
            pb.create<memref::StoreOp>(pl, total, sums[k], ValueRange{m, c});
          }
        },
        loop.sequential);
    return;
  }

  // Channels-last: each chunk of positions adds its terms into its own
  // partial row of C values, then the rows are added in f64.
  Value images = b.createOrFold<arith::SubIOp>(loc, hi, lo);
  Value chunks = numChunks(b, loc, shape.spatial);
  SmallVector<Value> partials;
  for (size_t k = 0; k < sums.size(); ++k)
    partials.push_back(
        allocScratch(b, loc, {images, chunks, shape.channels}, loop.acc));
  emitPositionChunks(
      b, loc, shape, lo, hi,
      [&](OpBuilder &cb, Location cl, Value, Value t, Value chunk) {
        emitVectorLoop(cb, cl, cst(cb, cl, 0), shape.channels, loop.width,
                       [&](OpBuilder &lb, Location ll, Value c, int64_t w) {
                         Value z = floatConstant(lb, ll, 0.0, loop.acc, w);
                         for (Value partial : partials)
                           storeAs(lb, ll, z, partial, {t, chunk, c});
                       });
      },
      [&](OpBuilder &fb, Location fl, Value m, Value t, Value chunk, Value p) {
        emitVectorLoop(
            fb, fl, cst(fb, fl, 0), shape.channels, loop.width,
            [&](OpBuilder &lb, Location ll, Value c, int64_t w) {
              SmallVector<Value> terms =
                  fn(lb, ll, loadInputs(lb, ll, loop, {m, p, c}, w),
                     loadVectorCoefs(lb, ll, loop, m, c, w), w);
              if (loop.termOutput)
                storeAs(lb, ll, terms[0], loop.termOutput, {m, p, c});
              for (auto [k, partial] : llvm::enumerate(partials)) {
                Value acc = loadAs(lb, ll, partial, {t, chunk, c}, w, loop.acc);
                storeAs(lb, ll, lb.create<arith::AddFOp>(ll, acc, terms[k]),
                        partial, {t, chunk, c});
              }
            });
      },
      loop.sequential);
  emitParallel2D(
      b, loc, zero, images, zero, shape.channels,
      [&](OpBuilder &pb, Location pl, Value t, Value c) {
        Value m = pb.create<arith::AddIOp>(pl, lo, t);
        for (size_t k = 0; k < partials.size(); ++k) {
          Value partial = partials[k];
          Value init = floatConstant(pb, pl, 0.0, pb.getF64Type(), 1);
          auto loopOp = pb.create<scf::ForOp>(
              pl, cst(pb, pl, 0), chunks, cst(pb, pl, 1), ValueRange{init},
              [&](OpBuilder &fb, Location fl, Value chunk, ValueRange acc) {
                Value v =
                    loadAs(fb, fl, partial, {t, chunk, c}, 1, fb.getF64Type());
                fb.create<scf::YieldOp>(
                    fl, ValueRange{fb.create<arith::AddFOp>(fl, acc[0], v)});
              });
          pb.create<memref::StoreOp>(pl, loopOp.getResult(0), sums[k],
                                     ValueRange{m, c});
        }
      },
      loop.sequential);
}

/// The corrected two-pass result from n, the first pass's mean m' (f64) and
/// the sums of d = x - m' and d^2: {mean, M2}.
static std::pair<Value, Value> correctedMoments(OpBuilder &b, Location loc,
                                                Value n, Value center,
                                                Value sumD, Value sumD2) {
  Value meanD = b.create<arith::DivFOp>(loc, sumD, n);
  Value mean = b.create<arith::AddFOp>(loc, center, meanD);
  Value m2 = b.create<arith::SubFOp>(loc, sumD2,
                                     b.create<arith::MulFOp>(loc, sumD, meanD));
  return {mean, m2};
}

namespace {
/// The channels-last moments of chunks of positions: (slots, chunks, C)
/// rows of each chunk's mean and of the sums of d = x - mean and of d^2.
/// A slot is an image's place in a range of images, or one of the two
/// buffers of the pipelined mode.
struct ChunkMoments {
  Value centers, sumsD, sumsD2;
};
} // namespace

static ChunkMoments allocChunkMoments(OpBuilder &b, Location loc,
                                      const ChannelLoop &loop, Value slots) {
  const ChannelShape &shape = loop.shape;
  Value chunks = numChunks(b, loc, shape.spatial);
  auto alloc = [&] {
    return allocScratch(b, loc, {slots, chunks, shape.channels}, loop.acc);
  };
  ChunkMoments rows;
  rows.centers = alloc();
  rows.sumsD = alloc();
  rows.sumsD2 = alloc();
  return rows;
}

/// The number of positions of channels-last chunk `chunk`.
static Value chunkLength(OpBuilder &b, Location loc, const ChannelShape &shape,
                         Value chunk) {
  Value size = cst(b, loc, kChunkPositions);
  Value p0 = b.create<arith::MulIOp>(loc, chunk, size);
  Value p1 = b.create<arith::MinUIOp>(
      loc, b.create<arith::AddIOp>(loc, p0, size), shape.spatial);
  return b.create<arith::SubIOp>(loc, p1, p0);
}

/// The moments of chunk `chunk` of image m into `slot` of `rows`, one block
/// of channels at a time over all positions of the chunk with the sums in
/// registers (wide blocks give the adds independent chains). Two passes:
/// the sums of x (in position order) and the chunk's means, then from
/// cache the sums of d = x - mean and of d^2.
///
/// With `inOrder` (the chunks of an image come one after the other into
/// the same slot), a chunk after the first takes the previous chunk's mean
/// as its center and makes one pass, for the sums of d and d^2 around it.
/// Its block keeps them when the center is within one standard deviation
/// of the chunk's mean, 2 sum(d)^2 <= n sum(d^2) in every lane: the
/// correction sum(d)^2 / n then cancels at most half of sum(d^2), so M2
/// loses at most one bit to it. Otherwise the block makes the two passes.
static void emitChunkMoments(OpBuilder &b, Location loc,
                             const ChannelLoop &loop, Value m, Value slot,
                             Value chunk, const ChunkMoments &rows,
                             bool inOrder = false) {
  const ChannelShape &shape = loop.shape;
  Type acc = loop.acc;
  Value one = cst(b, loc, 1);
  Value p0 = b.create<arith::MulIOp>(loc, chunk, cst(b, loc, kChunkPositions));
  Value length = chunkLength(b, loc, shape, chunk);
  Value p1 = b.create<arith::AddIOp>(loc, p0, length);
  Value n = indexToFloat(b, loc, length, acc);
  Value inverse =
      b.create<arith::DivFOp>(loc, floatConstant(b, loc, 1.0, acc, 1), n);
  auto store = [&](OpBuilder &lb, Location ll, Value c, Value center,
                   Value sumD, Value sumD2) {
    storeAs(lb, ll, center, rows.centers, {slot, chunk, c});
    storeAs(lb, ll, sumD, rows.sumsD, {slot, chunk, c});
    storeAs(lb, ll, sumD2, rows.sumsD2, {slot, chunk, c});
  };
  // The sums of d = x - center and of d^2 over the chunk.
  auto sumsAround = [&](OpBuilder &lb, Location ll, Value c, int64_t w,
                        Value center) {
    Value z = floatConstant(lb, ll, 0.0, acc, w);
    auto sums = lb.create<scf::ForOp>(
        ll, p0, p1, one, ValueRange{z, z},
        [&](OpBuilder &fb, Location fl, Value p, ValueRange sum) {
          Value d = fb.create<arith::SubFOp>(
              fl, loadInput(fb, fl, loop, 0, {m, p, c}, w), center);
          fb.create<scf::YieldOp>(
              fl, ValueRange{fb.create<arith::AddFOp>(fl, sum[0], d),
                             fb.create<math::FmaOp>(fl, d, d, sum[1])});
        });
    return std::make_pair(sums.getResult(0), sums.getResult(1));
  };
  auto twoPasses = [&](OpBuilder &lb, Location ll, Value c, int64_t w) {
    Value z = floatConstant(lb, ll, 0.0, acc, w);
    auto sumX = lb.create<scf::ForOp>(
        ll, p0, p1, one, ValueRange{z},
        [&](OpBuilder &fb, Location fl, Value p, ValueRange sum) {
          Value x = loadInput(fb, fl, loop, 0, {m, p, c}, w);
          fb.create<scf::YieldOp>(
              fl, ValueRange{fb.create<arith::AddFOp>(fl, sum[0], x)});
        });
    Value center = lb.create<arith::MulFOp>(ll, sumX.getResult(0),
                                            splat(lb, ll, inverse, w));
    auto [sumD, sumD2] = sumsAround(lb, ll, c, w, center);
    store(lb, ll, c, center, sumD, sumD2);
  };
  auto forBlocks = [&](OpBuilder &fb, Location fl, ElementBody body) {
    emitWideVectorLoop(fb, fl, cst(fb, fl, 0), shape.channels,
                       kMomentsUnroll * loop.width, loop.width, body);
  };
  if (!inOrder)
    return forBlocks(b, loc, twoPasses);

  auto onePass = [&](OpBuilder &lb, Location ll, Value c, int64_t w) {
    Value prev = lb.create<arith::SubIOp>(ll, chunk, one);
    Value prevInverse = lb.create<arith::DivFOp>(
        ll, floatConstant(lb, ll, 1.0, acc, 1),
        indexToFloat(lb, ll, chunkLength(lb, ll, shape, prev), acc));
    Value center = lb.create<math::FmaOp>(
        ll, loadAs(lb, ll, rows.sumsD, {slot, prev, c}, w, acc),
        splat(lb, ll, prevInverse, w),
        loadAs(lb, ll, rows.centers, {slot, prev, c}, w, acc));
    // Named values, not structured bindings: the lambdas below capture
    // them (capturing a binding is C++20).
    Value sumD, sumD2;
    std::tie(sumD, sumD2) = sumsAround(lb, ll, c, w, center);
    Value twice =
        lb.create<arith::MulFOp>(ll, lb.create<arith::MulFOp>(ll, sumD, sumD),
                                 floatConstant(lb, ll, 2.0, acc, w));
    Value bound = lb.create<arith::MulFOp>(ll, sumD2, splat(lb, ll, n, w));
    Value kept =
        lb.create<arith::CmpFOp>(ll, arith::CmpFPredicate::OLE, twice, bound);
    if (w > 1)
      kept =
          lb.create<vector::ReductionOp>(ll, vector::CombiningKind::AND, kept);
    lb.create<scf::IfOp>(
        ll, kept,
        [&](OpBuilder &tb, Location tl) {
          store(tb, tl, c, center, sumD, sumD2);
          tb.create<scf::YieldOp>(tl);
        },
        [&](OpBuilder &eb, Location el) {
          twoPasses(eb, el, c, w);
          eb.create<scf::YieldOp>(el);
        });
  };
  Value first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, chunk,
                                        cst(b, loc, 0));
  b.create<scf::IfOp>(
      loc, first,
      [&](OpBuilder &tb, Location tl) {
        forBlocks(tb, tl, twoPasses);
        tb.create<scf::YieldOp>(tl);
      },
      [&](OpBuilder &eb, Location el) {
        forBlocks(eb, el, onePass);
        eb.create<scf::YieldOp>(el);
      });
}

/// Chan's combination of the chunks of each (image, channel) of images
/// [lo, hi), image m's chunks in slot `slot0 + m - lo` of `rows`, in f64:
/// delta = mean_k - mean, mean += delta * n_k / n, and
/// M2 += M2_k + delta^2 * n_prev * n_k / n. Vectors along C, in blocks of
/// channels run in parallel; the weights depend only on the chunk.
static void emitCombineChunks(OpBuilder &b, Location loc,
                              const ChannelLoop &loop, Value lo, Value hi,
                              Value slot0, const ChunkMoments &rows, Value mean,
                              Value m2) {
  const ChannelShape &shape = loop.shape;
  Type f64 = b.getF64Type();
  Value zero = cst(b, loc, 0);
  Value images = b.createOrFold<arith::SubIOp>(loc, hi, lo);
  Value chunks = numChunks(b, loc, shape.spatial);
  Value blockSize = cst(b, loc, kCombineChannels);
  Value blocks = b.createOrFold<arith::DivUIOp>(
      loc,
      b.createOrFold<arith::AddIOp>(loc, shape.channels,
                                    cst(b, loc, kCombineChannels - 1)),
      blockSize);
  emitParallel2D(
      b, loc, zero, images, zero, blocks,
      [&](OpBuilder &pb, Location pl, Value t, Value block) {
        Value c0 = pb.create<arith::MulIOp>(pl, block, blockSize);
        Value c1 = pb.create<arith::MinUIOp>(
            pl, pb.create<arith::AddIOp>(pl, c0, blockSize), shape.channels);
        Value m = pb.create<arith::AddIOp>(pl, lo, t);
        Value slot = pb.createOrFold<arith::AddIOp>(pl, slot0, t);
        emitVectorLoop(
            pb, pl, c0, c1, loop.width,
            [&](OpBuilder &vb, Location vl, Value c, int64_t w) {
              Value zeros = floatConstant(vb, vl, 0.0, f64, w);
              auto combine = vb.create<scf::ForOp>(
                  vl, cst(vb, vl, 0), chunks, cst(vb, vl, 1),
                  ValueRange{floatConstant(vb, vl, 0.0, f64, 1), zeros, zeros},
                  [&](OpBuilder &fb, Location fl, Value chunk, ValueRange acc) {
                    Value nk = indexToFloat(
                        fb, fl, chunkLength(fb, fl, shape, chunk), f64);
                    Value n = fb.create<arith::AddFOp>(fl, acc[0], nk);
                    Value weight = fb.create<arith::DivFOp>(fl, nk, n);
                    Value crossWeight =
                        fb.create<arith::MulFOp>(fl, acc[0], weight);
                    auto at = [&](Value row) {
                      return loadAs(fb, fl, row, {slot, chunk, c}, w, f64);
                    };
                    auto [meanK, m2K] = correctedMoments(
                        fb, fl, splat(fb, fl, nk, w), at(rows.centers),
                        at(rows.sumsD), at(rows.sumsD2));
                    Value delta = fb.create<arith::SubFOp>(fl, meanK, acc[1]);
                    Value mu = fb.create<arith::AddFOp>(
                        fl, acc[1],
                        fb.create<arith::MulFOp>(fl, delta,
                                                 splat(fb, fl, weight, w)));
                    Value cross = fb.create<arith::MulFOp>(
                        fl, fb.create<arith::MulFOp>(fl, delta, delta),
                        splat(fb, fl, crossWeight, w));
                    Value sq = fb.create<arith::AddFOp>(
                        fl, acc[2], fb.create<arith::AddFOp>(fl, m2K, cross));
                    fb.create<scf::YieldOp>(fl, ValueRange{n, mu, sq});
                  });
              storeAs(vb, vl, combine.getResult(1), mean, {m, c});
              storeAs(vb, vl, combine.getResult(2), m2, {m, c});
            });
      },
      loop.sequential);
}

void cpu::emitChannelMoments(OpBuilder &b, Location loc,
                             const ChannelLoop &loop, Value lo, Value hi,
                             Value mean, Value m2) {
  const ChannelShape &shape = loop.shape;
  Type f64 = b.getF64Type();
  Value zero = cst(b, loc, 0);
  if (!shape.channelsLast) {
    // Three blocked sums over a row that stays in cache.
    emitParallel2D(
        b, loc, lo, hi, zero, shape.channels,
        [&](OpBuilder &pb, Location pl, Value m, Value c) {
          Value n = indexToFloat(pb, pl, shape.spatial, f64);
          auto load = [&](OpBuilder &sb, Location sl, Value j, int64_t w) {
            return loadInput(sb, sl, loop, 0, {m, c, j}, w);
          };
          Value sum =
              emitBlockedSumF64(pb, pl, shape.spatial, loop.width, loop.acc,
                                [&](OpBuilder &sb, Location sl, Value j,
                                    int64_t w) { return load(sb, sl, j, w); });
          Value center = convertFloat(
              pb, pl, pb.create<arith::DivFOp>(pl, sum, n), loop.acc);
          auto dev = [&](OpBuilder &sb, Location sl, Value j, int64_t w) {
            return sb
                .create<arith::SubFOp>(sl, load(sb, sl, j, w),
                                       splat(sb, sl, center, w))
                .getResult();
          };
          Value sumD =
              emitBlockedSumF64(pb, pl, shape.spatial, loop.width, loop.acc,
                                [&](OpBuilder &sb, Location sl, Value j,
                                    int64_t w) { return dev(sb, sl, j, w); });
          Value sumD2 = emitBlockedSumF64(
              pb, pl, shape.spatial, loop.width, loop.acc,
              [&](OpBuilder &sb, Location sl, Value j, int64_t w) {
                Value d = dev(sb, sl, j, w);
                return sb.create<arith::MulFOp>(sl, d, d).getResult();
              });
          auto [mu, sq] = correctedMoments(
              pb, pl, n, convertFloat(pb, pl, center, f64), sumD, sumD2);
          pb.create<memref::StoreOp>(pl, mu, mean, ValueRange{m, c});
          pb.create<memref::StoreOp>(pl, sq, m2, ValueRange{m, c});
        },
        loop.sequential);
    return;
  }

  // Channels-last: per chunk, rows of C means of x and sums of d and d^2,
  // then their combination.
  Value images = b.createOrFold<arith::SubIOp>(loc, hi, lo);
  ChunkMoments rows = allocChunkMoments(b, loc, loop, images);
  emitPositionChunks(
      b, loc, shape, lo, hi,
      [&](OpBuilder &cb, Location cl, Value m, Value t, Value chunk) {
        emitChunkMoments(cb, cl, loop, m, t, chunk, rows);
      },
      /*body=*/nullptr, loop.sequential);
  emitCombineChunks(b, loc, loop, lo, hi, zero, rows, mean, m2);
}

namespace {
/// What the map of image m does besides in the pipelined mode: it
/// prefetches the positions it visits of image `next`, and after each chunk
/// of positions [p0, p1) runs `afterChunk`.
struct MapPipeline {
  Value next;
  llvm::function_ref<void(OpBuilder &, Location, Value p0, Value p1)>
      afterChunk;
};
} // namespace

/// Cache lines of position `p` of image `next` (in input 0), fetched while
/// this thread writes the current image: the moments of the next image
/// then read them from cache, and reads and writes of memory overlap.
static void prefetchPosition(OpBuilder &b, Location loc,
                             const ChannelLoop &loop, Value next, Value p) {
  const ChannelShape &shape = loop.shape;
  Value input = loop.inputs[0];
  int64_t elementBytes =
      cast<MemRefType>(input.getType()).getElementTypeBitWidth() / 8;
  b.create<scf::ForOp>(
      loc, cst(b, loc, 0), shape.channels,
      cst(b, loc, std::max<int64_t>(1, 64 / elementBytes)), std::nullopt,
      [&](OpBuilder &fb, Location fl, Value c, ValueRange) {
        fb.create<memref::PrefetchOp>(fl, input, ValueRange{next, p, c},
                                      /*isWrite=*/false, /*localityHint=*/3,
                                      /*isDataCache=*/true);
        fb.create<scf::YieldOp>(fl);
      });
}

/// emitChannelMap, with the additions of the pipelined mode where
/// `pipeline` is given (channels-last only).
static void emitChannelMapImpl(OpBuilder &b, Location loc,
                               const ChannelLoop &loop, Value lo, Value hi,
                               ArrayRef<Value> outputs, ChannelFn fn,
                               const MapPipeline *pipeline) {
  const ChannelShape &shape = loop.shape;
  Value zero = cst(b, loc, 0);
  auto store = [&](OpBuilder &lb, Location ll, ArrayRef<Value> values,
                   ValueRange indices, int64_t w, bool streaming) {
    for (auto [k, output] : llvm::enumerate(outputs)) {
      Value v = values[k];
      if (loop.epilogue)
        v = loop.epilogue->apply(lb, ll, v, indices, w);
      storeAs(lb, ll, v, output, indices, streaming);
    }
  };
  if (!shape.channelsLast) {
    emitParallel2D(
        b, loc, lo, hi, zero, shape.channels,
        [&](OpBuilder &pb, Location pl, Value m, Value c) {
          SmallVector<Value> coefs = loadScalarCoefs(pb, pl, loop, m, c);
          emitVectorLoop(pb, pl, zero, shape.spatial, loop.width,
                         [&](OpBuilder &lb, Location ll, Value j, int64_t w) {
                           store(lb, ll,
                                 fn(lb, ll,
                                    loadInputs(lb, ll, loop, {m, c, j}, w),
                                    splatAll(lb, ll, coefs, w), w),
                                 {m, c, j}, w, /*streaming=*/false);
                         });
        },
        loop.sequential);
    return;
  }
  // Channels-last outputs are written around the caches where they
  // qualify (see StreamingStores), in chunks of at least 64 KiB; in the
  // pipelined mode, chunks of whole moments chunks.
  auto map = [&](OpBuilder &sb, Location sl, const StreamingStores &streaming) {
    int64_t chunkPositions =
        std::max(kChunkPositions, streaming.rowsPerIteration);
    if (pipeline)
      chunkPositions = llvm::alignTo(chunkPositions, kChunkPositions);
    emitPositionChunks(
        sb, sl, shape, lo, hi, nullptr,
        [&](OpBuilder &fb, Location fl, Value m, Value, Value, Value p) {
          if (pipeline)
            prefetchPosition(fb, fl, loop, pipeline->next, p);
          emitVectorLoop(fb, fl, cst(fb, fl, 0), shape.channels, loop.width,
                         [&](OpBuilder &lb, Location ll, Value c, int64_t w) {
                           store(lb, ll,
                                 fn(lb, ll,
                                    loadInputs(lb, ll, loop, {m, p, c}, w),
                                    loadVectorCoefs(lb, ll, loop, m, c, w), w),
                                 {m, p, c}, w, streaming.enabled);
                         });
        },
        loop.sequential, chunkPositions, streaming,
        pipeline ? pipeline->afterChunk : nullptr);
  };
  emitStreamingVersions(b, loc, outputs, shape.channels, loop.width,
                        loop.outputsReturned, map);
}

void cpu::emitChannelMap(OpBuilder &b, Location loc, const ChannelLoop &loop,
                         Value lo, Value hi, ArrayRef<Value> outputs,
                         ChannelFn fn) {
  emitChannelMapImpl(b, loc, loop, lo, hi, outputs, fn, nullptr);
}

void cpu::emitPipelinedImages(
    OpBuilder &b, Location loc, const ChannelLoop &loop, Value mean, Value m2,
    llvm::function_ref<void(OpBuilder &, Location, Value m)> coefsOf,
    ArrayRef<Value> outputs, ChannelFn fn) {
  assert(loop.shape.channelsLast && "the pipelined mode is channels-last");
  ChannelLoop seq = loop;
  seq.sequential = true;
  const ChannelShape &shape = loop.shape;
  Value zero = cst(b, loc, 0), one = cst(b, loc, 1);
  // One slice of consecutive images per thread, at most one per image.
  Value threads = b.create<arith::IndexCastOp>(
      loc, b.getIndexType(),
      b.create<func::CallOp>(loc, kMaxThreadsFunction,
                             TypeRange{b.getI32Type()}, ValueRange{})
          .getResult(0));
  Value slices = b.create<arith::MinUIOp>(
      loc, b.create<arith::MaxSIOp>(loc, threads, one), shape.images);
  b.create<scf::ParallelOp>(
      loc, ValueRange{zero}, ValueRange{slices}, ValueRange{one},
      [&](OpBuilder &pb, Location pl, ValueRange ivs) {
        auto bound = [&](Value s) {
          return pb.create<arith::DivUIOp>(
              pl, pb.create<arith::MulIOp>(pl, s, shape.images), slices);
        };
        Value lo = bound(ivs[0]);
        Value hi = bound(pb.create<arith::AddIOp>(pl, ivs[0], one));
        ChunkMoments rows = allocChunkMoments(pb, pl, seq, cst(pb, pl, 2));
        // The moments of the slice's first image, into slot 0.
        pb.create<scf::ForOp>(
            pl, zero, numChunks(pb, pl, shape.spatial), one, std::nullopt,
            [&](OpBuilder &fb, Location fl, Value chunk, ValueRange) {
              emitChunkMoments(fb, fl, seq, lo, zero, chunk, rows,
                               /*inOrder=*/true);
              fb.create<scf::YieldOp>(fl);
            });
        pb.create<scf::ForOp>(
            pl, lo, hi, one, std::nullopt,
            [&](OpBuilder &ib, Location il, Value m, ValueRange) {
              Value slot = ib.create<arith::AndIOp>(
                  il, ib.create<arith::SubIOp>(il, m, lo), one);
              Value after = ib.create<arith::AddIOp>(il, m, one);
              emitCombineChunks(ib, il, seq, m, after, slot, rows, mean, m2);
              coefsOf(ib, il, m);
              Value nextSlot = ib.create<arith::XOrIOp>(il, slot, one);
              Value hasNext = ib.create<arith::CmpIOp>(
                  il, arith::CmpIPredicate::ult, after, hi);
              // The last image of a slice prefetches itself (in cache).
              Value next = ib.create<arith::SelectOp>(il, hasNext, after, m);
              auto nextMoments = [&](OpBuilder &cb, Location cl, Value p0,
                                     Value p1) {
                Value size = cst(cb, cl, kChunkPositions);
                Value first = cb.create<arith::DivUIOp>(cl, p0, size);
                Value last = cb.create<arith::DivUIOp>(
                    cl,
                    cb.create<arith::AddIOp>(cl, p1,
                                             cst(cb, cl, kChunkPositions - 1)),
                    size);
                cb.create<scf::IfOp>(
                    cl, hasNext, [&](OpBuilder &tb, Location tl) {
                      tb.create<scf::ForOp>(
                          tl, first, last, cst(tb, tl, 1), std::nullopt,
                          [&](OpBuilder &fb, Location fl, Value chunk,
                              ValueRange) {
                            emitChunkMoments(fb, fl, seq, after, nextSlot,
                                             chunk, rows, /*inOrder=*/true);
                            fb.create<scf::YieldOp>(fl);
                          });
                      tb.create<scf::YieldOp>(tl);
                    });
              };
              MapPipeline pipeline{next, nextMoments};
              emitChannelMapImpl(ib, il, seq, m, after, outputs, fn, &pipeline);
              ib.create<scf::YieldOp>(il);
            });
        pb.create<scf::ReduceOp>(pl);
      });
}

void cpu::emitImageRanges(
    OpBuilder &b, Location loc, const ChannelShape &shape, bool together,
    llvm::function_ref<void(OpBuilder &, Location, Value, Value)> body) {
  Value zero = cst(b, loc, 0);
  if (together)
    return body(b, loc, zero, shape.images);
  Value one = cst(b, loc, 1);
  Value imageElements =
      b.createOrFold<arith::MulIOp>(loc, shape.channels, shape.spatial);
  Value perRange = b.createOrFold<arith::MaxUIOp>(
      loc, one,
      b.createOrFold<arith::DivUIOp>(
          loc, cst(b, loc, kRangeElements),
          b.createOrFold<arith::MaxUIOp>(loc, one, imageElements)));
  b.create<scf::ForOp>(loc, zero, shape.images, perRange, std::nullopt,
                       [&](OpBuilder &fb, Location fl, Value lo, ValueRange) {
                         Value hi = fb.create<arith::MinUIOp>(
                             fl, fb.create<arith::AddIOp>(fl, lo, perRange),
                             shape.images);
                         body(fb, fl, lo, hi);
                         fb.create<scf::YieldOp>(fl);
                       });
}

void cpu::emitParallelImages(
    OpBuilder &b, Location loc, const ChannelShape &shape,
    llvm::function_ref<void(OpBuilder &, Location, Value, Value)> body) {
  Value zero = cst(b, loc, 0), one = cst(b, loc, 1);
  b.create<scf::ParallelOp>(
      loc, ValueRange{zero}, ValueRange{shape.images}, ValueRange{one},
      [&](OpBuilder &pb, Location pl, ValueRange ivs) {
        body(pb, pl, ivs[0], pb.create<arith::AddIOp>(pl, ivs[0], one));
        pb.create<scf::ReduceOp>(pl);
      });
}

void cpu::emitForEach(
    OpBuilder &b, Location loc, Value mLo, Value mHi, Value cLo, Value cHi,
    llvm::function_ref<void(OpBuilder &, Location, Value, Value)> body) {
  Value one = cst(b, loc, 1);
  b.create<scf::ForOp>(loc, mLo, mHi, one, std::nullopt,
                       [&](OpBuilder &mb, Location ml, Value m, ValueRange) {
                         mb.create<scf::ForOp>(ml, cLo, cHi, one, std::nullopt,
                                               [&](OpBuilder &cb, Location cl,
                                                   Value c, ValueRange) {
                                                 body(cb, cl, m, c);
                                                 cb.create<scf::YieldOp>(cl);
                                               });
                         mb.create<scf::YieldOp>(ml);
                       });
}

Value cpu::emitSumOver(
    OpBuilder &b, Location loc, Value mLo, Value mHi, Value cLo, Value cHi,
    llvm::function_ref<Value(OpBuilder &, Location, Value, Value)> term) {
  Value one = cst(b, loc, 1);
  Value init = floatConstant(b, loc, 0.0, b.getF64Type(), 1);
  auto outer = b.create<scf::ForOp>(
      loc, mLo, mHi, one, ValueRange{init},
      [&](OpBuilder &mb, Location ml, Value m, ValueRange mAcc) {
        auto inner = mb.create<scf::ForOp>(
            ml, cLo, cHi, one, ValueRange{mAcc[0]},
            [&](OpBuilder &cb, Location cl, Value c, ValueRange cAcc) {
              Value t =
                  convertFloat(cb, cl, term(cb, cl, m, c), cb.getF64Type());
              cb.create<scf::YieldOp>(
                  cl, ValueRange{cb.create<arith::AddFOp>(cl, cAcc[0], t)});
            });
        mb.create<scf::YieldOp>(ml, inner.getResults());
      });
  return outer.getResult(0);
}

Value cpu::allocChannelScratch(OpBuilder &b, Location loc,
                               const ChannelShape &shape, Type type) {
  return allocScratch(b, loc, {shape.images, shape.channels}, type);
}
