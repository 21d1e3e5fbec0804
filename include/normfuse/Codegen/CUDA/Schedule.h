//===- Schedule.h - how each nf kernel runs on an NVIDIA GPU ----*- C++ -*-===//
//
// Part of normfuse. The CUDA back end's schedule layer: the one place that
// chooses, from a kernel's shape, element type and the target architecture,
// how its work is spread over warps, blocks and registers (after IREE's
// KernelConfig). The lowerings only follow the choice. Each choice is
// written on its kernel as the `nf.schedule` attribute, which the FileCheck
// tests read.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_CUDA_SCHEDULE_H
#define NORMFUSE_CODEGEN_CUDA_SCHEDULE_H

#include "normfuse/Runtime/GpuTarget.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::nf::cuda {

/// The GPU a kernel is generated for (normfuse/Runtime/GpuTarget.h): its
/// architecture, multiprocessors, registers, shared memory and L2.
using normfuse::runtime::GpuTarget;

/// The copy of an NCHW operand to channels last (ChannelsLastCopy.cpp):
/// square tiles of this side through shared memory, a block taking this
/// many of a tile's rows at a time.
inline constexpr int64_t kChannelsLastCopyTile = 32;
inline constexpr int64_t kChannelsLastCopyRowsPerPass = 8;

/// How a forward norm over the trailing dimensions (layer_norm, rms_norm)
/// runs: rows of `cols` elements, each normalized by `threadsPerRow` threads
/// that read it `vectorWidth` elements at a time.
struct RowNormSchedule {
  enum class Kind {
    /// Short rows: a warp, or a power-of-two part of one, per row, several
    /// rows per block; the row stays in registers, statistics by warp
    /// shuffles alone.
    WarpRows,
    /// Medium rows: a block per row, the row held in registers
    /// (`vectorsPerThread` vectors per thread); statistics by shuffles
    /// within warps and shared memory across them. One read of x.
    BlockRowInRegisters,
    /// A block per row, reading the row three times (sum, squared
    /// deviations around the mean, normalize); the second and third reads
    /// come from L2 when the row fits there. Only when forced: a split row
    /// keeps more of the GPU busy.
    BlockRowStreaming,
    /// Rows too long for one block's (or cluster's) registers, or of a
    /// length unknown when the kernel is generated: each row split into
    /// chunks of `chunkElements`, a block per chunk, in two kernels. The
    /// first loads its chunk once into registers (`vectorsPerThread`
    /// vectors a thread) and writes the chunk's moments (count, mean, M2
    /// around the chunk's own mean, both from the registers); the second
    /// combines a row's chunks (Chan's formula, in a fixed order) and
    /// normalizes its chunk. x is read twice, once by each kernel. There is
    /// no upper limit on the row length.
    SplitRow,
    /// A group or instance norm in NHWC with a known channel count: the
    /// threads of a block lie across a position's channels
    /// (`threadsPerRow` threads of a `vectorWidth` vector each, the width
    /// dividing the channels, whatever the channels per group) and
    /// `rowsPerBlock` positions, each lane knowing its group. Three
    /// kernels: each block takes the moments of every group over a part
    /// of an image (`chunkElements` positions: two sweeps, from L1/L2 the
    /// second, the groups' sums gathered in shared memory in a fixed
    /// order); a block per (image, group) combines its parts (Chan, a fixed
    /// order); the third normalizes the parts. Every access is a whole
    /// vector of a position's contiguous channels.
    ///
    /// Where `residentBlocks` > 0, a fourth kernel does it all at once
    /// when the device holds every block it needs (decided when the
    /// kernels are loaded; the three kernels otherwise): parts of
    /// rowsPerBlock * vectorsPerThread positions, each thread holding its
    /// positions' vectors in registers; each block writes its part's
    /// moments per group, the grid's barrier (a cooperative launch), then
    /// every block combines its image's parts per group (Chan, a warp a
    /// group, in a fixed order, so every block computes the same bits) and
    /// normalizes its registers. x is read once, in one launch. The kernel
    /// is compiled for `residentBlocks` blocks an SM (__launch_bounds__'s
    /// minimum), which the grid is planned within.
    ChannelsLastGroups,
    /// Rows longer than one block holds in registers, on targets with
    /// thread-block clusters (sm_90): a cluster of `clusterBlocks` blocks
    /// per row, each of `threadsPerRow` threads holding `vectorsPerThread`
    /// vectors, so the row is read once. The cluster's threads act as one
    /// block of clusterBlocks * threadsPerRow threads (thread t of block r
    /// is lane r * threadsPerRow + t of the row); each block sums its part,
    /// stores the sum into every block's shared memory (distributed shared
    /// memory) and, after the cluster's barrier, every thread adds the
    /// blocks' sums in rank order, so all hold the same bits. Two such
    /// exchanges (the mean, then the squared deviations from it) for a
    /// layer norm, one for an RMS norm.
    ClusterRow,
  };
  Kind kind = Kind::BlockRowStreaming;
  int64_t threadsPerRow = 256;
  int64_t rowsPerBlock = 1;
  /// Elements per global load and store: 16 bytes or fewer, dividing the
  /// row length (so every row starts on a whole vector) unless `peeled`.
  int64_t vectorWidth = 1;
  /// Rows of a length no 16-byte vector divides (or unknown): each row (a
  /// split row: each chunk) is read and written as a head of single
  /// elements up to the first 16-byte boundary, whole 16-byte vectors, and
  /// a tail of single elements (fewer than a vector each). The scale and
  /// bias, whose alignment differs from the row's, are read an element at
  /// a time. Threads per row are at least a vector's lanes, so one element
  /// of the head and of the tail per thread covers them.
  bool peeled = false;
  /// Vectors each thread keeps in registers (0 when streaming; a split
  /// row's first kernel, of its chunk).
  int64_t vectorsPerThread = 0;
  /// SplitRow: the elements of one chunk (a multiple of the vector width);
  /// ChannelsLastGroups: the positions of one part (a multiple of
  /// rowsPerBlock; where `partsFromResidency`, as planned for the target).
  int64_t chunkElements = 0;
  /// ChannelsLastGroups: the parts are sized when the kernels are loaded,
  /// so that the device holds every block of an image's parts at once (the
  /// positions over the blocks the device holds of the first and third
  /// kernels, by their registers and shared memory), not from the threads
  /// alone.
  bool partsFromResidency = false;
  /// ChannelsLastGroups: warps of a block of the finishing kernel (a block
  /// per (image, group), combining the group's parts).
  int64_t finishWarps = 8;
  /// WarpRows and BlockRowInRegisters of whole vectors: a lane's columns
  /// are the same in every row, so a layer or RMS norm's scale and bias at
  /// those columns are loaded into registers once per block, before its
  /// first row, when they fit in registers beside the row. Otherwise they
  /// are loaded per row, after the reductions.
  bool paramsInRegisters = false;
  /// WarpRows and BlockRowInRegisters of a layer or RMS norm whose x (and
  /// so y) is larger than the target's L2: the start of y cannot still be
  /// in L2 when a later kernel reads it, so y goes out through streaming
  /// stores (st.global.cs, evict-first), which keep L2 for what is read
  /// again (the scale and bias, other kernels' data). x is loaded as usual:
  /// an evict-first load (ld.global.cs or an L2 cache policy, both inline
  /// PTX) took the 1024-column f32 warp rows from 62 to 76 registers (4 to
  /// 3 blocks an SM) under ptxas 13.0.
  bool streaming = false;
  /// ClusterRow: the blocks of a row's cluster (2 to 8); 1 otherwise.
  int64_t clusterBlocks = 1;
  /// ChannelsLastGroups: the blocks an SM the one-kernel variant is
  /// compiled for (0: none, three kernels only); its blocks are
  /// threadsPerRow x oneKernelRows() threads.
  int64_t residentBlocks = 0;

