//===- LowerChannelReductions.cpp - per-channel sums on the GPU -----------===//
//
// Part of normfuse. The ops that sum over every dimension but the channel
// axis: bias_add_grad, batch_norm_training (its batch statistics) and
// batch_norm_grad (its parameter gradients). Each sum is two or three
// kernels (ChannelReductionSchedule): `<f>_<op>_sums` writes partial sums,
// a block per part of the tensor; for plain sums `<f>_<op>_totals` adds a
// channel's parts, many warps a channel, in a fixed order (ChannelSums.h),
// and `<f>_<op>_finish`, a thread per channel, writes what the op needs of
// the totals (the gradients); BatchNorm's moments are merged by Chan's
// formula in `<f>_<op>_finish` itself, many warps a channel in a fixed
// order, which then writes the mean, rstd and running statistics. What
// then runs per element (BatchNorm's normalize step, its input gradient)
// is an elementwise kernel with per-channel operands (LowerPointwise.cpp).
//
// BatchNorm's statistics are one reduction of moments (ChannelSums::
// moments): per part its mean and the squared deviations from it, in two
// sweeps over the part, combined by Chan's formula in the finishing
// kernel (emitMomentsFinish); never E[x^2] - E[x]^2. Dynamic sizes are the
// kernels' index arguments (Kernel::size).
//
//===----------------------------------------------------------------------===//

#include "BatchNormOneKernel.h"
#include "ChannelSums.h"
#include "KernelBuilder.h"
#include "LowerToGPU.h"
#include "normfuse/Codegen/Common/ActivationMath.h"
#include "normfuse/Codegen/Common/BufferBuilders.h"
#include "normfuse/Codegen/Common/NormMath.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

/// Per channel: the value to store in each output, from the sums, the
/// finishing kernel's per-channel operands and the element count.
using FinishFn = llvm::function_ref<SmallVector<Value>(
    OpBuilder &, Location, ArrayRef<Value>, ArrayRef<Value>, Value)>;

/// Stores what `finishFn` makes of `channel`'s `sums` in kernel `k`, whose
/// arguments after the first are the `numOps` per-channel operands, then
/// the outputs.
void storeFinished(Kernel &k, OpBuilder &b, Location loc,
                   const PartialSums &partials, ArrayRef<Value> sums,
                   Value channel, unsigned numOps, Type acc,
                   FinishFn finishFn) {
  SmallVector<Value> operands;
  for (unsigned o = 0; o < numOps; ++o)
    operands.push_back(loadLanes(b, loc, k.arg(1 + o), channel, 1, acc)[0]);
  int64_t known = constantOr(partials.count);
  Value count =
      known >= 0
          ? floatConstant(b, loc, double(known), acc, 1)
          : b.create<arith::UIToFPOp>(
                 loc, acc,
                 b.create<arith::IndexCastUIOp>(loc, b.getI64Type(),
                                                k.size(b, loc, partials.count)))
                .getResult();
  SmallVector<Value> values = finishFn(b, loc, sums, operands, count);
  for (auto [i, v] : llvm::enumerate(values))
    storeLanes(b, loc, {v}, k.arg(1 + numOps + i), channel);
}

/// The finishing kernel of plain sums: thread c takes channel c's totals
/// (emitPartialTotals) and stores FinishFn's values.
Kernel buildFinish(ModuleOp module, Location loc, const std::string &name,
                   const ChannelSums &cs, const PartialSums &partials,
                   int64_t blockSize, TypeRange types, FinishFn finishFn) {
  Kernel k = createKernel(module, loc, name, types, blockSize,
                          "channel-finish block=" + std::to_string(blockSize));
  OpBuilder &b = k.body;
  Type acc = cs.acc;
  auto c = [&](OpBuilder &ib, int64_t v) { return indexConstant(ib, loc, v); };
  Value partial = k.arg(0);
  unsigned numOps = cs.finishOperands.size();
  Value channel = b.create<arith::AddIOp>(
      loc,
      b.create<arith::MulIOp>(loc,
                              b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x),
                              c(b, blockSize)),
      b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x));
  Value inRange =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, channel,
                              k.size(b, loc, cs.dims.channels));
  b.create<scf::IfOp>(loc, inRange, [&](OpBuilder &tb, Location tl) {
    SmallVector<Value> sums;
    // Plain sums arrive as their totals (emitPartialTotals).
    for (int64_t kk = 0; kk < cs.numSums; ++kk)
      sums.push_back(tb.create<memref::LoadOp>(
          tl, partial, totalsIndex(k, tb, tl, cs, c(tb, 0), channel, kk)));
    storeFinished(k, tb, tl, partials, sums, channel, numOps, acc, finishFn);
    tb.create<scf::YieldOp>(tl);
  });
  return k;
}

