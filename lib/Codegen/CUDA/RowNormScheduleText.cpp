//===- RowNormScheduleText.cpp - row-norm schedules as inputs ---*- C++ -*-===//
//
// Part of normfuse. A forward row norm's schedule is written on the op as
// text (nf.gpu_schedule, RowNormSchedule::str()'s words) before the
// lowering reads it: this file parses that text and checks a schedule
// against the op it is to run, so that a schedule written by hand (or by a
// tuner) is refused with its reason rather than computing wrong rows.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/CUDA/Schedule.h"

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
    if (s.kind == Kind::ClusterRow && !rows)
      return "a cluster row for a group norm (only layer and RMS norms)";
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
  for (llvm::StringRef word : words) {
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
  return g;
}

std::string cuda::checkRowNormGradSchedule(const RowNormGradSchedule &g,
                                           int64_t cols, Type elementType,
                                           const GpuTarget &target) {
  using Kind = RowNormSchedule::Kind;
  const RowNormSchedule &s = g.rows;
  auto count = [](int64_t n) { return std::to_string(n); };
  if (s.kind != Kind::WarpRows && s.kind != Kind::BlockRowInRegisters &&
      s.kind != Kind::SplitRow)
    return RowNormSchedule::kindName(s.kind).str() +
           " for a gradient (warp-rows, block-row-registers or split-row)";
  if (s.peeled || s.paramsInRegisters || s.streaming)
    return "peeled, params-in-registers and streaming belong to forward "
           "rows";
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
  // Row groups 1.. hand their column sums to group 0 in workgroup memory
  // (dynamic past 48 KiB).
  int64_t accBytes = elementType.getIntOrFloatBitWidth() > 32 ? 8 : 4;
  int64_t handOver = (s.rowsPerBlock - 1) * s.chunkElements * accBytes;
  if (handOver > target.sharedBytesPerBlock)
    return count(s.rowsPerBlock) + " row groups handing over " +
           count(handOver) + " bytes of column sums (a block has " +
           count(target.sharedBytesPerBlock) + ")";
  return "";
}

FailureOr<ChannelReductionSchedule>
cuda::parseChannelReductionSchedule(llvm::StringRef text, std::string &error) {
  llvm::SmallVector<llvm::StringRef> words;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  ChannelReductionSchedule s;
  if (words.empty() ||
      (words.front() != "channels-last" && words.front() != "channels-first")) {
    error = "a channel reduction's schedule starts with channels-last or "
            "channels-first";
    return failure();
  }
  s.channelsLast = words.front() == "channels-last";
  bool ok = parseWords(
      llvm::ArrayRef(words).drop_front(),
      [](llvm::StringRef) -> bool * { return nullptr; },
      [&](llvm::StringRef key) {
        return llvm::StringSwitch<int64_t *>(key)
            .Case("threads-per-row", &s.threadsPerRow)
            .Case("rows-per-block", &s.rowsPerBlock)
            .Case("vector", &s.vectorWidth)
            .Case("registers", &s.vectorsPerThread)
            .Case("max-blocks", &s.maxBlocks)
            .Default(nullptr);
      },
      error);
  if (!ok)
    return failure();
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

FailureOr<GroupNormGradSchedule>
cuda::parseGroupNormGradSchedule(llvm::StringRef text, std::string &error) {
  // The dx kernel's and the finish's words; the rest are the sums'.
  llvm::SmallVector<llvm::StringRef> words, own;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  std::string sums;
  for (llvm::StringRef word : words) {
    if (word.starts_with("dx-") || word.starts_with("finish-"))
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
  return "";
}
