//===- LowerGroupNormGrads.cpp - group/instance norm gradients on the GPU -===//
//
// Part of normfuse. group_norm_grad and instance_norm_grad (an instance
// norm is a group norm of one channel per group), NHWC and NCHW, as four
// kernels (GroupNormGradSchedule), dynamic sizes their index arguments:
//
// - `_sums`: the sums of dy and dy*xhat (xhat = (x - mean) * rstd from the
//   saved statistics) per (image, channel), the per-channel reduction of
//   BatchNorm's gradient kept per image (ChannelSums.h): partial sums, a
//   block per part of an image;
// - `_totals`: each (image, channel)'s partial sums added up, many warps
//   a channel (ChannelSums.h, emitPartialTotals);
// - `_finish`: a thread per (image, group) adds the totals of the group's
//   channels times their scale (the group's sums of g*dy and g*dy*xhat);
//   a thread per channel adds them over the images (dscale and dbias).
//   Fixed orders: deterministic, no atomics;
// - `_dx`: elementwise, dx = rstd * (g*dy - mean(g*dy) - xhat *
//   mean(g*dy*xhat)) with the group's means (NormMath.h, the CPU's
//   formula), in vectors.
//
// dy and x are read twice (the sums, dx) and dx written once, whatever the
// batch and group sizes: the first kernel's blocks are shared among the
// images and cut each image's positions into parts, so batch 1 and few
// large groups fill the GPU as well as many small ones.
//
//===----------------------------------------------------------------------===//

#include "ChannelSums.h"
#include "GroupNormGradOneKernel.h"
#include "KernelBuilder.h"
#include "LowerToGPU.h"
#include "normfuse/Codegen/Common/ActivationMath.h"
#include "normfuse/Codegen/Common/BufferBuilders.h"
#include "normfuse/Codegen/Common/NormMath.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

/// The geometry of a group norm's activation: N images of C channels at HW
/// positions, G groups of `perGroup` channels; host index values, constants
/// where static.
struct GroupGeometry {
  bool nhwc = true;
  Value n, c, hw, groups, perGroup;
  /// Elements of one (image, group), (image, group)s, and all elements.
  Value groupElements, imageGroups, total;

  /// Of the buffer `x`; `groups` 0 for an instance norm (a group per
  /// channel).
  static GroupGeometry get(OpBuilder &b, Location loc, Value x, Layout layout,
                           int64_t groups) {
    IndexMath im{b, loc};
    GroupGeometry g;
    g.nhwc = layout == Layout::NHWC;
    int64_t rank = cast<MemRefType>(x.getType()).getRank();
    int64_t axis = getChannelAxis(layout, rank);
    g.n = getNumElements(b, loc, x, 0, 1);
    g.c = getNumElements(b, loc, x, axis, axis + 1);
    g.hw = im.c(1);
    for (int64_t d = 1; d < rank; ++d)
      if (d != axis)
        g.hw = im.product(g.hw, getNumElements(b, loc, x, d, d + 1));
    g.groups = groups > 0 ? im.c(groups) : g.c;
    g.perGroup = groups > 0 ? b.createOrFold<arith::DivUIOp>(loc, g.c, g.groups)
                            : im.c(1);
    g.groupElements = im.product(g.perGroup, g.hw);
    g.imageGroups = im.product(g.n, g.groups);
    g.total = im.product(im.product(g.n, g.c), g.hw);
    return g;
  }
};