/// The finish of moments (BatchNorm's statistics), parallel: a block per
/// run of 32 channels, a lane a channel, its warps taking the parts (each
/// part's count, mean less the pivot and M2) and merging them by Chan's
/// formula in a fixed order (emitColumnTotals: slots in order, warps in
/// order), so every run gives the same bits; warp 0 then writes what
/// `finishFn` makes of each channel's mean and M2.
void emitMomentsFinish(OpBuilder &b, Operation *op, llvm::StringRef what,
                       const ChannelSums &cs, const PartialSums &partials,
                       const PartialTotalsSchedule &merge, FinishFn finishFn) {
  Location loc = op->getLoc();
  Type acc = cs.acc;
  unsigned numOps = cs.finishOperands.size();
  ColumnTotals t;
  t.images = cs.dims.images;
  t.columns = cs.dims.channels;
  t.parts = partials.parts;
  t.numSums = 3;
  t.acc = acc;
  t.inputs = {partials.buffer};
  t.inputs.append(cs.finishOperands.begin(), cs.finishOperands.end());
  t.outputs.assign(cs.outputs.begin(), cs.outputs.end());
  // (count, mean less the pivot, M2) of a part.
  t.load = [&](Kernel &k, OpBuilder &lb, Location ll, Value image,
               Value channel, Value part, int64_t kk) -> Value {
    if (kk == 0)
      return partials.partCount(k, lb, ll, part, acc);
    return lb.create<memref::LoadOp>(
        ll, k.arg(0), partials.index(k, lb, ll, image, channel, part, kk - 1));
  };
  t.combine = [](OpBuilder &cb, Location cl, ArrayRef<Value> x,
                 ArrayRef<Value> y) {
    Moments m = emitChanCombine(cb, cl, Moments{x[0], x[1], x[2]},
                                Moments{y[0], y[1], y[2]});
    return SmallVector<Value>{m.count, m.mean, m.m2};
  };
  t.store = [&](Kernel &k, OpBuilder &sb, Location sl, Value image,
                Value channel, ArrayRef<Value> totals) {
    IndexMath sm{sb, sl};
    // The parts' means are distances from the pivot every part shares
    // (none without parts).
    Value zero = floatConstant(sb, sl, 0.0, acc, 1);
    auto loadPivot = [&](OpBuilder &pb, Location pl) {
      return SmallVector<Value>{
          pb.create<memref::LoadOp>(pl, k.arg(0),
                                    partials.index(k, pb, pl, image, channel,
                                                   IndexMath{pb, pl}.c(0), 2))};
    };
    int64_t parts = partials.plannedParts;
    Value pivot =
        parts == 0  ? zero
        : parts > 0 ? loadPivot(sb, sl)[0]
                    : emitValuesIf(sb, sl,
                                   sb.create<arith::CmpIOp>(
                                       sl, arith::CmpIPredicate::ne,
                                       k.size(sb, sl, partials.parts), sm.c(0)),
                                   acc, loadPivot)[0];
    SmallVector<Value> sums{sb.create<arith::AddFOp>(sl, pivot, totals[1]),
                            totals[2]};
    storeFinished(k, sb, sl, partials, sums, channel, numOps, acc, finishFn);
  };
  emitColumnTotals(b, loc, op->getParentOfType<ModuleOp>(),
                   kernelBaseName(op, what) + "_finish", t, merge);
}