  int64_t blockSize() const { return threadsPerRow * rowsPerBlock; }
  /// The threads that share one row: a cluster's for ClusterRow.
  int64_t rowThreads() const { return threadsPerRow * clusterBlocks; }
  /// ChannelsLastGroups' one-kernel variant: its positions a block
  /// (rowsPerBlock rounded up to whole warps, which its finish shuffles
  /// in) and its positions a part.
  int64_t oneKernelRows() const;
  int64_t oneKernelPart() const { return oneKernelRows() * vectorsPerThread; }
  /// "warp-rows threads-per-row=32 rows-per-block=8 vector=4 registers=2"
  std::string str() const;
  /// A kind's name in str() ("cluster-row"), and the kind a name names.
  static llvm::StringRef kindName(Kind kind);
  static std::optional<Kind> kindNamed(llvm::StringRef name);
};

/// What the lowering may be asked to use instead of the automatic choice.
/// The plain kinds are sized for tests (small blocks and chunks, norm
/// gradients on two blocks: small shapes reach every path); each has a
/// full-size form ("<name>:full", the *Full values), at the sizes the
/// schedule layer gives that kind, for comparing schedules on a GPU.
enum class ForcedRowNormKind {
  Auto,
  WarpRows,
  BlockRowInRegisters,
  BlockRowStreaming,
  /// SplitRow with small chunks (32 threads, 2 vectors each), so that rows
  /// of a few hundred elements already split.
  SplitRow,
  /// ChannelsLastGroups (group and instance norms in NHWC of a known
  /// channel count; Auto for everything else) with parts of one sweep of
  /// rowsPerBlock positions, so that small images have several parts;
  /// three kernels. Group and instance norm gradients: their four
  /// kernels, without the one-kernel variant.
  ChannelsLastGroups,
  /// The same with its one-kernel variant (2 vectors a thread, parts of
  /// two sweeps), where the grid fits.
  ChannelsLastOneKernel,
  /// ClusterRow (forward layer and RMS norms of a known row length, on a
  /// target with clusters; Auto for everything else) with small blocks (32
  /// threads of up to 2 vectors each) and at least 2 of them, so that rows
  /// of a few hundred elements already span a cluster.
  ClusterRow,
  // The full-size forms, in the order of the kinds above.
  WarpRowsFull,
  BlockRowInRegistersFull,
  BlockRowStreamingFull,
  SplitRowFull,
  ChannelsLastGroupsFull,
  ChannelsLastOneKernelFull,
  ClusterRowFull,
};

/// The names a forced row-norm schedule is given by (the pass option, the
/// JIT's and the tools' options), as a list for messages.
inline constexpr const char *kForcedRowNormKinds =
    "auto, warp-rows, block-row-registers, block-row-streaming, split-row, "
    "channels-last-groups, channels-last-one-kernel, cluster-row, each "
    "optionally with ':full'";

/// The forced kind `name` names (one of kForcedRowNormKinds), or failure.
FailureOr<ForcedRowNormKind> parseForcedRowNormKind(llvm::StringRef name);

/// Whether `forced` is a full-size form (":full").
bool isFullSize(ForcedRowNormKind forced);

/// The kind `forced` forces, sized for tests (a full-size form's plain
/// kind; the others as they are).
ForcedRowNormKind plainKind(ForcedRowNormKind forced);

/// The schedule of a row norm with `rows` rows of `cols` elements
/// (ShapedType's kDynamic when unknown) of `elementType`, with a scale or a
/// bias (or both) where `perColumnParams`.
RowNormSchedule
selectRowNormSchedule(int64_t cols, Type elementType, const GpuTarget &target,
                      ForcedRowNormKind forced = ForcedRowNormKind::Auto,
                      bool perColumnParams = false,
                      int64_t rows = ShapedType::kDynamic);

/// The schedule of a group or instance norm whose groups hold
/// `elementsPerGroup` elements, read in runs of `contiguous` elements (the
/// channels of a group at one position for NHWC, a channel's positions for
/// NCHW), vectors that divide the runs: groups of up to 1024 elements as
/// warp rows (a power-of-two part of a warp a group, in registers, one
/// kernel); larger or unknown ones split across blocks (every group,
/// however large, and batch 1 fill the GPU). In NHWC with a known count of
/// `nhwcChannels` (kDynamic otherwise) whose vectors a block's threads
/// span, the split is ChannelsLastGroups, its parts sized from the
/// `positions` (images times spatial size, kDynamic if unknown) to fill
/// the target's SMs once. A split row of `groups` groups in all (images
/// times groups, kDynamic if unknown) too few to fill the SMs at its usual
/// chunk takes smaller chunks, down to one sweep of its block. A forced
/// kind other than Auto and ChannelsLastGroups keeps the split row (tests).
RowNormSchedule
selectGroupNormSchedule(int64_t elementsPerGroup, int64_t contiguous,
                        Type elementType, const GpuTarget &target,
                        ForcedRowNormKind forced = ForcedRowNormKind::Auto,
                        int64_t nhwcChannels = ShapedType::kDynamic,
                        int64_t positions = ShapedType::kDynamic,
                        int64_t groups = ShapedType::kDynamic);

