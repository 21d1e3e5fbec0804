//===- Schedule.cpp - how each nf kernel runs on an NVIDIA GPU --*- C++ -*-===//
//
// Part of normfuse. The CUDA schedule layer (see Schedule.h): every tuning
// constant of the CUDA back end lives here.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/CUDA/Schedule.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <optional>

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

/// Rows of a length the widest vector does not divide are peeled (see
/// RowNormSchedule::peeled) from this many widest vectors on; shorter ones
/// take the narrower vector that divides them.
static constexpr int64_t kPeelMinVectors = 4;
/// The longest row a warp reduces on its own in the linalg reductions.
static constexpr int64_t kLinalgWarpRowMaxElements = 2048;
/// Rows up to this many elements are normalized by (part of) a warp.
static constexpr int64_t kWarpRowMaxElements = 1024;
/// Threads of a block that normalizes several short rows.
static constexpr int64_t kWarpRowsBlockSize = 256;
/// Threads of a block that holds one row in registers, where the row's
/// vectors fit (kMaxElementsPerThread elements a thread).
static constexpr int64_t kBlockRowThreads = 256;
/// The most row elements one thread keeps in registers (f32 each): beyond
/// this a row is streamed.
static constexpr int64_t kMaxElementsPerThread = 32;
/// The most row elements a thread keeps beside its columns' scale and bias
/// (three values an element): 48 f32 registers of data, which leaves
/// ptxas room for 2 blocks of 256 threads an SM without spills.
static constexpr int64_t kParamsInRegistersMaxElements = 16;
/// Elements a thread of a warp or block row of a linalg reduction loads at
/// once, at most (a 16-byte vector of f32).
static constexpr int64_t kLinalgReductionMaxVector = 4;
/// Threads a ChannelsLastGroups block (and a group norm gradient's one
/// kernel) aims at: as many positions as fit beside one position's channel
/// vectors.
static constexpr int64_t kChannelsLastBlockThreads = 256;
/// A group norm in NHWC goes across the channels (ChannelsLastGroups) where
/// a group's run at a position is at most this many bytes (one sector) ...
static constexpr int64_t kChannelsLastNarrowRunBytes = 16;
/// ... or at most this many on images of at least this many positions.
static constexpr int64_t kChannelsLastMaxRunBytes = 40;
static constexpr int64_t kChannelsLastMinPositions = 2048;
/// The registers a thread of the one-kernel ChannelsLastGroups variant is
/// planned to take (its vectors, at most kMaxElementsPerThread f32, beside
/// its lanes' groups, statistics, scale and bias and the addresses): its
/// blocks an SM are what the SM's registers hold of them, which
/// __launch_bounds__ then holds ptxas to.
static constexpr int64_t kChannelsLastOneKernelRegisters = 80;
/// The most blocks of a row's cluster (the portable cluster size).
static constexpr int64_t kMaxClusterBlocks = 8;
/// The most threads of a block that holds an f64 row in registers.
static constexpr int64_t kRowMaxThreadsF64 = 512;
/// Threads and vectors per thread of the small clusters a forced
/// ClusterRow uses (tests).
static constexpr int64_t kForcedClusterBlockSize = 32;
static constexpr int64_t kForcedClusterVectorsPerThread = 2;
/// Threads of a block that streams one long row, or a chunk of one.
static constexpr int64_t kStreamingBlockSize = 512;
/// Vectors each thread of a split row's block reads from its chunk, at
/// most; the first kernel keeps them in registers, at most
/// kSplitMaxElementsPerThread elements (f32; half as many f64).
static constexpr int64_t kSplitVectorsPerThread = 8;
static constexpr int64_t kSplitMaxElementsPerThread = 32;
/// ... and of a group norm of unknown size.
static constexpr int64_t kSplitDynamicRunVectorsPerThread = 4;
/// Threads, and vectors per thread, of the small chunks a forced split
/// uses (tests).
static constexpr int64_t kForcedSplitBlockSize = 32;
static constexpr int64_t kForcedSplitVectorsPerThread = 2;
/// The most row elements one thread of a norm gradient keeps in
/// registers: each needs four (xhat, g*dy, and the two parameter-gradient
/// sums).
static constexpr int64_t kGradMaxElementsPerThread = 16;
/// The most threads of a block that holds a gradient's row in registers (a
/// block row, or a block of a cluster row): at 16 elements a thread, four
/// values each, ptxas 13.0 spilled a block of 1024 (64 registers a thread:
/// 228 bytes at 16384 f32 columns, 192 bf16), which the H100 (2026-11-27)
/// ran at 0.41 to 0.69 of a copy, where blocks of 512 ran 8192 columns at
/// 0.70 to 0.92; f64 (two registers a value) spilled at 512 as well.
static constexpr int64_t kGradRowMaxThreads = 512;
static constexpr int64_t kGradRowMaxThreadsF64 = 256;
/// Threads of a block of a split gradient row.
static constexpr int64_t kGradSplitBlockSize = 256;
/// Blocks of a gradient kernel when its schedule is forced (tests): few,
/// so that each loops over several rows.
static constexpr int64_t kForcedGradBlocks = 2;
/// Threads of a block of a per-channel reduction.
static constexpr int64_t kChannelReductionBlockSize = 256;
/// BatchNorm's one kernel (NCHW): bytes of x a thread loads at once, in at
/// most this many vectors.
static constexpr int64_t kBatchNormOneKernelBytesInFlight = 64;
static constexpr int64_t kBatchNormOneKernelMaxVectors = 8;
/// ... but 48 bytes of 16-bit x in the forward: its 32 values of 64 bytes
/// widened to f32 took ptxas to 73-80 registers (3 blocks an SM); 24 take
/// 48 at 56 x 56 (5 blocks), 64 at 14 x 14 (4), with as many bytes in
/// flight an SM or more (NVRTC 13.0, sm_90).
static constexpr int64_t kBatchNormOneKernel16BitBytesInFlight = 48;
/// Threads of a block of an elementwise kernel.
static constexpr int64_t kPointwiseBlockSize = 256;
// A reduction over an outer dimension whose results fill the device still
// shares each result's elements among warps beyond this many.
static constexpr int64_t kColumnsMaxThreadElements = 256;
// Fewer elements a result are not worth sharing.
static constexpr int64_t kColumnsMinElements = 16;
// A reduction split across blocks gives each thread at least this many
// elements of a part (LinalgReductionSchedule::kMaxSplits parts at most).
static constexpr int64_t kSplitMinThreadElements = 16;
// A tensor-core product of fewer 64 x 64 tiles than this many per
// multiprocessor splits K until it has about that many blocks (each holds
// four warps; a multiprocessor holds four such blocks), keeping at least
// kSplitKMinTiles K tiles a split (the pipeline's stages stay full) and
// at most kMaxSplitK splits (each adds 8 bytes a result element of
// partial sums written and read back).
static constexpr int64_t kSplitKBlocksPerMultiprocessor = 2;
static constexpr int64_t kSplitKMinTiles = 8;
static constexpr int64_t kMaxSplitK = 16;
// The SIMT kernel's ranges are at least as long in K (32 of its K tiles
// of 8): each block's two-stage loop runs long enough to hide its loads.
static constexpr int64_t kSimtSplitKMinK = 256;

/// The ranges a split K cuts `kTiles` K tiles into, for products of
/// `blocks` blocks: as many as bring them to kSplitKBlocksPerMultiprocessor
/// a multiprocessor of `target`, each at least `minTiles` K tiles, at most
/// kMaxSplitK; then as many as whole ranges of the same length make (none
/// empty). 1: K is not split.
static int64_t staticSplitK(int64_t blocks, int64_t kTiles, int64_t minTiles,
                            const GpuTarget &target) {
  int64_t wanted = kSplitKBlocksPerMultiprocessor * target.multiprocessors;
  int64_t splits =
      std::min({(wanted + blocks - 1) / blocks, kTiles / minTiles, kMaxSplitK});
  if (splits <= 1)
    return 1;
  int64_t perSplit = (kTiles + splits - 1) / splits;
  return (kTiles + perSplit - 1) / perSplit;
}

/// The widest power-of-two vector of `elementType` that fits in one access
/// and divides `cols`.
static int64_t vectorWidthFor(int64_t cols, Type elementType) {
  int64_t bytes = std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8);
  int64_t width = GpuTarget::kMaxAccessBytes / bytes;
  if (ShapedType::isDynamic(cols))
    return 1;
  while (width > 1 && cols % width != 0)
    width /= 2;
  return width;
}

