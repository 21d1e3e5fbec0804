//===- GroupNormGradOneKernel.cpp - a group norm gradient in one launch ---===//
//
// Part of normfuse. group_norm_grad and instance_norm_grad in NHWC of a
// known channel count, in one cooperative launch where the device holds
// its grid (the four kernels of LowerGroupNormGrads.cpp otherwise):
//
// 1. A block per part of an image (a run of positions; the parts sized so
//    that every block is resident), its threads across each position's
//    channels in whole vectors and over `rowsPerBlock` positions, each
//    lane knowing its group. Each thread sums dy*xhat and dy per lane over
//    its positions; the block's rows are added in row order
//    (emitRowGroupSums) and written as the part's partial sums.
// 2. The grid's barrier. A warp per (channel, sum) adds each image's
//    parts (lane i the parts i, i + 32, ... in order, then a butterfly: the
//    same bits in every lane) into the totals, and the images in order
//    into dscale or dbias.
// 3. The grid's barrier. Each block takes its image's group sums from the
//    totals (a thread per group, its channels in order, each times its
//    scale) and writes dx of its part, its positions last first (what the
//    first sweep read last is the likeliest still in L2).
//
// Deterministic (fixed orders, no atomics) and one launch instead of four;
// the partial sums at most half the bytes each part reads. dy and x are
// read twice, the second time from L2 where they fit in it.
//
//===----------------------------------------------------------------------===//

#include "GroupNormGradOneKernel.h"
#include "KernelBuilder.h"
#include "normfuse/Codegen/Common/ActivationMath.h"
#include "normfuse/Codegen/Common/NormMath.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

constexpr int64_t kWarp = GpuTarget::kWarpSize;

/// For each position of the thread in [begin + row, end), every `rows`
/// (`lastFirst`: the last first): `step` with the flat offset of the
/// thread's channel vector there and the carried values, which start as
/// `init`.
SmallVector<Value>
emitPositions(OpBuilder &b, Location loc, Value begin, Value end, Value row,
              int64_t rows, Value imageBase, int64_t channels, Value channel,
              ValueRange init, bool lastFirst,
              llvm::function_ref<SmallVector<Value>(OpBuilder &, Location,
                                                    Value, ValueRange)>
                  step) {
  IndexMath ix{b, loc};
  Value first = ix.add(begin, row);
  // The thread's positions: none where its first is past the end.
  Value trips = b.create<arith::SelectOp>(
      loc, ix.below(first, end),
      ix.ceilDiv(b.create<arith::SubIOp>(
                     loc, b.create<arith::MaxUIOp>(loc, end, first), first),
                 rows),
      ix.c(0));
  auto loop = b.create<scf::ForOp>(
      loc, ix.c(0), trips, ix.c(1), init,
      [&](OpBuilder &fb, Location fl, Value t, ValueRange carried) {
        IndexMath fx{fb, fl};
        Value trip = lastFirst ? fx.sub(fx.sub(trips, fx.c(1)), t) : t;
        Value position = fx.add(first, fx.mul(trip, rows));
        Value offset = fx.add(imageBase, fx.madd(position, channels, channel));
        fb.create<scf::YieldOp>(fl, step(fb, fl, offset, carried));
      });
  return SmallVector<Value>(loop.getResults());
}

} // namespace

