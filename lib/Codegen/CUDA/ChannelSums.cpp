//===- ChannelSums.cpp - partial sums per channel on the GPU --------------===//
//
// Part of normfuse. See ChannelSums.h.
//
//===----------------------------------------------------------------------===//

#include "ChannelSums.h"
#include "KernelBuilder.h"
#include "normfuse/Codegen/Common/ActivationMath.h"
#include "normfuse/Codegen/Common/BufferBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

ChannelDims cuda::getChannelDims(OpBuilder &b, Location loc, Value buffer,
                                 Layout layout, bool perImage) {
  int64_t rank = cast<MemRefType>(buffer.getType()).getRank();
  int64_t axis = getChannelAxis(layout, rank);
  IndexMath im{b, loc};
  ChannelDims d{im.c(1), im.c(1), im.c(1), im.c(1)};
  for (int64_t i = 0; i < rank; ++i) {
    Value size = getNumElements(b, loc, buffer, i, i + 1);
    if (i == 0 && perImage)
      d.images = size;
    else if (i < axis)
      d.outer = im.product(d.outer, size);
    else if (i == axis)
      d.channels = size;
    else
      d.inner = im.product(d.inner, size);
  }
  return d;
}

Value ChannelDims::count(OpBuilder &b, Location loc) const {
  return IndexMath{b, loc}.product(outer, inner);
}

ChannelSums cuda::channelSumsOf(OpBuilder &b, Location loc, Value tensor,
                                Layout layout, int64_t numSums, bool perImage) {
  ChannelSums cs;
  cs.dims = getChannelDims(b, loc, getBuffer(b, loc, tensor), layout, perImage);
  cs.element = getElementTypeOrSelf(tensor.getType());
  cs.acc = getAccumulationType(cs.element);
  cs.numSums = numSums;
  return cs;
}

SmallVector<Value> cuda::zeros(OpBuilder &b, Location loc, Type acc,
                               int64_t n) {
  return SmallVector<Value>(n, floatConstant(b, loc, 0.0, acc, 1));
}

Value PartialSums::index(Kernel &k, OpBuilder &b, Location loc, Value image,
                         Value channel, Value part, int64_t kk) const {
  IndexMath ix{b, loc};
  auto z = [&](Value host) { return k.size(b, loc, host); };
  int64_t stride = constantOr(sumStride);
  Value sum = ShapedType::isDynamic(stride) ? ix.mul(z(sumStride), kk)
                                            : ix.c(kk * stride);
  return ix.add(
      ix.add(ix.mul(image, z(imageStride)), ix.mul(channel, z(channelStride))),
      ix.add(ix.mul(part, z(partStride)), sum));
}

Value PartialSums::partCount(Kernel &k, OpBuilder &b, Location loc, Value part,
                             Type type) const {
  IndexMath ix{b, loc};
  auto toFloat = [&](Value n) -> Value {
    return b.create<arith::UIToFPOp>(
        loc, type, b.create<arith::IndexCastUIOp>(loc, b.getI64Type(), n));
  };
  /// max(0, min(limit - begin, len)) for unsigned indices.
  auto clamped = [&](OpBuilder &cb, Value begin, Value limit, Value len) {
    Value inside =
        cb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, begin, limit);
    Value left = cb.create<arith::MinUIOp>(
        loc, cb.create<arith::SubIOp>(loc, limit, begin), len);
    return cb.create<arith::SelectOp>(loc, inside, left,
                                      IndexMath{cb, loc}.c(0));
  };
  if (!channelsLast) {
    Value len = k.size(b, loc, partLen);
    return toFloat(clamped(b, ix.mul(part, len), k.size(b, loc, count), len));
  }
  // Each trip t adds the positions [t * parts * R + part * R, + R).
  auto loop = b.create<scf::ForOp>(
      loc, ix.c(0), k.size(b, loc, trips), ix.c(1), ValueRange{ix.c(0)},
      [&](OpBuilder &fb, Location fl, Value t, ValueRange n) {
        IndexMath fx{fb, fl};
        int64_t known = constantOr(parts);
        Value stride = known >= 0 ? fx.c(known * rowsPerBlock)
                                  : fx.mul(k.size(fb, fl, parts), rowsPerBlock);
        Value begin = fx.add(fx.mul(t, stride), fx.mul(part, rowsPerBlock));
        fb.create<scf::YieldOp>(
            fl, ValueRange{
                    fx.add(n[0], clamped(fb, begin, k.size(fb, fl, positions),
                                         fx.c(rowsPerBlock)))});
      });
  return toFloat(loop.getResult(0));
}

