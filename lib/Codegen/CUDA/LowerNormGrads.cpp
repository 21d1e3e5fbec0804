//===- LowerNormGrads.cpp - layer/rms norm gradients as GPU kernels -------===//
//
// Part of normfuse. layer_norm_grad and rms_norm_grad over rows of `cols`
// elements, following their RowNormGradSchedule (Schedule.h):
//
//  - `<f>_<op>_rowsums` (split rows only): per chunk of a row, the sums of
//    g*dy*xhat and g*dy, one pair per block;
//  - `<f>_<op>`: blocks loop over rows; each holds its chunk of a row in
//    registers, forms the row's sums (by shuffles and workgroup memory,
//    from the chunk sums, or, a cluster of blocks holding the row, from
//    the blocks' sums exchanged through distributed shared memory), writes dx =
//    rstd * (g*dy - mean(g*dy) - xhat * mean(g*dy*xhat)) (NormMath's formula),
//    and adds dy*xhat and dy per column in registers; at the end the block's
//    row groups combine in workgroup memory and the block writes one row of
//    partial parameter gradients;
//  - `<f>_<op>_params`: each column's partial rows added up by many warps
//    (ChannelSums.h, emitColumnTotals) in a fixed order, so dscale and dbias
//    are the same on every run.
//
// xhat = (x - mean) * rstd (x * rstd for RMSNorm) and g is the scale (1
// without one). Arithmetic in f32 (f64 for f64 data).
//
//===----------------------------------------------------------------------===//

#include "ChannelSums.h"
#include "KernelBuilder.h"
#include "LowerToGPU.h"
#include "normfuse/Codegen/Common/ActivationMath.h"
#include "normfuse/Codegen/Common/BufferBuilders.h"
#include "normfuse/Codegen/Common/NormMath.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

/// What the gradient kernels of one op compute.
struct RowGradSpec {
  bool center = true; // layer_norm_grad; rms_norm_grad has no mean or dbias
  bool hasScale = false;
  int64_t cols = ShapedType::kDynamic;
  Type acc;
  RowNormGradSchedule schedule;

  bool split() const {
    return schedule.rows.kind == RowNormSchedule::Kind::SplitRow;
  }
  /// Blocks of a cluster hold a row, block rank r its chunk r.
  bool cluster() const {
    return schedule.rows.kind == RowNormSchedule::Kind::ClusterRow;
  }
  /// Sums per (row, chunk) that a split row's first kernel writes.
  int64_t sumsPerChunk() const { return center ? 2 : 1; }
  /// Whether every register vector of every chunk lies in the row, so
  /// nothing is guarded by its column.
  bool allColumnsValid() const {
    return !ShapedType::isDynamic(cols) &&
           cols % schedule.rows.chunkElements == 0;
  }
};

/// The operands every gradient kernel starts with: dy, x, [mean], rstd,
/// [scale] (flat buffers).
struct GradInputs {
  Value dy, x, mean, rstd, scale;
};

GradInputs bindInputs(Kernel &k, const RowGradSpec &spec, unsigned &i) {
  GradInputs in;
  in.dy = k.arg(i++);
  in.x = k.arg(i++);
  if (spec.center)
    in.mean = k.arg(i++);
  in.rstd = k.arg(i++);
  if (spec.hasScale)
    in.scale = k.arg(i++);
  return in;
}

/// One piece of a thread's columns of its chunk: a register vector, or
/// in a peeled chunk its head or tail element (`width` 1): the first
/// column, whether it lies in the row (null when it always does), and the
/// scale there (empty without a scale).
struct Piece {
  Value col, valid;
  int64_t width = 1;
  SmallVector<Value> scale;
};

/// A thread's pieces: its `vectorsPerThread` vectors, then where the
/// chunk is peeled its head and tail elements.
using ThreadColumns = SmallVector<Piece>;

