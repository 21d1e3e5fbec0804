//===- ProducerLoops.h - building blocks of matmul and conv loops -*- C++
//-*-===//
//
// Part of normfuse. Helpers shared by the loop lowerings of nf.matmul
// (LowerProducers.cpp) and of nf.conv2d and its gradients (LowerConvs.cpp):
// index arithmetic that folds to constants, scf loops with and without a
// carried sum, and rows accumulated in place or in a scratch slot.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_CODEGEN_CPU_PRODUCERLOOPS_H
#define NORMFUSE_LIB_CODEGEN_CPU_PRODUCERLOOPS_H

#include "LoopUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::nf::cpu::producers {

/// Accumulators of a scratch slot (4 KiB of f32): rows longer than this
/// are accumulated tile by tile.
constexpr int64_t kRowTile = 1024;

/// Slots of the scratch buffer of a result that is not in the accumulation
/// type: parallel chunks of rows (256 KiB of f32 in all).
constexpr int64_t kScratchSlots = 64;

//===----------------------------------------------------------------------===//
// Index arithmetic (folded to constants where the operands are)
//===----------------------------------------------------------------------===//

Value idx(OpBuilder &b, Location loc, int64_t v);
Value addi(OpBuilder &b, Location loc, Value x, Value y);
Value subi(OpBuilder &b, Location loc, Value x, Value y);
Value muli(OpBuilder &b, Location loc, Value x, int64_t c);
Value maxsi(OpBuilder &b, Location loc, Value x, Value y);
Value minsi(OpBuilder &b, Location loc, Value x, Value y);
/// x / c for x >= 0.
Value divui(OpBuilder &b, Location loc, Value x, int64_t c);

/// Size `i` of `buffer` as an index value (a constant when static).
Value dimOf(OpBuilder &b, Location loc, Value buffer, int64_t i);

/// The row-major indices of `linear` in a space of `sizes`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<Value> sizes);

/// A range [lo, hi) of indices with hi >= lo.
struct IndexRange {
  Value lo, hi;
};

/// The j in [lo, hi) with j * stride + offset in [begin, end). `lo` must be
/// non-negative: numerators below zero are then clamped to zero without
/// changing the result, and the divisions are of non-negative values.
IndexRange stridedRange(OpBuilder &b, Location loc, Value begin, Value end,
                        int64_t stride, Value offset, Value lo, Value hi);

/// The j in [0, hi) with base - j * stride in [0, end), for base >= 0.
IndexRange reverseRange(OpBuilder &b, Location loc, Value end, int64_t stride,
                        Value base, Value hi);

//===----------------------------------------------------------------------===//
// Loop building blocks
//===----------------------------------------------------------------------===//

using IndexBody = llvm::function_ref<void(OpBuilder &, Location, Value)>;

/// for i in [lower, upper) step 1.
void emitFor(OpBuilder &b, Location loc, Value lower, Value upper,
             IndexBody body);

using SumBody =
    llvm::function_ref<Value(OpBuilder &, Location, Value i, Value sum)>;

/// sum = init; for i in [lower, upper): sum = body(i, sum); returns sum.
Value emitSumFor(OpBuilder &b, Location loc, Value lower, Value upper,
                 Value init, SumBody body);

/// Runs `body` where `t` is a multiple of `stride` (always for stride 1),
/// with t / stride; `t` must be non-negative.
void ifDivisible(OpBuilder &b, Location loc, Value t, int64_t stride,
                 IndexBody body);

/// [sum of the lanes of vectors[0], ..., of vectors[k - 1]]: k vectors of
/// the same w lanes (k and w powers of 2, k <= w) reduced together into one
/// vector of k lanes. Each vector is halved down to k lanes, then
/// neighbours are merged (lane j of a merge sums lanes 2j and 2j + 1 of the
/// pair side by side): 2k - 2 + k log2(w / k) shuffles and half as many
/// adds, against k separate horizontal reductions and k inserts.
Value sumLanesOfEach(OpBuilder &b, Location loc, ArrayRef<Value> vectors);

/// The sum over j in [0, n) of `term`, accumulated in `acc`: vectors of
/// `width` lanes where the term's elements are contiguous (width > 1).
Value emitDot(OpBuilder &b, Location loc, Value n, int64_t width, Type acc,
              SumTerm term);

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
                                 Value out, Type acc, ScratchRowBody body);

/// Adds into the accumulators of the row elements [begin, end), which start
/// at zero.
using RowTileBody = llvm::function_ref<void(OpBuilder &, Location,
                                            const AccRow &, Value, Value)>;

/// Computes out[prefix..., 0:len) by accumulation: `body` runs on zeroed
/// accumulators, once for the whole row in place or once per tile of
/// kRowTile elements in `scratch`, whose values are then stored narrowed.
void emitAccumulatedRow(OpBuilder &b, Location loc, Value out,
                        ValueRange prefix, Value len, Type acc, int64_t width,
                        RowScratch scratch, RowTileBody body);

/// Allocates the result buffer of `type`; `sizes` gives every dimension
/// (only the dynamic ones are used).
Value allocResult(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<Value> sizes);

/// Adds the patterns of nf.conv2d and its gradients (LowerConvs.cpp).
void populateLowerConvPatterns(RewritePatternSet &patterns,
                               const LoopLoweringOptions &options);

} // namespace mlir::nf::cpu::producers

#endif // NORMFUSE_LIB_CODEGEN_CPU_PRODUCERLOOPS_H