namespace {

/// The values of the per-channel operands at `channel` + 0 .. vw - 1 of
/// `image`: vw lanes of each operand in turn.
SmallVector<Value> loadPerChannel(Kernel &k, OpBuilder &b, Location loc,
                                  const ChannelSums &cs, ValueRange operands,
                                  Value image, Value channel, int64_t vw) {
  SmallVector<Value> values;
  for (Value operand : operands) {
    if (!cs.paramIndex) {
      SmallVector<Value> lanes =
          loadLanes(b, loc, operand, channel, vw, cs.acc);
      values.append(lanes.begin(), lanes.end());
      continue;
    }
    IndexMath ix{b, loc};
    for (int64_t l = 0; l < vw; ++l)
      values.push_back(
          loadLanes(b, loc, operand,
                    cs.paramIndex(k, b, loc, image, ix.add(channel, ix.c(l))),
                    1, cs.acc)[0]);
  }
  return values;
}

/// The sums kernel of a channels-last reduction: block (image, slot) loops
/// over the image's positions slot * R + group, + slots * R, ... and
/// writes partial row `bid` (`slots` per image).
Kernel buildChannelsLastSums(ModuleOp module, Location loc,
                             const std::string &name, const ChannelSums &cs,
                             const ChannelReductionSchedule &s,
                             const PartialSums &p, TypeRange types,
                             SumsFn sumsFn) {
  const ChannelDims &d = cs.dims;
  int64_t K = cs.numSums, T = s.threadsPerRow, R = s.rowsPerBlock,
          vw = s.vectorWidth, vpt = s.vectorsPerThread;
  int64_t channels = constantOr(d.channels); // static here
  Kernel k = createKernel(module, loc, name, types, s.blockSize(), s.str());
  OpBuilder &b = k.body;
  Value slots = k.size(b, loc, p.parts);
  Value positions = k.size(b, loc, p.positions);
  Value trips = k.size(b, loc, p.trips);
  // The positions between a block's trips: slots * R.
  Value tripStride = constantOr(p.parts) >= 0
                         ? indexConstant(b, loc, constantOr(p.parts) * R)
                         : IndexMath{b, loc}.mul(slots, R);
  Type acc = cs.acc;
  auto c = [&](OpBuilder &ib, int64_t v) { return indexConstant(ib, loc, v); };
  Value handOver =
      R > 1 ? addWorkgroupBuffer(k, loc, (R - 1) * vpt * T * vw, acc) : Value();
  unsigned numIn = cs.inputs.size(), numPer = cs.perChannel.size();
  Value partial = k.arg(numIn + numPer);

  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value lane = R > 1 ? b.create<arith::RemUIOp>(loc, tid, c(b, T)) : tid;
  Value group = R > 1 ? b.create<arith::DivUIOp>(loc, tid, c(b, T)) : c(b, 0);
  IndexMath ix{b, loc};
  Value image = ix.div(bid, slots), slot = ix.rem(bid, slots);
  bool allColumns = vpt * T * vw == channels;
  SmallVector<Value> cols, colValid;
  SmallVector<SmallVector<Value>> perChannel; // [kv][operand * vw + l]
  for (int64_t kv = 0; kv < vpt; ++kv) {
    Value col = b.create<arith::MulIOp>(
        loc, b.create<arith::AddIOp>(loc, lane, c(b, kv * T)), c(b, vw));
    cols.push_back(col);
    Value valid = allColumns
                      ? Value()
                      : b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                                col, c(b, channels));
    colValid.push_back(valid);
    auto load = [&](OpBuilder &lb, Location ll) {
      SmallVector<Value> operands;
      for (unsigned p = 0; p < numPer; ++p)
        operands.push_back(k.arg(numIn + p));
      return loadPerChannel(k, lb, ll, cs, operands, image, col, vw);
    };
    if (numPer == 0)
      perChannel.emplace_back();
    else
      perChannel.push_back(emitValuesIf(b, loc, valid, acc, load));
  }

