//===- BatchNormOneKernel.cpp - BatchNorm training in one launch ----------===//
//
// Part of normfuse. batch_norm_training with its channels first (NCHW: a
// channel's elements are `outer` runs of `inner`) in one cooperative
// launch, a grid of at most the blocks the device holds:
//
// 1. Each channel's elements are cut into `parts` ranges of whole vectors
//    (as many as the device holds blocks, shared among the channels); the
//    blocks take the (channel, range) tasks in turn. A thread loads
//    `vectorsPerThread` vectors of its range at once and merges their
//    mean and M2 (around their own mean) into its own by Chan's formula;
//    the block then adds its threads' sums (the range's mean) and their
//    M2 plus n (mean_t - mean)^2 (the range's M2), and writes them.
// 2. The grid's barrier. For each of its tasks, last first, every warp of
//    the block merges the channel's ranges the same way (lanes over the
//    ranges, warp sums: the same bits in every thread of every block of
//    the channel); the block of range 0 writes the mean, rstd and running
//    statistics; the block then normalizes its range, its vectors last
//    first, so that what the first sweep read last (still in L2) is read
//    first.
//
// x is read once from memory and a second time from L2 where it fits
// there (ResNet-50's activations below about 50 MB on an H100), y written
// once; one launch where there were three (the partial moments, their
// merge, the elementwise pass). Deterministic: fixed orders, no atomics.
// Never E[x^2] - E[x]^2.
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

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

constexpr int64_t kWarp = GpuTarget::kWarpSize;

/// A task's range of its channel's elements: [begin, end), end >= begin.
struct TaskRange {
  Value channel, part, begin, end;
};

} // namespace