template <typename GradOp>
LogicalResult lowerGroupNormGrad(RewriterBase &rewriter, GradOp op,
                                 int64_t numGroups,
                                 const GPULoweringOptions &options) {
  auto xType = cast<RankedTensorType>(op.getInput().getType());
  Location loc = op.getLoc();
  auto module = op->template getParentOfType<ModuleOp>();
  Type acc = getAccumulationType(xType.getElementType());
  bool hasScale = bool(op.getScale());

  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
  IndexMath hm{b, loc};
  Value xBuffer = getBuffer(b, loc, op.getInput());
  GroupGeometry g =
      GroupGeometry::get(b, loc, xBuffer, op.getLayout(), numGroups);
  // 1. The partial sums of dy*xhat (0) and dy (1) per (image, channel).
  ChannelSums cs = channelSumsOf(b, loc, op.getInput(), op.getLayout(), 2,
                                 /*perImage=*/true);
  // The schedule written on the op first (chooseGpuSchedules).
  FailureOr<GroupNormGradSchedule> schedule = readGroupNormGradSchedule(op);
  if (failed(schedule))
    return failure();
  const GroupNormGradSchedule &s = *schedule;
  auto flat = [&](Value tensor) {
    return flatten(b, loc, getBuffer(b, loc, tensor));
  };
  auto alloc = [&](Value result) -> Value {
    auto type = cast<RankedTensorType>(result.getType());
    auto memref = MemRefType::get(type.getShape(), type.getElementType());
    if (type.getRank() == 1) // (C)
      return b.create<memref::AllocOp>(
          loc, memref,
          memref.hasStaticShape() ? ValueRange() : ValueRange{g.c});
    return allocBuffer(b, loc, type, xBuffer);
  };
  Value dy = flat(op.getGradOutput()), x = flatten(b, loc, xBuffer);
  Value mean = flat(op.getMean()), rstd = flat(op.getRstd());
  Value scale = hasScale ? flat(op.getScale()) : Value();
  Value dxBuffer = alloc(op.getGradInput());
  Value dscaleBuffer = alloc(op.getGradScale());
  Value dbiasBuffer = alloc(op.getGradBias());
  Value dx = flatten(b, loc, dxBuffer), dscale = flatten(b, loc, dscaleBuffer),
        dbias = flatten(b, loc, dbiasBuffer);
  auto replace = [&] {
    rewriter.replaceOp(op, {toTensor(b, loc, dxBuffer),
                            toTensor(b, loc, dscaleBuffer),
                            toTensor(b, loc, dbiasBuffer)});
  };
  // No channels: every result is empty, no kernel (with a dynamic channel
  // count, the launches see that their grids are empty).
  if (constantOr(g.c) == 0) {
    replace();
    return success();
  }
  llvm::StringRef what = op->getName().stripDialect();
  std::string base = kernelBaseName(op, what);
  /// The (image, group) of a channel in kernel `k`: where its mean, rstd
  /// and sums are.
  auto imageGroup = [g](Kernel &k, OpBuilder &ib, Location il, Value image,
                        Value channel) {
    IndexMath ix{ib, il};
    return ix.add(ix.mul(image, k.size(ib, il, g.groups)),
                  ix.div(channel, k.size(ib, il, g.perGroup)));
  };

  // One launch where the device holds its grid (NHWC of a known channel
  // count): the kernels below get grids of 0 blocks then.
  Value fourKernels;
  if (s.oneKernel.threadsPerRow && cs.dims.channelsLast() &&
      constantOr(g.groups) > 0) {
    GroupNormGradBuffers in;
    in.dy = dy;
    in.x = x;
    in.mean = mean;
    in.rstd = rstd;
    in.scale = scale;
    in.dx = dx;
    in.dscale = dscale;
    in.dbias = dbias;
    in.images = g.n;
    in.spatial = g.hw;
    in.channels = constantOr(g.c);
    in.groups = constantOr(g.groups);
    in.acc = acc;
    fourKernels = emitGroupNormGradOneKernel(b, loc, module, base, in,
                                             s.oneKernel, options.target);
    cs.gridFactor = fourKernels;
  }
  auto scaled = [&](Value grid) {
    return fourKernels ? hm.product(grid, fourKernels) : grid;
  };
  cs.inputs = {dy, x};
  cs.perChannel = {mean, rstd};
  cs.paramIndex = imageGroup;
  PartialSums partials = emitPartialChannelSums(
      b, op, what, cs, s.sums, options.target,
      [](OpBuilder &fb, Location fl, ArrayRef<Value> in, ArrayRef<Value> p) {
        Value xhat = emitNormalize(fb, fl, in[1], p[0], p[1], Value(), Value());
        return SmallVector<Value>{
            fb.create<arith::MulFOp>(fl, in[0], xhat).getResult(), in[0]};
      });

  // 2. Each (image, channel)'s totals of its partial sums, many warps a
  // channel; then the group sums (of g*dy and g*dy*xhat) and the parameter
  // gradients from those totals.
  Value totals = emitPartialTotals(b, op, what, cs, partials, s.sums.totals);
  Value groupSums =
      allocTemporary(b, loc, hm.product(hm.c(2), g.imageGroups), acc);
  Value finishItems = b.createOrFold<arith::AddIOp>(loc, g.imageGroups, g.c);
  SmallVector<Value> finishArgs{totals};
  if (hasScale)
    finishArgs.push_back(scale);
  finishArgs.append({groupSums, dscale, dbias});
  int64_t finishBlock = s.finishBlockSize;
  Kernel finish = createKernel(module, loc, base + "_finish",
                               ValueRange(finishArgs).getTypes(), finishBlock,
                               "group-norm-grad-finish block=" +
                                   std::to_string(finishBlock));
  {
    OpBuilder &kb = finish.body;
    IndexMath ix{kb, loc};
    unsigned next = hasScale ? 2 : 1;
    Value kScale = hasScale ? finish.arg(1) : Value();
    Value kGroupSums = finish.arg(next), kDscale = finish.arg(next + 1),
          kDbias = finish.arg(next + 2);
    Value item = ix.add(
        ix.mul(kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x), finishBlock),
        kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x));
    /// The sums over i < `count` of totals (i, kk) for kk = 0, 1 in order,
    /// with `at(i, kk)` the total's index and `weight(i)` its factor.
    auto addTotals =
        [&](OpBuilder &ob, Location ol, Value count,
            llvm::function_ref<Value(OpBuilder &, Value, int64_t)> at,
            llvm::function_ref<Value(OpBuilder &, Value)> weight) {
          auto loop = ob.create<scf::ForOp>(
              ol, indexConstant(ob, ol, 0), finish.size(ob, ol, count),
              indexConstant(ob, ol, 1), zeros(ob, ol, acc, 2),
              [&](OpBuilder &fb, Location fl, Value i, ValueRange sums) {
                Value w = weight ? weight(fb, i) : Value();
                SmallVector<Value> added;
                for (int64_t kk = 0; kk < 2; ++kk) {
                  Value v = fb.create<memref::LoadOp>(fl, finish.arg(0),
                                                      at(fb, i, kk));
                  if (w)
                    v = fb.create<arith::MulFOp>(fl, w, v);
                  added.push_back(fb.create<arith::AddFOp>(fl, sums[kk], v));
                }
                fb.create<scf::YieldOp>(fl, added);
              });
          return SmallVector<Value>(loop.getResults());
        };
    Value imageGroups = finish.size(kb, loc, g.imageGroups);
    Value isGroup = kb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                             item, imageGroups);
    Value isChannel =
        kb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, item,
                                 finish.size(kb, loc, finishItems));
    kb.create<scf::IfOp>(
        loc, isGroup,
        [&](OpBuilder &tb, Location tl) {
          // (image, group): its channels' sums, each times its scale.
          IndexMath tx{tb, tl};
          Value groups = finish.size(tb, tl, g.groups);
          Value img = tx.div(item, groups), grp = tx.rem(item, groups);
          SmallVector<Value> sums = addTotals(
              tb, tl, g.perGroup,
              [&](OpBuilder &pb, Value i, int64_t kk) {
                IndexMath px{pb, tl};
                Value cpg = finish.size(pb, tl, g.perGroup);
                return totalsIndex(finish, pb, tl, cs, img,
                                   px.madd(grp, cpg, i), kk);
              },
              [&](OpBuilder &wb, Value i) -> Value {
                if (!hasScale)
                  return Value();
                IndexMath wx{wb, tl};
                Value cpg = finish.size(wb, tl, g.perGroup);
                return loadLanes(wb, tl, kScale, wx.madd(grp, cpg, i), 1,
                                 acc)[0];
              });
          // Stored as (sum g*dy, sum g*dy*xhat).
          Value at = tx.mul(item, 2);
          storeLanes(tb, tl, {sums[1], sums[0]}, kGroupSums, at);
          tb.create<scf::YieldOp>(tl);
        },
        [&](OpBuilder &eb, Location el) {
          eb.create<scf::IfOp>(el, isChannel, [&](OpBuilder &tb, Location tl) {
            // A channel: its sums over every image.
            IndexMath tx{tb, tl};
            Value channel = tx.sub(item, imageGroups);
            SmallVector<Value> sums = addTotals(
                tb, tl, g.n,
                [&](OpBuilder &pb, Value i, int64_t kk) {
                  return totalsIndex(finish, pb, tl, cs, i, channel, kk);
                },
                nullptr);
            storeLanes(tb, tl, {sums[0]}, kDscale, channel);
            storeLanes(tb, tl, {sums[1]}, kDbias, channel);
            tb.create<scf::YieldOp>(tl);
          });
          eb.create<scf::YieldOp>(el);
        });
  }

  // 3. dx, elementwise: vectors of a position's channels (NHWC) or of a
  // channel's positions (NCHW).
  SmallVector<Value> dxArgs{dy, x, mean, rstd};
  if (hasScale)
    dxArgs.push_back(scale);
  dxArgs.append({groupSums, dx});
  const PointwiseSchedule &ps = s.dx;
  int64_t vw = ps.vectorWidth, block = ps.blockSize;
  Kernel dxKernel =
      createKernel(module, loc, base + "_dx", ValueRange(dxArgs).getTypes(),
                   block, "group-norm-grad-dx " + ps.str());
  dxKernel.func->setAttr(kMinBlocksAttr,
                         b.getI64IntegerAttr(ps.minBlocksPerMultiprocessor));
  {
    Kernel &k = dxKernel;
    OpBuilder &kb = k.body;
    IndexMath ix{kb, loc};
    unsigned next = hasScale ? 5 : 4;
    Value kScale = hasScale ? k.arg(4) : Value();
    Value kGroupSums = k.arg(next), kDx = k.arg(next + 1);
    Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    Value bid = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
    Value grid = kb.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
    Value start = ix.mul(ix.add(ix.mul(bid, block), tid), vw);
    Value step = kb.create<arith::MulIOp>(loc, grid, ix.c(block * vw));
    // (An empty group has no element to scale: no infinity in the source.)
    int64_t groupElements = constantOr(g.groupElements);
    Value inverseCount;
    if (groupElements >= 0) {
      inverseCount = floatConstant(
          kb, loc, groupElements > 0 ? 1.0 / double(groupElements) : 0.0, acc,
          1);
    } else {
      Value n = k.size(kb, loc, g.groupElements);
      Value empty =
          kb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, n, ix.c(0));
      Value inverse = kb.create<arith::DivFOp>(
          loc, floatConstant(kb, loc, 1.0, acc, 1),
          kb.create<arith::UIToFPOp>(
              loc, acc,
              kb.create<arith::IndexCastUIOp>(loc, kb.getI64Type(), n)));
      inverseCount = kb.create<arith::SelectOp>(
          loc, empty, floatConstant(kb, loc, 0.0, acc, 1), inverse);
    }
    Value channels = k.size(kb, loc, g.c);
    Value imageElements = k.size(kb, loc, hm.product(g.c, g.hw));
    Value spatial = k.size(kb, loc, g.hw);
    kb.create<scf::ForOp>(
        loc, start, k.size(kb, loc, g.total), step, ValueRange{},
        [&](OpBuilder &lb, Location ll, Value e, ValueRange) {
          IndexMath li{lb, ll};
          SmallVector<Value> dyLanes = loadLanes(lb, ll, k.arg(0), e, vw, acc);
          SmallVector<Value> xLanes = loadLanes(lb, ll, k.arg(1), e, vw, acc);
          // The first lane's channel and image; NHWC lanes are consecutive
          // channels, NCHW lanes share one.
          Value channel, img;
          if (g.nhwc) {
            channel = li.rem(e, channels);
            img = li.div(e, imageElements);
          } else {
            Value key = li.div(e, spatial);
            channel = li.rem(key, channels);
            img = li.div(key, channels);
          }
          SmallVector<Value> scales;
          if (hasScale)
            scales =
                g.nhwc ? loadLanes(lb, ll, kScale, channel, vw, acc)
                       : SmallVector<Value>(
                             vw, loadLanes(lb, ll, kScale, channel, 1, acc)[0]);
          // What the lanes of one (image, group) share.
          struct GroupValues {
            Value mean, rstd, meanDy, meanDyXhat;
          };
          auto groupValues = [&](Value laneChannel) {
            Value ig = imageGroup(k, lb, ll, img, laneChannel);
            Value at = li.mul(ig, 2);
            GroupValues v;
            v.mean = loadLanes(lb, ll, k.arg(2), ig, 1, acc)[0];
            v.rstd = loadLanes(lb, ll, k.arg(3), ig, 1, acc)[0];
            v.meanDy = lb.create<arith::MulFOp>(
                ll, loadLanes(lb, ll, kGroupSums, at, 1, acc)[0], inverseCount);
            v.meanDyXhat = lb.create<arith::MulFOp>(
                ll,
                loadLanes(lb, ll, kGroupSums, li.add(at, li.c(1)), 1, acc)[0],
                inverseCount);
            return v;
          };
          // Lanes share their (image, group) in runs of `run`: all of them
          // for NCHW and where a group holds the vector, a group's worth
          // where the vector holds whole groups.
          // (A dynamic channel count gives NHWC scalars: runs of 1.)
          int64_t cpg = constantOr(g.perGroup);
          int64_t run = !g.nhwc || (cpg > 0 && cpg % vw == 0) ? vw
                        : cpg > 0 && vw % cpg == 0            ? cpg
                                                              : 1;
          GroupValues v;
          SmallVector<Value> out;
          for (int64_t l = 0; l < vw; ++l) {
            if (l % run == 0)
              v = groupValues(l ? li.add(channel, li.c(l)) : channel);
            Value xhat = emitNormalize(lb, ll, xLanes[l], v.mean, v.rstd,
                                       Value(), Value());
            Value gdy =
                hasScale ? lb.create<arith::MulFOp>(ll, scales[l], dyLanes[l])
                         : dyLanes[l];
            out.push_back(emitNormGradInput(lb, ll, gdy, xhat, v.meanDyXhat,
                                            v.meanDy, v.rstd));
          }
          storeLanes(lb, ll, out, kDx, e);
          lb.create<scf::YieldOp>(ll);
        });
  }

  // The launches (the sums' is emitted above); none for an empty grid.
  // (Where the unscaled grids are not empty: a launch plan takes no
  // condition from what the device holds.)
  Value finishGrid = hm.ceilDiv(finishItems, finishBlock);
  launchUnlessEmpty(b, loc, finish, scaled(finishGrid), finishBlock, finishArgs,
                    finishGrid);
  Value dxGrid = b.createOrFold<arith::MinUIOp>(
      loc, hm.ceilDiv(g.total, block * vw), hm.c(ps.maxBlocks));
  launchUnlessEmpty(b, loc, dxKernel, scaled(dxGrid), block, dxArgs, dxGrid);
  replace();
  return success();
}

} // namespace

LogicalResult cuda::lowerGroupNormGradToGPU(RewriterBase &rewriter,
                                            Operation *op,
                                            const GPULoweringOptions &options) {
  if (auto grad = dyn_cast<GroupNormGradOp>(op))
    return lowerGroupNormGrad(rewriter, grad, grad.getNumGroups(), options);
  if (auto grad = dyn_cast<InstanceNormGradOp>(op))
    return lowerGroupNormGrad(rewriter, grad, 0, options);
  return failure();
}
