//===- ScheduleText.cpp - GPU schedules as inputs --------------*- C++ -*-===//
//
// Part of normfuse. An op's GPU schedule is written on it as text
// (nf.gpu_schedule: the words of the schedule's str()) before the lowering
// reads it: this file parses that text and checks a schedule against the
// op it is to run (row norms, their gradients, the per-channel reductions,
// group norm gradients, matrix products), so that a schedule written by
// hand (or by a tuner) is refused with its reason rather than computing
// wrong results.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/CUDA/Schedule.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

/// Reads `words`, each a flag `flag` knows (true) or "key=N" with a count
/// field `field` knows; false, with the reason in `error`, at the first
/// that is neither or whose N is not a count.
static bool parseWords(llvm::ArrayRef<llvm::StringRef> words,
                       llvm::function_ref<bool *(llvm::StringRef)> flag,
                       llvm::function_ref<int64_t *(llvm::StringRef)> field,
                       std::string &error) {
  for (llvm::StringRef word : words) {
    if (bool *f = flag(word)) {
      *f = true;
      continue;
    }
    auto [key, value] = word.split('=');
    int64_t *count = field(key);
    if (!count || value.empty()) {
      error = "unknown word '" + word.str() + "' in the schedule";
      return false;
    }
    if (value.getAsInteger(10, *count) || *count < 0) {
      error = "'" + word.str() + "' is not a count";
      return false;
    }
  }
  return true;
}

FailureOr<RowNormSchedule> cuda::parseRowNormSchedule(llvm::StringRef text,
                                                      std::string &error) {
  using Kind = RowNormSchedule::Kind;
  llvm::SmallVector<llvm::StringRef> words;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  if (words.empty()) {
    error = "an empty schedule";
    return failure();
  }
  std::optional<Kind> kind = RowNormSchedule::kindNamed(words.front());
  if (!kind) {
    error = "unknown row-norm schedule kind '" + words.front().str() +
            "' (warp-rows, block-row-registers, block-row-streaming, "
            "split-row, channels-last-groups, cluster-row)";
    return failure();
  }
  RowNormSchedule s;
  s.kind = *kind;
  bool ok = parseWords(
      llvm::ArrayRef(words).drop_front(),
      [&](llvm::StringRef word) {
        return llvm::StringSwitch<bool *>(word)
            .Case("peeled", &s.peeled)
            .Case("params-in-registers", &s.paramsInRegisters)
            .Case("streaming", &s.streaming)
            .Case("parts-from-residency", &s.partsFromResidency)
            .Default(nullptr);
      },
      [&](llvm::StringRef key) {
        return llvm::StringSwitch<int64_t *>(key)
            .Case("threads-per-row", &s.threadsPerRow)
            .Case("rows-per-block", &s.rowsPerBlock)
            .Case("vector", &s.vectorWidth)
            .Case("registers", &s.vectorsPerThread)
            .Case("chunk", &s.chunkElements)
            .Case("positions-per-part", &s.chunkElements)
            .Case("cluster", &s.clusterBlocks)
            .Case("finish-warps", &s.finishWarps)
            .Case("resident-blocks", &s.residentBlocks)
            .Default(nullptr);
      },
      error);
  if (!ok)
    return failure();
  return s;
}

/// Whether `n` threads can add a value across them: a power-of-two part of
/// a warp (shuffles) or whole warps (shuffles, then shared memory).
static bool reducible(int64_t n) {
  return n >= 1 && n <= GpuTarget::kMaxThreadsPerBlock &&
         (n <= GpuTarget::kWarpSize ? llvm::isPowerOf2_64(n)
                                    : n % GpuTarget::kWarpSize == 0);
}