  /// Per element (lane l of vector kv): its `n` terms.
  using TermsFn = llvm::function_ref<SmallVector<Value>(
      OpBuilder &, Location, ArrayRef<Value> in, ArrayRef<Value> params,
      int64_t kv, int64_t l)>;
  /// The `n` terms of each lane of the vector at `offset` (column vector
  /// kv), [kk * vw + l].
  auto termsAt = [&](OpBuilder &tb, Location tl, Value offset, int64_t kv,
                     int64_t n, TermsFn terms) {
    SmallVector<SmallVector<Value>> in;
    for (unsigned i = 0; i < numIn; ++i)
      in.push_back(loadLanes(tb, tl, k.arg(i), offset, vw, acc));
    SmallVector<Value> o(n * vw);
    for (int64_t l = 0; l < vw; ++l) {
      SmallVector<Value> lanes, params;
      for (auto &v : in)
        lanes.push_back(v[l]);
      for (unsigned p = 0; p < numPer; ++p)
        params.push_back(perChannel[kv][p * vw + l]);
      SmallVector<Value> t = terms(tb, tl, lanes, params, kv, l);
      for (int64_t kk = 0; kk < n; ++kk)
        o[kk * vw + l] = t[kk];
    }
    return o;
  };
  /// The sums of `n` terms over the block's positions: [(kk * vpt + kv) *
  /// vw + l] is term kk of column (kv * T + lane) * vw + l, in this thread.
  auto sweep = [&](int64_t n, TermsFn terms) {
    auto loop = b.create<scf::ForOp>(
        loc, c(b, 0), trips, c(b, 1), zeros(b, loc, acc, n * vpt * vw),
        [&](OpBuilder &fb, Location fl, Value trip, ValueRange accs) {
          IndexMath fx{fb, fl};
          Value pos =
              fx.add(fx.add(fx.mul(slot, R), group), fx.mul(trip, tripStride));
          Value posValid = fb.create<arith::CmpIOp>(
              fl, arith::CmpIPredicate::ult, pos, positions);
          Value base = fx.mul(fx.add(fx.mul(image, positions), pos), channels);
          SmallVector<Value> next(accs.begin(), accs.end());
          for (int64_t kv = 0; kv < vpt; ++kv) {
            Value valid = fx.both(posValid, colValid[kv]);
            Value offset = fb.create<arith::AddIOp>(fl, base, cols[kv]);
            // Invalid elements add nothing (their value may not be 0).
            SmallVector<Value> out = emitValuesIf(
                fb, fl, valid, acc, [&](OpBuilder &tb, Location tl) {
                  return termsAt(tb, tl, offset, kv, n, terms);
                });
            for (int64_t kk = 0; kk < n; ++kk)
              for (int64_t l = 0; l < vw; ++l) {
                int64_t at = (kk * vpt + kv) * vw + l;
                next[at] =
                    fb.create<arith::AddFOp>(fl, next[at], out[kk * vw + l]);
              }
          }
          fb.create<scf::YieldOp>(fl, next);
        });
    return SmallVector<Value>(loop.getResults());
  };
  Value first =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, group, c(b, 0));
  /// Group 0 writes `values` (a value per column of this thread) as
  /// partial row `bid * rows + kk`: partial[(bid * rows + kk) * C + column],
  /// with `rows` values per part (K sums, or a mean and an M2).
  int64_t rowsPerPart = cs.moments ? 3 : K;
  auto writeRow = [&](ArrayRef<Value> values, int64_t kk) {
    IndexMath wx{b, loc};
    Value rowBase =
        wx.mul(wx.add(wx.mul(bid, rowsPerPart), wx.c(kk)), channels);
    for (int64_t kv = 0; kv < vpt; ++kv) {
      Value write = wx.both(first, colValid[kv]);
      Value at = b.create<arith::AddIOp>(loc, rowBase, cols[kv]);
      ArrayRef<Value> lanes = values.slice(kv * vw, vw);
      b.create<scf::IfOp>(loc, write, [&](OpBuilder &tb, Location tl) {
        storeLanes(tb, tl, lanes, partial, at);
        tb.create<scf::YieldOp>(tl);
      });
    }
  };

  if (!cs.moments) {
    SmallVector<Value> sums =
        sweep(K, [&](OpBuilder &tb, Location tl, ArrayRef<Value> in,
                     ArrayRef<Value> params, int64_t,
                     int64_t) { return sumsFn(tb, tl, in, params); });
    // The block's row groups combine; group 0 writes the partial rows.
    for (int64_t kk = 0; kk < K; ++kk) {
      ArrayRef<Value> mine =
          ArrayRef<Value>(sums).slice(kk * vpt * vw, vpt * vw);
      writeRow(emitRowGroupSums(b, loc, mine, handOver, group, lane, R, T, vw),
               kk);
    }
    return k;
  }

  // Moments: the block's mean of each column, then the squared deviations
  // from it (a second sweep over the same positions, from cache on a GPU).
  // Both are taken around a pivot, the column's value at the image's first
  // position (the same in every block), and the mean is written as its
  // distance from the pivot: rounding then costs |mean - pivot| rather
  // than |mean| (a column of mean 100 and std 0.01 keeps its variance,
  // also through Chan's formula across the parts, which the finishing
  // kernel applies to these distances).
  auto value = [&](OpBuilder &tb, Location tl, ArrayRef<Value> in,
                   ArrayRef<Value> params) {
    return sumsFn(tb, tl, in, params)[0];
  };
  // (The kernel runs only where there are positions.)
  SmallVector<Value> pivots; // [kv * vw + l]
  {
    IndexMath px{b, loc};
    Value base = px.mul(px.mul(image, positions), channels);
    for (int64_t kv = 0; kv < vpt; ++kv) {
      SmallVector<Value> lanes = emitValuesIf(
          b, loc, colValid[kv], acc, [&](OpBuilder &tb, Location tl) {
            return termsAt(
                tb, tl, tb.create<arith::AddIOp>(tl, base, cols[kv]), kv, 1,
                [&](OpBuilder &vb, Location vl, ArrayRef<Value> in,
                    ArrayRef<Value> params, int64_t, int64_t) {
                  return SmallVector<Value>{value(vb, vl, in, params)};
                });
          });
      pivots.append(lanes.begin(), lanes.end());
    }
  }
  SmallVector<Value> sums =
      sweep(1, [&](OpBuilder &tb, Location tl, ArrayRef<Value> in,
                   ArrayRef<Value> params, int64_t kv, int64_t l) {
        return SmallVector<Value>{tb.create<arith::SubFOp>(
            tl, value(tb, tl, in, params), pivots[kv * vw + l])};
      });
  SmallVector<Value> total =
      emitRowGroupSums(b, loc, sums, handOver, group, lane, R, T, vw);
  Value count = p.partCount(k, b, loc, slot, acc);
  Value safeCount = b.create<arith::MaximumFOp>(
      loc, count, floatConstant(b, loc, 1.0, acc, 1));
  SmallVector<Value> means; // from the pivots
  for (Value t : total)
    means.push_back(b.create<arith::DivFOp>(loc, t, safeCount));
  if (R > 1) {
    // Group 0's means to every group, through the hand-over buffer.
    auto slotOf = [&](OpBuilder &ib, int64_t kv, int64_t l) {
      IndexMath sx{ib, loc};
      return sx.add(sx.mul(sx.add(lane, sx.c(kv * T)), vw), sx.c(l));
    };
    b.create<scf::IfOp>(loc, first, [&](OpBuilder &tb, Location tl) {
      for (int64_t kv = 0; kv < vpt; ++kv)
        for (int64_t l = 0; l < vw; ++l)
          tb.create<memref::StoreOp>(tl, means[kv * vw + l], handOver,
                                     slotOf(tb, kv, l));
      tb.create<scf::YieldOp>(tl);
    });
    b.create<gpu::BarrierOp>(loc);
    for (int64_t kv = 0; kv < vpt; ++kv)
      for (int64_t l = 0; l < vw; ++l)
        means[kv * vw + l] =
            b.create<memref::LoadOp>(loc, handOver, slotOf(b, kv, l));
    b.create<gpu::BarrierOp>(loc);
  }
  SmallVector<Value> squares =
      sweep(1, [&](OpBuilder &tb, Location tl, ArrayRef<Value> in,
                   ArrayRef<Value> params, int64_t kv, int64_t l) {
        Value dev = tb.create<arith::SubFOp>(
            tl,
            tb.create<arith::SubFOp>(tl, value(tb, tl, in, params),
                                     pivots[kv * vw + l]),
            means[kv * vw + l]);
        return SmallVector<Value>{tb.create<arith::MulFOp>(tl, dev, dev)};
      });
  writeRow(means, 0);
  writeRow(emitRowGroupSums(b, loc, squares, handOver, group, lane, R, T, vw),
           1);
  writeRow(pivots, 2);
  return k;
}

