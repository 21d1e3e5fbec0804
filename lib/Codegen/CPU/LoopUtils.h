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

#include "normfuse/Codegen/CPU/Schedule.h"
#include "normfuse/Codegen/Common/ActivationMath.h"
#include "normfuse/Codegen/Common/BufferBuilders.h"
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

// Shared with every back end (Codegen/Common/BufferBuilders.h).
using mlir::nf::allocBuffer;
using mlir::nf::getBuffer;
using mlir::nf::getNumElements;
using mlir::nf::toTensor;
using mlir::nf::toTensorOf;

/// A view of the contiguous `buffer` with the given sizes (row-major).
Value reshapeBuffer(OpBuilder &b, Location loc, Value buffer,
                    ArrayRef<Value> sizes);

// Shared with every back end (Codegen/Common/ActivationMath.h).
using mlir::nf::floatConstant;
using mlir::nf::widen;

/// Loads `width` consecutive elements (a scalar when 1) at `indices` and
/// extends them to `accType`.
Value loadAs(OpBuilder &b, Location loc, Value buffer, ValueRange indices,
             int64_t width, Type accType);

/// Truncates (or extends) `value` to the buffer's element type and stores
/// it at `indices`; a vector store is non-temporal when `streaming` (see
/// StreamingStores).
void storeAs(OpBuilder &b, Location loc, Value value, Value buffer,
             ValueRange indices, bool streaming = false);

/// The unit attribute on a function whose loops use streaming stores: what
/// nf-align-streaming-stores looks for.
constexpr llvm::StringLiteral kStreamingStoresAttr = "nf.streaming_stores";

/// Non-temporal ("streaming") stores of a loop nest's outputs. An output
/// too large to stay in cache for its next reader is better written around
/// the caches: a plain store first reads the line it writes, a streaming
/// store does not, which saves a third of an elementwise pass's memory
/// traffic. A streaming store is emitted only for a full vector at an
/// address that is a multiple of kStreamingAlignment (nf-align-streaming-
/// stores gives it that alignment on the LLVM dialect; an under-aligned
/// one becomes 8-byte stores on x86, slower than plain ones), and each
/// parallel iteration ends with a fence (the stores are weakly ordered),
/// so an iteration should write a few tens of KiB.
struct StreamingStores {
  bool enabled = false;
  /// Rows of the outputs' innermost extent that make up one parallel
  /// iteration of the recommended size.
  int64_t rowsPerIteration = 1;

  /// At the end of a parallel iteration: orders its streaming stores
  /// before the loop's join.
  void fence(OpBuilder &b, Location loc) const;
};

/// Whether `v` is returned by its function (used by a func.return).
bool isFunctionResult(Value v);

/// Emits `body` with streaming stores for `outputs` where they qualify, and
/// with plain ones where not: when the outputs are `returned` by the
/// function (an intermediate is read soon by the next kernel, and its
/// freshly allocated pages are in cache from being zeroed: streaming stores
/// measured slower there), have static shapes, hold at
/// least kStreamingStoreBytes together, and their innermost contiguous rows
/// of `rowElements` elements are whole vectors of `width` lanes (of a
/// multiple of kStreamingAlignment bytes), `body` is emitted twice under an
/// scf.if on the run-time alignment of the outputs' base pointers;
/// otherwise once with streaming disabled.
void emitStreamingVersions(
    OpBuilder &b, Location loc, ArrayRef<Value> outputs, Value rowElements,
    int64_t width, bool returned,
    llvm::function_ref<void(OpBuilder &, Location, const StreamingStores &)>
        body);

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

/// Runs `body` for rows [0, rows) as an scf.parallel loop: one row per
/// iteration, or blocks of `streaming.rowsPerIteration` rows when
/// streaming stores are enabled.
void emitParallelRows(OpBuilder &b, Location loc, Value rows, RowBody body,
                      const StreamingStores &streaming = {});

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

/// Several terms of a sum over elements [j, j + width), in the
/// accumulation type: always the same number of values.
using SumTerms = llvm::function_ref<SmallVector<Value>(OpBuilder &, Location,
                                                       Value j, int64_t width)>;

/// The f64 totals of `count` sums taken in one loop, each as
/// emitBlockedSumF64 takes it.
SmallVector<Value> emitBlockedSumsF64(OpBuilder &b, Location loc, Value n,
                                      int64_t width, Type accType,
                                      unsigned count, SumTerms terms);

/// `scalar` broadcast to `width` lanes (itself when `width` == 1).
Value splat(OpBuilder &b, Location loc, Value scalar, int64_t width);

/// An index value as a float of `type` (f32 or f64).
Value indexToFloat(OpBuilder &b, Location loc, Value index, Type type);

/// Converts a float scalar or vector to element type `to`; f32 to bf16
/// rounds to nearest even in integer arithmetic (which vectorizes).
Value convertFloat(OpBuilder &b, Location loc, Value v, Type to);

/// The 32-bit words whose upper halves are f32 `v` (a scalar or a vector)
/// rounded to bf16: to nearest even, every NaN to 0x7FC0 (the bits of
/// arith.truncf). The lower halves are not zero. With `noNaN` (the caller
/// knows `v` holds no NaN) the NaN case is left out.
Value roundedBF16Words(OpBuilder &b, Location loc, Value v, bool noNaN = false);

/// A 64-byte aligned scratch buffer with the given sizes (static where they
/// are constants); the buffer deallocation pipeline frees it.
Value allocScratch(OpBuilder &b, Location loc, ArrayRef<Value> sizes,
                   Type elementType);

/// The OpenMP runtime's `int omp_get_max_threads(void)`: the number of
/// threads the next parallel loop gets. nf-lower-to-loops declares it in the
/// module while lowering and removes the declaration if unused.
inline constexpr llvm::StringLiteral kMaxThreadsFunction =
    "omp_get_max_threads";

} // namespace mlir::nf::cpu

#endif // NORMFUSE_LIB_CODEGEN_CPU_LOOPUTILS_H