void cuda::emitBatchNormOneKernel(OpBuilder &b, Location loc, ModuleOp module,
                                  const std::string &base,
                                  const BatchNormTrainingBuffers &in,
                                  const ChannelReductionSchedule &s,
                                  const GpuTarget &target) {
  const int64_t T = s.threadsPerRow, vw = s.vectorWidth, U = s.vectorsPerThread;
  const bool hasScale = bool(in.scale), hasBias = bool(in.bias);
  Type acc = in.acc;
  IndexMath im{b, loc};
  auto max = [&](Value x, Value y) {
    return b.createOrFold<arith::MaxUIOp>(loc, x, y);
  };
  auto min = [&](Value x, Value y) {
    return b.createOrFold<arith::MinUIOp>(loc, x, y);
  };

  // The ranges: the blocks the device holds shared among the channels, at
  // least a vector a thread each; whole vectors, so none crosses a run.
  Value one = im.c(1);
  Value count = im.product(in.outer, in.inner);
  ResidentBlocksOp resident = residentBlocks(b, loc, T, s.maxBlocks);
  Value byGrid =
      max(one,
          b.createOrFold<arith::DivUIOp>(loc, resident, max(in.channels, one)));
  Value byWork = max(one, im.ceilDiv(count, T * vw));
  Value parts = min(byGrid, byWork);
  Value partLen =
      im.product(im.ceilDiv(im.ceilDiv(count, parts), vw), im.c(vw));
  Value tasks = im.product(in.channels, parts);
  Value grid = min(tasks, resident);

  Value partials = allocTemporary(b, loc, im.product(tasks, im.c(2)), acc);
  auto counter =
      b.create<memref::AllocOp>(loc, MemRefType::get({1}, b.getI32Type()));
  counter->setAttr(kZeroedAttr, b.getUnitAttr());
  SmallVector<Value> args{in.x};
  if (hasScale)
    args.push_back(in.scale);
  if (hasBias)
    args.push_back(in.bias);
  args.append({in.runningMean, in.runningVar, in.y, in.mean, in.rstd,
               in.newRunningMean, in.newRunningVar, partials, counter});
  Kernel k = createKernel(module, loc, base + "_one_kernel",
                          ValueRange(args).getTypes(), T, s.str());
  {
    OpBuilder &kb = k.body;
    IndexMath ix{kb, loc};
    unsigned next = 1;
    Value kX = k.arg(0);
    Value kScale = hasScale ? k.arg(next++) : Value();
    Value kBias = hasBias ? k.arg(next++) : Value();
    Value kRunningMean = k.arg(next), kRunningVar = k.arg(next + 1),
          kY = k.arg(next + 2), kMean = k.arg(next + 3),
          kRstd = k.arg(next + 4), kNewMean = k.arg(next + 5),
          kNewVar = k.arg(next + 6), kPartials = k.arg(next + 7),
          kCounter = k.arg(next + 8);
    Value channels = k.size(kb, loc, in.channels);
    Value inner = k.size(kb, loc, in.inner);
    Value kCount = k.size(kb, loc, count), kParts = k.size(kb, loc, parts);
    Value kPartLen = k.size(kb, loc, partLen), kTasks = k.size(kb, loc, tasks);
    Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    Value bid = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
    Value gridBlocks = kb.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
    Value zero = floatConstant(kb, loc, 0.0, acc, 1);
    Value scratch =
        addWorkgroupBuffer(k, loc, std::max<int64_t>(1, T / kWarp), acc);

    auto rangeOf = [&](OpBuilder &rb, Location rl, Value task) {
      IndexMath rx{rb, rl};
      TaskRange r;
      r.channel = rx.div(task, kParts);
      r.part = rx.rem(task, kParts);
      r.begin = rx.mul(r.part, kPartLen);
      Value end =
          rb.create<arith::MinUIOp>(rl, rx.add(r.begin, kPartLen), kCount);
      r.end = rb.create<arith::MaxUIOp>(rl, end, r.begin);
      return r;
    };
    // Element j of `channel`: run j / inner, position j % inner.
    auto offsetOf = [&](IndexMath &ox, Value channel, Value j) {
      return ox.add(
          ox.mul(ox.add(ox.mul(ox.div(j, inner), channels), channel), inner),
          ox.rem(j, inner));
    };
    // The `vw` lanes of x at element j of `channel`, zeros where `valid`
    // (null: always) does not hold.
    auto loadX = [&](OpBuilder &lb, Location ll, Value channel, Value j,
                     Value valid) {
      return emitValuesIf(lb, ll, valid, acc, [&](OpBuilder &vb, Location vl) {
        IndexMath vx{vb, vl};
        return loadLanes(vb, vl, kX, offsetOf(vx, channel, j), vw, acc);
      });
    };
    auto toFloat = [&](OpBuilder &fb, Location fl, Value n) {
      return indexToFloat(fb, fl, n, acc);
    };
    auto fadd = [](OpBuilder &fb, Location fl, Value x, Value y) -> Value {
      return fb.create<arith::AddFOp>(fl, x, y);
    };
    auto fmul = [](OpBuilder &fb, Location fl, Value x, Value y) -> Value {
      return fb.create<arith::MulFOp>(fl, x, y);
    };
    auto fsub = [](OpBuilder &fb, Location fl, Value x, Value y) -> Value {
      return fb.create<arith::SubFOp>(fl, x, y);
    };

    // 1. Each task's range: its mean and M2.
    kb.create<scf::ForOp>(
        loc, bid, kTasks, gridBlocks, ValueRange{},
        [&](OpBuilder &tb, Location tl, Value task, ValueRange) {
          IndexMath tx{tb, tl};
          TaskRange r = rangeOf(tb, tl, task);
          Value first = tx.add(r.begin, tx.mul(tid, vw));
          auto pieces = tb.create<scf::ForOp>(
              tl, first, r.end, tx.c(T * vw * U), ValueRange{zero, zero, zero},
              [&](OpBuilder &pb, Location pl, Value j0, ValueRange m) {
                IndexMath px{pb, pl};
                // U vectors, T * vw apart; the first is in the range.
                SmallVector<Value> valid;
                SmallVector<SmallVector<Value>> x;
                for (int64_t u = 0; u < U; ++u) {
                  Value j = px.add(j0, px.c(u * T * vw));
                  valid.push_back(u ? px.below(j, r.end) : Value());
                  x.push_back(loadX(pb, pl, r.channel, j, valid.back()));
                }
                Value n = px.c(vw);
                Value sum = zero;
                for (int64_t u = 0; u < U; ++u) {
                  if (valid[u])
                    n = px.add(n, pb.create<arith::SelectOp>(
                                      pl, valid[u], px.c(vw), px.c(0)));
                  for (Value lane : x[u])
                    sum = fadd(pb, pl, sum, lane);
                }
                Value pieceCount = toFloat(pb, pl, n);
                Value pieceMean = pb.create<arith::DivFOp>(pl, sum, pieceCount);
                Value pieceM2 = zero;
                for (int64_t u = 0; u < U; ++u) {
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
                pb.create<scf::YieldOp>(
                    pl, ValueRange{merged.count, merged.mean, merged.m2});
              });
          Value n = pieces.getResult(0), mean = pieces.getResult(1),
                m2 = pieces.getResult(2);
          // The range's mean and M2 from its threads' (an empty range: 0).
          Value rangeCount = tb.create<arith::MaximumFOp>(
              tl, toFloat(tb, tl, tx.sub(r.end, r.begin)),
              floatConstant(tb, tl, 1.0, acc, 1));
          Value rangeMean = tb.create<arith::DivFOp>(
              tl, emitBlockSum(tb, tl, fmul(tb, tl, n, mean), scratch, T),
              rangeCount);
          Value d = fsub(tb, tl, mean, rangeMean);
          Value rangeM2 = emitBlockSum(
              tb, tl, fadd(tb, tl, m2, fmul(tb, tl, n, fmul(tb, tl, d, d))),
              scratch, T);
          tb.create<scf::IfOp>(
              tl, tx.below(tid, tx.c(1)), [&](OpBuilder &sb, Location sl) {
                IndexMath sx{sb, sl};
                sb.create<memref::StoreOp>(sl, rangeMean, kPartials,
                                           sx.mul(task, 2));
                sb.create<memref::StoreOp>(sl, rangeM2, kPartials,
                                           sx.madd(task, 2, sx.c(1)));
                sb.create<scf::YieldOp>(sl);
              });
          tb.create<scf::YieldOp>(tl);
        });
    kb.create<GridBarrierOp>(loc, kCounter);

    // 2. The block's tasks again, last first.
    Value own = ix.ceilDiv(ix.sub(kTasks, bid), gridBlocks);
    Value lane = ix.rem(tid, kWarp);
    Value total = toFloat(kb, loc, kCount);
    kb.create<scf::ForOp>(
        loc, ix.c(0), own, ix.c(1), ValueRange{},
        [&](OpBuilder &tb, Location tl, Value i, ValueRange) {
          IndexMath tx{tb, tl};
          Value task =
              tx.add(bid, tx.mul(tx.sub(tx.sub(own, tx.c(1)), i), gridBlocks));
          TaskRange r = rangeOf(tb, tl, task);
          Value firstTask = tx.mul(r.channel, kParts);
          // The channel's ranges: lanes over them, then warp sums.
          auto overRanges =
              [&](Value init,
                  llvm::function_ref<Value(OpBuilder &, Location, Value count,
                                           Value mean, Value at)>
                      term) {
                auto loop = tb.create<scf::ForOp>(
                    tl, lane, kParts, tx.c(kWarp), ValueRange{init},
                    [&](OpBuilder &qb, Location ql, Value q, ValueRange sum) {
                      IndexMath qx{qb, ql};
                      Value start = qx.mul(q, kPartLen);
                      Value inside = qx.below(start, kCount);
                      Value left = qb.create<arith::MinUIOp>(
                          ql,
                          qb.create<arith::SubIOp>(
                              ql, qb.create<arith::MaxUIOp>(ql, kCount, start),
                              start),
                          kPartLen);
                      Value n = toFloat(qb, ql,
                                        qb.create<arith::SelectOp>(
                                            ql, inside, left, qx.c(0)));
                      Value at = qx.mul(qx.add(firstTask, q), 2);
                      Value mean = qb.create<memref::LoadOp>(ql, kPartials, at);
                      qb.create<scf::YieldOp>(
                          ql, ValueRange{fadd(qb, ql, sum[0],
                                              term(qb, ql, n, mean, at))});
                    });
                return emitWarpSum(tb, tl, loop.getResult(0), kWarp);
              };
          Value mean = tb.create<arith::DivFOp>(
              tl,
              overRanges(zero, [&](OpBuilder &qb, Location ql, Value n, Value m,
                                   Value) { return fmul(qb, ql, n, m); }),
              total);
          Value m2 = overRanges(zero, [&](OpBuilder &qb, Location ql, Value n,
                                          Value m, Value at) {
            IndexMath qx{qb, ql};
            Value rangeM2 =
                qb.create<memref::LoadOp>(ql, kPartials, qx.add(at, qx.c(1)));
            Value d = fsub(qb, ql, m, mean);
            return fadd(qb, ql, rangeM2, fmul(qb, ql, n, fmul(qb, ql, d, d)));
          });
          Value var = tb.create<arith::DivFOp>(tl, m2, total);
          Value rstd = emitRstd(tb, tl, var, in.epsilon);

          // The statistics, once a channel: running' = (1 - momentum)
          // running + momentum * statistic, the variance unbiased (n / (n -
          // 1); the verifier asks n > 1) unless the op asks for the biased
          // one (ONNX).
          Value writes = tb.create<arith::AndIOp>(tl, tx.below(r.part, tx.c(1)),
                                                  tx.below(tid, tx.c(1)));
          tb.create<scf::IfOp>(tl, writes, [&](OpBuilder &sb, Location sl) {
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
                    : var;
            storeLanes(sb, sl, {mean}, kMean, r.channel);
            storeLanes(sb, sl, {rstd}, kRstd, r.channel);
            storeLanes(sb, sl, {update(kRunningMean, mean)}, kNewMean,
                       r.channel);
            storeLanes(sb, sl, {update(kRunningVar, runningVar)}, kNewVar,
                       r.channel);
            sb.create<scf::YieldOp>(sl);
          });

          // 3. y of the range, its vectors last first.
          Value scale = hasScale
                            ? loadLanes(tb, tl, kScale, r.channel, 1, acc)[0]
                            : Value();
          Value bias = hasBias ? loadLanes(tb, tl, kBias, r.channel, 1, acc)[0]
                               : Value();
          Value vectors = tx.div(tx.sub(r.end, r.begin), vw);
          Value pieces = tx.ceilDiv(vectors, T * U);
          tb.create<scf::ForOp>(
              tl, tx.c(0), pieces, tx.c(1), ValueRange{},
              [&](OpBuilder &pb, Location pl, Value p, ValueRange) {
                IndexMath px{pb, pl};
                Value piece = px.sub(px.sub(pieces, px.c(1)), p);
                SmallVector<Value> valid, at;
                SmallVector<SmallVector<Value>> x;
                for (int64_t u = 0; u < U; ++u) {
                  Value v = px.add(px.mul(px.madd(piece, U, px.c(u)), T), tid);
                  valid.push_back(px.below(v, vectors));
                  at.push_back(px.add(r.begin, px.mul(v, vw)));
                  x.push_back(
                      loadX(pb, pl, r.channel, at.back(), valid.back()));
                }
                for (int64_t u = 0; u < U; ++u)
                  pb.create<scf::IfOp>(
                      pl, valid[u], [&](OpBuilder &sb, Location sl) {
                        IndexMath sx{sb, sl};
                        SmallVector<Value> y;
                        for (Value lane : x[u])
                          y.push_back(emitNormalize(sb, sl, lane, mean, rstd,
                                                    scale, bias));
                        storeLanes(sb, sl, y, kY,
                                   offsetOf(sx, r.channel, at[u]),
                                   /*evictFirst=*/true);
                        sb.create<scf::YieldOp>(sl);
                      });
                pb.create<scf::YieldOp>(pl);
              });
          tb.create<scf::YieldOp>(tl);
        });
  }
  bindResidentBlocks(resident, k.func, target);
  // (Launched where the tensor is not empty: a launch plan takes no
  // condition from what the device holds.)
  launchUnlessEmpty(b, loc, k, grid, T, args, im.product(in.channels, count));
}
