//===- ChooseSchedules.cpp - schedules written on ops first -----*- C++ -*-===//
//
// Part of normfuse. The first step of the GPU lowering: every forward row
// norm (layer, RMS, group and instance norm, inside an nf.fused group or
// not), every norm gradient (layer, RMS, group, instance), every
// per-channel reduction (bias_add_grad, batch_norm_training,
// batch_norm_grad; with the kernels that finish their partial sums, sized
// by the lowering's own rule for how many parts there are), every matrix
// product (matmul, conv2d and its two
// gradients, alone or an nf.fused group's producer) and every elementwise
// op (relu, gelu, silu, add, mul, bias_add, the activation gradients,
// batch_norm_inference), and of what TOSA leaves in linalg and tensor ops,
// every linalg.generic (all-parallel or reducing), tensor.pad and chain
// of tensor.insert_slice (a concat) gets its schedule
// as text in nf.gpu_schedule, chosen by the CUDA
// schedule layer for the target from the op's types, or, where the op
// already carries one (written by hand or by a tuner), that one checked
// against the op. The lowering then reads the attribute and chooses
// nothing. nf-choose-gpu-schedules runs this step alone, so the choices can
// be seen and edited; nf-lower-to-gpu runs it first.
//
//===----------------------------------------------------------------------===//

#include "ChannelSums.h"
#include "LowerToGPU.h"
#include "normfuse/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFCHOOSEGPUSCHEDULESPASS
#include "normfuse/Codegen/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

/// What the schedule layer chooses a row norm's schedule from.
struct RowNormFacts {
  RowNormShape shape;
  bool group = false;
  bool perColumnParams = false;
  /// Rows (images x groups for group norms) and, for group norms, images x
  /// spatial positions; kDynamic if unknown.
  int64_t rows = ShapedType::kDynamic;
  int64_t positions = ShapedType::kDynamic;
};

/// The product of `type`'s dimensions [begin, end) but `skip`, kDynamic if
/// one is.
int64_t product(RankedTensorType type, int64_t begin, int64_t end,
                int64_t skip = -1) {
  int64_t n = 1;
  for (int64_t d = begin; d < end; ++d) {
    if (d == skip)
      continue;
    if (type.isDynamicDim(d))
      return ShapedType::kDynamic;
    n *= type.getDimSize(d);
  }
  return n;
}

int64_t times(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b)
             ? ShapedType::kDynamic
             : a * b;
}

template <typename NormOp> RowNormFacts factsOf(NormOp op) {
  RowNormFacts f;
  auto type = cast<RankedTensorType>(op.getInput().getType());
  int64_t rank = type.getRank();
  f.shape.elementType = type.getElementType();
  constexpr bool isGroup = std::is_same_v<NormOp, GroupNormOp> ||
                           std::is_same_v<NormOp, InstanceNormOp>;
  if constexpr (isGroup) {
    // A row per (image, group): the group's channels at every position.
    f.group = true;
    f.perColumnParams = op.getScale() || op.getBias();
    bool nhwc = op.getLayout() == Layout::NHWC;
    int64_t channelAxis = getChannelAxis(op.getLayout(), rank);
    int64_t channels = product(type, channelAxis, channelAxis + 1);
    int64_t groups = channels, perGroup = 1;
    if constexpr (std::is_same_v<NormOp, GroupNormOp>) {
      groups = op.getNumGroups();
      perGroup = ShapedType::isDynamic(channels) ? ShapedType::kDynamic
                                                 : channels / groups;
    }
    int64_t spatial = product(type, 1, rank, channelAxis);
    int64_t images = product(type, 0, 1);
    f.shape.layout = nhwc ? RowNormShape::Layout::GroupsNHWC
                          : RowNormShape::Layout::GroupsNCHW;
    f.shape.cols = times(perGroup, spatial);
    f.shape.contiguous = nhwc ? perGroup : spatial;
    f.shape.channels = nhwc ? channels : ShapedType::kDynamic;
    f.rows = times(images, groups);
    f.positions = times(images, spatial);
  } else {
    int64_t axis = op.getAxis();
    f.perColumnParams = static_cast<bool>(op.getScale());
    if constexpr (std::is_same_v<NormOp, LayerNormOp>)
      f.perColumnParams |= static_cast<bool>(op.getBias());
    f.shape.cols = product(type, axis, rank);
    f.rows = product(type, 0, axis);
  }
  return f;
}