std::string cuda::checkRowNormSchedule(const RowNormSchedule &s,
                                       const RowNormShape &shape,
                                       const GpuTarget &target) {
  using Kind = RowNormSchedule::Kind;
  using Layout = RowNormShape::Layout;
  auto count = [](int64_t n) { return std::to_string(n); };
  bool dynamic = ShapedType::isDynamic(shape.cols);
  int64_t bytes =
      std::max<int64_t>(1, shape.elementType.getIntOrFloatBitWidth() / 8);
  int64_t vw = s.vectorWidth;
  if (vw < 1 || !llvm::isPowerOf2_64(vw) ||
      vw * bytes > GpuTarget::kMaxAccessBytes)
    return "a vector of " + count(vw) + " elements of " + count(bytes) +
           " bytes is not a power of two of at most 16 bytes";
  if (s.threadsPerRow < 1 || s.rowsPerBlock < 1 ||
      s.blockSize() > GpuTarget::kMaxThreadsPerBlock)
    return "a block of " + count(s.threadsPerRow) + " x " +
           count(s.rowsPerBlock) + " threads";
  if (s.kind == Kind::ClusterRow) {
    if (s.clusterBlocks < 2 || s.clusterBlocks > 8)
      return "a cluster of " + count(s.clusterBlocks) + " blocks (2 to 8)";
    // Its first threads hand the block's sum to each block.
    if (s.threadsPerRow % GpuTarget::kWarpSize)
      return "a cluster of blocks of " + count(s.threadsPerRow) +
             " threads (whole warps)";
    if (!target.clusters)
      return "a cluster row on " + target.arch +
             ", which has no thread-block clusters";
  } else if (s.clusterBlocks != 1) {
    return "cluster=" + count(s.clusterBlocks) +
           " on a schedule that is not "
           "a cluster row";
  }
  bool rows = shape.layout == Layout::Rows;
  if (s.kind == Kind::ChannelsLastGroups) {
    if (shape.layout != Layout::GroupsNHWC ||
        ShapedType::isDynamic(shape.channels))
      return "channels-last-groups is for group and instance norms in NHWC "
             "of a known channel count";
    if (s.threadsPerRow * vw != shape.channels)
      return count(s.threadsPerRow) + " threads of " + count(vw) +
             " channels for " + count(shape.channels) + " channels";
    if (s.chunkElements < 1 || s.chunkElements % s.rowsPerBlock)
      return "parts of " + count(s.chunkElements) +
             " positions, not a multiple of the " + count(s.rowsPerBlock) +
             " rows of a block";
    if (s.finishWarps < 1 || s.finishWarps > 32)
      return "a finish of " + count(s.finishWarps) + " warps (1 to 32)";
    if (s.residentBlocks) {
      // The one-kernel variant: its finish takes a warp a group.
      int64_t threads = s.threadsPerRow * s.oneKernelRows();
      if (threads > GpuTarget::kMaxThreadsPerBlock)
        return "a one-kernel block of " + count(threads) + " threads";
      if (s.vectorsPerThread < 1 || s.vectorsPerThread * vw > 32)
        return "a one-kernel thread of " + count(s.vectorsPerThread) +
               " vectors of " + count(vw) + " (1 to 32 elements)";
      if (s.residentBlocks * threads > target.maxThreadsPerMultiprocessor)
        return count(s.residentBlocks) + " resident blocks of " +
               count(threads) + " threads on an SM of " +
               count(target.maxThreadsPerMultiprocessor);
    } else if (s.vectorsPerThread) {
      return "registers=" + count(s.vectorsPerThread) +
             " on channels-last-groups without resident-blocks";
    }
    return "";
  }
  if (s.partsFromResidency || s.finishWarps != RowNormSchedule().finishWarps ||
      s.residentBlocks)
    return "parts-from-residency, finish-warps and resident-blocks belong to "
           "channels-last-groups";
  // Vectors may not cross a row's end, nor (group norms) a run's.
  if (s.peeled) {
    if (!rows)
      return "a peeled schedule for a group norm (only rows are peeled)";
    if (s.rowThreads() < vw)
      return "a peeled row of " + count(s.rowThreads()) +
             " threads, fewer than a vector's " + count(vw) +
             " lanes (one head and one tail element a thread)";
  } else {
    int64_t run = rows ? shape.cols : shape.contiguous;
    if (ShapedType::isDynamic(run) ? vw != 1 : run % vw != 0)
      return "vectors of " + count(vw) + " elements that do not divide " +
             (rows ? "the row" : "the group's runs") + " (" +
             (ShapedType::isDynamic(run) ? "unknown" : count(run)) +
             " elements; peel the rows)";
  }
  if (!reducible(s.threadsPerRow))
    return count(s.threadsPerRow) +
           " threads a row: a power of two up to 32, or whole warps";
  if (s.paramsInRegisters && (s.peeled || !rows))
    return "params-in-registers needs the unpeeled rows of a layer or RMS "
           "norm";
  switch (s.kind) {
  case Kind::WarpRows:
  case Kind::BlockRowInRegisters:
  case Kind::ClusterRow: {
    if (s.kind == Kind::WarpRows ? s.threadsPerRow > GpuTarget::kWarpSize
                                 : s.rowsPerBlock != 1)
      return s.kind == Kind::WarpRows
                 ? "warp rows of more than a warp's threads"
                 : "a block or cluster row of more than one row a block";
    // (An NCHW group is one contiguous run, a row; an NHWC group's runs
    // are a position's channels, C apart, which no schedule of whole rows
    // reads well.)
    if (s.kind == Kind::ClusterRow && shape.layout == Layout::GroupsNHWC)
      return "a cluster row for an NHWC group norm (only rows and NCHW "
             "groups)";
    if (dynamic)
      return "a row of unknown length in registers";
    if (s.vectorsPerThread < 1)
      return "a row in registers with none a thread";
    int64_t vectors =
        s.peeled ? shape.cols / vw : llvm::divideCeil(shape.cols, vw);
    if (s.vectorsPerThread * s.rowThreads() < vectors)
      return count(s.rowThreads()) + " threads of " +
             count(s.vectorsPerThread) + " vectors hold " +
             count(s.vectorsPerThread * s.rowThreads() * vw) +
             " of the row's " + count(shape.cols) + " elements";
    return "";
  }
  case Kind::BlockRowStreaming:
    if (s.rowsPerBlock != 1)
      return "a streamed row of more than one row a block";
    // Its sweeps address x as rows.
    if (!rows)
      return "a streamed row for a group norm (only layer and RMS norms)";
    return "";
  case Kind::SplitRow:
    if (s.rowsPerBlock != 1)
      return "a split row of more than one row a block";
    if (s.vectorsPerThread < 1 || s.chunkElements < 1 || s.chunkElements % vw ||
        s.chunkElements > s.vectorsPerThread * s.threadsPerRow * vw)
      return "chunks of " + count(s.chunkElements) + " elements that " +
             count(s.threadsPerRow) + " threads of " +
             count(s.vectorsPerThread) + " vectors of " + count(vw) +
             " do not hold in whole vectors";
    return "";
  case Kind::ChannelsLastGroups:
    break; // above
  }
  return "";
}

FailureOr<RowNormGradSchedule>
cuda::parseRowNormGradSchedule(llvm::StringRef text, std::string &error) {
  // The rows' words, and max-blocks.
  llvm::SmallVector<llvm::StringRef> words;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  std::string rows;
  std::optional<int64_t> maxBlocks;
  llvm::SmallVector<llvm::StringRef> params;
  for (llvm::StringRef word : words) {
    if (word.starts_with("params-")) {
      params.push_back(word);
      continue;
    }
    if (word.consume_front("max-blocks=")) {
      int64_t n;
      if (maxBlocks || word.getAsInteger(10, n) || n < 0) {
        error = "'max-blocks=" + word.str() + "' is not a count, or repeated";
        return failure();
      }
      maxBlocks = n;
      continue;
    }
    rows += (rows.empty() ? "" : " ") + word.str();
  }
  FailureOr<RowNormSchedule> s = parseRowNormSchedule(rows, error);
  if (failed(s))
    return failure();
  if (!maxBlocks) {
    error = "no max-blocks in the gradient's schedule";
    return failure();
  }
  RowNormGradSchedule g;
  g.rows = *s;
  g.maxBlocks = *maxBlocks;
  bool ok = parseWords(
      params, [](llvm::StringRef) -> bool * { return nullptr; },
      [&](llvm::StringRef key) {
        return llvm::StringSwitch<int64_t *>(key)
            .Case("params-warps", &g.params.warps)
            .Case("params-unroll", &g.params.unroll)
            .Default(nullptr);
      },
      error);
  if (!ok)
    return failure();
  return g;
}

