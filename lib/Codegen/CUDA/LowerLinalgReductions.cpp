//===- LowerLinalgReductions.cpp - linalg reductions as GPU kernels -*- C++
//-*-===//
//
// Part of normfuse. A linalg.generic that reduces (what tosa.reduce_sum,
// _max, _min, _prod and the pooling TOSA writes as linalg.reduce become,
// with any elementwise producer fused into it) runs as one kernel, in a
// fixed order, so that results do not vary from run to run:
//  - where the reduced elements of one result are contiguous in memory (the
//    input's innermost dimension is reduced), a warp per result: each lane
//    combines every 32nd element (every 32nd vector of up to 4, its
//    elements in order, where every operand reads the reduced elements at
//    unit stride: schedule.vectorWidth), then a butterfly of shuffles
//    combines the lanes; a block per result for long rows, its warps'
//    values combined in warp order through shared memory;
//  - otherwise (a reduction over an outer dimension), a block per 32
//    neighbouring results: a lane per result, so that neighbouring lanes
//    read neighbouring addresses, the block's warps taking every 8th (or
//    32nd) element of it, their values combined in warp order through
//    shared memory; or, where the results fill the device and each has
//    few elements, a thread per result walking them.
// Sums are kept in f64 whatever the storage type (as the CPU takes them:
// a sum of 32768 f32 elements of mean 100 loses a few units in the last
// place of the mean in f32, which a LayerNorm of std 0.01 turns into 1e-3),
// other partial results in f32 (f64 for f64 data); each is rounded once
// when stored. Integer sums, products, extrema and bitwise reductions
// (TOSA's reduce_all and reduce_any) are exact in their own type, wrapping
// as the CPU's do. An argmax or argmin (two results: the index and the
// value) is a maximum of 64-bit keys, the value's order above the index's
// complement (ArgExtremum). Any other body whose combining op is not one
// of these (or that is not of the form out = op(out, f(in))) runs as
// written, op by op, on a thread per result. Operands may be read through
// windows (`d1 * stride + d4 * dilation`: pooling, depthwise and other
// convolutions left as linalg). Sizes unknown when the kernel is generated are
// kernel arguments (each loop's size from an operand dimension that is that
// loop).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "LinalgBody.h"
#include "LowerToGPU.h"
#include "normfuse/Codegen/Common/BufferBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

constexpr int64_t kWarpSize = GpuTarget::kWarpSize;

/// The op that folds each element into the result (`out = combine(out,
/// partial)`), where it is associative and commutative, so that partial
/// results can be combined in a tree.
struct Combiner {
  Operation *op = nullptr;
  /// The element's contribution (the operand that is not the result).
  Value partial;
};

Combiner findCombiner(linalg::GenericOp generic) {
  if (generic.getNumDpsInits() != 1)
    return {};
  Block *body = generic.getBody();
  BlockArgument out = body->getArguments().back();
  Value yielded = cast<linalg::YieldOp>(body->getTerminator()).getOperand(0);
  Operation *op = yielded.getDefiningOp();
  if (!op || op->getBlock() != body || !out.hasOneUse() ||
      !isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp, arith::AddIOp, arith::MulIOp,
           arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp,
           arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op) ||
      op->getNumOperands() != 2)
    return {};
  Value a = op->getOperand(0), b = op->getOperand(1);
  if (a == out && b != out)
    return {op, b};
  if (b == out && a != out)
    return {op, a};
  return {};
}

/// An argmax or argmin (what tosa.argmax becomes): two results, an index
/// and a value, both selected where the element compares strictly greater
/// (less) than the value so far; the index is that of the one reduced
/// loop. Run serially, it keeps the first index of the extreme, and the
/// initial value and index where no element passes it (NaN never does).
///
/// As a tree, each element is packed into one unsigned 64-bit key whose
/// maximum is the answer: an order-preserving 32-bit image of the value
/// (complemented for a minimum; 0 for NaN) above the complement of the
/// index (the first index wins a tie). The unpacked value and index then
/// replace the initial ones where the value passes the initial value. (A
/// value result of -0 comes back as +0, which compares equal.)
struct ArgExtremum {
  Operation *compare = nullptr;
  arith::SelectOp selectValue, selectIndex;
  /// The element's value, as the body computes it from the inputs.
  Value element;
  unsigned valueResult = 0, indexResult = 0;
  bool greater = true;
  /// How the values compare: as floats, signed or unsigned integers.
  enum class Order { Float, Signed, Unsigned } order = Order::Float;
};