/// The attribute a forward row norm (layer, RMS, group or instance norm)
/// carries its schedule in, as RowNormSchedule::str() prints it (a layer
/// or RMS norm gradient: RowNormGradSchedule::str(); a group or instance
/// norm gradient: GroupNormGradSchedule::str(); bias_add_grad and the
/// batch norms: ChannelReductionSchedule::str()): written
/// by nf-choose-gpu-schedules (or by hand, to try a schedule), read by
/// nf-lower-to-gpu, which checks it against the op and chooses none itself.
inline constexpr const char *kGpuScheduleAttr = "nf.gpu_schedule";

/// The schedule `text` spells (RowNormSchedule::str()'s words, in any
/// order after the kind), or failure with the reason in `error`.
FailureOr<RowNormSchedule> parseRowNormSchedule(llvm::StringRef text,
                                                std::string &error);

/// What a row norm's schedule must fit: its rows' length and layout.
struct RowNormShape {
  /// Elements of a row (a group's for group norms), kDynamic if unknown.
  int64_t cols = ShapedType::kDynamic;
  Type elementType;
  /// A group norm's layout (the rows of layer and RMS norms otherwise) and
  /// its contiguous runs: a group's channels at a position (NHWC) or a
  /// channel's positions (NCHW); the channels, for NHWC. kDynamic if
  /// unknown.
  enum class Layout { Rows, GroupsNCHW, GroupsNHWC };
  Layout layout = Layout::Rows;
  int64_t contiguous = ShapedType::kDynamic;
  int64_t channels = ShapedType::kDynamic;
};

/// Why `s` cannot run a row norm of `shape` on `target` ("" when it can):
/// a vector that is not 16 bytes or fewer or does not divide the rows (or
/// runs) it must, a row the threads' registers do not hold, block sizes
/// the reductions cannot take, a cluster where the target has none, a kind
/// for another layout.
std::string checkRowNormSchedule(const RowNormSchedule &s,
                                 const RowNormShape &shape,
                                 const GpuTarget &target);

/// How the partial sums of a channel reduction are added up per (image,
/// channel) (ChannelSums.h, emitPartialTotals): a block per image and run
/// of a warp's width of channels, a lane per channel; warp w adds the runs
/// of `unroll` parts w, w + warps, w + 2 * warps, ... in order, `unroll`
/// independent loads in flight a lane (one total per slot of the run,
/// added in slot order at the end), then the warps' totals are added in
/// warp order through workgroup memory. A fixed order for a given schedule:
/// deterministic, no atomics; the parts of a channel are read by many
/// warps at once, not by one thread in turn.
struct PartialTotalsSchedule {
  /// At most this many parts in flight a lane.
  static constexpr int64_t kMaxUnroll = 16;
  int64_t warps = 8;
  int64_t unroll = 4;
  int64_t blockSize() const { return warps * GpuTarget::kWarpSize; }
  /// "partial-totals warps=8 unroll=4" (the finishing kernel's record)
  std::string str() const;
  /// The same as words of an op's schedule: "<prefix>warps=8
  /// <prefix>unroll=4".
  std::string words(llvm::StringRef prefix) const;
};

/// Why `s` cannot add up the partial values of `numSums` sums of `acc`
/// ("" when it can): warps that are not 1 to a full block, slots that are
/// not 1 to 16, or warps handing over more than a block's shared memory
/// on `target`.
std::string checkPartialTotalsSchedule(const PartialTotalsSchedule &s,
                                       int64_t numSums, Type acc,
                                       const GpuTarget &target);

/// The schedule of the totals of `parts` partial sums (kDynamic where the
/// count is known only at run time): enough warps that each adds a few
/// runs, at most a full block.
PartialTotalsSchedule selectPartialTotalsSchedule(int64_t parts,
                                                  const GpuTarget &target);

/// The same for merging BatchNorm's moments (a count, a mean and an M2 a
/// part, in `acc`): at most 16 warps (8 for f64), so that a thread's four
/// slots of three values and Chan's formula stay in registers (at 32 warps
/// a thread has 64 registers: f64 spilled).
PartialTotalsSchedule selectMomentsMergeSchedule(int64_t parts, Type acc,
                                                 const GpuTarget &target);

/// How the gradient of a trailing-axis norm (layer_norm_grad,
/// rms_norm_grad) runs. The kernel that writes dx holds a chunk of a row in
/// registers: `vectorsPerThread` vectors of dy and x per thread, so each is
/// read once, and `chunkElements` = vectorsPerThread * threadsPerRow *
/// vectorWidth elements per (part of a) block:
///  - WarpRows: short rows, a whole row per (part of a) warp;
///  - BlockRowInRegisters: a whole row per block;
///  - ClusterRow (sm_90): a cluster of `clusterBlocks` blocks per row, the
///    block of rank r holding chunk r (clusterBlocks = the row's chunks);
///    each block's two sums go to every block of the cluster (distributed
///    shared memory, one cluster barrier a row, slots alternating between
///    two sets from row to row), added there in rank order, so dy and x
///    are read once in one kernel; the clusters loop over rows as blocks
///    do;
///  - SplitRow: longer rows (or of unknown length) in several chunks. A
///    first kernel writes each chunk's two sums (of g*dy*xhat and g*dy);
///    the dx kernel adds a row's chunk sums, so dy and x are read twice.
/// Its blocks loop over rows, at most `maxBlocks` of them, adding dy*xhat
/// and dy per column in registers; each block writes one row of partial
/// parameter gradients, and a last kernel sums those rows per column in a
/// fixed order (deterministic, no atomics), under `params`.
struct RowNormGradSchedule {
  RowNormSchedule rows;
  int64_t maxBlocks = 1;
  PartialTotalsSchedule params;
  /// "<rows' schedule> chunk=N max-blocks=M params-warps=W
  /// params-unroll=U"
  std::string str() const;
};

