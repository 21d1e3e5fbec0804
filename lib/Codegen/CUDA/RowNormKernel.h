//===- RowNormKernel.h - what the row-norm kernels share --------*- C++ -*-===//
//
// Part of normfuse. The description of one forward row-norm kernel (layer,
// RMS, group and instance norm, with an nf.fused group's pointwise steps)
// and the pieces its kernels are built from: addresses, loads of x with
// the prologue, stores of y with the epilogue, per-channel operands.
// LowerRowNorms.cpp builds the row schedules from them,
// LowerGroupNormNHWC.cpp the channels-last group schedule.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_CODEGEN_CUDA_ROWNORMKERNEL_H
#define NORMFUSE_LIB_CODEGEN_CUDA_ROWNORMKERNEL_H

#include "KernelBuilder.h"
#include "normfuse/Codegen/CUDA/Schedule.h"
#include "normfuse/Codegen/Common/FusedGroups.h"

#include "mlir/IR/Builders.h"

namespace mlir::nf::cuda {

/// What one row-norm kernel computes.
struct RowNormKernel {
  bool center = true; // layer_norm subtracts the mean; rms_norm does not
  bool hasScale = false, hasBias = false;
  bool writeMean = false, writeRstd = false;
  double epsilon = 0;
  int64_t cols = ShapedType::kDynamic; // static row length, if known
  Type acc;
  /// The element type x is stored in (a prologue rounds to it).
  Type storage;
  RowNormSchedule schedule;
  /// An nf.fused group's pointwise steps on x as it is loaded and on y
  /// before it is stored.
  ArrayRef<PointwiseStep> prologue, epilogue;

  /// How a row's elements lie in memory. A layer or RMS norm's rows are
  /// contiguous; a group norm's "row" is one (image, group), whose
  /// elements are the group's channels at every spatial position.
  enum class Layout {
    Rows,
    /// (N, C, spatial...): a row is contiguous, its channel changes every
    /// `spatial` elements (vectors never cross one: the width divides it).
    GroupsNCHW,
    /// (N, spatial..., C): a row is `channelsPerGroup` contiguous elements
    /// at each position, `channels` apart (the width divides the group).
    GroupsNHWC,
  };
  Layout layout = Layout::Rows;
  /// A group norm's groups, channels per group, spatial size and channels
  /// on the host (constants where static) ...
  SmallVector<Value> groupSizes;
  enum GroupSize { kGroups, kChannelsPerGroup, kSpatial, kChannels };
  /// ... read inside this kernel (`inKernel`; Kernel::size).
  Kernel *kernel = nullptr;

  /// This spec inside kernel `k`.
  RowNormKernel inKernel(Kernel &k) const {
    RowNormKernel spec = *this;
    spec.kernel = &k;
    return spec;
  }
  /// Size `which` in the kernel, at `b`.
  Value size(OpBuilder &b, Location loc, GroupSize which) const {
    return kernel->size(b, loc, groupSizes[which]);
  }

  /// Whether a vector's lanes share one channel (so per-channel values are
  /// one load, broadcast) rather than run over consecutive channels.
  bool lanesShareChannel() const { return layout == Layout::GroupsNCHW; }
};

/// Element `col` of row `row`: its flat offset and its channel (the index
/// of scale, bias and bias_add's operand).
std::pair<Value, Value> emitAddress(OpBuilder &b, Location loc,
                                    const RowNormKernel &spec, Value row,
                                    Value rowBase, Value col);

/// `width` per-channel values from `buffer` at `channel`: consecutive
/// channels (one element at a time where rows are peeled: the vector of x
/// is aligned, the same columns of the scale are not), or one broadcast
/// where a vector's lanes share a channel.
SmallVector<Value> loadPerChannel(OpBuilder &b, Location loc,
                                  const RowNormKernel &spec, Value buffer,
                                  Value channel, int64_t width);

/// The kernel's arguments, in order: x, [scale], [bias], y, [mean], [rstd],
/// rows, cols, then the operand of each prologue and epilogue step that
/// reads one.
struct RowNormArgs {
  Value x, scale, bias, y, mean, rstd, rows, cols;
  /// Per step: its operand's flat buffer, or null.
  SmallVector<Value> prologue, epilogue;
};

/// Binds the step operands of `steps` from argument `i` on.
void bindStepArgs(Kernel &k, ArrayRef<PointwiseStep> steps, unsigned &i,
                  SmallVector<Value> &out);

/// `steps` applied to the `lanes` of x or y at flat `offset`, column `col`
/// (bias_add runs along the columns); each result rounded to `roundTo`
/// when set, as the unfused ops would store it.
SmallVector<Value> applySteps(OpBuilder &b, Location loc,
                              const RowNormKernel &spec,
                              ArrayRef<PointwiseStep> steps,
                              ArrayRef<Value> stepArgs,
                              SmallVector<Value> lanes, Value offset, Value col,
                              Type acc, Type roundTo);

/// x at flat `offset` (column `col`), `width` lanes (the schedule's vector
/// unless given), its prologue applied.
SmallVector<Value> loadX(OpBuilder &b, Location loc, const RowNormKernel &spec,
                         Value x, ArrayRef<Value> prologueArgs, Value offset,
                         Value col, int64_t width = 0);

RowNormArgs bindArgs(Kernel &k, const RowNormKernel &spec);

/// y at flat `offset` (column `col`), its epilogue applied first; streaming
/// where the schedule is.
void storeY(OpBuilder &b, Location loc, const RowNormKernel &spec,
            const RowNormArgs &a, ArrayRef<Value> lanes, Value offset,
            Value col);

Value sumOf(OpBuilder &b, Location loc, ArrayRef<Value> values);

/// The workgroup scratch of a block sum over `threads` threads (null for
/// a single warp).
Value addScratch(Kernel &k, Location loc, int64_t threads, Type acc);

/// Launches, before `op`, the two kernels of a row norm under a SplitRow
/// schedule (LowerSplitRows.cpp): `args` are the one-kernel arguments (x,
/// [scale], [bias], y, [mean], [rstd], rows, cols, the steps' operands),
/// `rows` and `cols` the host's sizes.
void lowerSplitRow(OpBuilder &b, Location loc, ModuleOp module, Operation *op,
                   const RowNormKernel &spec, ArrayRef<Value> args, Value rows,
                   Value cols);

/// Launches, before `op`, the three kernels of a group or instance norm in
/// NHWC under a ChannelsLastGroups schedule (LowerGroupNormNHWC.cpp):
/// `args` are the one-kernel arguments (x, [scale], [bias], y, [mean],
/// [rstd], rows, cols, the steps' operands), `images` the batch size;
/// `target` plans the parts the device holds at once.
void lowerChannelsLastGroups(OpBuilder &b, Location loc, ModuleOp module,
                             Operation *op, const RowNormKernel &spec,
                             ArrayRef<Value> args, Value images,
                             const normfuse::runtime::GpuTarget &target);

} // namespace mlir::nf::cuda

#endif // NORMFUSE_LIB_CODEGEN_CUDA_ROWNORMKERNEL_H