/// Launches the two kernels of a per-channel reduction before `op`, under
/// the schedule written on it (chooseGpuSchedules).
LogicalResult emitChannelSums(OpBuilder &b, Operation *op, llvm::StringRef what,
                              const ChannelSums &cs,
                              const GPULoweringOptions &options, SumsFn sumsFn,
                              FinishFn finishFn) {
  Location loc = op->getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  const ChannelDims &d = cs.dims;
  FailureOr<ChannelReductionSchedule> schedule =
      readChannelReductionSchedule(op);
  if (failed(schedule))
    return failure();
  // (A batch norm's elementwise pass runs after these kernels.)
  ChannelReductionSchedule s = *schedule;
  s.elementwise.reset();
  PartialSums partials =
      emitPartialChannelSums(b, op, what, cs, s, options.target, sumsFn);
  // Moments: merged by many warps a channel, which then finish it.
  if (cs.moments) {
    emitMomentsFinish(b, op, what, cs, partials, s.totals, finishFn);
    return success();
  }
  // Plain sums: each channel's parts added by many warps first.
  Value sums = emitPartialTotals(b, op, what, cs, partials, s.totals);
  SmallVector<Value> finishArgs{sums};
  finishArgs.append(cs.finishOperands.begin(), cs.finishOperands.end());
  finishArgs.append(cs.outputs.begin(), cs.outputs.end());
  Kernel finishKernel = buildFinish(
      module, loc, kernelBaseName(op, what) + "_finish", cs, partials,
      s.finishBlockSize, ValueRange(finishArgs).getTypes(), finishFn);
  launchUnlessEmpty(b, loc, finishKernel,
                    IndexMath{b, loc}.ceilDiv(d.channels, s.finishBlockSize),
                    s.finishBlockSize, finishArgs);
  return success();
}

/// The flat buffer of a tensor.
Value flatBuffer(OpBuilder &b, Location loc, Value tensor) {
  return flatten(b, loc, getBuffer(b, loc, tensor));
}

/// A fresh (C) buffer of `type`, of `channels` elements where dynamic.
Value allocChannels(OpBuilder &b, Location loc, RankedTensorType type,
                    Value channels) {
  auto memref = MemRefType::get(type.getShape(), type.getElementType());
  return b.create<memref::AllocOp>(
      loc, memref,
      memref.hasStaticShape() ? ValueRange() : ValueRange{channels});
}

/// The schedule of a batch norm's elementwise pass, written with its sums'
/// (chooseGpuSchedules), or failure with a diagnostic.
FailureOr<PointwiseSchedule> readElementwisePass(Operation *op) {
  FailureOr<ChannelReductionSchedule> s = readChannelReductionSchedule(op);
  if (failed(s))
    return failure();
  if (!s->elementwise)
    return op->emitOpError()
               << "has no elementwise pass in its schedule (elementwise-*)",
           failure();
  return *s->elementwise;
}

LogicalResult lowerBiasAddGrad(RewriterBase &rewriter, BiasAddGradOp op,
                               const GPULoweringOptions &options) {
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  ChannelSums cs = channelSumsOf(b, loc, op.getGradOutput(), op.getLayout());
  cs.inputs.push_back(flatBuffer(b, loc, op.getGradOutput()));
  Value grad =
      allocChannels(b, loc, op.getGradBias().getType(), cs.dims.channels);
  cs.outputs.push_back(flatten(b, loc, grad));
  if (failed(emitChannelSums(
          b, op, "bias_add_grad", cs, options,
          [](OpBuilder &, Location, ArrayRef<Value> in, ArrayRef<Value>) {
            return SmallVector<Value>{in[0]};
          },
          [](OpBuilder &, Location, ArrayRef<Value> sums, ArrayRef<Value>,
             Value) { return SmallVector<Value>{sums[0]}; })))
    return failure();
  rewriter.replaceOp(op, toTensor(b, loc, grad));
  return success();
}