/// The columns thread `lane` holds of chunk `chunk` of rows that start at
/// flat offsets congruent to `rowBase` modulo the vector width (a peeled
/// chunk's vectors start at its first 16-byte boundary, which this fixes).
ThreadColumns emitThreadColumns(OpBuilder &b, Location loc,
                                const RowGradSpec &spec, const GradInputs &in,
                                Value lane, Value chunk, Value cols,
                                Value rowBase) {
  const RowNormSchedule &s = spec.schedule.rows;
  int64_t vw = s.vectorWidth;
  IndexMath ix{b, loc};
  Value begin = ix.mul(chunk, s.chunkElements);
  Value first = begin, vectorsEnd = cols;
  SmallVector<std::pair<Value, Value>> ends;
  if (s.peeled) {
    Value end = b.create<arith::MinUIOp>(
        loc, ix.add(begin, ix.c(s.chunkElements)), cols);
    PeeledRange range = emitPeeledRange(b, loc, vw, rowBase, begin, end);
    first = range.alignedBegin;
    vectorsEnd = range.alignedEnd;
    ends = peeledElements(b, loc, range, lane);
  }
  Value laneBegin = ix.madd(lane, vw, first);
  ThreadColumns t;
  for (int64_t k = 0; k < s.vectorsPerThread; ++k) {
    Value col = ix.add(laneBegin, ix.c(k * s.threadsPerRow * vw));
    Value valid;
    if (!spec.allColumnsValid())
      valid = ix.below(col, vectorsEnd);
    t.push_back({col, valid, vw, {}});
  }
  for (auto [col, valid] : ends)
    t.push_back({col, valid, 1, {}});
  if (!spec.hasScale)
    return t;
  // The scale is aligned as the tensor, not as a peeled row: an element
  // at a time there.
  for (Piece &p : t)
    p.scale = emitValuesIf(
        b, loc, p.valid, spec.acc, [&](OpBuilder &lb, Location ll) {
          if (!s.peeled || p.width == 1)
            return loadLanes(lb, ll, in.scale, p.col, p.width, spec.acc);
          IndexMath li{lb, ll};
          SmallVector<Value> lanes;
          for (int64_t l = 0; l < p.width; ++l)
            lanes.push_back(loadLanes(lb, ll, in.scale, li.add(p.col, li.c(l)),
                                      1, spec.acc)[0]);
          return lanes;
        });
  return t;
}

/// The thread's values of one row: per piece its lanes of dy, xhat and
/// g*dy (zeros where the piece is not valid), and the row's statistics.
struct RowValues {
  SmallVector<SmallVector<Value>> dy, xhat, gdy;
  SmallVector<Value> valid;
  Value mean, rstd;
};

RowValues loadRow(OpBuilder &b, Location loc, const RowGradSpec &spec,
                  const GradInputs &in, const ThreadColumns &t, Value row,
                  Value rowValid, Value cols) {
  Type acc = spec.acc;
  RowValues r;
  if (spec.center)
    r.mean = loadLanes(b, loc, in.mean, row, 1, acc)[0];
  r.rstd = loadLanes(b, loc, in.rstd, row, 1, acc)[0];
  IndexMath ix{b, loc};
  Value rowBase = ix.mul(row, cols);
  for (const Piece &p : t) {
    int64_t width = p.width;
    Value offset = ix.add(rowBase, p.col);
    Value valid = ix.both(p.valid, rowValid);
    r.valid.push_back(valid);
    auto load = [&](OpBuilder &lb, Location ll) {
      SmallVector<Value> v = loadLanes(lb, ll, in.dy, offset, width, acc);
      SmallVector<Value> x = loadLanes(lb, ll, in.x, offset, width, acc);
      v.append(x.begin(), x.end());
      return v;
    };
    SmallVector<Value> dyx = emitValuesIf(b, loc, valid, acc, load);
    SmallVector<Value> dy(dyx.begin(), dyx.begin() + width), xhat, gdy;
    for (int64_t l = 0; l < width; ++l) {
      xhat.push_back(emitNormalize(b, loc, dyx[width + l], r.mean, r.rstd,
                                   Value(), Value()));
      gdy.push_back(
          spec.hasScale
              ? b.create<arith::MulFOp>(loc, dy[l], p.scale[l]).getResult()
              : dy[l]);
    }
    r.dy.push_back(dy);
    r.xhat.push_back(xhat);
    r.gdy.push_back(gdy);
  }
  return r;
}

/// This thread's part of a row's sums: of g*dy*xhat, and of g*dy when
/// centering (invalid vectors hold zeros).
std::pair<Value, Value> threadSums(OpBuilder &b, Location loc,
                                   const RowGradSpec &spec,
                                   const RowValues &r) {
  Value gx = floatConstant(b, loc, 0.0, spec.acc, 1);
  Value g = gx;
  for (size_t k = 0; k < r.gdy.size(); ++k)
    for (size_t l = 0; l < r.gdy[k].size(); ++l) {
      gx = b.create<math::FmaOp>(loc, r.gdy[k][l], r.xhat[k][l], gx);
      if (spec.center)
        g = b.create<arith::AddFOp>(loc, g, r.gdy[k][l]);
    }
  return {gx, spec.center ? g : Value()};
}

