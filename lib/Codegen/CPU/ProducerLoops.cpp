//===- ProducerLoops.cpp - building blocks of matmul and conv loops -------===//
//
// Part of normfuse. See ProducerLoops.h.
//
//===----------------------------------------------------------------------===//

#include "ProducerLoops.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;

namespace mlir::nf::cpu::producers {

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

Value divui(OpBuilder &b, Location loc, Value x, int64_t c) {
  return c == 1 ? x : b.createOrFold<arith::DivUIOp>(loc, x, idx(b, loc, c));
}

Value dimOf(OpBuilder &b, Location loc, Value buffer, int64_t i) {
  return getNumElements(b, loc, buffer, i, i + 1);
}

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

IndexRange stridedRange(OpBuilder &b, Location loc, Value begin, Value end,
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

IndexRange reverseRange(OpBuilder &b, Location loc, Value end, int64_t stride,
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

void emitFor(OpBuilder &b, Location loc, Value lower, Value upper,
             IndexBody body) {
  b.create<scf::ForOp>(loc, lower, upper, idx(b, loc, 1), std::nullopt,
                       [&](OpBuilder &fb, Location fl, Value i, ValueRange) {
                         body(fb, fl, i);
                         fb.create<scf::YieldOp>(fl);
                       });
}

Value emitSumFor(OpBuilder &b, Location loc, Value lower, Value upper,
                 Value init, SumBody body) {
  auto loop = b.create<scf::ForOp>(
      loc, lower, upper, idx(b, loc, 1), ValueRange{init},
      [&](OpBuilder &fb, Location fl, Value i, ValueRange sum) {
        fb.create<scf::YieldOp>(fl, body(fb, fl, i, sum[0]));
      });
  return loop.getResult(0);
}

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

Value emitDot(OpBuilder &b, Location loc, Value n, int64_t width, Type acc,
              SumTerm term) {
  return emitBlockedSum(b, loc, n, width, acc, term);
}

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

Value sumLanesOfEach(OpBuilder &b, Location loc, ArrayRef<Value> vectors) {
  SmallVector<Value> cur(vectors.begin(), vectors.end());
  int64_t k = cur.size();
  int64_t w = cast<VectorType>(cur.front().getType()).getNumElements();
  assert(llvm::isPowerOf2_64(k) && llvm::isPowerOf2_64(w) && k <= w &&
         "k and w must be powers of 2, k <= w");
  auto add = [&](Value x, Value y) {
    return b.create<arith::AddFOp>(loc, x, y).getResult();
  };
  for (; w > k; w /= 2)
    for (Value &v : cur) {
      SmallVector<int64_t> lo, hi;
      for (int64_t j = 0; j < w / 2; ++j) {
        lo.push_back(j);
        hi.push_back(j + w / 2);
      }
      v = add(b.create<vector::ShuffleOp>(loc, v, v, lo),
              b.create<vector::ShuffleOp>(loc, v, v, hi));
    }
  SmallVector<int64_t> even, odd;
  for (int64_t j = 0; j < 2 * k; j += 2) {
    even.push_back(j);
    odd.push_back(j + 1);
  }
  while (cur.size() > 1) {
    SmallVector<Value> merged;
    for (size_t i = 0; i < cur.size(); i += 2)
      merged.push_back(
          add(b.create<vector::ShuffleOp>(loc, cur[i], cur[i + 1], even),
              b.create<vector::ShuffleOp>(loc, cur[i], cur[i + 1], odd)));
    cur = std::move(merged);
  }
  return cur.front();
}

} // namespace mlir::nf::cpu::producers
