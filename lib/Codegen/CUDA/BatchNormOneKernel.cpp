//===- BatchNormOneKernel.cpp - batch norms in one launch -----------------===//
//
// Part of normfuse. batch_norm_training and batch_norm_grad with their
// channels first (NCHW: a channel's elements are `outer` runs of `inner`),
// each in one cooperative launch, a grid of at most the blocks the device
// holds:
//
// 1. Each channel's elements are cut into `parts` ranges of whole vectors
//    (as many as the device holds blocks, shared among the channels); the
//    blocks take the (channel, range) tasks in turn, and a thread loads
//    `vectorsPerThread` vectors of its range at once.
//    - Training: a thread merges the vectors' mean and M2 (around their own
//      mean) into its own by Chan's formula; the block then adds its
//      threads' n x mean (the range's mean) and M2 + n (mean_t - mean)^2
//      (the range's M2).
//    - Gradient: a thread adds dy and dy * xhat; the block adds its
//      threads'.
//    Each task writes its two values.
// 2. The grid's barrier. For each of its tasks, last first, every warp of
//    the block takes the channel's totals from its ranges' values the same
//    way (lanes over the ranges, warp sums: the same bits in every thread
//    of every block of the channel); the block of range 0 writes the
//    statistics (mean, rstd, running statistics) or the parameter gradients
//    (dscale, dbias); the block then writes y or dx of its range, its
//    vectors last first, so that what the first sweep read last (still in
//    L2) is read first.
//
// The input is read once from memory and a second time from L2 where it
// fits there (ResNet-50's activations up to about 50 MB on an H100), the
// result written once; one launch where there were three (training: the
// partial moments, their merge, the elementwise pass) or four (gradient:
// the sums, their totals, the finish, dx). Deterministic: fixed orders, no
// atomics. Never E[x^2] - E[x]^2.
//
//===----------------------------------------------------------------------===//

#include "BatchNormOneKernel.h"
#include "KernelBuilder.h"
#include "normfuse/Codegen/Common/ActivationMath.h"
#include "normfuse/Codegen/Common/NormMath.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <tuple>

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

constexpr int64_t kWarp = GpuTarget::kWarpSize;

/// The host's side of a one kernel: its ranges, tasks and grid (host index
/// values, constants where the sizes are static but for what depends on the
/// device), two values a task (`partials`) and the grid barrier's counter.
struct RangePlan {
  Value outer, channels, inner, count, parts, partLen, tasks, grid;
  Value partials, counter;
  ResidentBlocksOp resident;
};

RangePlan planRanges(OpBuilder &b, Location loc, Value outer, Value channels,
                     Value inner, const ChannelReductionSchedule &s, Type acc) {
  IndexMath im{b, loc};
  auto max = [&](Value x, Value y) {
    return b.createOrFold<arith::MaxUIOp>(loc, x, y);
  };
  auto min = [&](Value x, Value y) {
    return b.createOrFold<arith::MinUIOp>(loc, x, y);
  };
  RangePlan p;
  p.outer = outer;
  p.channels = channels;
  p.inner = inner;
  // The blocks the device holds shared among the channels, at least a
  // vector a thread each; whole vectors, so none crosses a run.
  Value one = im.c(1);
  p.count = im.product(outer, inner);
  p.resident = residentBlocks(b, loc, s.threadsPerRow, s.maxBlocks);
  Value byGrid = max(
      one, b.createOrFold<arith::DivUIOp>(loc, p.resident, max(channels, one)));
  Value byWork = max(one, im.ceilDiv(p.count, s.threadsPerRow * s.vectorWidth));
  p.parts = min(byGrid, byWork);
  p.partLen =
      im.product(im.ceilDiv(im.ceilDiv(p.count, p.parts), s.vectorWidth),
                 im.c(s.vectorWidth));
  p.tasks = im.product(channels, p.parts);
  p.grid = min(p.tasks, p.resident);
  p.partials = allocTemporary(b, loc, im.product(p.tasks, im.c(2)), acc);
  auto counter =
      b.create<memref::AllocOp>(loc, MemRefType::get({1}, b.getI32Type()));
  counter->setAttr(kZeroedAttr, b.getUnitAttr());
  p.counter = counter;
  return p;
}

