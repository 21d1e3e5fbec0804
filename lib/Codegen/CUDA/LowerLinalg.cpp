//===- LowerLinalg.cpp - linalg ops on tensors as GPU kernels ---*- C++ -*-===//
//
// Part of normfuse. What TOSA's lowering (and convert-elementwise-to-linalg)
// leaves that is not an nf op runs on the GPU from the same linalg IR the
// CPU runs: chains of elementwise linalg.generic ops are fused (upstream's
// elementwise fusion, a producer into its only user), and each generic whose
// loops are all parallel becomes one kernel: a grid-stride loop over the
// result's elements in memory order, each operand read through its indexing
// map (broadcasts and transposes cost no kernel of their own), a vector of
// lanes per thread where the operands allow it, and the generic's body in
// f32 (f64 for f64 data) with f16/bf16 results rounded where the body has
// them, so that results match the CPU's op for op. A splat constant is an
// immediate in the kernel.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "LinalgBody.h"
#include "LowerToGPU.h"
#include "normfuse/Codegen/Common/BufferBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

/// How a kernel reads one input of a generic, relative to the vector of
/// consecutive result elements a thread handles.
enum class Access {
  /// A splat constant: an immediate.
  Splat,
  /// Consecutive elements (the result's innermost loop is the operand's
  /// innermost dimension): one vector load.
  Contiguous,
  /// One element for the whole vector (the operand does not depend on the
  /// result's innermost loop): one load.
  Broadcast,
  /// Elements apart (a transpose): one load per lane.
  Gather,
};

struct Input {
  Access access;
  AffineMap map;
  /// The operand is laid out as the result is (same shape and map): it is
  /// read at the result's flat index.
  bool likeResult = false;
  /// The earlier input that reads the same operand the same way, or -1.
  int64_t sameAs = -1;
  /// Flat buffer (not for a splat), and the operand's strides in elements
  /// (host values: constants where the sizes are known).
  Value buffer;
  SmallVector<Value> strides;
  /// The immediate of a splat, in the compute type.
  TypedAttr splat;
};

/// Why the all-parallel `generic` cannot become an elementwise kernel, or "".
std::string whyNotElementwise(linalg::GenericOp generic) {
  std::string why = whyNotKernelGeneric(generic);
  if (!why.empty())
    return why;
  if (generic.getNumDpsInits() != 1)
    return "has " + std::to_string(generic.getNumDpsInits()) +
           " results and no reduction";
  for (OpOperand &in : generic->getOpOperands())
    for (AffineExpr e : generic.getMatchingIndexingMap(&in).getResults())
      if (!asDimTerm(e))
        return "reads an operand through a window (a sum of dimensions) "
               "while none of its loops reduces";
  AffineMap out = generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  if (!out.isPermutation())
    return "writes its result through an indexing map that is not a "
           "permutation";
  return "";
}

/// How a kernel reads an operand through `map` (not a splat), given the
/// result's innermost loop `inner` (-1 for a 0-d result).
Access accessOf(AffineMap map, int64_t inner) {
  std::optional<DimTerm> last;
  if (map.getNumResults())
    last = asDimTerm(map.getResults().back());
  if (last && last->dim == inner && inner >= 0 && last->scale == 1 &&
      last->offset == 0)
    return Access::Contiguous;
  if (inner < 0 || !map.isFunctionOfDim(inner))
    return Access::Broadcast;
  return Access::Gather;
}

/// The operands the kernel of the all-parallel `generic` reads: its
/// inputs, and its init where the body reads it.
SmallVector<OpOperand *> readOperands(linalg::GenericOp generic) {
  SmallVector<OpOperand *> reads(generic.getDpsInputOperands());
  OpOperand *init = generic.getDpsInitOperand(0);
  if (generic.payloadUsesValueFromOperand(init))
    reads.push_back(init);
  return reads;
}

/// The result's innermost loop (-1 for a 0-d result).
int64_t innermostLoop(linalg::GenericOp generic) {
  AffineMap out = generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  if (!out.getNumResults())
    return -1;
  return cast<AffineDimExpr>(out.getResults().back()).getPosition();
}

