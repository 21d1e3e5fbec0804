//===- KernelBuilder.h - building blocks of nf's GPU kernels ----*- C++ -*-===//
//
// Part of normfuse. What every CUDA lowering builds its kernels from: a
// kernel (gpu.func in the module's gpu.module) and its launch from the
// host function, loads and stores of a few lanes that widen f16/bf16 to
// the accumulation type, and sums across a warp (gpu.shuffle) or a block
// (shuffles, then workgroup memory between gpu.barriers).
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_CODEGEN_CUDA_KERNELBUILDER_H
#define NORMFUSE_LIB_CODEGEN_CUDA_KERNELBUILDER_H

#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/Runtime/GpuTarget.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include "mlir/IR/Builders.h"
#include <functional>

namespace mlir::nf::cuda {

/// The gpu.module every kernel of a module goes to.
constexpr llvm::StringLiteral kKernelModuleName = "nf_kernels";
/// The attribute recording a kernel's schedule (Schedule.h).
constexpr llvm::StringLiteral kScheduleAttr = "nf.schedule";
/// The blocks a kernel needs resident per multiprocessor (the second
/// argument of CUDA's __launch_bounds__), where its schedule sets one.
constexpr llvm::StringLiteral kMinBlocksAttr = "nf.min_blocks_per_sm";
/// On a kernel whose index values all fit in 32 bits (a lowering proves
/// it): the printer makes `index` a 32-bit int, which halves the integer
/// work of address arithmetic (no 64-bit multiplies, divisions by
/// constants or compares). The kernel must take no index arguments.
constexpr llvm::StringLiteral kIndexBitsAttr = "nf.index_bits";
/// On a global store of data no later kernel can find in cache: the
/// printer makes it a streaming store (st.global.cs, evict-first in L1 and
/// L2), so it does not push out of L2 what another access reads again.
constexpr llvm::StringLiteral kEvictFirstAttr = "nf.evict_first";
/// On an nvgpu.device_async_create_group that lists no tokens: it commits
/// every cp.async its thread issued since the last group (as PTX's
/// cp.async.commit_group does). The attribute also keeps the op's text
/// parseable: MLIR 19 prints a tokenless group as
/// `%g = nvgpu.device_async_create_group` and its parser then reads the
/// next line's result as the group's token.
constexpr llvm::StringLiteral kCommitPendingAttr = "nf.commit_pending";

/// A kernel being built: the gpu.func and a builder inside its body.
struct Kernel {
  gpu::GPUFuncOp func;
  OpBuilder body;
  Value arg(unsigned i) { return func.getArgument(i); }

