//===- LowerRowNorms.cpp - layer_norm and rms_norm as GPU kernels -*- C++
//-*-===//
//
// Part of normfuse. A forward norm over the trailing dimensions becomes one
// kernel over rows of `cols` elements, launched from the host function,
// following its RowNormSchedule: (part of) a warp or a block per row, the
// row in registers or streamed, on at most the blocks the device holds at
// once, each looping over rows. The variance is the mean of squared
// deviations from the mean, in two passes over the values (registers or
// memory), never E[x^2] - E[x]^2; sums are in f32 (f64 for f64 data).
// Under a ClusterRow schedule a cluster of blocks holds each row and adds
// the blocks' sums through distributed shared memory.
// Group and instance norms are rows of one (image, group) here, except in
// NHWC under a ChannelsLastGroups schedule (LowerGroupNormNHWC.cpp). Rows
// split across blocks are LowerSplitRows.cpp's.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "LowerToGPU.h"
#include "RowNormKernel.h"
#include "normfuse/Codegen/Common/ActivationMath.h"
#include "normfuse/Codegen/Common/BufferBuilders.h"
#include "normfuse/Codegen/Common/FusedGroups.h"
#include "normfuse/Codegen/Common/NormMath.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

/// The cluster exchanges of a ClusterRow kernel (the mean, then the squared
/// deviations; an RMS norm uses the first alone).
constexpr int64_t kRowNormClusterExchanges = 2;