/// The row length: a constant where it is static, so that the compiler
/// sees that vector addresses stay 16-byte aligned (it then keeps the
/// stores 128 bits wide), else the kernel's argument `arg`.
Value staticCols(OpBuilder &b, Location loc, const RowGradSpec &spec,
                 Value arg) {
  if (ShapedType::isDynamic(spec.cols))
    return arg;
  return indexConstant(b, loc, spec.cols);
}

/// The chunks of a row: a constant where the row length is static, so
/// that a block's slot and chunk are a division by a constant (by the
/// argument `arg`, a 64-bit division is a call whose saved registers
/// spilled a peeled block row of 509 bf16 columns).
Value staticChunks(OpBuilder &b, Location loc, const RowGradSpec &spec,
                   Value arg) {
  if (ShapedType::isDynamic(spec.cols))
    return arg;
  return indexConstant(
      b, loc, llvm::divideCeil(spec.cols, spec.schedule.rows.chunkElements));
}

/// The sum over the threads of one row (a segment of a warp, or the block).
Value reduceOverRow(OpBuilder &b, Location loc, const RowGradSpec &spec,
                    Value v, Value scratch) {
  int64_t tpr = spec.schedule.rows.threadsPerRow;
  return tpr <= GpuTarget::kWarpSize ? emitWarpSum(b, loc, v, tpr)
                                     : emitBlockSum(b, loc, v, scratch, tpr);
}

/// The index of thread `tid`'s lane in its row and of its row in the block.
std::pair<Value, Value> laneAndRowGroup(OpBuilder &b, Location loc,
                                        const RowGradSpec &spec, Value tid) {
  const RowNormSchedule &s = spec.schedule.rows;
  if (s.rowsPerBlock == 1)
    return {tid, indexConstant(b, loc, 0)};
  Value tpr = indexConstant(b, loc, s.threadsPerRow);
  return {b.create<arith::RemUIOp>(loc, tid, tpr),
          b.create<arith::DivUIOp>(loc, tid, tpr)};
}

/// Kernel `<f>_<op>_rowsums`: block (row, chunk) writes the chunk's sums.
/// Arguments: the inputs, sums, rows, cols, chunksPerRow.
gpu::GPUFuncOp buildRowSumsKernel(ModuleOp module, Location loc,
                                  const std::string &base,
                                  const RowGradSpec &spec, TypeRange types) {
  const RowNormSchedule &s = spec.schedule.rows;
  Kernel k = createKernel(module, loc, base + "_rowsums", types, s.blockSize(),
                          spec.schedule.str());
  OpBuilder &b = k.body;
  Value scratch =
      s.threadsPerRow > GpuTarget::kWarpSize
          ? addWorkgroupBuffer(k, loc, s.threadsPerRow / 32, spec.acc)
          : Value();
  unsigned i = 0;
  GradInputs in = bindInputs(k, spec, i);
  Value sums = k.arg(i), cols = staticCols(b, loc, spec, k.arg(i + 2)),
        chunks = staticChunks(b, loc, spec, k.arg(i + 3));
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value row = b.create<arith::DivUIOp>(loc, bid, chunks);
  Value chunk = b.create<arith::RemUIOp>(loc, bid, chunks);
  ThreadColumns t = emitThreadColumns(b, loc, spec, in, tid, chunk, cols,
                                      b.create<arith::MulIOp>(loc, row, cols));
  RowValues r = loadRow(b, loc, spec, in, t, row, Value(), cols);
  Value gx, g;
  std::tie(gx, g) = threadSums(b, loc, spec, r);
  gx = reduceOverRow(b, loc, spec, gx, scratch);
  if (g)
    g = reduceOverRow(b, loc, spec, g, scratch);
  Value first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid,
                                        indexConstant(b, loc, 0));
  b.create<scf::IfOp>(loc, first, [&](OpBuilder &tb, Location tl) {
    Value slot = tb.create<arith::MulIOp>(
        tl, bid, indexConstant(tb, tl, spec.sumsPerChunk()));
    tb.create<memref::StoreOp>(tl, gx, sums, slot);
    if (g) {
      Value next = tb.create<arith::AddIOp>(tl, slot, indexConstant(tb, tl, 1));
      tb.create<memref::StoreOp>(tl, g, sums, next);
    }
    tb.create<scf::YieldOp>(tl);
  });
  return k.func;
}