/// The schedule of a norm gradient over rows of `cols` elements (kDynamic
/// when unknown). A forced kind also forces two blocks, so small tests
/// loop over rows; streaming is taken as SplitRow.
RowNormGradSchedule
selectRowNormGradSchedule(int64_t cols, Type elementType,
                          const GpuTarget &target,
                          ForcedRowNormKind forced = ForcedRowNormKind::Auto);

/// The gradient schedule `text` spells (RowNormGradSchedule::str()'s
/// words), or failure with the reason in `error`.
FailureOr<RowNormGradSchedule> parseRowNormGradSchedule(llvm::StringRef text,
                                                        std::string &error);

/// Why `g` cannot run the gradient of a norm over rows of `cols` elements
/// (kDynamic if unknown) of `elementType` on `target` ("" when it can): a
/// kind other than warp rows, block rows in registers, cluster rows and
/// split rows, a chunk that is not the threads' vectors, a row one chunk
/// does not hold (warp and block rows), a cluster of other than the row's
/// chunks, no blocks, or what checkRowNormSchedule refuses.
std::string checkRowNormGradSchedule(const RowNormGradSchedule &g, int64_t cols,
                                     Type elementType, const GpuTarget &target);

/// How an elementwise kernel runs: a grid-stride loop over the flattened
/// tensor, `vectorWidth` elements per access.
struct PointwiseSchedule {
  int64_t blockSize = 256;
  int64_t vectorWidth = 1;
  /// The vectors stop before the last numElements % vectorWidth elements
  /// (a size the widest vector does not divide, or a dynamic one), which
  /// the first threads of the grid take one each.
  bool peeled = false;
  /// The grid has at most this many blocks; each loops over the rest.
  int64_t maxBlocks = 65535;
  /// Blocks that must fit on one multiprocessor at once: bounds the
  /// registers ptxas gives a thread (a kernel's `__launch_bounds__`).
  /// Without it ptxas aims at full occupancy on sm_90 and spills the
  /// unrolled f64 loop.
  int64_t minBlocksPerMultiprocessor = 4;
  std::string str() const;
};

/// How a per-channel reduction runs (bias_add_grad, and the statistics and
/// parameter gradients of batch_norm_training and batch_norm_grad): sums
/// per channel over every other dimension in two kernels, the first
/// writing partial sums, the second adding them per channel in a fixed
/// order (deterministic, no atomics).
///  - Channels last (NHWC: positions x C): a thread keeps the sums of
///    `vectorsPerThread` vectors of channels, `threadsPerRow` threads cover
///    a position's channels, `rowsPerBlock` positions at once; blocks (at
///    most maxBlocks) loop over the positions and write a partial row each.
///  - Channels first (NCHW): each channel's N x S elements are cut into
///    ranges, a block of `threadsPerRow` threads per (channel, range) sums
///    its range; about maxBlocks blocks in all.
///  - Channels first in one kernel (`oneKernel`: batch_norm_training and
///    batch_norm_grad in NCHW, BatchNormOneKernel.h): the same ranges, as
///    many as the device holds blocks, in one cooperative launch that takes
///    each range's moments or sums (`vectorsPerThread` vectors a thread in
///    flight), merges a channel's ranges after the grid's barrier and
///    writes y or dx of its range, the ranges in reverse order (the
///    input's second read from L2 where it fits). No totals kernel and no
///    elementwise pass.
struct ChannelReductionSchedule {
  /// At most this many vectors in flight a thread in one kernel.
  static constexpr int64_t kMaxOneKernelVectors = 16;
  bool channelsLast = true;
  bool oneKernel = false;
  int64_t threadsPerRow = 256;
  int64_t rowsPerBlock = 1;
  int64_t vectorWidth = 1;
  int64_t vectorsPerThread = 1;
  int64_t maxBlocks = 1;
  /// Threads of a block of the kernel that finishes plain sums (a thread
  /// per channel: bias_add_grad).
  int64_t finishBlockSize = 256;
  /// How the second kernel adds each channel's partial sums (or merges
  /// BatchNorm's moments), as "totals-"-prefixed words.
  PartialTotalsSchedule totals;
  /// The batch norms' elementwise pass after the sums (y, or dx), as
  /// "elementwise-"-prefixed words; none for bias_add_grad.
  std::optional<PointwiseSchedule> elementwise;
  int64_t blockSize() const { return threadsPerRow * rowsPerBlock; }
  /// "channels-last threads-per-row=16 rows-per-block=16 vector=4
  /// registers=1 max-blocks=1056 totals-warps=8 totals-unroll=4
  /// [elementwise-block=256
  /// elementwise-vector=8 [elementwise-peeled]
  /// elementwise-min-blocks-per-sm=4]"; one kernel:
  /// "channels-first-one-kernel threads-per-row=256 rows-per-block=1
  /// vector=4 registers=4 max-blocks=1056"
  std::string str() const;
};

/// The schedule of a reduction over `channels` channels whose runs of
/// `inner` elements are contiguous (NCHW: the spatial size; ignored for
/// NHWC).
ChannelReductionSchedule
selectChannelReductionSchedule(int64_t channels, int64_t inner,
                               bool channelsLast, Type elementType,
                               const GpuTarget &target);

/// The schedule of batch_norm_training (one input) or batch_norm_grad (two:
/// dy and x) in NCHW (runs of `inner` contiguous elements, kDynamic if
/// unknown) in one kernel (oneKernel).
ChannelReductionSchedule
selectBatchNormOneKernelSchedule(int64_t inner, Type elementType,
                                 int64_t inputs, const GpuTarget &target);

/// The channel reduction schedule `text` spells (ChannelReductionSchedule::
/// str()'s words), or failure with the reason in `error`.
FailureOr<ChannelReductionSchedule>
parseChannelReductionSchedule(llvm::StringRef text, std::string &error);

/// Why `s` cannot reduce `channels` channels whose runs of `inner` elements
/// are contiguous (kDynamic if unknown; channels last where inner is 1 and
/// the channels known) of `elementType` on `target` ("" when it can): the
/// other layout's kind, a vector that is not 16 bytes or fewer or does not
/// divide the runs, channels-last threads whose vectors do not cover the
/// channels or whose row groups' hand-over passes the block's shared
/// memory, channels-first threads a block cannot add across, no blocks.
std::string checkChannelReductionSchedule(const ChannelReductionSchedule &s,
                                          int64_t channels, int64_t inner,
                                          Type elementType,
                                          const GpuTarget &target);