/// The body of the row-norm kernel. `scratch` holds a block sum's warp
/// sums; `clusterSlots` (ClusterRow) the blocks' sums of each exchange.
void emitRowNormBody(Kernel &k, Location loc, const RowNormKernel &spec,
                     Value scratch, Value clusterSlots) {
  OpBuilder &b = k.body;
  RowNormArgs a = bindArgs(k, spec);
  const RowNormSchedule &s = spec.schedule;
  Type acc = spec.acc;
  int64_t vw = s.vectorWidth;
  // The threads of a row: a cluster's act as one block, thread t of block
  // r being lane r * threadsPerRow + t.
  int64_t tpr = s.rowThreads();
  int64_t cluster = s.clusterBlocks;
  auto c = [&](int64_t v) { return indexConstant(b, loc, v); };
  auto zeroAcc = [&] { return floatConstant(b, loc, 0.0, acc, 1); };

  Value cols = ShapedType::isDynamic(spec.cols) ? a.cols : c(spec.cols);
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value lane = tid, rowInBlock, rank;
  if (cluster > 1) {
    rank = b.create<arith::RemUIOp>(loc, bid, c(cluster));
    lane = b.create<arith::AddIOp>(
        loc, b.create<arith::MulIOp>(loc, rank, c(s.threadsPerRow)), tid);
  }
  if (s.rowsPerBlock > 1) {
    lane = b.create<arith::RemUIOp>(loc, tid, c(tpr));
    rowInBlock = b.create<arith::DivUIOp>(loc, tid, c(tpr));
  }
  Value laneOffset = b.create<arith::MulIOp>(loc, lane, c(vw));
  // Means are sums times 1 / cols, rounded once before the rows (as Apex's
  // kernels do): a correctly rounded division per row is a call to its
  // slow path, whose saved registers spilled the persistent loop's state.
  Value inverseCols = b.create<arith::DivFOp>(
      loc, floatConstant(b, loc, 1.0, acc, 1),
      b.create<arith::UIToFPOp>(
          loc, acc, b.create<arith::IndexCastUIOp>(loc, b.getI64Type(), cols)));
  auto meanOf = [&](Value sum) {
    return b.create<arith::MulFOp>(loc, sum, inverseCols);
  };
  bool inRegisters = s.kind != RowNormSchedule::Kind::BlockRowStreaming;
  int64_t perThread = inRegisters ? s.vectorsPerThread : 0;
  // Whether every vector of every lane lies in the row: then no column is
  // guarded. Otherwise each piece is loaded, summed and stored only where
  // it is valid (in the row, and the row in the tensor), so a block reads
  // each element of its rows once and nothing else.
  bool allValid = inRegisters && !s.peeled &&
                  !ShapedType::isDynamic(spec.cols) &&
                  perThread * tpr * vw == spec.cols;
  // Vector k of this lane starts at column firstVector + (k * tpr + lane) *
  // vw (firstVector is 0 unless the row is peeled).
  auto pieceColumn = [&](Value firstVector, int64_t kv) {
    return b.create<arith::AddIOp>(
        loc, b.create<arith::AddIOp>(loc, firstVector, laneOffset),
        c(kv * tpr * vw));
  };
  auto inRow = [&](Value col, Value end) -> Value {
    if (allValid)
      return Value();
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, col, end);
  };

  // The scale and bias of the lane's columns, loaded once before the first
  // row where the schedule keeps them in registers.
  struct Params {
    SmallVector<Value> scale, bias;
  };
  SmallVector<Params> pieceParams;
  if (s.paramsInRegisters && spec.layout == RowNormKernel::Layout::Rows) {
    for (int64_t kv = 0; kv < perThread; ++kv) {
      Value col = pieceColumn(c(0), kv);
      auto load = [&](Value buffer) {
        return emitValuesIf(
            b, loc, inRow(col, cols), acc, [&](OpBuilder &tb, Location tl) {
              return loadPerChannel(tb, tl, spec, buffer, col, vw);
            });
      };
      Params p;
      if (spec.hasScale)
        p.scale = load(a.scale);
      if (spec.hasBias)
        p.bias = load(a.bias);
      pieceParams.push_back(std::move(p));
    }
  }

  // Persistent blocks: block `bid` takes row groups bid, bid + gridDim, ...
  // (the grid is at most the blocks the device holds at once). A cluster
  // takes one row: the grid is a cluster per row, so no block stores into
  // another's shared memory after the last cluster barrier.
  std::optional<OpBuilder::InsertionGuard> inLoop;
  Value row;
  if (cluster > 1) {
    row = b.create<arith::DivUIOp>(loc, bid, c(cluster));
  } else {
    Value rowGroups =
        b.createOrFold<arith::CeilDivUIOp>(loc, a.rows, c(s.rowsPerBlock));
    auto rowLoop = b.create<scf::ForOp>(
        loc, bid, rowGroups, b.create<gpu::GridDimOp>(loc, gpu::Dimension::x));
    inLoop.emplace(b);
    b.setInsertionPoint(rowLoop.getBody()->getTerminator());
    row = rowLoop.getInductionVar();
  }
  Value rowValid;
  if (s.rowsPerBlock > 1) {
    row = b.create<arith::AddIOp>(
        loc, b.create<arith::MulIOp>(loc, row, c(s.rowsPerBlock)), rowInBlock);
    // Rows past the end (in the last group) take part in the shuffles of
    // their warp with zeros, on the index of the last row, and load and
    // store nothing.
    rowValid =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row, a.rows);
    row = b.create<arith::MinUIOp>(loc, row,
                                   b.create<arith::SubIOp>(loc, a.rows, c(1)));
  }
  Value rowBase = b.create<arith::MulIOp>(loc, row, cols);

  int64_t exchanges = 0;
  auto reduce = [&](Value v) {
    int64_t threads = s.threadsPerRow;
    Value sum = threads <= 32 ? emitWarpSum(b, loc, v, threads)
                              : emitBlockSum(b, loc, v, scratch, threads);
    if (cluster == 1)
      return sum;
    return emitClusterSum(b, loc, sum, clusterSlots, exchanges++, rank,
                          cluster);
  };

  // The normalize step of `lanes` at column `col`, stored to y. A group
  // norm's column is its element of the (image, group), addressed through
  // the layout (emitAddress: the flat offset and the channel).
  // `params`: the scale and bias already loaded (or null).
  auto normalizeAndStore = [&](OpBuilder &nb, Location nl, Value col,
                               ArrayRef<Value> lanes, Value mean, Value rstd,
                               const Params *params = nullptr) {
    int64_t width = lanes.size();
    // (Rows keep their offset's add next to the store: ptxas spilled the
    // f64 peeled block row when it came first.)
    Value offset, channel = col;
    if (spec.layout != RowNormKernel::Layout::Rows)
      std::tie(offset, channel) = emitAddress(nb, nl, spec, row, rowBase, col);
    SmallVector<Value> scale, bias;
    if (params) {
      scale = params->scale;
      bias = params->bias;
    } else {
      if (spec.hasScale)
        scale = loadPerChannel(nb, nl, spec, a.scale, channel, width);
      if (spec.hasBias)
        bias = loadPerChannel(nb, nl, spec, a.bias, channel, width);
    }
    SmallVector<Value> out;
    for (int64_t l = 0; l < width; ++l)
      out.push_back(emitNormalize(nb, nl, lanes[l], mean, rstd,
                                  spec.hasScale ? scale[l] : Value(),
                                  spec.hasBias ? bias[l] : Value()));
    if (!offset)
      offset = nb.create<arith::AddIOp>(nl, rowBase, col);
    storeY(nb, nl, spec, a, out, offset, channel);
  };
  /// x at column `col`, `width` lanes, where `valid` holds (zeros where it
  /// does not; always where it is null).
  auto loadXIf = [&](OpBuilder &lb, Location ll, Value col, Value valid,
                     int64_t width) {
    return emitValuesIf(lb, ll, valid, acc, [&](OpBuilder &tb, Location tl) {
      auto [offset, channel] = emitAddress(tb, tl, spec, row, rowBase, col);
      return loadX(tb, tl, spec, a.x, a.prologue, offset, channel, width);
    });
  };
  /// The sum of squared deviations of `lanes` from `mean` (of the lanes
  /// themselves for RMSNorm), 0 where `valid` is false.
  auto squares = [&](OpBuilder &qb, Location ql, ArrayRef<Value> lanes,
                     Value mean, Value valid) {
    SmallVector<Value> sq;
    for (Value x : lanes) {
      Value d = mean ? qb.create<arith::SubFOp>(ql, x, mean).getResult() : x;
      sq.push_back(qb.create<arith::MulFOp>(ql, d, d));
    }
    Value sum = sumOf(qb, ql, sq);
    if (valid)
      sum = qb.create<arith::SelectOp>(ql, valid, sum,
                                       floatConstant(qb, ql, 0.0, acc, 1));
    return sum;
  };
  /// `body` where `valid` holds (always where it is null).
  auto ifValid = [&](OpBuilder &ib, Location il, Value valid,
                     llvm::function_ref<void(OpBuilder &, Location)> body) {
    if (!valid)
      return body(ib, il);
    ib.create<scf::IfOp>(il, valid, [&](OpBuilder &tb, Location tl) {
      body(tb, tl);
      tb.create<scf::YieldOp>(tl);
    });
  };
  // A peeled row: its whole vectors from the first 16-byte boundary, and
  // the single elements before and after them, one of each per lane.
  PeeledRange range;
  SmallVector<std::pair<Value, Value>> ends;
  Value firstVector = c(0);
  if (s.peeled) {
    range = emitPeeledRange(b, loc, vw, rowBase, c(0), cols);
    firstVector = range.alignedBegin;
    for (auto [col, valid] : peeledElements(b, loc, range, lane))
      ends.push_back({col, rowValid
                               ? b.create<arith::AndIOp>(loc, valid, rowValid)
                               : valid});
  }
  Value vectorsEnd = s.peeled ? range.alignedEnd : cols;

  Value mean, rstd;
  if (inRegisters) {
    // The row in registers: this lane's vectors (pieceColumn), and a
    // peeled row's head and tail element.
    struct Piece {
      Value col, valid;
      SmallVector<Value> lanes;
      const Params *params = nullptr;
    };
    SmallVector<Piece> pieces;
    for (int64_t kv = 0; kv < perThread; ++kv) {
      Value col = pieceColumn(firstVector, kv);
      Value valid = inRow(col, vectorsEnd);
      if (rowValid)
        valid =
            valid ? b.create<arith::AndIOp>(loc, valid, rowValid) : rowValid;
      pieces.push_back({col, valid, loadXIf(b, loc, col, valid, vw),
                        pieceParams.empty() ? nullptr : &pieceParams[kv]});
    }
    for (auto [col, valid] : ends)
      pieces.push_back({col, valid, loadXIf(b, loc, col, valid, 1)});
    // Every block of the cluster has started before any stores into
    // another's shared memory (CUDA's rule); waited for while the loads are
    // in flight.
    if (cluster > 1)
      b.create<ClusterBarrierOp>(loc, /*relaxed=*/true);
    SmallVector<Value> partial;
    if (spec.center) {
      for (Piece &p : pieces)
        partial.push_back(sumOf(b, loc, p.lanes));
      mean = meanOf(reduce(sumOf(b, loc, partial)));
    }
    partial.clear();
    for (Piece &p : pieces)
      partial.push_back(squares(b, loc, p.lanes, mean, p.valid));
    Value meanSquare = meanOf(reduce(sumOf(b, loc, partial)));
    rstd = emitRstd(b, loc, meanSquare, spec.epsilon);
    for (Piece &p : pieces)
      ifValid(b, loc, p.valid, [&](OpBuilder &tb, Location tl) {
        normalizeAndStore(tb, tl, p.col, p.lanes, mean, rstd, p.params);
      });
  } else {
    // Streaming: three sweeps over the row, vw elements per lane and step
    // (and a peeled row's head and tail elements).
    Value step = c(tpr * vw);
    Value start = b.create<arith::AddIOp>(loc, firstVector, laneOffset);
    auto sweep = [&](llvm::function_ref<Value(OpBuilder &, Location,
                                              ArrayRef<Value>, Value)>
                         perPiece) {
      auto loop = b.create<scf::ForOp>(
          loc, start, vectorsEnd, step, ValueRange{zeroAcc()},
          [&](OpBuilder &fb, Location fl, Value col, ValueRange sum) {
            Value offset = fb.create<arith::AddIOp>(fl, rowBase, col);
            SmallVector<Value> lanes =
                loadX(fb, fl, spec, a.x, a.prologue, offset, col);
            fb.create<scf::YieldOp>(
                fl, ValueRange{fb.create<arith::AddFOp>(
                        fl, sum[0], perPiece(fb, fl, lanes, Value()))});
          });
      Value total = loop.getResult(0);
      for (auto [col, valid] : ends)
        total = b.create<arith::AddFOp>(
            loc, total,
            perPiece(b, loc, loadXIf(b, loc, col, valid, 1), valid));
      return total;
    };
    if (spec.center)
      mean = meanOf(
          reduce(sweep([&](OpBuilder &fb, Location fl, ArrayRef<Value> lanes,
                           Value) { return sumOf(fb, fl, lanes); })));
    Value sq =
        sweep([&](OpBuilder &fb, Location fl, ArrayRef<Value> lanes,
                  Value valid) { return squares(fb, fl, lanes, mean, valid); });
    rstd = emitRstd(b, loc, meanOf(reduce(sq)), spec.epsilon);
    b.create<scf::ForOp>(
        loc, start, vectorsEnd, step, ValueRange{},
        [&](OpBuilder &fb, Location fl, Value col, ValueRange) {
          Value offset = fb.create<arith::AddIOp>(fl, rowBase, col);
          SmallVector<Value> lanes =
              loadX(fb, fl, spec, a.x, a.prologue, offset, col);
          normalizeAndStore(fb, fl, col, lanes, mean, rstd);
          fb.create<scf::YieldOp>(fl);
        });
    for (auto [col, valid] : ends)
      ifValid(b, loc, valid, [&, col = col](OpBuilder &tb, Location tl) {
        normalizeAndStore(tb, tl, col,
                          loadX(tb, tl, spec, a.x, a.prologue,
                                tb.create<arith::AddIOp>(tl, rowBase, col), col,
                                1),
                          mean, rstd);
      });
  }

  // The statistics, from the row's first lane.
  if (spec.writeMean || spec.writeRstd) {
    Value first =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, lane, c(0));
    if (rowValid)
      first = b.create<arith::AndIOp>(loc, first, rowValid);
    b.create<scf::IfOp>(loc, first, [&](OpBuilder &tb, Location tl) {
      if (spec.writeMean)
        storeLanes(tb, tl, {mean}, a.mean, row);
      if (spec.writeRstd)
        storeLanes(tb, tl, {rstd}, a.rstd, row);
      tb.create<scf::YieldOp>(tl);
    });
  }
}