/// The sums kernel of a channels-first reduction: block (image, channel,
/// part) sums its part of the (image, channel)'s outer x inner elements
/// and writes partial[((image * C + channel) * parts + part) * K + kk].
Kernel buildChannelsFirstSums(ModuleOp module, Location loc,
                              const std::string &name, const ChannelSums &cs,
                              const ChannelReductionSchedule &s,
                              const PartialSums &p, TypeRange types,
                              SumsFn sumsFn) {
  const ChannelDims &d = cs.dims;
  int64_t K = cs.numSums, T = s.threadsPerRow, vw = s.vectorWidth;
  Kernel k = createKernel(module, loc, name, types, s.blockSize(), s.str());
  OpBuilder &b = k.body;
  Value parts = k.size(b, loc, p.parts), partLen = k.size(b, loc, p.partLen);
  Value count = k.size(b, loc, p.count);
  Value channels = k.size(b, loc, d.channels);
  Value outerSize = k.size(b, loc, d.outer), inner = k.size(b, loc, d.inner);
  Type acc = cs.acc;
  auto c = [&](OpBuilder &ib, int64_t v) { return indexConstant(ib, loc, v); };
  Value scratch = T > 32 ? addWorkgroupBuffer(k, loc, T / 32, acc) : Value();
  unsigned numIn = cs.inputs.size(), numPer = cs.perChannel.size();
  Value partial = k.arg(numIn + numPer);

  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  IndexMath ix{b, loc};
  Value key = ix.div(bid, parts), part = ix.rem(bid, parts);
  Value image = ix.div(key, channels), channel = ix.rem(key, channels);
  SmallVector<Value> operands;
  for (unsigned p = 0; p < numPer; ++p)
    operands.push_back(k.arg(numIn + p));
  SmallVector<Value> params =
      loadPerChannel(k, b, loc, cs, operands, image, channel, 1);
  Value begin = b.create<arith::MulIOp>(loc, part, partLen);
  Value end = b.create<arith::MinUIOp>(
      loc, b.create<arith::AddIOp>(loc, begin, partLen), count);
  Value start = b.create<arith::AddIOp>(
      loc, begin, b.create<arith::MulIOp>(loc, tid, c(b, vw)));
  /// The block's totals of `n` terms per element (every thread has them).
  auto sweep = [&](int64_t n, llvm::function_ref<SmallVector<Value>(
                                  OpBuilder &, Location, ArrayRef<Value>)>
                                  terms) {
    auto loop = b.create<scf::ForOp>(
        loc, start, end, c(b, T * vw), zeros(b, loc, acc, n),
        [&](OpBuilder &fb, Location fl, Value j, ValueRange accs) {
          // Element j of the (image, channel): outer index j / inner,
          // position j % inner.
          IndexMath fx{fb, fl};
          Value outer = fx.add(fx.mul(image, outerSize), fx.div(j, inner));
          Value offset =
              fx.add(fx.mul(fx.add(fx.mul(outer, channels), channel), inner),
                     fx.rem(j, inner));
          SmallVector<SmallVector<Value>> in;
          for (unsigned i = 0; i < numIn; ++i)
            in.push_back(loadLanes(fb, fl, k.arg(i), offset, vw, acc));
          SmallVector<Value> next(accs.begin(), accs.end());
          for (int64_t l = 0; l < vw; ++l) {
            SmallVector<Value> lanes;
            for (auto &v : in)
              lanes.push_back(v[l]);
            SmallVector<Value> t = terms(fb, fl, lanes);
            for (int64_t kk = 0; kk < n; ++kk)
              next[kk] = fb.create<arith::AddFOp>(fl, next[kk], t[kk]);
          }
          fb.create<scf::YieldOp>(fl, next);
        });
    SmallVector<Value> totals;
    for (Value v : loop.getResults())
      totals.push_back(T > 32 ? emitBlockSum(b, loc, v, scratch, T)
                              : emitWarpSum(b, loc, v, T));
    return totals;
  };
  SmallVector<Value> totals;
  if (!cs.moments) {
    totals = sweep(K, [&](OpBuilder &fb, Location fl, ArrayRef<Value> lanes) {
      return sumsFn(fb, fl, lanes, params);
    });
  } else {
    // The part's mean, then the squared deviations from it.
    Value count = b.create<arith::UIToFPOp>(
        loc, acc,
        b.create<arith::IndexCastUIOp>(
            loc, b.getI64Type(),
            b.create<arith::SubIOp>(
                loc, b.create<arith::MaxUIOp>(loc, end, begin), begin)));
    Value safeCount = b.create<arith::MaximumFOp>(
        loc, count, floatConstant(b, loc, 1.0, acc, 1));
    // Around a pivot, the (image, channel)'s first element, the mean as its
    // distance from the pivot (see the channels-last kernel).
    Value pivot;
    {
      IndexMath tx{b, loc};
      Value offset = tx.mul(
          tx.add(tx.mul(tx.mul(image, outerSize), channels), channel), inner);
      SmallVector<Value> lanes;
      for (unsigned i = 0; i < numIn; ++i)
        lanes.push_back(loadLanes(b, loc, k.arg(i), offset, 1, acc)[0]);
      pivot = sumsFn(b, loc, lanes, params)[0];
    }
    auto fromPivot = [&](OpBuilder &fb, Location fl, ArrayRef<Value> lanes) {
      return fb.create<arith::SubFOp>(fl, sumsFn(fb, fl, lanes, params)[0],
                                      pivot);
    };
    Value mean = b.create<arith::DivFOp>(
        loc,
        sweep(1,
              [&](OpBuilder &fb, Location fl, ArrayRef<Value> lanes) {
                return SmallVector<Value>{fromPivot(fb, fl, lanes)};
              })[0],
        safeCount);
    Value m2 = sweep(1, [&](OpBuilder &fb, Location fl, ArrayRef<Value> lanes) {
      Value dev = fb.create<arith::SubFOp>(fl, fromPivot(fb, fl, lanes), mean);
      return SmallVector<Value>{fb.create<arith::MulFOp>(fl, dev, dev)};
    })[0];
    totals = {mean, m2, pivot};
  }
  Value firstThread =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid, c(b, 0));
  b.create<scf::IfOp>(loc, firstThread, [&](OpBuilder &tb, Location tl) {
    int64_t n = totals.size();
    Value base = tb.create<arith::MulIOp>(tl, bid, c(tb, n));
    for (int64_t kk = 0; kk < n; ++kk) {
      Value at = tb.create<arith::AddIOp>(tl, base, c(tb, kk));
      tb.create<memref::StoreOp>(tl, totals[kk], partial, at);
    }
    tb.create<scf::YieldOp>(tl);
  });
  return k;
}

} // namespace