std::string cuda::checkRowNormGradSchedule(const RowNormGradSchedule &g,
                                           int64_t cols, Type elementType,
                                           const GpuTarget &target) {
  using Kind = RowNormSchedule::Kind;
  const RowNormSchedule &s = g.rows;
  auto count = [](int64_t n) { return std::to_string(n); };
  if (s.kind != Kind::WarpRows && s.kind != Kind::BlockRowInRegisters &&
      s.kind != Kind::ClusterRow && s.kind != Kind::SplitRow)
    return RowNormSchedule::kindName(s.kind).str() +
           " for a gradient (warp-rows, block-row-registers, cluster-row or "
           "split-row)";
  if (s.paramsInRegisters || s.streaming)
    return "params-in-registers and streaming belong to forward rows";
  // Each block of a peeled row takes its chunk's head and tail, an
  // element a thread.
  if (s.peeled && s.threadsPerRow < s.vectorWidth)
    return "a peeled chunk of " + count(s.threadsPerRow) +
           " threads, fewer than a vector's " + count(s.vectorWidth) + " lanes";
  if (g.maxBlocks < 1)
    return "a gradient of " + count(g.maxBlocks) + " blocks";
  int64_t chunk = s.vectorsPerThread * s.threadsPerRow * s.vectorWidth;
  if (s.chunkElements != chunk)
    return "chunks of " + count(s.chunkElements) + " elements, not the " +
           count(chunk) + " of the threads' vectors";
  RowNormShape shape;
  shape.cols = cols;
  shape.elementType = elementType;
  if (std::string why = checkRowNormSchedule(s, shape, target); !why.empty())
    return why;
  // A cluster's block of rank r holds chunk r of the row; a warp or block
  // row is one chunk (a peeled row's vectors may hold fewer elements than
  // the row).
  int64_t chunks = ShapedType::isDynamic(cols)
                       ? 0
                       : int64_t(llvm::divideCeil(cols, s.chunkElements));
  if ((s.kind == Kind::WarpRows || s.kind == Kind::BlockRowInRegisters) &&
      chunks > 1)
    return "a row of " + count(cols) + " elements in chunks of " +
           count(s.chunkElements) + " (a warp or block row is one chunk)";
  if (s.kind == Kind::ClusterRow && chunks != s.clusterBlocks)
    return "a cluster of " + count(s.clusterBlocks) + " blocks for the " +
           count(chunks) + " chunks of " + count(s.chunkElements) +
           " elements of a row of " + count(cols);
  // Row groups 1.. hand their column sums to group 0 in workgroup memory
  // (dynamic past 48 KiB).
  int64_t accBytes = elementType.getIntOrFloatBitWidth() > 32 ? 8 : 4;
  int64_t handOver = (s.rowsPerBlock - 1) * s.chunkElements * accBytes;
  if (handOver > target.sharedBytesPerBlock)
    return count(s.rowsPerBlock) + " row groups handing over " +
           count(handOver) + " bytes of column sums (a block has " +
           count(target.sharedBytesPerBlock) + ")";
  // The parameters' totals: of dscale and dbias.
  if (std::string why = checkPartialTotalsSchedule(
          g.params, 2, getAccumulationType(elementType), target);
      !why.empty())
    return "parameter totals: " + why;
  return "";
}

FailureOr<ChannelReductionSchedule>
cuda::parseChannelReductionSchedule(llvm::StringRef text, std::string &error) {
  llvm::SmallVector<llvm::StringRef> words;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  ChannelReductionSchedule s;
  if (words.empty() ||
      (words.front() != "channels-last" && words.front() != "channels-first" &&
       words.front() != "channels-first-one-kernel")) {
    error = "a channel reduction's schedule starts with channels-last, "
            "channels-first or channels-first-one-kernel";
    return failure();
  }
  s.channelsLast = words.front() == "channels-last";
  s.oneKernel = words.front() == "channels-first-one-kernel";
  // A batch norm's elementwise pass: the words with its prefix.
  PointwiseSchedule e;
  bool elementwise = llvm::any_of(
      words, [](llvm::StringRef w) { return w.starts_with("elementwise-"); });
  bool ok = parseWords(
      llvm::ArrayRef(words).drop_front(),
      [&](llvm::StringRef word) {
        return word == "elementwise-peeled" ? &e.peeled : nullptr;
      },
      [&](llvm::StringRef key) {
        return llvm::StringSwitch<int64_t *>(key)
            .Case("threads-per-row", &s.threadsPerRow)
            .Case("rows-per-block", &s.rowsPerBlock)
            .Case("vector", &s.vectorWidth)
            .Case("registers", &s.vectorsPerThread)
            .Case("max-blocks", &s.maxBlocks)
            .Case("totals-warps", &s.totals.warps)
            .Case("totals-unroll", &s.totals.unroll)
            .Case("elementwise-block", &e.blockSize)
            .Case("elementwise-vector", &e.vectorWidth)
            .Case("elementwise-min-blocks-per-sm",
                  &e.minBlocksPerMultiprocessor)
            .Default(nullptr);
      },
      error);
  if (!ok)
    return failure();
  if (elementwise)
    s.elementwise = e;
  return s;
}

