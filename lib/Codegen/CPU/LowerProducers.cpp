//===- LowerProducers.cpp - matmul to loops ---------------------*- C++ -*-===//
//
// Part of normfuse. Lowers nf.matmul to loops, arithmetic in f32 (f64 for
// f64 data) with fused multiply-adds, f16/bf16 widened on load and narrowed
// once on the final store, and adds the conv patterns of LowerConvs.cpp.
//
// - Without transpose_rhs: parallel iterations of up to 48 rows by 32
//   columns. Blocks of 3 rows by 4 vectors of columns keep their 12 sums
//   in registers over the whole k loop, so each rhs vector loaded serves 3
//   rows and each lhs element 32 columns; then single rows, and the last
//   columns in single vectors and scalars.
// - With transpose_rhs: each output element is a dot product of two rows
//   contiguous in k (a blocked sum), one parallel iteration per row.
//
// An nf.fused matmul runs its pointwise epilogue (PointwiseChain.h) on the
// sums in registers before the store.
//
//===----------------------------------------------------------------------===//

#include "PointwiseChain.h"
#include "ProducerLoops.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;
using namespace mlir::nf::cpu::producers;

/// Vectors of columns a matmul row keeps in registers over the k loop.
static constexpr int64_t kColumnVectors = 4;

namespace {

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

/// Visits columns [lower, upper) in blocks of `count` vectors of `width`
/// lanes: blocks of kColumnVectors vectors, then single vectors, then
/// scalars.
using ColumnBlockBody = llvm::function_ref<void(OpBuilder &, Location, Value j,
                                                int64_t width, int64_t count)>;
void emitColumnBlocks(OpBuilder &b, Location loc, Value lower, Value upper,
                      int64_t width, ColumnBlockBody body) {
  SmallVector<std::pair<int64_t, int64_t>> phases;
  if (width > 1)
    phases = {{width, kColumnVectors}, {width, 1}};
  phases.push_back({1, 1});
  Value start = lower;
  for (std::pair<int64_t, int64_t> phase : phases) {
    int64_t lanes = phase.first, count = phase.second;
    int64_t step = lanes * count;
    Value end = upper;
    if (step > 1) {
      Value rem = b.create<arith::RemUIOp>(
          loc, b.create<arith::SubIOp>(loc, upper, start), idx(b, loc, step));
      end = b.create<arith::SubIOp>(loc, upper, rem);
    }
    b.create<scf::ForOp>(loc, start, end, idx(b, loc, step), std::nullopt,
                         [&](OpBuilder &fb, Location fl, Value j, ValueRange) {
                           body(fb, fl, j, lanes, count);
                           fb.create<scf::YieldOp>(fl);
                         });
    start = end;
  }
}

/// A (batch, rows, cols) view of a buffer of rank >= 2.
struct MatrixView {
  Value buffer;
  Value batch, rows, cols;
  bool batched;
};

MatrixView viewAsBatchedMatrix(OpBuilder &b, Location loc, Value full) {
  int64_t rank = cast<MemRefType>(full.getType()).getRank();
  MatrixView v;
  v.batch = getNumElements(b, loc, full, 0, rank - 2);
  v.rows = dimOf(b, loc, full, rank - 2);
  v.cols = dimOf(b, loc, full, rank - 1);
  v.buffer = reshapeBuffer(b, loc, full, {v.batch, v.rows, v.cols});
  v.batched = rank > 2;
  return v;
}

/// result[b, m, n] = sum_k lhs[b, m, k] * rhs[b, k, n], operands stored
/// transposed on request; an operand without batch dimensions is shared.
struct LowerMatmul : LoopLoweringPattern<MatmulOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, emit(rewriter, op, adaptor.getLhs(),
                                adaptor.getRhs(), options.vectorWidth,
                                /*epilogue=*/nullptr));
    return success();
  }

  /// Rows of lhs that share each vector of rhs loaded in the k loop.
  static constexpr int64_t kRowGroup = 3;
  /// Rows of one parallel iteration.
  static constexpr int64_t kRowChunk = 48;

  using LhsIndices =
      llvm::function_ref<SmallVector<Value>(Value batch, Value m, Value k)>;

  /// The result without transpose_rhs, in parallel iterations of
  /// kRowChunk rows by kColumnVectors vectors of columns: blocks of
  /// kRowGroup rows by up to kColumnVectors vectors of columns keep their
  /// sums in registers over the whole k loop, so each rhs vector loaded is
  /// used for kRowGroup rows and each lhs element for all the columns.
  /// The iteration's panel of rhs (k rows of the block's columns) is read
  /// from cache by every row group.
  static void emitBlocks(OpBuilder &b, Location loc, const MatrixView &lhs,
                         const MatrixView &rhs, Value out, Value batch, Value m,
                         Value n, Value k, Type acc, int64_t w,
                         const PointwiseChain &chain, LhsIndices lhsAt) {
    int64_t blockCols = w * kColumnVectors;
    int64_t rowGroup = acc.getIntOrFloatBitWidth() > 32 ? 1 : kRowGroup;
    Value zero = idx(b, loc, 0), one = idx(b, loc, 1);
    auto ceilDiv = [&](Value x, int64_t c) {
      return divui(b, loc, addi(b, loc, x, idx(b, loc, c - 1)), c);
    };
    Value colBlocks = ceilDiv(n, blockCols), rowChunks = ceilDiv(m, kRowChunk);
    Value iterations = b.createOrFold<arith::MulIOp>(
        loc, b.createOrFold<arith::MulIOp>(loc, batch, colBlocks), rowChunks);
    emitParallelRows(
        b, loc, iterations, [&](OpBuilder &pb, Location pl, Value it) {
          SmallVector<Value> r =
              delinearize(pb, pl, it, {batch, colBlocks, rowChunks});
          Value bi = r[0];
          Value lb = lhs.batched ? bi : zero, rb = rhs.batched ? bi : zero;
          Value j0 = muli(pb, pl, r[1], blockCols);
          Value j1 = minsi(pb, pl, addi(pb, pl, j0, idx(pb, pl, blockCols)), n);
          Value m0 = muli(pb, pl, r[2], kRowChunk);
          Value m1 = minsi(pb, pl, addi(pb, pl, m0, idx(pb, pl, kRowChunk)), m);
          // out[bi, mi0 : mi0 + rows, j : j + count * width].
          auto block = [&](OpBuilder &cb, Location cl, Value mi0, int64_t rows,
                           Value j, int64_t width, int64_t count) {
            SmallVector<Value> mis, cols;
            for (int64_t i = 0; i < rows; ++i)
              mis.push_back(addi(cb, cl, mi0, idx(cb, cl, i)));
            for (int64_t i = 0; i < count; ++i)
              cols.push_back(addi(cb, cl, j, idx(cb, cl, i * width)));
            SmallVector<Value> inits(rows * count,
                                     floatConstant(cb, cl, 0.0, acc, width));
            auto loop = cb.create<scf::ForOp>(
                cl, zero, k, one, inits,
                [&](OpBuilder &kb, Location kl, Value kk, ValueRange sums) {
                  SmallVector<Value> as, next(sums.begin(), sums.end());
                  for (Value mi : mis)
                    as.push_back(splat(
                        kb, kl,
                        loadAs(kb, kl, lhs.buffer, lhsAt(lb, mi, kk), 1, acc),
                        width));
                  for (int64_t i = 0; i < count; ++i) {
                    Value rv = loadAs(kb, kl, rhs.buffer, {rb, kk, cols[i]},
                                      width, acc);
                    for (int64_t row = 0; row < rows; ++row)
                      next[row * count + i] = kb.create<math::FmaOp>(
                          kl, as[row], rv, sums[row * count + i]);
                  }
                  kb.create<scf::YieldOp>(kl, next);
                });
            for (int64_t row = 0; row < rows; ++row)
              for (int64_t i = 0; i < count; ++i) {
                SmallVector<Value> at{bi, mis[row], cols[i]};
                storeAs(cb, cl,
                        chain.apply(cb, cl, loop.getResult(row * count + i), at,
                                    width),
                        out, at);
              }
          };
          // The iteration's rows for the columns [j, j + count * width): groups
          // of rowGroup rows, then single rows.
          emitColumnBlocks(
              pb, pl, j0, j1, w,
              [&](OpBuilder &cb, Location cl, Value j, int64_t width,
                  int64_t count) {
                Value whole = addi(
                    cb, cl, m0,
                    muli(cb, cl, divui(cb, cl, subi(cb, cl, m1, m0), rowGroup),
                         rowGroup));
                cb.create<scf::ForOp>(
                    cl, m0, whole, idx(cb, cl, rowGroup), std::nullopt,
                    [&](OpBuilder &fb, Location fl, Value mi, ValueRange) {
                      block(fb, fl, mi, rowGroup, j, width, count);
                      fb.create<scf::YieldOp>(fl);
                    });
                emitFor(cb, cl, whole, m1,
                        [&](OpBuilder &fb, Location fl, Value mi) {
                          block(fb, fl, mi, 1, j, width, count);
                        });
              });
        });
  }

  /// The loops, from the operands' tensors; `epilogue` (may be null) runs
  /// on each output vector before it is stored. Returns the result tensor.
  static Value emit(OpBuilder &b, MatmulOp op, Value lhsTensor, Value rhsTensor,
                    int64_t w, const PointwiseChain *epilogue) {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type acc = getAccumulationType(getElementTypeOrSelf(op.getLhs()));
    bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();

    Value lhsFull = getBuffer(b, loc, lhsTensor);
    Value rhsFull = getBuffer(b, loc, rhsTensor);
    MatrixView lhs = viewAsBatchedMatrix(b, loc, lhsFull);
    MatrixView rhs = viewAsBatchedMatrix(b, loc, rhsFull);
    Value m = tl ? lhs.cols : lhs.rows;
    Value k = tl ? lhs.rows : lhs.cols;
    Value n = tr ? rhs.rows : rhs.cols;

    // Result sizes: the batch of whichever operand has one, then M, N.
    Value batchFull = lhs.batched ? lhsFull : rhsFull;
    Value batch = lhs.batched ? lhs.batch : rhs.batch;
    SmallVector<Value> sizes;
    for (int64_t i = 0; i + 2 < type.getRank(); ++i)
      sizes.push_back(dimOf(b, loc, batchFull, i));
    sizes.append({m, n});
    Value outFull = allocResult(b, loc, type, sizes);
    Value out = reshapeBuffer(b, loc, outFull, {batch, m, n});
    PointwiseChain chain;
    if (epilogue) {
      chain = *epilogue;
      chain.bind(b, loc, {batch, m, n}, /*channelDim=*/2);
    }

    Value zero = idx(b, loc, 0);
    auto lhsAt = [&](Value lb, Value mi, Value kk) {
      return tl ? SmallVector<Value>{lb, kk, mi}
                : SmallVector<Value>{lb, mi, kk};
    };
    if (!tr) {
      emitBlocks(b, loc, lhs, rhs, out, batch, m, n, k, acc, w, chain, lhsAt);
      return toTensor(b, loc, outFull);
    }

    Value rows = b.createOrFold<arith::MulIOp>(loc, batch, m);
    emitParallelRows(b, loc, rows, [&](OpBuilder &pb, Location pl, Value row) {
      SmallVector<Value> bm = delinearize(pb, pl, row, {batch, m});
      Value bi = bm[0], mi = bm[1];
      Value lb = lhs.batched ? bi : zero, rb = rhs.batched ? bi : zero;

      // transpose_rhs: rows of rhs are contiguous in k, and so are the rows
      // of a lhs that is not transposed; a transposed lhs column is read
      // element by element.
      emitFor(pb, pl, zero, n, [&](OpBuilder &nb, Location nl, Value ni) {
        Value sum = emitDot(
            nb, nl, k, w, acc,
            [&](OpBuilder &sb, Location sl, Value kk, int64_t width) {
              Value a;
              if (!tl || width == 1) {
                a = loadAs(sb, sl, lhs.buffer, lhsAt(lb, mi, kk), width, acc);
              } else {
                SmallVector<Value> elements;
                for (int64_t i = 0; i < width; ++i)
                  elements.push_back(loadAs(
                      sb, sl, lhs.buffer,
                      lhsAt(lb, mi, addi(sb, sl, kk, idx(sb, sl, i))), 1, acc));
                a = sb.create<vector::FromElementsOp>(
                    sl, VectorType::get({width}, acc), elements);
              }
              Value r = loadAs(sb, sl, rhs.buffer, {rb, ni, kk}, width, acc);
              return sb.create<arith::MulFOp>(sl, a, r).getResult();
            });
        storeAs(nb, nl, chain.apply(nb, nl, sum, {bi, mi, ni}, 1), out,
                {bi, mi, ni});
      });
    });
    return toTensor(b, loc, outFull);
  }
};

} // namespace

Value cpu::emitMatmulLoops(OpBuilder &b, MatmulOp op, Value lhs, Value rhs,
                           int64_t width, const PointwiseChain *epilogue) {
  return LowerMatmul::emit(b, op, lhs, rhs, width, epilogue);
}

void mlir::nf::populateLowerProducersToLoopsPatterns(
    RewritePatternSet &patterns, const LoopLoweringOptions &options) {
  patterns.add<LowerMatmul>(patterns.getContext(), options);
  populateLowerConvPatterns(patterns, options);
}
