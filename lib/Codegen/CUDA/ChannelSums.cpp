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

ChannelDims cuda::getChannelDims(RankedTensorType type, Layout layout,
                                 bool perImage) {
  int64_t rank = type.getRank();
  int64_t axis = getChannelAxis(layout, rank);
  ChannelDims d;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t size = type.getDimSize(i);
    if (i == 0 && perImage)
      d.images = size;
    else if (i < axis)
      d.outer *= size;
    else if (i == axis)
      d.channels = size;
    else
      d.inner *= size;
  }
  return d;
}

ChannelSums cuda::channelSumsOf(RankedTensorType type, Layout layout,
                                int64_t numSums, bool perImage) {
  ChannelSums cs;
  cs.dims = getChannelDims(type, layout, perImage);
  cs.element = type.getElementType();
  cs.acc = getAccumulationType(cs.element);
  cs.numSums = numSums;
  return cs;
}

SmallVector<Value> cuda::zeros(OpBuilder &b, Location loc, Type acc,
                               int64_t n) {
  return SmallVector<Value>(n, floatConstant(b, loc, 0.0, acc, 1));
}

Value PartialSums::index(OpBuilder &b, Location loc, Value image, Value channel,
                         Value part, int64_t kk) const {
  IndexMath ix{b, loc};
  return ix.add(
      ix.add(ix.mul(image, imageStride), ix.mul(channel, channelStride)),
      ix.add(ix.mul(part, partStride), ix.c(kk * sumStride)));
}

namespace {

/// The values of the per-channel operands at `channel` + 0 .. vw - 1 of
/// `image`: vw lanes of each operand in turn.
SmallVector<Value> loadPerChannel(OpBuilder &b, Location loc,
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
                    cs.paramIndex(b, loc, image, ix.add(channel, ix.c(l))), 1,
                    cs.acc)[0]);
  }
  return values;
}

/// The blocks of each image of a channels-last reduction: enough for its
/// positions, about maxBlocks in all.
int64_t channelsLastSlots(const ChannelDims &d,
                          const ChannelReductionSchedule &s) {
  return std::min<int64_t>(
      llvm::divideCeil(d.outer, s.rowsPerBlock),
      std::max<int64_t>(1, s.maxBlocks / std::max<int64_t>(d.images, 1)));
}