/// Dimension `d` of `buffer` on the host: a constant where it is static.
Value hostDim(OpBuilder &b, Location loc, Value buffer, int64_t d) {
  return b.createOrFold<memref::DimOp>(loc, buffer, d);
}

/// Replaces the all-parallel `generic` by its kernel. Sizes unknown when
/// the kernel is generated are kernel arguments (Kernel::size); where every
/// size is known the kernel's index arithmetic is on constants.
LogicalResult lowerGeneric(RewriterBase &rewriter, linalg::GenericOp generic) {
  std::string why = whyNotElementwise(generic);
  if (!why.empty())
    return generic.emitOpError() << "cannot run on the CUDA target: it " << why;
  Location loc = generic.getLoc();
  rewriter.setInsertionPoint(generic);
  OpBuilder &b = rewriter;
  IndexMath hm{b, loc};
  auto module = generic->getParentOfType<ModuleOp>();
  OpOperand *init = generic.getDpsInitOperand(0);
  auto type = cast<RankedTensorType>(generic.getResult(0).getType());
  int64_t rank = type.getRank();
  // The result's sizes (its init's, which a tensor.empty names).
  SmallVector<Value> resultDims, dynamicSizes;
  for (int64_t r = 0; r < rank; ++r) {
    resultDims.push_back(type.isDynamicDim(r) ? b.createOrFold<tensor::DimOp>(
                                                    loc, init->get(), r)
                                              : hm.c(type.getDimSize(r)));
    if (type.isDynamicDim(r))
      dynamicSizes.push_back(resultDims.back());
  }
  Value hostTotal = hm.c(1);
  for (Value d : resultDims)
    hostTotal = hm.product(hostTotal, d);
  int64_t total = constantOr(hostTotal);
  auto allocResult = [&] {
    return b.create<memref::AllocOp>(
        loc, MemRefType::get(type.getShape(), type.getElementType()),
        dynamicSizes, b.getI64IntegerAttr(64));
  };
  if (total == 0) {
    rewriter.replaceOp(generic, toTensor(b, loc, allocResult()));
    return success();
  }
  AffineMap outMap = generic.getMatchingIndexingMap(init);
  SmallVector<int64_t> bounds = generic.getStaticLoopRanges();
  // Loop dimension of each result dimension, and the innermost one.
  SmallVector<int64_t> outDims;
  for (AffineExpr e : outMap.getResults())
    outDims.push_back(cast<AffineDimExpr>(e).getPosition());
  int64_t inner = innermostLoop(generic);
  // The schedule written on the generic first (chooseGpuSchedules), and
  // whether its vectors run over the flat tensor.
  FailureOr<PointwiseSchedule> schedule = readPointwiseSchedule(generic);
  if (failed(schedule))
    return failure();
  const PointwiseSchedule &s = *schedule;
  bool flat = genericKernelShapeOf(generic)->flat;

  // The inputs, and the result's initial value where the body reads it.
  SmallVector<OpOperand *> reads = readOperands(generic);
  SmallVector<Input> inputs;
  SmallVector<Value> args;
  for (OpOperand *operand : reads) {
    Input in;
    in.map = generic.getMatchingIndexingMap(operand);
    if (TypedAttr splat = splatOf(operand->get())) {
      in.access = Access::Splat;
      in.splat = toComputeType(b, splat);
      inputs.push_back(in);
      continue;
    }
    auto opType = cast<RankedTensorType>(operand->get().getType());
    for (auto [j, other] : llvm::enumerate(reads))
      if (int64_t(j) < int64_t(inputs.size()) &&
          other->get() == operand->get() && inputs[j].map == in.map &&
          inputs[j].sameAs < 0) {
        in = inputs[j];
        in.sameAs = j;
        break;
      }
    if (in.sameAs >= 0) {
      inputs.push_back(in);
      continue;
    }
    // Operands with the result's map have its sizes (the generic's loops
    // are theirs), known or not.
    in.likeResult = in.map == outMap && opType.getShape() == type.getShape();
    in.buffer = getBuffer(b, loc, operand->get());
    Value stride = hm.c(1);
    in.strides.assign(opType.getRank(), Value());
    for (int64_t d = opType.getRank() - 1; d >= 0; --d) {
      in.strides[d] = stride;
      stride = hm.product(stride, hostDim(b, loc, in.buffer, d));
    }
    in.access = accessOf(in.map, inner);
    args.push_back(flatten(b, loc, in.buffer));
    inputs.push_back(in);
  }

  int64_t vw = s.vectorWidth;

  // Tensors the body reads at computed positions (a gather), then the
  // result.
  SmallVector<Value> captured = capturedTensors(generic);
  unsigned firstCaptured = args.size();
  for (Value t : captured)
    args.push_back(flatten(b, loc, getBuffer(b, loc, t)));
  Value result = allocResult();
  args.push_back(flatten(b, loc, result));
  TypeRange argTypes = ValueRange(args).getTypes();
  Kernel k = createKernel(module, loc, kernelBaseName(generic, "generic"),
                          argTypes, s.blockSize, s.str());
  k.func->setAttr(kMinBlocksAttr,
                  b.getI64IntegerAttr(s.minBlocksPerMultiprocessor));
  {
    OpBuilder &kb = k.body;
    IndexMath m{kb, loc};
    Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    Value bid = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
    Value grid = kb.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
    Value start = m.mul(m.madd(bid, s.blockSize, tid), vw);
    Value step = m.mul(grid, s.blockSize * vw);
    Value out = k.arg(args.size() - 1);
    llvm::DenseMap<Value, Value> capturedBuffers;
    for (auto [i, t] : llvm::enumerate(captured))
      capturedBuffers[t] = k.arg(firstCaptured + i);
    // The sizes in the kernel: the result's dimensions and their strides,
    // each input's strides.
    SmallVector<Value> dims, resultStrides(rank);
    for (Value d : resultDims)
      dims.push_back(k.size(kb, loc, d));
    Value stride = m.c(1);
    for (int64_t r = rank - 1; r >= 0; --r) {
      resultStrides[r] = stride;
      stride = m.product(stride, dims[r]);
    }
    Value kTotal = k.size(kb, loc, hostTotal);
    SmallVector<SmallVector<Value>> inputStrides;
    for (const Input &in : inputs) {
      inputStrides.emplace_back();
      for (Value st : in.strides)
        inputStrides.back().push_back(k.size(kb, loc, st));
    }
    // `width` result elements from element i.
    auto chunk = [&](OpBuilder &fb, Location fl, Value i, int64_t width) {
      IndexMath f{fb, fl};
      // The loop indices of flat element `at`, as needed, kept in `cache`.
      auto indexOf = [&](Value at, SmallVector<Value> &cache,
                         int64_t dim) -> Value {
        if (cache[dim])
          return cache[dim];
        int64_t r = llvm::find(outDims, dim) - outDims.begin();
        Value v = f.div(at, resultStrides[r]);
        if (r > 0)
          v = f.rem(v, dims[r]);
        return cache[dim] = v;
      };
      // The vector's first element's.
      SmallVector<Value> index(bounds.size());
      auto loopIndex = [&](int64_t dim) { return indexOf(i, index, dim); };
      auto offsetOf = [&](int64_t input, bool withInner) {
        const Input &in = inputs[input];
        ArrayRef<Value> strides = inputStrides[input];
        // Terms of known strides fold into constants as the IR is built.
        int64_t constant = 0;
        Value offset;
        auto add = [&](Value term) {
          offset = offset ? f.add(offset, term) : term;
        };
        auto times = [&](Value stride, int64_t k) {
          std::optional<int64_t> c = getConstantIntValue(stride);
          return c ? f.c(*c * k) : f.mul(stride, k);
        };
        for (auto [d, e] : llvm::enumerate(in.map.getResults())) {
          DimTerm t = *asDimTerm(e);
          if (std::optional<int64_t> c = getConstantIntValue(strides[d]))
            constant += t.offset * *c;
          else if (t.offset != 0)
            add(f.mul(strides[d], t.offset));
          if (t.dim < 0 || (t.dim == inner && !withInner))
            continue;
          add(f.mul(loopIndex(t.dim), times(strides[d], t.scale)));
        }
        if (!offset)
          return f.c(constant);
        return constant ? f.add(offset, f.c(constant)) : offset;
      };
      SmallVector<SmallVector<Value>> lanes;
      unsigned nextArg = 0;
      for (auto [n, in] : llvm::enumerate(inputs)) {
        if (in.sameAs >= 0) {
          lanes.push_back(lanes[in.sameAs]);
          continue;
        }
        if (in.access == Access::Splat) {
          Value c = fb.create<arith::ConstantOp>(fl, in.splat);
          lanes.emplace_back(width, c);
          continue;
        }
        Value buffer = k.arg(nextArg++);
        Type compute =
            computeType(cast<MemRefType>(buffer.getType()).getElementType());
        if (in.access == Access::Broadcast) {
          Value v =
              loadLanes(fb, fl, buffer, offsetOf(n, false), 1, compute)[0];
          lanes.emplace_back(width, v);
          continue;
        }
        Value offset = in.likeResult ? i : offsetOf(n, true);
        lanes.push_back(loadLanes(fb, fl, buffer, offset, width, compute));
      }
      SmallVector<Value> results;
      for (int64_t l = 0; l < width; ++l) {
        // A lane's loop indices (where the body reads them): the first
        // element's, the innermost one plus the lane where the vector lies
        // in one row; a flat vector may cross rows, so its lanes' own.
        SmallVector<Value> laneIndex(bounds.size());
        auto laneLoopIndex = [&](int64_t dim) -> Value {
          if (l == 0)
            return loopIndex(dim);
          if (flat)
            return indexOf(f.add(i, f.c(l)), laneIndex, dim);
          Value v = loopIndex(dim);
          return dim == inner ? f.add(v, f.c(l)) : v;
        };
        SmallVector<Value> laneArgs;
        for (auto &v : lanes)
          laneArgs.push_back(v[l]);
        // A body that reads no init still has its block argument.
        while (laneArgs.size() < generic.getBody()->getNumArguments())
          laneArgs.push_back(Value());
        results.push_back(emitBody(fb, fl, generic, laneArgs, laneLoopIndex,
                                   nullptr, Value(), &capturedBuffers));
      }
      storeLanes(fb, fl, results, out, i);
    };
    // The vectors; with a peel, the tail's elements one per thread.
    Value vectorEnd = !s.peeled ? kTotal
                      : !ShapedType::isDynamic(total)
                          ? m.c(total - total % vw)
                          : m.sub(kTotal, m.rem(kTotal, vw));
    kb.create<scf::ForOp>(loc, start, vectorEnd, step, ValueRange{},
                          [&](OpBuilder &fb, Location fl, Value i, ValueRange) {
                            chunk(fb, fl, i, vw);
                            fb.create<scf::YieldOp>(fl);
                          });
    if (s.peeled) {
      Value e = m.add(m.madd(bid, s.blockSize, tid), vectorEnd);
      kb.create<scf::IfOp>(loc, m.below(e, kTotal),
                           [&](OpBuilder &tb, Location tl) {
                             chunk(tb, tl, e, 1);
                             tb.create<scf::YieldOp>(tl);
                           });
    }
  }

  // As many blocks as cover the vectors, at most maxBlocks; none for an
  // empty result.
  Value blocks = b.createOrFold<arith::MinUIOp>(
      loc, hm.ceilDiv(hostTotal, s.blockSize * vw), hm.c(s.maxBlocks));
  launchUnlessEmpty(b, loc, k, blocks, s.blockSize, args, hostTotal);
  rewriter.replaceOp(generic, toTensor(b, loc, result));
  return success();
}

} // namespace

