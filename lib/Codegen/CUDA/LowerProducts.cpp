//===- LowerProducts.cpp - matmul and convolutions as GPU kernels -*- C++ -*-=//
//
// Part of normfuse. nf.matmul, nf.conv2d and the two conv2d gradients
// become one tiled kernel each (TiledProductSchedule in Schedule.h): a
// matrix product C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] whose operand
// elements are gathered from the op's buffers as the tiles are loaded.
//
//   op                      M              N              K
//   matmul                  rows           columns        the inner size
//   conv2d                  N * OH * OW    O              KH * KW * I
//   conv2d_backprop_input   N * H * W      I              KH * KW * O
//   conv2d_backprop_filter  O              KH * KW * I    N * OH * OW
//
// (the K and N orders of the filter follow its layout: OHWI for NHWC, OIHW
// for NCHW, so that the filter's own order is contiguous). A convolution's
// padding, and a transposed gradient's taps that fall between strides, load
// as zeros. Products accumulate in f32 (f64 for f64 data) with fused
// multiply-adds; f16/bf16 are widened on load and narrowed on the store. An
// nf.fused matmul or conv2d applies its pointwise epilogue to each sum
// before the store. Sizes that are static are constants in the kernel; the
// others (dynamic dimensions) are its trailing index arguments, computed on
// the host.
//
//===----------------------------------------------------------------------===//

#include "LowerToGPU.h"
#include "Products.h"
#include "normfuse/Codegen/Common/BufferBuilders.h"
#include "normfuse/Codegen/Common/ConvParams.h"
#include "normfuse/Codegen/Common/FusedGroups.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>
#include <tuple>

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

Value cuda::lessThan(OpBuilder &b, Location loc, Value x, Value bound) {
  if (auto k = getConstantIntValue(bound))
    bound = indexConstant(b, loc, *k);
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, x, bound);
}

SmallVector<Value> ProductKernel::applyEpilogue(OpBuilder &b, Location loc,
                                                Value offset, Value col,
                                                ValueRange sums) const {
  int64_t width = sums.size();
  SmallVector<Value> v(sums);
  for (auto [step, arg] : llvm::zip(epilogue, stepArgs)) {
    SmallVector<Value> operands(width);
    if (arg) {
      // A bias runs along the columns (the channels).
      Value at = step.kind == PointwiseStepKind::BiasAdd ? col : offset;
      operands = loadLanes(b, loc, arg, at, width, acc);
    }
    for (int64_t l = 0; l < width; ++l)
      v[l] = applyPointwiseStep(b, loc, step, v[l], operands[l], 1,
                                Exp2Form::MathOp);
  }
  return v;
}

TileOrigin cuda::tileOrigin(IndexMath &im, Value t, Value tilesM, Value tilesN,
                            const TiledProductSchedule &s) {
  Value batchTiles = im.product(tilesM, tilesN);
  Value inBatch = im.rem(t, batchTiles);
  // Groups of tileGroupRows rows of tiles (fewer in the last group), each
  // walked column by column: the blocks running at once share the panels
  // of A and B they read in L2.
  Value groupTiles = im.mul(tilesN, s.tileGroupRows);
  Value firstRow = im.mul(im.div(inBatch, groupTiles), s.tileGroupRows);
  Value rows = im.b.createOrFold<arith::MinUIOp>(
      im.loc, im.sub(tilesM, firstRow), im.c(s.tileGroupRows));
  Value inGroup = im.rem(inBatch, groupTiles);
  Value mTile = im.add(firstRow, im.rem(inGroup, rows));
  Value nTile = im.div(inGroup, rows);
  return {im.div(t, batchTiles), im.mul(mTile, s.tileM),
          im.mul(nTile, s.tileN)};
}

void ProductKernel::store(OpBuilder &b, Location loc, Value batch, Value row,
                          Value col, ValueRange sums) const {
  IndexMath im{b, loc};
  Value inside = im.both(lessThan(b, loc, row, sizes[kM]),
                         lessThan(b, loc, col, sizes[kN]));
  b.create<scf::IfOp>(loc, inside, [&](OpBuilder &sb, Location sl) {
    Value offset = product.store(sb, sl, sizes, batch, row, col).offset;
    storeLanes(sb, sl, applyEpilogue(sb, sl, offset, col, sums), c, offset);
    sb.create<scf::YieldOp>(sl);
  });
}

namespace {

/// Launches the second kernel of a split K (schedule `s`) into `splits`
/// ranges (on the host; a constant, or computed at launch, when the
/// kernel runs only where it is over 1): each thread adds
/// `s.finish.vectorWidth` consecutive result elements' f32 partial sums
/// from `partials` ([splits][batch][M][N]) slice by slice, in order (the
/// same bits on every run), and stores them through the epilogue into
/// `result`.
void emitSplitSum(OpBuilder &b, Operation *op, const Product &p,
                  ArrayRef<PointwiseStep> epilogue,
                  const TiledProductSchedule &s, Value splits, Value partials,
                  Value result, ArrayRef<Value> epilogueArgs,
                  ArrayRef<Value> sizes, Type acc, llvm::StringRef name) {
  Location loc = op->getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  const PointwiseSchedule &f = s.finish;
  SmallVector<Value> args{partials, result};
  args.append(epilogueArgs.begin(), epilogueArgs.end());
  std::optional<int64_t> fixed = getConstantIntValue(splits);
  // Split at launch into one range (known already): the product kernel
  // stores the result itself.
  bool atLaunch = s.splitKMax > 0;
  if (atLaunch && fixed && *fixed <= 1)
    return;
  Kernel k = createKernel(
      module, loc, kernelBaseName(op, name) + "_split_sum",
      ValueRange(args).getTypes(), f.blockSize,
      "split-k-sum splits=" +
          (fixed ? std::to_string(*fixed) : std::string("at-launch")) + " " +
          f.str());
  k.func->setAttr(kMinBlocksAttr,
                  b.getI64IntegerAttr(f.minBlocksPerMultiprocessor));
  ProductKernel pk{p,  k,   Value(), Value(), k.arg(1), {}, epilogue,
                   {}, acc, {},      {},      {},       {}};
  unsigned next = 2;
  for (const PointwiseStep &step : epilogue)
    pk.stepArgs.push_back(step.operand ? k.arg(next++) : Value());
  for (Value host : sizes)
    pk.sizes.push_back(k.size(k.body, loc, host));
  Value kSplits = k.size(k.body, loc, splits);

  OpBuilder &kb = k.body;
  IndexMath im{kb, loc};
  ArrayRef<Value> z = pk.sizes;
  int64_t width = f.vectorWidth;
  Value elements = im.product(z[kBatch], im.product(z[kM], z[kN]));
  Value vectors = im.div(elements, width);
  Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value grid = kb.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
  Value first = im.madd(bid, f.blockSize, tid);
  Value stride = im.mul(grid, f.blockSize);
  kb.create<scf::ForOp>(
      loc, first, vectors, stride, ValueRange{},
      [&](OpBuilder &lb, Location ll, Value v, ValueRange) {
        IndexMath lm{lb, ll};
        Value dense = lm.mul(v, width);
        SmallVector<Value> sums =
            loadLanes(lb, ll, k.arg(0), dense, width, acc);
        auto addSlice = [&](OpBuilder &ab, Location al, Value r,
                            SmallVector<Value> &into) {
          IndexMath am{ab, al};
          SmallVector<Value> more = loadLanes(
              ab, al, k.arg(0), am.madd(elements, r, dense), width, acc);
          for (int64_t l = 0; l < width; ++l)
            into[l] = ab.create<arith::AddFOp>(al, into[l], more[l]);
        };
        if (fixed) {
          for (int64_t r = 1; r < *fixed; ++r)
            addSlice(lb, ll, lm.c(r), sums);
        } else {
          // Slice by slice in order, as unrolled.
          auto slices = lb.create<scf::ForOp>(
              ll, lm.c(1), kSplits, lm.c(1), sums,
              [&](OpBuilder &sb, Location sl, Value r, ValueRange carried) {
                SmallVector<Value> next(carried);
                addSlice(sb, sl, r, next);
                sb.create<scf::YieldOp>(sl, next);
              });
          sums.assign(slices.getResults().begin(), slices.getResults().end());
        }
        Value col = lm.rem(dense, z[kN]);
        Value rows = lm.div(dense, z[kN]);
        pk.store(lb, ll, lm.div(rows, z[kM]), lm.rem(rows, z[kM]), col, sums);
        lb.create<scf::YieldOp>(ll);
      });

  IndexMath hm{b, loc};
  Value hostVectors = hm.div(
      hm.product(sizes[kBatch], hm.product(sizes[kM], sizes[kN])), width);
  Value blocks = b.createOrFold<arith::MinUIOp>(
      loc, hm.ceilDiv(hostVectors, f.blockSize), hm.c(f.maxBlocks));
  if (!atLaunch) {
    launchUnlessEmpty(b, loc, k, blocks, f.blockSize, args, hostVectors);
    return;
  }
  // Split at launch into one range, the product kernel stored the result:
  // a grid of no blocks, which the launch plan skips (the count may come
  // from the blocks the device holds, which a grid may follow and a branch
  // may not).
  blocks = b.create<arith::SelectOp>(
      loc,
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ugt, splits, hm.c(1)),
      blocks, hm.c(0));
  launch(b, loc, k, blocks, f.blockSize, args);
}