/// batch_norm_training in one kernel (BatchNormOneKernel.h).
LogicalResult lowerBatchNormTrainingInOneKernel(
    RewriterBase &rewriter, BatchNormTrainingOp op,
    const ChannelReductionSchedule &s, const GPULoweringOptions &options) {
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  BatchNormTrainingBuffers in;
  Value x = getBuffer(b, loc, op.getInput());
  in.x = flatten(b, loc, x);
  ChannelDims d = getChannelDims(b, loc, x, op.getLayout());
  in.outer = d.outer;
  in.channels = d.channels;
  in.inner = d.inner;
  in.acc = getAccumulationType(op.getInput().getType().getElementType());
  if (op.getScale())
    in.scale = flatBuffer(b, loc, op.getScale());
  if (op.getBias())
    in.bias = flatBuffer(b, loc, op.getBias());
  in.runningMean = flatBuffer(b, loc, op.getRunningMean());
  in.runningVar = flatBuffer(b, loc, op.getRunningVar());
  Value y = allocBuffer(b, loc, op.getResult().getType(), x);
  auto alloc = [&](Value result) {
    return allocChannels(b, loc, cast<RankedTensorType>(result.getType()),
                         d.channels);
  };
  Value mean = alloc(op.getBatchMean()), rstd = alloc(op.getBatchRstd()),
        runningMean = alloc(op.getNewRunningMean()),
        runningVar = alloc(op.getNewRunningVar());
  in.y = flatten(b, loc, y);
  in.mean = flatten(b, loc, mean);
  in.rstd = flatten(b, loc, rstd);
  in.newRunningMean = flatten(b, loc, runningMean);
  in.newRunningVar = flatten(b, loc, runningVar);
  in.epsilon = op.getEpsilon().convertToDouble();
  in.momentum = op.getMomentum().convertToDouble();
  in.unbiasedRunningVar = op.getUnbiasedRunningVar();
  emitBatchNormOneKernel(b, loc, op->getParentOfType<ModuleOp>(),
                         kernelBaseName(op, "batch_norm_training"), in, s,
                         options.target);
  rewriter.replaceOp(op, {toTensor(b, loc, y), toTensor(b, loc, mean),
                          toTensor(b, loc, rstd), toTensor(b, loc, runningMean),
                          toTensor(b, loc, runningVar)});
  return success();
}

LogicalResult lowerBatchNormTraining(RewriterBase &rewriter,
                                     BatchNormTrainingOp op,
                                     const GPULoweringOptions &options) {
  FailureOr<ChannelReductionSchedule> schedule =
      readChannelReductionSchedule(op);
  if (failed(schedule))
    return failure();
  if (schedule->oneKernel)
    return lowerBatchNormTrainingInOneKernel(rewriter, op, *schedule, options);
  FailureOr<PointwiseSchedule> elementwise = readElementwisePass(op);
  if (failed(elementwise))
    return failure();
  RankedTensorType type = op.getResult().getType();
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  double eps = op.getEpsilon().convertToDouble();
  double momentum = op.getMomentum().convertToDouble();
  bool unbiasedRunningVar = op.getUnbiasedRunningVar();
  Value x = flatBuffer(b, loc, op.getInput());
  // The mean and the squared deviations from it: per part two sweeps (the
  // second from cache), the parts combined by Chan's formula.
  ChannelSums moments = channelSumsOf(b, loc, op.getInput(), op.getLayout());
  auto alloc = [&](Value result) {
    return allocChannels(b, loc, cast<RankedTensorType>(result.getType()),
                         moments.dims.channels);
  };
  Value mean = alloc(op.getBatchMean());
  Value rstd = alloc(op.getBatchRstd());
  Value runningMean = alloc(op.getNewRunningMean());
  Value runningVar = alloc(op.getNewRunningVar());

  moments.moments = true;
  moments.inputs = {x};
  moments.finishOperands = {flatBuffer(b, loc, op.getRunningMean()),
                            flatBuffer(b, loc, op.getRunningVar())};
  moments.outputs = {flatten(b, loc, mean), flatten(b, loc, rstd),
                     flatten(b, loc, runningMean), flatten(b, loc, runningVar)};
  if (failed(emitChannelSums(
          b, op, "batch_norm_training_moments", moments, options,
          [](OpBuilder &, Location, ArrayRef<Value> in, ArrayRef<Value>) {
            return SmallVector<Value>{in[0]};
          },
          [&](OpBuilder &fb, Location fl, ArrayRef<Value> sums,
              ArrayRef<Value> ops, Value count) {
            // sums: the mean and M2. running' = (1 - momentum) running +
            // momentum * statistic, the variance's unbiased (n / (n - 1); the
            // verifier asks n > 1) unless the op asks for the biased one
            // (ONNX).
            Type t = sums[0].getType();
            auto constant = [&](double v) {
              return floatConstant(fb, fl, v, t, 1);
            };
            Value var = fb.create<arith::DivFOp>(fl, sums[1], count);
            Value unbiased = fb.create<arith::DivFOp>(
                fl, sums[1],
                fb.create<arith::SubFOp>(fl, count, constant(1.0)));
            auto update = [&](Value old, Value stat) -> Value {
              return fb.create<arith::AddFOp>(
                  fl,
                  fb.create<arith::MulFOp>(fl, constant(1.0 - momentum), old),
                  fb.create<arith::MulFOp>(fl, constant(momentum), stat));
            };
            return SmallVector<Value>{
                sums[0], emitRstd(fb, fl, var, eps), update(ops[0], sums[0]),
                update(ops[1], unbiasedRunningVar ? unbiased : var)};
          })))
    return failure();

  // y = (x - mean) * rstd * scale + bias, per element.
  Value meanTensor = toTensor(b, loc, mean);
  Value rstdTensor = toTensor(b, loc, rstd);
  SmallVector<Value> params{meanTensor, rstdTensor};
  bool hasScale = bool(op.getScale()), hasBias = bool(op.getBias());
  if (hasScale)
    params.push_back(op.getScale());
  if (hasBias)
    params.push_back(op.getBias());
  int64_t axis = getChannelAxis(op.getLayout(), type.getRank());
  Value y = emitElementwise(
      b, op, type, op.getInput(), params, axis, *elementwise,
      "batch_norm_training",
      [&](OpBuilder &fb, Location fl, ArrayRef<Value> v) -> Value {
        return emitNormalize(fb, fl, v[0], v[1], v[2],
                             hasScale ? v[3] : Value(),
                             hasBias ? v[hasScale ? 4 : 3] : Value());
      });
  rewriter.replaceOp(op,
                     {y, meanTensor, rstdTensor, toTensor(b, loc, runningMean),
                      toTensor(b, loc, runningVar)});
  return success();
}

