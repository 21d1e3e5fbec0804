//===- ChannelLoops.h - loops over (N, C, spatial) tensors ------*- C++ -*-===//
//
// Part of normfuse. The norms with per-channel statistics (group, instance
// and batch norm, forward and backward) and bias_add_grad share one
// structure: a tensor is viewed as (M, C, S) for NCHW or (M, S, C) for NHWC
// (M images, C channels, S spatial positions), per-(image, channel) sums of
// a few terms are taken over S, small scalar loops turn them into
// per-(image, channel) coefficients, and one elementwise pass applies them.
//
// Channels-first rows of S elements are contiguous: sums are blocked row
// sums, maps are vector loops along the row with scalar coefficients.
// Channels-last positions hold C contiguous channels: sums and maps run
// vector loops along C over chunks of positions, the sums of a chunk
// accumulate in a small scratch row, and chunk sums are added in f64.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_CODEGEN_CPU_CHANNELLOOPS_H
#define NORMFUSE_LIB_CODEGEN_CPU_CHANNELLOOPS_H

#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::nf::cpu {

class PointwiseChain;

/// The (M, C, S) shape of a rank >= 2 tensor in a layout.
struct ChannelShape {
  bool channelsLast = false;
  Value images, channels, spatial; // index values

  /// The (M, C, S) or (M, S, C) view of a contiguous buffer of this shape.
  Value view(OpBuilder &b, Location loc, Value buffer) const;
  /// The sizes of that view, and which of its dimensions is the channel.
  SmallVector<Value, 3> viewSizes() const;
  unsigned channelDim() const { return channelsLast ? 2 : 1; }
};

ChannelShape getChannelShape(OpBuilder &b, Location loc, Value buffer,
                             Layout layout);

/// Computes values (in the accumulation type, scalars or vectors of
/// `width` lanes) from the elements of the inputs at one position and the
/// coefficients of the position's (image, channel).
using ChannelFn = llvm::function_ref<SmallVector<Value>(
    OpBuilder &, Location, ValueRange inputs, ValueRange coefs, int64_t width)>;

/// The operands of a channel loop.
struct ChannelLoop {
  ChannelShape shape;
  SmallVector<Value> inputs; // views from ChannelShape::view
  SmallVector<Value> coefs;  // (M, C) buffers of the accumulation type
  Type acc;                  // f32, or f64 for f64 data
  int64_t width = 8;         // vector lanes
  /// The pointwise ops of an nf.fused body, bound to the view (null: none):
  /// the prologue computes input 0 from what is loaded, the epilogue runs on
  /// every value emitChannelMap stores.
  const PointwiseChain *prologue = nullptr;
  const PointwiseChain *epilogue = nullptr;
  /// Whether emitChannelMap's outputs are returned by the function (they
  /// may then be streamed; see emitStreamingVersions).
  bool outputsReturned = false;
  /// Loops run on the calling thread (in a parallel loop over images)
  /// instead of in parallel.
  bool sequential = false;
  /// A view like the inputs' (null: none): emitChannelSums also stores its
  /// first term there, element by element (a fused body's value that is
  /// both summed and written out).
  Value termOutput = nullptr;
};

/// For images [lo, hi): sums[k][m, c] = sum over s of fn(...)[k], with
/// `sums` (M, C) f64 buffers. Runs in parallel over rows (channels-first)
/// or chunks of positions (channels-last).
void emitChannelSums(OpBuilder &b, Location loc, const ChannelLoop &loop,
                     Value lo, Value hi, ArrayRef<Value> sums, ChannelFn fn);

/// For images [lo, hi): the mean and the sum of squared deviations from it
/// (M2) of input 0 over S per (m, c), into (M, C) f64 buffers. Each row
/// (channels-first) or chunk of positions (channels-last) is read again
/// while in cache for the corrected two-pass algorithm: with m' the first
/// pass's mean, d = x - m', mean = m' + sum(d) / n and
/// M2 = sum(d^2) - sum(d)^2 / n. Chunks combine by Chan's formula in f64.
/// The tensor is read from memory once.
void emitChannelMoments(OpBuilder &b, Location loc, const ChannelLoop &loop,
                        Value lo, Value hi, Value mean, Value m2);

/// For images [lo, hi): outputs[k] at every position = fn(...)[k], with
/// `outputs` views from ChannelShape::view.
void emitChannelMap(OpBuilder &b, Location loc, const ChannelLoop &loop,
                    Value lo, Value hi, ArrayRef<Value> outputs, ChannelFn fn);

/// A channels-last forward norm of many images (statistics per image), in
/// one pass over memory with reads and writes overlapped: the images are
/// cut into one slice of consecutive images per thread (omp_get_max_threads
/// of them, at most one per image). A thread takes the moments of its
/// slice's first image; then for each image m, the chunks' moments combine
/// into rows m of `mean` and `m2` (as emitChannelMoments), `coefsOf(m)`
/// fills rows m of `loop.coefs`, and the map of m writes `outputs` = fn(...)
/// (as emitChannelMap), each chunk of positions followed by the moments of
/// the same positions of image m + 1, which the map prefetches. The next
/// image is thus read from memory while this one is written, and its
/// moments computed while the stores drain. As the chunks of an image come
/// in order, a chunk after the first is summed in one pass around the
/// previous chunk's mean where that center is within one standard
/// deviation of the chunk's mean (else in two passes).
void emitPipelinedImages(
    OpBuilder &b, Location loc, const ChannelLoop &loop, Value mean, Value m2,
    llvm::function_ref<void(OpBuilder &, Location, Value m)> coefsOf,
    ArrayRef<Value> outputs, ChannelFn fn);

/// Runs `body` on consecutive ranges [lo, hi) of images. With `together`
/// it is one range of all images (statistics across images: BatchNorm);
/// otherwise ranges of about a megabyte of elements, so the passes of a
/// range find its data in cache.
void emitImageRanges(
    OpBuilder &b, Location loc, const ChannelShape &shape, bool together,
    llvm::function_ref<void(OpBuilder &, Location, Value lo, Value hi)> body);

/// Runs `body` on the range [m, m + 1) of each image m, as the iterations
/// of a parallel loop over images (the loops of `body` must then be
/// sequential: ChannelLoop::sequential).
void emitParallelImages(
    OpBuilder &b, Location loc, const ChannelShape &shape,
    llvm::function_ref<void(OpBuilder &, Location, Value lo, Value hi)> body);

/// Sequential loops over images [mLo, mHi) and channels [cLo, cHi).
void emitForEach(
    OpBuilder &b, Location loc, Value mLo, Value mHi, Value cLo, Value cHi,
    llvm::function_ref<void(OpBuilder &, Location, Value m, Value c)> body);

/// The f64 sum of `term(m, c)` over images [mLo, mHi) and channels
/// [cLo, cHi).
Value emitSumOver(
    OpBuilder &b, Location loc, Value mLo, Value mHi, Value cLo, Value cHi,
    llvm::function_ref<Value(OpBuilder &, Location, Value m, Value c)> term);

/// An (M, C) scratch buffer of `type` (freed by the buffer deallocation
/// pipeline, as every allocation of the lowering is).
Value allocChannelScratch(OpBuilder &b, Location loc, const ChannelShape &shape,
                          Type type);

} // namespace mlir::nf::cpu

#endif // NORMFUSE_LIB_CODEGEN_CPU_CHANNELLOOPS_H