/// Kernel `<f>_<op>`: dx and the blocks' partial parameter rows.
/// Arguments: the inputs, dx, partialScale, [partialBias], rows, cols,
/// rowSlots, chunksPerRow, [sums of the split rows' chunks].
gpu::GPUFuncOp buildGradKernel(ModuleOp module, Location loc,
                               const std::string &base, const RowGradSpec &spec,
                               TypeRange types) {
  const RowNormSchedule &s = spec.schedule.rows;
  int64_t vw = s.vectorWidth;
  int64_t perThread = s.vectorsPerThread;
  int64_t groups = s.rowsPerBlock;
  Type acc = spec.acc;
  Kernel k = createKernel(module, loc, base, types, s.blockSize(),
                          spec.schedule.str());
  OpBuilder &b = k.body;
  auto c = [&](OpBuilder &ib, int64_t v) { return indexConstant(ib, loc, v); };
  Value scratch = !spec.split() && s.threadsPerRow > GpuTarget::kWarpSize
                      ? addWorkgroupBuffer(k, loc, s.threadsPerRow / 32, acc)
                      : Value();
  // A cluster row's blocks' sums, two sets of slots: row i's go to set i %
  // 2, so a block stores a row's sums into another while that one may
  // still read the row before's (it has passed the barrier of the row
  // before, and so every block has read the sums of the row before that).
  int64_t clusterBlocks = s.clusterBlocks;
  Value clusterSlots;
  if (spec.cluster()) {
    k.func->setAttr(kClusterBlocksAttr, b.getI64IntegerAttr(clusterBlocks));
    clusterSlots = addWorkgroupBuffer(
        k, loc, 2 * spec.sumsPerChunk() * clusterBlocks, acc);
  }
  // Row groups 1.. hand their column sums to group 0 through this.
  Value handOver =
      groups > 1
          ? addWorkgroupBuffer(k, loc, (groups - 1) * s.chunkElements, acc)
          : Value();
  unsigned i = 0;
  GradInputs in = bindInputs(k, spec, i);
  Value dx = k.arg(i++), partialScale = k.arg(i++);
  Value partialBias = spec.center ? k.arg(i++) : Value();
  Value rows = k.arg(i++);
  Value cols = staticCols(b, loc, spec, k.arg(i++));
  Value rowSlots = k.arg(i++);
  Value chunks = staticChunks(b, loc, spec, k.arg(i++));
  Value chunkSums = spec.split() ? k.arg(i++) : Value();

  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value slot = b.create<arith::DivUIOp>(loc, bid, chunks);
  Value chunk = b.create<arith::RemUIOp>(loc, bid, chunks);
  Value lane, group;
  std::tie(lane, group) = laneAndRowGroup(b, loc, spec, tid);
  // Row group `group` of slot `slot` takes rows firstRow + trip * stride.
  // A peeled row's vectors start where it reaches a 16-byte boundary,
  // which varies with the row: there the row groups of a slot take rows
  // rowSlots apart, and rowSlots is a multiple of the period of the rows'
  // offsets within a vector (rowSlotsWithin), so that every row a block
  // takes starts at the same offset within a vector and each thread's
  // columns stay the same from row to row (its column sums stay in
  // registers, and the row groups' sums line up).
  Value stride = b.create<arith::MulIOp>(loc, rowSlots, c(b, groups));
  Value firstRow =
      s.peeled
          ? b.create<arith::AddIOp>(
                loc, slot, b.create<arith::MulIOp>(loc, group, rowSlots))
          : b.create<arith::AddIOp>(
                loc, b.create<arith::MulIOp>(loc, slot, c(b, groups)), group);
  ThreadColumns t =
      emitThreadColumns(b, loc, spec, in, lane, chunk, cols,
                        b.create<arith::MulIOp>(loc, firstRow, cols));
  // Means are sums times 1 / cols, rounded once before the rows (as the
  // forward rows' are): a correctly rounded division per row is a call to
  // its slow path, whose saved registers spilled (8 bytes in a peeled bf16
  // block row of 509 columns).
  Value inverseCols = b.create<arith::DivFOp>(
      loc, floatConstant(b, loc, 1.0, acc, 1),
      b.create<arith::UIToFPOp>(
          loc, acc, b.create<arith::IndexCastUIOp>(loc, b.getI64Type(), cols)));
  // Every block of the cluster has started before any stores into
  // another's shared memory (CUDA's rule).
  if (spec.cluster())
    b.create<ClusterBarrierOp>(loc, /*relaxed=*/true);

  // Every thread makes the same number of trips, so shuffles and barriers
  // stay uniform; a row past the end loads zeros and stores nothing.
  Value trips = b.create<arith::CeilDivUIOp>(loc, rows, stride);
  Value lastRow = b.create<arith::SubIOp>(loc, rows, c(b, 1));
  // The column sums in registers, piece by piece (a vector's lanes, then
  // a peeled chunk's head and tail elements).
  int64_t perSum = 0;
  for (const Piece &p : t)
    perSum += p.width;
  int64_t numAcc = spec.center ? 2 * perSum : perSum;
  SmallVector<Value> init(numAcc, floatConstant(b, loc, 0.0, acc, 1));
  auto loop = b.create<scf::ForOp>(
      loc, c(b, 0), trips, c(b, 1), init,
      [&](OpBuilder &fb, Location fl, Value trip, ValueRange accs) {
        Value row = fb.create<arith::AddIOp>(
            fl, firstRow, fb.create<arith::MulIOp>(fl, trip, stride));
        Value rowValid =
            fb.create<arith::CmpIOp>(fl, arith::CmpIPredicate::ult, row, rows);
        row = fb.create<arith::MinUIOp>(fl, row, lastRow);
        RowValues r = loadRow(fb, fl, spec, in, t, row, rowValid, cols);
        Value gx, g;
        if (spec.split()) {
          // The row's chunk sums, added in chunk order.
          Value zero = floatConstant(fb, fl, 0.0, acc, 1);
          SmallVector<Value> sumInit{zero};
          if (spec.center)
            sumInit.push_back(zero);
          Value rowChunks = fb.create<arith::MulIOp>(fl, row, chunks);
          auto sumLoop = fb.create<scf::ForOp>(
              fl, c(fb, 0), chunks, c(fb, 1), sumInit,
              [&](OpBuilder &sb, Location sl, Value kc, ValueRange sum) {
                Value at = sb.create<arith::MulIOp>(
                    sl, sb.create<arith::AddIOp>(sl, rowChunks, kc),
                    c(sb, spec.sumsPerChunk()));
                SmallVector<Value> next;
                for (int64_t j = 0; j < spec.sumsPerChunk(); ++j) {
                  Value v = sb.create<memref::LoadOp>(
                      sl, chunkSums,
                      j == 0 ? at
                             : sb.create<arith::AddIOp>(sl, at, c(sb, j))
                                   .getResult());
                  next.push_back(sb.create<arith::AddFOp>(sl, sum[j], v));
                }
                sb.create<scf::YieldOp>(sl, next);
              });
          gx = sumLoop.getResult(0);
          g = spec.center ? sumLoop.getResult(1) : Value();
        } else {
          std::tie(gx, g) = threadSums(fb, fl, spec, r);
          gx = reduceOverRow(fb, fl, spec, gx, scratch);
          if (g)
            g = reduceOverRow(fb, fl, spec, g, scratch);
          if (spec.cluster()) {
            // The cluster's block sums, in rank order (chunk order).
            IndexMath fm{fb, fl};
            Value set = fm.mul(fm.rem(trip, 2),
                               fm.c(spec.sumsPerChunk() * clusterBlocks));
            SmallVector<Value> blockSums{gx};
            if (g)
              blockSums.push_back(g);
            SmallVector<Value> totals = emitClusterSums(
                fb, fl, blockSums, clusterSlots, set, chunk, clusterBlocks);
            gx = totals[0];
            g = g ? totals[1] : Value();
          }
        }
        Value meanGx = fb.create<arith::MulFOp>(fl, gx, inverseCols);
        Value meanG =
            g ? fb.create<arith::MulFOp>(fl, g, inverseCols).getResult()
              : Value();
        Value rowBase = fb.create<arith::MulIOp>(fl, row, cols);
        SmallVector<Value> next;
        for (size_t kv = 0; kv < t.size(); ++kv) {
          SmallVector<Value> out;
          for (auto [gdy, xhat] : llvm::zip(r.gdy[kv], r.xhat[kv]))
            out.push_back(
                emitNormGradInput(fb, fl, gdy, xhat, meanGx, meanG, r.rstd));
          Value offset = fb.create<arith::AddIOp>(fl, rowBase, t[kv].col);
          fb.create<scf::IfOp>(fl, r.valid[kv],
                               [&](OpBuilder &tb, Location tl) {
                                 storeLanes(tb, tl, out, dx, offset);
                                 tb.create<scf::YieldOp>(tl);
                               });
        }
        // Invalid pieces hold dy = 0: they add nothing.
        int64_t at = 0;
        for (size_t kv = 0; kv < t.size(); ++kv)
          for (auto [dy, xhat] : llvm::zip(r.dy[kv], r.xhat[kv]))
            next.push_back(fb.create<math::FmaOp>(fl, dy, xhat, accs[at++]));
        if (spec.center)
          for (size_t kv = 0; kv < t.size(); ++kv)
            for (Value dy : r.dy[kv]) {
              next.push_back(fb.create<arith::AddFOp>(fl, accs[at], dy));
              ++at;
            }
        fb.create<scf::YieldOp>(fl, next);
      });

  // Row groups 1.. hand their sums to group 0, which adds them in group
  // order and writes the block's partial row (a peeled chunk's head and
  // tail sums handed over as a vector of 2 a thread). Partial row `slot`
  // starts at slot * cols, which is congruent to the block's rows' starts
  // modulo the vector width (row = slot + a multiple of rowSlots, and
  // rowSlots * cols a multiple of the width), so a peeled row's vectors
  // are aligned there too.
  Value partialBase = b.create<arith::MulIOp>(loc, slot, cols);
  auto finish = [&](ValueRange sums, Value partial) {
    int64_t vectorSums = perThread * vw;
    SmallVector<Value> total =
        emitRowGroupSums(b, loc, llvm::to_vector(sums.take_front(vectorSums)),
                         handOver, group, lane, groups, s.threadsPerRow, vw);
    if (sums.size() > size_t(vectorSums))
      llvm::append_range(
          total,
          emitRowGroupSums(b, loc, llvm::to_vector(sums.drop_front(vectorSums)),
                           handOver, group, lane, groups, s.threadsPerRow,
                           int64_t(sums.size()) - vectorSums));
    Value first =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, group, c(b, 0));
    int64_t from = 0;
    for (const Piece &p : t) {
      IndexMath ix{b, loc};
      Value write = ix.both(first, p.valid);
      Value at = ix.add(partialBase, p.col);
      ArrayRef<Value> lanes = ArrayRef<Value>(total).slice(from, p.width);
      from += p.width;
      b.create<scf::IfOp>(loc, write, [&](OpBuilder &tb, Location tl) {
        storeLanes(tb, tl, lanes, partial, at);
        tb.create<scf::YieldOp>(tl);
      });
    }
  };
  finish(loop.getResults().take_front(perSum), partialScale);
  if (spec.center)
    finish(loop.getResults().drop_front(perSum), partialBias);
  return k.func;
}