/// How a linalg reduction runs (LowerLinalgReductions.cpp): each of
/// `results` results combines `elements` elements.
struct LinalgReductionSchedule {
  enum class Kind {
    /// A thread per result walks its elements (a reduction over an outer
    /// dimension: neighbouring threads read neighbouring addresses; or a
    /// body that must run in order).
    ThreadPerResult,
    /// A warp per result: lanes take every 32nd element, then shuffles.
    WarpPerResult,
    /// A block per result (long rows): threads take every blockSize-th
    /// element, then shuffles and shared memory across the warps.
    BlockPerResult,
    /// A block per 32 neighbouring results (a reduction over an outer
    /// dimension): a lane per result, the warps taking every (blockSize /
    /// 32)-th element of it, their values combined in warp order through
    /// shared memory.
    BlockColumns,
  };
  Kind kind = Kind::ThreadPerResult;
  int64_t blockSize = 256;
  /// The grid has at most this many blocks; each loops over the rest.
  int64_t maxBlocks = 65535;
  /// Block rows and block columns too few to fill the device cut each
  /// result's elements into this many contiguous parts, a block (column)
  /// each; a second kernel combines a result's parts in order (a warp a
  /// result, 32 parts at a time: at most kMaxSplits).
  int64_t splits = 1;
  static constexpr int64_t kMaxSplits = 1024;
  /// Threads of a block of that second kernel (a warp per result).
  int64_t finishBlockSize = 256;
  /// Warp and block rows whose elements every operand reads at unit
  /// stride: each thread loads this many consecutive elements of each
  /// operand at once (one vector of at most 16 bytes), then combines them
  /// in order; 1: an element at a time.
  int64_t vectorWidth = 1;
  /// Results a block takes at once.
  int64_t resultsPerBlock() const;
  /// "warp-per-result block=256 [splits=4] [vector=4]": an op's schedule.
  std::string str() const;
  /// The same with the elements a result combines, after the block size:
  /// the kernel's record.
  std::string str(int64_t elements) const;
};

/// What a linalg reduction's schedule is chosen from: `results` results of
/// `elements` elements each (either kDynamic where unknown) whose elements
/// are contiguous in memory (`contiguous`) and can be combined in a tree
/// (`tree`); `rowVector` is the widest vector of elements of a result its
/// operands allow (their reduced elements at unit stride; 16 bytes of the
/// widest element), else 1.
struct LinalgReductionShape {
  int64_t results = 1;
  int64_t elements = 1;
  bool contiguous = false;
  bool tree = false;
  int64_t rowVector = 1;
};

/// The schedule of a linalg reduction of `shape`.
LinalgReductionSchedule
selectLinalgReductionSchedule(const LinalgReductionShape &shape,
                              const GpuTarget &target);

/// The linalg reduction schedule `text` spells (its str()), or failure
/// with the reason in `error`.
FailureOr<LinalgReductionSchedule>
parseLinalgReductionSchedule(llvm::StringRef text, std::string &error);

/// Why `s` cannot run a linalg reduction of `shape` ("" where it can): a
/// body that must run in order on anything but a thread per result in one
/// part, blocks of no threads or over 1024 (or not whole warps where
/// threads share a result), parts of an unknown count of results or more
/// than 1024, vectors on anything but warp and block rows or wider than
/// the operands allow or not dividing the rows.
std::string checkLinalgReductionSchedule(const LinalgReductionSchedule &s,
                                         const LinalgReductionShape &shape,
                                         const GpuTarget &target);

/// The schedule of an elementwise kernel over `numElements` elements
/// (kDynamic when unknown) of `elementType`. Where `mayPeel` (the kernel
/// can take a tail one element at a time), any size large enough gets
/// 16-byte vectors; otherwise the vector width divides the size.
PointwiseSchedule selectPointwiseSchedule(int64_t numElements, Type elementType,
                                          const GpuTarget &target,
                                          bool mayPeel = false);

/// The pointwise schedule `text` spells (PointwiseSchedule::str()'s
/// words), or failure with the reason in `error`.
FailureOr<PointwiseSchedule> parsePointwiseSchedule(llvm::StringRef text,
                                                    std::string &error);

/// Why `s` cannot run an elementwise kernel over `numElements` elements
/// (kDynamic if unknown) whose widest operand is of `elementType` ("" where
/// it can): vectors that are not a power of two of at most 16 bytes, or
/// that do not divide the elements unpeeled, or blocks an SM does not hold.
std::string checkPointwiseSchedule(const PointwiseSchedule &s,
                                   int64_t numElements, Type elementType,
                                   const GpuTarget &target);

/// What the kernel of an all-parallel linalg.generic (LowerLinalg.cpp) is
/// scheduled from. Its vectors run over `elements` elements (kDynamic if
/// unknown): the flat tensor where every operand is laid out as the result
/// (`flat`: a tail may be peeled), else the result's innermost dimension
/// (each vector within a row). Its operands are at most `widest`; where
/// one is read across (`gather`, a transpose) a thread takes one element
/// at a time; `rows` are the innermost sizes (kDynamic if unknown) of the
/// operands read contiguously in more than one dimension, each of which a
/// vector must divide to start on a whole vector of every row.
struct GenericKernelShape {
  int64_t elements = 0;
  Type widest;
  bool flat = true;
  bool gather = false;
  llvm::SmallVector<int64_t> rows;
};

/// The schedule of that kernel: the elementwise kernels', its vectors
/// narrowed to what the operands allow.
PointwiseSchedule selectGenericSchedule(const GenericKernelShape &shape,
                                        const GpuTarget &target);

/// Why `s` cannot run the kernel of a generic of `shape` ("" where it can):
/// what checkPointwiseSchedule refuses, a peel of vectors within rows,
/// vectors of gathered operands, or vectors that do not divide an
/// operand's rows.
std::string checkGenericSchedule(const PointwiseSchedule &s,
                                 const GenericKernelShape &shape,
                                 const GpuTarget &target);