/// Marks product kernel `k` for 32-bit index arithmetic where every offset
/// it computes (`p.offsetBound`, times `copies` for split K's partial sums)
/// stays under 2^31 and it takes no index arguments.
void markIndex32(Kernel &k, const Product &p, int64_t copies) {
  constexpr int64_t kLimit = (int64_t(1) << 31) - 1;
  if (p.offsetBound < 0 || !k.sizeParameters.empty() ||
      p.offsetBound > kLimit / std::max<int64_t>(1, copies))
    return;
  k.func->setAttr(
      kIndexBitsAttr,
      IntegerAttr::get(IntegerType::get(k.func->getContext(), 64), 32));
}

/// Launches the tiled kernel of `p` named after `op` and `name`, under the
/// schedule written on `scheduled` (the product op), with the pointwise
/// `epilogue` (whose operands are the outer tensors `epilogueOperands`,
/// one per step or null) applied before the store; returns the result
/// tensor, or failure (with a diagnostic) where `scheduled` has no
/// schedule.
/// The schedule a product kernel runs under: clusters share B's tiles by
/// TMA loads, so where the operands have no tensor maps (`maps` false)
/// the blocks run alone (a warp-specialized kernel's producer then stages
/// by cp.async).
TiledProductSchedule kernelSchedule(TiledProductSchedule ks, bool maps) {
  ks.multicast = ks.multicast && ks.warpSpecialized && maps;
  return ks;
}

/// What `p` accumulates in: f32 (f64 for f64 operands or an f64 result).
Type accumulationOf(const Product &p) {
  Type acc = getAccumulationType(getElementTypeOrSelf(p.a.getType()));
  Type storage = getAccumulationType(p.resultType.getElementType());
  return storage.getIntOrFloatBitWidth() > acc.getIntOrFloatBitWidth() ? storage
                                                                       : acc;
}

/// What the schedule of `p` is chosen from and checked against: its sizes
/// where static (those its SizesFn builds, on buffers of its operands'
/// types in a scratch block), its types and its operands' layouts.
ProductShape shapeOf(const Product &p, bool allowTf32, Location loc) {
  Block scratch;
  auto bufferOf = [&](Value v) {
    auto type = cast<ShapedType>(v.getType());
    return scratch.addArgument(
        MemRefType::get(type.getShape(), type.getElementType()), loc);
  };
  Value a = bufferOf(p.a), b = bufferOf(p.b);
  OpBuilder sb(loc.getContext());
  sb.setInsertionPointToStart(&scratch);
  SmallVector<Value> sizes = p.sizes(sb, loc, a, b).kernel;
  Type operandElement = getElementTypeOrSelf(p.a.getType());
  // The tensor-core kernel stages operands with consecutive elements along
  // one of their dimensions, and accumulates in f32.
  auto staged = [](const OperandLayout &l) {
    return l.along != OperandLayout::Runs::None;
  };
  bool tensorCoreOperands =
      staged(p.layoutA) && staged(p.layoutB) && accumulationOf(p).isF32() &&
      getElementTypeOrSelf(p.b.getType()) == operandElement;
  // (Channels-last operands that store the result another way make its
  // columns not consecutive: the split K's finish takes that too.)
  bool consecutiveColumns =
      p.consecutiveColumns && !(p.channelsLast && p.channelsLast->store);
  return {constantOr(sizes[kBatch]),
          constantOr(sizes[kM]),
          constantOr(sizes[kN]),
          constantOr(sizes[kK]),
          operandElement,
          p.resultType.getElementType(),
          tensorCoreOperands,
          consecutiveColumns,
          allowTf32};
}

