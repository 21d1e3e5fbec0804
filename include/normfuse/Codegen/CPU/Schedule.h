//===- Schedule.h - how each nf kernel runs on the CPU ----------*- C++ -*-===//
//
// Part of normfuse. The CPU back end's schedule layer (the CUDA one is
// Codegen/CUDA/Schedule.h): every tuning constant of the CPU loops, and
// every choice of strategy that depends on a kernel's shape, made here and
// followed by the lowerings. `describeCPUSchedule` puts an op's choices into
// words; the test pass nf-test-cpu-schedule prints them as remarks, which
// test/Codegen/CPU/cpu-schedules.mlir checks.
//
// The constants were tuned on the development machines (AVX2, 8 f32
// lanes); each comment says what its value buys, docs/CPU.md describes the
// loops they tune.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_CPU_SCHEDULE_H
#define NORMFUSE_CODEGEN_CPU_SCHEDULE_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::nf::cpu {

//===----------------------------------------------------------------------===//
// Row sums and norms
//===----------------------------------------------------------------------===//

/// Vectors accumulate over this many elements before their sum is added to
/// the f64 total: the f32 error of a block stays that of a short sum.
constexpr int64_t kSumBlockElements = 512;
/// Independent vector accumulators of a row sum.
constexpr int64_t kSumUnroll = 4;
/// A row norm's values are centered on the mean of the row's first this
/// many elements before they are squared (a checked center: the variance
/// of data far from zero keeps its digits).
constexpr int64_t kCenterElements = 16;

//===----------------------------------------------------------------------===//
// Streaming (non-temporal) stores
//===----------------------------------------------------------------------===//

/// The alignment, in bytes, of every non-temporal vector store the nf
/// loops emit: what malloc and NumPy guarantee (a large malloc block is
/// 16 bytes past a page boundary, so never 32-byte aligned).
constexpr int64_t kStreamingAlignment = 16;
/// Outputs larger than this many bytes together are written with
/// non-temporal stores when their layout allows.
constexpr int64_t kStreamingStoreBytes = int64_t(16) << 20;
/// Bytes a parallel iteration with streaming stores should write: enough
/// that its closing fence costs little.
constexpr int64_t kStreamingIterationBytes = 64 << 10;

/// What decides streaming stores for a loop nest's outputs.
struct StreamingQuery {
  /// The outputs are returned by the function (an intermediate is read soon
  /// by the next kernel: streaming stores measured slower there).
  bool returned = false;
  /// Every output has a static shape.
  bool staticShapes = true;
  /// The outputs' bytes together, and the largest of their rows (the
  /// innermost contiguous extent) in bytes.
  int64_t totalBytes = 0, rowBytes = 0;
  /// The row in elements (0 when unknown), the vector width, and whether
  /// every output's vector is a multiple of kStreamingAlignment bytes.
  int64_t rowElements = 0, width = 1;
  bool vectorsAligned = true;
};

struct StreamingChoice {
  bool enabled = false;
  /// Rows of the outputs' innermost extent that make up one parallel
  /// iteration.
  int64_t rowsPerIteration = 1;
};

StreamingChoice selectStreamingStores(const StreamingQuery &query);

//===----------------------------------------------------------------------===//
// Per-channel norms (GroupNorm, InstanceNorm, BatchNorm) and channel sums
//===----------------------------------------------------------------------===//

/// Channels-last positions per parallel chunk: the chunk's partial sums stay
/// short f32 sums, and a chunk is a few tens of KiB of data.
constexpr int64_t kChunkPositions = 64;
/// Vectors of channels whose sums over a chunk's positions the second
/// moments pass keeps in registers at once.
constexpr int64_t kMomentsUnroll = 4;
/// Channels per parallel iteration of the combination of chunk moments.
constexpr int64_t kCombineChannels = 32;
/// Elements of the images one range of emitImageRanges holds (about 4 MiB
/// of f32): every pass of a range after the first reads from cache.
constexpr int64_t kRangeElements = 1 << 20;
/// Images (a static count) from which a forward GroupNorm or InstanceNorm
/// gives each thread whole images. Below it the passes over an image are
/// parallel, so that one image or a few still use every thread.
constexpr int64_t kParallelImagesMin = 8;

/// Whether a forward GroupNorm or InstanceNorm of `images` images (none
/// when dynamic) gives each thread whole images.
bool wholeImagesPerThread(std::optional<int64_t> images);

//===----------------------------------------------------------------------===//
// Row norm gradients
//===----------------------------------------------------------------------===//

/// Parallel chunks of rows: enough to spread over the threads, few enough
/// that the per-chunk parameter-gradient rows stay small.
constexpr int64_t kMaxRowChunks = 64;
/// The scratch rows of all chunks together hold at most this many elements.
constexpr int64_t kMaxScratchElements = 1 << 22;

/// The number of row chunks: min(rows, 64, 2^22 / cols), at least 1.
int64_t rowGradChunks(int64_t rows, int64_t cols);

//===----------------------------------------------------------------------===//
// Pointwise ops
//===----------------------------------------------------------------------===//

/// Elements per parallel chunk of a flattened pointwise op: large enough to
/// amortize scheduling, small enough to spread a few MiB across threads.
constexpr int64_t kPointwiseChunkElements = 16384;

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

/// Vectors of columns a matmul row keeps in registers over the k loop.
constexpr int64_t kColumnVectors = 4;
/// Rows of lhs that share each vector of rhs loaded in the k loop (f32
/// accumulation; f64 takes one).
constexpr int64_t kRowGroup = 3;
/// Rows of one parallel iteration.
constexpr int64_t kRowChunk = 96;
/// Rows (of M) from which a matmul packs rhs into panels.
constexpr int64_t kPackMinRows = 4;
/// Values of k packed into a panel at a time: 16 KiB of f32 for a block of
/// 4 vectors of 8 columns, so that a panel stays in L1.
constexpr int64_t kDepthBlock = 128;

/// How a matmul reads rhs.
enum class MatmulRhs {
  /// Packed, widened, into panels that stay in L1.
  Packed,
  /// In place: few rows cannot repay packing (a matrix-vector product ran
  /// 1.7x slower packed, 2.7x with transpose_rhs).
  InPlace,
  /// M unknown: decided at run time.
  ByRows,
};

/// How a matmul with `rows` rows of M (none when dynamic) reads rhs.
MatmulRhs selectMatmulRhs(std::optional<int64_t> rows);

/// Rows that share a vector of rhs for accumulation type `acc`.
int64_t matmulRowGroup(Type acc);

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

/// NHWC conv2d: register tiles of this many positions by output channels.
constexpr int64_t kConvTilePositions = 3;
constexpr int64_t kConvTileChannels = 4;
/// NHWC conv2d: output channels of one parallel iteration.
constexpr int64_t kConvChannelChunk = 32;

//===----------------------------------------------------------------------===//
// In words
//===----------------------------------------------------------------------===//

/// The choices the CPU lowering makes for nf op `op` with vectors of
/// `width` lanes, e.g. "matmul rhs=packed row-group=3 column-vectors=4
/// row-chunk=96 depth-block=128"; empty for an op without a CPU kernel of
/// its own.
std::string describeCPUSchedule(Operation *op, int64_t width);

} // namespace mlir::nf::cpu

#endif // NORMFUSE_CODEGEN_CPU_SCHEDULE_H