/// A buffer for a parameter gradient of `type`: the trailing dimensions of
/// `x` from `axis` on.
Value allocParamBuffer(OpBuilder &b, Location loc, RankedTensorType type,
                       Value x, int64_t axis) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(b.create<memref::DimOp>(loc, x, axis + d));
  return b.create<memref::AllocOp>(
      loc, MemRefType::get(type.getShape(), type.getElementType()), sizes);
}

/// The row slots of a gradient over `rows` rows of `cols` elements under
/// `g` within `blocks` blocks in all (host index values): as many groups of
/// rows as there are, at most those whose chunks fit in `blocks`. Peeled
/// rows take a multiple of the period of their starts' offsets within a
/// vector (buildGradKernel: so that the rows of a block all start at one
/// offset; the vector width, or for a known row length the vector width
/// over its greatest common divisor with the length), rounded up to the
/// rows' groups and down to the blocks (at least one period).
Value rowSlotsWithin(OpBuilder &b, Location loc, Value rows, Value cols,
                     const RowNormGradSchedule &g, Value blocks) {
  IndexMath im{b, loc};
  Value chunks = im.ceilDiv(cols, g.rows.chunkElements);
  Value slotCap = b.createOrFold<arith::MaxUIOp>(
      loc, im.c(1), b.createOrFold<arith::CeilDivUIOp>(loc, blocks, chunks));
  Value needed = im.ceilDiv(rows, g.rows.rowsPerBlock);
  if (g.rows.peeled) {
    int64_t period = g.rows.vectorWidth;
    if (std::optional<int64_t> known = getConstantIntValue(cols))
      period /= std::gcd(period, *known);
    // (Folded, so that static shapes plan a constant.)
    Value vw = im.c(period);
    auto times = [&](Value x) {
      return b.createOrFold<arith::MulIOp>(loc, x, vw);
    };
    needed = times(b.createOrFold<arith::CeilDivUIOp>(loc, needed, vw));
    slotCap = b.createOrFold<arith::MaxUIOp>(
        loc, vw, times(b.createOrFold<arith::DivUIOp>(loc, slotCap, vw)));
  }
  return b.createOrFold<arith::MinUIOp>(loc, needed, slotCap);
}