std::optional<ArgExtremum> findArgExtremum(linalg::GenericOp generic) {
  SmallVector<unsigned> reductionDims;
  generic.getReductionDims(reductionDims);
  if (generic.getNumDpsInits() != 2 || reductionDims.size() != 1)
    return std::nullopt;
  Block *body = generic.getBody();
  unsigned numInputs = generic.getNumDpsInputs();
  BlockArgument outs[2] = {body->getArgument(numInputs),
                           body->getArgument(numInputs + 1)};
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  ArgExtremum a;
  for (unsigned i = 0; i < 2; ++i) {
    auto select = yield.getOperand(i).getDefiningOp<arith::SelectOp>();
    if (!select || select.getFalseValue() != outs[i])
      return std::nullopt;
    auto cast = select.getTrueValue().getDefiningOp<arith::IndexCastOp>();
    auto index = cast ? cast.getIn().getDefiningOp<linalg::IndexOp>()
                      : linalg::IndexOp();
    if (index) {
      if (index.getDim() != reductionDims[0] || a.selectIndex)
        return std::nullopt;
      a.selectIndex = select;
      a.indexResult = i;
    } else {
      a.selectValue = select;
      a.valueResult = i;
      a.element = select.getTrueValue();
    }
  }
  if (!a.selectIndex || !a.selectValue ||
      a.selectIndex.getCondition() != a.selectValue.getCondition())
    return std::nullopt;
  // The comparison reads the element and the value so far, in that order.
  Value condition = a.selectValue.getCondition();
  Operation *compare = condition.getDefiningOp();
  if (!compare || compare->getBlock() != body ||
      compare->getNumOperands() != 2 || compare->getOperand(0) != a.element ||
      compare->getOperand(1) != outs[a.valueResult])
    return std::nullopt;
  a.compare = compare;
  // Nothing else reads the results so far.
  for (Operation *user : outs[a.valueResult].getUsers())
    if (user != compare && user != a.selectValue.getOperation())
      return std::nullopt;
  if (!outs[a.indexResult].hasOneUse())
    return std::nullopt;
  if (auto f = dyn_cast<arith::CmpFOp>(compare)) {
    if (f.getPredicate() != arith::CmpFPredicate::OGT &&
        f.getPredicate() != arith::CmpFPredicate::OLT)
      return std::nullopt;
    a.greater = f.getPredicate() == arith::CmpFPredicate::OGT;
    // The key holds an f32 image: f16, bf16 and f32 values.
    if (computeType(a.element.getType()) != Float32Type::get(f.getContext()))
      return std::nullopt;
  } else if (auto c = dyn_cast<arith::CmpIOp>(compare)) {
    using P = arith::CmpIPredicate;
    P p = c.getPredicate();
    if (p != P::sgt && p != P::slt && p != P::ugt && p != P::ult)
      return std::nullopt;
    a.greater = p == P::sgt || p == P::ugt;
    a.order = p == P::sgt || p == P::slt ? ArgExtremum::Order::Signed
                                         : ArgExtremum::Order::Unsigned;
    if (a.element.getType().getIntOrFloatBitWidth() > 32)
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  // The index's type holds every index the key does.
  auto indexType =
      dyn_cast<IntegerType>(a.selectIndex.getTrueValue().getType());
  int64_t extent = generic.getStaticLoopRanges()[reductionDims[0]];
  if (!indexType || (indexType.getWidth() > 32 &&
                     (ShapedType::isDynamic(extent) || extent > UINT32_MAX)))
    return std::nullopt;
  return a;
}

/// The 32-bit key of value `v` (in the compute type), as an i32: larger
/// for a better value, 0 for NaN.
Value argKey(OpBuilder &b, Location loc, const ArgExtremum &a, Value v) {
  Type i32 = b.getI32Type();
  auto c32 = [&](uint32_t x) {
    return b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(int32_t(x)));
  };
  Value key;
  if (a.order == ArgExtremum::Order::Float) {
    // -0 and +0 compare equal: one key (the first index wins), +0's.
    Value zero = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(0.0f));
    Value isZero =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, v, zero);
    Value canonical = b.create<arith::SelectOp>(loc, isZero, zero, v);
    // Negative floats order backwards in their bits: complemented; the
    // others above them (the sign bit set).
    Value bits = b.create<arith::BitcastOp>(loc, i32, canonical);
    Value negative =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, bits, c32(0));
    key = b.create<arith::SelectOp>(
        loc, negative, b.create<arith::XOrIOp>(loc, bits, c32(0xffffffffu)),
        b.create<arith::OrIOp>(loc, bits, c32(0x80000000u)));
  } else {
    bool isSigned = a.order == ArgExtremum::Order::Signed;
    if (v.getType() != i32)
      v = isSigned ? b.create<arith::ExtSIOp>(loc, i32, v).getResult()
                   : b.create<arith::ExtUIOp>(loc, i32, v).getResult();
    // Signed values: the sign bit flipped orders them as unsigned.
    key = isSigned
              ? b.create<arith::XOrIOp>(loc, v, c32(0x80000000u)).getResult()
              : v;
  }
  if (!a.greater)
    key = b.create<arith::XOrIOp>(loc, key, c32(0xffffffffu));
  // An integer key of 0 (the smallest value, or for a minimum the largest)
  // is never the answer either: no element passes the identity.
  if (a.order == ArgExtremum::Order::Float) {
    Value nan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, v, v);
    key = b.create<arith::SelectOp>(loc, nan, c32(0), key);
  }
  return key;
}

/// Element `v` at index `j` (an index value) packed for the maximum.
Value argPack(OpBuilder &b, Location loc, const ArgExtremum &a, Value v,
              Value j) {
  Type i64 = b.getI64Type();
  Value key = b.create<arith::ExtUIOp>(loc, i64, argKey(b, loc, a, v));
  Value index = b.create<arith::IndexCastUIOp>(loc, i64, j);
  Value low = b.create<arith::SubIOp>(
      loc, b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(0xffffffffll)),
      index);
  return b.create<arith::OrIOp>(
      loc,
      b.create<arith::ShLIOp>(
          loc, key, b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(32))),
      low);
}

/// The results (in `generic`'s order, compute types) of the packed maximum
/// `packed` and the initial values `initials`.
SmallVector<Value> argUnpack(OpBuilder &b, Location loc, const ArgExtremum &a,
                             Value packed, ArrayRef<Value> initials) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto c32 = [&](uint32_t x) {
    return b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(int32_t(x)));
  };
  auto c64 = [&](int64_t x) {
    return b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(x));
  };
  Value key = b.create<arith::TruncIOp>(
      loc, i32, b.create<arith::ShRUIOp>(loc, packed, c64(32)));
  Value found =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, key, c32(0));
  if (!a.greater)
    key = b.create<arith::XOrIOp>(loc, key, c32(0xffffffffu));
  Value initialValue = initials[a.valueResult];
  Type valueType = initialValue.getType();
  Value value;
  if (a.order == ArgExtremum::Order::Float) {
    Value high =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, key, c32(0));
    Value bits = b.create<arith::SelectOp>(
        loc, high, b.create<arith::AndIOp>(loc, key, c32(0x7fffffffu)),
        b.create<arith::XOrIOp>(loc, key, c32(0xffffffffu)));
    value = b.create<arith::BitcastOp>(loc, b.getF32Type(), bits);
  } else {
    value =
        a.order == ArgExtremum::Order::Signed
            ? b.create<arith::XOrIOp>(loc, key, c32(0x80000000u)).getResult()
            : key;
    if (valueType != i32)
      value = b.create<arith::TruncIOp>(loc, valueType, value);
  }
  Value index = b.create<arith::SubIOp>(
      loc, c64(0xffffffffll),
      b.create<arith::AndIOp>(loc, packed, c64(0xffffffffll)));
  Value initialIndex = initials[a.indexResult];
  Type indexType = initialIndex.getType();
  if (indexType != i64)
    index = b.create<arith::TruncIOp>(loc, indexType, index);
  // As the serial loop: the element replaces the initial value only where
  // it compares so against it.
  Operation *passes = b.clone(*a.compare);
  passes->setOperands({value, initialValue});
  Value take = b.create<arith::AndIOp>(loc, found, passes->getResult(0));
  SmallVector<Value> results(2);
  results[a.valueResult] =
      b.create<arith::SelectOp>(loc, take, value, initialValue);
  results[a.indexResult] =
      b.create<arith::SelectOp>(loc, take, index, initialIndex);
  return results;
}