/// The schedule of a window copy (LowerPadsAndConcats.cpp: a tensor.pad,
/// or a chain of tensor.insert_slice) into a result of `elements` elements
/// of `elementType`: the elementwise kernels' blocks, an element a thread
/// at a time (each element's source is its own).
PointwiseSchedule selectWindowCopySchedule(int64_t elements, Type elementType,
                                           const GpuTarget &target);

/// Why `s` cannot run that copy ("" where it can): vectors, or what
/// checkPointwiseSchedule refuses.
std::string checkWindowCopySchedule(const PointwiseSchedule &s,
                                    int64_t elements, Type elementType,
                                    const GpuTarget &target);

/// How a group or instance norm gradient runs (group_norm_grad,
/// instance_norm_grad), in three kernels:
///  - `_sums`: the sums of dy and dy*xhat for each (image, channel), a
///    per-channel reduction of every image (`sums`; the images share its
///    blocks) that writes partial sums;
///  - `_finish`: a thread per (image, group) adds the partial sums of the
///    group's channels, each weighted by its scale (the group's sums of
///    g*dy and g*dy*xhat), and a thread per channel adds them over the
///    images (dscale, dbias), each in a fixed order: deterministic, no
///    atomics;
///  - `_dx`: elementwise (`dx`), vectors of a position's channels (NHWC)
///    or of a channel's positions (NCHW).
/// dy and x are read twice and dx written once, at every batch size and
/// group size (the partial sums stay small beside the tensor).
///
/// NHWC of a known channel count may also have `oneKernel`: the same work
/// in one cooperative launch where the device holds its grid (decided when
/// the kernels are loaded; the kernels above otherwise, their grids 0). A
/// block per part of an image, its threads across each position's channels
/// in whole vectors (`threadsPerRow` x `vectorWidth` = the channels) and
/// over `rowsPerBlock` positions, each lane knowing its group; the parts
/// sized so that every block is resident (at least `minPart` positions, so
/// the partial sums stay small beside the tensor). Its sums per (image,
/// channel) over the part, added over the block's rows in a fixed order;
/// the grid's barrier; a warp per (channel, sum) adds the parts of each
/// image in a fixed order (the totals) and the images (dscale, dbias); the
/// grid's barrier; each block takes its image's group sums from the totals
/// and writes dx of its part. One launch instead of four; dy and x are
/// read twice, the second time from L2 where they fit.
struct GroupNormGradSchedule {
  ChannelReductionSchedule sums;
  PointwiseSchedule dx;
  /// The finishing kernel: a thread per (image, group) and per channel,
  /// over the partial sums' totals.
  int64_t finishBlockSize = 256;
  struct OneKernel {
    /// 0: no one-kernel variant.
    int64_t threadsPerRow = 0;
    int64_t rowsPerBlock = 1;
    int64_t vectorWidth = 1;
    int64_t minPart = 1;
    int64_t blockSize() const { return threadsPerRow * rowsPerBlock; }
  } oneKernel;
  /// "<sums' words> dx-block=256 dx-vector=4 dx-min-blocks-per-sm=4
  /// finish-block=256 [one-kernel-threads-per-row=40 one-kernel-rows=8
  /// one-kernel-vector=8 one-kernel-min-part=4]"
  std::string str() const;
};

/// The schedule of a group norm gradient over `images` images of
/// `channels` channels at `spatial` positions (the one-kernel variant
/// offered unless `forced` is ChannelsLastGroups).
GroupNormGradSchedule
selectGroupNormGradSchedule(int64_t images, int64_t channels, int64_t spatial,
                            bool channelsLast, Type elementType,
                            const GpuTarget &target,
                            ForcedRowNormKind forced = ForcedRowNormKind::Auto);

/// The group norm gradient schedule `text` spells (its str()'s words), or
/// failure with the reason in `error`.
FailureOr<GroupNormGradSchedule>
parseGroupNormGradSchedule(llvm::StringRef text, std::string &error);

/// Why `s` cannot run the gradient of a group or instance norm of
/// `channels` channels at `spatial` positions (kDynamic if unknown), in
/// NHWC where `nhwc`, of `elementType` on `target` ("" when it can): what
/// checkChannelReductionSchedule refuses of its sums, a dx vector that is
/// not 16 bytes or fewer or does not divide the channels (NHWC) or the
/// positions (NCHW), or blocks an SM does not hold.
std::string checkGroupNormGradSchedule(const GroupNormGradSchedule &s,
                                       int64_t channels, int64_t spatial,
                                       bool nhwc, Type elementType,
                                       const GpuTarget &target);

