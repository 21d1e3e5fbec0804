//===- LowerGroupNormNHWC.cpp - channels-last group norms on the GPU ------===//
//
// Part of normfuse. A group or instance norm in NHWC (with an nf.fused
// group's pointwise steps) under a ChannelsLastGroups schedule, as three
// kernels:
//
// - `_partial`: a block per part of an image (a run of positions), its
//   threads across each position's channels in whole vectors (the width
//   divides the channel count, whatever the channels per group) and over
//   `rowsPerBlock` positions. Each lane knows its group (computed once, no
//   division in the loops). Two sweeps over the part: the sums give each
//   group's mean over the part, the squared deviations from it its M2
//   (never E[x^2] - E[x]^2); each lane's sums go to shared memory and a
//   thread per group adds its channels' in a fixed order;
// - `_finish`: a block per (image, group) combines the group's parts
//   (Chan: each thread its parts in order, a butterfly in each warp whose
//   pairs combine the lower lane's side first, so both compute the same
//   bits, then the warps in order) into the mean and rstd (and the op's
//   mean and rstd results);
// - `_normalize`: the parts of the first kernel again, normalized, the
//   scale, bias and steps applied per lane's channel.
//
// Every global access is a whole vector of a position's contiguous
// channels; the split row it replaces read a group's 10 channels at each
// position (C=320 in 32 groups) in 8-byte vectors 1280 bytes apart.
//
//===----------------------------------------------------------------------===//

#include "RowNormKernel.h"
#include "normfuse/Codegen/Common/NormMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <functional>

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

/// The sizes every kernel of the schedule shares: channels, groups and
/// channels per group are constants (the schedule needs a known channel
/// count); the spatial size, the positions of a part and the parts per
/// image are host values.
struct Geometry {
  int64_t channels, groups, perGroup;
  Value spatial, chunk, parts;
};

/// A block of the first or third kernel: its image, its part's positions
/// [begin, end), the thread's channel vector (first channel `channel`) and
/// first position `row` within a sweep, and the group of each lane.
struct PartOfImage {
  Value image, part, begin, end, channel, row, imageBase;
  SmallVector<Value> groupOfLane;
};

PartOfImage emitPartOfImage(OpBuilder &b, Location loc,
                            const RowNormSchedule &s, const Geometry &g,
                            Value spatial, Value chunk, Value parts) {
  IndexMath ix{b, loc};
  PartOfImage p;
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  p.image = ix.div(bid, parts);
  p.part = ix.rem(bid, parts);
  p.begin = ix.mul(p.part, chunk);
  p.end = b.create<arith::MinUIOp>(loc, ix.add(p.begin, chunk), spatial);
  p.channel = ix.mul(ix.rem(tid, s.threadsPerRow), s.vectorWidth);
  p.row = ix.div(tid, s.threadsPerRow);
  p.imageBase = ix.mul(ix.mul(p.image, spatial), g.channels);
  for (int64_t l = 0; l < s.vectorWidth; ++l)
    p.groupOfLane.push_back(ix.div(ix.add(p.channel, ix.c(l)), g.perGroup));
  return p;
}

/// For each of this thread's positions of the part (a sweep of the block
/// over rowsPerBlock positions at a time): `step` of x's lanes there (the
/// prologue applied), its flat offset and the carried values, which start
/// as `init`.
SmallVector<Value> emitSweep(
    OpBuilder &b, Location loc, const RowNormKernel &spec, const Geometry &g,
    const PartOfImage &p, ValueRange init,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, Location, Value offset,
                                          ValueRange carried)>
        step) {
  IndexMath ix{b, loc};
  auto loop = b.create<scf::ForOp>(
      loc, ix.add(p.begin, p.row), p.end, ix.c(spec.schedule.rowsPerBlock),
      init, [&](OpBuilder &fb, Location fl, Value position, ValueRange c) {
        IndexMath fx{fb, fl};
        Value offset = fx.add(p.imageBase,
                              fx.add(fx.mul(position, g.channels), p.channel));
        fb.create<scf::YieldOp>(fl, step(fb, fl, offset, c));
      });
  return SmallVector<Value>(loop.getResults());
}