/// Each row-norm schedule kind's name, as schedules print it.
static constexpr std::pair<RowNormSchedule::Kind, const char *> kKindNames[] = {
    {RowNormSchedule::Kind::WarpRows, "warp-rows"},
    {RowNormSchedule::Kind::BlockRowInRegisters, "block-row-registers"},
    {RowNormSchedule::Kind::BlockRowStreaming, "block-row-streaming"},
    {RowNormSchedule::Kind::SplitRow, "split-row"},
    {RowNormSchedule::Kind::ChannelsLastGroups, "channels-last-groups"},
    {RowNormSchedule::Kind::ClusterRow, "cluster-row"}};

llvm::StringRef RowNormSchedule::kindName(Kind kind) {
  for (auto [k, name] : kKindNames)
    if (k == kind)
      return name;
  return "?";
}

std::optional<RowNormSchedule::Kind>
RowNormSchedule::kindNamed(llvm::StringRef name) {
  for (auto [k, n] : kKindNames)
    if (name == n)
      return k;
  return std::nullopt;
}

std::string RowNormSchedule::str() const {
  std::string s = kindName(kind).str() +
                  " threads-per-row=" + std::to_string(threadsPerRow) +
                  " rows-per-block=" + std::to_string(rowsPerBlock) +
                  " vector=" + std::to_string(vectorWidth) +
                  " registers=" + std::to_string(vectorsPerThread);
  if (kind == Kind::SplitRow)
    s += " chunk=" + std::to_string(chunkElements);
  if (kind == Kind::ChannelsLastGroups)
    s += " positions-per-part=" + std::to_string(chunkElements);
  if (kind == Kind::ClusterRow)
    s += " cluster=" + std::to_string(clusterBlocks);
  if (kind == Kind::ChannelsLastGroups)
    s += " finish-warps=" + std::to_string(finishWarps);
  if (residentBlocks)
    s += " resident-blocks=" + std::to_string(residentBlocks);
  if (partsFromResidency)
    s += " parts-from-residency";
  if (peeled)
    s += " peeled";
  if (paramsInRegisters)
    s += " params-in-registers";
  if (streaming)
    s += " streaming";
  return s;
}

bool cuda::isFullSize(ForcedRowNormKind forced) {
  return forced >= ForcedRowNormKind::WarpRowsFull;
}

ForcedRowNormKind cuda::plainKind(ForcedRowNormKind forced) {
  if (!isFullSize(forced))
    return forced;
  return static_cast<ForcedRowNormKind>(
      static_cast<int>(forced) -
      static_cast<int>(ForcedRowNormKind::WarpRowsFull) +
      static_cast<int>(ForcedRowNormKind::WarpRows));
}

FailureOr<ForcedRowNormKind>
cuda::parseForcedRowNormKind(llvm::StringRef name) {
  if (name.consume_back(":full")) {
    FailureOr<ForcedRowNormKind> plain = parseForcedRowNormKind(name);
    if (failed(plain) || *plain == ForcedRowNormKind::Auto ||
        isFullSize(*plain))
      return failure();
    return static_cast<ForcedRowNormKind>(
        static_cast<int>(*plain) -
        static_cast<int>(ForcedRowNormKind::WarpRows) +
        static_cast<int>(ForcedRowNormKind::WarpRowsFull));
  }
  return llvm::StringSwitch<FailureOr<ForcedRowNormKind>>(name)
      .Case("auto", ForcedRowNormKind::Auto)
      .Case("warp-rows", ForcedRowNormKind::WarpRows)
      .Case("block-row-registers", ForcedRowNormKind::BlockRowInRegisters)
      .Case("block-row-streaming", ForcedRowNormKind::BlockRowStreaming)
      .Case("split-row", ForcedRowNormKind::SplitRow)
      .Case("channels-last-groups", ForcedRowNormKind::ChannelsLastGroups)
      .Case("channels-last-one-kernel",
            ForcedRowNormKind::ChannelsLastOneKernel)
      .Case("cluster-row", ForcedRowNormKind::ClusterRow)
      .Default(failure());
}

/// The kind a forced choice names (Auto: none).
static std::optional<RowNormSchedule::Kind>
forcedKind(ForcedRowNormKind forced) {
  using Kind = RowNormSchedule::Kind;
  switch (plainKind(forced)) {
  case ForcedRowNormKind::WarpRows:
    return Kind::WarpRows;
  case ForcedRowNormKind::BlockRowInRegisters:
    return Kind::BlockRowInRegisters;
  case ForcedRowNormKind::BlockRowStreaming:
    return Kind::BlockRowStreaming;
  case ForcedRowNormKind::SplitRow:
    return Kind::SplitRow;
  case ForcedRowNormKind::ClusterRow:
    return Kind::ClusterRow;
  default: // Auto and the channels-last groups
    return std::nullopt;
  }
}

/// Gives a ChannelsLastGroups schedule `s` its one-kernel variant:
/// `vectors` vectors a thread (0: the most kMaxElementsPerThread allows,
/// half as many of f64), whole warps a block (its finish shuffles), and the
/// blocks an SM holds at kChannelsLastOneKernelRegisters registers a
/// thread. `s.chunkElements` becomes one sweep of the block where it was
/// less. None where a block would pass 1024 threads.
static void offerOneKernel(RowNormSchedule &s, Type elementType,
                           const GpuTarget &target, int64_t vectors) {
  int64_t elements = kMaxElementsPerThread;
  if (elementType.getIntOrFloatBitWidth() > 32)
    elements /= 2;
  if (!vectors)
    vectors = std::max<int64_t>(1, elements / s.vectorWidth);
  int64_t threads = s.oneKernelRows() * s.threadsPerRow;
  if (threads > GpuTarget::kMaxThreadsPerBlock)
    return;
  s.vectorsPerThread = vectors;
  s.residentBlocks =
      std::clamp<int64_t>(target.registersPerMultiprocessor /
                              (threads * kChannelsLastOneKernelRegisters),
                          1, target.blocksPerMultiprocessor(threads));
  s.chunkElements = std::max(s.chunkElements, s.rowsPerBlock);
}

int64_t RowNormSchedule::oneKernelRows() const {
  return llvm::alignTo(rowsPerBlock,
                       GpuTarget::kWarpSize /
                           std::gcd(threadsPerRow, GpuTarget::kWarpSize));
}

/// The vectors of `width` elements of `elementType` a thread of a split
/// row's block holds in registers (its part of a chunk).
static int64_t splitVectorsPerThread(int64_t width, Type elementType) {
  int64_t elements = kSplitMaxElementsPerThread;
  if (elementType.getIntOrFloatBitWidth() > 32)
    elements /= 2; // f64 sums: two registers an element
  return std::clamp<int64_t>(elements / width, 1, kSplitVectorsPerThread);
}

/// Shapes `s` (of kind WarpRows or BlockRowInRegisters) to hold a row of
/// `vectors` vectors in registers: a power-of-two part of a warp per row
/// with 256-thread blocks, or a block of whole warps: kBlockRowThreads
/// threads with up to `maxVectorsPerThread` vectors each (several loads in
/// flight a thread, fewer threads in each block-wide reduction), more
/// threads (up to 1024) only for rows longer than that.
static void shapeRowInRegisters(RowNormSchedule &s, int64_t vectors,
                                int64_t maxVectorsPerThread) {
  if (s.kind == RowNormSchedule::Kind::WarpRows) {
    s.threadsPerRow =
        std::min<int64_t>(GpuTarget::kWarpSize,
                          llvm::PowerOf2Ceil(std::max<int64_t>(1, vectors)));
    s.vectorsPerThread =
        std::max<int64_t>(1, llvm::divideCeil(vectors, s.threadsPerRow));
    s.rowsPerBlock = kWarpRowsBlockSize / s.threadsPerRow;
    return;
  }
  int64_t perThread =
      std::clamp<int64_t>(llvm::divideCeil(vectors, kBlockRowThreads), 1,
                          std::max<int64_t>(1, maxVectorsPerThread));
  perThread = std::max<int64_t>(
      perThread, llvm::divideCeil(vectors, GpuTarget::kMaxThreadsPerBlock));
  s.vectorsPerThread = perThread;
  s.threadsPerRow =
      llvm::alignTo(std::max<int64_t>(1, llvm::divideCeil(vectors, perThread)),
                    GpuTarget::kWarpSize);
  s.rowsPerBlock = 1;
}

