//===- LoopUtils.h - building blocks of the nf loop lowering ----*- C++ -*-===//
//
// Part of normfuse. Helpers shared by the lowerings of nf ops to loops:
// buffers of tensor operands and results, reshaped views of contiguous
// buffers, loads and stores that widen f16/bf16 to the accumulation type,
// vector loops with a scalar tail, and a blocked sum whose error does not
// grow with the row length the way one long sequential f32 sum does.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_CODEGEN_CPU_LOOPUTILS_H
#define NORMFUSE_LIB_CODEGEN_CPU_LOOPUTILS_H

#include "normfuse/Codegen/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::nf::cpu {

/// The base of the nf-to-loops patterns: a conversion pattern for `SourceOp`
/// that carries the lowering options.
template <typename SourceOp>
struct LoopLoweringPattern : OpConversionPattern<SourceOp> {
  LoopLoweringPattern(MLIRContext *ctx, const LoopLoweringOptions &options)
      : OpConversionPattern<SourceOp>(ctx), options(options) {}
  LoopLoweringOptions options;
};

/// The buffer holding a ranked tensor value (identity layout).
Value getBuffer(OpBuilder &b, Location loc, Value tensor);

/// Allocates a buffer for a tensor of `type`; dynamic sizes come from the
/// same-rank buffer `like` (which must have the same shape).
Value allocBuffer(OpBuilder &b, Location loc, RankedTensorType type,
                  Value like);

/// The tensor whose contents are `buffer` (freshly written by a lowering).
Value toTensor(OpBuilder &b, Location loc, Value buffer);

/// The tensor of `buffer`, cast to `type` where the two differ only in which
/// sizes are static.
Value toTensorOf(OpBuilder &b, Location loc, Value buffer,
                 RankedTensorType type);

/// The product of dimensions [from, to) of `buffer`, as an index value.
Value getNumElements(OpBuilder &b, Location loc, Value buffer, int64_t from,
                     int64_t to);

/// A view of the contiguous `buffer` with the given sizes (row-major).
Value reshapeBuffer(OpBuilder &b, Location loc, Value buffer,
                    ArrayRef<Value> sizes);

/// A scalar (`width` == 1) or splat-vector constant of float type `type`.
Value floatConstant(OpBuilder &b, Location loc, double value, Type type,
                    int64_t width);

/// `type` as a vector of `width` lanes (or itself when `width` == 1).
Type widen(Type type, int64_t width);

/// Loads `width` consecutive elements (a scalar when 1) at `indices` and
/// extends them to `accType`.
Value loadAs(OpBuilder &b, Location loc, Value buffer, ValueRange indices,
             int64_t width, Type accType);

/// Truncates (or extends) `value` to the buffer's element type and stores
/// it at `indices`.
void storeAs(OpBuilder &b, Location loc, Value value, Value buffer,
             ValueRange indices);

/// A loop body over elements [j, j + width): `width` is the vector width
/// for the main loop and 1 for the tail.
using ElementBody =
    llvm::function_ref<void(OpBuilder &, Location, Value j, int64_t width)>;

/// Visits [lower, upper) in full vectors of `width` lanes, then element by
/// element.
void emitVectorLoop(OpBuilder &b, Location loc, Value lower, Value upper,
                    int64_t width, ElementBody body);

/// Visits [lower, upper) in vectors of `wide` lanes, then of `width`
/// lanes, then element by element.
void emitWideVectorLoop(OpBuilder &b, Location loc, Value lower, Value upper,
                        int64_t wide, int64_t width, ElementBody body);

/// A body run once per row: `row` is the induction variable.
using RowBody = llvm::function_ref<void(OpBuilder &, Location, Value row)>;

/// Runs `body` for rows [0, rows) as an scf.parallel loop.
void emitParallelRows(OpBuilder &b, Location loc, Value rows, RowBody body);

/// A term of a sum over elements [j, j + width), in the accumulation type.
using SumTerm =
    llvm::function_ref<Value(OpBuilder &, Location, Value j, int64_t width)>;

/// Sums `term` over [0, n): vectors accumulate in `accType` within blocks of
/// a few hundred elements, block sums and the tail are added in f64, and
/// the total is returned in `accType`.
Value emitBlockedSum(OpBuilder &b, Location loc, Value n, int64_t width,
                     Type accType, SumTerm term);

/// emitBlockedSum returning the f64 total.
Value emitBlockedSumF64(OpBuilder &b, Location loc, Value n, int64_t width,
                        Type accType, SumTerm term);

/// `scalar` broadcast to `width` lanes (itself when `width` == 1).
Value splat(OpBuilder &b, Location loc, Value scalar, int64_t width);

/// An index value as a float of `type` (f32 or f64).
Value indexToFloat(OpBuilder &b, Location loc, Value index, Type type);

/// Converts a float scalar or vector to element type `to`; f32 to bf16
/// rounds to nearest even in integer arithmetic (which vectorizes).
Value convertFloat(OpBuilder &b, Location loc, Value v, Type to);

/// A 64-byte aligned scratch buffer with the given sizes (static where they
/// are constants); the buffer deallocation pipeline frees it.
Value allocScratch(OpBuilder &b, Location loc, ArrayRef<Value> sizes,
                   Type elementType);

} // namespace mlir::nf::cpu

#endif // NORMFUSE_LIB_CODEGEN_CPU_LOOPUTILS_H