/// Binds the residency to the kernel and launches it where the tensor is
/// not empty (a launch plan takes no condition from what the device holds).
void launchPlanned(OpBuilder &b, Location loc, const RangePlan &p,
                   const Kernel &k, const ChannelReductionSchedule &s,
                   ValueRange args, const GpuTarget &target) {
  bindResidentBlocks(p.resident, k.func, target);
  launchUnlessEmpty(b, loc, k, p.grid, s.threadsPerRow, args,
                    IndexMath{b, loc}.product(p.channels, p.count));
}

/// A task's range of its channel's elements: [begin, end), end >= begin.
struct TaskRange {
  Value channel, part, begin, end;
};

/// What both kernels do the same way, in the kernel.
struct Frame {
  Frame(Kernel &k, Location loc, const RangePlan &p,
        const ChannelReductionSchedule &s, Type acc, Value partials)
      : T(s.threadsPerRow), vw(s.vectorWidth), U(s.vectorsPerThread), acc(acc),
        partials(partials) {
    OpBuilder &b = k.body;
    channels = k.size(b, loc, p.channels);
    inner = k.size(b, loc, p.inner);
    count = k.size(b, loc, p.count);
    parts = k.size(b, loc, p.parts);
    partLen = k.size(b, loc, p.partLen);
    tasks = k.size(b, loc, p.tasks);
    tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
    gridBlocks = b.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
    lane = IndexMath{b, loc}.rem(tid, kWarp);
    zero = floatConstant(b, loc, 0.0, acc, 1);
    scratch = addWorkgroupBuffer(k, loc, std::max<int64_t>(1, T / kWarp), acc);
  }

  TaskRange rangeOf(OpBuilder &b, Location loc, Value task) const {
    IndexMath ix{b, loc};
    TaskRange r;
    r.channel = ix.div(task, parts);
    r.part = ix.rem(task, parts);
    r.begin = ix.mul(r.part, partLen);
    Value end = b.create<arith::MinUIOp>(loc, ix.add(r.begin, partLen), count);
    r.end = b.create<arith::MaxUIOp>(loc, end, r.begin);
    return r;
  }

  /// Element j of `channel`: run j / inner, position j % inner.
  Value offsetOf(IndexMath &ix, Value channel, Value j) const {
    return ix.add(
        ix.mul(ix.add(ix.mul(ix.div(j, inner), channels), channel), inner),
        ix.rem(j, inner));
  }

  /// Piece `piece` of the thread's vectors of `r`: for each of its U
  /// vectors, whether it lies in the range and its first element.
  void pieceAt(OpBuilder &b, Location loc, const TaskRange &r, Value vectors,
               Value piece, SmallVector<Value> &valid,
               SmallVector<Value> &at) const {
    IndexMath ix{b, loc};
    for (int64_t u = 0; u < U; ++u) {
      Value v = ix.add(ix.mul(ix.madd(piece, U, ix.c(u)), T), tid);
      valid.push_back(ix.below(v, vectors));
      at.push_back(ix.add(r.begin, ix.mul(v, vw)));
    }
  }

  /// The `vw` lanes of `buffer` at element j of `channel`, zeros where
  /// `valid` does not hold.
  SmallVector<Value> load(OpBuilder &b, Location loc, Value buffer,
                          Value channel, Value j, Value valid) const {
    return emitValuesIf(b, loc, valid, acc, [&](OpBuilder &vb, Location vl) {
      IndexMath vx{vb, vl};
      return loadLanes(vb, vl, buffer, offsetOf(vx, channel, j), vw, acc);
    });
  }