FailureOr<Value> emitProduct(OpBuilder &b, Operation *op, Operation *scheduled,
                             const Product &inPlace,
                             ArrayRef<PointwiseStep> epilogue,
                             const GPULoweringOptions &options,
                             llvm::StringRef name) {
  Location loc = op->getLoc();
  Product p = inPlace;
  auto module = op->getParentOfType<ModuleOp>();
  Type storage = p.resultType.getElementType();
  Type acc = accumulationOf(p);
  // The schedule written on the op first (chooseGpuSchedules).
  FailureOr<TiledProductSchedule> schedule =
      readTiledProductSchedule(scheduled);
  if (failed(schedule))
    return failure();
  const TiledProductSchedule &s = *schedule;
  Value aBuffer = getBuffer(b, loc, p.a), bBuffer = getBuffer(b, loc, p.b);
  ProductSizes hostSizes = p.sizes(b, loc, aBuffer, bBuffer);
  ArrayRef<Value> sizes = hostSizes.kernel;
  // The tensor-core kernel reads an NCHW convolution that allows it from
  // channels-last copies of its operands (the schedule is the same).
  if (p.channelsLast && s.kind == TiledProductSchedule::Kind::TensorCore) {
    const ChannelsLastOperands &cl = *p.channelsLast;
    std::tie(aBuffer, bBuffer) =
        cl.copy(b, loc, op, aBuffer, bBuffer, sizes, options.target);
    p.loadA = cl.loadA;
    p.loadB = cl.loadB;
    p.layoutA = cl.layoutA;
    p.layoutB = cl.layoutB;
    p.kStrideA = cl.kStrideA;
    p.kStrideB = cl.kStrideB;
    if (cl.store) {
      p.store = cl.store;
      p.consecutiveColumns = false;
    }
  }

  auto resultType = MemRefType::get(p.resultType.getShape(), storage);
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < resultType.getRank(); ++d)
    if (resultType.isDynamicDim(d))
      dynamicSizes.push_back(hostSizes.result[d]);
  Value result = b.create<memref::AllocOp>(loc, resultType, dynamicSizes);
  IndexMath hm{b, loc};
  Value tiles =
      hm.product(sizes[kBatch], hm.product(hm.ceilDiv(sizes[kM], s.tileM),
                                           hm.ceilDiv(sizes[kN], s.tileN)));
  SmallVector<Value> epilogueArgs;
  for (const PointwiseStep &step : epilogue)
    if (step.operand)
      epilogueArgs.push_back(flatten(b, loc, getBuffer(b, loc, step.operand)));
  if (s.splitK > 1) {
    // The products' f32 partial sums, then their sum through the epilogue.
    Value elements =
        hm.product(sizes[kBatch], hm.product(sizes[kM], sizes[kN]));
    Value partials =
        allocTemporary(b, loc, hm.product(elements, hm.c(s.splitK)), acc);
    SmallVector<Value> args{flatten(b, loc, aBuffer), flatten(b, loc, bBuffer),
                            partials};
    // TMA loads stage the ranges too where the operands allow (the
    // operands' tensor maps last); warp specialized, on a persistent grid.
    std::optional<std::pair<Value, Value>> maps;
    if (s.kind == TiledProductSchedule::Kind::TensorCore)
      maps = tmaMaps(b, loc, p, s, args[0], args[1]);
    if (maps)
      args.append({maps->first, maps->second});
    TiledProductSchedule ks = kernelSchedule(s, maps.has_value());
    int64_t kernelThreads = ks.blockSize();
    ResidentBlocksOp persistent;
    if (ks.warpSpecialized)
      persistent = residentBlocks(b, loc, kernelThreads, ks.maxBlocks);
    Kernel k =
        createKernel(module, loc, kernelBaseName(op, name),
                     ValueRange(args).getTypes(), kernelThreads, s.str());
    k.func->setAttr(kMinBlocksAttr,
                    b.getI64IntegerAttr(s.minBlocksPerMultiprocessor));
    ProductKernel pk{p,  k,   k.arg(0), k.arg(1), k.arg(2), {}, {},
                     {}, acc, {},       {},       {},       {}};
    for (Value host : sizes)
      pk.sizes.push_back(k.size(k.body, loc, host));
    if (maps) {
      pk.mapA = k.arg(args.size() - 2);
      pk.mapB = k.arg(args.size() - 1);
    }
    if (s.kind == TiledProductSchedule::Kind::TensorCore)
      buildTensorCoreProduct(pk, ks, loc);
    else
      buildSimtProduct(pk, s, loc);
    // The partial sums reach splitK times the result's bound.
    markIndex32(k, p, s.splitK);
    if (persistent)
      bindResidentBlocks(persistent, k.func, options.target);
    Value units = hm.product(tiles, hm.c(s.splitK));
    Value grid = b.createOrFold<arith::MinUIOp>(loc, units, hm.c(s.maxBlocks));
    if (persistent)
      grid = b.createOrFold<arith::MinUIOp>(loc, grid, persistent);
    launchUnlessEmpty(b, loc, k, grid, kernelThreads, args, units);
    emitSplitSum(b, op, p, epilogue, s, hm.c(s.splitK), partials,
                 flatten(b, loc, result), epilogueArgs, sizes, acc, name);
    return toTensor(b, loc, result);
  }
  // K split at launch (TiledProductSchedule::splitKMax): for a kernel of
  // schedule `ks` and `kernelTiles` tiles, the ranges that make its tiles
  // splitKBlocks blocks (fewer where the device holds fewer of the kernel
  // at once: known when it is loaded; `resident` asks, for the kernel to
  // bind), at most splitKMax, each of at least splitKMinTiles K tiles,
  // then as many as whole ranges of the same length make (none empty); at
  // least 1.
  auto minU = [&](Value x, Value y) {
    return b.createOrFold<arith::MinUIOp>(loc, x, y);
  };
  auto maxU = [&](Value x, Value y) {
    return b.createOrFold<arith::MaxUIOp>(loc, x, y);
  };
  auto rangesAtLaunch = [&](const TiledProductSchedule &ks, Value kernelTiles,
                            ResidentBlocksOp &resident) {
    Value one = hm.c(1);
    Value kTiles = hm.ceilDiv(sizes[kK], ks.tileK);
    resident = residentBlocks(b, loc, ks.blockSize(), ks.splitKBlocks);
    Value wanted = hm.ceilDiv(resident, maxU(kernelTiles, one));
    Value ranges = maxU(minU(minU(wanted, hm.div(kTiles, ks.splitKMinTiles)),
                             hm.c(ks.splitKMax)),
                        one);
    Value perRange = maxU(hm.ceilDiv(kTiles, ranges), one);
    return maxU(hm.ceilDiv(kTiles, perRange), one);
  };
  // The product's kernels: one, or (TiledProductSchedule::smallTile) one
  // on the large tiles and one on the small, each launched where `runs`
  // (a grid of no blocks elsewhere: the choice may follow the device).
  struct Variant {
    TiledProductSchedule schedule;
    std::string name, record;
    Value tiles, splits, runs;
    ResidentBlocksOp resident;
  };
  SmallVector<Variant, 2> variants(1);
  variants[0].schedule = s;
  variants[0].name = kernelBaseName(op, name);
  variants[0].record = s.str();
  variants[0].tiles = tiles;
  ResidentBlocksOp choice;
  if (!s.smallTile.empty()) {
    Variant small;
    small.schedule = s.withSmallTile();
    small.name = variants[0].name + "_small_tiles";
    small.record = small.schedule.str();
    small.tiles = hm.product(
        sizes[kBatch], hm.product(hm.ceilDiv(sizes[kM], small.schedule.tileM),
                                  hm.ceilDiv(sizes[kN], small.schedule.tileN)));
    // The large tiles where they are at least smallTileBelow, or at least
    // as many as the device holds of their kernel, where fewer.
    choice = residentBlocks(b, loc, s.blockSize(), s.smallTileBelow);
    variants[0].runs =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, tiles, choice);
    small.runs =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, tiles, choice);
    variants[0].schedule.smallTile = {};
    variants[0].schedule.smallTileBelow = 0;
    variants.push_back(small);
  }
  // The ranges of each kernel, and the partial sums of the one that runs,
  // where it has more than one range.
  Value splits, partials;
  if (s.splitKMax > 0) {
    for (Variant &v : variants)
      v.splits = rangesAtLaunch(v.schedule, v.tiles, v.resident);
    splits = variants.size() == 1
                 ? variants.front().splits
                 : b.create<arith::SelectOp>(loc, variants.front().runs,
                                             variants.front().splits,
                                             variants.back().splits)
                       .getResult();
    Value one = hm.c(1);
    Value slices = b.create<arith::SelectOp>(
        loc,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ugt, splits, one),
        splits, hm.c(0));
    Value elements =
        hm.product(sizes[kBatch], hm.product(sizes[kM], sizes[kN]));
    partials = allocTemporary(b, loc, hm.product(elements, slices), acc);
  }
  Value flatResult = flatten(b, loc, result);
  SmallVector<Value> args{flatten(b, loc, aBuffer), flatten(b, loc, bBuffer),
                          flatResult};
  args.append(epilogueArgs);
  if (partials)
    args.push_back(partials);
  // The operands' TMA tensor maps, last, where one kernel stages them so.
  std::optional<std::pair<Value, Value>> maps;
  if (variants.size() == 1 && !partials &&
      s.kind == TiledProductSchedule::Kind::TensorCore)
    maps = tmaMaps(b, loc, p, s, args[0], args[1]);
  if (maps)
    args.append({maps->first, maps->second});

  TypeRange argTypes = ValueRange(args).getTypes();
  for (Variant &v : variants) {
    TiledProductSchedule ks = kernelSchedule(v.schedule, maps.has_value());
    int64_t kernelThreads = ks.blockSize();
    // Its grid is persistent: as many blocks as the device holds at once
    // (known when the module is loaded), each looping over units, so that
    // its producer runs into the next unit while its consumers store one;
    // in clusters, as many whole clusters as it holds, each looping over
    // pairs of tiles.
    ResidentBlocksOp persistent;
    if (ks.warpSpecialized)
      persistent = residentBlocks(b, loc, kernelThreads, ks.maxBlocks);
    Kernel k =
        createKernel(module, loc, v.name, argTypes, kernelThreads, v.record);
    k.func->setAttr(kMinBlocksAttr,
                    b.getI64IntegerAttr(ks.minBlocksPerMultiprocessor));
    if (ks.multicast)
      k.func->setAttr(kClusterBlocksAttr, b.getI64IntegerAttr(2));
    ProductKernel pk{p,  k,   k.arg(0), k.arg(1), k.arg(2), {}, epilogue,
                     {}, acc, {},       {},       {},       {}};
    unsigned next = 3;
    for (const PointwiseStep &step : epilogue)
      pk.stepArgs.push_back(step.operand ? k.arg(next++) : Value());
    for (Value host : sizes)
      pk.sizes.push_back(k.size(k.body, loc, host));
    if (partials) {
      pk.partials = k.arg(next);
      pk.splits = k.size(k.body, loc, v.splits);
    }
    if (maps) {
      pk.mapA = k.arg(args.size() - 2);
      pk.mapB = k.arg(args.size() - 1);
    }
    if (ks.kind == TiledProductSchedule::Kind::TensorCore)
      buildTensorCoreProduct(pk, ks, loc);
    else
      buildSimtProduct(pk, ks, loc);
    // (The partial sums reach up to splitKMax times the result's bound.)
    markIndex32(k, p, partials ? ks.splitKMax : 1);
    // The residency counts name the kernel, built: its shared memory is
    // known now.
    if (partials)
      bindResidentBlocks(v.resident, k.func, options.target);
    if (&v == &variants.front() && choice)
      bindResidentBlocks(choice, k.func, options.target);
    if (persistent)
      bindResidentBlocks(persistent, k.func, options.target);

    // A block per output tile (and range), at most maxBlocks; none for an
    // empty result (a grid of 0 blocks is an error), decided by the tiles
    // (there is at least one range; their count may come from the device,
    // which a launch's condition may not), nor where the other kernel
    // runs.
    Value units = partials ? hm.product(v.tiles, v.splits) : v.tiles;
    // In clusters of two: two blocks for each pair of tiles along M, whole
    // clusters (the residency counts them so).
    if (ks.multicast)
      units = hm.mul(
          hm.product(sizes[kBatch],
                     hm.product(hm.ceilDiv(hm.ceilDiv(sizes[kM], ks.tileM), 2),
                                hm.ceilDiv(sizes[kN], ks.tileN))),
          2);
    int64_t maxBlocks = ks.multicast
                            ? std::max<int64_t>(2, ks.maxBlocks / 2 * 2)
                            : ks.maxBlocks;
    Value grid = minU(units, hm.c(maxBlocks));
    if (persistent)
      grid = minU(grid, persistent);
    if (v.runs)
      grid = b.create<arith::SelectOp>(loc, v.runs, grid, hm.c(0));
    launchUnlessEmpty(b, loc, k, grid, kernelThreads, args, v.tiles);
  }
  if (partials)
    emitSplitSum(b, op, p, epilogue, s, splits, partials, flatResult,
                 epilogueArgs, sizes, acc, name);
  return toTensor(b, loc, result);
}

} // namespace