/// The combining op's identity, in the compute type.
Value identityOf(OpBuilder &b, Location loc, Operation *op, Type type) {
  if (auto it = dyn_cast<IntegerType>(type)) {
    unsigned w = it.getWidth();
    APInt v = isa<arith::MulIOp>(op)                   ? APInt(w, 1)
              : isa<arith::AndIOp, arith::MinUIOp>(op) ? APInt::getAllOnes(w)
              : isa<arith::MaxSIOp>(op) ? APInt::getSignedMinValue(w)
              : isa<arith::MinSIOp>(op) ? APInt::getSignedMaxValue(w)
                                        : APInt::getZero(w);
    return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(it, v));
  }
  auto ft = cast<FloatType>(type);
  double v = isa<arith::AddFOp>(op)                         ? 0.0
             : isa<arith::MulFOp>(op)                       ? 1.0
             : isa<arith::MaximumFOp, arith::MaxNumFOp>(op) ? -INFINITY
                                                            : INFINITY;
  return b.create<arith::ConstantOp>(loc, b.getFloatAttr(ft, v));
}

/// `op`'s kind applied to `x` and `y` (in the compute type, not rounded).
Value combine(OpBuilder &b, Location loc, Operation *op, Value x, Value y) {
  OperationState state(loc, op->getName(), ValueRange{x, y}, x.getType(),
                       op->getAttrs());
  return b.create(state)->getResult(0);
}

/// Why the reducing `generic` cannot become a kernel, or "".
std::string whyNotReduction(linalg::GenericOp generic) {
  std::string why = whyNotKernelGeneric(generic);
  if (!why.empty())
    return why;
  AffineMap out = generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  SmallVector<unsigned> parallel;
  generic.getParallelDims(parallel);
  if (!out.isProjectedPermutation() || out.getNumResults() != parallel.size())
    return "writes its result through an indexing map that is not a "
           "permutation of its parallel dimensions";
  for (OpOperand &init : generic.getDpsInitsMutable())
    if (generic.getMatchingIndexingMap(&init) != out)
      return "writes its results through different indexing maps";
  return "";
}

/// The first input the body of `generic` reads that is a buffer (not a
/// splat), or null.
OpOperand *firstBufferInput(linalg::GenericOp generic) {
  for (OpOperand *in : generic.getDpsInputOperands())
    if (generic.payloadUsesValueFromOperand(in) && !splatOf(in->get()))
      return in;
  return nullptr;
}

/// The reduced loops of `generic`, in the order its first buffer input
/// lays them out (the last one fastest: consecutive elements of a result
/// are then consecutive in memory where that input's innermost dimension
/// is reduced), then any it does not read.
SmallVector<int64_t> reducedLoops(linalg::GenericOp generic) {
  SmallVector<unsigned> reductionDims;
  generic.getReductionDims(reductionDims);
  SmallVector<int64_t> reduced;
  if (OpOperand *first = firstBufferInput(generic))
    for (AffineExpr e : generic.getMatchingIndexingMap(first).getResults())
      if (auto d = dyn_cast<AffineDimExpr>(e))
        if (llvm::is_contained(reductionDims, d.getPosition()) &&
            !llvm::is_contained(reduced, int64_t(d.getPosition())))
          reduced.push_back(d.getPosition());
  for (unsigned d : reductionDims)
    if (!llvm::is_contained(reduced, int64_t(d)))
      reduced.push_back(d);
  return reduced;
}

/// The loop of each result dimension of `generic`.
SmallVector<int64_t> resultLoops(linalg::GenericOp generic) {
  SmallVector<int64_t> loops;
  for (AffineExpr e :
       generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
           .getResults())
    loops.push_back(cast<AffineDimExpr>(e).getPosition());
  return loops;
}

/// x * k, a constant where x is one.
Value times(IndexMath &m, Value x, int64_t k) {
  std::optional<int64_t> c = getConstantIntValue(x);
  return c ? m.c(*c * k) : m.mul(x, k);
}

bool isConstantZero(Value v) {
  std::optional<int64_t> c = getConstantIntValue(v);
  return c && *c == 0;
}

struct Operand {
  AffineMap map;
  /// The map's results as sums of scaled dimensions.
  SmallVector<LinearForm> forms;
  /// Strides in elements, host values (constants where the sizes are
  /// known).
  SmallVector<Value> strides;
  /// The immediate of a splat, in the compute type; null for a buffer.
  TypedAttr splat;
  /// Kernel argument number of its buffer.
  unsigned arg = 0;
};

} // namespace