/// Shapes `s` as a ClusterRow holding a row of `vectors` vectors: blocks of
/// `blockThreads` threads with up to `maxVectorsPerThread` vectors each, as
/// few blocks as hold the row (at least `minBlocks`, at most
/// kMaxClusterBlocks), more threads a block (up to 1024) only where 8
/// blocks do not hold it; then the fewest vectors a thread that cover the
/// row. False where the row needs more than 8 blocks of 1024 threads.
static bool shapeClusterRow(RowNormSchedule &s, int64_t vectors,
                            int64_t blockThreads, int64_t maxVectorsPerThread,
                            int64_t minBlocks) {
  int64_t threads = llvm::divideCeil(vectors, maxVectorsPerThread);
  int64_t blocks = std::clamp<int64_t>(llvm::divideCeil(threads, blockThreads),
                                       minBlocks, kMaxClusterBlocks);
  int64_t perBlock = llvm::alignTo(
      std::max<int64_t>(blockThreads, llvm::divideCeil(threads, blocks)),
      GpuTarget::kWarpSize);
  if (perBlock > GpuTarget::kMaxThreadsPerBlock)
    return false;
  s.kind = RowNormSchedule::Kind::ClusterRow;
  s.clusterBlocks = blocks;
  s.threadsPerRow = perBlock;
  s.rowsPerBlock = 1;
  s.vectorsPerThread =
      std::max<int64_t>(1, llvm::divideCeil(vectors, blocks * perBlock));
  return true;
}

/// The kind of a row of `vectors` vectors longer than one block of 256
/// threads holds: a cluster where the target has them and 8 blocks of
/// `maxThreads` threads hold it at `clusterVectorsPerThread` a thread, else
/// a block of up to `maxThreads` threads at `maxVectorsPerThread`, else a
/// split row.
static RowNormSchedule::Kind
longRowKind(int64_t vectors, const GpuTarget &target, int64_t maxThreads,
            int64_t maxVectorsPerThread, int64_t clusterVectorsPerThread) {
  using Kind = RowNormSchedule::Kind;
  if (target.clusters &&
      vectors <= kMaxClusterBlocks * maxThreads * clusterVectorsPerThread)
    return Kind::ClusterRow;
  if (vectors <= maxThreads * maxVectorsPerThread)
    return Kind::BlockRowInRegisters;
  return Kind::SplitRow;
}

RowNormSchedule cuda::selectRowNormSchedule(int64_t cols, Type elementType,
                                            const GpuTarget &target,
                                            ForcedRowNormKind forced,
                                            bool perColumnParams,
                                            int64_t rows) {
  RowNormSchedule s;
  s.vectorWidth = vectorWidthFor(cols, elementType);
  bool dynamic = ShapedType::isDynamic(cols);
  int64_t widest = vectorWidthFor(int64_t(1) << 20, elementType);
  if (s.vectorWidth < widest && (dynamic || cols >= kPeelMinVectors * widest)) {
    s.vectorWidth = widest;
    s.peeled = true;
  }
  // Whole vectors of a row: a peeled row has at most cols / vw of them.
  int64_t vectors = dynamic    ? 0
                    : s.peeled ? cols / s.vectorWidth
                               : llvm::divideCeil(cols, s.vectorWidth);
  int64_t maxVectorsPerThread =
      std::max<int64_t>(1, kMaxElementsPerThread / s.vectorWidth);
  // A cluster's blocks reach 1024 threads, 64 registers a thread: f64
  // rows keep half as many elements (as many registers as f32), and even
  // so blocks of 1024 threads spilled them (ptxas 13.0: 528 bytes in
  // clusters at 131072 columns, 768 in a block row at 32768), so f64 rows
  // take blocks of at most 512 threads.
  bool wide = elementType.getIntOrFloatBitWidth() > 32;
  int64_t clusterVectorsPerThread =
      wide ? std::max<int64_t>(1, maxVectorsPerThread / 2)
           : maxVectorsPerThread;
  int64_t maxThreads =
      wide ? kRowMaxThreadsF64 : int64_t(GpuTarget::kMaxThreadsPerBlock);

  using Kind = RowNormSchedule::Kind;
  Kind kind;
  if (std::optional<Kind> f = forcedKind(forced))
    kind = *f;
  else if (dynamic)
    kind = Kind::SplitRow;
  else if (cols <= kWarpRowMaxElements)
    kind = Kind::WarpRows;
  else if (vectors <= kBlockRowThreads * maxVectorsPerThread)
    kind = Kind::BlockRowInRegisters;
  else
    kind = longRowKind(vectors, target, maxThreads, maxVectorsPerThread,
                       clusterVectorsPerThread);
  // Registers need a known row length; clusters a target that has them.
  if (dynamic && kind != Kind::BlockRowStreaming && kind != Kind::SplitRow)
    kind = Kind::SplitRow;
  if (kind == Kind::ClusterRow && !target.clusters)
    return selectRowNormSchedule(cols, elementType, target,
                                 ForcedRowNormKind::Auto, perColumnParams,
                                 rows);
  s.kind = kind;

  switch (kind) {
  case Kind::ClusterRow:
  case Kind::WarpRows:
  case Kind::BlockRowInRegisters:
    if (kind == Kind::ClusterRow) {
      bool small = forced == ForcedRowNormKind::ClusterRow;
      if (!shapeClusterRow(s, std::max<int64_t>(1, vectors),
                           small ? kForcedClusterBlockSize : kBlockRowThreads,
                           small ? std::min(kForcedClusterVectorsPerThread,
                                            clusterVectorsPerThread)
                                 : clusterVectorsPerThread,
                           // (forced: a cluster, even of a row one block
                           // holds)
                           forced != ForcedRowNormKind::Auto ? 2 : 1)) {
        s.kind = Kind::SplitRow; // longer than any cluster holds (forced)
        return selectRowNormSchedule(cols, elementType, target,
                                     isFullSize(forced)
                                         ? ForcedRowNormKind::SplitRowFull
                                         : ForcedRowNormKind::SplitRow,
                                     perColumnParams, rows);
      }
    } else {
      shapeRowInRegisters(s, vectors, maxVectorsPerThread);
    }
    if (s.peeled && s.threadsPerRow < s.vectorWidth) {
      // A head and a tail element per thread at most.
      s.threadsPerRow = s.vectorWidth;
      s.vectorsPerThread = llvm::divideCeil(vectors, s.threadsPerRow);
      if (kind == Kind::WarpRows)
        s.rowsPerBlock = kWarpRowsBlockSize / s.threadsPerRow;
    }
    s.paramsInRegisters =
        perColumnParams && !s.peeled &&
        s.vectorsPerThread * s.vectorWidth <= kParamsInRegistersMaxElements;
    s.streaming = !ShapedType::isDynamic(rows) &&
                  rows * cols * (elementType.getIntOrFloatBitWidth() / 8) >
                      target.l2Bytes;
    break;
  case Kind::BlockRowStreaming:
    s.threadsPerRow = kStreamingBlockSize;
    s.vectorsPerThread = 0;
    s.rowsPerBlock = 1;
    break;
  case Kind::ChannelsLastGroups: // not a row norm's (never chosen above)
  case Kind::SplitRow: {
    bool small = forced == ForcedRowNormKind::SplitRow;
    s.kind = Kind::SplitRow;
    s.threadsPerRow = small ? kForcedSplitBlockSize : kStreamingBlockSize;
    s.vectorsPerThread =
        small ? kForcedSplitVectorsPerThread
              : splitVectorsPerThread(s.vectorWidth, elementType);
    s.rowsPerBlock = 1;
    s.chunkElements = s.threadsPerRow * s.vectorWidth * s.vectorsPerThread;
    break;
  }
  }
  return s;
}