Value cuda::channelPartsWithin(OpBuilder &b, Location loc, const ChannelDims &d,
                               const ChannelReductionSchedule &s,
                               Value maxBlocks) {
  IndexMath im{b, loc};
  auto min = [&](Value x, Value y) {
    return b.createOrFold<arith::MinUIOp>(loc, x, y);
  };
  auto max = [&](Value x, Value y) {
    return b.createOrFold<arith::MaxUIOp>(loc, x, y);
  };
  Value one = im.c(1), zero = im.c(0);
  Value count = d.count(b, loc);
  Value parts;
  if (d.channelsLast()) {
    // Enough blocks per image for its positions, about maxBlocks in all.
    parts = min(im.ceilDiv(d.outer, s.rowsPerBlock),
                max(one, b.createOrFold<arith::DivUIOp>(loc, maxBlocks,
                                                        max(d.images, one))));
  } else {
    // At most maxBlocks blocks in all where the channels allow (one wave
    // where maxBlocks is what the device holds: rounding up made C=256 1280
    // blocks of 1056, 1.21 waves), none with less than a vector per thread.
    Value byWork = max(one, im.ceilDiv(count, s.threadsPerRow * s.vectorWidth));
    Value byGrid = max(
        one, b.createOrFold<arith::DivUIOp>(
                 loc, maxBlocks, max(im.product(d.images, d.channels), one)));
    parts = min(byWork, byGrid);
  }
  // An empty tensor has no parts: every sum is 0.
  Value isEmpty =
      b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, count, zero);
  return b.createOrFold<arith::SelectOp>(loc, isEmpty, zero, parts);
}