  /// The thread's vectors of `r`, U at a time, first to last (`lastFirst`:
  /// last to first), `body` taking each piece's valid (null: always) and
  /// first elements with the carried values (starting as `init`) and giving
  /// the next.
  SmallVector<Value> sweep(
      OpBuilder &b, Location loc, const TaskRange &r, bool lastFirst,
      ValueRange init,
      llvm::function_ref<SmallVector<Value>(
          OpBuilder &, Location, ArrayRef<Value>, ArrayRef<Value>, ValueRange)>
          body) const {
    IndexMath ix{b, loc};
    Value vectors = ix.div(ix.sub(r.end, r.begin), vw);
    if (!lastFirst) {
      // The thread's first vector of each piece is in the range by the
      // loop's bound (null: no test, no branch around its load; fewer
      // registers than the pieces' form below, 56 where it took 80 at
      // bf16).
      auto loop = b.create<scf::ForOp>(
          loc, tid, vectors, ix.c(T * U), init,
          [&](OpBuilder &pb, Location pl, Value v0, ValueRange carried) {
            IndexMath px{pb, pl};
            SmallVector<Value> valid, at;
            for (int64_t u = 0; u < U; ++u) {
              Value v = px.add(v0, px.c(u * T));
              valid.push_back(u ? px.below(v, vectors) : Value());
              at.push_back(px.add(r.begin, px.mul(v, vw)));
            }
            pb.create<scf::YieldOp>(pl, body(pb, pl, valid, at, carried));
          });
      return SmallVector<Value>(loop.getResults());
    }
    Value pieces = ix.ceilDiv(vectors, T * U);
    auto loop = b.create<scf::ForOp>(
        loc, ix.c(0), pieces, ix.c(1), init,
        [&](OpBuilder &pb, Location pl, Value p, ValueRange carried) {
          IndexMath px{pb, pl};
          Value piece = px.sub(px.sub(pieces, px.c(1)), p);
          SmallVector<Value> valid, at;
          pieceAt(pb, pl, r, vectors, piece, valid, at);
          pb.create<scf::YieldOp>(pl, body(pb, pl, valid, at, carried));
        });
    return SmallVector<Value>(loop.getResults());
  }

  /// For each of the block's tasks, in order (a grid-stride loop).
  void forEachTask(
      OpBuilder &b, Location loc,
      llvm::function_ref<void(OpBuilder &, Location, Value, const TaskRange &)>
          body) const {
    b.create<scf::ForOp>(
        loc, bid, tasks, gridBlocks, ValueRange{},
        [&](OpBuilder &tb, Location tl, Value task, ValueRange) {
          body(tb, tl, task, rangeOf(tb, tl, task));
          tb.create<scf::YieldOp>(tl);
        });
  }

  /// The same, last first.
  void forEachTaskLastFirst(
      OpBuilder &b, Location loc,
      llvm::function_ref<void(OpBuilder &, Location, Value, const TaskRange &)>
          body) const {
    IndexMath ix{b, loc};
    // (The grid is at most the tasks: every block has one.)
    Value own = ix.ceilDiv(ix.sub(tasks, bid), gridBlocks);
    b.create<scf::ForOp>(
        loc, ix.c(0), own, ix.c(1), ValueRange{},
        [&](OpBuilder &tb, Location tl, Value i, ValueRange) {
          IndexMath tx{tb, tl};
          Value task =
              tx.add(bid, tx.mul(tx.sub(tx.sub(own, tx.c(1)), i), gridBlocks));
          body(tb, tl, task, rangeOf(tb, tl, task));
          tb.create<scf::YieldOp>(tl);
        });
  }

