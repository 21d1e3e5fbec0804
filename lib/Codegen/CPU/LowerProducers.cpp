//===- LowerProducers.cpp - matmul and conv2d to loops ----------*- C++ -*-===//
//
// Part of normfuse. Lowers nf.matmul, nf.conv2d and the conv2d backward ops
// to loops: one scf.parallel iteration per row of the result, the innermost
// contiguous dimension in vectors with a scalar tail, arithmetic in f32 (f64
// for f64 data) with fused multiply-adds, f16/bf16 widened on load and
// narrowed once on the final store.
//
// - matmul without transpose_rhs: each output row is computed in blocks of
//   four vectors of columns kept in registers across the whole k loop
//   (row m of lhs scaled into rows of rhs); with transpose_rhs, each output
//   element is a dot product of two rows contiguous in k (a blocked sum).
// - conv2d NCHW, conv2d_backprop_input (both layouts) and the NHWC
//   conv2d_backprop_filter accumulate rows along a contiguous dimension
//   (rows of W in NCHW, rows of channels in NHWC): in the result row when
//   it has the accumulation type, and otherwise in tiles of 1024 f32
//   accumulators of a heap scratch with one slot per parallel chunk of
//   rows, written back narrowed. Each filter tap adds a scaled span.
// - conv2d NHWC and the NCHW conv2d_backprop_filter compute each element
//   as a sum of dot products over contiguous spans (a window row of
//   channels, or a row of W with stride 1).
// - conv2d_backprop_input gathers: a dx row takes the taps whose output
//   row oh = (ih + pad - kh * dilation) / stride is whole and in range, so
//   the parallel rows never write to the same element.
//
// An nf.fused matmul runs its pointwise epilogue (PointwiseChain.h) on the
// sums in registers before the store.
//
// Padding never turns into loads: every window is clipped to the input by
// index ranges computed per row, and strided spans are walked element by
// element (only stride 1 spans are vectorized).
//
//===----------------------------------------------------------------------===//

#include "LoopUtils.h"
#include "PointwiseChain.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;

/// Vectors of columns a matmul row keeps in registers over the k loop.
static constexpr int64_t kColumnVectors = 4;

/// Accumulators of a scratch slot (4 KiB of f32): rows longer than this
/// are accumulated tile by tile.
static constexpr int64_t kRowTile = 1024;

/// Slots of the scratch buffer of a result that is not in the accumulation
/// type: parallel chunks of rows (256 KiB of f32 in all).
static constexpr int64_t kScratchSlots = 64;

namespace {

//===----------------------------------------------------------------------===//
// Index arithmetic (folded to constants where the operands are)
//===----------------------------------------------------------------------===//

Value idx(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}
Value addi(OpBuilder &b, Location loc, Value x, Value y) {
  return b.createOrFold<arith::AddIOp>(loc, x, y);
}
Value subi(OpBuilder &b, Location loc, Value x, Value y) {
  return b.createOrFold<arith::SubIOp>(loc, x, y);
}
Value muli(OpBuilder &b, Location loc, Value x, int64_t c) {
  return c == 1 ? x : b.createOrFold<arith::MulIOp>(loc, x, idx(b, loc, c));
}
Value maxsi(OpBuilder &b, Location loc, Value x, Value y) {
  return b.createOrFold<arith::MaxSIOp>(loc, x, y);
}
Value minsi(OpBuilder &b, Location loc, Value x, Value y) {
  return b.createOrFold<arith::MinSIOp>(loc, x, y);
}
/// x / c for x >= 0.
Value divui(OpBuilder &b, Location loc, Value x, int64_t c) {
  return c == 1 ? x : b.createOrFold<arith::DivUIOp>(loc, x, idx(b, loc, c));
}

/// Size `i` of `buffer` as an index value (a constant when static).
Value dimOf(OpBuilder &b, Location loc, Value buffer, int64_t i) {
  return getNumElements(b, loc, buffer, i, i + 1);
}

/// The row-major indices of `linear` in a space of `sizes`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<Value> sizes) {
  SmallVector<Value> indices(sizes.size());
  for (int64_t i = sizes.size() - 1; i > 0; --i) {
    indices[i] = b.create<arith::RemUIOp>(loc, linear, sizes[i]);
    linear = b.create<arith::DivUIOp>(loc, linear, sizes[i]);
  }
  indices[0] = linear;
  return indices;
}

/// A range [lo, hi) of indices with hi >= lo.
struct Range {
  Value lo, hi;
};

/// The j in [lo, hi) with j * stride + offset in [begin, end). `lo` must be
/// non-negative: numerators below zero are then clamped to zero without
/// changing the result, and the divisions are of non-negative values.
Range stridedRange(OpBuilder &b, Location loc, Value begin, Value end,
                   int64_t stride, Value offset, Value lo, Value hi) {
  Value zero = idx(b, loc, 0);
  auto ceilDiv = [&](Value x) {
    x = maxsi(b, loc, x, zero);
    return divui(b, loc, addi(b, loc, x, idx(b, loc, stride - 1)), stride);
  };
  Value first = maxsi(b, loc, lo, ceilDiv(subi(b, loc, begin, offset)));
  Value last = minsi(b, loc, hi, ceilDiv(subi(b, loc, end, offset)));
  return {first, maxsi(b, loc, last, first)};
}

/// The j in [0, hi) with base - j * stride in [0, end), for base >= 0.
Range reverseRange(OpBuilder &b, Location loc, Value end, int64_t stride,
                   Value base, Value hi) {
  Value zero = idx(b, loc, 0);
  Value s = idx(b, loc, stride);
  // j * stride <= base  <=>  j < floor(base / stride) + 1.
  Value last =
      minsi(b, loc, hi,
            divui(b, loc, maxsi(b, loc, addi(b, loc, base, s), zero), stride));
  // j * stride > base - end  <=>  j >= ceil((base - end + 1) / stride).
  Value x = maxsi(b, loc, subi(b, loc, addi(b, loc, base, idx(b, loc, 1)), end),
                  zero);
  Value first = divui(b, loc, addi(b, loc, x, idx(b, loc, stride - 1)), stride);
  return {first, maxsi(b, loc, last, first)};
}