int64_t cuda::plannedChannelParts(RankedTensorType type, Layout layout,
                                  bool perImage,
                                  const ChannelReductionSchedule &s,
                                  Location loc) {
  // The lowering's own rule, on a buffer of the tensor's shape in a
  // detached block: the sizes fold to constants where they are static.
  Block scratch;
  Value buffer = scratch.addArgument(
      MemRefType::get(type.getShape(), type.getElementType()), loc);
  OpBuilder b(loc.getContext());
  b.setInsertionPointToStart(&scratch);
  ChannelDims d = getChannelDims(b, loc, buffer, layout, perImage);
  return constantOr(
      channelPartsWithin(b, loc, d, s, IndexMath{b, loc}.c(s.maxBlocks)));
}

PartialSums cuda::emitPartialChannelSums(
    OpBuilder &b, Operation *op, llvm::StringRef what, const ChannelSums &cs,
    const ChannelReductionSchedule &s, const GpuTarget &target, SumsFn sumsFn) {
  Location loc = op->getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  const ChannelDims &d = cs.dims;
  // Values per part: the sums, or a mean (from the pivot), an M2 and the
  // pivot.
  int64_t K = cs.moments ? 3 : cs.numSums;
  std::string name = kernelBaseName(op, what) + "_sums";
  // The host's sizes: constants where the shape is static.
  IndexMath im{b, loc};
  auto max = [&](Value x, Value y) {
    return b.createOrFold<arith::MaxUIOp>(loc, x, y);
  };
  auto ifNonZero = [&](Value n, Value v) {
    Value zero = im.c(0);
    Value isZero =
        b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, n, zero);
    return b.createOrFold<arith::SelectOp>(loc, isZero, zero, v);
  };
  Value one = im.c(1);
  PartialSums p;
  p.channelsLast = d.channelsLast();
  p.positions = d.outer;
  p.rowsPerBlock = s.rowsPerBlock;
  p.count = d.count(b, loc);
  // maxBlocks, or as many as the device holds of the kernel (known when it
  // is loaded, at most maxBlocks).
  p.parts = channelPartsWithin(b, loc, d, s, im.c(s.maxBlocks));
  p.plannedParts = constantOr(p.parts);
  int64_t perPart =
      constantOr(im.product(d.images, p.channelsLast ? one : d.channels));
  ResidentBlocksOp resident;
  if (residencyMatters(p.plannedParts >= 0 && perPart >= 0
                           ? p.plannedParts * perPart
                           : ShapedType::kDynamic,
                       target)) {
    resident = residentBlocks(b, loc, s.blockSize(), s.maxBlocks);
    p.parts = channelPartsWithin(b, loc, d, s, resident);
  }
  if (p.channelsLast)
    p.trips = ifNonZero(
        p.parts,
        im.ceilDiv(d.outer,
                   max(im.product(p.parts, im.c(s.rowsPerBlock)), one)));
  // Parts start on whole vectors, so a vector never crosses an image.
  p.partLen = ifNonZero(
      p.parts, im.product(im.ceilDiv(im.ceilDiv(p.count, max(p.parts, one)),
                                     s.vectorWidth),
                          im.c(s.vectorWidth)));
  if (p.channelsLast) {
    p.partStride = im.product(im.c(K), d.channels);
    p.sumStride = d.channels;
    p.channelStride = one;
  } else {
    p.partStride = im.c(K);
    p.sumStride = one;
    p.channelStride = im.product(p.parts, im.c(K));
  }
  p.imageStride = im.product(im.product(p.parts, im.c(K)), d.channels);
  p.buffer =
      allocTemporary(b, loc, im.product(d.images, p.imageStride), cs.acc);
  SmallVector<Value> args(cs.inputs);
  args.append(cs.perChannel.begin(), cs.perChannel.end());
  args.push_back(p.buffer);
  TypeRange types = ValueRange(args).getTypes();
  Kernel kernel =
      p.channelsLast
          ? buildChannelsLastSums(module, loc, name, cs, s, p, types, sumsFn)
          : buildChannelsFirstSums(module, loc, name, cs, s, p, types, sumsFn);
  if (resident)
    bindResidentBlocks(resident, kernel.func, target);
  Value grid = im.product(im.product(d.images, p.parts),
                          p.channelsLast ? one : d.channels);
  if (cs.gridFactor)
    grid = im.product(grid, cs.gridFactor);
  // Launched where there are parts: where the tensor is not empty.
  launchUnlessEmpty(b, loc, kernel, grid, s.blockSize(), args,
                    im.product(im.product(d.images, p.count),
                               p.channelsLast ? one : d.channels));
  return p;
}