std::optional<RowNormFacts> rowNormFacts(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<RowNormFacts>>(op)
      .Case<LayerNormOp, RMSNormOp, GroupNormOp, InstanceNormOp>(
          [](auto norm) { return factsOf(norm); })
      .Default([](Operation *) { return std::nullopt; });
}

RowNormSchedule choose(const RowNormFacts &f,
                       const GPULoweringOptions &options) {
  const RowNormShape &s = f.shape;
  if (f.group)
    return selectGroupNormSchedule(s.cols, s.contiguous, s.elementType,
                                   options.target, options.rowNorm, s.channels,
                                   f.positions, f.rows);
  return selectRowNormSchedule(s.cols, s.elementType, options.target,
                               options.rowNorm, f.perColumnParams, f.rows);
}

/// Whether `a` and `b` are the same schedule, field by field.
bool sameSchedule(const RowNormSchedule &a, const RowNormSchedule &b) {
  return a.kind == b.kind && a.threadsPerRow == b.threadsPerRow &&
         a.rowsPerBlock == b.rowsPerBlock && a.vectorWidth == b.vectorWidth &&
         a.peeled == b.peeled && a.vectorsPerThread == b.vectorsPerThread &&
         a.chunkElements == b.chunkElements &&
         a.residentBlocks == b.residentBlocks &&
         a.partsFromResidency == b.partsFromResidency &&
         a.finishWarps == b.finishWarps &&
         a.paramsInRegisters == b.paramsInRegisters &&
         a.streaming == b.streaming && a.clusterBlocks == b.clusterBlocks;
}

struct NFChooseGPUSchedulesPass
    : nf::impl::NFChooseGPUSchedulesPassBase<NFChooseGPUSchedulesPass> {
  using NFChooseGPUSchedulesPassBase::NFChooseGPUSchedulesPassBase;

  void runOnOperation() override {
    FailureOr<GPULoweringOptions> options = parseGPULoweringOptions(
        getOperation(), "nf-choose-gpu-schedules", arch, rowNormSchedule);
    if (failed(options))
      return signalPassFailure();
    options->allowTf32 = allowTf32;
    if (failed(chooseGpuSchedules(getOperation(), *options)))
      signalPassFailure();
  }
};

} // namespace

FailureOr<GPULoweringOptions>
cuda::parseGPULoweringOptions(Operation *root, llvm::StringRef pass,
                              llvm::StringRef arch,
                              llvm::StringRef rowNormSchedule) {
  GPULoweringOptions options;
  std::string error;
  std::optional<GpuTarget> target = GpuTarget::parse(arch.str(), error);
  if (!target)
    return root->emitError() << pass << ": " << error, failure();
  options.target = *target;
  FailureOr<ForcedRowNormKind> rowNorm =
      parseForcedRowNormKind(rowNormSchedule);
  if (failed(rowNorm))
    return root->emitError()
               << pass << ": unknown row-norm schedule '" << rowNormSchedule
               << "' (" << kForcedRowNormKinds << ")",
           failure();
  options.rowNorm = *rowNorm;
  return options;
}