/// The outer tensors a row norm reads, and the pointwise steps around it
/// (an nf.fused group's; none for a lone norm).
struct RowNormOperands {
  Value input, scale, bias;
  ArrayRef<PointwiseStep> prologue, epilogue;
};

/// Launches the kernel(s) of the norm `op` (layer_norm or rms_norm) on
/// `in`, before `op` (or the nf.fused holding it); returns the tensors of
/// y (its epilogue applied), [mean], rstd.
template <typename NormOp>
SmallVector<Value> emitRowNorm(OpBuilder &b, NormOp op, Operation *before,
                               const RowNormOperands &in,
                               const RowNormSchedule &schedule,
                               const GPULoweringOptions &options) {
  Location loc = op.getLoc();
  auto module = op->template getParentOfType<ModuleOp>();
  RankedTensorType type = op.getResult().getType();
  int64_t rank = type.getRank();
  Type element = type.getElementType();
  constexpr bool isGroupNorm = std::is_same_v<NormOp, GroupNormOp> ||
                               std::is_same_v<NormOp, InstanceNormOp>;
  constexpr bool hasMean = !std::is_same_v<NormOp, RMSNormOp>;
  int64_t axis = 0;
  if constexpr (!isGroupNorm)
    axis = op.getAxis();

  RowNormKernel spec;
  spec.center = hasMean;
  spec.hasScale = static_cast<bool>(in.scale);
  spec.hasBias = static_cast<bool>(in.bias);
  if constexpr (hasMean)
    spec.writeMean = !op.getMean().use_empty();
  spec.writeRstd = !op.getRstd().use_empty();
  spec.epsilon = op.getEpsilon().convertToDouble();
  spec.acc = getAccumulationType(element);
  spec.storage = element;
  spec.prologue = in.prologue;
  spec.epilogue = in.epilogue;
  int64_t cols = 1;
  // Host side: buffers, the launch, tensors of the results.
  b.setInsertionPoint(before);
  Value x = getBuffer(b, loc, in.input);
  Value rows, colsValue, images;
  if constexpr (isGroupNorm) {
    // A row per (image, group): the group's channels at every position.
    IndexMath im{b, loc};
    int64_t channelAxis = getChannelAxis(op.getLayout(), rank);
    spec.layout = op.getLayout() == Layout::NHWC
                      ? RowNormKernel::Layout::GroupsNHWC
                      : RowNormKernel::Layout::GroupsNCHW;
    Value channels = getNumElements(b, loc, x, channelAxis, channelAxis + 1);
    Value groups, channelsPerGroup;
    if constexpr (std::is_same_v<NormOp, GroupNormOp>) {
      groups = im.c(op.getNumGroups());
      channelsPerGroup = b.createOrFold<arith::DivUIOp>(loc, channels, groups);
    } else {
      groups = channels;
      channelsPerGroup = im.c(1);
    }
    Value spatial = im.c(1);
    for (int64_t d = 1; d < rank; ++d)
      if (d != channelAxis)
        spatial = im.product(spatial, getNumElements(b, loc, x, d, d + 1));
    spec.groupSizes = {groups, channelsPerGroup, spatial, channels};
    rows = im.product(getNumElements(b, loc, x, 0, 1), groups);
    colsValue = im.product(channelsPerGroup, spatial);
    cols = constantOr(colsValue);
    images = getNumElements(b, loc, x, 0, 1);
  } else {
    for (int64_t d = axis; d < rank; ++d) {
      if (type.isDynamicDim(d)) {
        cols = ShapedType::kDynamic;
        break;
      }
      cols *= type.getDimSize(d);
    }
    rows = getNumElements(b, loc, x, 0, axis);
    colsValue = getNumElements(b, loc, x, axis, rank);
  }
  spec.cols = cols;
  // Chosen and checked against the op before the lowering
  // (chooseGpuSchedules).
  spec.schedule = schedule;
  const RowNormSchedule &s = spec.schedule;

  Value y = allocBuffer(b, loc, type, x);
  SmallVector<Value> args{flatten(b, loc, x)};
  if (spec.hasScale)
    args.push_back(flatten(b, loc, getBuffer(b, loc, in.scale)));
  if (spec.hasBias)
    args.push_back(flatten(b, loc, getBuffer(b, loc, in.bias)));
  args.push_back(flatten(b, loc, y));
  // Statistics nobody uses get a buffer (which bufferization then drops
  // with its unused tensor) but are not computed.
  Value meanBuffer;
  if constexpr (hasMean) {
    meanBuffer = allocBuffer(b, loc, op.getMean().getType(), x);
    if (spec.writeMean)
      args.push_back(flatten(b, loc, meanBuffer));
  }
  Value rstdBuffer = allocBuffer(b, loc, op.getRstd().getType(), x);
  if (spec.writeRstd)
    args.push_back(flatten(b, loc, rstdBuffer));
  args.push_back(rows);
  args.push_back(colsValue);
  for (ArrayRef<PointwiseStep> steps : {in.prologue, in.epilogue})
    for (const PointwiseStep &step : steps)
      if (step.operand)
        args.push_back(flatten(b, loc, getBuffer(b, loc, step.operand)));

  auto results = [&] {
    SmallVector<Value> r{toTensor(b, loc, y)};
    if (meanBuffer)
      r.push_back(toTensor(b, loc, meanBuffer));
    r.push_back(toTensor(b, loc, rstdBuffer));
    return r;
  };
  // A group norm without images or channels has empty results: no kernel
  // (with dynamic sizes, the launches check that there are rows).
  if (isGroupNorm &&
      (constantOr(rows) == 0 ||
       constantOr(spec.groupSizes[RowNormKernel::kChannels]) == 0))
    return results();
  if (s.kind == RowNormSchedule::Kind::SplitRow) {
    lowerSplitRow(b, loc, module, op, spec, args, rows, colsValue);
    return results();
  }
  if (s.kind == RowNormSchedule::Kind::ChannelsLastGroups) {
    lowerChannelsLastGroups(b, loc, module, op, spec, args, images,
                            options.target);
    return results();
  }

  TypeRange argTypes = ValueRange(args).getTypes();
  Kernel kernel = createKernel(module, loc,
                               kernelBaseName(op, op->getName().stripDialect()),
                               argTypes, s.blockSize(), s.str());
  Value scratch = addScratch(kernel, loc, s.threadsPerRow, spec.acc);
  Value clusterSlots;
  if (s.kind == RowNormSchedule::Kind::ClusterRow) {
    kernel.func->setAttr(kClusterBlocksAttr,
                         b.getI64IntegerAttr(s.clusterBlocks));
    clusterSlots = addWorkgroupBuffer(
        kernel, loc, kRowNormClusterExchanges * s.clusterBlocks, spec.acc);
  }
  emitRowNormBody(kernel, loc, spec.inKernel(kernel), scratch, clusterSlots);

  if (s.kind == RowNormSchedule::Kind::ClusterRow) {
    // A cluster per row: its blocks are consecutive along x.
    launchUnlessEmpty(b, loc, kernel,
                      b.createOrFold<arith::MulIOp>(
                          loc, rows, indexConstant(b, loc, s.clusterBlocks)),
                      s.blockSize(), args,
                      b.createOrFold<arith::MulIOp>(loc, rows, colsValue));
    return results();
  }

  // A block per row group, or as many as the device holds at once (known
  // when the kernel is loaded), each looping over the groups. No launch
  // for an empty tensor (a grid of 0 blocks is an error).
  Value blocks = b.createOrFold<arith::CeilDivUIOp>(
      loc, rows, indexConstant(b, loc, s.rowsPerBlock));
  int64_t staticBlocks = constantOr(blocks);
  if (residencyMatters(staticBlocks, options.target)) {
    // Planned: what the target holds of its threads and shared memory.
    ResidentBlocksOp resident =
        residentBlocks(b, loc, s.blockSize(),
                       ShapedType::isDynamic(staticBlocks)
                           ? std::numeric_limits<int32_t>::max()
                           : staticBlocks);
    bindResidentBlocks(resident, kernel.func, options.target);
    blocks = b.createOrFold<arith::MinUIOp>(loc, blocks, resident);
  }
  launchUnlessEmpty(b, loc, kernel, blocks, s.blockSize(), args,
                    b.createOrFold<arith::MulIOp>(loc, rows, colsValue));
  return results();
}