/// The sums kernel of a channels-last reduction: block (image, slot) loops
/// over the image's positions slot * R + group, + slots * R, ... and
/// writes partial row `bid` (`slots` per image).
gpu::GPUFuncOp
buildChannelsLastSums(ModuleOp module, Location loc, const std::string &name,
                      const ChannelSums &cs, const ChannelReductionSchedule &s,
                      int64_t slots, TypeRange types, SumsFn sumsFn) {
  const ChannelDims &d = cs.dims;
  int64_t K = cs.numSums, T = s.threadsPerRow, R = s.rowsPerBlock,
          vw = s.vectorWidth, vpt = s.vectorsPerThread;
  int64_t positions = d.outer;
  int64_t trips = slots ? llvm::divideCeil(positions, slots * R) : 0;
  Kernel k = createKernel(module, loc, name, types, s.blockSize(), s.str());
  OpBuilder &b = k.body;
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
  bool allColumns = vpt * T * vw == d.channels;
  SmallVector<Value> cols, colValid;
  SmallVector<SmallVector<Value>> perChannel; // [kv][operand * vw + l]
  for (int64_t kv = 0; kv < vpt; ++kv) {
    Value col = b.create<arith::MulIOp>(
        loc, b.create<arith::AddIOp>(loc, lane, c(b, kv * T)), c(b, vw));
    cols.push_back(col);
    Value valid = allColumns
                      ? Value()
                      : b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                                col, c(b, d.channels));
    colValid.push_back(valid);
    auto load = [&](OpBuilder &lb, Location ll) {
      SmallVector<Value> operands;
      for (unsigned p = 0; p < numPer; ++p)
        operands.push_back(k.arg(numIn + p));
      return loadPerChannel(lb, ll, cs, operands, image, col, vw);
    };
    if (numPer == 0)
      perChannel.emplace_back();
    else
      perChannel.push_back(emitValuesIf(b, loc, valid, acc, load));
  }

  // acc[(kk * vpt + kv) * vw + l]: sum kk of column (kv * T + lane) * vw + l.
  auto loop = b.create<scf::ForOp>(
      loc, c(b, 0), c(b, trips), c(b, 1), zeros(b, loc, acc, K * vpt * vw),
      [&](OpBuilder &fb, Location fl, Value trip, ValueRange accs) {
        IndexMath fx{fb, fl};
        Value pos =
            fx.add(fx.add(fx.mul(slot, R), group), fx.mul(trip, slots * R));
        Value posValid = fb.create<arith::CmpIOp>(fl, arith::CmpIPredicate::ult,
                                                  pos, c(fb, positions));
        Value base = fx.mul(fx.add(fx.mul(image, positions), pos), d.channels);
        SmallVector<Value> next(accs.begin(), accs.end());
        for (int64_t kv = 0; kv < vpt; ++kv) {
          Value valid = colValid[kv] ? fb.create<arith::AndIOp>(fl, posValid,
                                                                colValid[kv])
                                     : posValid;
          Value offset = fb.create<arith::AddIOp>(fl, base, cols[kv]);
          // Invalid elements add nothing (their value may not be 0).
          auto ifOp = fb.create<scf::IfOp>(
              fl, valid,
              [&](OpBuilder &tb, Location tl) {
                SmallVector<SmallVector<Value>> in;
                for (unsigned i = 0; i < numIn; ++i)
                  in.push_back(loadLanes(tb, tl, k.arg(i), offset, vw, acc));
                SmallVector<Value> out(K * vw);
                for (int64_t l = 0; l < vw; ++l) {
                  SmallVector<Value> lanes, params;
                  for (auto &v : in)
                    lanes.push_back(v[l]);
                  for (unsigned p = 0; p < numPer; ++p)
                    params.push_back(perChannel[kv][p * vw + l]);
                  SmallVector<Value> sums = sumsFn(tb, tl, lanes, params);
                  for (int64_t kk = 0; kk < K; ++kk)
                    out[kk * vw + l] = sums[kk];
                }
                tb.create<scf::YieldOp>(tl, out);
              },
              [&](OpBuilder &eb, Location el) {
                eb.create<scf::YieldOp>(el, zeros(eb, el, acc, K * vw));
              });
          for (int64_t kk = 0; kk < K; ++kk)
            for (int64_t l = 0; l < vw; ++l) {
              int64_t at = (kk * vpt + kv) * vw + l;
              next[at] = fb.create<arith::AddFOp>(fl, next[at],
                                                  ifOp.getResult(kk * vw + l));
            }
        }
        fb.create<scf::YieldOp>(fl, next);
      });

  // The block's row groups combine; group 0 writes partial row `bid`:
  // partial[(bid * K + kk) * C + column].
  Value first =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, group, c(b, 0));
  for (int64_t kk = 0; kk < K; ++kk) {
    SmallVector<Value> mine(loop.getResults().begin() + kk * vpt * vw,
                            loop.getResults().begin() + (kk + 1) * vpt * vw);
    SmallVector<Value> total =
        emitRowGroupSums(b, loc, mine, handOver, group, lane, R, T, vw);
    Value rowBase = b.create<arith::MulIOp>(
        loc,
        b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, bid, c(b, K)),
                                c(b, kk)),
        c(b, d.channels));
    for (int64_t kv = 0; kv < vpt; ++kv) {
      Value write = colValid[kv]
                        ? b.create<arith::AndIOp>(loc, first, colValid[kv])
                        : first;
      Value at = b.create<arith::AddIOp>(loc, rowBase, cols[kv]);
      ArrayRef<Value> lanes = ArrayRef<Value>(total).slice(kv * vw, vw);
      b.create<scf::IfOp>(loc, write, [&](OpBuilder &tb, Location tl) {
        storeLanes(tb, tl, lanes, partial, at);
        tb.create<scf::YieldOp>(tl);
      });
    }
  }
  return k.func;
}

/// The parts each channel of a channels-first reduction is cut into: about
/// maxBlocks blocks in all, none with less than a vector per thread.
int64_t channelsFirstParts(const ChannelDims &d,
                           const ChannelReductionSchedule &s) {
  int64_t byWork = std::max<int64_t>(
      1, llvm::divideCeil(d.count(), s.threadsPerRow * s.vectorWidth));
  int64_t byGrid = std::max<int64_t>(
      1, llvm::divideCeil(s.maxBlocks,
                          std::max<int64_t>(d.images * d.channels, 1)));
  return std::min(byWork, byGrid);
}

