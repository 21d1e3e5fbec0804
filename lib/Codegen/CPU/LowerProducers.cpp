//===- LowerProducers.cpp - matmul to loops ---------------------*- C++ -*-===//
//
// Part of normfuse. Lowers nf.matmul to loops, arithmetic in f32 (f64 for
// f64 data) with fused multiply-adds, f16/bf16 widened on load and narrowed
// once on the final store, and adds the conv patterns of LowerConvs.cpp.
//
// Parallel iterations of up to 96 rows by 32 columns walk k in blocks of
// 128. Each k block's rows of the iteration's columns of rhs are first
// packed, widened, into a contiguous panel that stays in L1 (from rhs rows
// with transpose_rhs), and 16-bit lhs rows into an f32 panel. Blocks of 3
// rows by 4 vectors of columns keep their 12 sums in registers over the k
// block, so each panel vector loaded serves 3 rows and each lhs element 32
// columns; then single rows, and the last columns in single vectors and
// scalars. Below 4 rows the blocks read rhs in place (with transpose_rhs,
// each element is a dot product of two rows contiguous in k): a panel
// costs a pass over rhs that so few rows cannot repay.
//
// An nf.fused matmul runs its pointwise epilogue (PointwiseChain.h) on the
// sums in registers before the store.
//
//===----------------------------------------------------------------------===//

#include "PointwiseChain.h"
#include "ProducerLoops.h"
#include "normfuse/Codegen/CPU/Schedule.h"
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

/// Copies the elements [lower, upper) of a row in vectors of `width`
/// lanes, then scalars: store(load(i, lanes), i).
using CopyLoad =
    llvm::function_ref<Value(OpBuilder &, Location, Value i, int64_t lanes)>;
using CopyStore =
    llvm::function_ref<void(OpBuilder &, Location, Value value, Value i)>;
void emitCopy(OpBuilder &b, Location loc, Value lower, Value upper,
              int64_t width, CopyLoad load, CopyStore store) {
  emitColumnBlocks(
      b, loc, lower, upper, width,
      [&](OpBuilder &cb, Location cl, Value j, int64_t lanes, int64_t count) {
        for (int64_t i = 0; i < count; ++i) {
          Value at = addi(cb, cl, j, idx(cb, cl, i * lanes));
          store(cb, cl, load(cb, cl, at, lanes), at);
        }
      });
}

using LhsIndices =
    llvm::function_ref<SmallVector<Value>(Value batch, Value m, Value k)>;

/// The loops of a matmul without transpose_rhs: parallel iterations of
/// kRowChunk rows by kColumnVectors vectors of columns. An iteration walks
/// k in blocks of kDepthBlock: it first copies the block's rows of its
/// columns of rhs, widened to the accumulation type, into a contiguous
/// panel (and 16-bit lhs rows into a panel of their own), then runs its
/// rows over the panel. Blocks of kRowGroup rows by up to kColumnVectors
/// vectors of columns keep their sums in registers over the k block, so
/// each panel vector loaded is used for kRowGroup rows and each lhs
/// element for all the columns; the sums carry over to the next k block in
/// a scratch tile, and after the last one go through the epilogue to the
/// result.
///
/// Without the rhs panel, the rows of a rhs with a power-of-two row stride
/// (768 or 3072 columns of f16) map to a few cache sets, so an iteration's
/// columns of rhs were evicted between row groups and read again from L3,
/// and every load was widened again for each row group. Without the lhs
/// panel, each 16-bit lhs element costs a scalar load, move, conversion and
/// broadcast in the k loop, on the vector pipes the multiply-adds need; the
/// k loop now broadcasts it straight from memory. With few rows (packRhs
/// false, rhs not transposed) neither panel is made: the k loop reads rhs
/// in place.
class MatmulBlocks {
public:
  MatmulBlocks(const MatrixView &lhs, const MatrixView &rhs, Value out,
               Type acc, int64_t width, const PointwiseChain &chain,
               LhsIndices lhsAt, bool lhsTransposed, bool rhsTransposed,
               bool packRhs)
      : lhs(lhs), rhs(rhs), out(out), acc(acc), w(width), chain(chain),
        lhsAt(lhsAt), lhsTransposed(lhsTransposed),
        rhsTransposed(rhsTransposed), packRhs(packRhs),
        packLhs(packRhs && getElementTypeOrSelf(lhs.buffer.getType()) != acc),
        rowGroup(matmulRowGroup(acc)) {
    assert((packRhs || !rhsTransposed) &&
           "a transposed rhs is read through its panel");
  }