std::string
cuda::checkChannelReductionSchedule(const ChannelReductionSchedule &s,
                                    int64_t channels, int64_t inner,
                                    Type elementType, const GpuTarget &target) {
  auto count = [](int64_t n) { return std::to_string(n); };
  bool channelsLast = inner == 1 && !ShapedType::isDynamic(channels);
  if (s.channelsLast != channelsLast)
    return std::string(s.channelsLast ? "channels-last" : "channels-first") +
           " for channels " +
           (channelsLast ? "last" : "first (or of an unknown count)");
  if (s.maxBlocks < 1)
    return "a reduction of " + count(s.maxBlocks) + " blocks";
  // The totals: of at most three values a part (BatchNorm's moments).
  if (std::string why = checkPartialTotalsSchedule(
          s.totals, 3, getAccumulationType(elementType), target);
      !why.empty())
    return "totals: " + why;
  if (s.threadsPerRow < 1 || s.rowsPerBlock < 1 || s.vectorsPerThread < 1 ||
      s.blockSize() > GpuTarget::kMaxThreadsPerBlock)
    return "a block of " + count(s.threadsPerRow) + " x " +
           count(s.rowsPerBlock) + " threads of " + count(s.vectorsPerThread) +
           " vectors";
  int64_t bytes = std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8);
  int64_t vw = s.vectorWidth;
  int64_t run = channelsLast ? channels : inner;
  if (vw < 1 || !llvm::isPowerOf2_64(vw) ||
      vw * bytes > GpuTarget::kMaxAccessBytes ||
      (ShapedType::isDynamic(run) ? vw != 1 : run % vw != 0))
    return "vectors of " + count(vw) + " elements for runs of " +
           (ShapedType::isDynamic(run) ? "unknown length" : count(run)) +
           " (a power of two of at most 16 bytes dividing them)";
  if (s.oneKernel) {
    // A block per (channel, range) at a time, its threads' moments added
    // across the block (emitBlockSum: whole warps).
    if (s.elementwise)
      return "an elementwise pass in one kernel (it normalizes itself)";
    if (s.rowsPerBlock != 1)
      return "one-kernel blocks of one row";
    if (s.vectorsPerThread > ChannelReductionSchedule::kMaxOneKernelVectors)
      return count(s.vectorsPerThread) + " vectors in flight a thread (1 to " +
             count(ChannelReductionSchedule::kMaxOneKernelVectors) + ")";
    if (s.threadsPerRow % GpuTarget::kWarpSize != 0)
      return count(s.threadsPerRow) + " threads a block: whole warps";
    return "";
  }
  if (!channelsLast) {
    // A block per (channel, range), its threads' sums added across it.
    if (s.rowsPerBlock != 1 || s.vectorsPerThread != 1)
      return "channels-first blocks of one row of one vector a thread";
    if (!reducible(s.threadsPerRow))
      return count(s.threadsPerRow) +
             " threads a block: a power of two up to 32, or whole warps";
    return "";
  }
  if (s.vectorsPerThread * s.threadsPerRow * vw < channels)
    return count(s.threadsPerRow) + " threads of " + count(s.vectorsPerThread) +
           " vectors of " + count(vw) + " cover fewer than the " +
           count(channels) + " channels";
  int64_t accBytes = elementType.getIntOrFloatBitWidth() > 32 ? 8 : 4;
  int64_t handOver = (s.rowsPerBlock - 1) * s.vectorsPerThread *
                     s.threadsPerRow * vw * accBytes;
  if (handOver > target.sharedBytesPerBlock)
    return count(s.rowsPerBlock) + " row groups handing over " +
           count(handOver) + " bytes of sums (a block has " +
           count(target.sharedBytesPerBlock) + ")";
  return "";
}

std::string cuda::checkPartialTotalsSchedule(const PartialTotalsSchedule &s,
                                             int64_t numSums, Type acc,
                                             const GpuTarget &target) {
  auto count = [](int64_t n) { return std::to_string(n); };
  constexpr int64_t kMaxWarps =
      GpuTarget::kMaxThreadsPerBlock / GpuTarget::kWarpSize;
  if (s.warps < 1 || s.warps > kMaxWarps)
    return count(s.warps) + " warps (1 to " + count(kMaxWarps) + ")";
  if (s.unroll < 1 || s.unroll > PartialTotalsSchedule::kMaxUnroll)
    return count(s.unroll) + " parts in flight a lane (1 to " +
           count(PartialTotalsSchedule::kMaxUnroll) + ")";
  // Warps 1.. hand their totals to warp 0 in workgroup memory.
  int64_t accBytes = acc.getIntOrFloatBitWidth() / 8;
  int64_t handOver = (s.warps - 1) * numSums * GpuTarget::kWarpSize * accBytes;
  if (handOver > target.sharedBytesPerBlock)
    return count(s.warps) + " warps handing over " + count(handOver) +
           " bytes of totals (a block has " +
           count(target.sharedBytesPerBlock) + ")";
  return "";
}

FailureOr<GroupNormGradSchedule>
cuda::parseGroupNormGradSchedule(llvm::StringRef text, std::string &error) {
  // The dx kernel's and the finish's words; the rest are the sums'.
  llvm::SmallVector<llvm::StringRef> words, own;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  std::string sums;
  for (llvm::StringRef word : words) {
    if (word.starts_with("dx-") || word.starts_with("finish-") ||
        word.starts_with("one-kernel-"))
      own.push_back(word);
    else
      sums += (sums.empty() ? "" : " ") + word.str();
  }
  GroupNormGradSchedule s;
  FailureOr<ChannelReductionSchedule> channels =
      parseChannelReductionSchedule(sums, error);
  if (failed(channels))
    return failure();
  s.sums = *channels;
  bool ok = parseWords(
      own, [](llvm::StringRef) -> bool * { return nullptr; },
      [&](llvm::StringRef key) {
        return llvm::StringSwitch<int64_t *>(key)
            .Case("dx-block", &s.dx.blockSize)
            .Case("dx-vector", &s.dx.vectorWidth)
            .Case("dx-min-blocks-per-sm", &s.dx.minBlocksPerMultiprocessor)
            .Case("finish-block", &s.finishBlockSize)
            .Case("one-kernel-threads-per-row", &s.oneKernel.threadsPerRow)
            .Case("one-kernel-rows", &s.oneKernel.rowsPerBlock)
            .Case("one-kernel-vector", &s.oneKernel.vectorWidth)
            .Case("one-kernel-min-part", &s.oneKernel.minPart)
            .Default(nullptr);
      },
      error);
  if (!ok)
    return failure();
  return s;
}

