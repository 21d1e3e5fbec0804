//===- LowerGroupNormGrads.cpp - group/instance norm gradients on the GPU -===//
//
// Part of normfuse. group_norm_grad and instance_norm_grad (an instance
// norm is a group norm of one channel per group), NHWC and NCHW, static
// shapes, as three kernels:
//
// - `_group_sums`: a block per (image, group) adds g*dy and g*dy*xhat over
//   the group's elements (xhat = (x - mean) * rstd from the saved
//   statistics), by the block's threads and then shuffles and workgroup
//   memory, and writes the two sums;
// - `_dx`: an elementwise kernel, dx = rstd * (g*dy - mean(g*dy) - xhat *
//   mean(g*dy*xhat)) with the group's means (NormMath.h, the CPU's
//   formula);
// - `_param_sums`: a block per channel adds dy*xhat and dy over every
//   image and position, in a fixed order: dscale and dbias, deterministic
//   and without atomics.
//
// x and dy are read three times. This is the straightforward schedule that
// makes every group norm gradient run on the GPU; a tuned one (one pass for
// dx where a group fits a block, two-stage parameter sums as the row norms
// have) is a later step.
//
//===----------------------------------------------------------------------===//

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

/// Threads of every block of these kernels.
constexpr int64_t kBlockSize = 256;
/// The most blocks a grid has; blocks loop over the rest.
constexpr int64_t kMaxBlocks = 65535;

/// The geometry of a group norm's activation: N images of C channels at HW
/// positions, G groups of `perGroup` channels.
struct GroupGeometry {
  bool nhwc = true;
  int64_t n = 1, c = 1, hw = 1, groups = 1;
  int64_t perGroup() const { return c / groups; }
  /// Elements of one (image, group).
  int64_t groupElements() const { return perGroup() * hw; }
  int64_t total() const { return n * c * hw; }

  static GroupGeometry get(RankedTensorType x, Layout layout, int64_t groups) {
    GroupGeometry g;
    g.nhwc = layout == Layout::NHWC;
    int64_t rank = x.getRank(), axis = getChannelAxis(layout, rank);
    g.n = x.getDimSize(0);
    g.c = x.getDimSize(axis);
    for (int64_t d = 1; d < rank; ++d)
      if (d != axis)
        g.hw *= x.getDimSize(d);
    g.groups = groups > 0 ? groups : g.c;
    return g;
  }
};

/// Element `i` of group `grp` of image `img`: its flat offset and channel.
std::pair<Value, Value> groupElement(IndexMath &ix, const GroupGeometry &g,
                                     Value img, Value grp, Value i) {
  int64_t cpg = g.perGroup();
  if (g.nhwc) {
    Value channel = ix.add(ix.mul(grp, cpg), ix.rem(i, cpg));
    Value position = ix.add(ix.mul(img, g.hw), ix.div(i, cpg));
    return {ix.add(ix.mul(position, g.c), channel), channel};
  }
  Value channel = ix.add(ix.mul(grp, cpg), ix.div(i, g.hw));
  return {ix.add(ix.mul(ix.add(ix.mul(img, g.c), ix.mul(grp, cpg)), g.hw), i),
          channel};
}

/// A grid-stride loop of the block over [0, count) with `body(index)`;
/// block-uniform, so the body may hold barriers.
void forEachBlockItem(OpBuilder &b, Location loc, int64_t count,
                      llvm::function_ref<void(OpBuilder &, Value)> body) {
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value grid = b.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
  b.create<scf::ForOp>(loc, bid, indexConstant(b, loc, count), grid,
                       ValueRange{},
                       [&](OpBuilder &lb, Location ll, Value item, ValueRange) {
                         body(lb, item);
                         lb.create<scf::YieldOp>(ll);
                       });
}

/// The sums of `count` terms over the block's threads: thread t adds terms
/// t, t + blockSize, ... (`terms(index)` gives one value per sum), then the
/// block adds the threads' sums; the totals are in every thread.
SmallVector<Value>
blockSums(OpBuilder &b, Location loc, Value scratch, Type acc, Value count,
          unsigned numSums,
          llvm::function_ref<SmallVector<Value>(OpBuilder &, Value)> terms) {
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value zero = floatConstant(b, loc, 0.0, acc, 1);
  auto loop = b.create<scf::ForOp>(
      loc, tid, count, indexConstant(b, loc, kBlockSize),
      SmallVector<Value>(numSums, zero),
      [&](OpBuilder &lb, Location ll, Value i, ValueRange sums) {
        SmallVector<Value> t = terms(lb, i), next;
        for (unsigned s = 0; s < numSums; ++s)
          next.push_back(lb.create<arith::AddFOp>(ll, sums[s], t[s]));
        lb.create<scf::YieldOp>(ll, next);
      });
  SmallVector<Value> totals;
  for (Value partial : loop.getResults())
    totals.push_back(emitBlockSum(b, loc, partial, scratch, kBlockSize));
  return totals;
}