  void emit(OpBuilder &b, Location loc, Value batch, Value m, Value n,
            Value k) {
    int64_t blockCols = w * kColumnVectors;
    Value zero = idx(b, loc, 0), one = idx(b, loc, 1);
    auto ceilDiv = [&](Value x, int64_t c) {
      return divui(b, loc, addi(b, loc, x, idx(b, loc, c - 1)), c);
    };
    Value colBlocks = ceilDiv(n, blockCols), rowChunks = ceilDiv(m, kRowChunk);
    // At least one k block, so that k == 0 still stores the (zero) sums.
    // Without panels there is nothing to block for: one block of all k.
    Value depthBlocks =
        packRhs ? maxsi(b, loc, ceilDiv(k, kDepthBlock), one) : one;
    Value iterations = b.createOrFold<arith::MulIOp>(
        loc, b.createOrFold<arith::MulIOp>(loc, batch, colBlocks), rowChunks);
    emitParallelRows(
        b, loc, iterations, [&](OpBuilder &pb, Location pl, Value iteration) {
          Iteration it;
          SmallVector<Value> r =
              delinearize(pb, pl, iteration, {batch, colBlocks, rowChunks});
          it.bi = r[0];
          it.lb = lhs.batched ? it.bi : zero;
          it.rb = rhs.batched ? it.bi : zero;
          it.j0 = muli(pb, pl, r[1], blockCols);
          it.j1 = minsi(pb, pl, addi(pb, pl, it.j0, idx(pb, pl, blockCols)), n);
          it.m0 = muli(pb, pl, r[2], kRowChunk);
          it.m1 = minsi(pb, pl, addi(pb, pl, it.m0, idx(pb, pl, kRowChunk)), m);
          auto scratch = [&](int64_t rows, int64_t cols) {
            return allocScratch(pb, pl, {idx(pb, pl, rows), idx(pb, pl, cols)},
                                acc);
          };
          if (packRhs)
            it.panel = scratch(kDepthBlock, blockCols);
          it.partial = scratch(kRowChunk, blockCols);
          if (packLhs)
            it.lhsPanel = scratch(kRowChunk, kDepthBlock);
          emitFor(pb, pl, zero, depthBlocks,
                  [&](OpBuilder &db, Location dl, Value depthBlock) {
                    it.k0 = muli(db, dl, depthBlock, kDepthBlock);
                    it.depth = packRhs ? minsi(db, dl, subi(db, dl, k, it.k0),
                                               idx(db, dl, kDepthBlock))
                                       : k;
                    it.first = db.create<arith::CmpIOp>(
                        dl, arith::CmpIPredicate::eq, depthBlock, zero);
                    it.last = db.create<arith::CmpIOp>(
                        dl, arith::CmpIPredicate::eq,
                        addi(db, dl, depthBlock, one), depthBlocks);
                    emitDepthBlock(db, dl, it);
                  });
        });
  }

private:
  /// One parallel iteration's bounds and scratch, and its current k block
  /// [k0, k0 + depth).
  struct Iteration {
    Value bi, lb, rb, j0, j1, m0, m1;
    Value panel, partial, lhsPanel;
    Value k0, depth, first, last;
  };

  /// The iteration's k block: packs the panels, then runs its rows.
  void emitDepthBlock(OpBuilder &b, Location loc, const Iteration &it) {
    if (packRhs && rhsTransposed)
      packTransposedRhsPanel(b, loc, it);
    else if (packRhs)
      packRhsPanel(b, loc, it);
    // lhsPanel[mi - m0, kk] = lhs[lb, mi, k0 + kk] for the rows [m0, m1)
    // (element by element when lhs is transposed: k is then strided).
    if (packLhs)
      emitFor(b, loc, it.m0, it.m1, [&](OpBuilder &rb, Location rl, Value mi) {
        emitCopy(
            rb, rl, it.k0, addi(rb, rl, it.k0, it.depth), lhsTransposed ? 1 : w,
            [&](OpBuilder &cb, Location cl, Value kc, int64_t lanes) {
              return loadAs(cb, cl, lhs.buffer, lhsAt(it.lb, mi, kc), lanes,
                            acc);
            },
            [&](OpBuilder &cb, Location cl, Value v, Value kc) {
              storeAs(cb, cl, v, it.lhsPanel,
                      {subi(cb, cl, mi, it.m0), subi(cb, cl, kc, it.k0)});
            });
      });
    // The iteration's rows for the columns [j, j + count * width): groups
    // of rowGroup rows, then single rows.
    emitColumnBlocks(
        b, loc, it.j0, it.j1, w,
        [&](OpBuilder &cb, Location cl, Value j, int64_t width, int64_t count) {
          Value whole = addi(
              cb, cl, it.m0,
              muli(cb, cl, divui(cb, cl, subi(cb, cl, it.m1, it.m0), rowGroup),
                   rowGroup));
          cb.create<scf::ForOp>(
              cl, it.m0, whole, idx(cb, cl, rowGroup), std::nullopt,
              [&](OpBuilder &fb, Location fl, Value mi, ValueRange) {
                emitBlock(fb, fl, it, mi, rowGroup, j, width, count);
                fb.create<scf::YieldOp>(fl);
              });
          emitFor(cb, cl, whole, it.m1,
                  [&](OpBuilder &fb, Location fl, Value mi) {
                    emitBlock(fb, fl, it, mi, 1, j, width, count);
                  });
        });
  }