void cuda::fuseElementwiseLinalg(func::FuncOp function) {
  if (!function.walk([](linalg::GenericOp) { return WalkResult::interrupt(); })
           .wasInterrupted())
    return;
  RewritePatternSet patterns(function.getContext());
  // A producer joins its only user: one with several users would be
  // computed again in each.
  auto onlyUser = [](OpOperand *operand) {
    Operation *producer = operand->get().getDefiningOp();
    return producer && producer->hasOneUse();
  };
  linalg::populateElementwiseOpsFusionPatterns(patterns, onlyUser);
  // Elementwise ops on constants alone (a negated epsilon) are folded
  // here, not computed by a kernel on every call.
  linalg::populateConstantFoldLinalgOperations(patterns, onlyUser);
  (void)applyPatternsAndFoldGreedily(function, std::move(patterns));
}

/// Whether `fill` only gives reductions their initial value: they take its
/// constant as an immediate, and it needs no kernel of its own.
static bool onlyInitializesReductions(linalg::FillOp fill) {
  if (!matchPattern(fill.getInputs()[0], m_Constant()))
    return false;
  return llvm::all_of(fill->getUses(), [](OpOperand &use) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(use.getOwner());
    return linalgOp && linalgOp.getNumReductionLoops() != 0 &&
           linalgOp.isDpsInit(&use);
  });
}