/// The sums kernel of a channels-first reduction: block (image, channel,
/// part) sums its part of the (image, channel)'s outer x inner elements
/// and writes partial[((image * C + channel) * parts + part) * K + kk].
gpu::GPUFuncOp
buildChannelsFirstSums(ModuleOp module, Location loc, const std::string &name,
                       const ChannelSums &cs, const ChannelReductionSchedule &s,
                       int64_t parts, TypeRange types, SumsFn sumsFn) {
  const ChannelDims &d = cs.dims;
  int64_t K = cs.numSums, T = s.threadsPerRow, vw = s.vectorWidth;
  // Parts start on whole vectors, so a vector never crosses an image. An
  // empty tensor has no parts (and the kernel is never launched).
  int64_t partLen =
      parts ? llvm::alignTo(llvm::divideCeil(d.count(), parts), vw) : 0;
  Kernel k = createKernel(module, loc, name, types, s.blockSize(), s.str());
  OpBuilder &b = k.body;
  Type acc = cs.acc;
  auto c = [&](OpBuilder &ib, int64_t v) { return indexConstant(ib, loc, v); };
  Value scratch = T > 32 ? addWorkgroupBuffer(k, loc, T / 32, acc) : Value();
  unsigned numIn = cs.inputs.size(), numPer = cs.perChannel.size();
  Value partial = k.arg(numIn + numPer);

  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  IndexMath ix{b, loc};
  Value key = ix.div(bid, parts), part = ix.rem(bid, parts);
  Value image = ix.div(key, d.channels), channel = ix.rem(key, d.channels);
  SmallVector<Value> operands;
  for (unsigned p = 0; p < numPer; ++p)
    operands.push_back(k.arg(numIn + p));
  SmallVector<Value> params =
      loadPerChannel(b, loc, cs, operands, image, channel, 1);
  Value begin = b.create<arith::MulIOp>(loc, part, c(b, partLen));
  Value end = b.create<arith::MinUIOp>(
      loc, b.create<arith::AddIOp>(loc, begin, c(b, partLen)), c(b, d.count()));
  Value start = b.create<arith::AddIOp>(
      loc, begin, b.create<arith::MulIOp>(loc, tid, c(b, vw)));
  auto loop = b.create<scf::ForOp>(
      loc, start, end, c(b, T * vw), zeros(b, loc, acc, K),
      [&](OpBuilder &fb, Location fl, Value j, ValueRange accs) {
        // Element j of the (image, channel): outer index j / inner,
        // position j % inner.
        IndexMath fx{fb, fl};
        Value outer = fx.add(fx.mul(image, d.outer), fx.div(j, d.inner));
        Value offset =
            fx.add(fx.mul(fx.add(fx.mul(outer, d.channels), channel), d.inner),
                   fx.rem(j, d.inner));
        SmallVector<SmallVector<Value>> in;
        for (unsigned i = 0; i < numIn; ++i)
          in.push_back(loadLanes(fb, fl, k.arg(i), offset, vw, acc));
        SmallVector<Value> next(accs.begin(), accs.end());
        for (int64_t l = 0; l < vw; ++l) {
          SmallVector<Value> lanes;
          for (auto &v : in)
            lanes.push_back(v[l]);
          SmallVector<Value> sums = sumsFn(fb, fl, lanes, params);
          for (int64_t kk = 0; kk < K; ++kk)
            next[kk] = fb.create<arith::AddFOp>(fl, next[kk], sums[kk]);
        }
        fb.create<scf::YieldOp>(fl, next);
      });
  SmallVector<Value> totals;
  for (int64_t kk = 0; kk < K; ++kk)
    totals.push_back(T > 32
                         ? emitBlockSum(b, loc, loop.getResult(kk), scratch, T)
                         : emitWarpSum(b, loc, loop.getResult(kk), T));
  Value firstThread =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid, c(b, 0));
  b.create<scf::IfOp>(loc, firstThread, [&](OpBuilder &tb, Location tl) {
    Value base = tb.create<arith::MulIOp>(tl, bid, c(tb, K));
    for (int64_t kk = 0; kk < K; ++kk) {
      Value at = tb.create<arith::AddIOp>(tl, base, c(tb, kk));
      tb.create<memref::StoreOp>(tl, totals[kk], partial, at);
    }
    tb.create<scf::YieldOp>(tl);
  });
  return k.func;
}

} // namespace

PartialSums cuda::emitPartialChannelSums(OpBuilder &b, Operation *op,
                                         llvm::StringRef what,
                                         const ChannelSums &cs,
                                         const ChannelReductionSchedule &s,
                                         SumsFn sumsFn) {
  Location loc = op->getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  const ChannelDims &d = cs.dims;
  int64_t K = cs.numSums;
  std::string name = kernelBaseName(op, what) + "_sums";
  PartialSums p;
  if (d.channelsLast()) {
    p.parts = channelsLastSlots(d, s);
    p.partStride = K * d.channels;
    p.sumStride = d.channels;
    p.channelStride = 1;
  } else {
    p.parts = channelsFirstParts(d, s);
    p.partStride = K;
    p.sumStride = 1;
    p.channelStride = p.parts * K;
  }
  // An empty tensor has no parts: every sum is 0.
  if (d.count() == 0)
    p.parts = 0;
  p.imageStride = p.parts * K * d.channels;
  p.buffer = allocTemporary(
      b, loc, indexConstant(b, loc, d.images * p.imageStride), cs.acc);
  SmallVector<Value> args(cs.inputs);
  args.append(cs.perChannel.begin(), cs.perChannel.end());
  args.push_back(p.buffer);
  TypeRange types = ValueRange(args).getTypes();
  gpu::GPUFuncOp kernel = d.channelsLast()
                              ? buildChannelsLastSums(module, loc, name, cs, s,
                                                      p.parts, types, sumsFn)
                              : buildChannelsFirstSums(module, loc, name, cs, s,
                                                       p.parts, types, sumsFn);
  // Static shapes: an empty grid is known here and launches nothing.
  int64_t grid = d.images * p.parts * (d.channelsLast() ? 1 : d.channels);
  if (grid > 0)
    launch(b, loc, kernel, indexConstant(b, loc, grid), s.blockSize(), args);
  return p;
}