//===----------------------------------------------------------------------===//
// Loop building blocks
//===----------------------------------------------------------------------===//

using IndexBody = llvm::function_ref<void(OpBuilder &, Location, Value)>;

/// for i in [lower, upper) step 1.
void emitFor(OpBuilder &b, Location loc, Value lower, Value upper,
             IndexBody body) {
  b.create<scf::ForOp>(loc, lower, upper, idx(b, loc, 1), std::nullopt,
                       [&](OpBuilder &fb, Location fl, Value i, ValueRange) {
                         body(fb, fl, i);
                         fb.create<scf::YieldOp>(fl);
                       });
}

using SumBody =
    llvm::function_ref<Value(OpBuilder &, Location, Value i, Value sum)>;

/// sum = init; for i in [lower, upper): sum = body(i, sum); returns sum.
Value emitSumFor(OpBuilder &b, Location loc, Value lower, Value upper,
                 Value init, SumBody body) {
  auto loop = b.create<scf::ForOp>(
      loc, lower, upper, idx(b, loc, 1), ValueRange{init},
      [&](OpBuilder &fb, Location fl, Value i, ValueRange sum) {
        fb.create<scf::YieldOp>(fl, body(fb, fl, i, sum[0]));
      });
  return loop.getResult(0);
}

/// Runs `body` where `t` is a multiple of `stride` (always for stride 1),
/// with t / stride; `t` must be non-negative.
void ifDivisible(OpBuilder &b, Location loc, Value t, int64_t stride,
                 IndexBody body) {
  if (stride == 1)
    return body(b, loc, t);
  Value rem = b.create<arith::RemUIOp>(loc, t, idx(b, loc, stride));
  Value divisible = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, rem,
                                            idx(b, loc, 0));
  b.create<scf::IfOp>(loc, divisible, [&](OpBuilder &ib, Location il) {
    body(ib, il, divui(ib, il, t, stride));
    ib.create<scf::YieldOp>(il);
  });
}

/// The sum over j in [0, n) of `term`, accumulated in `acc`: vectors of
/// `width` lanes where the term's elements are contiguous (width > 1).
Value emitDot(OpBuilder &b, Location loc, Value n, int64_t width, Type acc,
              SumTerm term) {
  return emitBlockedSum(b, loc, n, width, acc, term);
}

/// A row of accumulators in the accumulation type, addressed by the index
/// of the element in the result row: either the result row itself (when
/// the result has the accumulation type) or a scratch slot holding the
/// elements [base, base + kRowTile) of the row.
struct AccRow {
  Value buffer;
  SmallVector<Value> prefix; // leading indices of the row (or slot)
  Value base;                // first element of the tile, null in place
  Type type;

  SmallVector<Value> at(OpBuilder &b, Location loc, Value j) const {
    SmallVector<Value> indices(prefix);
    indices.push_back(base ? b.create<arith::SubIOp>(loc, j, base) : j);
    return indices;
  }

  /// acc[j, j + width) += a * v, with `a` and `v` of `width` lanes.
  void fma(OpBuilder &b, Location loc, Value j, int64_t width, Value a,
           Value v) const {
    SmallVector<Value> indices = at(b, loc, j);
    Value sum = b.create<math::FmaOp>(
        loc, a, v, loadAs(b, loc, buffer, indices, width, type));
    storeAs(b, loc, sum, buffer, indices);
  }
};

/// Where a row accumulates when the result does not have the accumulation
/// type: slot `slot` of a (kScratchSlots, kRowTile) buffer. Null buffer:
/// in the result row itself.
struct RowScratch {
  Value buffer, slot;
};

/// A body run once per row with the row's scratch.
using ScratchRowBody =
    llvm::function_ref<void(OpBuilder &, Location, Value row, RowScratch)>;

/// Runs `body` for rows [0, rows) in parallel. Rows of a result `out` in
/// the accumulation type accumulate in place, one scf.parallel iteration
/// per row. Otherwise the rows are split into kScratchSlots contiguous
/// chunks, one scf.parallel iteration each, and a chunk's rows accumulate
/// one after the other in the chunk's slot of a heap buffer. (A stack
/// tile per row would be simpler, but scf.parallel and scf.for are
/// allocation scopes that canonicalization relies on while the sequential
/// lowering to cf does not release allocas per iteration: the stack would
/// grow with every row.)
void emitParallelAccumulatedRows(OpBuilder &b, Location loc, Value rows,
                                 Value out, Type acc, ScratchRowBody body) {
  if (cast<MemRefType>(out.getType()).getElementType() == acc) {
    emitParallelRows(b, loc, rows, [&](OpBuilder &pb, Location pl, Value row) {
      body(pb, pl, row, RowScratch());
    });
    return;
  }
  Value scratch = b.create<memref::AllocOp>(
      loc, MemRefType::get({kScratchSlots, kRowTile}, acc),
      b.getI64IntegerAttr(64));
  Value chunk =
      divui(b, loc, addi(b, loc, rows, idx(b, loc, kScratchSlots - 1)),
            kScratchSlots);
  emitParallelRows(b, loc, idx(b, loc, kScratchSlots),
                   [&](OpBuilder &pb, Location pl, Value slot) {
                     Value first = pb.create<arith::MulIOp>(pl, slot, chunk);
                     Value last = pb.create<arith::MinUIOp>(
                         pl, pb.create<arith::AddIOp>(pl, first, chunk), rows);
                     emitFor(pb, pl, first, last,
                             [&](OpBuilder &rb, Location rl, Value row) {
                               body(rb, rl, row, RowScratch{scratch, slot});
                             });
                   });
}