  /// panel[kk, j - j0] = rhs[rb, k0 + kk, j] for the columns [j0, j1).
  void packRhsPanel(OpBuilder &b, Location loc, const Iteration &it) {
    emitFor(b, loc, idx(b, loc, 0), it.depth,
            [&](OpBuilder &kb, Location kl, Value kk) {
              Value row = addi(kb, kl, it.k0, kk);
              emitCopy(
                  kb, kl, it.j0, it.j1, w,
                  [&](OpBuilder &cb, Location cl, Value col, int64_t lanes) {
                    return loadAs(cb, cl, rhs.buffer, {it.rb, row, col}, lanes,
                                  acc);
                  },
                  [&](OpBuilder &cb, Location cl, Value v, Value col) {
                    storeAs(cb, cl, v, it.panel,
                            {kk, subi(cb, cl, col, it.j0)});
                  });
            });
  }

  /// panel[kk, j - j0] = rhs[rb, j, k0 + kk] for the columns [j0, j1) of a
  /// transposed rhs (the nn.Linear layout, weights stored (out, in)): each
  /// panel column is a contiguous run of a rhs row, loaded in vectors and
  /// stored lane by lane.
  void packTransposedRhsPanel(OpBuilder &b, Location loc, const Iteration &it) {
    emitFor(b, loc, it.j0, it.j1, [&](OpBuilder &cb, Location cl, Value col) {
      Value panelCol = subi(cb, cl, col, it.j0);
      emitCopy(
          cb, cl, it.k0, addi(cb, cl, it.k0, it.depth), w,
          [&](OpBuilder &lb, Location ll, Value kc, int64_t lanes) {
            return loadAs(lb, ll, rhs.buffer, {it.rb, col, kc}, lanes, acc);
          },
          [&](OpBuilder &sb, Location sl, Value v, Value kc) {
            Value kk = subi(sb, sl, kc, it.k0);
            auto vector = dyn_cast<VectorType>(v.getType());
            if (!vector) {
              storeAs(sb, sl, v, it.panel, {kk, panelCol});
              return;
            }
            for (int64_t l = 0; l < vector.getNumElements(); ++l)
              storeAs(sb, sl,
                      sb.create<vector::ExtractOp>(sl, v, ArrayRef<int64_t>{l}),
                      it.panel, {addi(sb, sl, kk, idx(sb, sl, l)), panelCol});
          });
    });
  }