RowNormSchedule
cuda::selectGroupNormSchedule(int64_t elementsPerGroup, int64_t contiguous,
                              Type elementType, const GpuTarget &target,
                              ForcedRowNormKind forced, int64_t nhwcChannels,
                              int64_t positions, int64_t groups) {
  RowNormSchedule s;
  s.vectorWidth = vectorWidthFor(contiguous, elementType);
  int64_t bytes = std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8);
  bool narrowRuns = !ShapedType::isDynamic(contiguous) &&
                    contiguous * bytes <= kChannelsLastNarrowRunBytes;
  // A small group (an instance norm of a 7x7 to 28x28 image) is a warp's,
  // or part of one, in registers: one kernel, x read once, several groups a
  // block. A split group of 49 elements left most of a 512-thread block
  // idle, in two kernels: 0.02-0.07 of a copy's speed on an H100. Not in
  // NHWC where a group's run at a position is at most 16 bytes (an
  // instance norm's one channel): a warp row's lanes would each read one
  // run, C elements from the next, 4 to 16 bytes of each 32-byte sector;
  // across the channels below every sector is whole. (Not f64: its one
  // kernel there spilled 64 bytes under ptxas 13.0 at sm_90.)
  bool acrossChannels =
      narrowRuns && bytes <= 4 && !ShapedType::isDynamic(nhwcChannels) &&
      nhwcChannels > 0 &&
      nhwcChannels / vectorWidthFor(nhwcChannels, elementType) <=
          GpuTarget::kMaxThreadsPerBlock;
  if (forced == ForcedRowNormKind::Auto &&
      !ShapedType::isDynamic(elementsPerGroup) &&
      elementsPerGroup <= kWarpRowMaxElements && !acrossChannels) {
    s.kind = RowNormSchedule::Kind::WarpRows;
    shapeRowInRegisters(
        s,
        llvm::divideCeil(std::max<int64_t>(1, elementsPerGroup), s.vectorWidth),
        kMaxElementsPerThread / s.vectorWidth);
    return s;
  }
  // NHWC: a block across the channels of each position, whole vectors of
  // them. The split row below reads a group's run at each position (10
  // channels of f32 in 8-byte vectors, 1280 bytes apart, for C=320 in 32
  // groups): 0.16-0.59 of a copy's speed on an H100.
  //
  // Where a group's run is wider, the split row did as well or better on
  // an H100 (2026-11-27, bench/README.md): its two kernels beat the three
  // below on the small activations with 20- to 40-channel groups, and tie
  // or lose on images of fewer than 2048 positions; the three kernels won
  // by 3x at 4-channel groups (16 bytes a run) and by 1.1-1.4x at 64x64
  // images with 10-channel groups (40 bytes of f32, 20 of bf16).
  bool manyPositions = !ShapedType::isDynamic(contiguous) &&
                       !ShapedType::isDynamic(elementsPerGroup) &&
                       contiguous * bytes <= kChannelsLastMaxRunBytes &&
                       elementsPerGroup / std::max<int64_t>(1, contiguous) >=
                           kChannelsLastMinPositions;
  bool oneKernelForced =
      plainKind(forced) == ForcedRowNormKind::ChannelsLastOneKernel;
  bool channelsLast =
      plainKind(forced) == ForcedRowNormKind::ChannelsLastGroups ||
      oneKernelForced ||
      (forced == ForcedRowNormKind::Auto && (narrowRuns || manyPositions));
  if (channelsLast && !ShapedType::isDynamic(nhwcChannels) &&
      nhwcChannels > 0) {
    int64_t vw = vectorWidthFor(nhwcChannels, elementType);
    int64_t vectors = nhwcChannels / vw;
    if (vectors <= GpuTarget::kMaxThreadsPerBlock) {
      s.kind = RowNormSchedule::Kind::ChannelsLastGroups;
      s.vectorWidth = vw;
      s.threadsPerRow = vectors;
      s.rowsPerBlock =
          std::max<int64_t>(1, kChannelsLastBlockThreads / vectors);
      s.vectorsPerThread = 0;
      if (forced == ForcedRowNormKind::ChannelsLastGroups) {
        s.chunkElements = s.rowsPerBlock;
        return s;
      }
      if (oneKernelForced) {
        offerOneKernel(s, elementType, target, /*vectors=*/2);
        return s;
      }
      // One block per resident slot of the SMs, each part a multiple of
      // the positions one sweep of the block takes: planned here from the
      // threads, sized when the kernels are loaded from what the device
      // holds of them.
      s.partsFromResidency = true;
      if (ShapedType::isDynamic(positions)) {
        s.chunkElements = s.rowsPerBlock * kSplitVectorsPerThread;
        return s;
      }
      int64_t resident = target.multiprocessors *
                         target.blocksPerMultiprocessor(s.blockSize());
      s.chunkElements = llvm::alignTo(
          std::max<int64_t>(1, llvm::divideCeil(positions, resident)),
          s.rowsPerBlock);
      // One kernel where the device holds the tensor in registers: each
      // thread its most vectors (the fewest parts to combine; the grid
      // still about fills the SMs at the shapes it serves).
      if (!ShapedType::isDynamic(elementsPerGroup) &&
          !ShapedType::isDynamic(contiguous) && contiguous > 0 &&
          elementsPerGroup % contiguous == 0) {
        int64_t spatial = elementsPerGroup / contiguous;
        int64_t images = spatial ? positions / spatial : 0;
        RowNormSchedule one = s;
        offerOneKernel(one, elementType, target, /*vectors=*/0);
        if (one.residentBlocks &&
            images * int64_t(llvm::divideCeil(spatial, one.oneKernelPart())) <=
                target.multiprocessors * one.residentBlocks)
          s = one;
      }
      return s;
    }
  }
  // NCHW (known sizes; an NHWC group of a known size has a known channel
  // count): a group is one contiguous run of its channels' planes, a row
  // the row norms' register schedules read once, coalesced: a block where
  // it fits, else a cluster (sm_90), else a block of up to 1024 threads.
  // The split row below reads it twice, in two kernels (0.59-0.63 of a
  // copy's speed at ResNet's 32 groups of 56x56 images on an H100).
  // Vectors divide the planes, so each lies in one channel. Not f64: its
  // block row of 2560 (2 x 320 channels of 16 x 16 in 32 groups, with a
  // fused SiLU) spilled under ptxas 13.0 at sm_90.
  if (forced == ForcedRowNormKind::Auto &&
      elementType.getIntOrFloatBitWidth() <= 32 &&
      !ShapedType::isDynamic(elementsPerGroup) &&
      !ShapedType::isDynamic(contiguous) &&
      ShapedType::isDynamic(nhwcChannels) && contiguous > 0 &&
      elementsPerGroup % contiguous == 0) {
    int64_t vectors = elementsPerGroup / s.vectorWidth;
    int64_t maxVectorsPerThread =
        std::max<int64_t>(1, kMaxElementsPerThread / s.vectorWidth);
    if (vectors <= kBlockRowThreads * maxVectorsPerThread) {
      s.kind = RowNormSchedule::Kind::BlockRowInRegisters;
      shapeRowInRegisters(s, vectors, maxVectorsPerThread);
      return s;
    }
    if (target.clusters &&
        shapeClusterRow(s, vectors, kBlockRowThreads, maxVectorsPerThread, 1))
      return s;
    if (vectors <= GpuTarget::kMaxThreadsPerBlock * maxVectorsPerThread) {
      s.kind = RowNormSchedule::Kind::BlockRowInRegisters;
      shapeRowInRegisters(s, vectors, maxVectorsPerThread);
      return s;
    }
  }
  s.kind = RowNormSchedule::Kind::SplitRow;
  bool small = forced == ForcedRowNormKind::SplitRow;
  s.threadsPerRow = small ? kForcedSplitBlockSize : kStreamingBlockSize;
  s.rowsPerBlock = 1;
  s.vectorsPerThread = small
                           ? kForcedSplitVectorsPerThread
                           : splitVectorsPerThread(s.vectorWidth, elementType);
  // Where the group's size is unknown each vector's address takes 64-bit
  // arithmetic on sizes read at run time: fewer vectors a thread in flight
  // (8 held the NHWC f16 group norm at 8 bytes of spills at sm_90).
  if (ShapedType::isDynamic(contiguous) ||
      ShapedType::isDynamic(elementsPerGroup))
    s.vectorsPerThread =
        std::min(s.vectorsPerThread, kSplitDynamicRunVectorsPerThread);
  s.chunkElements = s.threadsPerRow * s.vectorWidth * s.vectorsPerThread;
  // Too few groups to fill the SMs (batch 1 of a UNet's NCHW GroupNorm: 32
  // groups, 128 blocks of full chunks): smaller chunks, so that the blocks
  // about fill them once, none under one sweep of the block.
  if ((forced == ForcedRowNormKind::Auto || isFullSize(forced)) &&
      !ShapedType::isDynamic(groups) &&
      !ShapedType::isDynamic(elementsPerGroup) && groups > 0) {
    int64_t sweep = s.threadsPerRow * s.vectorWidth;
    int64_t resident =
        target.multiprocessors * target.blocksPerMultiprocessor(s.blockSize());
    if (groups * int64_t(llvm::divideCeil(elementsPerGroup, s.chunkElements)) <
        resident)
      s.chunkElements = std::clamp<int64_t>(
          llvm::alignTo(llvm::divideCeil(groups * elementsPerGroup, resident),
                        sweep),
          sweep, s.chunkElements);
  }
  return s;
}

std::string RowNormGradSchedule::str() const {
  std::string s = rows.str();
  if (rows.kind != RowNormSchedule::Kind::SplitRow)
    s += " chunk=" + std::to_string(rows.chunkElements);
  return s + " max-blocks=" + std::to_string(maxBlocks) + " " +
         params.words("params-");
}