/// Adds into the accumulators of the row elements [begin, end), which start
/// at zero.
using RowTileBody = llvm::function_ref<void(OpBuilder &, Location,
                                            const AccRow &, Value, Value)>;

/// Computes out[prefix..., 0:len) by accumulation: `body` runs on zeroed
/// accumulators, once for the whole row in place or once per tile of
/// kRowTile elements in `scratch`, whose values are then stored narrowed.
void emitAccumulatedRow(OpBuilder &b, Location loc, Value out,
                        ValueRange prefix, Value len, Type acc, int64_t width,
                        RowScratch scratch, RowTileBody body) {
  auto zeroFill = [&](OpBuilder &zb, Location zl, const AccRow &row,
                      Value begin, Value end) {
    emitVectorLoop(zb, zl, begin, end, width,
                   [&](OpBuilder &lb, Location ll, Value j, int64_t w) {
                     storeAs(lb, ll, floatConstant(lb, ll, 0.0, acc, w),
                             row.buffer, row.at(lb, ll, j));
                   });
  };
  Value zero = idx(b, loc, 0);
  if (!scratch.buffer) {
    AccRow row{out, SmallVector<Value>(prefix), Value(), acc};
    zeroFill(b, loc, row, zero, len);
    body(b, loc, row, zero, len);
    return;
  }
  Value step = idx(b, loc, kRowTile);
  b.create<scf::ForOp>(
      loc, zero, len, step, std::nullopt,
      [&](OpBuilder &tb, Location tl, Value begin, ValueRange) {
        Value end = tb.create<arith::MinUIOp>(
            tl, tb.create<arith::AddIOp>(tl, begin, step), len);
        AccRow row{scratch.buffer, {scratch.slot}, begin, acc};
        zeroFill(tb, tl, row, begin, end);
        body(tb, tl, row, begin, end);
        emitVectorLoop(
            tb, tl, begin, end, width,
            [&](OpBuilder &lb, Location ll, Value j, int64_t w) {
              SmallVector<Value> indices(prefix);
              indices.push_back(j);
              storeAs(lb, ll,
                      loadAs(lb, ll, row.buffer, row.at(lb, ll, j), w, acc),
                      out, indices);
            });
        tb.create<scf::YieldOp>(tl);
      });
}