  /// A size the host computes (an index value), inside this kernel at `b`:
  /// its constant where it is one; otherwise an index argument appended to
  /// the kernel on first use, whose host value its launch passes.
  Value size(OpBuilder &b, Location loc, Value host);
  /// The host values of the arguments `size` appended, in order.
  SmallVector<Value> sizeArguments;
  /// Their kernel arguments.
  SmallVector<Value> sizeParameters;
};

/// "<function>_<what>": the base name of the kernel of `op`, named after
/// the function that holds it.
std::string kernelBaseName(Operation *op, llvm::StringRef what);

/// Creates kernel `baseName` (made unique in the module's gpu.module, which
/// is created on first use) taking `argTypes`, with `blockSize` threads
/// (recorded as its known block size) and the `schedule` attribute. The
/// body builder sits before the gpu.return.
Kernel createKernel(ModuleOp module, Location loc, llvm::StringRef baseName,
                    TypeRange argTypes, int64_t blockSize,
                    llvm::StringRef schedule);

/// `buffer` (a contiguous memref of any rank) as the flat memref<?xT> a
/// kernel takes.
Value flatten(OpBuilder &b, Location loc, Value buffer);

/// A flat temporary of `count` (an index, at least 1 element allocated)
/// elements of `element` between the launches of one op: static when
/// `count` folded to a constant.
Value allocTemporary(OpBuilder &b, Location loc, Value count, Type element);

/// Launches `kernel` with `args` and then the sizes it took as arguments
/// (Kernel::size).
void launch(OpBuilder &b, Location loc, const Kernel &kernel, Value gridSize,
            int64_t blockSize, ValueRange args);

/// Launches `kernel` (as the launch above) where `work` (by default
/// `gridSize`) is not 0: not at all when it is the constant 0, under an
/// scf.if when it is dynamic (a grid of 0 blocks is an error). A grid from
/// nf.resident_blocks gives as `work` a size that is 0 exactly when it is,
/// not computed from the residency (the launch plan branches on sizes).
void launchUnlessEmpty(OpBuilder &b, Location loc, const Kernel &kernel,
                       Value gridSize, int64_t blockSize, ValueRange args,
                       Value work = Value());

/// Launches `kernel` from the host with a 1-D grid and block and `args`.
void launch(OpBuilder &b, Location loc, gpu::GPUFuncOp kernel, Value gridSize,
            int64_t blockSize, ValueRange args);

/// How many blocks of `blockSize` threads of a kernel the device holds at
/// once, at most `planned` (the schedule's count from the target): an
/// nf.resident_blocks op, for a kernel not built yet (its grid and sizes
/// come from this count); bindResidentBlocks names the kernel once it is.
ResidentBlocksOp residentBlocks(OpBuilder &b, Location loc, int64_t blockSize,
                                int64_t planned);
/// Whether a grid of at most `plannedBlocks` blocks (dynamic: unknown) may
/// depend on how many the device holds at once: not where every
/// multiprocessor of `target` holds them (one block each, at least).
bool residencyMatters(int64_t plannedBlocks,
                      const normfuse::runtime::GpuTarget &target);
/// Binds `op` to `kernel`: its name, its dynamic shared memory, and its
/// planned count lowered to what `target` holds of its shared memory.
void bindResidentBlocks(ResidentBlocksOp op, gpu::GPUFuncOp kernel,
                        const normfuse::runtime::GpuTarget &target);

/// An index constant.
Value indexConstant(OpBuilder &b, Location loc, int64_t v);

/// Index arithmetic with constant operands (index values, unsigned
/// division), for the address computations of the lowerings.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v);
  Value add(Value x, Value y);
  Value sub(Value x, Value y);
  Value mul(Value x, int64_t y);
  Value div(Value x, int64_t y);
  Value rem(Value x, int64_t y);
  /// x * scale + y.
  Value madd(Value x, int64_t scale, Value y);
  /// x && y, where a null condition is true.
  Value both(Value x, Value y);
  /// 0 <= x < bound, x signed.
  Value inRange(Value x, int64_t bound);
  /// x is a multiple of `stride` (x signed); null (true) for stride 1.
  Value multipleOf(Value x, int64_t stride);

  /// The same with a size `y` that is a kernel value: a constant goes
  /// through the constant forms above (the IR is that of a static size).
  Value mul(Value x, Value y);
  Value div(Value x, Value y);
  Value ceilDiv(Value x, Value y);
  Value ceilDiv(Value x, int64_t y);
  Value rem(Value x, Value y);
  Value madd(Value x, Value scale, Value y);
  Value inRange(Value x, Value bound);
  /// x < bound, unsigned.
  Value below(Value x, Value bound);
  /// The product of two sizes, a constant where both are.
  Value product(Value x, Value y);
};

/// The constant `v` holds, or ShapedType::kDynamic.
int64_t constantOr(Value v);

/// The index value `v` (unsigned) as a float of type `type`.
Value indexToFloat(OpBuilder &b, Location loc, Value v, Type type);

/// Loads `width` consecutive elements at `offset` of the flat buffer (one
/// vector.load when width > 1) and extends each to `acc`.
SmallVector<Value> loadLanes(OpBuilder &b, Location loc, Value buffer,
                             Value offset, int64_t width, Type acc);

/// Narrows `values` to the buffer's element type and stores them at
/// consecutive elements from `offset` (one vector.store for several);
/// streaming (kEvictFirstAttr) where `evictFirst`.
void storeLanes(OpBuilder &b, Location loc, ArrayRef<Value> values,
                Value buffer, Value offset, bool evictFirst = false);

/// Columns [begin, end) of a peeled row whose first element is at flat
/// `rowBase`: whole vectors over [alignedBegin, alignedEnd), single
/// elements before and after (fewer than a vector each).
struct PeeledRange {
  Value begin, alignedBegin, alignedEnd, end;
};

PeeledRange emitPeeledRange(OpBuilder &b, Location loc, int64_t vw,
                            Value rowBase, Value begin, Value end);