template <typename GradOp>
LogicalResult lowerRowNormGrad(RewriterBase &rewriter, GradOp op,
                               const GPULoweringOptions &options) {
  constexpr bool center = std::is_same_v<GradOp, LayerNormGradOp>;
  Location loc = op.getLoc();
  auto module = op->template getParentOfType<ModuleOp>();
  RankedTensorType type = op.getGradInput().getType();
  int64_t rank = type.getRank();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  Type element = type.getElementType();

  RowGradSpec spec;
  spec.center = center;
  spec.hasScale = static_cast<bool>(op.getScale());
  spec.acc = getAccumulationType(element);
  int64_t cols = 1;
  for (int64_t d = axis; d < rank; ++d) {
    if (type.isDynamicDim(d)) {
      cols = ShapedType::kDynamic;
      break;
    }
    cols *= type.getDimSize(d);
  }
  spec.cols = cols;
  // The schedule written on the op first (chooseGpuSchedules).
  FailureOr<RowNormGradSchedule> schedule = readRowNormGradSchedule(op);
  if (failed(schedule))
    return failure();
  spec.schedule = *schedule;
  const RowNormSchedule &s = spec.schedule.rows;

  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  auto c = [&](int64_t v) { return indexConstant(b, loc, v); };
  Value x = getBuffer(b, loc, op.getInput());
  Value rows = getNumElements(b, loc, x, 0, axis);
  Value colsValue = getNumElements(b, loc, x, axis, rank);
  SmallVector<Value> inputs{
      flatten(b, loc, getBuffer(b, loc, op.getGradOutput())),
      flatten(b, loc, x)};
  if constexpr (center)
    inputs.push_back(flatten(b, loc, getBuffer(b, loc, op.getMean())));
  inputs.push_back(flatten(b, loc, getBuffer(b, loc, op.getRstd())));
  if (spec.hasScale)
    inputs.push_back(flatten(b, loc, getBuffer(b, loc, op.getScale())));
  Value dx = allocBuffer(b, loc, type, x);
  Value dscale = allocParamBuffer(b, loc, op.getGradScale().getType(), x, axis);
  Value dbias;
  if constexpr (center)
    dbias = allocParamBuffer(b, loc, op.getGradBias().getType(), x, axis);

  // The grid: as many row slots as keep it within the blocks the device
  // holds at once (known when the kernel is loaded, at most maxBlocks),
  // each slot a block per chunk of the row.
  Value chunks =
      b.createOrFold<arith::CeilDivUIOp>(loc, colsValue, c(s.chunkElements));
  auto slotsWithin = [&](Value blocks) {
    return rowSlotsWithin(b, loc, rows, colsValue, spec.schedule, blocks);
  };
  // The most slots there are (static shapes): what the finish is sized for.
  Value plannedSlotsValue = slotsWithin(c(spec.schedule.maxBlocks));
  int64_t plannedSlots = constantOr(plannedSlotsValue);
  int64_t plannedGrid = plannedSlots >= 0 && constantOr(chunks) >= 0
                            ? plannedSlots * constantOr(chunks)
                            : ShapedType::kDynamic;
  ResidentBlocksOp resident;
  Value rowSlots = plannedSlotsValue;
  if (residencyMatters(plannedGrid, options.target)) {
    resident = residentBlocks(b, loc, s.blockSize(), spec.schedule.maxBlocks);
    rowSlots = slotsWithin(resident);
  }
  Value partialCount = b.createOrFold<arith::MulIOp>(loc, rowSlots, colsValue);
  Value partialScale = allocTemporary(b, loc, partialCount, spec.acc);
  Value partialBias =
      center ? allocTemporary(b, loc, partialCount, spec.acc) : Value();
  std::string base = kernelBaseName(op, op->getName().stripDialect());

  Value chunkSums;
  gpu::GPUFuncOp rowSumsKernel;
  SmallVector<Value> rowSumsArgs;
  if (spec.split()) {
    Value blocks = b.createOrFold<arith::MulIOp>(loc, rows, chunks);
    chunkSums = allocTemporary(
        b, loc,
        b.createOrFold<arith::MulIOp>(loc, blocks, c(spec.sumsPerChunk())),
        spec.acc);
    rowSumsArgs = inputs;
    rowSumsArgs.append({chunkSums, rows, colsValue, chunks});
    rowSumsKernel = buildRowSumsKernel(module, loc, base, spec,
                                       ValueRange(rowSumsArgs).getTypes());
  }
  SmallVector<Value> gradArgs = inputs;
  gradArgs.push_back(flatten(b, loc, dx));
  gradArgs.push_back(partialScale);
  if (center)
    gradArgs.push_back(partialBias);
  gradArgs.append({rows, colsValue, rowSlots, chunks});
  if (chunkSums)
    gradArgs.push_back(chunkSums);
  gpu::GPUFuncOp gradKernel =
      buildGradKernel(module, loc, base, spec, ValueRange(gradArgs).getTypes());
  if (resident)
    bindResidentBlocks(resident, gradKernel, options.target);
  // No launch over an empty grid; with no rows the parameter gradients
  // are sums of nothing, zeros.
  Value work = b.create<arith::MulIOp>(loc, rows, colsValue);
  Value any =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, work, c(0));
  b.create<scf::IfOp>(loc, any, [&](OpBuilder &tb, Location tl) {
    if (rowSumsKernel)
      launch(tb, tl, rowSumsKernel, tb.create<arith::MulIOp>(tl, rows, chunks),
             s.blockSize(), rowSumsArgs);
    launch(tb, tl, gradKernel, tb.create<arith::MulIOp>(tl, rowSlots, chunks),
           s.blockSize(), gradArgs);
    tb.create<scf::YieldOp>(tl);
  });
  // The parameter gradients: each column's partial rows added up, many
  // warps a column, in a fixed order (ChannelSums.h); with no rows, zeros.
  ColumnTotals params;
  params.images = c(1);
  params.columns = colsValue;
  params.parts = rowSlots;
  params.numSums = center ? 2 : 1;
  params.acc = spec.acc;
  params.inputs = {partialScale};
  if (center)
    params.inputs.push_back(partialBias);
  params.outputs = {flatten(b, loc, dscale)};
  if (center)
    params.outputs.push_back(flatten(b, loc, dbias));
  params.load = [&](Kernel &k, OpBuilder &lb, Location ll, Value, Value column,
                    Value part, int64_t kk) -> Value {
    IndexMath li{lb, ll};
    return lb.create<memref::LoadOp>(
        ll, k.arg(kk), li.madd(part, k.size(lb, ll, colsValue), column));
  };
  params.store = [&](Kernel &k, OpBuilder &sb, Location sl, Value, Value column,
                     ArrayRef<Value> totals) {
    for (auto [kk, v] : llvm::enumerate(totals))
      storeLanes(sb, sl, {v}, k.arg(params.numSums + kk), column);
  };
  emitColumnTotals(b, loc, module, base + "_params", params,
                   spec.schedule.params);

  SmallVector<Value> results{
      toTensor(b, loc, dx),
      toTensorOf(b, loc, dscale, op.getGradScale().getType())};
  if constexpr (center)
    results.push_back(toTensorOf(b, loc, dbias, op.getGradBias().getType()));
  rewriter.replaceOp(op, results);
  return success();
}

} // namespace

int64_t cuda::plannedGradRowSlots(RankedTensorType type, int64_t axis,
                                  const RowNormGradSchedule &g, Location loc) {
  // The lowering's own rule, on a buffer of the tensor's shape in a
  // detached block: the sizes fold to constants where they are static.
  Block scratch;
  Value x = scratch.addArgument(
      MemRefType::get(type.getShape(), type.getElementType()), loc);
  OpBuilder b(loc.getContext());
  b.setInsertionPointToStart(&scratch);
  return constantOr(
      rowSlotsWithin(b, loc, getNumElements(b, loc, x, 0, axis),
                     getNumElements(b, loc, x, axis, type.getRank()), g,
                     indexConstant(b, loc, g.maxBlocks)));
}

LogicalResult cuda::lowerNormGradToGPU(RewriterBase &rewriter, Operation *op,
                                       const GPULoweringOptions &options) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<LayerNormGradOp, RMSNormGradOp>(
          [&](auto grad) { return lowerRowNormGrad(rewriter, grad, options); })
      .Default([](Operation *) { return failure(); });
}