namespace {

/// Size `d` of `buffer` (a constant where static).
Value dimOf(OpBuilder &b, Location loc, Value buffer, int64_t d) {
  return getNumElements(b, loc, buffer, d, d + 1);
}

FailureOr<Product> getProduct(MatmulOp op) {
  auto lhs = cast<RankedTensorType>(op.getLhs().getType());
  auto rhs = cast<RankedTensorType>(op.getRhs().getType());
  Product p;
  p.resultType = cast<RankedTensorType>(op.getResult().getType());
  int64_t rank = p.resultType.getRank();
  bool transA = op.getTransposeLhs(), transB = op.getTransposeRhs();
  // An operand without batch dimensions is shared by every batch entry.
  bool aBatched = lhs.getRank() > 2, bBatched = rhs.getRank() > 2;
  p.sizes = [=](OpBuilder &b, Location loc, Value a, Value bb) {
    int64_t ra = lhs.getRank(), rb = rhs.getRank();
    IndexMath im{b, loc};
    ProductSizes z;
    Value m = dimOf(b, loc, a, ra - (transA ? 1 : 2));
    Value k = dimOf(b, loc, a, ra - (transA ? 2 : 1));
    Value n = dimOf(b, loc, bb, rb - (transB ? 2 : 1));
    Value batch = im.c(1);
    for (int64_t d = 0; d + 2 < rank; ++d) {
      Value size = aBatched ? dimOf(b, loc, a, d) : dimOf(b, loc, bb, d);
      z.result.push_back(size);
      batch = im.product(batch, size);
    }
    z.result.push_back(m);
    z.result.push_back(n);
    z.kernel = {batch, m, n, k};
    return z;
  };
  p.a = op.getLhs();
  p.b = op.getRhs();
  // A is M x K (K x M transposed), B is K x N (N x K), each row-major.
  using Runs = OperandLayout::Runs;
  p.layoutA = {transA ? Runs::Rows : Runs::Columns, lhs.getShape().back(),
               transA ? kM : kK};
  p.layoutB = {transB ? Runs::Rows : Runs::Columns, rhs.getShape().back(),
               transB ? kK : kN};
  if (lhs.hasStaticShape() && rhs.hasStaticShape()) {
    // Rows and columns up to a tile (256) past M and N, K up to a K tile
    // (64) past K, in every batch entry.
    int64_t m = lhs.getDimSize(lhs.getRank() - (transA ? 1 : 2));
    int64_t k = lhs.getDimSize(lhs.getRank() - (transA ? 2 : 1));
    int64_t n = rhs.getDimSize(rhs.getRank() - (transB ? 2 : 1));
    int64_t batch = 1;
    for (int64_t d = 0; d + 2 < rank; ++d)
      batch *= p.resultType.getDimSize(d);
    p.offsetBound =
        batch * std::max({(m + 256) * (k + 64), (k + 64) * (n + 256),
                          (m + 256) * (n + 256)});
    p.matrixA = DenseMatrix{aBatched ? batch : 1, transA ? k : m,
                            transA ? m : k, aBatched};
    p.matrixB = DenseMatrix{bBatched ? batch : 1, transB ? n : k,
                            transB ? k : n, bBatched};
  }
  p.kStrideA = [=](OpBuilder &b, Location loc, ArrayRef<Value> z) {
    return transA ? z[kM] : IndexMath{b, loc}.c(1);
  };
  p.kStrideB = [=](OpBuilder &b, Location loc, ArrayRef<Value> z) {
    return transB ? IndexMath{b, loc}.c(1) : z[kN];
  };
  p.loadA = [=](OpBuilder &b, Location loc, ArrayRef<Value> z, Value batch,
                Value row, Value col) -> Access {
    IndexMath im{b, loc};
    Value m = z[kM], k = z[kK];
    Value at = transA ? im.madd(col, m, row) : im.madd(row, k, col);
    return {aBatched ? im.madd(batch, im.product(m, k), at) : at, Value()};
  };
  p.loadB = [=](OpBuilder &b, Location loc, ArrayRef<Value> z, Value batch,
                Value row, Value col) -> Access {
    IndexMath im{b, loc};
    Value n = z[kN], k = z[kK];
    Value at = transB ? im.madd(col, k, row) : im.madd(row, n, col);
    return {bBatched ? im.madd(batch, im.product(k, n), at) : at, Value()};
  };
  p.store = [=](OpBuilder &b, Location loc, ArrayRef<Value> z, Value batch,
                Value row, Value col) -> Access {
    IndexMath im{b, loc};
    Value m = z[kM], n = z[kN];
    return {im.madd(batch, im.product(m, n), im.madd(row, n, col)), Value()};
  };
  return p;
}

/// The sizes of a convolution in the kernel: batch, input and output
/// channels, input, filter and output spatial sizes (ProductSizes::kernel
/// from kConvSizes on).
struct ConvShape {
  ConvParams params;
  Value n, c, o, in[2], kernel[2], out[2];

