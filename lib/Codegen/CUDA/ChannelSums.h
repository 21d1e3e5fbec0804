//===- ChannelSums.h - partial sums per channel on the GPU ------*- C++ -*-===//
//
// Part of normfuse. The first kernel of every per-channel reduction: sums
// over every dimension but the channels, kept per channel (bias_add_grad,
// BatchNorm's statistics and gradients) or per (image, channel) (the group
// and instance norm gradients), written as partial sums, a block per part
// of the tensor (ChannelReductionSchedule). What the lowerings then make of
// the partial sums (adding them per channel in a fixed order, and what
// follows) is theirs.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_CODEGEN_CUDA_CHANNELSUMS_H
#define NORMFUSE_LIB_CODEGEN_CUDA_CHANNELSUMS_H

#include "KernelBuilder.h"
#include "normfuse/Codegen/CUDA/Schedule.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/IR/Builders.h"

#include <functional>

namespace mlir::nf::cuda {

/// A tensor as (images, outer, channels, inner), with a sum kept per
/// (image, channel): element (n, o, c, i) is at ((n * outer + o) * channels
/// + c) * inner + i. One sum per channel (BatchNorm, bias_add_grad) is one
/// image: NHWC and (N, C) have inner 1 (the channels are contiguous), NCHW
/// has outer N and inner the spatial size. A sum per (image, channel) has
/// images N and outer (NHWC) or inner (NCHW) the spatial size. The sizes
/// are host index values, constants where static.
struct ChannelDims {
  Value images, outer, channels, inner;
  /// Whether the channels are contiguous and of a known count: the
  /// channels-last kernels hold a thread's channels in registers (dynamic
  /// channels take the channels-first kernels, in runs of one element).
  bool channelsLast() const {
    return constantOr(inner) == 1 && constantOr(channels) >= 0;
  }
  /// Elements per (image, channel).
  Value count(OpBuilder &b, Location loc) const;
};

/// The buffer `buffer` of a tensor in `layout` with one sum per channel, or
/// with `perImage` one per (image, channel).
ChannelDims getChannelDims(OpBuilder &b, Location loc, Value buffer,
                           Layout layout, bool perImage = false);

/// Per element: the values to sum, from the lanes of the inputs and the
/// per-channel operands' values at the element's channel.
using SumsFn = llvm::function_ref<SmallVector<Value>(
    OpBuilder &, Location, ArrayRef<Value>, ArrayRef<Value>)>;

/// Where the per-channel operands of (image, channel) are, in kernel `k`.
using ParamIndexFn = std::function<Value(Kernel &k, OpBuilder &, Location,
                                         Value image, Value channel)>;

/// One per-channel reduction: its tensor, buffers (flat) and sums.
struct ChannelSums {
  ChannelDims dims;
  Type element, acc;
  int64_t numSums = 1;
  SmallVector<Value> inputs;         // of the tensor's shape
  SmallVector<Value> perChannel;     // read by SumsFn
  SmallVector<Value> finishOperands; // (C), for the lowering's own use
  SmallVector<Value> outputs;        // (C), for the lowering's own use
  /// The element of `perChannel` for (image, channel); unset: the channel
  /// (the operands are (C), loaded as vectors where the channels are).
  ParamIndexFn paramIndex;
  /// Instead of sums: the mean and M2 (the sum of squared deviations from
  /// that mean) of SumsFn's one value over each part, from two sweeps over
  /// the part (the second from cache on a GPU), to be combined across the
  /// parts by Chan's formula (PartialSums::partCount gives their counts).
  /// The mean is written as its distance from a pivot, the channel's first
  /// value, written too. Never E[x^2] - E[x]^2.
  bool moments = false;
  /// Where set, a host index value (0 or 1) the grids of the partial
  /// sums' and totals' kernels are multiplied by: 0 where another kernel
  /// does their work (the group norm gradient's one kernel).
  Value gridFactor;
};

/// The reduction of `tensor` (its buffer) in `layout`, with `numSums`
/// sums, per channel or, with `perImage`, per (image, channel).
ChannelSums channelSumsOf(OpBuilder &b, Location loc, Value tensor,
                          Layout layout, int64_t numSums = 1,
                          bool perImage = false);

/// The partial sums of a reduction: sum `kk` of part `p` of (image n,
/// channel c) is buffer[n * imageStride + c * channelStride + p *
/// partStride + kk * sumStride], for p in [0, parts). With moments, kk 0 is
/// the part's mean less the pivot, kk 1 its M2 and kk 2 the pivot. The
/// sizes are host index values (constants where static); a kernel reads
/// them through Kernel::size.
struct PartialSums {
  Value buffer;
  /// The parts of each (image[, channel]): from the blocks the device
  /// holds, so known when the kernel is loaded; `plannedParts` is their
  /// most (the schedule's), a constant for static shapes (else dynamic),
  /// 0 exactly when `parts` is.
  Value parts;
  int64_t plannedParts = 0;
  Value imageStride, channelStride, partStride, sumStride;
  /// How the parts cut an (image, channel)'s elements: channels last, part
  /// p holds positions p * R + g + t * parts * R (g < R, t < trips) below
  /// `positions`; channels first, elements [p * partLen, (p + 1) *
  /// partLen) below `count`.
  bool channelsLast = true;
  Value positions, trips;
  int64_t rowsPerBlock = 1;
  Value partLen, count;
  /// The index of sum `kk` of part `part` of (image, channel), in kernel
  /// `k`.
  Value index(Kernel &k, OpBuilder &b, Location loc, Value image, Value channel,
              Value part, int64_t kk) const;
  /// The elements part `part` holds of each (image, channel), as a `type`
  /// float, in kernel `k`.
  Value partCount(Kernel &k, OpBuilder &b, Location loc, Value part,
                  Type type) const;
};

/// The parts of each (image[, channel]) of a reduction over `d` under `s`
/// within `maxBlocks` blocks in all, as a host index value: 0 exactly for
/// an empty tensor.
Value channelPartsWithin(OpBuilder &b, Location loc, const ChannelDims &d,
                         const ChannelReductionSchedule &s, Value maxBlocks);

/// The most parts (PartialSums::plannedParts) of the reduction of a tensor
/// of `type` in `layout`, per channel or, with `perImage`, per (image,
/// channel), under `s`: what the schedule layer sizes the totals' kernel
/// for (kDynamic where the shape is not static).
int64_t plannedChannelParts(RankedTensorType type, Layout layout, bool perImage,
                            const ChannelReductionSchedule &s, Location loc);

/// Launches, before `op`, the kernel `<function>_<what>_sums` that writes
/// the partial sums of `cs` (a temporary it allocates) with schedule `s`.
PartialSums emitPartialChannelSums(OpBuilder &b, Operation *op,
                                   llvm::StringRef what, const ChannelSums &cs,
                                   const ChannelReductionSchedule &s,
                                   const GpuTarget &target, SumsFn sumsFn);

/// Sums over parts, per (image, column): `numSums` values of each part,
/// read by `load` from the kernel's first arguments (`inputs`), their
/// totals handed to `store` (which writes the `outputs`, the arguments
/// after the inputs). Sizes are host index values (constants where
/// static), read in the kernel through Kernel::size.
struct ColumnTotals {
  Value images, columns, parts;
  int64_t numSums = 1;
  Type acc;
  SmallVector<Value> inputs, outputs;
  std::function<Value(Kernel &, OpBuilder &, Location, Value image,
                      Value column, Value part, int64_t kk)>
      load;
  std::function<void(Kernel &, OpBuilder &, Location, Value image, Value column,
                     ArrayRef<Value> totals)>
      store;
  /// Where a part's `numSums` values are one tuple merged by `combine` (a
  /// count, a mean and an M2 by Chan's formula) rather than sums; zeros
  /// (an absent part) must leave a tuple as it is.
  TupleCombineFn combine;
  /// Where set, a host index value (0 or 1) the grid is multiplied by.
  Value gridFactor;
};

/// Launches kernel `name` adding up `t` (PartialTotalsSchedule: a lane per
/// column of a run of 32, warps over the parts, a fixed order), a block per
/// (image, run of columns); none for an empty grid.
void emitColumnTotals(OpBuilder &b, Location loc, ModuleOp module,
                      const std::string &name, const ColumnTotals &t,
                      const PartialTotalsSchedule &s);

/// Launches, after the partial sums `p` of `cs` (plain sums, not moments),
/// the kernel `<function>_<what>_totals` that adds each (image, channel)'s
/// parts (PartialTotalsSchedule: many warps a channel, a fixed order), and
/// returns the totals, a temporary of images x numSums x channels: sum kk
/// of (image n, channel c) at (n * numSums + kk) * channels + c.
Value emitPartialTotals(OpBuilder &b, Operation *op, llvm::StringRef what,
                        const ChannelSums &cs, const PartialSums &p,
                        const PartialTotalsSchedule &s);

/// The index of sum `kk` of (image, channel) in the totals of
/// emitPartialTotals, in kernel `k`.
Value totalsIndex(Kernel &k, OpBuilder &b, Location loc, const ChannelSums &cs,
                  Value image, Value channel, int64_t kk);

/// `n` zeros of `acc`.
SmallVector<Value> zeros(OpBuilder &b, Location loc, Type acc, int64_t n);

} // namespace mlir::nf::cuda

#endif // NORMFUSE_LIB_CODEGEN_CUDA_CHANNELSUMS_H