RowNormGradSchedule cuda::selectRowNormGradSchedule(int64_t cols,
                                                    Type elementType,
                                                    const GpuTarget &target,
                                                    ForcedRowNormKind forced) {
  // The channels-last group schedule is the forward group norms' alone.
  if (plainKind(forced) == ForcedRowNormKind::ChannelsLastGroups ||
      plainKind(forced) == ForcedRowNormKind::ChannelsLastOneKernel)
    forced = ForcedRowNormKind::Auto;
  // Sized for tests: small split chunks and clusters, two blocks.
  bool testSized = forced != ForcedRowNormKind::Auto && !isFullSize(forced);
  RowNormGradSchedule g;
  RowNormSchedule &s = g.rows;
  s.vectorWidth = vectorWidthFor(cols, elementType);
  bool dynamic = ShapedType::isDynamic(cols);
  // Rows no 16-byte vector divides are peeled as the forward rows are
  // (5121 bf16 columns read 2 bytes at a time ran at 0.24-0.33 of a copy
  // on the H100 and H200, 2026-11-27). A chunk's vectors, head and tail
  // hold its columns, so the chunks are sized for ceil(cols / vw) vectors
  // and a row in registers is one chunk.
  int64_t widest = vectorWidthFor(int64_t(1) << 20, elementType);
  if (s.vectorWidth < widest && (dynamic || cols >= kPeelMinVectors * widest)) {
    s.vectorWidth = widest;
    s.peeled = true;
  }
  int64_t vectors = dynamic ? 0 : llvm::divideCeil(cols, s.vectorWidth);
  int64_t maxVectorsPerThread =
      std::max<int64_t>(1, kGradMaxElementsPerThread / s.vectorWidth);
  int64_t maxThreads = elementType.getIntOrFloatBitWidth() > 32
                           ? kGradRowMaxThreadsF64
                           : kGradRowMaxThreads;

  using Kind = RowNormSchedule::Kind;
  Kind kind;
  if (std::optional<Kind> f = forcedKind(forced))
    kind = *f == Kind::BlockRowStreaming ? Kind::SplitRow : *f;
  else if (vectors <= GpuTarget::kWarpSize * maxVectorsPerThread)
    kind = Kind::WarpRows;
  // A row one block holds keeps one block (8192 f32 columns in 512 threads
  // ran at 0.88 to 0.92 of a copy on the H100, 2026-11-27); longer rows
  // take a cluster of such blocks, or split.
  else if (vectors <= maxThreads * maxVectorsPerThread)
    kind = Kind::BlockRowInRegisters;
  else
    kind = longRowKind(vectors, target, maxThreads, maxVectorsPerThread,
                       maxVectorsPerThread);
  if (dynamic || (kind == Kind::ClusterRow && !target.clusters))
    kind = Kind::SplitRow;
  s.kind = kind;

  switch (kind) {
  case Kind::ClusterRow: {
    // Blocks of a cluster per row, each of its own chunk of the row (block
    // rank r the columns of chunk r), read once (the split row reads dy and
    // x twice, in two kernels); forced, small blocks, so that small rows
    // reach 2 to 8 of them.
    bool small = forced == ForcedRowNormKind::ClusterRow;
    if (shapeClusterRow(s, std::max<int64_t>(1, vectors),
                        small ? kForcedClusterBlockSize : kBlockRowThreads,
                        small ? std::min(kForcedClusterVectorsPerThread,
                                         maxVectorsPerThread)
                              : maxVectorsPerThread,
                        small ? 2 : 1)) {
      int64_t chunk = s.vectorsPerThread * s.threadsPerRow * s.vectorWidth;
      s.clusterBlocks = llvm::divideCeil(cols, chunk);
      if (s.clusterBlocks >= 2)
        break;
    }
    // A row a cluster does not hold, or one block does.
    s.clusterBlocks = 1;
    s.kind = Kind::SplitRow;
    [[fallthrough]];
  }
  case Kind::SplitRow: {
    s.threadsPerRow = testSized ? kForcedSplitBlockSize : kGradSplitBlockSize;
    s.vectorsPerThread =
        testSized ? kForcedSplitVectorsPerThread : maxVectorsPerThread;
    s.rowsPerBlock = 1;
    break;
  }
  case Kind::WarpRows:
  case Kind::BlockRowInRegisters:
    shapeRowInRegisters(s, vectors, maxVectorsPerThread);
    if (s.peeled && s.threadsPerRow < s.vectorWidth) {
      // A head and a tail element per thread at most.
      s.threadsPerRow = s.vectorWidth;
      s.vectorsPerThread = llvm::divideCeil(vectors, s.threadsPerRow);
      if (kind == Kind::WarpRows)
        s.rowsPerBlock = kWarpRowsBlockSize / s.threadsPerRow;
    }
    break;
  default:
    llvm_unreachable("a gradient's rows are warp, block, cluster or split");
  }
  s.chunkElements = s.vectorsPerThread * s.threadsPerRow * s.vectorWidth;
  g.maxBlocks = testSized ? kForcedGradBlocks
                          : target.multiprocessors *
                                target.blocksPerMultiprocessor(s.blockSize());
  return g;
}

std::string ChannelReductionSchedule::str() const {
  if (oneKernel)
    return "channels-first-one-kernel threads-per-row=" +
           std::to_string(threadsPerRow) +
           " rows-per-block=" + std::to_string(rowsPerBlock) +
           " vector=" + std::to_string(vectorWidth) +
           " registers=" + std::to_string(vectorsPerThread) +
           " max-blocks=" + std::to_string(maxBlocks);
  return std::string(channelsLast ? "channels-last" : "channels-first") +
         " threads-per-row=" + std::to_string(threadsPerRow) +
         " rows-per-block=" + std::to_string(rowsPerBlock) +
         " vector=" + std::to_string(vectorWidth) +
         " registers=" + std::to_string(vectorsPerThread) +
         " max-blocks=" + std::to_string(maxBlocks) + " " +
         totals.words("totals-") +
         (elementwise
              ? " elementwise-block=" + std::to_string(elementwise->blockSize) +
                    " elementwise-vector=" +
                    std::to_string(elementwise->vectorWidth) +
                    (elementwise->peeled ? " elementwise-peeled" : "") +
                    " elementwise-min-blocks-per-sm=" +
                    std::to_string(elementwise->minBlocksPerMultiprocessor)
              : "");
}

ChannelReductionSchedule
cuda::selectChannelReductionSchedule(int64_t channels, int64_t inner,
                                     bool channelsLast, Type elementType,
                                     const GpuTarget &target) {
  ChannelReductionSchedule s;
  s.channelsLast = channelsLast;
  s.maxBlocks = target.multiprocessors *
                target.blocksPerMultiprocessor(kChannelReductionBlockSize);
  if (!channelsLast) {
    s.vectorWidth = vectorWidthFor(inner, elementType);
    s.threadsPerRow = kChannelReductionBlockSize;
    return s;
  }
  s.vectorWidth = vectorWidthFor(channels, elementType);
  int64_t vectors = std::max<int64_t>(
      1, llvm::divideCeil(std::max<int64_t>(channels, 1), s.vectorWidth));
  s.threadsPerRow = std::min<int64_t>(kChannelReductionBlockSize,
                                      llvm::PowerOf2Ceil(vectors));
  s.vectorsPerThread = llvm::divideCeil(vectors, s.threadsPerRow);
  s.rowsPerBlock = kChannelReductionBlockSize / s.threadsPerRow;
  return s;
}

ChannelReductionSchedule cuda::selectBatchNormOneKernelSchedule(
    int64_t inner, Type elementType, int64_t inputs, const GpuTarget &target) {
  ChannelReductionSchedule s;
  s.channelsLast = false;
  s.oneKernel = true;
  s.threadsPerRow = kChannelReductionBlockSize;
  s.vectorWidth = vectorWidthFor(inner, elementType);
  // About 64 bytes of the inputs in flight a thread: 4 vectors of 16 bytes
  // of x (the gradient: 2 of dy and 2 of x; 16-bit x alone 3, 48 bytes), up
  // to 8 narrower ones (odd planes, such as ResNet's 7x7, take single
  // elements).
  int64_t bytes = std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8);
  int64_t inFlight = inputs <= 1 && bytes == 2
                         ? kBatchNormOneKernel16BitBytesInFlight
                         : kBatchNormOneKernelBytesInFlight;
  s.vectorsPerThread = std::clamp<int64_t>(
      inFlight / (s.vectorWidth * bytes * std::max<int64_t>(1, inputs)), 1,
      kBatchNormOneKernelMaxVectors);
  s.maxBlocks = target.multiprocessors *
                target.blocksPerMultiprocessor(kChannelReductionBlockSize);
  return s;
}

std::string PartialTotalsSchedule::str() const {
  return "partial-totals " + words("");
}

std::string PartialTotalsSchedule::words(llvm::StringRef prefix) const {
  return prefix.str() + "warps=" + std::to_string(warps) + " " + prefix.str() +
         "unroll=" + std::to_string(unroll);
}