/// Each lane's `sums` into `perLane` (rowsPerBlock x channels), then, after
/// a barrier, `perGroup(group, total)` for each group in a thread of the
/// block, the total of the group's channels over the block's rows added in
/// a fixed order. The caller puts a barrier after it before `perLane` is
/// written again.
void emitGroupTotals(
    OpBuilder &b, Location loc, const RowNormSchedule &s, const Geometry &g,
    const PartOfImage &p, Value perLane, ArrayRef<Value> sums, Type acc,
    llvm::function_ref<void(OpBuilder &, Location, Value, Value)> perGroup) {
  IndexMath ix{b, loc};
  Value at = ix.add(ix.mul(p.row, g.channels), p.channel);
  for (auto [l, v] : llvm::enumerate(sums))
    b.create<memref::StoreOp>(loc, v, perLane, ix.add(at, ix.c(l)));
  b.create<gpu::BarrierOp>(loc);
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  b.create<scf::ForOp>(
      loc, tid, ix.c(g.groups), ix.c(s.blockSize()), ValueRange{},
      [&](OpBuilder &gb, Location gl, Value group, ValueRange) {
        IndexMath gx{gb, gl};
        Value first = gx.mul(group, g.perGroup);
        Value zero = floatConstant(gb, gl, 0.0, acc, 1);
        auto rows = gb.create<scf::ForOp>(
            gl, gx.c(0), gx.c(s.rowsPerBlock), gx.c(1), ValueRange{zero},
            [&](OpBuilder &rb, Location rl, Value row, ValueRange total) {
              IndexMath rx{rb, rl};
              Value rowFirst = rx.add(rx.mul(row, g.channels), first);
              auto chans = rb.create<scf::ForOp>(
                  rl, rx.c(0), rx.c(g.perGroup), rx.c(1), total,
                  [&](OpBuilder &cb, Location cl, Value c, ValueRange t) {
                    Value at =
                        cb.create<arith::AddIOp>(cl, rowFirst, c).getResult();
                    Value v = cb.create<memref::LoadOp>(cl, perLane, at);
                    cb.create<scf::YieldOp>(
                        cl, ValueRange{cb.create<arith::AddFOp>(cl, t[0], v)});
                  });
              rb.create<scf::YieldOp>(rl, chans.getResults());
            });
        perGroup(gb, gl, group, rows.getResult(0));
        gb.create<scf::YieldOp>(gl);
      });
}

/// The slot of (image, part, group)'s mean in the partial moments (its M2
/// follows).
Value partialSlot(IndexMath &ix, const Geometry &g, Value image, Value parts,
                  Value part, Value group) {
  return ix.mul(
      ix.add(ix.mul(ix.add(ix.mul(image, parts), part), g.groups), group), 2);
}

/// What normalizes each lane of a thread: its group's mean and rstd (from
/// `stats`, pairs at (firstGroup + group) * 2) and its channel's scale and
/// bias.
struct LaneParams {
  SmallVector<Value> mean, rstd, scale, bias;

  LaneParams(OpBuilder &b, Location loc, const RowNormKernel &spec,
             const RowNormArgs &a, const PartOfImage &p, Value stats,
             Value firstGroup) {
    IndexMath ix{b, loc};
    for (Value group : p.groupOfLane) {
      Value slot = ix.mul(ix.add(firstGroup, group), 2);
      mean.push_back(b.create<memref::LoadOp>(loc, stats, slot));
      rstd.push_back(
          b.create<memref::LoadOp>(loc, stats, ix.add(slot, ix.c(1))));
    }
    int64_t vw = spec.schedule.vectorWidth;
    if (spec.hasScale)
      scale = loadPerChannel(b, loc, spec, a.scale, p.channel, vw);
    if (spec.hasBias)
      bias = loadPerChannel(b, loc, spec, a.bias, p.channel, vw);
  }

  /// `lanes` of x normalized, scaled and shifted.
  SmallVector<Value> normalize(OpBuilder &b, Location loc,
                               ArrayRef<Value> lanes) const {
    SmallVector<Value> y;
    for (auto [l, x] : llvm::enumerate(lanes))
      y.push_back(emitNormalize(b, loc, x, mean[l], rstd[l],
                                scale.empty() ? Value() : scale[l],
                                bias.empty() ? Value() : bias[l]));
    return y;
  }
};