std::optional<LinalgReductionShape>
cuda::linalgReductionShapeOf(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumReductionLoops() == 0 ||
      !whyNotReduction(generic).empty())
    return std::nullopt;
  SmallVector<int64_t> bounds = generic.getStaticLoopRanges();
  auto product = [&](ArrayRef<int64_t> loops) {
    int64_t n = 1;
    for (int64_t d : loops) {
      if (ShapedType::isDynamic(bounds[d]))
        return ShapedType::kDynamic;
      n *= bounds[d];
    }
    return n;
  };
  SmallVector<int64_t> reduced = reducedLoops(generic);
  LinalgReductionShape shape;
  shape.results = product(resultLoops(generic));
  shape.elements = product(reduced);
  // Partial results combine in a tree: a combiner's, or an argmax's keys.
  shape.tree = findCombiner(generic).op || findArgExtremum(generic);
  SmallVector<unsigned> reductionDims;
  generic.getReductionDims(reductionDims);
  OpOperand *first = firstBufferInput(generic);
  if (first && !generic.getMatchingIndexingMap(first).getResults().empty())
    if (auto last = dyn_cast<AffineDimExpr>(
            generic.getMatchingIndexingMap(first).getResults().back()))
      shape.contiguous = llvm::is_contained(reductionDims, last.getPosition());
  // The widest vector of a result's elements the operands allow: every
  // buffer input reads the one reduced loop as its innermost dimension,
  // at unit stride, with no window (its rows then start on whole vectors,
  // the outer strides being multiples of the row, as buffers are 16-byte
  // aligned); 16 bytes of the widest element.
  if (!shape.tree || reduced.size() != 1)
    return shape;
  int64_t widest = 1;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    if (!generic.payloadUsesValueFromOperand(in) || splatOf(in->get()))
      continue;
    ArrayRef<AffineExpr> results =
        generic.getMatchingIndexingMap(in).getResults();
    for (auto [d, e] : llvm::enumerate(results)) {
      LinearForm form = *asLinearForm(e);
      bool readsReduced = llvm::any_of(
          form.terms, [&](const DimTerm &t) { return t.dim == reduced[0]; });
      bool innermost = form.terms.size() == 1 &&
                       form.terms[0].dim == reduced[0] &&
                       form.terms[0].scale == 1;
      if (form.offset != 0 ||
          (d + 1 == results.size() ? !innermost : readsReduced))
        return shape;
    }
    // (Bools are bytes in memory, i1 in the IR: an element at a time.)
    Type element = getElementTypeOrSelf(in->get().getType());
    if (element.getIntOrFloatBitWidth() < 8)
      return shape;
    widest = std::max<int64_t>(widest, element.getIntOrFloatBitWidth() / 8);
  }
  shape.rowVector = 16 / widest;
  return shape;
}