PartialTotalsSchedule
cuda::selectPartialTotalsSchedule(int64_t parts, const GpuTarget &target) {
  (void)target;
  PartialTotalsSchedule s;
  // A dynamic count keeps the default; a known one gets a warp per run of
  // `unroll` parts, up to a full block (a single part: one warp).
  if (parts != ShapedType::kDynamic) {
    s.unroll = std::clamp<int64_t>(parts, 1, s.unroll);
    int64_t runs = std::max<int64_t>(1, llvm::divideCeil(parts, s.unroll));
    s.warps =
        std::min<int64_t>(GpuTarget::kMaxThreadsPerBlock / GpuTarget::kWarpSize,
                          static_cast<int64_t>(llvm::PowerOf2Ceil(runs)));
  }
  return s;
}

PartialTotalsSchedule
cuda::selectMomentsMergeSchedule(int64_t parts, Type acc,
                                 const GpuTarget &target) {
  PartialTotalsSchedule s = selectPartialTotalsSchedule(parts, target);
  s.warps = std::min<int64_t>(s.warps, acc.isF64() ? 8 : 16);
  return s;
}

int64_t LinalgReductionSchedule::resultsPerBlock() const {
  switch (kind) {
  case Kind::ThreadPerResult:
    return blockSize;
  case Kind::WarpPerResult:
    return blockSize / GpuTarget::kWarpSize;
  case Kind::BlockPerResult:
    return 1;
  case Kind::BlockColumns:
    return GpuTarget::kWarpSize;
  }
  llvm_unreachable("unknown reduction schedule");
}

/// A linalg reduction's kind as its schedule's first word.
static const char *kindWord(LinalgReductionSchedule::Kind kind) {
  using Kind = LinalgReductionSchedule::Kind;
  return kind == Kind::ThreadPerResult ? "thread-per-result"
         : kind == Kind::WarpPerResult ? "warp-per-result"
         : kind == Kind::BlockColumns  ? "block-columns"
                                       : "block-per-result";
}

std::string LinalgReductionSchedule::str() const {
  return std::string(kindWord(kind)) + " block=" + std::to_string(blockSize) +
         (splits > 1 ? " splits=" + std::to_string(splits) : "") +
         (vectorWidth > 1 ? " vector=" + std::to_string(vectorWidth) : "");
}

std::string LinalgReductionSchedule::str(int64_t elements) const {
  return std::string(kindWord(kind)) + " block=" + std::to_string(blockSize) +
         " elements=" +
         (ShapedType::isDynamic(elements) ? std::string("?")
                                          : std::to_string(elements)) +
         (splits > 1 ? " splits=" + std::to_string(splits) : "") +
         (vectorWidth > 1 ? " vector=" + std::to_string(vectorWidth) : "");
}

LinalgReductionSchedule
cuda::selectLinalgReductionSchedule(const LinalgReductionShape &shape,
                                    const GpuTarget &target) {
  using Kind = LinalgReductionSchedule::Kind;
  int64_t results = shape.results, elements = shape.elements,
          rowVector = shape.rowVector;
  bool contiguous = shape.contiguous, tree = shape.tree;
  LinalgReductionSchedule s;
  s.blockSize = kPointwiseBlockSize;
  // An unknown count of results: what serves any size, not split (a warp
  // per contiguous result, block columns otherwise).
  if (tree && ShapedType::isDynamic(results)) {
    s.kind = contiguous ? Kind::WarpPerResult : Kind::BlockColumns;
    return s;
  }
  // Known results of unknown length (a whole-tensor sum of a dynamic
  // tensor): too few warps of results to fill the device take a block per
  // contiguous result; and block rows or columns too few for the device
  // are split into about a wave of parts, each a run-time share of the
  // elements (empty parts give the combiner's identity).
  if (tree && ShapedType::isDynamic(elements)) {
    s.kind = !contiguous ? Kind::BlockColumns
             : int64_t(llvm::divideCeil(results, kPointwiseBlockSize /
                                                     GpuTarget::kWarpSize)) <
                     target.multiprocessors
                 ? Kind::BlockPerResult
                 : Kind::WarpPerResult;
    int64_t blocks = llvm::divideCeil(results, s.resultsPerBlock());
    if (s.kind != Kind::WarpPerResult && blocks < target.multiprocessors) {
      int64_t wave =
          target.multiprocessors * target.blocksPerMultiprocessor(s.blockSize);
      s.splits = std::clamp<int64_t>(llvm::divideCeil(wave, blocks), 1,
                                     LinalgReductionSchedule::kMaxSplits);
    }
    return s;
  }
  // The threads the device holds at once.
  int64_t resident =
      target.multiprocessors * target.maxThreadsPerMultiprocessor;
  if (!tree || elements <= 1)
    s.kind = Kind::ThreadPerResult;
  // Over an outer dimension: the warps of a block share 32 neighbouring
  // results' elements (32 warps where those blocks would not fill the
  // multiprocessors); a thread per result where the results fill the
  // device and their elements are few, or where they are very few.
  else if (!contiguous) {
    bool share = elements > kColumnsMaxThreadElements ||
                 (results < resident && elements >= kColumnsMinElements);
    s.kind = share ? Kind::BlockColumns : Kind::ThreadPerResult;
    if (s.kind == Kind::BlockColumns &&
        int64_t(llvm::divideCeil(results, GpuTarget::kWarpSize)) <
            target.multiprocessors)
      s.blockSize = GpuTarget::kMaxThreadsPerBlock;
  }
  // A row longer than a warp can take at 64 elements a lane (the sums of an
  // exported LayerNorm over 32768 columns) gets a whole block.
  else if (elements > kLinalgWarpRowMaxElements)
    s.kind = Kind::BlockPerResult;
  else
    s.kind = Kind::WarpPerResult;
  // Fewer blocks than multiprocessors (a sum over a whole tensor, a column
  // sum of a few columns): each result's elements split into parts,
  // about a wave of blocks in all, none under kSplitMinThreadElements
  // elements a thread.
  bool byBlocks =
      s.kind == Kind::BlockPerResult || s.kind == Kind::BlockColumns;
  int64_t blocks = llvm::divideCeil(results, s.resultsPerBlock());
  if (byBlocks && blocks < target.multiprocessors) {
    int64_t sharing = s.kind == Kind::BlockPerResult
                          ? s.blockSize
                          : s.blockSize / GpuTarget::kWarpSize;
    int64_t wave =
        target.multiprocessors * target.blocksPerMultiprocessor(s.blockSize);
    s.splits = std::clamp<int64_t>(
        std::min<int64_t>(llvm::divideCeil(wave, blocks),
                          elements / (sharing * kSplitMinThreadElements)),
        1, LinalgReductionSchedule::kMaxSplits);
  }
  // Rows read in vectors of up to 4 elements (16 bytes of f32) where the
  // operands allow and the vector divides the row, so that every row
  // starts on a whole vector.
  if (s.kind == Kind::WarpPerResult || s.kind == Kind::BlockPerResult) {
    int64_t width = std::min<int64_t>(rowVector, kLinalgReductionMaxVector);
    while (width > 1 && elements % width != 0)
      width /= 2;
    s.vectorWidth = std::max<int64_t>(1, width);
  }
  return s;
}

std::string PointwiseSchedule::str() const {
  return "grid-stride block=" + std::to_string(blockSize) +
         " vector=" + std::to_string(vectorWidth) + (peeled ? " peeled" : "") +
         " min-blocks-per-sm=" + std::to_string(minBlocksPerMultiprocessor);
}

PointwiseSchedule cuda::selectPointwiseSchedule(int64_t numElements,
                                                Type elementType,
                                                const GpuTarget &target,
                                                bool mayPeel) {
  (void)target;
  PointwiseSchedule s;
  s.blockSize = kPointwiseBlockSize;
  s.vectorWidth = vectorWidthFor(numElements, elementType);
  // A 33x777 f32 tensor would take scalar accesses: 16-byte vectors and a
  // tail of at most three elements instead.
  int64_t widest = vectorWidthFor(int64_t(1) << 20, elementType);
  if (mayPeel && s.vectorWidth < widest &&
      (ShapedType::isDynamic(numElements) ||
       numElements >= kPeelMinVectors * widest)) {
    s.vectorWidth = widest;
    s.peeled = true;
  }
  // f64 math (erf, exp of doubles) needs more than the 64 registers four
  // blocks of 256 leave a thread.
  s.minBlocksPerMultiprocessor = elementType.isF64() ? 2 : 4;
  return s;
}