/// The moments of (image, group) over parts first, first + stride, ... of
/// `parts` (in that order; Chan), from the partial moments `in`.
Moments emitPartsMoments(OpBuilder &b, Location loc, const Geometry &g,
                         Value in, Value image, Value group, Value spatial,
                         Value chunk, Value parts, Value first, int64_t stride,
                         Type acc) {
  IndexMath ix{b, loc};
  Value zero = floatConstant(b, loc, 0.0, acc, 1);
  auto own = b.create<scf::ForOp>(
      loc, first, parts, ix.c(stride), ValueRange{zero, zero, zero},
      [&](OpBuilder &fb, Location fl, Value part, ValueRange m) {
        IndexMath fx{fb, fl};
        Value begin = fx.mul(part, chunk);
        Value end =
            fb.create<arith::MinUIOp>(fl, fx.add(begin, chunk), spatial);
        Moments pm;
        pm.count = fb.create<arith::MulFOp>(
            fl, indexToFloat(fb, fl, fx.sub(end, begin), acc),
            floatConstant(fb, fl, double(g.perGroup), acc, 1));
        Value slot = partialSlot(fx, g, image, parts, part, group);
        pm.mean = fb.create<memref::LoadOp>(fl, in, slot);
        pm.m2 = fb.create<memref::LoadOp>(fl, in, fx.add(slot, fx.c(1)));
        Moments sum = emitChanCombine(fb, fl, Moments{m[0], m[1], m[2]}, pm);
        fb.create<scf::YieldOp>(fl, ValueRange{sum.count, sum.mean, sum.m2});
      });
  return Moments{own.getResult(0), own.getResult(1), own.getResult(2)};
}

/// The moments of a warp's lanes combined by a butterfly: both lanes of a
/// pair combine (the lower lane's, the upper lane's), so every lane ends
/// with the same bits.
Moments emitWarpCombine(OpBuilder &b, Location loc, Moments m, Value lane) {
  IndexMath ix{b, loc};
  constexpr int64_t kWarp = GpuTarget::kWarpSize;
  for (int64_t offset = kWarp / 2; offset >= 1; offset /= 2) {
    auto shuffle = [&](Value v) {
      return b
          .create<gpu::ShuffleOp>(loc, v, offset, kWarp, gpu::ShuffleMode::XOR)
          .getShuffleResult();
    };
    Moments other{shuffle(m.count), shuffle(m.mean), shuffle(m.m2)};
    Value upper = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::ne,
        b.create<arith::AndIOp>(loc, lane, ix.c(offset)), ix.c(0));
    auto pick = [&](Value first, Value second) {
      return b.create<arith::SelectOp>(loc, upper, first, second).getResult();
    };
    Moments lower{pick(other.count, m.count), pick(other.mean, m.mean),
                  pick(other.m2, m.m2)};
    Moments higher{pick(m.count, other.count), pick(m.mean, other.mean),
                   pick(m.m2, other.m2)};
    m = emitChanCombine(b, loc, lower, higher);
  }
  return m;
}