  /// Thread 0 writes the task's two values.
  void writeTask(OpBuilder &b, Location loc, Value task, Value first,
                 Value second) const {
    IndexMath ix{b, loc};
    b.create<scf::IfOp>(
        loc, ix.below(tid, ix.c(1)), [&](OpBuilder &sb, Location sl) {
          IndexMath sx{sb, sl};
          sb.create<memref::StoreOp>(sl, first, partials, sx.mul(task, 2));
          sb.create<memref::StoreOp>(sl, second, partials,
                                     sx.madd(task, 2, sx.c(1)));
          sb.create<scf::YieldOp>(sl);
        });
  }

  /// Over the ranges of `channel`: the warp's sum of `term` of each range
  /// (its element count as a float and the index of its first value), lane
  /// i taking ranges i, i + 32, ... in order; the same bits in every
  /// thread.
  Value overRanges(
      OpBuilder &b, Location loc, Value channel,
      llvm::function_ref<Value(OpBuilder &, Location, Value count, Value at)>
          term) const {
    IndexMath ix{b, loc};
    Value firstTask = ix.mul(channel, parts);
    auto loop = b.create<scf::ForOp>(
        loc, lane, parts, ix.c(kWarp), ValueRange{zero},
        [&](OpBuilder &qb, Location ql, Value q, ValueRange sum) {
          IndexMath qx{qb, ql};
          Value start = qx.mul(q, partLen);
          Value left = qb.create<arith::MinUIOp>(
              ql,
              qb.create<arith::SubIOp>(
                  ql, qb.create<arith::MaxUIOp>(ql, count, start), start),
              partLen);
          Value n = indexToFloat(qb, ql, left, acc);
          Value at = qx.mul(qx.add(firstTask, q), 2);
          qb.create<scf::YieldOp>(ql, ValueRange{qb.create<arith::AddFOp>(
                                          ql, sum[0], term(qb, ql, n, at))});
        });
    return emitWarpSum(b, loc, loop.getResult(0), kWarp);
  }

  /// Thread 0 of the block of the channel's range 0: `body`.
  void ifWritesTheChannel(
      OpBuilder &b, Location loc, const TaskRange &r,
      llvm::function_ref<void(OpBuilder &, Location)> body) const {
    IndexMath ix{b, loc};
    Value writes = b.create<arith::AndIOp>(loc, ix.below(r.part, ix.c(1)),
                                           ix.below(tid, ix.c(1)));
    b.create<scf::IfOp>(loc, writes, [&](OpBuilder &sb, Location sl) {
      body(sb, sl);
      sb.create<scf::YieldOp>(sl);
    });
  }

  /// Stores `values` (the lanes of vector u) at element `at[u]` of the
  /// channel where `valid[u]` holds, for each u, streaming (the result is
  /// not read again here).
  void storeWhereValid(
      OpBuilder &b, Location loc, Value buffer, Value channel,
      ArrayRef<Value> valid, ArrayRef<Value> at,
      llvm::function_ref<SmallVector<Value>(OpBuilder &, Location, int64_t)>
          values) const {
    for (int64_t u = 0; u < U; ++u)
      b.create<scf::IfOp>(loc, valid[u], [&](OpBuilder &sb, Location sl) {
        IndexMath sx{sb, sl};
        storeLanes(sb, sl, values(sb, sl, u), buffer,
                   offsetOf(sx, channel, at[u]), /*evictFirst=*/true);
        sb.create<scf::YieldOp>(sl);
      });
  }

  int64_t T, vw, U;
  Type acc;
  Value partials;
  Value channels, inner, count, parts, partLen, tasks;
  Value tid, bid, gridBlocks, lane, zero, scratch;
};

Value fadd(OpBuilder &b, Location loc, Value x, Value y) {
  return b.create<arith::AddFOp>(loc, x, y);
}
Value fmul(OpBuilder &b, Location loc, Value x, Value y) {
  return b.create<arith::MulFOp>(loc, x, y);
}
Value fsub(OpBuilder &b, Location loc, Value x, Value y) {
  return b.create<arith::SubFOp>(loc, x, y);
}

} // namespace