PointwiseSchedule cuda::selectGenericSchedule(const GenericKernelShape &shape,
                                              const GpuTarget &target) {
  PointwiseSchedule s = selectPointwiseSchedule(shape.elements, shape.widest,
                                                target, /*mayPeel=*/shape.flat);
  // A gathered operand: one lane at a time.
  if (shape.gather) {
    s.vectorWidth = 1;
    s.peeled = false;
  }
  // A vector of a contiguous operand starts on a whole vector only where
  // its rows do: a slice of 4 of 6 columns takes two lanes at a time.
  for (int64_t row : shape.rows)
    while (s.vectorWidth > 1 &&
           (ShapedType::isDynamic(row) || row % s.vectorWidth != 0))
      s.vectorWidth /= 2;
  return s;
}

PointwiseSchedule cuda::selectWindowCopySchedule(int64_t elements,
                                                 Type elementType,
                                                 const GpuTarget &target) {
  PointwiseSchedule s = selectPointwiseSchedule(elements, elementType, target);
  s.vectorWidth = 1;
  return s;
}

std::string GroupNormGradSchedule::str() const {
  auto n = [](int64_t v) { return std::to_string(v); };
  std::string text =
      sums.str() + " dx-block=" + n(dx.blockSize) +
      " dx-vector=" + n(dx.vectorWidth) +
      " dx-min-blocks-per-sm=" + n(dx.minBlocksPerMultiprocessor) +
      " finish-block=" + n(finishBlockSize);
  if (oneKernel.threadsPerRow)
    text += " one-kernel-threads-per-row=" + n(oneKernel.threadsPerRow) +
            " one-kernel-rows=" + n(oneKernel.rowsPerBlock) +
            " one-kernel-vector=" + n(oneKernel.vectorWidth) +
            " one-kernel-min-part=" + n(oneKernel.minPart);
  return text;
}

GroupNormGradSchedule cuda::selectGroupNormGradSchedule(
    int64_t images, int64_t channels, int64_t spatial, bool channelsLast,
    Type elementType, const GpuTarget &target, ForcedRowNormKind forced) {
  (void)images;
  GroupNormGradSchedule s;
  s.sums = selectChannelReductionSchedule(channels, spatial, channelsLast,
                                          elementType, target);
  s.dx = selectPointwiseSchedule(channelsLast ? channels : spatial, elementType,
                                 target);
  s.finishBlockSize = kChannelReductionBlockSize;
  // One launch (NHWC of a known channel count): a position's channels in
  // whole vectors across a block's threads, whole warps a block (its
  // totals are a warp's), about kChannelsLastBlockThreads threads.
  if (channelsLast && !ShapedType::isDynamic(channels) && channels > 0 &&
      plainKind(forced) != ForcedRowNormKind::ChannelsLastGroups) {
    int64_t vw = vectorWidthFor(channels, elementType);
    int64_t perRow = channels / vw;
    int64_t rows = llvm::alignTo(
        std::max<int64_t>(1, kChannelsLastBlockThreads / perRow),
        GpuTarget::kWarpSize / std::gcd(perRow, GpuTarget::kWarpSize));
    if (perRow * rows <= GpuTarget::kMaxThreadsPerBlock) {
      s.oneKernel.threadsPerRow = perRow;
      s.oneKernel.rowsPerBlock = rows;
      s.oneKernel.vectorWidth = vw;
      // A part's partial sums (two per channel, of the accumulation type)
      // at most half the bytes it reads of dy and x.
      int64_t bytes =
          std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8);
      int64_t accBytes = bytes > 4 ? bytes : 4;
      s.oneKernel.minPart = std::max<int64_t>(1, 2 * accBytes / bytes);
    }
  }
  return s;
}

int64_t TiledProductSchedule::launchRegisters(int64_t registersPerBlock) const {
  // setmaxnreg's counts: multiples of 8 up to 256 (ptxas gives a thread at
  // most 255).
  return std::min<int64_t>(255, registersPerBlock / blockSize()) / 8 * 8;
}

int64_t
TiledProductSchedule::consumerRegisters(int64_t registersPerBlock) const {
  // (setmaxnreg takes effect under a register cap of one block at entry,
  // __launch_bounds__(threads, 1).)
  if (kind != Kind::TensorCore || !warpSpecialized ||
      minBlocksPerMultiprocessor != 1)
    return 0;
  int64_t threads = blockSize(), consumers = threads - kProducerThreads;
  int64_t launched = launchRegisters(registersPerBlock);
  int64_t raised = std::min<int64_t>(
      256, (launched * threads - producerRegisters() * kProducerThreads) /
               consumers / 8 * 8);
  return consumers >= 2 * kProducerThreads && raised > launched ? raised : 0;
}

std::string TiledProductSchedule::str() const {
  auto n = [](int64_t v) { return std::to_string(v); };
  std::string text =
      kind == Kind::TensorCore
          ? "tensor-core-product tile=" + n(tileM) + "x" + n(tileN) + "x" +
                n(tileK) + " warps=" + n(warpsM) + "x" + n(warpsN) +
                " stages=" + n(stages)
          : "tiled-product tile=" + n(tileM) + "x" + n(tileN) + "x" + n(tileK) +
                " thread=" + n(threadM) + "x" + n(threadN);
  if (tf32)
    text += " tf32";
  if (wgmma)
    text += " wgmma";
  if (tma)
    text += " tma";
  if (warpSpecialized)
    text += " warp-specialized";
  if (multicast)
    text += " multicast";
  if (pingpong)
    text += " pingpong";
  if (splitK > 1)
    text += " split-k=" + n(splitK);
  if (splitKMax > 0)
    text += " split-k-max=" + n(splitKMax) +
            " split-k-blocks=" + n(splitKBlocks) +
            " split-k-min-tiles=" + n(splitKMinTiles);
  if (!smallTile.empty() || smallTileBelow)
    text += " small-tile=" + smallTile.str() +
            " small-tile-below=" + n(smallTileBelow);
  if (splitsK())
    text += " finish-block=" + n(finish.blockSize) +
            " finish-vector=" + n(finish.vectorWidth) +
            " finish-min-blocks-per-sm=" + n(finish.minBlocksPerMultiprocessor);
  if (tileGroupRows != TiledProductSchedule().tileGroupRows)
    text += " tile-group-rows=" + n(tileGroupRows);
  if (maxBlocks != TiledProductSchedule().maxBlocks)
    text += " max-blocks=" + n(maxBlocks);
  return text;
}

std::string TiledProductSchedule::TensorCoreTile::str() const {
  auto n = [](int64_t v) { return std::to_string(v); };
  return n(tileM) + "x" + n(tileN) + "x" + n(tileK) + "/" + n(stages) + "/" +
         n(warpsM) + "x" + n(warpsN) + (wgmma ? "/wgmma" : "") +
         (tma ? "/tma" : "") + (warpSpecialized ? "/ws" : "") +
         (multicast ? "/mc" : "") + (pingpong ? "/pp" : "");
}

std::optional<TiledProductSchedule::TensorCoreTile>
TiledProductSchedule::TensorCoreTile::parse(llvm::StringRef text) {
  SmallVector<llvm::StringRef> parts, dims;
  text.split(parts, '/');
  if (parts.size() < 3)
    return std::nullopt;
  // The kernel's words after the counts, in this order, each needing the
  // ones it names ("ws" the "wgmma", "mc" the "tma" and "ws", "pp" the
  // "ws").
  TensorCoreTile t;
  struct Word {
    const char *name;
    bool *flag;
    bool *needs, *alsoNeeds;
  } words[] = {{"wgmma", &t.wgmma, nullptr, nullptr},
               {"tma", &t.tma, &t.wgmma, nullptr},
               {"ws", &t.warpSpecialized, &t.wgmma, nullptr},
               {"mc", &t.multicast, &t.warpSpecialized, &t.tma},
               {"pp", &t.pingpong, &t.warpSpecialized, nullptr}};
  size_t next = 0;
  for (llvm::StringRef part : llvm::ArrayRef(parts).drop_front(3)) {
    while (next < std::size(words) && part != words[next].name)
      ++next;
    if (next == std::size(words))
      return std::nullopt;
    const Word &w = words[next++];
    if ((w.needs && !*w.needs) || (w.alsoNeeds && !*w.alsoNeeds))
      return std::nullopt;
    *w.flag = true;
  }
  parts[0].split(dims, 'x');
  parts[2].split(dims, 'x');
  dims.insert(dims.begin() + 3, parts[1]);
  int64_t *fields[] = {&t.tileM,  &t.tileN,  &t.tileK,
                       &t.stages, &t.warpsM, &t.warpsN};
  if (dims.size() != std::size(fields))
    return std::nullopt;
  for (auto [dim, field] : llvm::zip(dims, fields))
    if (dim.getAsInteger(10, *field) || *field < 1)
      return std::nullopt;
  return t;
}