  /// The sums of out[bi, mi0 : mi0 + rows, j : j + count * width] over the
  /// k block, in registers.
  void emitBlock(OpBuilder &b, Location loc, const Iteration &it, Value mi0,
                 int64_t rows, Value j, int64_t width, int64_t count) {
    SmallVector<Value> mis, cols;
    for (int64_t i = 0; i < rows; ++i)
      mis.push_back(addi(b, loc, mi0, idx(b, loc, i)));
    for (int64_t i = 0; i < count; ++i)
      cols.push_back(addi(b, loc, j, idx(b, loc, i * width)));
    // Where each sum is in the scratch tile (and its row in the lhs panel,
    // its column in the rhs panel).
    SmallVector<SmallVector<Value>> tileAt;
    for (Value mi : mis)
      for (Value col : cols)
        tileAt.push_back({subi(b, loc, mi, it.m0), subi(b, loc, col, it.j0)});
    auto inits = b.create<scf::IfOp>(
        loc, it.first,
        [&](OpBuilder &ib, Location il) {
          ib.create<scf::YieldOp>(
              il, SmallVector<Value>(rows * count,
                                     floatConstant(ib, il, 0.0, acc, width)));
        },
        [&](OpBuilder &ib, Location il) {
          SmallVector<Value> carried;
          for (ArrayRef<Value> at : tileAt)
            carried.push_back(loadAs(ib, il, it.partial, at, width, acc));
          ib.create<scf::YieldOp>(il, carried);
        });
    auto loop = b.create<scf::ForOp>(
        loc, idx(b, loc, 0), it.depth, idx(b, loc, 1), inits.getResults(),
        [&](OpBuilder &kb, Location kl, Value kk, ValueRange sums) {
          SmallVector<Value> as, next(sums.begin(), sums.end());
          Value kAt = addi(kb, kl, it.k0, kk);
          for (int64_t row = 0; row < rows; ++row) {
            Value a = packLhs ? loadAs(kb, kl, it.lhsPanel,
                                       {tileAt[row * count][0], kk}, 1, acc)
                              : loadAs(kb, kl, lhs.buffer,
                                       lhsAt(it.lb, mis[row], kAt), 1, acc);
            as.push_back(splat(kb, kl, a, width));
          }
          for (int64_t i = 0; i < count; ++i) {
            // Without a panel (few rows, rhs not transposed), from rhs.
            Value rv = packRhs ? loadAs(kb, kl, it.panel, {kk, tileAt[i][1]},
                                        width, acc)
                               : loadAs(kb, kl, rhs.buffer,
                                        {it.rb, kAt, cols[i]}, width, acc);
            for (int64_t row = 0; row < rows; ++row)
              next[row * count + i] = kb.create<math::FmaOp>(
                  kl, as[row], rv, sums[row * count + i]);
          }
          kb.create<scf::YieldOp>(kl, next);
        });
    b.create<scf::IfOp>(
        loc, it.last,
        [&](OpBuilder &ib, Location il) {
          for (int64_t row = 0; row < rows; ++row)
            for (int64_t i = 0; i < count; ++i) {
              SmallVector<Value> at{it.bi, mis[row], cols[i]};
              storeAs(ib, il,
                      chain.apply(ib, il, loop.getResult(row * count + i), at,
                                  width),
                      out, at);
            }
          ib.create<scf::YieldOp>(il);
        },
        [&](OpBuilder &ib, Location il) {
          for (int64_t s = 0; s < rows * count; ++s)
            storeAs(ib, il, loop.getResult(s), it.partial, tileAt[s]);
          ib.create<scf::YieldOp>(il);
        });
  }

  const MatrixView &lhs, &rhs;
  Value out;
  Type acc;
  int64_t w;
  const PointwiseChain &chain;
  LhsIndices lhsAt;
  bool lhsTransposed, rhsTransposed, packRhs, packLhs;
  int64_t rowGroup;
};

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

  /// With transpose_rhs and few rows: each output element is a dot product
  /// of two rows contiguous in k (a blocked sum), one parallel iteration
  /// per row.
  static void emitRowDots(OpBuilder &b, Location loc, const MatrixView &lhs,
                          const MatrixView &rhs, Value out, Value batch,
                          Value m, Value n, Value k, Type acc, int64_t w,
                          const PointwiseChain &chain, LhsIndices lhsAt,
                          bool tl) {
    Value zero = idx(b, loc, 0);
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

    auto lhsAt = [&](Value lb, Value mi, Value kk) {
      return tl ? SmallVector<Value>{lb, kk, mi}
                : SmallVector<Value>{lb, mi, kk};
    };
    auto packed = [&](OpBuilder &pb, Location pl) {
      MatmulBlocks(lhs, rhs, out, acc, w, chain, lhsAt, tl, tr,
                   /*packRhs=*/true)
          .emit(pb, pl, batch, m, n, k);
    };
    auto inPlace = [&](OpBuilder &pb, Location pl) {
      if (tr)
        emitRowDots(pb, pl, lhs, rhs, out, batch, m, n, k, acc, w, chain, lhsAt,
                    tl);
      else
        MatmulBlocks(lhs, rhs, out, acc, w, chain, lhsAt, tl, tr,
                     /*packRhs=*/false)
            .emit(pb, pl, batch, m, n, k);
    };
    // Few rows cannot repay packing rhs (a pass over its columns per
    // iteration): the schedule layer decides when M is static, the rows at
    // run time otherwise.
    MatmulRhs rhsChoice = selectMatmulRhs(getConstantIntValue(m));
    if (rhsChoice == MatmulRhs::InPlace) {
      inPlace(b, loc);
    } else if (rhsChoice == MatmulRhs::Packed) {
      packed(b, loc);
    } else {
      Value few = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, m,
                                          idx(b, loc, kPackMinRows));
      b.create<scf::IfOp>(
          loc, few,
          [&](OpBuilder &tb, Location tl) {
            inPlace(tb, tl);
            tb.create<scf::YieldOp>(tl);
          },
          [&](OpBuilder &eb, Location el) {
            packed(eb, el);
            eb.create<scf::YieldOp>(el);
          });
    }
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