void cuda::emitBatchNormOneKernel(OpBuilder &b, Location loc, ModuleOp module,
                                  const std::string &base,
                                  const BatchNormTrainingBuffers &in,
                                  const ChannelReductionSchedule &s,
                                  const GpuTarget &target) {
  const bool hasScale = bool(in.scale), hasBias = bool(in.bias);
  Type acc = in.acc;
  RangePlan plan =
      planRanges(b, loc, in.outer, in.channels, in.inner, s, in.acc);
  SmallVector<Value> args{in.x};
  if (hasScale)
    args.push_back(in.scale);
  if (hasBias)
    args.push_back(in.bias);
  args.append({in.runningMean, in.runningVar, in.y, in.mean, in.rstd,
               in.newRunningMean, in.newRunningVar, plan.partials,
               plan.counter});
  Kernel k =
      createKernel(module, loc, base + "_one_kernel",
                   ValueRange(args).getTypes(), s.threadsPerRow, s.str());
  {
    OpBuilder &kb = k.body;
    unsigned next = 1;
    Value kX = k.arg(0);
    Value kScale = hasScale ? k.arg(next++) : Value();
    Value kBias = hasBias ? k.arg(next++) : Value();
    Value kRunningMean = k.arg(next), kRunningVar = k.arg(next + 1),
          kY = k.arg(next + 2), kMean = k.arg(next + 3),
          kRstd = k.arg(next + 4), kNewMean = k.arg(next + 5),
          kNewVar = k.arg(next + 6), kCounter = k.arg(next + 8);
    Frame f(k, loc, plan, s, acc, k.arg(next + 7));
    Value zero = f.zero;

    // 1. Each task's range: its mean and M2.
    f.forEachTask(
        kb, loc,
        [&](OpBuilder &tb, Location tl, Value task, const TaskRange &r) {
          SmallVector<Value> m = f.sweep(
              tb, tl, r, /*lastFirst=*/false, ValueRange{zero, zero, zero},
              [&](OpBuilder &pb, Location pl, ArrayRef<Value> valid,
                  ArrayRef<Value> at, ValueRange m) {
                IndexMath px{pb, pl};
                SmallVector<SmallVector<Value>> x;
                for (int64_t u = 0; u < f.U; ++u)
                  x.push_back(f.load(pb, pl, kX, r.channel, at[u], valid[u]));
                // The piece's count, mean (zeros where a vector is not in the
                // range) and the squared deviations of its vectors.
                Value n = px.c(0), sum = zero;
                for (int64_t u = 0; u < f.U; ++u) {
                  n = px.add(n, valid[u]
                                    ? pb.create<arith::SelectOp>(
                                            pl, valid[u], px.c(f.vw), px.c(0))
                                          .getResult()
                                    : px.c(f.vw));
                  for (Value lane : x[u])
                    sum = fadd(pb, pl, sum, lane);
                }
                Value pieceCount = indexToFloat(pb, pl, n, acc);
                Value pieceMean = pb.create<arith::DivFOp>(
                    pl, sum,
                    pb.create<arith::MaximumFOp>(
                        pl, pieceCount, floatConstant(pb, pl, 1.0, acc, 1)));
                Value pieceM2 = zero;
                for (int64_t u = 0; u < f.U; ++u) {
                  Value squares = zero;
                  for (Value lane : x[u]) {
                    Value d = fsub(pb, pl, lane, pieceMean);
                    squares = fadd(pb, pl, squares, fmul(pb, pl, d, d));
                  }
                  if (valid[u])
                    squares =
                        pb.create<arith::SelectOp>(pl, valid[u], squares, zero);
                  pieceM2 = fadd(pb, pl, pieceM2, squares);
                }
                Moments merged =
                    emitChanCombine(pb, pl, Moments{m[0], m[1], m[2]},
                                    Moments{pieceCount, pieceMean, pieceM2});
                return SmallVector<Value>{merged.count, merged.mean, merged.m2};
              });
          // The range's mean and M2 from its threads' (an empty range: 0).
          IndexMath tx{tb, tl};
          Value rangeCount = tb.create<arith::MaximumFOp>(
              tl, indexToFloat(tb, tl, tx.sub(r.end, r.begin), acc),
              floatConstant(tb, tl, 1.0, acc, 1));
          Value rangeMean = tb.create<arith::DivFOp>(
              tl,
              emitBlockSum(tb, tl, fmul(tb, tl, m[0], m[1]), f.scratch, f.T),
              rangeCount);
          Value d = fsub(tb, tl, m[1], rangeMean);
          Value rangeM2 = emitBlockSum(
              tb, tl,
              fadd(tb, tl, m[2], fmul(tb, tl, m[0], fmul(tb, tl, d, d))),
              f.scratch, f.T);
          f.writeTask(tb, tl, task, rangeMean, rangeM2);
        });
    kb.create<GridBarrierOp>(loc, kCounter);

    // 2. The block's tasks again, last first: the channel's statistics
    // from its ranges', then y of the range.
    Value total = indexToFloat(kb, loc, f.count, acc);
    f.forEachTaskLastFirst(
        kb, loc, [&](OpBuilder &tb, Location tl, Value, const TaskRange &r) {
          Value mean = tb.create<arith::DivFOp>(
              tl,
              f.overRanges(tb, tl, r.channel,
                           [&](OpBuilder &qb, Location ql, Value n, Value at) {
                             return fmul(
                                 qb, ql, n,
                                 qb.create<memref::LoadOp>(ql, f.partials, at));
                           }),
              total);
          Value m2 = f.overRanges(
              tb, tl, r.channel,
              [&](OpBuilder &qb, Location ql, Value n, Value at) {
                IndexMath qx{qb, ql};
                Value rangeMean = qb.create<memref::LoadOp>(ql, f.partials, at);
                Value rangeM2 = qb.create<memref::LoadOp>(ql, f.partials,
                                                          qx.add(at, qx.c(1)));
                Value d = fsub(qb, ql, rangeMean, mean);
                return fadd(qb, ql, rangeM2,
                            fmul(qb, ql, n, fmul(qb, ql, d, d)));
              });
          Value var = tb.create<arith::DivFOp>(tl, m2, total);
          Value rstd = emitRstd(tb, tl, var, in.epsilon);

          // The statistics, once a channel: running' = (1 - momentum) running +
          // momentum * statistic, the variance unbiased (n / (n - 1); the
          // verifier asks n > 1) unless the op asks for the biased one (ONNX).
          f.ifWritesTheChannel(tb, tl, r, [&](OpBuilder &sb, Location sl) {
            auto constant = [&](double v) {
              return floatConstant(sb, sl, v, acc, 1);
            };
            auto update = [&](Value buffer, Value stat) {
              Value old = loadLanes(sb, sl, buffer, r.channel, 1, acc)[0];
              return fadd(sb, sl,
                          fmul(sb, sl, constant(1.0 - in.momentum), old),
                          fmul(sb, sl, constant(in.momentum), stat));
            };
            Value runningVar =
                in.unbiasedRunningVar
                    ? sb.create<arith::DivFOp>(
                            sl, m2, fsub(sb, sl, total, constant(1.0)))
                          .getResult()
                    : var;
            storeLanes(sb, sl, {mean}, kMean, r.channel);
            storeLanes(sb, sl, {rstd}, kRstd, r.channel);
            storeLanes(sb, sl, {update(kRunningMean, mean)}, kNewMean,
                       r.channel);
            storeLanes(sb, sl, {update(kRunningVar, runningVar)}, kNewVar,
                       r.channel);
          });

          // 3. y of the range, its vectors last first.
          Value scale = hasScale
                            ? loadLanes(tb, tl, kScale, r.channel, 1, acc)[0]
                            : Value();
          Value bias = hasBias ? loadLanes(tb, tl, kBias, r.channel, 1, acc)[0]
                               : Value();
          f.sweep(tb, tl, r, /*lastFirst=*/true, ValueRange{},
                  [&](OpBuilder &pb, Location pl, ArrayRef<Value> valid,
                      ArrayRef<Value> at, ValueRange) {
                    SmallVector<SmallVector<Value>> y;
                    for (int64_t u = 0; u < f.U; ++u)
                      y.push_back(
                          f.load(pb, pl, kX, r.channel, at[u], valid[u]));
                    f.storeWhereValid(
                        pb, pl, kY, r.channel, valid, at,
                        [&](OpBuilder &sb, Location sl, int64_t u) {
                          SmallVector<Value> lanes;
                          for (Value lane : y[u])
                            lanes.push_back(emitNormalize(sb, sl, lane, mean,
                                                          rstd, scale, bias));
                          return lanes;
                        });
                    return SmallVector<Value>{};
                  });
        });
  }
  launchPlanned(b, loc, plan, k, s, args, target);
}