void TiledProductSchedule::setTensorCoreTile(const TensorCoreTile &t) {
  tileM = t.tileM;
  tileN = t.tileN;
  tileK = t.tileK;
  warpsM = t.warpsM;
  warpsN = t.warpsN;
  stages = t.stages;
  wgmma = t.wgmma;
  tma = t.tma;
  warpSpecialized = t.warpSpecialized;
  multicast = t.multicast;
  pingpong = t.pingpong;
}

TiledProductSchedule TiledProductSchedule::withSmallTile() const {
  TiledProductSchedule s = *this;
  s.setTensorCoreTile(smallTile);
  s.smallTile = {};
  s.smallTileBelow = 0;
  return s;
}

bool cuda::parseTensorCoreTile(llvm::StringRef text, const GpuTarget &target,
                               TiledProductSchedule &s, int64_t elementBytes) {
  std::optional<TiledProductSchedule::TensorCoreTile> tile =
      TiledProductSchedule::TensorCoreTile::parse(text);
  if (!tile)
    return false;
  TiledProductSchedule t;
  t.setTensorCoreTile(*tile);
  if (!checkTensorCoreTile(t, elementBytes, target).empty())
    return false;
  s.setTensorCoreTile(*tile);
  return true;
}

/// The tile of large tensor-core products NF_CUDA_TENSOR_CORE_TILE asks
/// for (a tuning experiment: "128x256x32/3/2x4"), if any; a value that
/// does not parse is reported and ignored.
static std::optional<TiledProductSchedule>
tensorCoreTileOverride(const GpuTarget &target, int64_t elementBytes) {
  const char *env = std::getenv("NF_CUDA_TENSOR_CORE_TILE");
  if (!env || !*env)
    return std::nullopt;
  std::optional<TiledProductSchedule::TensorCoreTile> tile =
      TiledProductSchedule::TensorCoreTile::parse(env);
  TiledProductSchedule s;
  std::string why = "not MxNxK/stages/WMxWN[/wgmma[/tma][/ws[/mc][/pp]]]";
  if (tile) {
    s.setTensorCoreTile(*tile);
    why = checkTensorCoreTile(s, elementBytes, target);
    if (why.empty())
      return s;
  }
  llvm::errs() << "normfuse: ignoring NF_CUDA_TENSOR_CORE_TILE=" << env << " ("
               << why << ")\n";
  return std::nullopt;
}

TiledProductSchedule cuda::selectTiledProductSchedule(const ProductShape &p,
                                                      const GpuTarget &target) {
  int64_t batch = p.batch, m = p.m, n = p.n, k = p.k;
  Type elementType = p.elementType;
  TiledProductSchedule s;
  // Tiles of t along a dimension of size d (as many as a large one where
  // d is unknown).
  auto tiles = [](int64_t d, int64_t t) {
    return d == ShapedType::kDynamic ? int64_t(1) << 20 : (d + t - 1) / t;
  };
  bool tf32 = p.allowTf32 && elementType.isF32();
  if (p.tensorCoreOperands &&
      (elementType.isF16() || elementType.isBF16() || tf32) &&
      target.smVersion >= 80) {
    // 128 x 128 tiles of four 64 x 64 warps (3 stages of 32-wide K tiles:
    // 48 KiB of shared memory, 96 KiB as tf32) where they make at least a
    // wave over the batch; else 64 x 64 tiles of four 32 x 32 warps, four
    // times the blocks.
    int64_t elementBytes = tf32 ? 4 : 2;
    s.kind = TiledProductSchedule::Kind::TensorCore;
    s.tf32 = tf32;
    s.tileK = 32;
    s.warpsM = s.warpsN = 2;
    s.stages = 3;
    bool large = tiles(batch, 1) * tiles(m, 128) * tiles(n, 128) >=
                 target.multiprocessors;
    s.tileM = s.tileN = large ? 128 : 64;
    // A large product 64 or fewer wide (a convolution to 64 channels)
    // takes 128 x 64 tiles of 64 x 32 warps: a 128-wide tile would stage
    // and multiply as many columns of zeros.
    if (large && n != ShapedType::kDynamic && n <= 64)
      s.tileN = 64;
    else if (large && m != ShapedType::kDynamic && m <= 64)
      s.tileM = 64;
    s.minBlocksPerMultiprocessor = 1;
    bool known = !ShapedType::isDynamic(batch) && !ShapedType::isDynamic(m) &&
                 !ShapedType::isDynamic(n) && !ShapedType::isDynamic(k);
    // The tuning tile: for every product of known sizes (few tiles split K
    // below), and large ones of sizes known at launch.
    if (std::optional<TiledProductSchedule> o =
            tensorCoreTileOverride(target, elementBytes);
        o && (large || known))
      s.setTensorCoreTile(o->tensorCoreTile());
    // Fewer stages where a block of the target has less shared memory.
    auto fitStages = [&](int64_t &stages, int64_t tileM, int64_t tileN,
                         int64_t tileK) {
      while (stages > 2 && stages * (tileM + tileN) * tileK * elementBytes >
                               target.sharedBytesPerBlock)
        --stages;
    };
    fitStages(s.stages, s.tileM, s.tileN, s.tileK);
    // Few tiles over a long K (inference: a few hundred tokens through a
    // wide layer): K split so that the blocks fill the device.
    if (!known) {
      // Sizes known only at launch (a dynamic count of tokens): K is split
      // then, by the same rule, where the tiles are too few.
      s.splitKMax = kMaxSplitK;
      s.splitKBlocks = kSplitKBlocksPerMultiprocessor * target.multiprocessors;
      s.splitKMinTiles = kSplitKMinTiles;
      s.finish = selectPointwiseSchedule(p.consecutiveColumns ? n : 1,
                                         p.resultType, target);
      // Large tiles too few to be one a multiprocessor give way at launch
      // to the small ones, as where the sizes are known.
      TiledProductSchedule::TensorCoreTile small{64, 64, 32, 2, 2, 3};
      fitStages(small.stages, small.tileM, small.tileN, small.tileK);
      if (large && (s.tileM != small.tileM || s.tileN != small.tileN)) {
        s.smallTile = small;
        s.smallTileBelow = target.multiprocessors;
      }
    } else if (!large && batch * m * n > 0) {
      // Ranges of at least kSplitKMinTiles K tiles of 32 (of the tile's
      // K tiles, where a tuning tile's are wider).
      s.splitK = staticSplitK(
          batch * tiles(m, s.tileM) * tiles(n, s.tileN), tiles(k, s.tileK),
          std::max<int64_t>(1, kSplitKMinTiles * 32 / s.tileK), target);
      // Each thread sums neighbouring columns where they are consecutive
      // in the result.
      if (s.splitK > 1)
        s.finish = selectPointwiseSchedule(p.consecutiveColumns ? n : 1,
                                           p.resultType, target);
    }
    return s;
  }
  // The SIMT kernel: 256 threads, K 8 at a time through two stages. 128 x
  // 128 tiles of 8 x 8 sums a thread where they make a wave (f64 sums, of
  // f64 operands or an f64 result, would take 128 registers: 64 x 64 of
  // 4 x 4); 32 x 32 of 2 x 2 for results of 32 rows or columns or fewer,
  // which a larger tile would leave mostly idle; else 64 x 64 of 4 x 4.
  s.tileK = 8;
  bool f64 = elementType.isF64() || p.resultType.isF64();
  auto small = [](int64_t d) { return d != ShapedType::kDynamic && d <= 32; };
  if (small(m) || small(n)) {
    s.tileM = s.tileN = 32;
    s.threadM = s.threadN = 2;
  } else if (!f64 && tiles(batch, 1) * tiles(m, 128) * tiles(n, 128) >=
                         target.multiprocessors) {
    s.tileM = s.tileN = 128;
    s.threadM = s.threadN = 8;
  }
  // Few tiles over a long K (f32 inference on the FMA units: a few hundred
  // tokens through a wide layer) split K as the tensor-core kernel does,
  // where the partial sums are f32.
  bool known = !ShapedType::isDynamic(batch) && !ShapedType::isDynamic(m) &&
               !ShapedType::isDynamic(n) && !ShapedType::isDynamic(k);
  if (known && !f64 && s.tileM < 128 && batch * m * n > 0) {
    s.splitK =
        staticSplitK(batch * tiles(m, s.tileM) * tiles(n, s.tileN),
                     tiles(k, s.tileK), kSimtSplitKMinK / s.tileK, target);
    if (s.splitK > 1)
      s.finish = selectPointwiseSchedule(p.consecutiveColumns ? n : 1,
                                         p.resultType, target);
  }
  return s;
}