/// Stores `values` at `offsets` of `buffers` from thread 0 alone.
void storeFromThreadZero(OpBuilder &b, Location loc, ArrayRef<Value> values,
                         ArrayRef<Value> buffers, ArrayRef<Value> offsets) {
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid,
                                        indexConstant(b, loc, 0));
  b.create<scf::IfOp>(loc, first, [&](OpBuilder &tb, Location tl) {
    for (auto [v, buffer, offset] : llvm::zip(values, buffers, offsets))
      storeLanes(tb, tl, {v}, buffer, offset);
    tb.create<scf::YieldOp>(tl);
  });
}

template <typename GradOp>
LogicalResult lowerGroupNormGrad(RewriterBase &rewriter, GradOp op,
                                 int64_t numGroups) {
  auto xType = cast<RankedTensorType>(op.getInput().getType());
  for (Type t : op->getOperandTypes())
    if (!cast<RankedTensorType>(t).hasStaticShape())
      return failure();
  Location loc = op.getLoc();
  auto module = op->template getParentOfType<ModuleOp>();
  GroupGeometry g = GroupGeometry::get(xType, op.getLayout(), numGroups);
  Type acc = getAccumulationType(xType.getElementType());
  bool hasScale = bool(op.getScale());

  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
  auto flat = [&](Value tensor) {
    return flatten(b, loc, getBuffer(b, loc, tensor));
  };
  auto alloc = [&](Value result) {
    auto type = cast<RankedTensorType>(result.getType());
    return b.create<memref::AllocOp>(
        loc, MemRefType::get(type.getShape(), type.getElementType()));
  };
  Value dy = flat(op.getGradOutput()), x = flat(op.getInput());
  Value mean = flat(op.getMean()), rstd = flat(op.getRstd());
  Value scale = hasScale ? flat(op.getScale()) : Value();
  Value dxBuffer = alloc(op.getGradInput());
  Value dscaleBuffer = alloc(op.getGradScale());
  Value dbiasBuffer = alloc(op.getGradBias());
  Value dx = flatten(b, loc, dxBuffer), dscale = flatten(b, loc, dscaleBuffer),
        dbias = flatten(b, loc, dbiasBuffer);
  int64_t imageGroups = g.n * g.groups;
  Value sums =
      allocTemporary(b, loc, indexConstant(b, loc, 2 * imageGroups), acc);
  std::string base = kernelBaseName(op, op->getName().stripDialect());
  std::string schedule = "group-norm-grad block=" + std::to_string(kBlockSize);

  // The arguments every kernel takes: dy, x, mean, rstd, [scale], then its
  // own.
  SmallVector<Value> common{dy, x, mean, rstd};
  if (hasScale)
    common.push_back(scale);
  auto kernelFor = [&](llvm::StringRef what, ValueRange own) {
    SmallVector<Value> args(common);
    args.append(own.begin(), own.end());
    Kernel k = createKernel(module, loc, base + "_" + what.str(),
                            ValueRange(args).getTypes(), kBlockSize, schedule);
    return std::make_pair(k, args);
  };
  /// Per element of a kernel: g*dy (or dy), dy, xhat, from the element's
  /// offset, channel and (image, group).
  struct Terms {
    Value scaledDy, dy, xhat, rstd;
  };
  auto termsAt = [&](OpBuilder &kb, Kernel &k, Value offset, Value channel,
                     Value imageGroup) {
    Terms t;
    t.dy = loadLanes(kb, loc, k.arg(0), offset, 1, acc)[0];
    Value xv = loadLanes(kb, loc, k.arg(1), offset, 1, acc)[0];
    Value m = loadLanes(kb, loc, k.arg(2), imageGroup, 1, acc)[0];
    t.rstd = loadLanes(kb, loc, k.arg(3), imageGroup, 1, acc)[0];
    t.xhat = kb.create<arith::MulFOp>(loc, kb.create<arith::SubFOp>(loc, xv, m),
                                      t.rstd);
    t.scaledDy =
        hasScale
            ? kb.create<arith::MulFOp>(
                  loc, loadLanes(kb, loc, k.arg(4), channel, 1, acc)[0], t.dy)
            : t.dy;
    return t;
  };
  unsigned own = common.size();

  // 1. The two sums of each (image, group).
  auto [sumsKernel, sumsArgs] = kernelFor("group_sums", ValueRange{sums});
  {
    Kernel &k = sumsKernel;
    Value scratch = addWorkgroupBuffer(k, loc, kBlockSize / 32, acc);
    forEachBlockItem(k.body, loc, imageGroups, [&](OpBuilder &kb, Value ig) {
      IndexMath ix{kb, loc};
      Value img = ix.div(ig, g.groups), grp = ix.rem(ig, g.groups);
      SmallVector<Value> totals = blockSums(
          kb, loc, scratch, acc, ix.c(g.groupElements()), 2,
          [&](OpBuilder &lb, Value i) -> SmallVector<Value> {
            IndexMath li{lb, loc};
            auto [offset, channel] = groupElement(li, g, img, grp, i);
            Terms t = termsAt(lb, k, offset, channel, ig);
            return {t.scaledDy,
                    lb.create<arith::MulFOp>(loc, t.scaledDy, t.xhat)};
          });
      Value at = ix.mul(ig, 2);
      storeFromThreadZero(kb, loc, totals, {k.arg(own), k.arg(own)},
                          {at, ix.add(at, ix.c(1))});
    });
  }

  // 2. dx, elementwise.
  auto [dxKernel, dxArgs] = kernelFor("dx", ValueRange{sums, dx});
  {
    Kernel &k = dxKernel;
    OpBuilder &kb = k.body;
    IndexMath ix{kb, loc};
    Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    Value bid = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
    Value grid = kb.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
    Value start = ix.add(ix.mul(bid, kBlockSize), tid);
    Value step = kb.create<arith::MulIOp>(loc, grid, ix.c(kBlockSize));
    // (An empty group has no element to scale: no infinity in the source.)
    Value inverseCount = floatConstant(
        kb, loc, g.groupElements() > 0 ? 1.0 / double(g.groupElements()) : 0.0,
        acc, 1);
    kb.create<scf::ForOp>(
        loc, start, ix.c(g.total()), step, ValueRange{},
        [&](OpBuilder &lb, Location ll, Value e, ValueRange) {
          IndexMath li{lb, ll};
          Value channel =
              g.nhwc ? li.rem(e, g.c) : li.rem(li.div(e, g.hw), g.c);
          Value img = li.div(e, g.c * g.hw);
          Value ig =
              li.add(li.mul(img, g.groups), li.div(channel, g.perGroup()));
          Terms t = termsAt(lb, k, e, channel, ig);
          Value at = li.mul(ig, 2);
          Value sumDy = loadLanes(lb, ll, k.arg(own), at, 1, acc)[0];
          Value sumDyXhat =
              loadLanes(lb, ll, k.arg(own), li.add(at, li.c(1)), 1, acc)[0];
          Value v = emitNormGradInput(
              lb, ll, t.scaledDy, t.xhat,
              lb.create<arith::MulFOp>(ll, sumDyXhat, inverseCount),
              lb.create<arith::MulFOp>(ll, sumDy, inverseCount), t.rstd);
          storeLanes(lb, ll, {v}, k.arg(own + 1), e);
          lb.create<scf::YieldOp>(ll);
        });
  }

  // 3. dscale and dbias: a block per channel over every image and position.
  auto [paramKernel, paramArgs] =
      kernelFor("param_sums", ValueRange{dscale, dbias});
  {
    Kernel &k = paramKernel;
    Value scratch = addWorkgroupBuffer(k, loc, kBlockSize / 32, acc);
    forEachBlockItem(k.body, loc, g.c, [&](OpBuilder &kb, Value channel) {
      IndexMath ix{kb, loc};
      Value grp = ix.div(channel, g.perGroup());
      SmallVector<Value> totals = blockSums(
          kb, loc, scratch, acc, ix.c(g.n * g.hw), 2,
          [&](OpBuilder &lb, Value j) -> SmallVector<Value> {
            IndexMath li{lb, loc};
            Value img = li.div(j, g.hw), position = li.rem(j, g.hw);
            Value offset =
                g.nhwc
                    ? li.add(li.mul(li.add(li.mul(img, g.hw), position), g.c),
                             channel)
                    : li.add(li.mul(li.add(li.mul(img, g.c), channel), g.hw),
                             position);
            Terms t = termsAt(lb, k, offset, channel,
                              li.add(li.mul(img, g.groups), grp));
            return {lb.create<arith::MulFOp>(loc, t.dy, t.xhat), t.dy};
          });
      storeFromThreadZero(kb, loc, totals, {k.arg(own), k.arg(own + 1)},
                          {channel, channel});
    });
  }

  // The launches; none for an empty grid.
  auto launchOver = [&](Kernel &k, SmallVector<Value> &args, int64_t items) {
    if (items > 0)
      launch(b, loc, k.func, indexConstant(b, loc, std::min(items, kMaxBlocks)),
             kBlockSize, args);
  };
  launchOver(sumsKernel, sumsArgs, imageGroups);
  launchOver(dxKernel, dxArgs, llvm::divideCeil(g.total(), kBlockSize));
  launchOver(paramKernel, paramArgs, g.c);
  rewriter.replaceOp(op, {toTensor(b, loc, dxBuffer),
                          toTensor(b, loc, dscaleBuffer),
                          toTensor(b, loc, dbiasBuffer)});
  return success();
}

} // namespace

LogicalResult cuda::lowerGroupNormGradToGPU(RewriterBase &rewriter,
                                            Operation *op) {
  if (auto grad = dyn_cast<GroupNormGradOp>(op))
    return lowerGroupNormGrad(rewriter, grad, grad.getNumGroups());
  if (auto grad = dyn_cast<InstanceNormGradOp>(op))
    return lowerGroupNormGrad(rewriter, grad, 0);
  return failure();
}
