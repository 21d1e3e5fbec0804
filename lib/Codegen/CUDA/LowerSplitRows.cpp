//===- LowerSplitRows.cpp - row norms split across blocks -------*- C++ -*-===//
//
// Part of normfuse. A layer or RMS norm (or a group or instance norm's rows)
// whose rows are too long for one block's registers, or of a length unknown
// when the kernel is generated, under a SplitRow schedule: each row in
// chunks of `chunkElements`, a block per chunk, in two kernels. The first
// loads its chunk once into registers and writes the chunk's moments
// (count, mean, M2 around the chunk's own mean); the second combines a
// row's chunks (Chan's formula, in a fixed order) and normalizes its chunk.
// LowerRowNorms.cpp chooses it.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "RowNormKernel.h"
#include "normfuse/Codegen/Common/NormMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

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

/// A piece of a chunk in a thread's registers: its lanes (zeros where it
/// is not in the chunk) and whether it is there (null: always).
struct RegisterPiece {
  SmallVector<Value> lanes;
  Value valid;
};

/// This thread's part of columns [begin, end) of the row at `rowBase`,
/// loaded once (ChunkPieces): its `vectorsPerThread` vectors, `tpr * vw`
/// apart, each where it lies before the vectors' end, and a peeled row's
/// head and tail elements.
SmallVector<RegisterPiece>
emitChunkInRegisters(OpBuilder &b, Location loc, const RowNormKernel &spec,
                     Value x, ArrayRef<Value> prologueArgs, Value row,
                     Value rowBase, Value begin, Value end) {
  const RowNormSchedule &s = spec.schedule;
  int64_t vw = s.vectorWidth;
  ChunkPieces pieces = emitChunkPieces(b, loc, spec, rowBase, begin, end);
  SmallVector<RegisterPiece> out;
  for (int64_t k = 0; k < s.vectorsPerThread; ++k) {
    Value col = b.create<arith::AddIOp>(
        loc, pieces.first, indexConstant(b, loc, k * s.threadsPerRow * vw));
    Value valid = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, col,
                                          pieces.vectorsEnd);
    out.push_back({emitValuesIf(b, loc, valid, spec.acc,
                                [&](OpBuilder &tb, Location tl) {
                                  auto [offset, channel] = emitAddress(
                                      tb, tl, spec, row, rowBase, col);
                                  return loadX(tb, tl, spec, x, prologueArgs,
                                               offset, channel);
                                }),
                   valid});
  }
  // A peeled row's single elements (rows only: the offset is rowBase + col).
  for (auto [col, valid] : pieces.ends)
    out.push_back(
        {emitValuesIf(b, loc, valid, spec.acc,
                      [&, col = col](OpBuilder &tb, Location tl) {
                        return loadX(tb, tl, spec, x, prologueArgs,
                                     tb.create<arith::AddIOp>(tl, rowBase, col),
                                     col, 1);
                      }),
         valid});
  return out;
}

} // namespace

/// The two kernels of a split row and their launches: `args` are the
/// one-kernel arguments (x, [scale], [bias], y, [mean], [rstd], rows,
/// cols).
void cuda::lowerSplitRow(OpBuilder &b, Location loc, ModuleOp module,
                         Operation *op, const RowNormKernel &hostSpec,
                         ArrayRef<Value> args, Value rows, Value cols) {
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
    // The chunk read once; its mean, then the squared deviations from it,
    // from the registers.
    SmallVector<RegisterPiece> pieces = emitChunkInRegisters(
        kb, loc, spec, x, prologueArgs, ch.row, ch.rowBase, ch.begin, ch.end);
    Value mean;
    if (spec.center) {
      SmallVector<Value> sums;
      for (const RegisterPiece &p : pieces)
        sums.push_back(sumOf(kb, loc, p.lanes));
      mean =
          kb.create<arith::DivFOp>(loc, reduce(sumOf(kb, loc, sums)), ch.count);
    }
    SmallVector<Value> squareSums;
    for (const RegisterPiece &p : pieces) {
      SmallVector<Value> squares;
      for (Value v : p.lanes) {
        Value d = mean ? kb.create<arith::SubFOp>(loc, v, mean).getResult() : v;
        squares.push_back(kb.create<arith::MulFOp>(loc, d, d));
      }
      // A piece outside the chunk holds zeros, whose deviations are not.
      squareSums.push_back(
          kb.create<arith::SelectOp>(loc, p.valid, sumOf(kb, loc, squares),
                                     floatConstant(kb, loc, 0.0, acc, 1)));
    }
    Value m2 = reduce(sumOf(kb, loc, squareSums));
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