std::string cuda::checkGroupNormGradSchedule(const GroupNormGradSchedule &s,
                                             int64_t channels, int64_t spatial,
                                             bool nhwc, Type elementType,
                                             const GpuTarget &target) {
  auto count = [](int64_t n) { return std::to_string(n); };
  // The sums per (image, channel): channels last in NHWC of a known count.
  int64_t inner = nhwc ? 1 : spatial;
  if (std::string why = checkChannelReductionSchedule(s.sums, channels, inner,
                                                      elementType, target);
      !why.empty())
    return why;
  if (s.sums.elementwise)
    return "an elementwise pass in the sums (the dx kernel is dx-)";
  if (s.sums.oneKernel)
    return "channels-first-one-kernel sums (the batch norms'; a group "
           "norm gradient's one kernel is one-kernel-)";
  int64_t bytes = std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8);
  int64_t vw = s.dx.vectorWidth;
  int64_t run = nhwc ? channels : spatial;
  if (vw < 1 || !llvm::isPowerOf2_64(vw) ||
      vw * bytes > GpuTarget::kMaxAccessBytes ||
      (ShapedType::isDynamic(run) ? vw != 1 : run % vw != 0))
    return "dx vectors of " + count(vw) + " elements for runs of " +
           (ShapedType::isDynamic(run) ? "unknown length" : count(run)) +
           " (a power of two of at most 16 bytes dividing them)";
  for (auto [what, threads, blocks] :
       {std::tuple<const char *, int64_t, int64_t>{
            "dx", s.dx.blockSize, s.dx.minBlocksPerMultiprocessor},
        {"finish", s.finishBlockSize, 1}})
    if (threads < 1 || threads > GpuTarget::kMaxThreadsPerBlock || blocks < 1 ||
        threads * blocks > target.maxThreadsPerMultiprocessor)
      return std::string(what) + " blocks of " + count(threads) + " threads, " +
             count(blocks) + " an SM";
  const GroupNormGradSchedule::OneKernel &one = s.oneKernel;
  if (!one.threadsPerRow)
    return "";
  // One launch: a position's channels across a row of threads in whole
  // vectors, whole warps a block.
  int64_t ow = one.vectorWidth;
  // (NCHW of one position is laid out as NHWC.)
  if (ShapedType::isDynamic(channels) || !(nhwc || spatial == 1))
    return "one-kernel-* words for " +
           std::string(nhwc ? "an unknown channel count"
                            : "NCHW (the one kernel is NHWC's)");
  if (ow < 1 || !llvm::isPowerOf2_64(ow) ||
      ow * bytes > GpuTarget::kMaxAccessBytes ||
      one.threadsPerRow * ow != channels)
    return "one-kernel rows of " + count(one.threadsPerRow) + " vectors of " +
           count(ow) + " elements for " + count(channels) +
           " channels (vectors of a power of two of at most 16 bytes, "
           "covering the channels)";
  int64_t threads = one.blockSize();
  if (one.rowsPerBlock < 1 || threads > GpuTarget::kMaxThreadsPerBlock ||
      threads % GpuTarget::kWarpSize != 0)
    return "one-kernel blocks of " + count(one.threadsPerRow) + " x " +
           count(one.rowsPerBlock) + " threads (whole warps, at most " +
           count(GpuTarget::kMaxThreadsPerBlock) + ")";
  if (one.minPart < 1)
    return "one-kernel parts of at least " + count(one.minPart) +
           " positions (at least 1)";
  // Its workgroup memory: rows 1.. hand their two sums to row 0; two
  // means per group (at most one group a channel).
  int64_t accBytes = std::max<int64_t>(bytes, 4);
  int64_t shared = one.rowsPerBlock * 2 * channels * accBytes;
  if (shared > target.sharedBytesPerBlock)
    return "one-kernel blocks of " + count(shared) +
           " bytes of workgroup memory (a block has " +
           count(target.sharedBytesPerBlock) + ")";
  return "";
}

/// Reads "AxBx..." of `fields.size()` positive counts into `fields`.
static bool parseDims(llvm::StringRef text, llvm::ArrayRef<int64_t *> fields) {
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, 'x');
  if (parts.size() != fields.size())
    return false;
  for (auto [part, field] : llvm::zip(parts, fields))
    if (part.getAsInteger(10, *field) || *field < 1)
      return false;
  return true;
}

FailureOr<TiledProductSchedule>
cuda::parseTiledProductSchedule(llvm::StringRef text, std::string &error) {
  using Kind = TiledProductSchedule::Kind;
  llvm::SmallVector<llvm::StringRef> words, counts;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  if (words.empty() || (words.front() != "tiled-product" &&
                        words.front() != "tensor-core-product")) {
    error = "a product's schedule starts with tiled-product or "
            "tensor-core-product";
    return failure();
  }
  TiledProductSchedule s;
  bool tensorCore = words.front() == "tensor-core-product";
  s.kind = tensorCore ? Kind::TensorCore : Kind::Simt;
  // The tensor-core kernel's registers are not capped by a second block.
  if (tensorCore)
    s.minBlocksPerMultiprocessor = 1;
  // The tile, and the threads' (SIMT) or warps' (tensor cores) shape.
  bool tile = false, layout = false;
  llvm::StringRef layoutKey = tensorCore ? "warps" : "thread";
  for (llvm::StringRef word : llvm::ArrayRef(words).drop_front()) {
    auto [key, value] = word.split('=');
    if (key == "tile") {
      if (!parseDims(value, {&s.tileM, &s.tileN, &s.tileK})) {
        error = "'" + word.str() + "' is not a tile MxNxK";
        return failure();
      }
      tile = true;
    } else if (tensorCore && key == "small-tile") {
      std::optional<TiledProductSchedule::TensorCoreTile> t =
          TiledProductSchedule::TensorCoreTile::parse(value);
      if (!t) {
        error = "'" + word.str() + "' is not a tile MxNxK/stages/WMxWN";
        return failure();
      }
      s.smallTile = *t;
    } else if (key == layoutKey) {
      bool ok = tensorCore ? parseDims(value, {&s.warpsM, &s.warpsN})
                           : parseDims(value, {&s.threadM, &s.threadN});
      if (!ok) {
        error = "'" + word.str() + "' is not " + layoutKey.str() + "=AxB";
        return failure();
      }
      layout = true;
    } else {
      counts.push_back(word);
    }
  }
  if (!tile || !layout) {
    error = "a " + words.front().str() + " schedule has tile=MxNxK and " +
            layoutKey.str() + "=AxB";
    return failure();
  }
  bool ok = parseWords(
      counts,
      [&](llvm::StringRef word) -> bool * {
        if (!tensorCore)
          return nullptr;
        return word == "tf32"               ? &s.tf32
               : word == "wgmma"            ? &s.wgmma
               : word == "tma"              ? &s.tma
               : word == "warp-specialized" ? &s.warpSpecialized
               : word == "multicast"        ? &s.multicast
               : word == "pingpong"         ? &s.pingpong
                                            : nullptr;
      },
      [&](llvm::StringRef key) {
        auto fields = llvm::StringSwitch<int64_t *>(key)
                          .Case("tile-group-rows", &s.tileGroupRows)
                          .Case("max-blocks", &s.maxBlocks)
                          .Case("split-k", &s.splitK)
                          .Case("finish-block", &s.finish.blockSize)
                          .Case("finish-vector", &s.finish.vectorWidth)
                          .Case("finish-min-blocks-per-sm",
                                &s.finish.minBlocksPerMultiprocessor)
                          .Default(nullptr);
        if (fields || !tensorCore)
          return fields;
        return llvm::StringSwitch<int64_t *>(key)
            .Case("stages", &s.stages)
            .Case("split-k-max", &s.splitKMax)
            .Case("split-k-blocks", &s.splitKBlocks)
            .Case("split-k-min-tiles", &s.splitKMinTiles)
            .Case("small-tile-below", &s.smallTileBelow)
            .Default(nullptr);
      },
      error);
  if (!ok)
    return failure();
  return s;
}