/// Allocates the result buffer of `type`; `sizes` gives every dimension
/// (only the dynamic ones are used).
Value allocResult(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<Value> sizes) {
  SmallVector<Value> dynamicSizes;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dynamicSizes.push_back(sizes[i]);
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  return b.create<memref::AllocOp>(loc, memrefType, dynamicSizes,
                                   b.getI64IntegerAttr(64));
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

/// Visits columns [0, upper) in blocks of `count` vectors of `width` lanes:
/// blocks of kColumnVectors vectors, then single vectors, then scalars.
using ColumnBlockBody = llvm::function_ref<void(OpBuilder &, Location, Value j,
                                                int64_t width, int64_t count)>;
void emitColumnBlocks(OpBuilder &b, Location loc, Value upper, int64_t width,
                      ColumnBlockBody body) {
  SmallVector<std::pair<int64_t, int64_t>> phases;
  if (width > 1)
    phases = {{width, kColumnVectors}, {width, 1}};
  phases.push_back({1, 1});
  Value start = idx(b, loc, 0);
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
    Value rows = b.createOrFold<arith::MulIOp>(loc, batch, m);
    emitParallelRows(b, loc, rows, [&](OpBuilder &pb, Location pl, Value row) {
      SmallVector<Value> bm = delinearize(pb, pl, row, {batch, m});
      Value bi = bm[0], mi = bm[1];
      Value lb = lhs.batched ? bi : zero, rb = rhs.batched ? bi : zero;
      auto lhsAt = [&](Value kk) {
        return tl ? SmallVector<Value>{lb, kk, mi}
                  : SmallVector<Value>{lb, mi, kk};
      };

      if (!tr) {
        // out[b, m, j:j+count*width] in registers over the whole k loop.
        emitColumnBlocks(
            pb, pl, n, w,
            [&](OpBuilder &cb, Location cl, Value j, int64_t width,
                int64_t count) {
              SmallVector<Value> cols;
              for (int64_t i = 0; i < count; ++i)
                cols.push_back(addi(cb, cl, j, idx(cb, cl, i * width)));
              SmallVector<Value> inits(count,
                                       floatConstant(cb, cl, 0.0, acc, width));
              auto loop = cb.create<scf::ForOp>(
                  cl, zero, k, idx(cb, cl, 1), inits,
                  [&](OpBuilder &kb, Location kl, Value kk, ValueRange sums) {
                    Value a = splat(
                        kb, kl, loadAs(kb, kl, lhs.buffer, lhsAt(kk), 1, acc),
                        width);
                    SmallVector<Value> next;
                    for (int64_t i = 0; i < count; ++i) {
                      Value r = loadAs(kb, kl, rhs.buffer, {rb, kk, cols[i]},
                                       width, acc);
                      next.push_back(kb.create<math::FmaOp>(kl, a, r, sums[i]));
                    }
                    kb.create<scf::YieldOp>(kl, next);
                  });
              for (int64_t i = 0; i < count; ++i)
                storeAs(cb, cl,
                        chain.apply(cb, cl, loop.getResult(i),
                                    {bi, mi, cols[i]}, width),
                        out, {bi, mi, cols[i]});
            });
        return;
      }

      // transpose_rhs: rows of rhs are contiguous in k, and so are the rows
      // of a lhs that is not transposed; a transposed lhs column is read
      // element by element.
      emitFor(pb, pl, zero, n, [&](OpBuilder &nb, Location nl, Value ni) {
        Value sum = emitDot(
            nb, nl, k, w, acc,
            [&](OpBuilder &sb, Location sl, Value kk, int64_t width) {
              Value a;
              if (!tl || width == 1) {
                a = loadAs(sb, sl, lhs.buffer, lhsAt(kk), width, acc);
              } else {
                SmallVector<Value> elements;
                for (int64_t i = 0; i < width; ++i)
                  elements.push_back(
                      loadAs(sb, sl, lhs.buffer,
                             lhsAt(addi(sb, sl, kk, idx(sb, sl, i))), 1, acc));
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

//===----------------------------------------------------------------------===//
// conv2d and its gradients
//===----------------------------------------------------------------------===//

/// The attributes of a conv op and the index order of its layout.
struct ConvParams {
  bool nchw;
  int64_t stride[2], dilation[2], padBefore[2], padAfter[2];

  template <typename ConvOp> static ConvParams get(ConvOp op) {
    ConvParams p;
    p.nchw = op.getLayout() == Layout::NCHW;
    for (int d = 0; d < 2; ++d) {
      p.stride[d] = op.getStrides()[d];
      p.dilation[d] = op.getDilations()[d];
      p.padBefore[d] = op.getPadding()[2 * d];
      p.padAfter[d] = op.getPadding()[2 * d + 1];
    }
    return p;
  }

  /// Dimensions of (batch, channel, h, w) in an activation.
  int64_t channelDim() const { return nchw ? 1 : 3; }
  int64_t spatialDim(int d) const { return (nchw ? 2 : 1) + d; }

  /// Indices of an activation (input or output) element.
  SmallVector<Value> act(Value n, Value c, Value h, Value w) const {
    if (nchw)
      return {n, c, h, w};
    return {n, h, w, c};
  }
  /// Indices of a filter element (OIHW or OHWI).
  SmallVector<Value> filter(Value o, Value i, Value kh, Value kw) const {
    if (nchw)
      return {o, i, kh, kw};
    return {o, kh, kw, i};
  }
};

/// Every size of a conv as index values: batch, input channels, output
/// channels, input, filter and output spatial sizes.
struct ConvSizes {
  Value n, c, o, in[2], k[2], out[2];
};

/// Sizes of a conv2d whose operands are the buffers `x` and `w` and whose
/// result has `type` (output sizes from the shape rule where dynamic).
ConvSizes convForwardSizes(OpBuilder &b, Location loc, const ConvParams &p,
                           Value x, Value w, RankedTensorType type) {
  ConvSizes s;
  s.n = dimOf(b, loc, x, 0);
  s.c = dimOf(b, loc, x, p.channelDim());
  s.o = dimOf(b, loc, w, 0);
  for (int d = 0; d < 2; ++d) {
    s.in[d] = dimOf(b, loc, x, p.spatialDim(d));
    s.k[d] = dimOf(b, loc, w, p.spatialDim(d));
    int64_t static_ = type.getDimSize(p.spatialDim(d));
    if (!ShapedType::isDynamic(static_)) {
      s.out[d] = idx(b, loc, static_);
      continue;
    }
    // (in + pads - dilation * (k - 1) - 1) / stride + 1
    Value padded =
        addi(b, loc, s.in[d], idx(b, loc, p.padBefore[d] + p.padAfter[d] - 1));
    Value span =
        muli(b, loc, subi(b, loc, s.k[d], idx(b, loc, 1)), p.dilation[d]);
    Value room = maxsi(b, loc, subi(b, loc, padded, span), idx(b, loc, 0));
    s.out[d] = addi(b, loc, divui(b, loc, room, p.stride[d]), idx(b, loc, 1));
  }
  return s;
}

/// The sizes of the result of a conv op, in its layout.
SmallVector<Value> activationSizes(const ConvParams &p, Value n, Value c,
                                   const Value hw[2]) {
  return p.act(n, c, hw[0], hw[1]);
}

/// y[n, o, oh, ow] = sum_{c, kh, kw} x[n, c, ih, iw] * w[o, c, kh, kw],
/// ih = oh * stride - pad_top + kh * dilation (and the same for iw).
struct LowerConv2D : LoopLoweringPattern<Conv2DOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(Conv2DOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, emit(rewriter, op, adaptor.getInput(),
                                adaptor.getFilter(), options.vectorWidth,
                                /*epilogue=*/nullptr));
    return success();
  }

  /// The loops, from the operands' tensors; `epilogue` (may be null; NHWC
  /// only) runs on each output before it is stored. Returns the result.
  static Value emit(OpBuilder &b, Conv2DOp op, Value input, Value filter,
                    int64_t vw, const PointwiseChain *epilogue) {
    Location loc = op.getLoc();
    ConvParams p = ConvParams::get(op);
    Type acc = getAccumulationType(getElementTypeOrSelf(op.getInput()));
    Value x = getBuffer(b, loc, input);
    Value w = getBuffer(b, loc, filter);
    ConvSizes s = convForwardSizes(b, loc, p, x, w, op.getType());
    Value y =
        allocResult(b, loc, op.getType(), activationSizes(p, s.n, s.o, s.out));
    Value zero = idx(b, loc, 0);
    int64_t sh = p.stride[0], sw = p.stride[1];
    int64_t dh = p.dilation[0], dw = p.dilation[1];

    assert((!epilogue || !p.nchw) && "a conv epilogue needs NHWC");
    PointwiseChain chain;
    if (epilogue) {
      chain = *epilogue;
      chain.bind(b, loc, {s.n, s.out[0], s.out[1], s.o}, /*channelDim=*/3);
    }
    if (p.nchw) {
      // Rows (n, o, oh) of OW outputs; the filter taps (c, kh, kw) each
      // add a scaled span of an input row.
      Value rows = b.createOrFold<arith::MulIOp>(
          loc, b.createOrFold<arith::MulIOp>(loc, s.n, s.o), s.out[0]);
      emitParallelAccumulatedRows(
          b, loc, rows, y, acc,
          [&](OpBuilder &pb, Location pl, Value row, RowScratch scratch) {
            SmallVector<Value> r =
                delinearize(pb, pl, row, {s.n, s.o, s.out[0]});
            Value n = r[0], o = r[1], oh = r[2];
            Value offH =
                subi(pb, pl, muli(pb, pl, oh, sh), idx(pb, pl, p.padBefore[0]));
            Range khs =
                stridedRange(pb, pl, zero, s.in[0], dh, offH, zero, s.k[0]);
            emitAccumulatedRow(
                pb, pl, y, {n, o, oh}, s.out[1], acc, vw, scratch,
                [&](OpBuilder &ab, Location al, const AccRow &accRow,
                    Value begin, Value end) {
                  emitFor(
                      ab, al, zero, s.c,
                      [&](OpBuilder &cb, Location cl, Value c) {
                        emitFor(
                            cb, cl, khs.lo, khs.hi,
                            [&](OpBuilder &hb, Location hl, Value kh) {
                              Value ih =
                                  addi(hb, hl, muli(hb, hl, kh, dh), offH);
                              emitFor(
                                  hb, hl, zero, s.k[1],
                                  [&](OpBuilder &kb, Location kl, Value kw) {
                                    Value offW =
                                        subi(kb, kl, muli(kb, kl, kw, dw),
                                             idx(kb, kl, p.padBefore[1]));
                                    Range ows =
                                        stridedRange(kb, kl, zero, s.in[1], sw,
                                                     offW, begin, end);
                                    Value a = loadAs(kb, kl, w, {o, c, kh, kw},
                                                     1, acc);
                                    emitVectorLoop(
                                        kb, kl, ows.lo, ows.hi,
                                        sw == 1 ? vw : 1,
                                        [&](OpBuilder &lb, Location ll,
                                            Value ow, int64_t width) {
                                          Value iw =
                                              addi(lb, ll, muli(lb, ll, ow, sw),
                                                   offW);
                                          Value v =
                                              loadAs(lb, ll, x, {n, c, ih, iw},
                                                     width, acc);
                                          accRow.fma(lb, ll, ow, width,
                                                     splat(lb, ll, a, width),
                                                     v);
                                        });
                                  });
                            });
                      });
                });
          });
    } else {
      // Rows (n, oh, ow) of O outputs, each a dot product over the window's
      // channels: (kw, c) is one contiguous span of input and filter when
      // the dilation along w is 1.
      Value x3 = reshapeBuffer(
          b, loc, x,
          {s.n, s.in[0], b.createOrFold<arith::MulIOp>(loc, s.in[1], s.c)});
      Value w3 = reshapeBuffer(
          b, loc, w,
          {s.o, s.k[0], b.createOrFold<arith::MulIOp>(loc, s.k[1], s.c)});
      Value rows = b.createOrFold<arith::MulIOp>(
          loc, b.createOrFold<arith::MulIOp>(loc, s.n, s.out[0]), s.out[1]);
      emitParallelRows(
          b, loc, rows, [&](OpBuilder &pb, Location pl, Value row) {
            SmallVector<Value> r =
                delinearize(pb, pl, row, {s.n, s.out[0], s.out[1]});
            Value n = r[0], oh = r[1], ow = r[2];
            Value offH =
                subi(pb, pl, muli(pb, pl, oh, sh), idx(pb, pl, p.padBefore[0]));
            Value offW =
                subi(pb, pl, muli(pb, pl, ow, sw), idx(pb, pl, p.padBefore[1]));
            Range khs =
                stridedRange(pb, pl, zero, s.in[0], dh, offH, zero, s.k[0]);
            Range kws =
                stridedRange(pb, pl, zero, s.in[1], dw, offW, zero, s.k[1]);
            Value init = floatConstant(pb, pl, 0.0, acc, 1);
            // The dot product of input and filter over `len` elements from
            // (x3[n, ih, xAt], w3[o, kh, wAt]).
            auto spanDot = [&](OpBuilder &db, Location dl, Value o, Value ih,
                               Value kh, Value xAt, Value wAt, Value len) {
              return emitDot(
                  db, dl, len, vw, acc,
                  [&](OpBuilder &sb, Location sl, Value j, int64_t width) {
                    Value xv = loadAs(sb, sl, x3, {n, ih, addi(sb, sl, xAt, j)},
                                      width, acc);
                    Value wv = loadAs(sb, sl, w3, {o, kh, addi(sb, sl, wAt, j)},
                                      width, acc);
                    return sb.create<arith::MulFOp>(sl, xv, wv).getResult();
                  });
            };
            emitFor(
                pb, pl, zero, s.o, [&](OpBuilder &ob, Location ol, Value o) {
                  Value sum = emitSumFor(
                      ob, ol, khs.lo, khs.hi, init,
                      [&](OpBuilder &hb, Location hl, Value kh,
                          Value sumH) -> Value {
                        Value ih = addi(hb, hl, muli(hb, hl, kh, dh), offH);
                        if (dw == 1) {
                          Value iwLo = addi(hb, hl, kws.lo, offW);
                          Value len = hb.createOrFold<arith::MulIOp>(
                              hl, subi(hb, hl, kws.hi, kws.lo), s.c);
                          Value d = spanDot(
                              hb, hl, o, ih, kh,
                              hb.createOrFold<arith::MulIOp>(hl, iwLo, s.c),
                              hb.createOrFold<arith::MulIOp>(hl, kws.lo, s.c),
                              len);
                          return hb.create<arith::AddFOp>(hl, sumH, d);
                        }
                        return emitSumFor(
                            hb, hl, kws.lo, kws.hi, sumH,
                            [&](OpBuilder &kb, Location kl, Value kw,
                                Value sumW) -> Value {
                              Value iw =
                                  addi(kb, kl, muli(kb, kl, kw, dw), offW);
                              Value d = spanDot(
                                  kb, kl, o, ih, kh,
                                  kb.createOrFold<arith::MulIOp>(kl, iw, s.c),
                                  kb.createOrFold<arith::MulIOp>(kl, kw, s.c),
                                  s.c);
                              return kb.create<arith::AddFOp>(kl, sumW, d);
                            });
                      });
                  storeAs(ob, ol, chain.apply(ob, ol, sum, {n, oh, ow, o}, 1),
                          y, {n, oh, ow, o});
                });
          });
    }
    return toTensor(b, loc, y);
  }
};

/// dx[n, c, ih, iw] = sum over the (oh, kh) with oh * stride - pad_top +
/// kh * dilation = ih (and the same along w) and over o of
/// dy[n, o, oh, ow] * w[o, c, kh, kw]. Each row of dx gathers its terms,
/// so rows are independent.
struct LowerConv2DBackpropInput : LoopLoweringPattern<Conv2DBackpropInputOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(Conv2DBackpropInputOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    ConvParams p = ConvParams::get(op);
    RankedTensorType type = op.getType();
    Type acc = getAccumulationType(getElementTypeOrSelf(op.getGradOutput()));
    int64_t vw = options.vectorWidth;
    Value dy = getBuffer(b, loc, adaptor.getGradOutput());
    Value w = getBuffer(b, loc, adaptor.getFilter());
    Value zero = idx(b, loc, 0);

    ConvSizes s;
    s.n = dimOf(b, loc, dy, 0);
    s.o = dimOf(b, loc, dy, p.channelDim());
    s.c = dimOf(b, loc, w, p.nchw ? 1 : 3);
    for (int d = 0; d < 2; ++d) {
      s.out[d] = dimOf(b, loc, dy, p.spatialDim(d));
      s.k[d] = dimOf(b, loc, w, p.spatialDim(d));
      int64_t static_ = type.getDimSize(p.spatialDim(d));
      if (!ShapedType::isDynamic(static_)) {
        s.in[d] = idx(b, loc, static_);
        continue;
      }
      // Dynamic: the smallest input with this output size,
      // (out - 1) * stride + dilation * (k - 1) + 1 - pads.
      Value extent =
          muli(b, loc, subi(b, loc, s.out[d], idx(b, loc, 1)), p.stride[d]);
      extent = addi(
          b, loc, extent,
          muli(b, loc, subi(b, loc, s.k[d], idx(b, loc, 1)), p.dilation[d]));
      s.in[d] = maxsi(
          b, loc,
          subi(b, loc, extent, idx(b, loc, p.padBefore[d] + p.padAfter[d] - 1)),
          zero);
    }
    Value dx = allocResult(b, loc, type, activationSizes(p, s.n, s.c, s.in));
    int64_t sh = p.stride[0], sw = p.stride[1];
    int64_t dh = p.dilation[0], dw = p.dilation[1];

    // The kh (of [0, KH)) whose output row oh = (i + pad - kh * dilation)
    // / stride lies in [0, OH): i + pad - kh * dilation in
    // [0, (OH - 1) * stride + 1); divisibility is checked separately.
    auto tapRange = [&](OpBuilder &rb, Location rl, Value base, int d) {
      Value reach = addi(
          rb, rl,
          muli(rb, rl, subi(rb, rl, s.out[d], idx(rb, rl, 1)), p.stride[d]),
          idx(rb, rl, 1));
      return reverseRange(rb, rl, reach, p.dilation[d], base, s.k[d]);
    };

    if (p.nchw) {
      // Rows (n, c, ih) of W elements; for each tap (kh, o, kw), a span of
      // the dy row adds into the dx row (every stride-th element).
      Value rows = b.createOrFold<arith::MulIOp>(
          loc, b.createOrFold<arith::MulIOp>(loc, s.n, s.c), s.in[0]);
      emitParallelAccumulatedRows(
          b, loc, rows, dx, acc,
          [&](OpBuilder &pb, Location pl, Value row, RowScratch scratch) {
            SmallVector<Value> r =
                delinearize(pb, pl, row, {s.n, s.c, s.in[0]});
            Value n = r[0], c = r[1], ih = r[2];
            Value baseH = addi(pb, pl, ih, idx(pb, pl, p.padBefore[0]));
            Range khs = tapRange(pb, pl, baseH, 0);
            emitAccumulatedRow(
                pb, pl, dx, {n, c, ih}, s.in[1], acc, vw, scratch,
                [&](OpBuilder &ab, Location al, const AccRow &accRow,
                    Value begin, Value end) {
                  emitFor(
                      ab, al, khs.lo, khs.hi,
                      [&](OpBuilder &hb, Location hl, Value kh) {
                        Value t = subi(hb, hl, baseH, muli(hb, hl, kh, dh));
                        ifDivisible(
                            hb, hl, t, sh,
                            [&](OpBuilder &db, Location dl, Value oh) {
                              emitFor(
                                  db, dl, zero, s.o,
                                  [&](OpBuilder &ob, Location ol, Value o) {
                                    emitFor(
                                        ob, ol, zero, s.k[1],
                                        [&](OpBuilder &kb, Location kl,
                                            Value kw) {
                                          // dx[iw] += w * dy[ow] for iw = ow *
                                          // sw + offW.
                                          Value offW =
                                              subi(kb, kl, muli(kb, kl, kw, dw),
                                                   idx(kb, kl, p.padBefore[1]));
                                          Range ows = stridedRange(
                                              kb, kl, begin, end, sw, offW,
                                              zero, s.out[1]);
                                          Value a =
                                              loadAs(kb, kl, w, {o, c, kh, kw},
                                                     1, acc);
                                          emitVectorLoop(
                                              kb, kl, ows.lo, ows.hi,
                                              sw == 1 ? vw : 1,
                                              [&](OpBuilder &lb, Location ll,
                                                  Value ow, int64_t width) {
                                                Value iw = addi(
                                                    lb, ll,
                                                    muli(lb, ll, ow, sw), offW);
                                                Value v = loadAs(lb, ll, dy,
                                                                 {n, o, oh, ow},
                                                                 width, acc);
                                                accRow.fma(
                                                    lb, ll, iw, width,
                                                    splat(lb, ll, a, width), v);
                                              });
                                        });
                                  });
                            });
                      });
                });
          });
    } else {
      // Rows (n, ih, iw) of C elements; each tap (kh, kw) and output
      // channel o adds dy[n, oh, ow, o] times a filter row of channels.
      Value rows = b.createOrFold<arith::MulIOp>(
          loc, b.createOrFold<arith::MulIOp>(loc, s.n, s.in[0]), s.in[1]);
      emitParallelAccumulatedRows(
          b, loc, rows, dx, acc,
          [&](OpBuilder &pb, Location pl, Value row, RowScratch scratch) {
            SmallVector<Value> r =
                delinearize(pb, pl, row, {s.n, s.in[0], s.in[1]});
            Value n = r[0], ih = r[1], iw = r[2];
            Value baseH = addi(pb, pl, ih, idx(pb, pl, p.padBefore[0]));
            Value baseW = addi(pb, pl, iw, idx(pb, pl, p.padBefore[1]));
            Range khs = tapRange(pb, pl, baseH, 0);
            Range kws = tapRange(pb, pl, baseW, 1);
            emitAccumulatedRow(
                pb, pl, dx, {n, ih, iw}, s.c, acc, vw, scratch,
                [&](OpBuilder &ab, Location al, const AccRow &accRow,
                    Value begin, Value end) {
                  emitFor(
                      ab, al, khs.lo, khs.hi,
                      [&](OpBuilder &hb, Location hl, Value kh) {
                        Value t = subi(hb, hl, baseH, muli(hb, hl, kh, dh));
                        ifDivisible(
                            hb, hl, t, sh,
                            [&](OpBuilder &db, Location dl, Value oh) {
                              emitFor(
                                  db, dl, kws.lo, kws.hi,
                                  [&](OpBuilder &kb, Location kl, Value kw) {
                                    Value u = subi(kb, kl, baseW,
                                                   muli(kb, kl, kw, dw));
                                    ifDivisible(
                                        kb, kl, u, sw,
                                        [&](OpBuilder &eb, Location el,
                                            Value ow) {
                                          emitFor(
                                              eb, el, zero, s.o,
                                              [&](OpBuilder &ob, Location ol,
                                                  Value o) {
                                                Value a = loadAs(ob, ol, dy,
                                                                 {n, oh, ow, o},
                                                                 1, acc);
                                                emitVectorLoop(
                                                    ob, ol, begin, end, vw,
                                                    [&](OpBuilder &lb,
                                                        Location ll, Value c,
                                                        int64_t width) {
                                                      Value v =
                                                          loadAs(lb, ll, w,
                                                                 {o, kh, kw, c},
                                                                 width, acc);
                                                      accRow.fma(
                                                          lb, ll, c, width,
                                                          splat(lb, ll, a,
                                                                width),
                                                          v);
                                                    });
                                              });
                                        });
                                  });
                            });
                      });
                });
          });
    }
    rewriter.replaceOp(op, toTensor(b, loc, dx));
    return success();
  }
};

/// dw[o, c, kh, kw] = sum_{n, oh, ow} dy[n, o, oh, ow] * x[n, c, ih, iw],
/// ih = oh * stride - pad_top + kh * dilation (and the same for iw): a
/// convolution of x with dy.
struct LowerConv2DBackpropFilter : LoopLoweringPattern<Conv2DBackpropFilterOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(Conv2DBackpropFilterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    ConvParams p = ConvParams::get(op);
    RankedTensorType type = op.getType();
    Type acc = getAccumulationType(getElementTypeOrSelf(op.getInput()));
    int64_t vw = options.vectorWidth;
    Value x = getBuffer(b, loc, adaptor.getInput());
    Value dy = getBuffer(b, loc, adaptor.getGradOutput());
    Value zero = idx(b, loc, 0);

    ConvSizes s;
    s.n = dimOf(b, loc, x, 0);
    s.c = dimOf(b, loc, x, p.channelDim());
    s.o = dimOf(b, loc, dy, p.channelDim());
    for (int d = 0; d < 2; ++d) {
      s.in[d] = dimOf(b, loc, x, p.spatialDim(d));
      s.out[d] = dimOf(b, loc, dy, p.spatialDim(d));
      int64_t static_ = type.getDimSize(p.spatialDim(d));
      if (!ShapedType::isDynamic(static_)) {
        s.k[d] = idx(b, loc, static_);
        continue;
      }
      // Dynamic: the largest filter with this output size,
      // (in + pads - 1 - (out - 1) * stride) / dilation + 1.
      Value room = addi(b, loc, s.in[d],
                        idx(b, loc, p.padBefore[d] + p.padAfter[d] - 1));
      room = subi(
          b, loc, room,
          muli(b, loc, subi(b, loc, s.out[d], idx(b, loc, 1)), p.stride[d]));
      s.k[d] =
          addi(b, loc, divui(b, loc, maxsi(b, loc, room, zero), p.dilation[d]),
               idx(b, loc, 1));
    }
    SmallVector<Value> sizes =
        p.filter(s.o, s.c, s.k[0], s.k[1]); // OIHW or OHWI
    Value dw = allocResult(b, loc, type, sizes);
    int64_t sh = p.stride[0], sw = p.stride[1];

    // The offset k * dilation - pad_before of the tap at `k`, and the
    // outputs (oh of [0, OH)) whose input row oh * stride + offset lies in
    // the input.
    auto tapOffset = [&](OpBuilder &rb, Location rl, Value k, int d) {
      return subi(rb, rl, muli(rb, rl, k, p.dilation[d]),
                  idx(rb, rl, p.padBefore[d]));
    };
    auto outputRange = [&](OpBuilder &rb, Location rl, Value off, int d) {
      return stridedRange(rb, rl, zero, s.in[d], p.stride[d], off, zero,
                          s.out[d]);
    };

    if (p.nchw) {
      // Rows (o, c, kh) of KW elements, each a sum over n and the valid oh
      // of dot products along ow (vectors when the stride along w is 1).
      Value rows = b.createOrFold<arith::MulIOp>(
          loc, b.createOrFold<arith::MulIOp>(loc, s.o, s.c), s.k[0]);
      emitParallelRows(
          b, loc, rows, [&](OpBuilder &pb, Location pl, Value row) {
            SmallVector<Value> r = delinearize(pb, pl, row, {s.o, s.c, s.k[0]});
            Value o = r[0], c = r[1], kh = r[2];
            Value offH = tapOffset(pb, pl, kh, 0);
            Range ohs = outputRange(pb, pl, offH, 0);
            Value init = floatConstant(pb, pl, 0.0, acc, 1);
            emitFor(
                pb, pl, zero, s.k[1],
                [&](OpBuilder &kb, Location kl, Value kw) {
                  Value offW = tapOffset(kb, kl, kw, 1);
                  Range ows = outputRange(kb, kl, offW, 1);
                  Value len = subi(kb, kl, ows.hi, ows.lo);
                  Value sum = emitSumFor(
                      kb, kl, zero, s.n, init,
                      [&](OpBuilder &nb, Location nl, Value n,
                          Value sumN) -> Value {
                        return emitSumFor(
                            nb, nl, ohs.lo, ohs.hi, sumN,
                            [&](OpBuilder &hb, Location hl, Value oh,
                                Value sumH) -> Value {
                              Value ih =
                                  addi(hb, hl, muli(hb, hl, oh, sh), offH);
                              Value d = emitDot(
                                  hb, hl, len, sw == 1 ? vw : 1, acc,
                                  [&](OpBuilder &sb, Location sl, Value j,
                                      int64_t width) {
                                    Value ow = addi(sb, sl, ows.lo, j);
                                    Value iw = addi(sb, sl,
                                                    muli(sb, sl, ow, sw), offW);
                                    Value g = loadAs(sb, sl, dy, {n, o, oh, ow},
                                                     width, acc);
                                    Value v = loadAs(sb, sl, x, {n, c, ih, iw},
                                                     width, acc);
                                    return sb.create<arith::MulFOp>(sl, g, v)
                                        .getResult();
                                  });
                              return hb.create<arith::AddFOp>(hl, sumH, d);
                            });
                      });
                  storeAs(kb, kl, sum, dw, {o, c, kh, kw});
                });
          });
    } else {
      // Rows (o, kh, kw) of C elements; each (n, oh, ow) in the tap's
      // reach adds dy[n, oh, ow, o] times an input row of channels.
      Value rows = b.createOrFold<arith::MulIOp>(
          loc, b.createOrFold<arith::MulIOp>(loc, s.o, s.k[0]), s.k[1]);
      emitParallelAccumulatedRows(
          b, loc, rows, dw, acc,
          [&](OpBuilder &pb, Location pl, Value row, RowScratch scratch) {
            SmallVector<Value> r =
                delinearize(pb, pl, row, {s.o, s.k[0], s.k[1]});
            Value o = r[0], kh = r[1], kw = r[2];
            Value offH = tapOffset(pb, pl, kh, 0);
            Value offW = tapOffset(pb, pl, kw, 1);
            Range ohs = outputRange(pb, pl, offH, 0);
            Range ows = outputRange(pb, pl, offW, 1);
            emitAccumulatedRow(
                pb, pl, dw, {o, kh, kw}, s.c, acc, vw, scratch,
                [&](OpBuilder &ab, Location al, const AccRow &accRow,
                    Value begin, Value end) {
                  emitFor(
                      ab, al, zero, s.n,
                      [&](OpBuilder &nb, Location nl, Value n) {
                        emitFor(
                            nb, nl, ohs.lo, ohs.hi,
                            [&](OpBuilder &hb, Location hl, Value oh) {
                              Value ih =
                                  addi(hb, hl, muli(hb, hl, oh, sh), offH);
                              emitFor(
                                  hb, hl, ows.lo, ows.hi,
                                  [&](OpBuilder &wb, Location wl, Value ow) {
                                    Value iw = addi(wb, wl,
                                                    muli(wb, wl, ow, sw), offW);
                                    Value a = loadAs(wb, wl, dy, {n, oh, ow, o},
                                                     1, acc);
                                    emitVectorLoop(
                                        wb, wl, begin, end, vw,
                                        [&](OpBuilder &lb, Location ll, Value c,
                                            int64_t width) {
                                          Value v =
                                              loadAs(lb, ll, x, {n, ih, iw, c},
                                                     width, acc);
                                          accRow.fma(lb, ll, c, width,
                                                     splat(lb, ll, a, width),
                                                     v);
                                        });
                                  });
                            });
                      });
                });
          });
    }
    rewriter.replaceOp(op, toTensor(b, loc, dw));
    return success();
  }
};

} // namespace

Value cpu::emitMatmulLoops(OpBuilder &b, MatmulOp op, Value lhs, Value rhs,
                           int64_t width, const PointwiseChain *epilogue) {
  return LowerMatmul::emit(b, op, lhs, rhs, width, epilogue);
}

Value cpu::emitConv2DLoops(OpBuilder &b, Conv2DOp op, Value input, Value filter,
                           int64_t width, const PointwiseChain *epilogue) {
  return LowerConv2D::emit(b, op, input, filter, width, epilogue);
}

void mlir::nf::populateLowerProducersToLoopsPatterns(
    RewritePatternSet &patterns, const LoopLoweringOptions &options) {
  patterns.add<LowerMatmul, LowerConv2D, LowerConv2DBackpropInput,
               LowerConv2DBackpropFilter>(patterns.getContext(), options);
}