/// batch_norm_grad in one kernel (BatchNormOneKernel.h).
LogicalResult lowerBatchNormGradInOneKernel(RewriterBase &rewriter,
                                            BatchNormGradOp op,
                                            const ChannelReductionSchedule &s,
                                            const GPULoweringOptions &options) {
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  BatchNormGradBuffers in;
  Value x = getBuffer(b, loc, op.getInput());
  in.x = flatten(b, loc, x);
  in.dy = flatBuffer(b, loc, op.getGradOutput());
  ChannelDims d = getChannelDims(b, loc, x, op.getLayout());
  in.outer = d.outer;
  in.channels = d.channels;
  in.inner = d.inner;
  in.acc = getAccumulationType(op.getInput().getType().getElementType());
  in.mean = flatBuffer(b, loc, op.getMean());
  in.rstd = flatBuffer(b, loc, op.getRstd());
  if (op.getScale())
    in.scale = flatBuffer(b, loc, op.getScale());
  Value dx = allocBuffer(b, loc, op.getGradInput().getType(), x);
  Value dscale = allocChannels(b, loc, op.getGradScale().getType(), d.channels);
  Value dbias = allocChannels(b, loc, op.getGradBias().getType(), d.channels);
  in.dx = flatten(b, loc, dx);
  in.dscale = flatten(b, loc, dscale);
  in.dbias = flatten(b, loc, dbias);
  emitBatchNormGradOneKernel(b, loc, op->getParentOfType<ModuleOp>(),
                             kernelBaseName(op, "batch_norm_grad"), in, s,
                             options.target);
  rewriter.replaceOp(op, {toTensor(b, loc, dx), toTensor(b, loc, dscale),
                          toTensor(b, loc, dbias)});
  return success();
}