std::string cuda::checkTensorCoreTile(const TiledProductSchedule &s,
                                      int64_t elementBytes,
                                      const GpuTarget &target) {
  auto count = [](int64_t n) { return std::to_string(n); };
  int64_t tm = s.tileM, tn = s.tileN, tk = s.tileK, wm = s.warpsM,
          wn = s.warpsN;
  if (tm < 16 || tn < 16 || tk < 16 || tm > 256 || tn > 256 || tk > 128 ||
      wm < 1 || wn < 1 || wm * wn > 16 || s.stages < 2 || s.stages > 8)
    return "tiles of 16 to 256 rows and columns and 16 to 128 of K, at most "
           "16 warps and 2 to 8 stages";
  // (Warp specialized, a producer warpgroup beside one or two teams.)
  int64_t blockThreads =
      GpuTarget::kWarpSize * wm * wn * s.teams() +
      (s.warpSpecialized ? TiledProductSchedule::kProducerThreads : 0);
  if (blockThreads > GpuTarget::kMaxThreadsPerBlock)
    return "blocks of " + count(blockThreads) + " threads (at most " +
           count(GpuTarget::kMaxThreadsPerBlock) + ")";
  // Warp parts of whole m16 fragments and pairs of n8 fragments; K steps
  // of two 16-byte chunks (16 of f16, 8 of f32); every thread copies whole
  // 16-byte chunks of each stage.
  int64_t threads = GpuTarget::kWarpSize * wm * wn;
  int64_t chunk = GpuTarget::kMaxAccessBytes / elementBytes;
  if (s.wgmma) {
    // Warpgroups of 4 warps along M, each a whole number of m64 rows by
    // one wgmma's N; K tiles whose K-major rows are one swizzle (32, 64 or
    // 128 bytes); one stage copied ahead at least.
    if (target.smVersion != 90 || !target.archSpecific())
      return "wgmma needs sm_90a (the target is " + target.name() +
             ", which compiles for " + target.arch + ")";
    if (elementBytes != 2)
      return "wgmma on f16 or bf16 operands here";
    if (wm % 4 || tm % (64 * (wm / 4)))
      return "warpgroups of " + count(wm) + "x" + count(wn) +
             " warps (warps along M a multiple of 4) over " + count(tm) +
             " rows (64 a warpgroup at a time)";
    int64_t groupN = tn / wn;
    if (tn % wn || (groupN != 64 && groupN != 128 && groupN != 256))
      return "warpgroups of " + count(groupN) + " columns (64, 128 or 256)";
    if (tm / (wm / 4) / 64 * groupN / 2 > 128)
      return count(tm / (wm / 4) / 64 * groupN / 2) +
             " accumulators a thread (at most 128)";
    if (tk != 16 && tk != 32 && tk != 64)
      return "K tiles of " + count(tk) + " (16, 32 or 64: rows of one swizzle)";
    if (s.stages < 3)
      return count(s.stages) + " stages (wgmma copies stages - 2 ahead: at "
                               "least 3)";
    // Each block of a cluster loads half of B's tile: whole boxes of 64
    // columns.
    if (s.multicast && !target.clusters)
      return "multicast needs thread-block clusters (" + target.name() +
             " has none)";
    if (s.multicast && tn % 128)
      return "multicast halves of " + count(tn) +
             " columns (a multiple of 128: boxes of 64 a block)";
  } else if (tm % (16 * wm) || tn % (16 * wn))
    return "warps of " + count(tm / wm) + "x" + count(tn / wn) +
           " outputs (whole 16x16 fragments each)";
  if (tk % (2 * chunk))
    return "K tiles of " + count(tk) + " (a multiple of " + count(2 * chunk) +
           ")";
  // (Warp specialized, the producer warpgroup copies them where TMA does
  // not.)
  if (s.warpSpecialized)
    threads = TiledProductSchedule::kProducerThreads;
  if ((tm * tk / chunk) % threads || (tn * tk / chunk) % threads)
    return "16-byte chunks of a stage that " + count(threads) +
           " threads do not share evenly";
  // (With TMA or warp specialized, an 8-byte mbarrier a stage beside them,
  // two when warp specialized, and the result tile's own buffer; in teams,
  // a buffer and an mbarrier a team.)
  int64_t stageBytes =
      (tm + tn) * tk * elementBytes +
      (s.tma || s.warpSpecialized ? 8 : 0) * (s.warpSpecialized ? 2 : 1);
  int64_t teams = s.teams();
  int64_t staging = s.warpSpecialized ? tm * tn * elementBytes : 0;
  if (s.stages * stageBytes + teams * staging + (teams > 1 ? 8 * teams : 0) >
      target.sharedBytesPerBlock)
    return count(s.stages) + " stages of " + count(stageBytes) + " bytes" +
           (staging ? " and a result tile of " + count(staging) + " bytes" +
                          (teams > 1 ? " a team" : "")
                    : std::string()) +
           " (a block of " + target.name() + " has " +
           count(target.sharedBytesPerBlock) + ")";
  return "";
}