Value cuda::totalsIndex(Kernel &k, OpBuilder &b, Location loc,
                        const ChannelSums &cs, Value image, Value channel,
                        int64_t kk) {
  IndexMath ix{b, loc};
  Value channels = k.size(b, loc, cs.dims.channels);
  return ix.madd(ix.madd(image, cs.numSums, ix.c(kk)), channels, channel);
}

void cuda::emitColumnTotals(OpBuilder &b, Location loc, ModuleOp module,
                            const std::string &name, const ColumnTotals &t,
                            const PartialTotalsSchedule &s) {
  const int64_t K = t.numSums, warpSize = GpuTarget::kWarpSize;
  IndexMath im{b, loc};
  Value runs = im.ceilDiv(t.columns, warpSize);
  SmallVector<Value> args(t.inputs);
  args.append(t.outputs.begin(), t.outputs.end());
  Kernel k = createKernel(module, loc, name, ValueRange(args).getTypes(),
                          s.blockSize(), s.str());
  {
    OpBuilder &kb = k.body;
    IndexMath ix{kb, loc};
    Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    Value bid = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
    Value lane = ix.rem(tid, warpSize), warp = ix.div(tid, warpSize);
    Value kRuns = k.size(kb, loc, runs);
    Value image = ix.div(bid, kRuns);
    Value column = ix.madd(ix.rem(bid, kRuns), warpSize, lane);
    Value isColumn = ix.below(column, k.size(kb, loc, t.columns));
    Value parts = k.size(kb, loc, t.parts);
    // Warp w: the runs of `unroll` parts from w * unroll, every `warps`
    // runs; slot u of a run adds into its own total.
    auto loop = kb.create<scf::ForOp>(
        loc, ix.mul(warp, s.unroll), parts, ix.c(s.warps * s.unroll),
        zeros(kb, loc, t.acc, s.unroll * K),
        [&](OpBuilder &lb, Location ll, Value first, ValueRange slots) {
          IndexMath li{lb, ll};
          SmallVector<Value> next;
          for (int64_t u = 0; u < s.unroll; ++u) {
            Value part = u ? li.add(first, li.c(u)) : first;
            Value valid = li.both(isColumn, li.below(part, parts));
            SmallVector<Value> loaded = emitValuesIf(
                lb, ll, valid, t.acc, [&](OpBuilder &vb, Location vl) {
                  SmallVector<Value> v;
                  for (int64_t kk = 0; kk < K; ++kk)
                    v.push_back(t.load(k, vb, vl, image, column, part, kk));
                  return v;
                });
            SmallVector<Value> slot(slots.slice(u * K, K));
            if (t.combine) {
              llvm::append_range(next, t.combine(lb, ll, slot, loaded));
              continue;
            }
            for (int64_t kk = 0; kk < K; ++kk)
              next.push_back(
                  lb.create<arith::AddFOp>(ll, slot[kk], loaded[kk]));
          }
          lb.create<scf::YieldOp>(ll, next);
        });
    // The slots' totals in slot order, then the warps' in warp order
    // (valid in warp 0).
    SmallVector<Value> own(loop.getResults().take_front(K));
    for (int64_t u = 1; u < s.unroll; ++u) {
      SmallVector<Value> slot(loop.getResults().slice(u * K, K));
      if (t.combine) {
        own = t.combine(kb, loc, own, slot);
        continue;
      }
      for (int64_t kk = 0; kk < K; ++kk)
        own[kk] = kb.create<arith::AddFOp>(loc, own[kk], slot[kk]);
    }
    Value handOver =
        s.warps > 1
            ? addWorkgroupBuffer(k, loc, (s.warps - 1) * K * warpSize, t.acc)
            : Value();
    SmallVector<Value> sums = emitRowGroupSums(
        kb, loc, own, handOver, warp, lane, s.warps, warpSize, 1, t.combine);
    Value store = ix.both(
        isColumn,
        kb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, warp, ix.c(0)));
    kb.create<scf::IfOp>(loc, store, [&](OpBuilder &tb, Location tl) {
      t.store(k, tb, tl, image, column, sums);
      tb.create<scf::YieldOp>(tl);
    });
  }
  // (Launched where the unscaled grid is not empty: a launch plan takes
  // no condition from what the device holds.)
  Value work = im.product(t.images, runs);
  Value grid = t.gridFactor ? im.product(work, t.gridFactor) : work;
  launchUnlessEmpty(b, loc, k, grid, s.blockSize(), args, work);
}