/// How a matrix product runs: matmul, and conv2d and its two gradients as
/// implicit GEMMs (the operand tiles gathered from the images and filters
/// as they are loaded, never materialized). Each block computes `tileM` x
/// `tileN` outputs of one batch entry, K `tileK` at a time, and loops over
/// the tiles, at most `maxBlocks` blocks.
struct TiledProductSchedule {
  enum class Kind {
    /// 256 threads, each keeping threadM x threadN sums in registers in
    /// groups of 16 bytes of rows and columns; both operands through two
    /// shared-memory stages in the accumulation type, the next K tile
    /// loaded into registers while the current one runs
    /// (LowerSimtProducts.cpp): any element type and layout.
    Simt,
    /// f16/bf16 on tensor cores (sm_80 and newer): warpsM x warpsN warps
    /// each own a (tileM / warpsM) x (tileN / warpsN) part of the tile in
    /// mma.sync m16n8k16 accumulators (f32); the operands' 16-byte runs go
    /// to swizzled shared memory by cp.async, `stages` K tiles in flight,
    /// and to registers by ldmatrix. f32 operands, where allowed, the
    /// same as tf32 (`tf32`): mma.sync m16n8k8. With `wgmma` (sm_90a),
    /// warpgroups instead multiply from shared memory (wgmma.mma_async).
    TensorCore
  };
  Kind kind = Kind::Simt;
  int64_t tileM = 64, tileN = 64, tileK = 8;
  int64_t threadM = 4, threadN = 4;
  int64_t warpsM = 2, warpsN = 2, stages = 3;
  /// TensorCore only: K is cut into `splitK` ranges of whole K tiles, each
  /// a block's work for a tile; the blocks write f32 partial sums of the
  /// whole result, one slice per range, and a second kernel (`finish`)
  /// adds the slices in order, applies the epilogue and stores. For
  /// products of too few tiles to fill the device over a long K.
  int64_t splitK = 1;
  /// TensorCore only, where `splitKMax` > 0 (and splitK is 1): K is split
  /// when the kernels launch, for products whose sizes are known only
  /// then, into as many ranges as make the tiles `splitKBlocks` blocks (or
  /// as many as the device holds of the kernel at once, where fewer: known
  /// when the module is loaded), at most `splitKMax` and each at least
  /// `splitKMinTiles` K tiles (1: the kernel stores the result itself and
  /// the finish does not run).
  int64_t splitKMax = 0, splitKBlocks = 0, splitKMinTiles = 0;
  /// Whether K may be split (a second kernel adds the ranges).
  bool splitsK() const { return splitK > 1 || splitKMax > 0; }
  /// A tensor-core tile: tileM x tileN x tileK, warpsM x warpsN warps,
  /// `stages` K tiles in flight ("MxNxK/stages/WMxWN").
  struct TensorCoreTile {
    int64_t tileM = 0, tileN = 0, tileK = 0, warpsM = 0, warpsN = 0, stages = 0;
    bool wgmma = false, tma = false, warpSpecialized = false, multicast = false,
         pingpong = false;
    bool empty() const { return tileM == 0; }
    /// "MxNxK/stages/WMxWN", then "/wgmma" for warpgroup MMAs,
    /// "/wgmma/tma" for those fed by TMA loads, "/wgmma/tma/ws" for
    /// those fed by a producer warpgroup's TMA loads, "/wgmma/tma/ws/mc"
    /// for those in clusters of two that share B's tiles, and "/pp" after
    /// "/ws" or "/ws/mc" for two consumer teams taking turns.
    std::string str() const;
    /// The tile `text` ("MxNxK/stages/WMxWN[/wgmma[/tma[/ws[/mc][/pp]]]]",
    /// positive counts) says, if any.
    static std::optional<TensorCoreTile> parse(llvm::StringRef text);
  };
  /// This schedule's tile, warps and stages.
  TensorCoreTile tensorCoreTile() const {
    return {tileM, tileN, tileK,           warpsM,    warpsN,  stages,
            wgmma, tma,   warpSpecialized, multicast, pingpong};
  }
  void setTensorCoreTile(const TensorCoreTile &t);
  /// TensorCore only, where K is split at launch (sizes known only then):
  /// a second kernel on `smallTile`, which runs in place of this one where
  /// the sizes make fewer than `smallTileBelow` of this schedule's tiles
  /// (or fewer than the blocks the device holds of this kernel at once,
  /// where it holds fewer: at least one a multiprocessor), as
  /// selectTiledProductSchedule chooses small tiles for such sizes where
  /// it knows them. Empty: this tile for every size.
  TensorCoreTile smallTile;
  int64_t smallTileBelow = 0;
  /// This schedule with `smallTile` in place of its tile, and no second
  /// tile.
  TiledProductSchedule withSmallTile() const;
  /// TensorCore only: f32 operands rounded to tf32 (m16n8k8).
  bool tf32 = false;
  /// TensorCore only, on sm_90a (f16 and bf16): each group of four warps
  /// (a warpgroup; warpsM a multiple of 4) owns (tileM / (warpsM / 4)) x
  /// (tileN / warpsN) of the tile, 64 rows at a time, and multiplies both
  /// operands from shared memory by wgmma.mma_async m64nNk16 (N the
  /// warpgroup's columns: 64, 128 or 256), one group of them in flight
  /// while the next K tile waits; the stages are laid out as wgmma's
  /// canonical swizzled layouts, and `stages` - 2 K tiles are copied ahead.
  bool wgmma = false;
  /// With `wgmma`, where both operands are dense matrices whose rows are
  /// whole 16-byte chunks (a matmul's, its sizes static) and K is not
  /// split at launch (a `split-k` is, each range's K tiles loaded so; not
  /// in clusters, which have no split): one thread stages each K tile by
  /// TMA loads (cp.async.bulk.tensor, the boxes landing in wgmma's
  /// swizzled layouts, zeros past M, N and K) that complete on an mbarrier
  /// per stage, rather than every thread by cp.async. Elsewhere cp.async.
  bool tma = false;
  /// With `wgmma`: a warp-specialized kernel. A warpgroup past the
  /// consumers (the producer) stages every K tile, running ahead over K
  /// tiles and work units as far as the stages allow: one thread of it by
  /// TMA loads where they stage the operands (`tma`), else all of it by
  /// cp.async, each thread arriving on the stage's full mbarrier once its
  /// copies have landed (a convolution's gathers too);
  /// the warpsM x warpsN consumer warps wait for each stage's full
  /// mbarrier, run its wgmmas and release it on its empty mbarrier once
  /// the group that read it retires. No barrier of the whole block in the
  /// K loop; the consumers' epilogue meets at a named barrier of their own,
  /// and stages the result tile in a buffer of its own (tileM x tileN
  /// elements past the stages), so the next unit's loads overlap it.
  bool warpSpecialized = false;
  /// With `warpSpecialized` and `tma` (where TMA loads stage the
  /// operands): the blocks run in clusters of two, a pair of tiles along M with
  /// the same columns, and each block's producer loads half of B's tile into
  /// both blocks (multicast TMA loads), so each reads 32 KiB of a 128 x 256 x
  /// 64 K tile from L2 where it read 48. A stage is empty again when the
  /// consumers of both blocks have released it, and a producer waits, after its
  /// last tile, until every stage is (the other block's consumers arrive on its
  /// mbarriers until then). The grid is persistent in whole clusters: as
  /// many as the device holds at once (cuOccupancyMaxActiveClusters when
  /// the module is loaded: fewer than its blocks over two where its GPCs
  /// have odd counts of SMs), each looping over pairs of tiles.
  bool multicast = false;
  /// With `warpSpecialized` (and where it applies): two teams of consumer
  /// warps (warpsM x warpsN each), each owning a whole tile, take the
  /// block's work units in turns (CUTLASS's "ping-pong"): the producer
  /// loads the units' K tiles in order, so one team's K loop runs while
  /// the other stores its tile through its own staging buffer and named
  /// barrier, and the tensor cores do not wait for the epilogue. Each
  /// stage is released by the one team that read it.
  bool pingpong = false;
  /// Consumer teams of a warp-specialized kernel: 2 with `pingpong`.
  int64_t teams() const { return warpSpecialized && pingpong ? 2 : 1; }
  /// Rows of output tiles walked together (tileOrigin): the blocks running
  /// at once share the panels of A and B they read in L2.
  int64_t tileGroupRows = 8;
  /// The second kernel of a split K: `finish.vectorWidth` result columns
  /// a thread (a width that divides N).
  PointwiseSchedule finish;
  /// The most blocks of the product kernel (`max-blocks`): past it, each
  /// block loops over its tiles (and ranges of K) a grid apart.
  int64_t maxBlocks = 65535;
  /// __launch_bounds__' second argument: left to aim at full occupancy,
  /// ptxas spilled the gathers' 64-bit index arithmetic at 48 registers.
  int64_t minBlocksPerMultiprocessor = 2;
  /// The producer warpgroup of a warp-specialized kernel.
  static constexpr int64_t kProducerThreads = 4 * GpuTarget::kWarpSize;
  /// The registers a thread the producer warpgroup keeps (setmaxnreg.dec:
  /// it holds addresses and counters, no accumulators): loading by TMA,
  /// one thread issues a stage's boxes (CUTLASS's 40); copying by
  /// cp.async, each thread computes its chunks' addresses (the 128 x 256 x
  /// 64 tile's producer spilled 56 bytes at 40 and 44 at 56 under ptxas
  /// 13.0; none at 72, nor the convolutions' gathering producers).
  static constexpr int64_t kTmaProducerRegisters = 40;
  static constexpr int64_t kCopyingProducerRegisters = 72;
  int64_t producerRegisters() const {
    return tma ? kTmaProducerRegisters : kCopyingProducerRegisters;
  }
  /// Warp specialized with two or more consumer warpgroups: the registers
  /// a thread the consumers raise theirs to (setmaxnreg.inc) once the
  /// producer gave back all but producerRegisters(): the block's registers
  /// at launch (the most a thread of `blockSize()` can have, a multiple of
  /// 8: 168 of 384 threads, as ptxas gives a kernel bounded to one such
  /// block) less the producer's, over the consumers (232 of 384 with TMA,
  /// 216 copying). 0 where
  /// the launch leaves nothing to gain (256 threads launch with 255), or
  /// where the kernel is not bounded to one block an SM.
  int64_t consumerRegisters(int64_t registersPerBlock = 65536) const;
  /// The registers a thread of `blockSize()` a kernel bounded to one such
  /// block launches with, as consumerRegisters() counts them (168 of 384
  /// threads): the kernel's nf.launch_registers where it moves registers.
  int64_t launchRegisters(int64_t registersPerBlock = 65536) const;
  int64_t blockSize() const {
    return kind == Kind::TensorCore
               ? GpuTarget::kWarpSize * warpsM * warpsN * teams() +
                     (warpSpecialized ? kProducerThreads : 0)
               : (tileM / threadM) * (tileN / threadN);
  }
  /// "tiled-product tile=128x128x8 thread=8x8", "tensor-core-product
  /// tile=128x128x32 warps=2x2 stages=3 [tf32 | wgmma [tma
  /// [warp-specialized [multicast] [pingpong]]]] [split-k=3 |
  /// split-k-max=16 split-k-blocks=264 split-k-min-tiles=8
  /// [small-tile=64x64x32/3/2x2 small-tile-below=132]] [finish-block=256
  /// finish-vector=4 finish-min-blocks-per-sm=4]" (the finish where K may be
  /// split), and "tile-group-rows=N" where not 8.
  std::string str() const;
};