  /// The host's sizes to pass, in the order `at` reads them.
  static void append(const ConvSizes &s, SmallVector<Value> &sizes) {
    sizes.append(
        {s.n, s.c, s.o, s.in[0], s.in[1], s.k[0], s.k[1], s.out[0], s.out[1]});
  }
  /// From the kernel's sizes.
  static ConvShape at(const ConvParams &p, ArrayRef<Value> z) {
    ConvShape s;
    s.params = p;
    ArrayRef<Value> v = z.drop_front(kConvSizes);
    s.n = v[0];
    s.c = v[1];
    s.o = v[2];
    for (int d = 0; d < 2; ++d) {
      s.in[d] = v[3 + d];
      s.kernel[d] = v[5 + d];
      s.out[d] = v[7 + d];
    }
    return s;
  }
  Value taps(IndexMath &im) const { return im.product(kernel[0], kernel[1]); }

  /// (n, h, w) of the flat position `m` of an image of `size`.
  std::array<Value, 3> position(IndexMath &im, Value m,
                                const Value size[2]) const {
    Value plane = im.product(size[0], size[1]);
    Value inImage = im.rem(m, plane);
    return {im.div(m, plane), im.div(inImage, size[1]),
            im.rem(inImage, size[1])};
  }
  /// (channel, kh, kw) of index `j` over the taps and `channels` channels,
  /// in the filter's order (OIHW: channel major; OHWI: channel minor).
  std::array<Value, 3> tap(IndexMath &im, Value j, Value channels) const {
    if (params.nchw)
      return {im.div(j, taps(im)), im.rem(im.div(j, kernel[1]), kernel[0]),
              im.rem(j, kernel[1])};
    return {im.rem(j, channels), im.div(j, im.product(kernel[1], channels)),
            im.rem(im.div(j, channels), kernel[1])};
  }
  /// The flat offset of activation element (n, ch, h, w) of an activation
  /// with `channels` channels and spatial `size`.
  Value activation(IndexMath &im, Value n, Value ch, Value h, Value w,
                   Value channels, const Value size[2]) const {
    if (params.nchw)
      return im.madd(im.madd(im.madd(n, channels, ch), size[0], h), size[1], w);
    return im.madd(im.madd(im.madd(n, size[0], h), size[1], w), channels, ch);
  }
  /// The flat offset of filter element (o, i, kh, kw).
  Value filter(IndexMath &im, Value o, Value i, Value kh, Value kw) const {
    if (params.nchw)
      return im.madd(im.madd(im.madd(o, c, i), kernel[0], kh), kernel[1], kw);
    return im.madd(im.madd(im.madd(o, kernel[0], kh), kernel[1], kw), c, i);
  }
  /// The input coordinate that output coordinate `out` reads at tap `t`
  /// along spatial dimension `d` (negative or past the end in the padding).
  Value inputCoordinate(IndexMath &im, Value out, Value t, int d) const {
    return im.add(
        im.sub(im.mul(out, params.stride[d]), im.c(params.padBefore[d])),
        im.mul(t, params.dilation[d]));
  }
  /// The input element that output position `position` (flat over n, oh,
  /// ow) reads at `tapIndex` (over the taps and input channels, in the
  /// filter's order); invalid in the padding.
  Access inputAt(IndexMath &im, Value position, Value tapIndex) const {
    auto [n, oh, ow] = this->position(im, position, out);
    auto [i, kh, kw] = tap(im, tapIndex, c);
    Value ih = inputCoordinate(im, oh, kh, 0);
    Value iw = inputCoordinate(im, ow, kw, 1);
    return {activation(im, n, i, ih, iw, c, in),
            im.both(im.inRange(ih, in[0]), im.inRange(iw, in[1]))};
  }
};

/// Elements of a 16-byte run of f16/bf16: what the tensor-core kernel
/// stages by one cp.async.
constexpr int64_t kWholeRun = 8;

/// x's element (position, tap) of a convolution in `params`' layout (a
/// forward convolution's A, a filter gradient's B), zero in the padding.
AccessFn convInputAt(const ConvParams &params) {
  return [=](OpBuilder &b, Location loc, ArrayRef<Value> z, Value, Value row,
             Value col) -> Access {
    IndexMath im{b, loc};
    return ConvShape::at(params, z).inputAt(im, row, col);
  };
}

/// A channels-last (NHWC) copy of a convolution's NCHW input `x`; `s` are
/// the convolution's sizes (n, c, o, spatial sizes).
Value copyInputChannelsLast(OpBuilder &b, Location loc, Operation *op, Value x,
                            ArrayRef<Value> s, const GpuTarget &target) {
  IndexMath im{b, loc};
  return emitChannelsLastCopy(b, loc, op, "input_nhwc", flatten(b, loc, x),
                              s[0], s[1], im.product(s[3], s[4]), target);
}

/// How the tensor-core kernel reads an NCHW convolution of `channels` input
/// channels (a multiple of kWholeRun) and filter rows of `k` elements from
/// channels-last copies: an NHWC input, whose channels at a tap are
/// consecutive, and an OHWI filter, whose K order is then the NHWC input's
/// (the taps, then the channels). The result stays NCHW.
std::shared_ptr<ChannelsLastOperands>
channelsLastOperands(const ConvParams &params, int64_t channels, int64_t k) {
  using Runs = OperandLayout::Runs;
  ConvParams nhwc = params;
  nhwc.nchw = false;
  auto cl = std::make_shared<ChannelsLastOperands>();
  cl->layoutA = {Runs::Columns, channels, kConvSizes + 1};
  cl->layoutB = {Runs::Rows, k, kK};
  cl->loadA = convInputAt(nhwc);
  cl->loadB = [=](OpBuilder &b, Location loc, ArrayRef<Value> z, Value,
                  Value row, Value col) -> Access {
    IndexMath im{b, loc};
    return {im.madd(col, z[kK], row), Value()};
  };
  cl->kStrideB = [](OpBuilder &b, Location loc, ArrayRef<Value>) {
    return IndexMath{b, loc}.c(1);
  };
  cl->copy = [](OpBuilder &b, Location loc, Operation *op, Value x, Value w,
                ArrayRef<Value> z, const GpuTarget &target) {
    IndexMath im{b, loc};
    // n, c, o, the input's, the filter's and the output's spatial sizes.
    ArrayRef<Value> s = z.drop_front(kConvSizes);
    Value input = copyInputChannelsLast(b, loc, op, x, s, target);
    Value filter =
        emitChannelsLastCopy(b, loc, op, "filter_ohwi", flatten(b, loc, w),
                             s[2], s[1], im.product(s[5], s[6]), target);
    return std::make_pair(input, filter);
  };
  return cl;
}

/// The elements of a plane of `type`, an NCHW activation, where static;
/// else 0.
int64_t staticPlane(RankedTensorType type, const ConvParams &params) {
  int64_t h = type.getDimSize(params.spatialDim(0));
  int64_t w = type.getDimSize(params.spatialDim(1));
  return ShapedType::isDynamic(h) || ShapedType::isDynamic(w) ? 0 : h * w;
}

FailureOr<Product> getProduct(Conv2DOp op) {
  Product p;
  p.resultType = cast<RankedTensorType>(op.getResult().getType());
  ConvParams params = ConvParams::get(op);
  RankedTensorType type = p.resultType;
  p.sizes = [=](OpBuilder &b, Location loc, Value x, Value w) {
    IndexMath im{b, loc};
    ConvSizes s = convForwardSizes(b, loc, params, x, w, type);
    ProductSizes z;
    z.kernel = {im.c(1), im.product(s.n, im.product(s.out[0], s.out[1])), s.o,
                im.product(im.product(s.k[0], s.k[1]), s.c)};
    ConvShape::append(s, z.kernel);
    z.result = params.act(s.n, s.o, s.out[0], s.out[1]);
    return z;
  };
  p.a = op.getInput();
  p.b = op.getFilter();
  using Runs = OperandLayout::Runs;
  // A filter row is all of K, in either layout.
  auto filter = cast<RankedTensorType>(op.getFilter().getType());
  int64_t k = ShapedType::kDynamic;
  if (filter.hasStaticShape())
    k = filter.getDimSize(1) * filter.getDimSize(2) * filter.getDimSize(3);
  p.layoutB = {Runs::Rows, k, kK};
  auto input = cast<RankedTensorType>(op.getInput().getType());
  int64_t channels = input.getDimSize(params.channelDim());
  int64_t plane = ShapedType::kDynamic;
  if (!ShapedType::isDynamic(input.getDimSize(params.spatialDim(0))) &&
      !ShapedType::isDynamic(input.getDimSize(params.spatialDim(1))))
    plane = input.getDimSize(params.spatialDim(0)) *
            input.getDimSize(params.spatialDim(1));
  // A 1 x 1 filter at stride 1 without padding reads input element
  // (n, k, position m of the image): an NCHW input is then A stored
  // K-major, its runs an image's plane.
  int64_t kh = params.nchw ? 2 : 1;
  bool pointwise = filter.getDimSize(kh) == 1 &&
                   filter.getDimSize(kh + 1) == 1 && params.stride[0] == 1 &&
                   params.stride[1] == 1 &&
                   llvm::all_of(op.getPadding(), [](int64_t p) { return !p; });
  // An NCHW result: a channel's output positions are consecutive, a plane
  // of them an image.
  if (params.nchw)
    p.resultRowRun = staticPlane(type, params);
  if (!params.nchw) {
    // NHWC input: K runs over the taps and then the channels, so the
    // channels of one tap are consecutive.
    p.layoutA = {Runs::Columns, input.getShape().back(), kConvSizes + 1};
  } else if (pointwise && !ShapedType::isDynamic(plane) &&
             plane % kWholeRun == 0) {
    p.layoutA = {Runs::Rows, plane, kM};
    p.kStrideA = [plane](OpBuilder &b, Location loc, ArrayRef<Value>) {
      return IndexMath{b, loc}.c(plane);
    };
    p.consecutiveColumns = false;
  } else {
    // NCHW input: neighbouring output positions (M) read neighbouring
    // input elements, but for strides and padding; gathered one element
    // at a time. The result's channels are a plane apart.
    p.layoutA = {Runs::Rows, 1, kM};
    p.consecutiveColumns = false;
    Type element = input.getElementType();
    // (Read by the tensor-core schedule alone: f16, bf16, and f32 as tf32.)
    if ((element.isF16() || element.isBF16() || element.isF32()) &&
        !ShapedType::isDynamic(channels) && channels % kWholeRun == 0)
      p.channelsLast = channelsLastOperands(params, channels, k);
  }
  p.loadA = convInputAt(params);
  // K runs in the filter's own order: a filter row is contiguous.
  p.loadB = [=](OpBuilder &b, Location loc, ArrayRef<Value> z, Value, Value row,
                Value col) -> Access {
    IndexMath im{b, loc};
    return {im.madd(col, z[kK], row), Value()};
  };
  p.kStrideB = [](OpBuilder &b, Location loc, ArrayRef<Value>) {
    return IndexMath{b, loc}.c(1);
  };
  if (input.hasStaticShape() && filter.hasStaticShape() &&
      type.hasStaticShape()) {
    // Output positions up to a tile (256) past the last: images up to
    // n_max; input rows and columns from the padding before to the
    // kernel's reach past the end; channels up to a tile past the output
    // channels, K up to a K tile (64) past K.
    int64_t n = input.getDimSize(0), c = input.getDimSize(params.channelDim());
    int64_t h = input.getDimSize(params.spatialDim(0));
    int64_t w = input.getDimSize(params.spatialDim(1));
    int64_t oh = type.getDimSize(params.spatialDim(0));
    int64_t ow = type.getDimSize(params.spatialDim(1));
    int64_t o = type.getDimSize(params.channelDim());
    int64_t kernel = filter.getNumElements() / std::max<int64_t>(1, o);
    int64_t positions = std::max<int64_t>(1, oh * ow);
    int64_t images = (n * positions + 256) / positions + 1;
    int64_t taps[2] = {filter.getDimSize(params.nchw ? 2 : 1),
                       filter.getDimSize(params.nchw ? 3 : 2)};
    // K past its end (up to a K tile, 64) reaches up to 64 taps past the
    // kernel's.
    auto reach = [&](int d, int64_t extent) {
      return extent + params.padBefore[d] + params.padAfter[d] +
             params.stride[d] + params.dilation[d] * (taps[d] + 64) + 64;
    };
    p.offsetBound =
        std::max({images * reach(0, h) * reach(1, w) * c,
                  (o + 256) * (kernel + 64), images * positions * (o + 256)});
  }
  p.store = [=](OpBuilder &b, Location loc, ArrayRef<Value> z, Value, Value row,
                Value col) -> Access {
    IndexMath im{b, loc};
    ConvShape s = ConvShape::at(params, z);
    auto [n, oh, ow] = s.position(im, row, s.out);
    return {s.activation(im, n, col, oh, ow, s.o, s.out), Value()};
  };
  return p;
}

/// The data gradient's A, dy, in `params`' layout: element (position of dx,
/// tap) of the product. dx[n, i, ih, iw] takes dy[n, o, oh, ow] *
/// w[o, i, kh, kw] where ih = oh * stride - pad + kh * dilation: oh = (ih +
/// pad - kh * dilation) / stride when that divides and is in range.
AccessFn gradOutputAt(const ConvParams &params) {
  return [=](OpBuilder &b, Location loc, ArrayRef<Value> z, Value, Value row,
             Value col) -> Access {
    IndexMath im{b, loc};
    ConvShape s = ConvShape::at(params, z);
    auto [n, ih, iw] = s.position(im, row, s.in);
    auto [o, kh, kw] = s.tap(im, col, s.o);
    Value valid;
    Value out[2];
    Value inCoord[2] = {ih, iw}, tap[2] = {kh, kw};
    for (int d = 0; d < 2; ++d) {
      Value shifted = im.sub(im.add(inCoord[d], im.c(params.padBefore[d])),
                             im.mul(tap[d], params.dilation[d]));
      valid = im.both(valid, im.multipleOf(shifted, params.stride[d]));
      out[d] =
          params.stride[d] == 1
              ? shifted
              : b.create<arith::DivSIOp>(loc, shifted, im.c(params.stride[d]));
      valid = im.both(valid, im.inRange(out[d], s.out[d]));
    }
    return {s.activation(im, n, o, out[0], out[1], s.o, s.out), valid};
  };
}

/// The data gradient's B, the filter, in `params`' layout: element (tap,
/// input channel).
AccessFn gradInputFilterAt(const ConvParams &params) {
  return [=](OpBuilder &b, Location loc, ArrayRef<Value> z, Value, Value row,
             Value col) -> Access {
    IndexMath im{b, loc};
    ConvShape s = ConvShape::at(params, z);
    auto [o, kh, kw] = s.tap(im, row, s.o);
    return {s.filter(im, o, col, kh, kw), Value()};
  };
}

/// How the tensor-core kernel reads an NCHW data gradient whose output
/// channels `o` and input channels `i` are multiples of kWholeRun from
/// channels-last copies, as the forward convolution does: dy as NHWC (a
/// tap's output channels consecutive along K) and the filter as OHWI (the
/// input channels consecutive along N), both staged 16 bytes at a time.
/// dx stays NCHW.
std::shared_ptr<ChannelsLastOperands>
channelsLastGradInputOperands(const ConvParams &params, int64_t o, int64_t i) {
  using Runs = OperandLayout::Runs;
  ConvParams nhwc = params;
  nhwc.nchw = false;
  auto cl = std::make_shared<ChannelsLastOperands>();
  cl->layoutA = {Runs::Columns, o, kConvSizes + 2};
  cl->layoutB = {Runs::Columns, i, kConvSizes + 1};
  cl->loadA = gradOutputAt(nhwc);
  cl->loadB = gradInputFilterAt(nhwc);
  cl->copy = [](OpBuilder &b, Location loc, Operation *op, Value dy, Value w,
                ArrayRef<Value> z, const GpuTarget &target) {
    IndexMath im{b, loc};
    // n, c, o, the input's, the filter's and the output's spatial sizes.
    ArrayRef<Value> s = z.drop_front(kConvSizes);
    Value grad = emitChannelsLastCopy(b, loc, op, "grad_output_nhwc",
                                      flatten(b, loc, dy), s[0], s[2],
                                      im.product(s[7], s[8]), target);
    Value filter =
        emitChannelsLastCopy(b, loc, op, "filter_ohwi", flatten(b, loc, w),
                             s[2], s[1], im.product(s[5], s[6]), target);
    return std::make_pair(grad, filter);
  };
  return cl;
}

FailureOr<Product> getProduct(Conv2DBackpropInputOp op) {
  Product p;
  p.resultType = cast<RankedTensorType>(op.getGradInput().getType());
  ConvParams params = ConvParams::get(op);
  RankedTensorType type = p.resultType;
  p.sizes = [=](OpBuilder &b, Location loc, Value dy, Value w) {
    IndexMath im{b, loc};
    ConvSizes s = convBackpropInputSizes(b, loc, params, dy, w, type);
    ProductSizes z;
    z.kernel = {im.c(1), im.product(s.n, im.product(s.in[0], s.in[1])), s.c,
                im.product(im.product(s.k[0], s.k[1]), s.o)};
    ConvShape::append(s, z.kernel);
    z.result = params.act(s.n, s.c, s.in[0], s.in[1]);
    return z;
  };
  p.a = op.getGradOutput();
  p.b = op.getFilter();
  using Runs = OperandLayout::Runs;
  if (!params.nchw) {
    // NHWC dy: a tap's output channels are consecutive (K runs over the
    // taps, then the channels); OHWI filter: N (the input channels) is.
    p.layoutA = {
        Runs::Columns,
        cast<RankedTensorType>(op.getGradOutput().getType()).getShape().back(),
        kConvSizes + 2};
    p.layoutB = {
        Runs::Columns,
        cast<RankedTensorType>(op.getFilter().getType()).getShape().back(),
        kConvSizes + 1};
  } else {
    // NCHW dy, gathered one element at a time along the positions (M);
    // OIHW filter: a row of K is an output channel's taps, KH x KW apart
    // from the next input channel's, so one element at a time too. The
    // result's channels are a plane apart.
    p.layoutA = {Runs::Rows, 1, kM};
    p.layoutB = {Runs::Rows, 1, kK};
    p.consecutiveColumns = false;
    // dx's input positions are consecutive, a plane an image.
    p.resultRowRun = staticPlane(type, params);
    // Channels in whole 16-byte runs: both operands copied channels-last
    // (read by the tensor-core schedule alone).
    auto filter = cast<RankedTensorType>(op.getFilter().getType());
    int64_t o = filter.getDimSize(0), i = filter.getDimSize(1);
    Type element = filter.getElementType();
    if ((element.isF16() || element.isBF16() || element.isF32()) &&
        !ShapedType::isDynamic(o) && !ShapedType::isDynamic(i) &&
        o % kWholeRun == 0 && i % kWholeRun == 0)
      p.channelsLast = channelsLastGradInputOperands(params, o, i);
  }
  p.loadA = gradOutputAt(params);
  p.loadB = gradInputFilterAt(params);
  p.store = [=](OpBuilder &b, Location loc, ArrayRef<Value> z, Value, Value row,
                Value col) -> Access {
    IndexMath im{b, loc};
    ConvShape s = ConvShape::at(params, z);
    auto [n, ih, iw] = s.position(im, row, s.in);
    return {s.activation(im, n, col, ih, iw, s.c, s.in), Value()};
  };
  return p;
}

/// How the tensor-core kernel reads an NCHW filter gradient `p` whose input
/// channels `c` are a multiple of kWholeRun from a channels-last copy of x:
/// N then runs over the taps and then the channels, as the NHWC filter
/// gradient's does, so x is staged 16 bytes at a time; dy is read in
/// place (an image's plane along K) and dw is stored OIHW, each element
/// where its (tap, channel) puts it.
std::shared_ptr<ChannelsLastOperands>
channelsLastGradFilterOperands(const ConvParams &params, int64_t c,
                               const Product &p) {
  using Runs = OperandLayout::Runs;
  ConvParams nhwc = params;
  nhwc.nchw = false;
  auto cl = std::make_shared<ChannelsLastOperands>();
  cl->layoutA = p.layoutA;
  cl->loadA = p.loadA;
  cl->kStrideA = p.kStrideA;
  cl->layoutB = {Runs::Columns, c, kConvSizes + 1};
  cl->loadB = convInputAt(nhwc);
  cl->store = [=](OpBuilder &b, Location loc, ArrayRef<Value> z, Value,
                  Value row, Value col) -> Access {
    IndexMath im{b, loc};
    ConvShape copied = ConvShape::at(nhwc, z);
    auto [ch, kh, kw] = copied.tap(im, col, copied.c);
    return {ConvShape::at(params, z).filter(im, row, ch, kh, kw), Value()};
  };
  cl->copy = [](OpBuilder &b, Location loc, Operation *op, Value dy, Value x,
                ArrayRef<Value> z, const GpuTarget &target) {
    return std::make_pair(
        dy,
        copyInputChannelsLast(b, loc, op, x, z.drop_front(kConvSizes), target));
  };
  return cl;
}

FailureOr<Product> getProduct(Conv2DBackpropFilterOp op) {
  Product p;
  p.resultType = cast<RankedTensorType>(op.getGradFilter().getType());
  ConvParams params = ConvParams::get(op);
  RankedTensorType type = p.resultType;
  p.sizes = [=](OpBuilder &b, Location loc, Value dy, Value x) {
    IndexMath im{b, loc};
    ConvSizes s = convBackpropFilterSizes(b, loc, params, x, dy, type);
    ProductSizes z;
    z.kernel = {im.c(1), s.o, im.product(im.product(s.k[0], s.k[1]), s.c),
                im.product(s.n, im.product(s.out[0], s.out[1]))};
    ConvShape::append(s, z.kernel);
    z.result = params.filter(s.o, s.c, s.k[0], s.k[1]); // OIHW or OHWI
    return z;
  };
  p.a = op.getGradOutput();
  p.b = op.getInput();
  using Runs = OperandLayout::Runs;
  auto dy = cast<RankedTensorType>(op.getGradOutput().getType());
  if (!params.nchw) {
    // NHWC dy: M (the output channels) is consecutive; NHWC x: a tap's
    // input channels are (N runs over the taps, then the channels).
    p.layoutA = {Runs::Rows, dy.getShape().back(), kConvSizes + 2};
    p.layoutB = {
        Runs::Columns,
        cast<RankedTensorType>(op.getInput().getType()).getShape().back(),
        kConvSizes + 1};
  } else {
    // NCHW dy: K runs over an image's output positions, consecutive for
    // one output channel, in runs of OH x OW (one element at a time where
    // that is unknown); x gathered one element at a time along K.
    int64_t plane = ShapedType::kDynamic;
    if (!dy.isDynamicDim(2) && !dy.isDynamicDim(3))
      plane = dy.getDimSize(2) * dy.getDimSize(3);
    p.layoutA = {Runs::Columns, ShapedType::isDynamic(plane) ? 1 : plane, kK};
    p.layoutB = {Runs::Rows, 1, kK};
  }
  p.loadA = [=](OpBuilder &b, Location loc, ArrayRef<Value> z, Value, Value row,
                Value col) -> Access {
    IndexMath im{b, loc};
    ConvShape s = ConvShape::at(params, z);
    auto [n, oh, ow] = s.position(im, col, s.out);
    return {s.activation(im, n, row, oh, ow, s.o, s.out), Value()};
  };
  p.loadB = convInputAt(params);
  p.store = [=](OpBuilder &b, Location loc, ArrayRef<Value> z, Value, Value row,
                Value col) -> Access {
    IndexMath im{b, loc};
    return {im.madd(row, z[kN], col), Value()};
  };
  // NCHW x of channels in whole 16-byte runs: copied channels-last (read
  // by the tensor-core schedule alone).
  auto x = cast<RankedTensorType>(op.getInput().getType());
  int64_t c = x.getDimSize(1);
  Type element = x.getElementType();
  if (params.nchw && (element.isF16() || element.isBF16() || element.isF32()) &&
      !ShapedType::isDynamic(c) && c % kWholeRun == 0)
    p.channelsLast = channelsLastGradFilterOperands(params, c, p);
  return p;
}

/// The product of any of the four ops, or failure.
FailureOr<Product> getAnyProduct(Operation *op) {
  return llvm::TypeSwitch<Operation *, FailureOr<Product>>(op)
      .Case<MatmulOp, Conv2DOp, Conv2DBackpropInputOp, Conv2DBackpropFilterOp>(
          [](auto product) { return getProduct(product); })
      .Default([](Operation *) { return failure(); });
}

/// The axis of the product's result that its columns (N) run along, which
/// a fused bias must follow.
int64_t columnAxis(Operation *op) {
  if (auto conv = dyn_cast<Conv2DOp>(op))
    return getChannelAxis(conv.getLayout(), 4);
  return cast<RankedTensorType>(op->getResult(0).getType()).getRank() - 1;
}

} // namespace