void cuda::emitBatchNormGradOneKernel(OpBuilder &b, Location loc,
                                      ModuleOp module, const std::string &base,
                                      const BatchNormGradBuffers &in,
                                      const ChannelReductionSchedule &s,
                                      const GpuTarget &target) {
  const bool hasScale = bool(in.scale);
  Type acc = in.acc;
  RangePlan plan =
      planRanges(b, loc, in.outer, in.channels, in.inner, s, in.acc);
  SmallVector<Value> args{in.dy, in.x, in.mean, in.rstd};
  if (hasScale)
    args.push_back(in.scale);
  args.append({in.dx, in.dscale, in.dbias, plan.partials, plan.counter});
  Kernel k =
      createKernel(module, loc, base + "_one_kernel",
                   ValueRange(args).getTypes(), s.threadsPerRow, s.str());
  {
    OpBuilder &kb = k.body;
    unsigned next = hasScale ? 5 : 4;
    Value kDy = k.arg(0), kX = k.arg(1), kMean = k.arg(2), kRstd = k.arg(3);
    Value kScale = hasScale ? k.arg(4) : Value();
    Value kDx = k.arg(next), kDscale = k.arg(next + 1),
          kDbias = k.arg(next + 2), kCounter = k.arg(next + 4);
    Frame f(k, loc, plan, s, acc, k.arg(next + 3));
    Value zero = f.zero;
    auto statistics = [&](OpBuilder &lb, Location ll, Value channel) {
      return std::make_pair(loadLanes(lb, ll, kMean, channel, 1, acc)[0],
                            loadLanes(lb, ll, kRstd, channel, 1, acc)[0]);
    };
    /// The vectors of dy and x of a piece (zeros where not in the range).
    auto loadPiece = [&](OpBuilder &pb, Location pl, const TaskRange &r,
                         ArrayRef<Value> valid, ArrayRef<Value> at,
                         SmallVector<SmallVector<Value>> &dy,
                         SmallVector<SmallVector<Value>> &x) {
      for (int64_t u = 0; u < f.U; ++u) {
        dy.push_back(f.load(pb, pl, kDy, r.channel, at[u], valid[u]));
        x.push_back(f.load(pb, pl, kX, r.channel, at[u], valid[u]));
      }
    };

    // 1. Each task's range: its sums of dy * xhat and of dy (a lane
    // outside the range is a dy of 0: it adds nothing to either).
    f.forEachTask(
        kb, loc,
        [&](OpBuilder &tb, Location tl, Value task, const TaskRange &r) {
          Value mean, rstd;
          std::tie(mean, rstd) = statistics(tb, tl, r.channel);
          SmallVector<Value> sums = f.sweep(
              tb, tl, r, /*lastFirst=*/false, ValueRange{zero, zero},
              [&](OpBuilder &pb, Location pl, ArrayRef<Value> valid,
                  ArrayRef<Value> at, ValueRange carried) {
                SmallVector<SmallVector<Value>> dy, x;
                loadPiece(pb, pl, r, valid, at, dy, x);
                Value dyXhat = carried[0], dySum = carried[1];
                for (int64_t u = 0; u < f.U; ++u)
                  for (int64_t l = 0; l < f.vw; ++l) {
                    Value xhat = emitNormalize(pb, pl, x[u][l], mean, rstd,
                                               Value(), Value());
                    dyXhat = fadd(pb, pl, dyXhat, fmul(pb, pl, dy[u][l], xhat));
                    dySum = fadd(pb, pl, dySum, dy[u][l]);
                  }
                return SmallVector<Value>{dyXhat, dySum};
              });
          Value dyXhat = emitBlockSum(tb, tl, sums[0], f.scratch, f.T);
          Value dySum = emitBlockSum(tb, tl, sums[1], f.scratch, f.T);
          f.writeTask(tb, tl, task, dyXhat, dySum);
        });
    kb.create<GridBarrierOp>(loc, kCounter);

    // 2. The block's tasks again, last first: the channel's sums from its
    // ranges' (dscale and dbias), then dx of the range.
    Value inverseCount =
        kb.create<arith::DivFOp>(loc, floatConstant(kb, loc, 1.0, acc, 1),
                                 indexToFloat(kb, loc, f.count, acc));
    f.forEachTaskLastFirst(
        kb, loc, [&](OpBuilder &tb, Location tl, Value, const TaskRange &r) {
          auto total = [&](int64_t which) {
            return f.overRanges(
                tb, tl, r.channel,
                [&](OpBuilder &qb, Location ql, Value, Value at) {
                  IndexMath qx{qb, ql};
                  return qb
                      .create<memref::LoadOp>(ql, f.partials,
                                              qx.add(at, qx.c(which)))
                      .getResult();
                });
          };
          Value dscale = total(0), dbias = total(1);
          f.ifWritesTheChannel(tb, tl, r, [&](OpBuilder &sb, Location sl) {
            storeLanes(sb, sl, {dscale}, kDscale, r.channel);
            storeLanes(sb, sl, {dbias}, kDbias, r.channel);
          });

          // dx = rstd (g dy - g mean(dy) - xhat g mean(dy xhat)).
          Value mean, rstd;
          std::tie(mean, rstd) = statistics(tb, tl, r.channel);
          Value g = hasScale ? loadLanes(tb, tl, kScale, r.channel, 1, acc)[0]
                             : Value();
          Value meanDy = fmul(tb, tl, dbias, inverseCount);
          Value meanDyXhat = fmul(tb, tl, dscale, inverseCount);
          if (g) {
            meanDy = fmul(tb, tl, meanDy, g);
            meanDyXhat = fmul(tb, tl, meanDyXhat, g);
          }
          f.sweep(tb, tl, r, /*lastFirst=*/true, ValueRange{},
                  [&](OpBuilder &pb, Location pl, ArrayRef<Value> valid,
                      ArrayRef<Value> at, ValueRange) {
                    SmallVector<SmallVector<Value>> dy, x;
                    loadPiece(pb, pl, r, valid, at, dy, x);
                    f.storeWhereValid(
                        pb, pl, kDx, r.channel, valid, at,
                        [&](OpBuilder &sb, Location sl, int64_t u) {
                          SmallVector<Value> dx;
                          for (int64_t l = 0; l < f.vw; ++l) {
                            Value xhat = emitNormalize(sb, sl, x[u][l], mean,
                                                       rstd, Value(), Value());
                            Value gdy =
                                g ? fmul(sb, sl, dy[u][l], g) : dy[u][l];
                            dx.push_back(emitNormGradInput(
                                sb, sl, gdy, xhat, meanDyXhat, meanDy, rstd));
                          }
                          return dx;
                        });
                    return SmallVector<Value>{};
                  });
        });
  }
  launchPlanned(b, loc, plan, k, s, args, target);
}