/// The one-kernel variant (RowNormSchedule::residentBlocks): `k`'s
/// arguments are the op's, then the partial moments and the grid barrier's
/// counter. Its grid is every part of every image, all resident at once.
void emitOneKernel(Kernel &k, Location loc, const RowNormKernel &hostSpec,
                   const Geometry &geo, Value hostParts) {
  const RowNormSchedule &s = hostSpec.schedule;
  Type acc = hostSpec.acc;
  int64_t vw = s.vectorWidth, vectors = s.vectorsPerThread;
  constexpr int64_t kWarp = GpuTarget::kWarpSize;
  OpBuilder &kb = k.body;
  IndexMath ix{kb, loc};
  RowNormArgs a = bindArgs(k, hostSpec);
  unsigned numArgs = k.func.getFunctionType().getNumInputs();
  Value partials = k.arg(numArgs - 2), counter = k.arg(numArgs - 1);
  RowNormKernel spec = hostSpec.inKernel(k);
  Value spatial = k.size(kb, loc, geo.spatial);
  Value chunk = ix.c(s.rowsPerBlock * vectors);
  Value parts = k.size(kb, loc, hostParts);
  PartOfImage p = emitPartOfImage(kb, loc, s, geo, spatial, chunk, parts);
  Value perLane =
      addWorkgroupBuffer(k, loc, s.rowsPerBlock * geo.channels, acc);
  Value groupMean = addWorkgroupBuffer(k, loc, geo.groups, acc);
  Value groupStats = addWorkgroupBuffer(k, loc, geo.groups * 2, acc);
  Value count = kb.create<arith::MulFOp>(
      loc, indexToFloat(kb, loc, ix.sub(p.end, p.begin), acc),
      floatConstant(kb, loc, double(geo.perGroup), acc, 1));
  Value zero = floatConstant(kb, loc, 0.0, acc, 1);

  // The thread's positions of the part, each a vector in registers (zeros
  // past the part's end).
  SmallVector<Value> valid, offsets;
  SmallVector<SmallVector<Value>> held;
  for (int64_t v = 0; v < vectors; ++v) {
    Value position = ix.add(p.begin, ix.add(p.row, ix.c(v * s.rowsPerBlock)));
    valid.push_back(ix.below(position, p.end));
    offsets.push_back(
        ix.add(p.imageBase, ix.add(ix.mul(position, geo.channels), p.channel)));
    auto load = kb.create<scf::IfOp>(
        loc, valid.back(),
        [&](OpBuilder &tb, Location tl) {
          tb.create<scf::YieldOp>(tl, loadX(tb, tl, spec, a.x, a.prologue,
                                            offsets.back(), p.channel));
        },
        [&](OpBuilder &eb, Location el) {
          eb.create<scf::YieldOp>(el, SmallVector<Value>(vw, zero));
        });
    held.emplace_back(load.getResults());
  }
  // Per lane: the sum of `term(x, lane)` over the thread's positions.
  auto laneSums = [&](llvm::function_ref<Value(Value, int64_t)> term) {
    SmallVector<Value> sums(vw, zero);
    for (int64_t v = 0; v < vectors; ++v)
      for (int64_t l = 0; l < vw; ++l)
        sums[l] = kb.create<arith::AddFOp>(
            loc, sums[l],
            kb.create<arith::SelectOp>(loc, valid[v], term(held[v][l], l),
                                       zero));
    return sums;
  };
  emitGroupTotals(
      kb, loc, s, geo, p, perLane, laneSums([](Value x, int64_t) { return x; }),
      acc, [&](OpBuilder &gb, Location gl, Value group, Value total) {
        gb.create<memref::StoreOp>(
            gl, gb.create<arith::DivFOp>(gl, total, count), groupMean, group);
      });
  kb.create<gpu::BarrierOp>(loc);
  SmallVector<Value> laneMean;
  for (Value group : p.groupOfLane)
    laneMean.push_back(kb.create<memref::LoadOp>(loc, groupMean, group));
  emitGroupTotals(
      kb, loc, s, geo, p, perLane, laneSums([&](Value x, int64_t l) {
        Value d = kb.create<arith::SubFOp>(loc, x, laneMean[l]);
        return kb.create<arith::MulFOp>(loc, d, d).getResult();
      }),
      acc, [&](OpBuilder &gb, Location gl, Value group, Value m2) {
        IndexMath gx{gb, gl};
        Value slot = partialSlot(gx, geo, p.image, parts, p.part, group);
        gb.create<memref::StoreOp>(
            gl, gb.create<memref::LoadOp>(gl, groupMean, group), partials,
            slot);
        gb.create<memref::StoreOp>(gl, m2, partials, gx.add(slot, gx.c(1)));
      });

  // Every block's part written: each warp combines its groups' parts of the
  // image (the same order in every block), into mean and rstd.
  kb.create<GridBarrierOp>(loc, counter);
  Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value lane = ix.rem(tid, kWarp), warp = ix.div(tid, kWarp);
  Value isFirstPart = ix.below(p.part, ix.c(1));
  kb.create<scf::ForOp>(
      loc, warp, ix.c(geo.groups), ix.c(s.blockSize() / kWarp), ValueRange{},
      [&](OpBuilder &gb, Location gl, Value group, ValueRange) {
        IndexMath gx{gb, gl};
        Moments m = emitWarpCombine(
            gb, gl,
            emitPartsMoments(gb, gl, geo, partials, p.image, group, spatial,
                             chunk, parts, lane, kWarp, acc),
            lane);
        gb.create<scf::IfOp>(
            gl, gx.below(lane, gx.c(1)), [&](OpBuilder &tb, Location tl) {
              IndexMath tx{tb, tl};
              Value rstd =
                  emitRstd(tb, tl, tb.create<arith::DivFOp>(tl, m.m2, m.count),
                           hostSpec.epsilon);
              Value slot = tx.mul(group, 2);
              tb.create<memref::StoreOp>(tl, m.mean, groupStats, slot);
              tb.create<memref::StoreOp>(tl, rstd, groupStats,
                                         tx.add(slot, tx.c(1)));
              if (a.mean || a.rstd) {
                Value imageGroup =
                    tx.add(tx.mul(p.image, tx.c(geo.groups)), group);
                tb.create<scf::IfOp>(
                    tl, isFirstPart, [&](OpBuilder &ob, Location ol) {
                      if (a.mean)
                        storeLanes(ob, ol, {m.mean}, a.mean, imageGroup);
                      if (a.rstd)
                        storeLanes(ob, ol, {rstd}, a.rstd, imageGroup);
                      ob.create<scf::YieldOp>(ol);
                    });
              }
              tb.create<scf::YieldOp>(tl);
            });
        gb.create<scf::YieldOp>(gl);
      });
  kb.create<gpu::BarrierOp>(loc);

  // Normalize the registers.
  LaneParams params(kb, loc, spec, a, p, groupStats, ix.c(0));
  for (int64_t v = 0; v < vectors; ++v)
    kb.create<scf::IfOp>(loc, valid[v], [&](OpBuilder &tb, Location tl) {
      storeY(tb, tl, spec, a, params.normalize(tb, tl, held[v]), offsets[v],
             p.channel);
      tb.create<scf::YieldOp>(tl);
    });
}

} // namespace