LogicalResult cuda::lowerLinalgReduction(RewriterBase &rewriter,
                                         linalg::GenericOp generic,
                                         const GPULoweringOptions &) {
  std::string why = whyNotReduction(generic);
  if (!why.empty())
    return generic.emitOpError() << "cannot run on the CUDA target: it " << why;
  Location loc = generic.getLoc();
  rewriter.setInsertionPoint(generic);
  OpBuilder &b = rewriter;
  auto module = generic->getParentOfType<ModuleOp>();
  auto type = cast<RankedTensorType>(generic.getResult(0).getType());
  IndexMath hm{b, loc};
  SmallVector<int64_t> bounds = generic.getStaticLoopRanges();
  int64_t rank = type.getRank();
  SmallVector<int64_t> outDims = resultLoops(generic);
  // The schedule written on the generic first (chooseGpuSchedules).
  FailureOr<LinalgReductionSchedule> read =
      readLinalgReductionSchedule(generic);
  if (failed(read))
    return failure();
  const LinalgReductionSchedule &schedule = *read;
  // Each loop's size on the host: a constant where it is known, else the
  // size of an operand dimension that is exactly that loop.
  SmallVector<Value> loopSizes(bounds.size());
  for (auto [d, bound] : llvm::enumerate(bounds))
    if (!ShapedType::isDynamic(bound))
      loopSizes[d] = hm.c(bound);
  // (Inputs first: an init is usually a linalg.fill, which must keep no
  // use once the reduction is replaced.)
  SmallVector<OpOperand *> sizeSources(generic.getDpsInputOperands());
  for (OpOperand &init : generic.getDpsInitsMutable())
    sizeSources.push_back(&init);
  for (OpOperand *operand : sizeSources) {
    if (!isa<RankedTensorType>(operand->get().getType()))
      continue;
    for (auto [p, e] :
         llvm::enumerate(generic.getMatchingIndexingMap(operand).getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(e);
          dim && !loopSizes[dim.getPosition()])
        loopSizes[dim.getPosition()] =
            b.createOrFold<tensor::DimOp>(loc, operand->get(), p);
  }
  for (Value size : loopSizes)
    if (!size)
      return generic.emitOpError()
             << "cannot run on the CUDA target: a loop of unknown size reads "
                "its operands only through windows";
  Value hostResults = hm.c(1);
  for (int64_t d : outDims)
    hostResults = hm.product(hostResults, loopSizes[d]);
  int64_t results = constantOr(hostResults);

  // The operands: inputs (null where the body does not read one: the
  // window shape of a pooling), then the initial values that are not
  // splats.
  SmallVector<std::optional<Operand>> operands;
  SmallVector<Value> args;
  auto makeOperand = [&](OpOperand *operand, Value value) {
    Operand o;
    o.map = generic.getMatchingIndexingMap(operand);
    for (AffineExpr e : o.map.getResults())
      o.forms.push_back(*asLinearForm(e));
    if (TypedAttr splat = splatOf(value)) {
      o.splat = toComputeType(b, splat);
      return o;
    }
    auto opType = cast<RankedTensorType>(value.getType());
    Value buffer = getBuffer(b, loc, value);
    o.strides.assign(opType.getRank(), Value());
    Value stride = hm.c(1);
    for (int64_t d = opType.getRank() - 1; d >= 0; --d) {
      o.strides[d] = stride;
      stride =
          hm.product(stride, b.createOrFold<memref::DimOp>(loc, buffer, d));
    }
    o.arg = args.size();
    args.push_back(flatten(b, loc, buffer));
    return o;
  };
  for (OpOperand *in : generic.getDpsInputOperands())
    operands.push_back(generic.payloadUsesValueFromOperand(in)
                           ? std::optional(makeOperand(in, in->get()))
                           : std::nullopt);
  // A linalg.fill of a constant (what TOSA's reductions start from) is an
  // immediate; its kernel, if any, is never launched.
  SmallVector<Operand> inits;
  for (OpOperand &init : generic.getDpsInitsMutable()) {
    Value initValue = init.get();
    if (auto fill = initValue.getDefiningOp<linalg::FillOp>())
      if (matchPattern(fill.getInputs()[0], m_Constant()))
        initValue = fill.getInputs()[0];
    inits.push_back(makeOperand(&init, initValue));
  }

  // The reduced loops, the first buffer input's innermost last.
  SmallVector<unsigned> reductionDims;
  generic.getReductionDims(reductionDims);
  SmallVector<int64_t> reduced = reducedLoops(generic);
  Value hostPerResult = hm.c(1);
  for (int64_t d : reduced)
    hostPerResult = hm.product(hostPerResult, loopSizes[d]);
  int64_t perResult = constantOr(hostPerResult);

  Combiner combiner = findCombiner(generic);
  std::optional<ArgExtremum> arg =
      combiner.op ? std::nullopt : findArgExtremum(generic);
  // Partial results combine in a tree: a combiner's, or an argmax's keys.
  bool tree = combiner.op || arg;
  // The partial results' types: a combiner's (f64 for sums), else each
  // result's compute type.
  SmallVector<Type> partialTypes;
  for (Value r : generic.getResults())
    partialTypes.push_back(
        computeType(cast<RankedTensorType>(r.getType()).getElementType()));
  if (combiner.op && isa<arith::AddFOp>(combiner.op))
    partialTypes[0] = b.getF64Type();
  if (arg)
    partialTypes[0] = b.getI64Type();
  Type partialType = partialTypes[0];
  auto widen = [&](OpBuilder &wb, Location wl, Value v) -> Value {
    return v.getType() == partialType
               ? v
               : wb.create<arith::ExtFOp>(wl, partialType, v);
  };
  // The tree's identity and combination of two partial results.
  auto identity = [&](OpBuilder &ib, Location il) -> Value {
    if (arg)
      return ib.create<arith::ConstantOp>(il, ib.getI64IntegerAttr(0));
    return identityOf(ib, il, combiner.op, partialType);
  };
  auto combineTree = [&](OpBuilder &cb, Location cl, Value x,
                         Value y) -> Value {
    if (arg)
      return cb.create<arith::MaxUIOp>(cl, x, y);
    return combine(cb, cl, combiner.op, x, y);
  };
  // The results (compute types) of a tree's total and the initial values.
  auto finalValues = [&](OpBuilder &fb, Location fl, ArrayRef<Value> initials,
                         Value total) -> SmallVector<Value> {
    if (arg)
      return argUnpack(fb, fl, *arg, total, initials);
    return {combine(fb, fl, combiner.op, widen(fb, fl, initials[0]), total)};
  };
  using Kind = LinalgReductionSchedule::Kind;
  int64_t vectorLanes = schedule.vectorWidth;
  // Threads that share a result, and which of them this one is.
  bool columns = schedule.kind == Kind::BlockColumns;
  int64_t sharing = schedule.kind == Kind::ThreadPerResult || columns ? 1
                    : schedule.kind == Kind::WarpPerResult ? kWarpSize
                                                           : schedule.blockSize;
  // Block columns: the warps that share each result.
  int64_t warps = schedule.blockSize / kWarpSize;
  // Each result's parts (schedule.splits): `chunk` elements each, a
  // multiple of the threads (warps) that share a result, none empty where
  // the elements are known (else a run-time share: a part past the end
  // gives the combiner's identity).
  int64_t splits = tree ? schedule.splits : 1;
  Value hostChunk = hostPerResult;
  if (splits > 1) {
    int64_t align = (columns ? warps : sharing) * vectorLanes;
    if (!ShapedType::isDynamic(perResult)) {
      int64_t chunk = llvm::alignTo(llvm::divideCeil(perResult, splits), align);
      splits = llvm::divideCeil(perResult, chunk);
      hostChunk = hm.c(chunk);
    } else {
      hostChunk =
          hm.mul(hm.ceilDiv(hm.ceilDiv(hostPerResult, splits), align), align);
    }
  }

  // Tensors the body reads at computed positions (a gather), then the
  // results.
  SmallVector<Value> captured = capturedTensors(generic);
  unsigned firstCaptured = args.size();
  for (Value t : captured)
    args.push_back(flatten(b, loc, getBuffer(b, loc, t)));
  SmallVector<Value> resultBuffers;
  unsigned firstOut = args.size();
  SmallVector<Value> resultSizes;
  for (int64_t d = 0; d < rank; ++d)
    if (type.isDynamicDim(d))
      resultSizes.push_back(loopSizes[outDims[d]]);
  for (Value r : generic.getResults()) {
    auto resultType = cast<RankedTensorType>(r.getType());
    resultBuffers.push_back(b.create<memref::AllocOp>(
        loc,
        MemRefType::get(resultType.getShape(), resultType.getElementType()),
        resultSizes, b.getI64IntegerAttr(64)));
    args.push_back(flatten(b, loc, resultBuffers.back()));
  }
  // Split results: each part's partial result, part-minor.
  unsigned partialsArg = args.size();
  if (splits > 1)
    args.push_back(allocTemporary(
        b, loc, indexConstant(b, loc, results * splits), partialType));
  auto replace = [&] {
    SmallVector<Value> tensors;
    for (Value buffer : resultBuffers)
      tensors.push_back(toTensor(b, loc, buffer));
    rewriter.replaceOp(generic, tensors);
  };
  if (results == 0) {
    replace();
    return success();
  }
  // The sizes inside a kernel (Kernel::size: constants where known):
  // each loop's size, the strides of the results' and the reduced loops'
  // flat indices, each operand's strides.
  struct KernelSizes {
    SmallVector<Value> loops, resultStrides, reducedStrides;
    Value results, perResult, chunk;
    llvm::DenseMap<const Operand *, SmallVector<Value>> strides;
  };
  auto kernelSizes = [&](Kernel &k) {
    OpBuilder &kb = k.body;
    IndexMath m{kb, loc};
    KernelSizes z;
    for (Value size : loopSizes)
      z.loops.push_back(k.size(kb, loc, size));
    z.results = k.size(kb, loc, hostResults);
    z.perResult = k.size(kb, loc, hostPerResult);
    z.chunk = k.size(kb, loc, hostChunk);
    z.resultStrides.assign(rank, Value());
    Value stride = m.c(1);
    for (int64_t d = rank - 1; d >= 0; --d) {
      z.resultStrides[d] = stride;
      stride = m.product(stride, z.loops[outDims[d]]);
    }
    z.reducedStrides.assign(reduced.size(), Value());
    stride = m.c(1);
    for (int64_t i = reduced.size() - 1; i >= 0; --i) {
      z.reducedStrides[i] = stride;
      stride = m.product(stride, z.loops[reduced[i]]);
    }
    auto add = [&](const Operand &o) {
      SmallVector<Value> &s = z.strides[&o];
      for (Value st : o.strides)
        s.push_back(k.size(kb, loc, st));
    };
    for (const std::optional<Operand> &o : operands)
      if (o && !o->splat)
        add(*o);
    for (const Operand &o : inits)
      if (!o.splat)
        add(o);
    return z;
  };
  // The parallel loop indices of result r (in memory order).
  auto resultIndex = [&](IndexMath &f, const KernelSizes &z, Value r) {
    SmallVector<Value> index(bounds.size());
    for (int64_t d = 0; d < rank; ++d) {
      Value v = f.div(r, z.resultStrides[d]);
      index[outDims[d]] = d ? f.rem(v, z.loops[outDims[d]]) : v;
    }
    return index;
  };
  // An operand's offset: the terms of the dimensions `reducing` selects
  // (the reduced ones, or the others and the constants). Terms of known
  // strides fold into constants as the IR is built.
  auto offsetOf = [&](IndexMath &im, const KernelSizes &z, const Operand &o,
                      ArrayRef<Value> idx, bool reducing) {
    ArrayRef<Value> strides = z.strides.find(&o)->second;
    int64_t constant = 0;
    Value offset;
    auto add = [&](Value term) {
      offset = offset ? im.add(offset, term) : term;
    };
    for (auto [d, form] : llvm::enumerate(o.forms)) {
      if (!reducing && form.offset != 0) {
        if (std::optional<int64_t> c = getConstantIntValue(strides[d]))
          constant += form.offset * *c;
        else
          add(im.mul(strides[d], form.offset));
      }
      for (const DimTerm &t : form.terms) {
        if (llvm::is_contained(reductionDims, unsigned(t.dim)) != reducing)
          continue;
        add(im.mul(idx[t.dim], times(im, strides[d], t.scale)));
      }
    }
    if (!offset)
      return im.c(constant);
    return constant ? im.add(offset, im.c(constant)) : offset;
  };
  // Operand `o` at `offset`, in kernel `k`.
  auto load = [&](Kernel &k, OpBuilder &lb, Location ll, const Operand &o,
                  Value offset) -> Value {
    if (o.splat)
      return lb.create<arith::ConstantOp>(ll, o.splat);
    Value buffer = k.arg(o.arg);
    Type element = cast<MemRefType>(buffer.getType()).getElementType();
    return loadLanes(lb, ll, buffer, offset, 1, computeType(element))[0];
  };
  // Result r's initial values, in kernel `k` of sizes `z`.
  auto initialsOf = [&](Kernel &k, const KernelSizes &z, OpBuilder &fb,
                        Location fl, Value r) {
    IndexMath f{fb, fl};
    SmallVector<Value> index = resultIndex(f, z, r);
    SmallVector<Value> initials;
    for (const Operand &o : inits)
      initials.push_back(load(
          k, fb, fl, o, o.splat ? Value() : offsetOf(f, z, o, index, false)));
    return initials;
  };
  Kernel k = createKernel(module, loc, kernelBaseName(generic, "reduce"),
                          ValueRange(args).getTypes(), schedule.blockSize,
                          schedule.str(perResult));
  {
    OpBuilder &kb = k.body;
    IndexMath m{kb, loc};
    KernelSizes z = kernelSizes(k);
    Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    Value bid = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
    Value grid = kb.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
    int64_t perBlock = schedule.resultsPerBlock();
    Value lane, worker;
    if (columns) {
      lane = m.rem(tid, kWarpSize);
      worker = bid;
    } else if (schedule.kind == Kind::BlockPerResult) {
      lane = tid;
      worker = bid;
    } else {
      lane = sharing > 1 ? m.rem(tid, sharing) : Value();
      worker = m.madd(bid, perBlock, sharing > 1 ? m.div(tid, sharing) : tid);
    }
    // Block rows: each warp's combined value, for the first thread; block
    // columns: each thread's, for the first warp.
    Value scratch;
    if (schedule.kind == Kind::BlockPerResult)
      scratch = addWorkgroupBuffer(k, loc, schedule.blockSize / kWarpSize,
                                   partialType);
    if (columns)
      scratch = addWorkgroupBuffer(k, loc, schedule.blockSize, partialType);
    Value warpIndex = m.div(tid, kWarpSize);
    llvm::DenseMap<Value, Value> capturedBuffers;
    for (auto [i, t] : llvm::enumerate(captured))
      capturedBuffers[t] = k.arg(firstCaptured + i);
    SmallVector<Value> outs;
    for (size_t i = 0; i < resultBuffers.size(); ++i)
      outs.push_back(k.arg(firstOut + i));
    // The work of result r (block columns: r exists where `valid`, else it
    // is 0 and the thread takes no element), of its part `part` where it
    // is split, before the loop's yield.
    auto resultBody = [&](OpBuilder &fb, Location fl, Value r, Value valid,
                          Value part) {
      IndexMath f{fb, fl};
      SmallVector<Value> index = resultIndex(f, z, r);
      // Each buffer operand's offset for result r, outside the loop
      // over its elements.
      SmallVector<Value> bases;
      for (const std::optional<Operand> &o : operands)
        bases.push_back(o && !o->splat ? offsetOf(f, z, *o, index, false)
                                       : Value());
      SmallVector<Value> initials;
      if (splits == 1)
        initials = initialsOf(k, z, fb, fl, r);
      // One element's contribution (the whole body where there is no
      // combiner, on the partial results `current`).
      auto element = [&](OpBuilder &eb, Location el, Value j,
                         ValueRange current,
                         ArrayRef<Value> preloaded) -> SmallVector<Value> {
        IndexMath e{eb, el};
        SmallVector<Value> idx(index);
        for (int64_t i = reduced.size() - 1; i >= 0; --i) {
          Value v = e.div(j, z.reducedStrides[i]);
          idx[reduced[i]] = i ? e.rem(v, z.loops[reduced[i]]) : v;
        }
        SmallVector<Value> values;
        for (auto [i, o, base] : llvm::enumerate(operands, bases)) {
          if (!o) {
            values.push_back(Value());
            continue;
          }
          if (!preloaded.empty() && preloaded[i]) {
            values.push_back(preloaded[i]);
            continue;
          }
          Value offset;
          if (!o->splat) {
            Value inner = offsetOf(e, z, *o, idx, true);
            offset = isConstantZero(inner) ? base : e.add(base, inner);
          }
          values.push_back(load(k, eb, el, *o, offset));
        }
        auto loopIndex = [&](int64_t dim) { return idx[dim]; };
        // The body reads the result only through the combiner, or
        // (without one) as the partial results in the compute types.
        if (!tree) {
          llvm::append_range(values, current);
          return emitBodyYields(eb, el, generic, values, loopIndex,
                                &capturedBuffers);
        }
        if (arg) {
          // The element's value, without the ops that read the results.
          values.append(2, Value());
          Value v =
              emitBodyValue(eb, el, generic, values, loopIndex,
                            {arg->compare, arg->selectValue, arg->selectIndex},
                            arg->element, &capturedBuffers);
          return {eb.create<arith::MaxUIOp>(
              el, current[0], argPack(eb, el, *arg, v, idx[reduced[0]]))};
        }
        values.push_back(Value());
        Value partial =
            emitBody(eb, el, generic, values, loopIndex, combiner.op,
                     combiner.partial, &capturedBuffers);
        return {
            combine(eb, el, combiner.op, current[0], widen(eb, el, partial))};
      };
      SmallVector<Value> start =
          tree ? SmallVector<Value>{identity(fb, fl)} : initials;
      Value from = columns ? warpIndex : sharing > 1 ? lane : f.c(0);
      if (vectorLanes > 1)
        from = f.mul(from, vectorLanes);
      Value step = f.c((columns ? warps : sharing) * vectorLanes);
      Value to = z.perResult;
      if (part) {
        Value begin = f.mul(part, z.chunk);
        from = f.add(begin, from);
        to = fb.create<arith::MinUIOp>(fl, f.add(begin, z.chunk), to);
      }
      if (columns)
        to = fb.create<arith::SelectOp>(fl, valid, to, f.c(0));
      auto loop = fb.create<scf::ForOp>(
          fl, from, to, step, start,
          [&](OpBuilder &lb, Location ll, Value j, ValueRange iter) {
            if (vectorLanes == 1) {
              lb.create<scf::YieldOp>(ll, element(lb, ll, j, iter, {}));
              return;
            }
            // A vector of each buffer operand at j (its reduced dimension
            // is unit-stride), then each lane in order.
            IndexMath v{lb, ll};
            SmallVector<SmallVector<Value>> vectors;
            for (auto [o, base] : llvm::zip(operands, bases)) {
              if (!o || o->splat) {
                vectors.emplace_back();
                continue;
              }
              Value buffer = k.arg(o->arg);
              Type type = cast<MemRefType>(buffer.getType()).getElementType();
              vectors.push_back(loadLanes(lb, ll, buffer, v.add(base, j),
                                          vectorLanes, computeType(type)));
            }
            SmallVector<Value> carried(iter);
            for (int64_t l = 0; l < vectorLanes; ++l) {
              SmallVector<Value> preloaded;
              for (const SmallVector<Value> &lanes : vectors)
                preloaded.push_back(lanes.empty() ? Value() : lanes[l]);
              carried =
                  element(lb, ll, l ? v.add(j, v.c(l)) : j, carried, preloaded);
            }
            lb.create<scf::YieldOp>(ll, carried);
          });
      Value total = loop.getResult(0);
      if (sharing > 1)
        total = emitWarpReduce(fb, fl, total, kWarpSize, combineTree);
      // The first thread combines the initial value, then (a block
      // row) the warps' values in warp order, and stores; a part's
      // partial result is stored as it is, for the finishing kernel.
      auto finish = [&](OpBuilder &sb, Location sl, Value v) {
        if (part) {
          IndexMath s{sb, sl};
          sb.create<memref::StoreOp>(sl, v, k.arg(partialsArg),
                                     s.madd(r, splits, part));
          return;
        }
        for (auto [value, out] :
             llvm::zip(finalValues(sb, sl, initials, v), outs))
          storeLanes(sb, sl, value, out, r);
      };
      if (!tree) {
        for (auto [v, out] : llvm::zip(loop.getResults(), outs))
          storeLanes(fb, fl, v, out, r);
        return;
      }
      if (columns) {
        // The first warp combines the warps' values in warp order.
        fb.create<memref::StoreOp>(fl, total, scratch, tid);
        fb.create<gpu::BarrierOp>(fl);
        Value firstWarp = fb.create<arith::CmpIOp>(fl, arith::CmpIPredicate::eq,
                                                   warpIndex, f.c(0));
        fb.create<scf::IfOp>(
            fl, f.both(firstWarp, valid), [&](OpBuilder &tb, Location tl) {
              IndexMath t{tb, tl};
              Value v = tb.create<memref::LoadOp>(tl, scratch, lane);
              for (int64_t w = 1; w < warps; ++w)
                v = combineTree(
                    tb, tl, v,
                    tb.create<memref::LoadOp>(tl, scratch,
                                              t.add(lane, t.c(w * kWarpSize))));
              finish(tb, tl, v);
              tb.create<scf::YieldOp>(tl);
            });
        // The scratch is written again for the next results.
        fb.create<gpu::BarrierOp>(fl);
        return;
      }
      if (sharing == 1) {
        finish(fb, fl, total);
        return;
      }
      if (schedule.kind == Kind::BlockPerResult) {
        Value warp = f.div(tid, kWarpSize);
        Value firstLane = fb.create<arith::CmpIOp>(
            fl, arith::CmpIPredicate::eq, f.rem(tid, kWarpSize), f.c(0));
        fb.create<scf::IfOp>(fl, firstLane, [&](OpBuilder &tb, Location tl) {
          tb.create<memref::StoreOp>(tl, total, scratch, warp);
          tb.create<scf::YieldOp>(tl);
        });
        fb.create<gpu::BarrierOp>(fl);
      }
      Value first =
          fb.create<arith::CmpIOp>(fl, arith::CmpIPredicate::eq, lane, f.c(0));
      fb.create<scf::IfOp>(fl, first, [&](OpBuilder &tb, Location tl) {
        Value v = total;
        if (schedule.kind == Kind::BlockPerResult) {
          v = tb.create<memref::LoadOp>(tl, scratch, f.c(0));
          for (int64_t w = 1; w < schedule.blockSize / kWarpSize; ++w)
            v = combineTree(tb, tl, v,
                            tb.create<memref::LoadOp>(
                                tl, scratch, indexConstant(tb, tl, w)));
        }
        finish(tb, tl, v);
        tb.create<scf::YieldOp>(tl);
      });
      // The scratch is written again for the next result.
      if (schedule.kind == Kind::BlockPerResult)
        fb.create<gpu::BarrierOp>(fl);
    };
    // Work item w: a group of results, or (split) part w % splits of
    // group w / splits.
    auto groupAndPart = [&](IndexMath &f, Value w) -> std::pair<Value, Value> {
      if (splits == 1)
        return {w, Value()};
      return {f.div(w, splits), f.rem(w, splits)};
    };
    if (columns) {
      // Blocks loop over groups of 32 results (block-uniform: every thread
      // reaches the barriers).
      Value items = times(m, m.ceilDiv(z.results, kWarpSize), splits);
      kb.create<scf::ForOp>(
          loc, worker, items, grid, ValueRange{},
          [&](OpBuilder &fb, Location fl, Value w, ValueRange) {
            IndexMath f{fb, fl};
            auto [g, part] = groupAndPart(f, w);
            Value r = f.madd(g, kWarpSize, lane);
            Value valid = f.below(r, z.results);
            resultBody(fb, fl, fb.create<arith::SelectOp>(fl, valid, r, f.c(0)),
                       valid, part);
            fb.create<scf::YieldOp>(fl);
          });
    } else {
      // (Split results are block rows: a block per part.)
      kb.create<scf::ForOp>(
          loc, worker, times(m, z.results, splits), m.mul(grid, perBlock),
          ValueRange{}, [&](OpBuilder &fb, Location fl, Value w, ValueRange) {
            IndexMath f{fb, fl};
            auto [r, part] = groupAndPart(f, w);
            resultBody(fb, fl, r, Value(), part);
            fb.create<scf::YieldOp>(fl);
          });
    }
  }
  Value blocks = b.createOrFold<arith::MinUIOp>(
      loc,
      times(hm, hm.ceilDiv(hostResults, schedule.resultsPerBlock()), splits),
      hm.c(schedule.maxBlocks));
  launchUnlessEmpty(b, loc, k, blocks, schedule.blockSize, args, hostResults);
  if (splits > 1) {
    // Each result's parts combined in part order: a warp per result, lane
    // l taking parts l, l + 32, ..., then a fixed butterfly of shuffles;
    // the first lane adds the initial value and stores.
    int64_t warpsPerBlock = schedule.finishBlockSize / kWarpSize;
    Kernel f =
        createKernel(module, loc, kernelBaseName(generic, "reduce_finish"),
                     ValueRange(args).getTypes(), schedule.finishBlockSize,
                     "split-finish splits=" + std::to_string(splits));
    OpBuilder &fb = f.body;
    IndexMath m{fb, loc};
    KernelSizes z = kernelSizes(f);
    Value tid = fb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    Value bid = fb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
    Value grid = fb.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
    Value lane = m.rem(tid, kWarpSize);
    fb.create<scf::ForOp>(
        loc, m.madd(bid, warpsPerBlock, m.div(tid, kWarpSize)), z.results,
        m.mul(grid, warpsPerBlock), ValueRange{},
        [&](OpBuilder &lb, Location ll, Value r, ValueRange) {
          IndexMath l{lb, ll};
          auto parts = lb.create<scf::ForOp>(
              ll, lane, l.c(splits), l.c(kWarpSize),
              ValueRange{identity(lb, ll)},
              [&](OpBuilder &pb, Location pl, Value p, ValueRange acc) {
                IndexMath q{pb, pl};
                Value v = pb.create<memref::LoadOp>(pl, f.arg(partialsArg),
                                                    q.madd(r, splits, p));
                pb.create<scf::YieldOp>(pl, combineTree(pb, pl, acc[0], v));
              });
          Value total = emitWarpReduce(lb, ll, parts.getResult(0), kWarpSize,
                                       combineTree);
          Value isFirst = lb.create<arith::CmpIOp>(ll, arith::CmpIPredicate::eq,
                                                   lane, l.c(0));
          lb.create<scf::IfOp>(ll, isFirst, [&](OpBuilder &tb, Location tl) {
            SmallVector<Value> initials = initialsOf(f, z, tb, tl, r);
            for (auto [i, value] :
                 llvm::enumerate(finalValues(tb, tl, initials, total)))
              storeLanes(tb, tl, value, f.arg(firstOut + i), r);
            tb.create<scf::YieldOp>(tl);
          });
          lb.create<scf::YieldOp>(ll);
        });
    launch(b, loc, f,
           indexConstant(
               b, loc,
               std::min<int64_t>(llvm::divideCeil(results, warpsPerBlock),
                                 schedule.maxBlocks)),
           schedule.finishBlockSize, args);
  }
  replace();
  return success();
}