/// The single elements thread `lane` takes of a peeled range (lane < the
/// vector width): column begin + lane of the head and alignedEnd + lane of
/// the tail, each with whether it is in the range.
SmallVector<std::pair<Value, Value>>
peeledElements(OpBuilder &b, Location loc, const PeeledRange &r, Value lane);

/// `v` combined by `combine` (associative and commutative) over each
/// aligned segment of `width` lanes (a power of two up to 32) of the warp,
/// in a fixed order, in every lane of the segment.
Value emitWarpReduce(
    OpBuilder &b, Location loc, Value v, int64_t width,
    llvm::function_ref<Value(OpBuilder &, Location, Value, Value)> combine);

/// The sum of `v` over each aligned segment of `width` lanes (a power of
/// two up to 32) of the warp, in every lane of the segment.
Value emitWarpSum(OpBuilder &b, Location loc, Value v, int64_t width);

/// The sum of `v` over the block's `blockSize` threads (a multiple of 32),
/// in every thread; `scratch` is a workgroup memref of at least
/// blockSize / 32 elements of v's type. Ends with a barrier, so the scratch
/// memory can be used again at once.
Value emitBlockSum(OpBuilder &b, Location loc, Value v, Value scratch,
                   int64_t blockSize);

/// The sum over a cluster of `blocks` blocks (consecutive along x) of
/// `blockSum`, each block's sum held by all its threads; `rank` is the
/// block's rank in the cluster. Thread r < blocks of each block stores the
/// block's sum into block r's `slots` (a workgroup memref of at least
/// (exchange + 1) * blocks elements) at exchange * blocks + rank; after the
/// cluster's barrier every thread adds its own block's slots of
/// `exchange` in rank order, so every thread of the cluster holds the same
/// bits. Each exchange of a kernel takes its own slots (no barrier orders
/// a second store to a slot after the reads of the first). A cluster
/// barrier (relaxed will do) must come before the first exchange: a block
/// may store into another only once every block of the cluster started.
Value emitClusterSum(OpBuilder &b, Location loc, Value blockSum, Value slots,
                     int64_t exchange, Value rank, int64_t blocks);

/// emitClusterSum of several sums behind one cluster barrier: sum j of
/// block r goes to slot `first` + j * blocks + r (`first` an index value,
/// so that a loop can alternate between two sets of slots).
SmallVector<Value> emitClusterSums(OpBuilder &b, Location loc,
                                   ArrayRef<Value> blockSums, Value slots,
                                   Value first, Value rank, int64_t blocks);

/// Where a block holds `groups` row groups of `threadsPerRow` threads that
/// each keep the same columns' sums (thread `lane` of a group: `values[kv *
/// vw + l]` for column (kv * threadsPerRow + lane) * vw + l): the sums over
/// the groups, added in group order, valid in group 0's threads. Groups 1..
/// hand theirs over through `handOver`, a workgroup buffer of at least
/// (groups - 1) * vectorsPerThread * threadsPerRow * vw elements, between
/// barriers (every thread of the block must call this).
///
/// With `combine`, a thread's values are one tuple (say a count, a mean and
/// an M2) that `combine` merges, in group order, instead of adding each.
using TupleCombineFn = std::function<SmallVector<Value>(
    OpBuilder &, Location, ArrayRef<Value>, ArrayRef<Value>)>;
SmallVector<Value> emitRowGroupSums(OpBuilder &b, Location loc,
                                    ArrayRef<Value> values, Value handOver,
                                    Value group, Value lane, int64_t groups,
                                    int64_t threadsPerRow, int64_t vw,
                                    const TupleCombineFn &combine = nullptr);

/// `values()` where `valid` holds (or always, when `valid` is null), and
/// zeros of `acc` (as many) where it does not: loads that must not touch
/// memory outside a tensor.
SmallVector<Value> emitValuesIf(
    OpBuilder &b, Location loc, Value valid, Type acc,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, Location)> values);

/// A workgroup buffer of `count` elements of `type` in kernel `k`.
Value addWorkgroupBuffer(Kernel &k, Location loc, int64_t count, Type type);

} // namespace mlir::nf::cuda

#endif // NORMFUSE_LIB_CODEGEN_CUDA_KERNELBUILDER_H
