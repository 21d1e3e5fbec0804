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
// Group and instance norms are rows of one (image, group) here, except in
// NHWC under a ChannelsLastGroups schedule (LowerGroupNormNHWC.cpp).
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

/// The body of the row-norm kernel.
void emitRowNormBody(Kernel &k, Location loc, const RowNormKernel &spec,
                     Value scratch) {
  OpBuilder &b = k.body;
  RowNormArgs a = bindArgs(k, spec);
  const RowNormSchedule &s = spec.schedule;
  Type acc = spec.acc;
  int64_t vw = s.vectorWidth;
  int64_t tpr = s.threadsPerRow;
  auto c = [&](int64_t v) { return indexConstant(b, loc, v); };
  auto zeroAcc = [&] { return floatConstant(b, loc, 0.0, acc, 1); };

  Value cols = ShapedType::isDynamic(spec.cols) ? a.cols : c(spec.cols);
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value lane = tid, rowInBlock;
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
  // (the grid is at most the blocks the device holds at once).
  Value rowGroups =
      b.createOrFold<arith::CeilDivUIOp>(loc, a.rows, c(s.rowsPerBlock));
  auto rowLoop = b.create<scf::ForOp>(
      loc, bid, rowGroups, b.create<gpu::GridDimOp>(loc, gpu::Dimension::x));
  OpBuilder::InsertionGuard inLoop(b);
  b.setInsertionPoint(rowLoop.getBody()->getTerminator());
  Value row = rowLoop.getInductionVar();
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

  auto reduce = [&](Value v) {
    return tpr <= 32 ? emitWarpSum(b, loc, v, tpr)
                     : emitBlockSum(b, loc, v, scratch, tpr);
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

/// The workgroup scratch of a block sum over `threads` threads (null for
/// a single warp).
Value addScratch(Kernel &k, Location loc, int64_t threads, Type acc) {
  if (threads <= 32)
    return Value();
  return addWorkgroupBuffer(k, loc, threads / 32, acc);
}

/// A split row's block: its row, its chunk [begin, end) of the row, and
/// the chunk's element count as a float.
struct ChunkOfRow {
  Value row, chunk, rowBase, begin, end, count;
};

ChunkOfRow emitChunkOfRow(OpBuilder &b, Location loc, const RowNormKernel &spec,
                          Value cols, Value chunksPerRow) {
  const RowNormSchedule &s = spec.schedule;
  ChunkOfRow c;
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  c.row = b.create<arith::DivUIOp>(loc, bid, chunksPerRow);
  c.chunk = b.create<arith::RemUIOp>(loc, bid, chunksPerRow);
  c.rowBase = b.create<arith::MulIOp>(loc, c.row, cols);
  c.begin = b.create<arith::MulIOp>(loc, c.chunk,
                                    indexConstant(b, loc, s.chunkElements));
  c.end = b.create<arith::MinUIOp>(
      loc,
      b.create<arith::AddIOp>(loc, c.begin,
                              indexConstant(b, loc, s.chunkElements)),
      cols);
  c.count = b.create<arith::UIToFPOp>(
      loc, spec.acc,
      b.create<arith::IndexCastUIOp>(
          loc, b.getI64Type(), b.create<arith::SubIOp>(loc, c.end, c.begin)));
  return c;
}

/// This thread's part of columns [begin, end) of the row at `rowBase`:
/// vectors from `first` (its own first one) to `vectorsEnd`, `tpr * vw`
/// apart, and where the row is peeled its head and tail elements (with
/// whether each is there).
struct ChunkPieces {
  Value first, vectorsEnd;
  SmallVector<std::pair<Value, Value>> ends;
};

ChunkPieces emitChunkPieces(OpBuilder &b, Location loc,
                            const RowNormKernel &spec, Value rowBase,
                            Value begin, Value end) {
  int64_t vw = spec.schedule.vectorWidth;
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  IndexMath ix{b, loc};
  ChunkPieces p;
  p.vectorsEnd = end;
  Value vectorsBegin = begin;
  if (spec.schedule.peeled) {
    PeeledRange range = emitPeeledRange(b, loc, vw, rowBase, begin, end);
    vectorsBegin = range.alignedBegin;
    p.vectorsEnd = range.alignedEnd;
    p.ends = peeledElements(b, loc, range, tid);
  }
  p.first = ix.add(vectorsBegin, ix.mul(tid, vw));
  return p;
}

/// Sums `perVector(lanes)` over this thread's part of columns [begin, end)
/// of the row at `rowBase` (ChunkPieces).
Value emitChunkSweep(
    OpBuilder &b, Location loc, const RowNormKernel &spec, Value x,
    ArrayRef<Value> prologueArgs, Value row, Value rowBase, Value begin,
    Value end,
    llvm::function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)>
        perVector) {
  const RowNormSchedule &s = spec.schedule;
  int64_t vw = s.vectorWidth;
  ChunkPieces pieces = emitChunkPieces(b, loc, spec, rowBase, begin, end);
  auto loop = b.create<scf::ForOp>(
      loc, pieces.first, pieces.vectorsEnd,
      indexConstant(b, loc, s.threadsPerRow * vw),
      ValueRange{floatConstant(b, loc, 0.0, spec.acc, 1)},
      [&](OpBuilder &fb, Location fl, Value col, ValueRange sum) {
        auto [offset, channel] = emitAddress(fb, fl, spec, row, rowBase, col);
        SmallVector<Value> lanes =
            loadX(fb, fl, spec, x, prologueArgs, offset, channel);
        fb.create<scf::YieldOp>(fl, ValueRange{fb.create<arith::AddFOp>(
                                        fl, sum[0], perVector(fb, fl, lanes))});
      });
  Value total = loop.getResult(0);
  // A peeled row's single elements (rows only: the offset is rowBase + col).
  for (auto [col, valid] : pieces.ends) {
    SmallVector<Value> lanes = emitValuesIf(
        b, loc, valid, spec.acc, [&, col = col](OpBuilder &tb, Location tl) {
          return loadX(tb, tl, spec, x, prologueArgs,
                       tb.create<arith::AddIOp>(tl, rowBase, col), col, 1);
        });
    Value term =
        b.create<arith::SelectOp>(loc, valid, perVector(b, loc, lanes),
                                  floatConstant(b, loc, 0.0, spec.acc, 1));
    total = b.create<arith::AddFOp>(loc, total, term);
  }
  return total;
}

/// The two kernels of a split row and their launches: `args` are the
/// one-kernel arguments (x, [scale], [bias], y, [mean], [rstd], rows,
/// cols).
void lowerSplitRow(OpBuilder &b, Location loc, ModuleOp module, Operation *op,
                   const RowNormKernel &hostSpec, ArrayRef<Value> args,
                   Value rows, Value cols) {
  const RowNormKernel &spec = hostSpec;
  auto countArgs = [](ArrayRef<PointwiseStep> steps) {
    return unsigned(llvm::count_if(
        steps, [](const PointwiseStep &s) { return bool(s.operand); }));
  };
  unsigned numPrologueArgs = countArgs(spec.prologue);
  unsigned numStepArgs = numPrologueArgs + countArgs(spec.epilogue);
  const RowNormSchedule &s = spec.schedule;
  Type acc = spec.acc;
  int64_t perChunk = spec.center ? 2 : 1; // (mean, M2) or sum of squares
  auto c = [&](OpBuilder &ib, int64_t v) { return indexConstant(ib, loc, v); };

  // Host: chunks per row, the partial moments, the two launches.
  // Folded where the shape is static: the partials then have a static size.
  Value chunksPerRow =
      b.createOrFold<arith::CeilDivUIOp>(loc, cols, c(b, s.chunkElements));
  Value blocks = b.createOrFold<arith::MulIOp>(loc, rows, chunksPerRow);
  Value partialCount =
      b.createOrFold<arith::MulIOp>(loc, blocks, c(b, perChunk));
  Value partialsFlat = allocTemporary(b, loc, partialCount, acc);
  std::string base = kernelBaseName(op, op->getName().stripDialect());

  // Kernel 1: each chunk's moments.
  SmallVector<Value> args1{args.front(), partialsFlat, rows, cols,
                           chunksPerRow};
  // The prologue's operands: after the one-kernel arguments' fixed part.
  unsigned fixed = args.size() - numStepArgs;
  for (unsigned i = 0; i < numPrologueArgs; ++i)
    args1.push_back(args[fixed + i]);
  TypeRange types1 = ValueRange(args1).getTypes();
  Kernel k1 = createKernel(module, loc, base + "_partial", types1,
                           s.blockSize(), s.str());
  {
    OpBuilder &kb = k1.body;
    Value scratch = addScratch(k1, loc, s.threadsPerRow, acc);
    Value x = k1.arg(0), out = k1.arg(1), kCols = k1.arg(3);
    unsigned next = 5;
    SmallVector<Value> prologueArgs;
    bindStepArgs(k1, hostSpec.prologue, next, prologueArgs);
    RowNormKernel spec = hostSpec.inKernel(k1);
    ChunkOfRow ch = emitChunkOfRow(kb, loc, spec, kCols, k1.arg(4));
    auto reduce = [&](Value v) {
      return s.threadsPerRow <= 32
                 ? emitWarpSum(kb, loc, v, s.threadsPerRow)
                 : emitBlockSum(kb, loc, v, scratch, s.threadsPerRow);
    };
    Value mean;
    if (spec.center)
      mean = kb.create<arith::DivFOp>(
          loc,
          reduce(emitChunkSweep(
              kb, loc, spec, x, prologueArgs, ch.row, ch.rowBase, ch.begin,
              ch.end,
              [](OpBuilder &fb, Location fl, ArrayRef<Value> lanes) {
                return sumOf(fb, fl, lanes);
              })),
          ch.count);
    Value m2 = reduce(emitChunkSweep(
        kb, loc, spec, x, prologueArgs, ch.row, ch.rowBase, ch.begin, ch.end,
        [&](OpBuilder &fb, Location fl, ArrayRef<Value> lanes) {
          SmallVector<Value> squares;
          for (Value v : lanes) {
            Value d =
                mean ? fb.create<arith::SubFOp>(fl, v, mean).getResult() : v;
            squares.push_back(fb.create<arith::MulFOp>(fl, d, d));
          }
          return sumOf(fb, fl, squares);
        }));
    Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    Value first =
        kb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid, c(kb, 0));
    Value slot = kb.create<arith::MulIOp>(
        loc, kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x),
        c(kb, perChunk));
    kb.create<scf::IfOp>(loc, first, [&](OpBuilder &tb, Location tl) {
      if (spec.center) {
        tb.create<memref::StoreOp>(tl, mean, out, slot);
        Value next = tb.create<arith::AddIOp>(tl, slot, c(tb, 1));
        tb.create<memref::StoreOp>(tl, m2, out, next);
      } else {
        tb.create<memref::StoreOp>(tl, m2, out, slot);
      }
      tb.create<scf::YieldOp>(tl);
    });
  }

  // Kernel 2: combine the row's chunks, normalize this chunk.
  SmallVector<Value> args2(args.begin(), args.end());
  args2.push_back(partialsFlat);
  args2.push_back(chunksPerRow);
  TypeRange types2 = ValueRange(args2).getTypes();
  Kernel k2 = createKernel(module, loc, base + "_normalize", types2,
                           s.blockSize(), s.str());
  {
    OpBuilder &kb = k2.body;
    RowNormArgs a = bindArgs(k2, hostSpec);
    unsigned n = k2.func.getFunctionType().getNumInputs();
    Value kPartials = k2.arg(n - 2), kChunks = k2.arg(n - 1);
    RowNormKernel spec = hostSpec.inKernel(k2);
    ChunkOfRow ch = emitChunkOfRow(kb, loc, spec, a.cols, kChunks);
    Value rowChunks = kb.create<arith::MulIOp>(loc, ch.row, kChunks);
    Value zero = floatConstant(kb, loc, 0.0, acc, 1);
    Value colsF = kb.create<arith::UIToFPOp>(
        loc, acc,
        kb.create<arith::IndexCastUIOp>(loc, kb.getI64Type(), a.cols));
    // Every thread combines the row's chunks in the same order, so all
    // agree without a barrier.
    Value mean, meanSquare;
    if (spec.center) {
      auto combine = kb.create<scf::ForOp>(
          loc, c(kb, 0), kChunks, c(kb, 1), ValueRange{zero, zero, zero},
          [&](OpBuilder &fb, Location fl, Value k, ValueRange m) {
            Value slot = fb.create<arith::MulIOp>(
                fl, fb.create<arith::AddIOp>(fl, rowChunks, k), c(fb, 2));
            Value begin =
                fb.create<arith::MulIOp>(fl, k, c(fb, s.chunkElements));
            Value end = fb.create<arith::MinUIOp>(
                fl, fb.create<arith::AddIOp>(fl, begin, c(fb, s.chunkElements)),
                a.cols);
            Moments part;
            part.count = fb.create<arith::UIToFPOp>(
                fl, acc,
                fb.create<arith::IndexCastUIOp>(
                    fl, fb.getI64Type(),
                    fb.create<arith::SubIOp>(fl, end, begin)));
            part.mean = fb.create<memref::LoadOp>(fl, kPartials, slot);
            Value next = fb.create<arith::AddIOp>(fl, slot, c(fb, 1));
            part.m2 = fb.create<memref::LoadOp>(fl, kPartials, next);
            Moments sum =
                emitChanCombine(fb, fl, Moments{m[0], m[1], m[2]}, part);
            fb.create<scf::YieldOp>(fl,
                                    ValueRange{sum.count, sum.mean, sum.m2});
          });
      mean = combine.getResult(1);
      meanSquare = kb.create<arith::DivFOp>(loc, combine.getResult(2), colsF);
    } else {
      auto total = kb.create<scf::ForOp>(
          loc, c(kb, 0), kChunks, c(kb, 1), ValueRange{zero},
          [&](OpBuilder &fb, Location fl, Value k, ValueRange sum) {
            Value at = fb.create<arith::AddIOp>(fl, rowChunks, k);
            Value v = fb.create<memref::LoadOp>(fl, kPartials, at);
            fb.create<scf::YieldOp>(
                fl, ValueRange{fb.create<arith::AddFOp>(fl, sum[0], v)});
          });
      meanSquare = kb.create<arith::DivFOp>(loc, total.getResult(0), colsF);
    }
    Value rstd = emitRstd(kb, loc, meanSquare, spec.epsilon);
    int64_t vw = s.vectorWidth;
    Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    /// Normalizes and stores `width` elements at column `col`.
    auto normalizeAt = [&](OpBuilder &fb, Location fl, Value col,
                           int64_t width) {
      auto [offset, channel] =
          emitAddress(fb, fl, spec, ch.row, ch.rowBase, col);
      SmallVector<Value> lanes =
          loadX(fb, fl, spec, a.x, a.prologue, offset, channel, width);
      SmallVector<Value> scale, bias, out;
      if (spec.hasScale)
        scale = loadPerChannel(fb, fl, spec, a.scale, channel, width);
      if (spec.hasBias)
        bias = loadPerChannel(fb, fl, spec, a.bias, channel, width);
      for (int64_t l = 0; l < width; ++l)
        out.push_back(emitNormalize(fb, fl, lanes[l], mean, rstd,
                                    spec.hasScale ? scale[l] : Value(),
                                    spec.hasBias ? bias[l] : Value()));
      storeY(fb, fl, spec, a, out, offset, channel);
    };
    ChunkPieces pieces =
        emitChunkPieces(kb, loc, spec, ch.rowBase, ch.begin, ch.end);
    kb.create<scf::ForOp>(
        loc, pieces.first, pieces.vectorsEnd, c(kb, s.threadsPerRow * vw),
        ValueRange{}, [&](OpBuilder &fb, Location fl, Value col, ValueRange) {
          normalizeAt(fb, fl, col, vw);
          fb.create<scf::YieldOp>(fl);
        });
    for (auto [col, valid] : pieces.ends)
      kb.create<scf::IfOp>(loc, valid,
                           [&, col = col](OpBuilder &tb, Location tl) {
                             normalizeAt(tb, tl, col, 1);
                             tb.create<scf::YieldOp>(tl);
                           });
    if (spec.writeMean || spec.writeRstd) {
      Value first = kb.create<arith::AndIOp>(
          loc,
          kb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid,
                                   c(kb, 0)),
          kb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, ch.chunk,
                                   c(kb, 0)));
      kb.create<scf::IfOp>(loc, first, [&](OpBuilder &tb, Location tl) {
        if (spec.writeMean)
          storeLanes(tb, tl, {mean}, a.mean, ch.row);
        if (spec.writeRstd)
          storeLanes(tb, tl, {rstd}, a.rstd, ch.row);
        tb.create<scf::YieldOp>(tl);
      });
    }
  }

  Value work = b.create<arith::MulIOp>(loc, rows, cols);
  Value any =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, work, c(b, 0));
  b.create<scf::IfOp>(loc, any, [&](OpBuilder &tb, Location tl) {
    launch(tb, tl, k1, blocks, s.blockSize(), args1);
    launch(tb, tl, k2, blocks, s.blockSize(), args2);
    tb.create<scf::YieldOp>(tl);
  });
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
    // An instance norm's group is one channel: its run is its own.
    int64_t contiguous = spec.layout == RowNormKernel::Layout::GroupsNHWC
                             ? constantOr(channelsPerGroup)
                             : constantOr(spatial);
    images = getNumElements(b, loc, x, 0, 1);
    int64_t nhwcChannels = spec.layout == RowNormKernel::Layout::GroupsNHWC
                               ? constantOr(channels)
                               : ShapedType::kDynamic;
    spec.schedule = selectGroupNormSchedule(
        cols, contiguous, element, options.target, options.rowNorm,
        nhwcChannels, constantOr(im.product(images, spatial)),
        constantOr(rows));
  } else {
    for (int64_t d = axis; d < rank; ++d) {
      if (type.isDynamicDim(d)) {
        cols = ShapedType::kDynamic;
        break;
      }
      cols *= type.getDimSize(d);
    }
    rows = getNumElements(b, loc, x, 0, axis);
    spec.schedule =
        selectRowNormSchedule(cols, element, options.target, options.rowNorm,
                              spec.hasScale || spec.hasBias, constantOr(rows));
    colsValue = getNumElements(b, loc, x, axis, rank);
  }
  spec.cols = cols;
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
    lowerChannelsLastGroups(b, loc, module, op, spec, args, images);
    return results();
  }

  TypeRange argTypes = ValueRange(args).getTypes();
  Kernel kernel = createKernel(module, loc,
                               kernelBaseName(op, op->getName().stripDialect()),
                               argTypes, s.blockSize(), s.str());
  Value scratch = addScratch(kernel, loc, s.threadsPerRow, spec.acc);
  emitRowNormBody(kernel, loc, spec.inKernel(kernel), scratch);

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
  rewriter.replaceOp(op, emitRowNorm(rewriter, op, op, in, options));
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
  SmallVector<Value> results = emitRowNorm(rewriter, op, fused, in, options);
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