namespace {

/// Gives `op` its schedule: the one it carries, checked (`parse`, then
/// `check`: "" when it can run it), or the one `choose` gives, which must
/// read back as itself and pass the check. False, with a diagnostic at the
/// op, where either fails.
template <typename Schedule>
bool scheduleOp(
    Operation *op,
    llvm::function_ref<FailureOr<Schedule>(llvm::StringRef, std::string &)>
        parse,
    llvm::function_ref<std::string(const Schedule &)> check,
    llvm::function_ref<Schedule()> choose,
    llvm::function_ref<bool(const Schedule &, const Schedule &)> same) {
  std::string error;
  if (auto text = op->getAttrOfType<StringAttr>(kGpuScheduleAttr)) {
    FailureOr<Schedule> given = parse(text.getValue(), error);
    if (succeeded(given))
      error = check(*given);
    if (!error.empty()) {
      op->emitOpError() << "cannot run under the schedule '" << text.getValue()
                        << "': " << error;
      return false;
    }
    return true;
  }
  Schedule chosen = choose();
  // The text must read back as the schedule chosen, and the check pass
  // it: every automatic choice tests both.
  std::string text = chosen.str();
  FailureOr<Schedule> back = parse(text, error);
  if (succeeded(back) && !same(*back, chosen))
    error = "it reads back as '" + back->str() + "'";
  if (error.empty())
    error = check(chosen);
  if (!error.empty()) {
    op->emitOpError() << "the schedule layer chose '" << text
                      << "', which is refused: " << error;
    return false;
  }
  op->setAttr(kGpuScheduleAttr, StringAttr::get(op->getContext(), text));
  return true;
}

/// The elements of a norm gradient's rows (kDynamic if unknown) and their
/// type, and the tensor and its normalized axis, for layer_norm_grad and
/// rms_norm_grad.
struct GradRows {
  int64_t cols;
  Type element;
  RankedTensorType type;
  int64_t axis;
};

std::optional<GradRows> gradRows(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<GradRows>>(op)
      .Case<LayerNormGradOp, RMSNormGradOp>(
          [](auto grad) -> std::optional<GradRows> {
            RankedTensorType type = grad.getGradInput().getType();
            int64_t axis = grad.getAxis();
            return GradRows{product(type, axis, type.getRank()),
                            type.getElementType(), type, axis};
          })
      .Default([](Operation *) { return std::nullopt; });
}

/// What a per-channel reduction's schedule is chosen from: its channels,
/// the contiguous runs of each channel's elements (kDynamic if unknown)
/// and their type, for bias_add_grad, batch_norm_training and
/// batch_norm_grad (as ChannelSums.cpp reads them off the buffer).
struct ChannelFacts {
  int64_t channels, inner;
  Type element;
  /// The tensor reduced and its layout; whether its partial values are
  /// BatchNorm's moments (merged) rather than sums (added).
  RankedTensorType type;
  Layout layout;
  bool moments;
};

template <typename Op>
ChannelFacts channelFactsOf(Op op, Value tensor, bool moments) {
  auto type = cast<RankedTensorType>(tensor.getType());
  int64_t axis = getChannelAxis(op.getLayout(), type.getRank());
  return {product(type, axis, axis + 1),
          product(type, axis + 1, type.getRank()),
          type.getElementType(),
          type,
          op.getLayout(),
          moments};
}

std::optional<ChannelFacts> channelFacts(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<ChannelFacts>>(op)
      .Case([](BiasAddGradOp o) {
        return channelFactsOf(o, o.getGradOutput(), /*moments=*/false);
      })
      .Case([](BatchNormTrainingOp o) {
        return channelFactsOf(o, o.getInput(), /*moments=*/true);
      })
      .Case([](BatchNormGradOp o) {
        return channelFactsOf(o, o.getInput(), /*moments=*/false);
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// What a group or instance norm gradient's schedule is chosen from.
struct GroupGradFacts {
  int64_t images, channels, spatial;
  bool nhwc;
  Type element;
  RankedTensorType type;
  Layout layout;
};

template <typename Op> GroupGradFacts groupGradFactsOf(Op op) {
  auto type = cast<RankedTensorType>(op.getInput().getType());
  int64_t rank = type.getRank();
  int64_t axis = getChannelAxis(op.getLayout(), rank);
  return {product(type, 0, 1),
          product(type, axis, axis + 1),
          product(type, 1, rank, axis),
          op.getLayout() == Layout::NHWC,
          type.getElementType(),
          type,
          op.getLayout()};
}

std::optional<GroupGradFacts> groupGradFacts(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<GroupGradFacts>>(op)
      .Case<GroupNormGradOp, InstanceNormGradOp>(
          [](auto o) { return groupGradFactsOf(o); })
      .Default([](Operation *) { return std::nullopt; });
}

bool samePointwiseSchedule(const PointwiseSchedule &a,
                           const PointwiseSchedule &b) {
  return a.blockSize == b.blockSize && a.vectorWidth == b.vectorWidth &&
         a.peeled == b.peeled && a.maxBlocks == b.maxBlocks &&
         a.minBlocksPerMultiprocessor == b.minBlocksPerMultiprocessor;
}

bool sameTotals(const PartialTotalsSchedule &a,
                const PartialTotalsSchedule &b) {
  return a.warps == b.warps && a.unroll == b.unroll;
}

/// The totals of `parts` partial values a (image, channel) (kDynamic if
/// unknown): BatchNorm's moments merged, or sums added.
PartialTotalsSchedule totalsFor(int64_t parts, bool moments, Type element,
                                const GpuTarget &target) {
  return moments ? selectMomentsMergeSchedule(
                       parts, getAccumulationType(element), target)
                 : selectPartialTotalsSchedule(parts, target);
}

bool sameChannelSchedule(const ChannelReductionSchedule &a,
                         const ChannelReductionSchedule &b) {
  return a.channelsLast == b.channelsLast && a.oneKernel == b.oneKernel &&
         a.threadsPerRow == b.threadsPerRow &&
         a.rowsPerBlock == b.rowsPerBlock && a.vectorWidth == b.vectorWidth &&
         a.vectorsPerThread == b.vectorsPerThread &&
         a.maxBlocks == b.maxBlocks && a.finishBlockSize == b.finishBlockSize &&
         sameTotals(a.totals, b.totals) &&
         bool(a.elementwise) == bool(b.elementwise) &&
         (!a.elementwise ||
          samePointwiseSchedule(*a.elementwise, *b.elementwise));
}

bool sameProductSchedule(const TiledProductSchedule &a,
                         const TiledProductSchedule &b) {
  return a.kind == b.kind && a.tileM == b.tileM && a.tileN == b.tileN &&
         a.tileK == b.tileK && a.threadM == b.threadM &&
         a.threadN == b.threadN && a.warpsM == b.warpsM &&
         a.warpsN == b.warpsN && a.stages == b.stages && a.splitK == b.splitK &&
         a.tf32 == b.tf32 && a.tileGroupRows == b.tileGroupRows &&
         a.splitKMax == b.splitKMax && a.splitKBlocks == b.splitKBlocks &&
         a.splitKMinTiles == b.splitKMinTiles &&
         a.smallTile.str() == b.smallTile.str() &&
         a.smallTileBelow == b.smallTileBelow &&
         (!a.splitsK() || samePointwiseSchedule(a.finish, b.finish)) &&
         a.maxBlocks == b.maxBlocks &&
         a.minBlocksPerMultiprocessor == b.minBlocksPerMultiprocessor;
}

} // namespace

LogicalResult cuda::chooseGpuSchedules(Operation *root,
                                       const GPULoweringOptions &options) {
  bool ok = true;
  root->walk([&](Operation *op) {
    if (std::optional<RowNormFacts> facts = rowNormFacts(op)) {
      ok &= scheduleOp<RowNormSchedule>(
          op, parseRowNormSchedule,
          [&](const RowNormSchedule &s) {
            return checkRowNormSchedule(s, facts->shape, options.target);
          },
          [&] { return choose(*facts, options); }, sameSchedule);
      return;
    }
    if (std::optional<GradRows> rows = gradRows(op)) {
      ok &= scheduleOp<RowNormGradSchedule>(
          op, parseRowNormGradSchedule,
          [&](const RowNormGradSchedule &g) {
            return checkRowNormGradSchedule(g, rows->cols, rows->element,
                                            options.target);
          },
          [&] {
            RowNormGradSchedule g = selectRowNormGradSchedule(
                rows->cols, rows->element, options.target, options.rowNorm);
            // The parameters' totals, over the partial rows the blocks
            // write.
            g.params = selectPartialTotalsSchedule(
                plannedGradRowSlots(rows->type, rows->axis, g, op->getLoc()),
                options.target);
            return g;
          },
          [](const RowNormGradSchedule &a, const RowNormGradSchedule &b) {
            return sameSchedule(a.rows, b.rows) && a.maxBlocks == b.maxBlocks &&
                   sameTotals(a.params, b.params);
          });
      return;
    }
    if (std::optional<ChannelFacts> f = channelFacts(op)) {
      // The batch norms' elementwise pass after the sums.
      std::optional<std::pair<int64_t, Type>> pass = elementwisePassShapeOf(op);
      ok &= scheduleOp<ChannelReductionSchedule>(
          op, parseChannelReductionSchedule,
          [&](const ChannelReductionSchedule &s) {
            std::string why = checkChannelReductionSchedule(
                s, f->channels, f->inner, f->element, options.target);
            if (!why.empty())
              return why;
            if (s.oneKernel)
              return std::string(pass ? ""
                                      : "channels-first-one-kernel for an op "
                                        "other than batch_norm_training and "
                                        "batch_norm_grad");
            if (bool(pass) != bool(s.elementwise))
              return std::string(pass ? "no elementwise pass (elementwise-*)"
                                      : "an elementwise pass for an op "
                                        "without one");
            if (!pass)
              return std::string();
            why = checkPointwiseSchedule(*s.elementwise, pass->first,
                                         pass->second, options.target);
            return why.empty() ? why : "elementwise pass: " + why;
          },
          [&] {
            bool channelsLast =
                f->inner == 1 && !ShapedType::isDynamic(f->channels);
            // The batch norms (the ops with an elementwise pass) in NCHW:
            // one kernel (the split row, as asked for, keeps the sums, their
            // totals and the elementwise pass: what the one kernel
            // replaces).
            if (pass && !channelsLast &&
                plainKind(options.rowNorm) != ForcedRowNormKind::SplitRow)
              return selectBatchNormOneKernelSchedule(
                  f->inner, f->element, f->moments ? 1 : 2, options.target);
            ChannelReductionSchedule s = selectChannelReductionSchedule(
                f->channels, f->inner, channelsLast, f->element,
                options.target);
            s.totals = totalsFor(plannedChannelParts(f->type, f->layout,
                                                     /*perImage=*/false, s,
                                                     op->getLoc()),
                                 f->moments, f->element, options.target);
            if (pass)
              s.elementwise = selectPointwiseSchedule(
                  pass->first, pass->second, options.target, /*mayPeel=*/true);
            return s;
          },
          sameChannelSchedule);
      return;
    }
    if (std::optional<GroupGradFacts> f = groupGradFacts(op)) {
      // The sums are channels last where the channels are contiguous (NHWC,
      // or NCHW of one position) and of a known count
      // (ChannelDims::channelsLast).
      bool channelsLast =
          (f->nhwc || f->spatial == 1) && !ShapedType::isDynamic(f->channels);
      ok &= scheduleOp<GroupNormGradSchedule>(
          op, parseGroupNormGradSchedule,
          [&](const GroupNormGradSchedule &s) {
            return checkGroupNormGradSchedule(s, f->channels, f->spatial,
                                              f->nhwc, f->element,
                                              options.target);
          },
          [&] {
            GroupNormGradSchedule s = selectGroupNormGradSchedule(
                f->images, f->channels, f->spatial, channelsLast, f->element,
                options.target, options.rowNorm);
            s.sums.totals = totalsFor(
                plannedChannelParts(f->type, f->layout, /*perImage=*/true,
                                    s.sums, op->getLoc()),
                /*moments=*/false, f->element, options.target);
            return s;
          },
          [](const GroupNormGradSchedule &a, const GroupNormGradSchedule &b) {
            return samePointwiseSchedule(a.dx, b.dx) &&
                   sameChannelSchedule(a.sums, b.sums) &&
                   a.finishBlockSize == b.finishBlockSize &&
                   a.oneKernel.threadsPerRow == b.oneKernel.threadsPerRow &&
                   a.oneKernel.rowsPerBlock == b.oneKernel.rowsPerBlock &&
                   a.oneKernel.vectorWidth == b.oneKernel.vectorWidth &&
                   a.oneKernel.minPart == b.oneKernel.minPart;
          });
      return;
    }
    // The kernels of the grid-stride kind: elementwise ops, linalg
    // generics, window copies.
    auto gridStride =
        [&](llvm::function_ref<std::string(const PointwiseSchedule &)> check,
            llvm::function_ref<PointwiseSchedule()> choose) {
          ok &= scheduleOp<PointwiseSchedule>(op, parsePointwiseSchedule, check,
                                              choose, samePointwiseSchedule);
        };
    const GpuTarget &target = options.target;
    if (std::optional<std::pair<int64_t, Type>> e = elementwiseShapeOf(op)) {
      int64_t n = e->first;
      Type widest = e->second;
      return gridStride(
          [&](const PointwiseSchedule &s) {
            return checkPointwiseSchedule(s, n, widest, target);
          },
          [&] {
            return selectPointwiseSchedule(n, widest, target, /*mayPeel=*/true);
          });
    }
    if (std::optional<GenericKernelShape> g = genericKernelShapeOf(op))
      return gridStride(
          [&](const PointwiseSchedule &s) {
            return checkGenericSchedule(s, *g, target);
          },
          [&] { return selectGenericSchedule(*g, target); });
    if (std::optional<LinalgReductionShape> r = linalgReductionShapeOf(op)) {
      ok &= scheduleOp<LinalgReductionSchedule>(
          op, parseLinalgReductionSchedule,
          [&](const LinalgReductionSchedule &s) {
            return checkLinalgReductionSchedule(s, *r, target);
          },
          [&] { return selectLinalgReductionSchedule(*r, target); },
          [](const LinalgReductionSchedule &a,
             const LinalgReductionSchedule &b) { return a.str() == b.str(); });
      return;
    }
    if (std::optional<std::pair<int64_t, Type>> w = windowCopyShapeOf(op)) {
      int64_t n = w->first;
      Type element = w->second;
      return gridStride(
          [&](const PointwiseSchedule &s) {
            return checkWindowCopySchedule(s, n, element, target);
          },
          [&] { return selectWindowCopySchedule(n, element, target); });
    }
    if (std::optional<ProductShape> p = productShapeOf(op, options))
      ok &= scheduleOp<TiledProductSchedule>(
          op, parseTiledProductSchedule,
          [&](const TiledProductSchedule &s) {
            return checkTiledProductSchedule(s, *p, options.target);
          },
          [&] { return selectTiledProductSchedule(*p, options.target); },
          sameProductSchedule);
  });
  return success(ok);
}

/// The schedule `op` carries, as `parse` reads it, or failure with a
/// diagnostic at the op.
template <typename Schedule>
static FailureOr<Schedule>
readSchedule(Operation *op,
             FailureOr<Schedule> (*parse)(llvm::StringRef, std::string &)) {
  auto text = op->getAttrOfType<StringAttr>(kGpuScheduleAttr);
  std::string error = "no " + std::string(kGpuScheduleAttr) + " attribute";
  if (text) {
    FailureOr<Schedule> s = parse(text.getValue(), error);
    if (succeeded(s))
      return s;
  }
  return op->emitOpError() << "has no schedule to lower by: " << error,
         failure();
}

FailureOr<RowNormSchedule> cuda::readRowNormSchedule(Operation *op) {
  return readSchedule(op, parseRowNormSchedule);
}

FailureOr<RowNormGradSchedule> cuda::readRowNormGradSchedule(Operation *op) {
  return readSchedule(op, parseRowNormGradSchedule);
}

FailureOr<ChannelReductionSchedule>
cuda::readChannelReductionSchedule(Operation *op) {
  return readSchedule(op, parseChannelReductionSchedule);
}

FailureOr<GroupNormGradSchedule>
cuda::readGroupNormGradSchedule(Operation *op) {
  return readSchedule(op, parseGroupNormGradSchedule);
}

FailureOr<PointwiseSchedule> cuda::readPointwiseSchedule(Operation *op) {
  return readSchedule(op, parsePointwiseSchedule);
}

FailureOr<LinalgReductionSchedule>
cuda::readLinalgReductionSchedule(Operation *op) {
  return readSchedule(op, parseLinalgReductionSchedule);
}

FailureOr<TiledProductSchedule> cuda::readTiledProductSchedule(Operation *op) {
  return readSchedule(op, parseTiledProductSchedule);
}