namespace {

/// An nf.fused matmul or conv2d with a pointwise epilogue, the one kernel
/// that runs it: the product of its producer read from the fused op's
/// operands, storing the fused op's result.
struct FusedProduct {
  FusedGroup group;
  Product product;
};

FailureOr<FusedProduct> matchFusedProduct(FusedOp fused) {
  FailureOr<FusedGroup> group = matchFusedGroup(fused);
  if (failed(group) || !isa<MatmulOp, Conv2DOp>(group->producer) ||
      !group->prologue.empty() ||
      !biasOnlyOnAxis(group->epilogue, columnAxis(group->producer)))
    return failure();
  // The group yields its epilogued result and nothing else.
  Operation *yield = fused.getBody().front().getTerminator();
  if (yield->getNumOperands() != 1 || yield->getOperand(0) != group->result)
    return failure();
  FailureOr<Product> p = getAnyProduct(group->producer);
  if (failed(p))
    return failure();
  // The operands from outside the fused op.
  p->a = outerValue(fused, p->a);
  p->b = outerValue(fused, p->b);
  if (!p->a || !p->b)
    return failure();
  p->resultType = cast<RankedTensorType>(fused.getResult(0).getType());
  return FusedProduct{*group, *p};
}

} // namespace

std::optional<ProductShape>
cuda::productShapeOf(Operation *op, const GPULoweringOptions &options) {
  FailureOr<Product> p = getAnyProduct(op);
  if (failed(p))
    return std::nullopt;
  // As the producer of an nf.fused group lowered as one kernel.
  if (auto fused = dyn_cast_or_null<FusedOp>(op->getParentOp()))
    if (FailureOr<FusedProduct> f = matchFusedProduct(fused);
        succeeded(f) && f->group.producer == op)
      p = f->product;
  return shapeOf(*p, options.allowTf32, op->getLoc());
}

LogicalResult cuda::lowerProductToGPU(RewriterBase &rewriter, Operation *op,
                                      const GPULoweringOptions &options) {
  FailureOr<Product> p = getAnyProduct(op);
  if (failed(p))
    return failure();
  rewriter.setInsertionPoint(op);
  FailureOr<Value> result = emitProduct(rewriter, op, op, *p, {}, options,
                                        op->getName().stripDialect());
  if (failed(result))
    return failure();
  rewriter.replaceOp(op, *result);
  return success();
}

LogicalResult cuda::lowerFusedProductToGPU(RewriterBase &rewriter,
                                           FusedOp fused,
                                           const GPULoweringOptions &options) {
  FailureOr<FusedProduct> f = matchFusedProduct(fused);
  if (failed(f))
    return failure();
  Operation *producer = f->group.producer;
  rewriter.setInsertionPoint(fused);
  std::string name = (producer->getName().stripDialect() + "_epilogue").str();
  FailureOr<Value> result = emitProduct(rewriter, fused, producer, f->product,
                                        f->group.epilogue, options, name);
  if (failed(result))
    return failure();
  rewriter.replaceOp(fused, *result);
  return success();
}