/// Whether `NormOp` takes a bias (all but rms_norm).
template <typename NormOp>
constexpr bool kHasBias = !std::is_same_v<NormOp, RMSNormOp>;

template <typename NormOp>
LogicalResult lowerRowNorm(RewriterBase &rewriter, NormOp op,
                           const GPULoweringOptions &options) {
  RowNormOperands in;
  in.input = op.getInput();
  in.scale = op.getScale();
  if constexpr (kHasBias<NormOp>)
    in.bias = op.getBias();
  FailureOr<RowNormSchedule> schedule = readRowNormSchedule(op);
  if (failed(schedule))
    return failure();
  rewriter.replaceOp(op, emitRowNorm(rewriter, op, op, in, *schedule, options));
  return success();
}

template <typename NormOp>
LogicalResult lowerFusedRowNorm(RewriterBase &rewriter, FusedOp fused,
                                NormOp op, const FusedGroup &group,
                                const GPULoweringOptions &options) {
  RowNormOperands in;
  in.input = group.source;
  in.scale = op.getScale() ? outerValue(fused, op.getScale()) : Value();
  if (op.getScale() && !in.scale)
    return failure();
  if constexpr (kHasBias<NormOp>) {
    in.bias = op.getBias() ? outerValue(fused, op.getBias()) : Value();
    if (op.getBias() && !in.bias)
      return failure();
  }
  in.prologue = group.prologue;
  in.epilogue = group.epilogue;
  FailureOr<RowNormSchedule> schedule = readRowNormSchedule(op);
  if (failed(schedule))
    return failure();
  SmallVector<Value> results =
      emitRowNorm(rewriter, op, fused, in, *schedule, options);
  SmallVector<Value> replacements;
  for (Value v : fused.getBody().front().getTerminator()->getOperands())
    replacements.push_back(v == group.result
                               ? results[0]
                               : results[cast<OpResult>(v).getResultNumber()]);
  rewriter.replaceOp(fused, replacements);
  return success();
}

} // namespace

LogicalResult cuda::lowerFusedRowNormToGPU(RewriterBase &rewriter,
                                           FusedOp fused,
                                           const GPULoweringOptions &options) {
  FailureOr<FusedGroup> group = matchFusedGroup(fused);
  if (failed(group))
    return failure();
  return llvm::TypeSwitch<Operation *, LogicalResult>(group->producer)
      .Case<LayerNormOp, RMSNormOp, GroupNormOp, InstanceNormOp>(
          [&](auto norm) {
            return lowerFusedRowNorm(rewriter, fused, norm, *group, options);
          })
      .Default([](Operation *) { return failure(); });
}

LogicalResult cuda::lowerRowNormToGPU(RewriterBase &rewriter, Operation *op,
                                      const GPULoweringOptions &options) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<LayerNormOp, RMSNormOp, GroupNormOp, InstanceNormOp>(
          [&](auto norm) { return lowerRowNorm(rewriter, norm, options); })
      .Default([](Operation *) { return failure(); });
}