std::string cuda::checkTiledProductSchedule(const TiledProductSchedule &s,
                                            const ProductShape &p,
                                            const GpuTarget &target) {
  using Kind = TiledProductSchedule::Kind;
  auto count = [](int64_t n) { return std::to_string(n); };
  auto bytesOf = [](Type t) {
    return std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
  };
  if (s.tileGroupRows < 1)
    return "tile-group-rows=0";
  // Blocks beyond the tiles loop over them (one block can do all).
  if (s.maxBlocks < 1 || s.maxBlocks > 65535)
    return "max-blocks=" + count(s.maxBlocks) + " (1 to 65535)";
  // The SIMT kernel's partial sums are in its accumulation type: f32 (the
  // finish reads them 16 bytes at a time as f32).
  if (s.splitK < 1 ||
      (s.splitK > 1 && s.kind != Kind::TensorCore &&
       (bytesOf(p.elementType) > 4 || bytesOf(p.resultType) > 4)))
    return "split-k=" + count(s.splitK) +
           " (at least 1; the SIMT kernel splits K of f32 sums only)";
  if (s.splitKMax > 0 &&
      (s.splitK > 1 || s.splitKBlocks < 1 || s.splitKMinTiles < 1))
    return "a split of K at launch (split-k-max) with split-k=" +
           count(s.splitK) + ", split-k-blocks=" + count(s.splitKBlocks) +
           " and split-k-min-tiles=" + count(s.splitKMinTiles) +
           " (no split-k, at least one block and one K tile a range)";
  if (!s.smallTile.empty() || s.smallTileBelow) {
    if (s.smallTile.empty() || s.smallTileBelow < 1 || s.splitKMax < 1)
      return "a small tile (small-tile=MxNxK/stages/WMxWN, used below "
             "small-tile-below tiles) only with a split of K at launch "
             "(split-k-max), and both words";
    if (s.kind == Kind::TensorCore)
      if (std::string why =
              checkTensorCoreTile(s.withSmallTile(), s.tf32 ? 4 : 2, target);
          !why.empty())
        return "small-tile=" + s.smallTile.str() + ": " + why;
  }
  if (s.splitsK()) {
    // The finish adds finish-vector consecutive results a thread: a width
    // of at most 16 bytes of results that divides the rows, where the
    // columns are consecutive.
    const PointwiseSchedule &f = s.finish;
    int64_t vw = f.vectorWidth;
    bool divides =
        p.consecutiveColumns && !ShapedType::isDynamic(p.n) && p.n % vw == 0;
    if (vw < 1 || !llvm::isPowerOf2_64(vw) ||
        vw * bytesOf(p.resultType) > GpuTarget::kMaxAccessBytes ||
        (vw > 1 && !divides))
      return "a split K's finish vector of " + count(vw) +
             " results (a power of two of at most 16 bytes dividing "
             "consecutive rows of " +
             (ShapedType::isDynamic(p.n) ? "unknown length" : count(p.n)) + ")";
    if (f.blockSize < 1 || f.blockSize > GpuTarget::kMaxThreadsPerBlock ||
        f.minBlocksPerMultiprocessor < 1 ||
        f.blockSize * f.minBlocksPerMultiprocessor >
            target.maxThreadsPerMultiprocessor)
      return "finish blocks of " + count(f.blockSize) + " threads, " +
             count(f.minBlocksPerMultiprocessor) + " an SM";
  }
  Type element = p.elementType;
  if (s.kind == Kind::TensorCore) {
    if (target.smVersion < 80)
      return "tensor cores need sm_80 or newer (the target is " +
             target.name() + ")";
    if (!p.tensorCoreOperands)
      return "the tensor-core kernel cannot stage these operands (both of "
             "one type, consecutive along one of their dimensions, summed "
             "in f32)";
    if (s.tf32 && !element.isF32())
      return "tf32 for operands that are not f32";
    if (s.wgmma && s.tf32)
      return "wgmma with tf32 (wgmma here takes f16 or bf16)";
    if (s.tma && !s.wgmma)
      return "tma without wgmma (TMA loads feed the wgmma kernel here)";
    if (s.warpSpecialized && !s.wgmma)
      return "warp-specialized without wgmma (its consumers are "
             "warpgroups)";
    if (s.pingpong && !s.warpSpecialized)
      return "pingpong without warp-specialized (its producer warpgroup "
             "feeds the two teams in turns)";
    if (s.multicast && !s.tma)
      return "multicast without tma (the blocks share B's tiles by TMA "
             "loads)";
    if (s.multicast && !s.warpSpecialized)
      return "multicast without warp-specialized (the clusters' producer "
             "warpgroups share B's tiles)";
    if (!element.isF16() && !element.isBF16() && !s.tf32)
      return element.isF32()
                 ? "f32 operands on tensor cores only as tf32"
                 : "tensor cores take f16, bf16 or (as tf32) f32 operands";
    return checkTensorCoreTile(s, s.tf32 ? 4 : 2, target);
  }
  if (s.tf32)
    return "tf32 on the SIMT kernel";
  // SIMT: threads in a grid over the tile, each threadM x threadN sums in
  // groups of v consecutive rows and columns (16 bytes of sums or fewer).
  int64_t accBytes =
      std::max(bytesOf(element), bytesOf(p.resultType)) > 4 ? 8 : 4;
  auto power = [](int64_t n) { return n >= 1 && llvm::isPowerOf2_64(n); };
  if (!power(s.threadM) || !power(s.threadN) || s.tileM % s.threadM ||
      s.tileN % s.threadN)
    return "threads of " + count(s.threadM) + "x" + count(s.threadN) +
           " sums (powers of two dividing the tile)";
  int64_t threads = s.blockSize();
  if (threads > GpuTarget::kMaxThreadsPerBlock)
    return "blocks of " + count(threads) + " threads";
  if (s.threadM * s.threadN * accBytes > 64 * 4)
    return count(s.threadM) + "x" + count(s.threadN) + " sums of " +
           count(accBytes) + " bytes a thread (more than 64 registers)";
  // The operands' chunks of 16 bytes (at most 4 elements) tile both
  // dimensions of a stage.
  int64_t chunk =
      std::clamp<int64_t>(GpuTarget::kMaxAccessBytes / bytesOf(element), 1, 4);
  if (s.tileM % chunk || s.tileN % chunk || s.tileK % chunk)
    return "a tile of " + count(s.tileM) + "x" + count(s.tileN) + "x" +
           count(s.tileK) + " (multiples of " + count(chunk) + ")";
  int64_t bytes = 2 * (s.tileM + s.tileN) * s.tileK * accBytes;
  if (bytes > target.sharedBytesPerBlock)
    return "two stages of " + count(bytes / 2) + " bytes (a block of " +
           target.name() + " has " + count(target.sharedBytesPerBlock) + ")";
  return "";
}

FailureOr<PointwiseSchedule> cuda::parsePointwiseSchedule(llvm::StringRef text,
                                                          std::string &error) {
  llvm::SmallVector<llvm::StringRef> words;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  if (words.empty() || words.front() != "grid-stride") {
    error = "an elementwise op's schedule starts with grid-stride";
    return failure();
  }
  PointwiseSchedule s;
  bool ok = parseWords(
      llvm::ArrayRef(words).drop_front(),
      [&](llvm::StringRef word) {
        return word == "peeled" ? &s.peeled : nullptr;
      },
      [&](llvm::StringRef key) {
        return llvm::StringSwitch<int64_t *>(key)
            .Case("block", &s.blockSize)
            .Case("vector", &s.vectorWidth)
            .Case("min-blocks-per-sm", &s.minBlocksPerMultiprocessor)
            .Default(nullptr);
      },
      error);
  if (!ok)
    return failure();
  return s;
}