void cuda::lowerChannelsLastGroups(OpBuilder &b, Location loc, ModuleOp module,
                                   Operation *op, const RowNormKernel &hostSpec,
                                   ArrayRef<Value> args, Value images,
                                   const normfuse::runtime::GpuTarget &target) {
  const RowNormSchedule &s = hostSpec.schedule;
  Type acc = hostSpec.acc;
  int64_t vw = s.vectorWidth;
  using S = RowNormKernel;
  Geometry geo;
  geo.channels = constantOr(hostSpec.groupSizes[S::kChannels]);
  geo.groups = constantOr(hostSpec.groupSizes[S::kGroups]);
  geo.perGroup = geo.channels / geo.groups;
  geo.spatial = hostSpec.groupSizes[S::kSpatial];
  IndexMath im{b, loc};
  // Parts of the planned size, or (partsFromResidency) of the positions
  // over the blocks the device holds of the first and third kernels at
  // once (bound to them below), a multiple of a sweep's positions.
  geo.chunk = im.c(s.chunkElements);
  ResidentBlocksOp resident1, resident3;
  if (s.partsFromResidency) {
    int64_t planned =
        target.multiprocessors * target.blocksPerMultiprocessor(s.blockSize());
    resident1 = residentBlocks(b, loc, s.blockSize(), planned);
    resident3 = residentBlocks(b, loc, s.blockSize(), planned);
    Value resident = b.createOrFold<arith::MinUIOp>(loc, resident1, resident3);
    Value positions = im.product(images, geo.spatial);
    Value perBlock = b.createOrFold<arith::MaxUIOp>(
        loc, b.createOrFold<arith::CeilDivUIOp>(loc, positions, resident),
        im.c(1));
    geo.chunk = im.product(
        b.createOrFold<arith::CeilDivUIOp>(loc, perBlock, im.c(s.rowsPerBlock)),
        im.c(s.rowsPerBlock));
  }
  geo.parts = b.createOrFold<arith::CeilDivUIOp>(loc, geo.spatial, geo.chunk);
  Value blocks = im.product(images, geo.parts);
  Value imageGroups = im.product(images, im.c(geo.groups));
  Value partials =
      allocTemporary(b, loc, im.product(blocks, im.c(geo.groups * 2)), acc);
  Value stats = allocTemporary(b, loc, im.product(imageGroups, im.c(2)), acc);
  std::string base = kernelBaseName(op, op->getName().stripDialect());
  auto countArgs = [](ArrayRef<PointwiseStep> steps) {
    return unsigned(llvm::count_if(
        steps, [](const PointwiseStep &st) { return bool(st.operand); }));
  };
  unsigned numPrologueArgs = countArgs(hostSpec.prologue);
  unsigned fixed = args.size() - numPrologueArgs - countArgs(hostSpec.epilogue);

  // Kernel 1: each part's moments per group.
  SmallVector<Value> args1{args.front(), partials};
  for (unsigned i = 0; i < numPrologueArgs; ++i)
    args1.push_back(args[fixed + i]);
  Kernel k1 =
      createKernel(module, loc, base + "_partial", ValueRange(args1).getTypes(),
                   s.blockSize(), s.str());
  {
    OpBuilder &kb = k1.body;
    IndexMath ix{kb, loc};
    Value x = k1.arg(0), out = k1.arg(1);
    unsigned next = 2;
    SmallVector<Value> prologueArgs;
    bindStepArgs(k1, hostSpec.prologue, next, prologueArgs);
    RowNormKernel spec = hostSpec.inKernel(k1);
    Value spatial = k1.size(kb, loc, geo.spatial);
    Value chunk = k1.size(kb, loc, geo.chunk);
    Value parts = k1.size(kb, loc, geo.parts);
    PartOfImage p = emitPartOfImage(kb, loc, s, geo, spatial, chunk, parts);
    Value perLane =
        addWorkgroupBuffer(k1, loc, s.rowsPerBlock * geo.channels, acc);
    Value groupMean = addWorkgroupBuffer(k1, loc, geo.groups, acc);
    Value count = kb.create<arith::MulFOp>(
        loc, indexToFloat(kb, loc, ix.sub(p.end, p.begin), acc),
        floatConstant(kb, loc, double(geo.perGroup), acc, 1));
    SmallVector<Value> zeros(vw, floatConstant(kb, loc, 0.0, acc, 1));

    // Per lane: the sum of `term(x, lane)` over this thread's positions.
    auto laneSums =
        [&](llvm::function_ref<Value(OpBuilder &, Location, Value, int64_t)>
                term) {
          return emitSweep(kb, loc, spec, geo, p, zeros,
                           [&](OpBuilder &fb, Location fl, Value offset,
                               ValueRange carried) {
                             SmallVector<Value> lanes =
                                 loadX(fb, fl, spec, x, prologueArgs, offset,
                                       p.channel);
                             SmallVector<Value> next;
                             for (int64_t l = 0; l < vw; ++l)
                               next.push_back(fb.create<arith::AddFOp>(
                                   fl, carried[l], term(fb, fl, lanes[l], l)));
                             return next;
                           });
        };
    SmallVector<Value> sums =
        laneSums([](OpBuilder &, Location, Value v, int64_t) { return v; });
    emitGroupTotals(kb, loc, s, geo, p, perLane, sums, acc,
                    [&](OpBuilder &gb, Location gl, Value group, Value total) {
                      gb.create<memref::StoreOp>(
                          gl, gb.create<arith::DivFOp>(gl, total, count),
                          groupMean, group);
                    });
    kb.create<gpu::BarrierOp>(loc);
    SmallVector<Value> laneMean;
    for (Value group : p.groupOfLane)
      laneMean.push_back(kb.create<memref::LoadOp>(loc, groupMean, group));
    SmallVector<Value> squares =
        laneSums([&](OpBuilder &fb, Location fl, Value v, int64_t l) {
          Value d = fb.create<arith::SubFOp>(fl, v, laneMean[l]);
          return fb.create<arith::MulFOp>(fl, d, d).getResult();
        });
    emitGroupTotals(
        kb, loc, s, geo, p, perLane, squares, acc,
        [&](OpBuilder &gb, Location gl, Value group, Value m2) {
          IndexMath gx{gb, gl};
          Value slot = partialSlot(gx, geo, p.image, parts, p.part, group);
          gb.create<memref::StoreOp>(
              gl, gb.create<memref::LoadOp>(gl, groupMean, group), out, slot);
          gb.create<memref::StoreOp>(gl, m2, out, gx.add(slot, gx.c(1)));
        });
  }

  // Kernel 2: a block per (image, group) combines the group's parts.
  unsigned statsArgs = 2;
  SmallVector<Value> args2{partials, stats};
  unsigned at =
      1 + unsigned(hostSpec.hasScale) + unsigned(hostSpec.hasBias) + 1;
  if (hostSpec.writeMean)
    args2.push_back(args[at++]);
  if (hostSpec.writeRstd)
    args2.push_back(args[at++]);
  constexpr int64_t kWarp = GpuTarget::kWarpSize;
  Kernel k2 =
      createKernel(module, loc, base + "_finish", ValueRange(args2).getTypes(),
                   s.finishWarps * kWarp,
                   "group-finish warps=" + std::to_string(s.finishWarps));
  {
    OpBuilder &kb = k2.body;
    IndexMath ix{kb, loc};
    Value in = k2.arg(0), out = k2.arg(1);
    Value meanOut = hostSpec.writeMean ? k2.arg(statsArgs) : Value();
    Value rstdOut = hostSpec.writeRstd
                        ? k2.arg(statsArgs + unsigned(hostSpec.writeMean))
                        : Value();
    Value spatial = k2.size(kb, loc, geo.spatial);
    Value chunk = k2.size(kb, loc, geo.chunk);
    Value parts = k2.size(kb, loc, geo.parts);
    Value warpMoments = addWorkgroupBuffer(k2, loc, s.finishWarps * 3, acc);
    Value imageGroup = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
    Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    Value lane = ix.rem(tid, kWarp), warp = ix.div(tid, kWarp);
    Value image = ix.div(imageGroup, geo.groups);
    Value group = ix.rem(imageGroup, geo.groups);
    Value zero = floatConstant(kb, loc, 0.0, acc, 1);
    // Thread t: parts t, t + 256, ... in order; then a butterfly a warp.
    Moments m = emitWarpCombine(kb, loc,
                                emitPartsMoments(kb, loc, geo, in, image, group,
                                                 spatial, chunk, parts, tid,
                                                 s.finishWarps * kWarp, acc),
                                lane);
    // The warps' moments, then thread 0 combines them in warp order.
    kb.create<scf::IfOp>(
        loc, ix.below(lane, ix.c(1)), [&](OpBuilder &tb, Location tl) {
          IndexMath tx{tb, tl};
          Value slot = tx.mul(warp, 3);
          tb.create<memref::StoreOp>(tl, m.count, warpMoments, slot);
          tb.create<memref::StoreOp>(tl, m.mean, warpMoments,
                                     tx.add(slot, tx.c(1)));
          tb.create<memref::StoreOp>(tl, m.m2, warpMoments,
                                     tx.add(slot, tx.c(2)));
          tb.create<scf::YieldOp>(tl);
        });
    kb.create<gpu::BarrierOp>(loc);
    kb.create<scf::IfOp>(
        loc, ix.below(tid, ix.c(1)), [&](OpBuilder &tb, Location tl) {
          IndexMath tx{tb, tl};
          Moments total{zero, zero, zero};
          for (int64_t w = 0; w < s.finishWarps; ++w) {
            auto load = [&](int64_t k) {
              return tb.create<memref::LoadOp>(tl, warpMoments, tx.c(w * 3 + k))
                  .getResult();
            };
            total = emitChanCombine(tb, tl, total,
                                    Moments{load(0), load(1), load(2)});
          }
          Value rstd = emitRstd(
              tb, tl, tb.create<arith::DivFOp>(tl, total.m2, total.count),
              hostSpec.epsilon);
          Value slot = tx.mul(imageGroup, 2);
          tb.create<memref::StoreOp>(tl, total.mean, out, slot);
          tb.create<memref::StoreOp>(tl, rstd, out, tx.add(slot, tx.c(1)));
          if (meanOut)
            storeLanes(tb, tl, {total.mean}, meanOut, imageGroup);
          if (rstdOut)
            storeLanes(tb, tl, {rstd}, rstdOut, imageGroup);
          tb.create<scf::YieldOp>(tl);
        });
  }

  // Kernel 3: normalize each part.
  SmallVector<Value> args3(args.begin(), args.end());
  args3.push_back(stats);
  Kernel k3 =
      createKernel(module, loc, base + "_normalize",
                   ValueRange(args3).getTypes(), s.blockSize(), s.str());
  {
    OpBuilder &kb = k3.body;
    IndexMath ix{kb, loc};
    RowNormArgs a = bindArgs(k3, hostSpec);
    Value kStats = k3.arg(k3.func.getFunctionType().getNumInputs() - 1);
    RowNormKernel spec = hostSpec.inKernel(k3);
    Value spatial = k3.size(kb, loc, geo.spatial);
    Value chunk = k3.size(kb, loc, geo.chunk);
    Value parts = k3.size(kb, loc, geo.parts);
    PartOfImage p = emitPartOfImage(kb, loc, s, geo, spatial, chunk, parts);
    LaneParams params(kb, loc, spec, a, p, kStats, ix.mul(p.image, geo.groups));
    emitSweep(kb, loc, spec, geo, p, ValueRange{},
              [&](OpBuilder &fb, Location fl, Value offset, ValueRange) {
                SmallVector<Value> lanes =
                    loadX(fb, fl, spec, a.x, a.prologue, offset, p.channel);
                storeY(fb, fl, spec, a, params.normalize(fb, fl, lanes), offset,
                       p.channel);
                return SmallVector<Value>{};
              });
  }

  if (s.partsFromResidency) {
    bindResidentBlocks(resident1, k1.func, target);
    bindResidentBlocks(resident3, k3.func, target);
  }

  // The one-kernel variant where the device holds every block of its grid
  // (decided when the kernels are loaded: the three kernels' grids are 0
  // blocks then, its grid 0 blocks otherwise).
  Value oneGrid, threeKernels;
  std::function<void(OpBuilder &, Location)> oneLaunch;
  if (s.residentBlocks) {
    // Its blocks take whole warps of positions.
    RowNormKernel oneSpec = hostSpec;
    oneSpec.schedule.rowsPerBlock = s.oneKernelRows();
    int64_t oneThreads = oneSpec.schedule.blockSize();
    Value oneParts = b.createOrFold<arith::CeilDivUIOp>(
        loc, geo.spatial, im.c(s.oneKernelPart()));
    Value oneBlocks = im.product(images, oneParts);
    SmallVector<Value> argsOne(args.begin(), args.end());
    argsOne.push_back(allocTemporary(
        b, loc, im.product(oneBlocks, im.c(geo.groups * 2)), acc));
    auto counter =
        b.create<memref::AllocOp>(loc, MemRefType::get({1}, b.getI32Type()));
    counter->setAttr(kZeroedAttr, b.getUnitAttr());
    argsOne.push_back(counter);
    Kernel one =
        createKernel(module, loc, base + "_one_kernel",
                     ValueRange(argsOne).getTypes(), oneThreads, s.str());
    one.func->setAttr("nf.min_blocks_per_sm",
                      b.getI64IntegerAttr(s.residentBlocks));
    emitOneKernel(one, loc, oneSpec, geo, oneParts);
    ResidentBlocksOp resident = residentBlocks(
        b, loc, oneThreads,
        target.multiprocessors * target.blocksPerMultiprocessor(oneThreads));
    bindResidentBlocks(resident, one.func, target);
    Value fits = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule,
                                         oneBlocks, resident);
    oneGrid = b.create<arith::SelectOp>(loc, fits, oneBlocks, im.c(0));
    threeKernels = b.create<arith::SelectOp>(loc, fits, im.c(0), im.c(1));
    // Launched below, beside the three kernels.
    oneLaunch = [&, one, argsOne, oneThreads](OpBuilder &tb, Location tl) {
      launch(tb, tl, one, oneGrid, oneThreads, argsOne);
    };
  }
  // (The tensor's size, not the blocks: a launch plan computes no
  // condition from what the device holds.)
  Value work = im.product(im.product(images, geo.spatial), im.c(geo.channels));
  Value any =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, work, im.c(0));
  b.create<scf::IfOp>(loc, any, [&](OpBuilder &tb, Location tl) {
    IndexMath tx{tb, tl};
    auto grid = [&](Value blocks) {
      return threeKernels ? tx.mul(blocks, threeKernels) : blocks;
    };
    if (oneLaunch)
      oneLaunch(tb, tl);
    launch(tb, tl, k1, grid(blocks), s.blockSize(), args1);
    launch(tb, tl, k2, grid(imageGroups), s.finishWarps * kWarp, args2);
    launch(tb, tl, k3, grid(blocks), s.blockSize(), args3);
    tb.create<scf::YieldOp>(tl);
  });
}