Value cuda::emitGroupNormGradOneKernel(
    OpBuilder &b, Location loc, ModuleOp module, const std::string &base,
    const GroupNormGradBuffers &in, const GroupNormGradSchedule::OneKernel &s,
    const GpuTarget &target) {
  const int64_t C = in.channels, G = in.groups, perGroup = C / G;
  const int64_t vw = s.vectorWidth, rows = s.rowsPerBlock;
  const int64_t threads = s.blockSize(), warps = threads / kWarp;
  const bool hasScale = bool(in.scale);
  Type acc = in.acc;
  IndexMath im{b, loc};
  auto max = [&](Value x, Value y) {
    return b.createOrFold<arith::MaxUIOp>(loc, x, y);
  };

  // The parts: the blocks the device holds shared among the images, each
  // part whole sweeps of the block's rows and at least minPart positions.
  ResidentBlocksOp resident = residentBlocks(
      b, loc, threads,
      target.multiprocessors * target.blocksPerMultiprocessor(threads));
  Value one = im.c(1);
  Value partsWanted = max(
      one, b.createOrFold<arith::DivUIOp>(loc, resident, max(in.images, one)));
  Value chunk = max(im.ceilDiv(in.spatial, partsWanted), im.c(s.minPart));
  chunk = im.product(im.ceilDiv(chunk, rows), im.c(rows));
  Value parts = im.ceilDiv(in.spatial, chunk);
  Value blocks = im.product(in.images, parts);
  Value fits = b.create<arith::AndIOp>(
      loc,
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, blocks, im.c(0)),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule, blocks,
                              resident));
  Value grid = b.create<arith::SelectOp>(loc, fits, blocks, im.c(0));
  Value others = b.create<arith::SelectOp>(loc, fits, im.c(0), one);

  Value partials = allocTemporary(b, loc, im.product(blocks, im.c(2 * C)), acc);
  Value totals =
      allocTemporary(b, loc, im.product(in.images, im.c(2 * C)), acc);
  auto counter =
      b.create<memref::AllocOp>(loc, MemRefType::get({1}, b.getI32Type()));
  counter->setAttr(kZeroedAttr, b.getUnitAttr());
  SmallVector<Value> args{in.dy, in.x, in.mean, in.rstd};
  if (hasScale)
    args.push_back(in.scale);
  args.append({in.dx, in.dscale, in.dbias, partials, totals, counter});
  auto n = [](int64_t v) { return std::to_string(v); };
  Kernel k = createKernel(
      module, loc, base + "_one_kernel", ValueRange(args).getTypes(), threads,
      "group-norm-grad-one-kernel threads-per-row=" + n(s.threadsPerRow) +
          " rows=" + n(rows) + " vector=" + n(vw) +
          " min-part=" + n(s.minPart));
  {
    OpBuilder &kb = k.body;
    IndexMath ix{kb, loc};
    unsigned next = hasScale ? 5 : 4;
    Value kDy = k.arg(0), kX = k.arg(1), kMean = k.arg(2), kRstd = k.arg(3);
    Value kScale = hasScale ? k.arg(4) : Value();
    Value kDx = k.arg(next), kDscale = k.arg(next + 1),
          kDbias = k.arg(next + 2), kPartials = k.arg(next + 3),
          kTotals = k.arg(next + 4), kCounter = k.arg(next + 5);
    Value images = k.size(kb, loc, in.images);
    Value spatial = k.size(kb, loc, in.spatial);
    Value kChunk = k.size(kb, loc, chunk), kParts = k.size(kb, loc, parts);
    Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    Value bid = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
    Value image = ix.div(bid, kParts), part = ix.rem(bid, kParts);
    Value begin = ix.mul(part, kChunk);
    Value end = kb.create<arith::MinUIOp>(loc, ix.add(begin, kChunk), spatial);
    Value lane = ix.rem(tid, s.threadsPerRow),
          row = ix.div(tid, s.threadsPerRow);
    Value channel = ix.mul(lane, vw);
    Value imageBase = ix.mul(ix.mul(image, spatial), C);
    Value zero = floatConstant(kb, loc, 0.0, acc, 1);

    // Each lane's group (one division, before the loops), and per run of
    // lanes that share a group `load(group)`, loaded again in each phase
    // that uses it (nothing per lane lives across the grid's barriers:
    // fewer registers).
    int64_t run = perGroup % vw == 0 ? vw : vw % perGroup == 0 ? perGroup : 1;
    SmallVector<Value> group;
    for (int64_t l = 0; l < vw; ++l)
      group.push_back(l % run ? group.back()
                              : ix.div(ix.add(channel, ix.c(l)), perGroup));
    auto perLane = [&](llvm::function_ref<Value(Value)> load) {
      SmallVector<Value> values;
      for (int64_t l = 0; l < vw; ++l)
        values.push_back(l % run ? values.back() : load(group[l]));
      return values;
    };
    auto statistic = [&](Value buffer) {
      return perLane([&](Value g) {
        return loadLanes(kb, loc, buffer, ix.madd(image, G, g), 1, acc)[0];
      });
    };
    SmallVector<Value> mean = statistic(kMean), rstd = statistic(kRstd);

    // 1. The thread's sums of dy*xhat (lanes 0..vw-1) and dy (vw..).
    SmallVector<Value> sums = emitPositions(
        kb, loc, begin, end, row, rows, imageBase, C, channel,
        SmallVector<Value>(2 * vw, zero), /*lastFirst=*/false,
        [&](OpBuilder &fb, Location fl, Value offset, ValueRange carried) {
          SmallVector<Value> dy = loadLanes(fb, fl, kDy, offset, vw, acc);
          SmallVector<Value> x = loadLanes(fb, fl, kX, offset, vw, acc);
          SmallVector<Value> out(carried);
          for (int64_t l = 0; l < vw; ++l) {
            Value xhat =
                emitNormalize(fb, fl, x[l], mean[l], rstd[l], Value(), Value());
            out[l] = fb.create<arith::AddFOp>(
                fl, out[l], fb.create<arith::MulFOp>(fl, dy[l], xhat));
            out[vw + l] = fb.create<arith::AddFOp>(fl, out[vw + l], dy[l]);
          }
          return out;
        });
    Value handOver = addWorkgroupBuffer(
        k, loc, std::max<int64_t>(1, (rows - 1) * 2 * C), acc);
    sums = emitRowGroupSums(kb, loc, sums, handOver, row, lane, rows,
                            s.threadsPerRow, vw);
    kb.create<scf::IfOp>(
        loc, ix.below(row, ix.c(1)), [&](OpBuilder &tb, Location tl) {
          IndexMath tx{tb, tl};
          for (int64_t kk = 0; kk < 2; ++kk)
            storeLanes(tb, tl, ArrayRef<Value>(sums).slice(kk * vw, vw),
                       kPartials,
                       tx.madd(tx.madd(bid, 2, tx.c(kk)), C, channel));
          tb.create<scf::YieldOp>(tl);
        });
    kb.create<GridBarrierOp>(loc, kCounter);

    // 2. A warp per (sum, channel): each image's total over its parts, and
    // their sum over the images.
    Value warpLane = ix.rem(tid, kWarp);
    Value gridWarps =
        ix.mul(kb.create<gpu::GridDimOp>(loc, gpu::Dimension::x), warps);
    kb.create<scf::ForOp>(
        loc, ix.madd(bid, warps, ix.div(tid, kWarp)), ix.c(2 * C), gridWarps,
        ValueRange{}, [&](OpBuilder &wb, Location wl, Value task, ValueRange) {
          IndexMath wx{wb, wl};
          Value kk = wx.div(task, C), c = wx.rem(task, C);
          auto overImages = wb.create<scf::ForOp>(
              wl, wx.c(0), images, wx.c(1), ValueRange{zero},
              [&](OpBuilder &nb, Location nl, Value img, ValueRange grand) {
                IndexMath nx{nb, nl};
                Value firstPart = nx.mul(img, kParts);
                auto own = nb.create<scf::ForOp>(
                    nl, warpLane, kParts, nx.c(kWarp), ValueRange{zero},
                    [&](OpBuilder &pb, Location pl, Value p, ValueRange sum) {
                      IndexMath px{pb, pl};
                      Value at =
                          px.madd(px.madd(px.add(firstPart, p), 2, kk), C, c);
                      Value v = pb.create<memref::LoadOp>(pl, kPartials, at);
                      pb.create<scf::YieldOp>(
                          pl,
                          ValueRange{pb.create<arith::AddFOp>(pl, sum[0], v)});
                    });
                Value total = emitWarpSum(nb, nl, own.getResult(0), kWarp);
                nb.create<scf::IfOp>(nl, nx.below(warpLane, nx.c(1)),
                                     [&](OpBuilder &tb, Location tl) {
                                       IndexMath tx{tb, tl};
                                       tb.create<memref::StoreOp>(
                                           tl, total, kTotals,
                                           tx.madd(tx.madd(img, 2, kk), C, c));
                                       tb.create<scf::YieldOp>(tl);
                                     });
                nb.create<scf::YieldOp>(nl, ValueRange{nb.create<arith::AddFOp>(
                                                nl, grand[0], total)});
              });
          Value isScale = wx.below(kk, wx.c(1));
          wb.create<scf::IfOp>(
              wl, wx.below(warpLane, wx.c(1)), [&](OpBuilder &tb, Location tl) {
                tb.create<scf::IfOp>(
                    tl, isScale,
                    [&](OpBuilder &sb, Location sl) {
                      storeLanes(sb, sl, {overImages.getResult(0)}, kDscale, c);
                      sb.create<scf::YieldOp>(sl);
                    },
                    [&](OpBuilder &sb, Location sl) {
                      storeLanes(sb, sl, {overImages.getResult(0)}, kDbias, c);
                      sb.create<scf::YieldOp>(sl);
                    });
                tb.create<scf::YieldOp>(tl);
              });
          wb.create<scf::YieldOp>(wl);
        });
    kb.create<GridBarrierOp>(loc, kCounter);

    // 3. The image's group means of g*dy and g*dy*xhat (a thread a group,
    // its channels in order), then dx of the part.
    Value groupMeans = addWorkgroupBuffer(k, loc, 2 * G, acc);
    Value inverseCount = kb.create<arith::DivFOp>(
        loc, floatConstant(kb, loc, 1.0, acc, 1),
        indexToFloat(kb, loc, ix.mul(spatial, perGroup), acc));
    kb.create<scf::ForOp>(
        loc, tid, ix.c(G), ix.c(threads), ValueRange{},
        [&](OpBuilder &gb, Location gl, Value g, ValueRange) {
          IndexMath gx{gb, gl};
          Value first = gx.mul(g, perGroup);
          auto channels = gb.create<scf::ForOp>(
              gl, first, gx.add(first, gx.c(perGroup)), gx.c(1),
              ValueRange{zero, zero},
              [&](OpBuilder &cb, Location cl, Value c, ValueRange t) {
                IndexMath cx{cb, cl};
                Value w = hasScale ? loadLanes(cb, cl, kScale, c, 1, acc)[0]
                                   : Value();
                SmallVector<Value> added;
                // (sum g*dy, sum g*dy*xhat): the totals' sums 1 and 0.
                for (int64_t kk : {1, 0}) {
                  Value v = cb.create<memref::LoadOp>(
                      cl, kTotals, cx.madd(cx.madd(image, 2, cx.c(kk)), C, c));
                  if (w)
                    v = cb.create<arith::MulFOp>(cl, w, v);
                  added.push_back(
                      cb.create<arith::AddFOp>(cl, t[added.size()], v));
                }
                cb.create<scf::YieldOp>(cl, added);
              });
          for (int64_t i = 0; i < 2; ++i)
            gb.create<memref::StoreOp>(
                gl,
                gb.create<arith::MulFOp>(gl, channels.getResult(i),
                                         inverseCount),
                groupMeans, gx.madd(g, 2, gx.c(i)));
          gb.create<scf::YieldOp>(gl);
        });
    kb.create<gpu::BarrierOp>(loc);
    SmallVector<Value> meanDy = perLane([&](Value g) -> Value {
      return kb.create<memref::LoadOp>(loc, groupMeans, ix.mul(g, 2));
    });
    SmallVector<Value> meanDyXhat = perLane([&](Value g) -> Value {
      return kb.create<memref::LoadOp>(loc, groupMeans, ix.madd(g, 2, ix.c(1)));
    });
    mean = statistic(kMean);
    rstd = statistic(kRstd);
    SmallVector<Value> scales;
    if (hasScale)
      scales = loadLanes(kb, loc, kScale, channel, vw, acc);
    emitPositions(
        kb, loc, begin, end, row, rows, imageBase, C, channel, ValueRange{},
        /*lastFirst=*/true,
        [&](OpBuilder &fb, Location fl, Value offset, ValueRange) {
          SmallVector<Value> dy = loadLanes(fb, fl, kDy, offset, vw, acc);
          SmallVector<Value> x = loadLanes(fb, fl, kX, offset, vw, acc);
          SmallVector<Value> dx;
          for (int64_t l = 0; l < vw; ++l) {
            Value xhat =
                emitNormalize(fb, fl, x[l], mean[l], rstd[l], Value(), Value());
            Value gdy = hasScale
                            ? fb.create<arith::MulFOp>(fl, scales[l], dy[l])
                            : dy[l];
            dx.push_back(emitNormGradInput(fb, fl, gdy, xhat, meanDyXhat[l],
                                           meanDy[l], rstd[l]));
          }
          storeLanes(fb, fl, dx, kDx, offset);
          return SmallVector<Value>{};
        });
  }
  bindResidentBlocks(resident, k.func, target);
  // (Launched where the tensor is not empty: a launch plan takes no
  // condition from what the device holds.)
  launchUnlessEmpty(b, loc, k, grid, threads, args,
                    im.product(in.images, in.spatial));
  return others;
}