std::optional<GenericKernelShape> cuda::genericKernelShapeOf(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumReductionLoops() != 0 ||
      !whyNotElementwise(generic).empty())
    return std::nullopt;
  auto type = cast<RankedTensorType>(generic.getResult(0).getType());
  int64_t rank = type.getRank();
  AffineMap outMap =
      generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  int64_t inner = innermostLoop(generic);
  GenericKernelShape shape;
  shape.widest = type.getElementType();
  // (An operand read twice the same way counts as once: the same facts.)
  for (OpOperand *operand : readOperands(generic)) {
    if (splatOf(operand->get()))
      continue;
    auto opType = cast<RankedTensorType>(operand->get().getType());
    AffineMap map = generic.getMatchingIndexingMap(operand);
    if (opType.getElementTypeBitWidth() > shape.widest.getIntOrFloatBitWidth())
      shape.widest = opType.getElementType();
    shape.flat &= map == outMap && opType.getShape() == type.getShape();
    Access access = accessOf(map, inner);
    shape.gather |= access == Access::Gather;
    if (access == Access::Contiguous && opType.getRank() > 1)
      shape.rows.push_back(opType.getDimSize(opType.getRank() - 1));
  }
  // Vectors over the flat tensor, else within the innermost dimension.
  shape.elements = !shape.flat ? (rank ? type.getDimSize(rank - 1) : 1)
                   : type.hasStaticShape() ? type.getNumElements()
                                           : ShapedType::kDynamic;
  return shape;
}

LogicalResult cuda::lowerLinalgToGPU(RewriterBase &rewriter, Operation *op,
                                     const GPULoweringOptions &options) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    if (onlyInitializesReductions(fill))
      return success();
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return generic.getNumReductionLoops() != 0
               ? lowerLinalgReduction(rewriter, generic, options)
               : lowerGeneric(rewriter, generic);
  // (generalizeNamedLinalg made every named op it could a generic.)
  if (!isa<linalg::LinalgOp>(op))
    return failure();
  return op->emitOpError() << "cannot run on the CUDA target: it has no "
                              "generic form to lower";
}

void cuda::generalizeNamedLinalg(func::FuncOp function,
                                 RewriterBase &rewriter) {
  SmallVector<linalg::LinalgOp> named;
  function.walk([&](linalg::LinalgOp op) {
    auto fill = dyn_cast<linalg::FillOp>(op.getOperation());
    if (!isa<linalg::GenericOp>(op.getOperation()) &&
        !(fill && onlyInitializesReductions(fill)))
      named.push_back(op);
  });
  for (linalg::LinalgOp op : named) {
    rewriter.setInsertionPoint(op);
    (void)linalg::generalizeNamedOp(rewriter, op);
  }
}