std::string cuda::checkPointwiseSchedule(const PointwiseSchedule &s,
                                         int64_t numElements, Type elementType,
                                         const GpuTarget &target) {
  auto count = [](int64_t n) { return std::to_string(n); };
  int64_t bytes = std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8);
  int64_t vw = s.vectorWidth;
  if (vw < 1 || !llvm::isPowerOf2_64(vw) ||
      vw * bytes > GpuTarget::kMaxAccessBytes)
    return "vectors of " + count(vw) + " elements of " + count(bytes) +
           " bytes (a power of two of at most 16 bytes)";
  if (!s.peeled && vw > 1 &&
      (ShapedType::isDynamic(numElements) || numElements % vw != 0))
    return "vectors of " + count(vw) + " elements that do not divide " +
           (ShapedType::isDynamic(numElements) ? "an unknown count"
                                               : count(numElements)) +
           " elements (peel them)";
  if (s.blockSize < 1 || s.blockSize > GpuTarget::kMaxThreadsPerBlock ||
      s.minBlocksPerMultiprocessor < 1 ||
      s.blockSize * s.minBlocksPerMultiprocessor >
          target.maxThreadsPerMultiprocessor)
    return "blocks of " + count(s.blockSize) + " threads, " +
           count(s.minBlocksPerMultiprocessor) + " an SM";
  return "";
}

std::string cuda::checkGenericSchedule(const PointwiseSchedule &s,
                                       const GenericKernelShape &shape,
                                       const GpuTarget &target) {
  auto count = [](int64_t n) {
    return ShapedType::isDynamic(n) ? std::string("an unknown count")
                                    : std::to_string(n);
  };
  int64_t vw = s.vectorWidth;
  // Vectors within rows: they divide the rows, with no tail to peel.
  if (!shape.flat && s.peeled)
    return "a peel of vectors within rows (the operands are not all laid "
           "out as the result)";
  if (std::string why =
          checkPointwiseSchedule(s, shape.elements, shape.widest, target);
      !why.empty())
    return why;
  if (vw == 1)
    return "";
  if (shape.gather)
    return "vectors of " + std::to_string(vw) +
           " elements of an operand read across (one element at a time)";
  for (int64_t row : shape.rows)
    if (ShapedType::isDynamic(row) || row % vw != 0)
      return "vectors of " + std::to_string(vw) +
             " elements that do not divide an operand's rows of " + count(row);
  return "";
}

std::string cuda::checkWindowCopySchedule(const PointwiseSchedule &s,
                                          int64_t elements, Type elementType,
                                          const GpuTarget &target) {
  if (s.vectorWidth != 1 || s.peeled)
    return "vectors of " + std::to_string(s.vectorWidth) +
           " elements in a window copy (one element at a time)";
  return checkPointwiseSchedule(s, elements, elementType, target);
}

FailureOr<LinalgReductionSchedule>
cuda::parseLinalgReductionSchedule(llvm::StringRef text, std::string &error) {
  using Kind = LinalgReductionSchedule::Kind;
  llvm::SmallVector<llvm::StringRef> words;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  std::optional<Kind> kind;
  if (!words.empty())
    kind = llvm::StringSwitch<std::optional<Kind>>(words.front())
               .Case("thread-per-result", Kind::ThreadPerResult)
               .Case("warp-per-result", Kind::WarpPerResult)
               .Case("block-per-result", Kind::BlockPerResult)
               .Case("block-columns", Kind::BlockColumns)
               .Default(std::nullopt);
  if (!kind) {
    error = "a linalg reduction's schedule starts with thread-per-result, "
            "warp-per-result, block-per-result or block-columns";
    return failure();
  }
  LinalgReductionSchedule s;
  s.kind = *kind;
  bool ok = parseWords(
      llvm::ArrayRef(words).drop_front(),
      [](llvm::StringRef) -> bool * { return nullptr; },
      [&](llvm::StringRef key) {
        return llvm::StringSwitch<int64_t *>(key)
            .Case("block", &s.blockSize)
            .Case("splits", &s.splits)
            .Case("vector", &s.vectorWidth)
            .Default(nullptr);
      },
      error);
  if (!ok)
    return failure();
  return s;
}

std::string
cuda::checkLinalgReductionSchedule(const LinalgReductionSchedule &s,
                                   const LinalgReductionShape &shape,
                                   const GpuTarget &target) {
  (void)target;
  using Kind = LinalgReductionSchedule::Kind;
  auto count = [](int64_t n) { return std::to_string(n); };
  bool ordered = !shape.tree;
  if (ordered && (s.kind != Kind::ThreadPerResult || s.splits != 1))
    return "a body that must run in order on more than a thread per result "
           "(thread-per-result, in one part)";
  bool shared = s.kind != Kind::ThreadPerResult;
  if (s.blockSize < 1 || s.blockSize > GpuTarget::kMaxThreadsPerBlock ||
      (shared && s.blockSize % GpuTarget::kWarpSize != 0))
    return "blocks of " + count(s.blockSize) + " threads (1 to " +
           count(GpuTarget::kMaxThreadsPerBlock) +
           (shared ? ", whole warps where threads share a result)" : ")");
  if (s.splits < 1 || s.splits > LinalgReductionSchedule::kMaxSplits)
    return count(s.splits) + " parts a result (1 to " +
           count(LinalgReductionSchedule::kMaxSplits) + ")";
  if (s.splits > 1 && ShapedType::isDynamic(shape.results))
    return "parts of an unknown count of results";
  int64_t vw = s.vectorWidth;
  if (vw == 1)
    return "";
  if (s.kind != Kind::WarpPerResult && s.kind != Kind::BlockPerResult)
    return "vectors of " + count(vw) +
           " elements on a reduction other than warp or block rows";
  if (vw < 1 || !llvm::isPowerOf2_64(vw) || vw > shape.rowVector)
    return "vectors of " + count(vw) + " elements where the operands allow " +
           count(shape.rowVector) +
           " (a power of two, unit stride, at most 16 bytes)";
  if (ShapedType::isDynamic(shape.elements) || shape.elements % vw != 0)
    return "vectors of " + count(vw) + " elements that do not divide rows of " +
           (ShapedType::isDynamic(shape.elements)
                ? std::string("unknown length")
                : count(shape.elements));
  return "";
}