LogicalResult lowerBatchNormGrad(RewriterBase &rewriter, BatchNormGradOp op,
                                 const GPULoweringOptions &options) {
  FailureOr<ChannelReductionSchedule> schedule =
      readChannelReductionSchedule(op);
  if (failed(schedule))
    return failure();
  if (schedule->oneKernel)
    return lowerBatchNormGradInOneKernel(rewriter, op, *schedule, options);
  FailureOr<PointwiseSchedule> elementwise = readElementwisePass(op);
  if (failed(elementwise))
    return failure();
  RankedTensorType type = op.getGradInput().getType();
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  ChannelSums cs = channelSumsOf(b, loc, op.getInput(), op.getLayout(), 2);
  cs.inputs = {flatBuffer(b, loc, op.getGradOutput()),
               flatBuffer(b, loc, op.getInput())};
  cs.perChannel = {flatBuffer(b, loc, op.getMean()),
                   flatBuffer(b, loc, op.getRstd())};
  Value channels = cs.dims.channels;
  Value dscale = allocChannels(b, loc, op.getGradScale().getType(), channels);
  Value dbias = allocChannels(b, loc, op.getGradBias().getType(), channels);
  auto accType = RankedTensorType::get({constantOr(channels)}, cs.acc);
  Value meanDy = allocChannels(b, loc, accType, channels);
  Value meanDyXhat = allocChannels(b, loc, accType, channels);
  cs.outputs = {flatten(b, loc, dscale), flatten(b, loc, dbias),
                flatten(b, loc, meanDyXhat), flatten(b, loc, meanDy)};
  if (failed(emitChannelSums(
          b, op, "batch_norm_grad", cs, options,
          [](OpBuilder &fb, Location fl, ArrayRef<Value> in,
             ArrayRef<Value> p) {
            Value xhat =
                emitNormalize(fb, fl, in[1], p[0], p[1], Value(), Value());
            return SmallVector<Value>{
                fb.create<arith::MulFOp>(fl, in[0], xhat).getResult(), in[0]};
          },
          [](OpBuilder &fb, Location fl, ArrayRef<Value> sums, ArrayRef<Value>,
             Value count) {
            return SmallVector<Value>{
                sums[0], sums[1], fb.create<arith::DivFOp>(fl, sums[0], count),
                fb.create<arith::DivFOp>(fl, sums[1], count)};
          })))
    return failure();

  // dx = rstd * (g dy - g sum(dy) / n - xhat * g sum(dy xhat) / n).
  bool hasScale = bool(op.getScale());
  SmallVector<Value> params{op.getMean(), op.getRstd(),
                            toTensor(b, loc, meanDy),
                            toTensor(b, loc, meanDyXhat)};
  if (hasScale)
    params.push_back(op.getScale());
  int64_t axis = getChannelAxis(op.getLayout(), type.getRank());
  Value dx = emitElementwise(
      b, op, type, ValueRange{op.getGradOutput(), op.getInput()}, params, axis,
      *elementwise, "batch_norm_grad",
      [&](OpBuilder &fb, Location fl, ArrayRef<Value> v) -> Value {
        // v: dy, x, mean, rstd, mean(dy), mean(dy xhat), [scale]
        Value xhat = emitNormalize(fb, fl, v[1], v[2], v[3], Value(), Value());
        Value meanDy = v[4];
        Value meanDyXhat = v[5];
        Value gdy = v[0];
        if (hasScale) {
          gdy = fb.create<arith::MulFOp>(fl, gdy, v[6]);
          meanDy = fb.create<arith::MulFOp>(fl, meanDy, v[6]);
          meanDyXhat = fb.create<arith::MulFOp>(fl, meanDyXhat, v[6]);
        }
        return emitNormGradInput(fb, fl, gdy, xhat, meanDyXhat, meanDy, v[3]);
      });
  rewriter.replaceOp(op,
                     {dx, toTensor(b, loc, dscale), toTensor(b, loc, dbias)});
  return success();
}

} // namespace

LogicalResult
cuda::lowerChannelReductionToGPU(RewriterBase &rewriter, Operation *op,
                                 const GPULoweringOptions &options) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](BiasAddGradOp o) {
        return lowerBiasAddGrad(rewriter, o, options);
      })
      .Case([&](BatchNormTrainingOp o) {
        return lowerBatchNormTraining(rewriter, o, options);
      })
      .Case([&](BatchNormGradOp o) {
        return lowerBatchNormGrad(rewriter, o, options);
      })
      .Default([](Operation *) { return failure(); });
}