/// Sets `s`'s tensor-core tile, stages and warps from "MxNxK/stages/WMxWN"
/// ("128x256x32/3/2x4"); false where the text is not one the kernel can
/// run on `target` (its stages of `elementBytes` operands within the
/// shared memory a block may have).
/// The environment variable NF_CUDA_TENSOR_CORE_TILE sets the tile of
/// large tensor-core products this way, for tuning experiments.
bool parseTensorCoreTile(llvm::StringRef text, const GpuTarget &target,
                         TiledProductSchedule &s, int64_t elementBytes = 2);

/// Why the tensor-core kernel cannot run `s`'s tile, warps and stages of
/// `elementBytes` operands on `target` ("" where it can): warp parts of
/// partial m16 fragments or pairs of n8 fragments, K tiles of partial
/// 16-byte chunk pairs, chunks the threads do not share evenly, stages
/// over the shared memory a block may have, or sizes out of range.
std::string checkTensorCoreTile(const TiledProductSchedule &s,
                                int64_t elementBytes, const GpuTarget &target);

/// What the schedule of a product depends on.
struct ProductShape {
  /// `batch` M x N results accumulated over K (each kDynamic when
  /// unknown).
  int64_t batch, m, n, k;
  /// The operands' and the result's element types.
  Type elementType, resultType;
  /// Both operands' elements are consecutive along one of their
  /// dimensions, as the tensor-core kernel stages them.
  bool tensorCoreOperands;
  /// The result's columns are consecutive in memory.
  bool consecutiveColumns;
  /// f32 operands may run on tensor cores as tf32.
  bool allowTf32 = false;
};

/// The schedule of product `p` on `target`.
TiledProductSchedule selectTiledProductSchedule(const ProductShape &p,
                                                const GpuTarget &target);

/// The product schedule `text` spells (TiledProductSchedule::str()'s
/// words, in any order after the kind), or failure with the reason in
/// `error`.
FailureOr<TiledProductSchedule> parseTiledProductSchedule(llvm::StringRef text,
                                                          std::string &error);

/// Why `s` cannot run product `p` on `target` ("" where it can): tensor
/// cores for operands they do not take (other than f16/bf16, or f32 as
/// tf32; operands the kernel cannot stage; before sm_80), a tile of
/// partial warp fragments or of stages over a block's shared memory, SIMT
/// threads that do not cover the tile or hold more sums than their
/// registers, a split K's finish vector that does not divide the rows.
std::string checkTiledProductSchedule(const TiledProductSchedule &s,
                                      const ProductShape &p,
                                      const GpuTarget &target);

} // namespace mlir::nf::cuda

#endif // NORMFUSE_CODEGEN_CUDA_SCHEDULE_H