Value cuda::emitPartialTotals(OpBuilder &b, Operation *op, llvm::StringRef what,
                              const ChannelSums &cs, const PartialSums &p,
                              const PartialTotalsSchedule &s) {
  assert(!cs.moments && "moments combine by Chan's formula, not by sums");
  Location loc = op->getLoc();
  const ChannelDims &d = cs.dims;
  IndexMath im{b, loc};
  ColumnTotals t;
  t.images = d.images;
  t.columns = d.channels;
  t.parts = p.parts;
  t.numSums = cs.numSums;
  t.acc = cs.acc;
  t.gridFactor = cs.gridFactor;
  t.inputs = {p.buffer};
  t.outputs = {allocTemporary(
      b, loc, im.product(im.product(d.images, im.c(cs.numSums)), d.channels),
      cs.acc)};
  t.load = [&](Kernel &k, OpBuilder &lb, Location ll, Value image,
               Value channel, Value part, int64_t kk) -> Value {
    return lb.create<memref::LoadOp>(
        ll, k.arg(0), p.index(k, lb, ll, image, channel, part, kk));
  };
  t.store = [&](Kernel &k, OpBuilder &sb, Location sl, Value image,
                Value channel, ArrayRef<Value> totals) {
    for (auto [kk, v] : llvm::enumerate(totals))
      sb.create<memref::StoreOp>(
          sl, v, k.arg(1), totalsIndex(k, sb, sl, cs, image, channel, kk));
  };
  emitColumnTotals(b, loc, op->getParentOfType<ModuleOp>(),
                   kernelBaseName(op, what) + "_totals", t, s);
  return t.outputs[0];
}
