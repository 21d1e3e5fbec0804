//===- SpecializeShapes.cpp - static shapes for a call ----------*- C++ -*-===//
//
// Part of normfuse. See SpecializeShapes.h. Each result type is refined from
// the shape its op's rule derives from the operands (the rules the nf
// verifiers check; matmul and conv2d share theirs through
// inferResultShape()): dimensions the type already fixes must agree, the
// dynamic ones take the derived sizes. The nf-specialize-shapes pass parses
// its options and calls specializeShapes.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Dialect/NF/Transforms/SpecializeShapes.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/Dialect/NF/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "nf-specialize-shapes"

namespace mlir::nf {
#define GEN_PASS_DEF_NFSPECIALIZESHAPESPASS
#include "normfuse/Dialect/NF/Transforms/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;

namespace {
using Shape = SmallVector<int64_t>;
/// The shapes of an op's results, dynamic where the operands do not
/// determine them.
using ResultShapes = SmallVector<Shape>;
} // namespace

/// "[2, ?, 8]"
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") +
         (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return s + "]";
}

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

//===----------------------------------------------------------------------===//
// Shape rules of the nf ops
//===----------------------------------------------------------------------===//

/// Parameter and statistics shapes of the norms over `[axis, rank)`:
/// `input.shape[axis:]` and `input.shape[:axis]` followed by ones.
static FailureOr<std::pair<Shape, Shape>>
getTrailingNormShapes(Operation *op, Value input, int64_t axis) {
  ArrayRef<int64_t> shape = shapeOf(input);
  int64_t rank = shape.size();
  if (axis < 0 || axis >= rank)
    return op->emitOpError()
           << "axis " << axis << " is out of range for an input of rank "
           << rank;
  Shape param(shape.begin() + axis, shape.end());
  Shape stats(shape.begin(), shape.begin() + axis);
  stats.append(rank - axis, 1);
  return std::make_pair(param, stats);
}

/// The batch size and channel count of a channel-axis op's operand.
static FailureOr<std::pair<int64_t, int64_t>>
getBatchAndChannels(Operation *op, Value v, Layout layout) {
  ArrayRef<int64_t> shape = shapeOf(v);
  if (shape.size() < 2)
    return op->emitOpError()
           << "needs an operand of rank >= 2, got rank " << shape.size();
  return std::make_pair(shape[0], shape[getChannelAxis(layout, shape.size())]);
}

/// The (N, C) dimensions of a rank-4 conv operand (N, C, H, W) or
/// (N, H, W, C); a filter is (O, I, KH, KW) or (O, KH, KW, I), its "N" is O
/// and its "C" is I.
static FailureOr<std::pair<int64_t, int64_t>>
getConvOuterDims(Operation *op, Value v, Layout layout) {
  ArrayRef<int64_t> shape = shapeOf(v);
  if (shape.size() != 4)
    return op->emitOpError()
           << "needs rank-4 conv operands, got rank " << shape.size();
  return std::make_pair(shape[0], shape[layout == Layout::NCHW ? 1 : 3]);
}

/// A rank-4 conv shape from its outer dimensions; the spatial ones are left
/// dynamic (with a stride above 1 several sizes give the same output).
static Shape makeConvShape(std::pair<int64_t, int64_t> outer, Layout layout) {
  int64_t dyn = ShapedType::kDynamic;
  if (layout == Layout::NCHW)
    return {outer.first, outer.second, dyn, dyn};
  return {outer.first, dyn, dyn, outer.second};
}

template <typename NormGradOp>
static FailureOr<ResultShapes> inferChannelNormGrad(NormGradOp op) {
  auto nc = getBatchAndChannels(op, op.getInput(), op.getLayout());
  if (failed(nc))
    return failure();
  Shape perChannel{nc->second};
  return ResultShapes{Shape(shapeOf(op.getInput())), perChannel, perChannel};
}

/// The result shapes the shape rule of nf op `op` gives for its operands'
/// shapes.
static FailureOr<ResultShapes> inferResultShapes(Operation *op) {
  // Pointwise ops (forward and backward) keep their first operand's shape.
  if (isPointwiseOp(op) || op->hasTrait<mlir::OpTrait::Elementwise>())
    return ResultShapes(op->getNumResults(), Shape(shapeOf(op->getOperand(0))));

  return TypeSwitch<Operation *, FailureOr<ResultShapes>>(op)
      .Case([](LayerNormOp o) -> FailureOr<ResultShapes> {
        auto s =
            getTrailingNormShapes(o, o.getInput(), o.getAxisAttr().getInt());
        if (failed(s))
          return failure();
        return ResultShapes{Shape(shapeOf(o.getInput())), s->second, s->second};
      })
      .Case([](RMSNormOp o) -> FailureOr<ResultShapes> {
        auto s =
            getTrailingNormShapes(o, o.getInput(), o.getAxisAttr().getInt());
        if (failed(s))
          return failure();
        return ResultShapes{Shape(shapeOf(o.getInput())), s->second};
      })
      .Case([](GroupNormOp o) -> FailureOr<ResultShapes> {
        auto nc = getBatchAndChannels(o, o.getInput(), o.getLayout());
        if (failed(nc))
          return failure();
        Shape stats{nc->first, o.getNumGroupsAttr().getInt()};
        return ResultShapes{Shape(shapeOf(o.getInput())), stats, stats};
      })
      .Case([](InstanceNormOp o) -> FailureOr<ResultShapes> {
        auto nc = getBatchAndChannels(o, o.getInput(), o.getLayout());
        if (failed(nc))
          return failure();
        Shape stats{nc->first, nc->second};
        return ResultShapes{Shape(shapeOf(o.getInput())), stats, stats};
      })
      .Case([](BatchNormTrainingOp o) -> FailureOr<ResultShapes> {
        auto nc = getBatchAndChannels(o, o.getInput(), o.getLayout());
        if (failed(nc))
          return failure();
        Shape c{nc->second};
        return ResultShapes{Shape(shapeOf(o.getInput())), c, c, c, c};
      })
      .Case([](BatchNormInferenceOp o) -> FailureOr<ResultShapes> {
        return ResultShapes{Shape(shapeOf(o.getInput()))};
      })
      .Case([](LayerNormGradOp o) -> FailureOr<ResultShapes> {
        auto s =
            getTrailingNormShapes(o, o.getInput(), o.getAxisAttr().getInt());
        if (failed(s))
          return failure();
        return ResultShapes{Shape(shapeOf(o.getInput())), s->first, s->first};
      })
      .Case([](RMSNormGradOp o) -> FailureOr<ResultShapes> {
        auto s =
            getTrailingNormShapes(o, o.getInput(), o.getAxisAttr().getInt());
        if (failed(s))
          return failure();
        return ResultShapes{Shape(shapeOf(o.getInput())), s->first};
      })
      .Case([](GroupNormGradOp o) { return inferChannelNormGrad(o); })
      .Case([](InstanceNormGradOp o) { return inferChannelNormGrad(o); })
      .Case([](BatchNormGradOp o) { return inferChannelNormGrad(o); })
      .Case([](BiasAddGradOp o) -> FailureOr<ResultShapes> {
        auto nc = getBatchAndChannels(o, o.getGradOutput(), o.getLayout());
        if (failed(nc))
          return failure();
        return ResultShapes{Shape{nc->second}};
      })
      .Case<MatmulOp, Conv2DOp>([](auto o) -> FailureOr<ResultShapes> {
        FailureOr<Shape> shape = o.inferResultShape();
        if (failed(shape))
          return failure();
        return ResultShapes{*shape};
      })
      .Case([](Conv2DBackpropInputOp o) -> FailureOr<ResultShapes> {
        // (N, C) of the input: N of grad_output, C = I of the filter.
        auto out = getConvOuterDims(o, o.getGradOutput(), o.getLayout());
        auto filter = getConvOuterDims(o, o.getFilter(), o.getLayout());
        if (failed(out) || failed(filter))
          return failure();
        return ResultShapes{
            makeConvShape({out->first, filter->second}, o.getLayout())};
      })
      .Case([](Conv2DBackpropFilterOp o) -> FailureOr<ResultShapes> {
        // (O, I) of the filter: C of grad_output, C of the input.
        auto out = getConvOuterDims(o, o.getGradOutput(), o.getLayout());
        auto in = getConvOuterDims(o, o.getInput(), o.getLayout());
        if (failed(out) || failed(in))
          return failure();
        return ResultShapes{
            makeConvShape({out->second, in->second}, o.getLayout())};
      })
      .Default([](Operation *o) -> FailureOr<ResultShapes> {
        return o->emitOpError() << "has no shape rule for nf-specialize-shapes";
      });
}

//===----------------------------------------------------------------------===//
// The rewrite
//===----------------------------------------------------------------------===//

namespace {
/// Gives every tensor of one function the static type its operands imply.
class ShapeSpecializer {
public:
  ShapeSpecializer(func::FuncOp fn, ArrayRef<ArrayRef<int64_t>> resultShapes)
      : fn(fn), resultShapes(resultShapes) {}

  /// Specializes the ops of `block`, in order.
  LogicalResult specializeBlock(Block &block) {
    for (Operation &op : block)
      if (failed(specializeOp(&op)))
        return failure();
    return success();
  }

private:
  LogicalResult specializeOp(Operation *op);
  LogicalResult specializeFused(FusedOp fused);
  /// Sets the type of `op`'s result `index` to its type with the dynamic
  /// dimensions taken from `derived`.
  LogicalResult refineResult(Operation *op, unsigned index,
                             ArrayRef<int64_t> derived);
  /// Fills the dynamic dimensions of `shape`, the shape of a value the
  /// function returns, from `resultShapes`; returns the index of the
  /// function result it is, if any.
  std::optional<unsigned> fillFromResultShapes(Value v,
                                               MutableArrayRef<int64_t> shape);

  func::FuncOp fn;
  ArrayRef<ArrayRef<int64_t>> resultShapes;
};
} // namespace

LogicalResult ShapeSpecializer::specializeOp(Operation *op) {
  if (auto fused = dyn_cast<FusedOp>(op))
    return specializeFused(fused);
  if (isa<func::ReturnOp, YieldOp>(op) || op->getNumResults() == 0)
    return success();
  if (auto castOp = dyn_cast<tensor::CastOp>(op)) {
    if (auto source = dyn_cast<RankedTensorType>(castOp.getSource().getType()))
      return refineResult(op, 0, source.getShape());
  } else if (isa<NFDialect>(op->getDialect())) {
    FailureOr<ResultShapes> shapes = inferResultShapes(op);
    if (failed(shapes))
      return failure();
    for (auto [index, shape] : llvm::enumerate(*shapes))
      if (failed(refineResult(op, index, shape)))
        return failure();
    return success();
  } else if (auto infer = dyn_cast<InferShapedTypeOpInterface>(op)) {
    // An op that derives its own result shapes from its operands (every
    // TOSA op: its broadcasts, transposes, reshapes and reductions).
    SmallVector<ShapedTypeComponents> components;
    if (succeeded(infer.inferReturnTypeComponents(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getDiscardableAttrDictionary(), op->getPropertiesStorage(),
            op->getRegions(), components)) &&
        components.size() == op->getNumResults())
      for (auto [index, c] : llvm::enumerate(components))
        if (c.hasRank() &&
            isa<RankedTensorType>(op->getResult(index).getType()))
          if (failed(refineResult(op, index, c.getDims())))
            return failure();
  }
  // Any other op must have static results already.
  for (OpResult result : op->getResults()) {
    auto tensor = dyn_cast<TensorType>(result.getType());
    if (tensor && !tensor.hasStaticShape())
      return op->emitOpError()
             << "result #" << result.getResultNumber() << " has type " << tensor
             << "; nf-specialize-shapes derives static shapes for nf ops, "
                "tensor.cast and ops that infer their result shapes";
  }
  return success();
}

LogicalResult ShapeSpecializer::specializeFused(FusedOp fused) {
  Block &body = fused.getBody().front();
  if (body.getNumArguments() != fused.getInputs().size() || body.empty() ||
      !isa<YieldOp>(body.back()))
    return fused.emitOpError() << "body does not match its inputs and results";
  for (auto [arg, input] :
       llvm::zip_equal(body.getArguments(), fused.getInputs()))
    arg.setType(input.getType());
  if (failed(specializeBlock(body)))
    return failure();
  auto yield = cast<YieldOp>(body.back());
  if (yield.getValues().size() != fused.getNumResults())
    return fused.emitOpError() << "body does not match its inputs and results";
  for (auto [index, value] : llvm::enumerate(yield.getValues()))
    if (failed(refineResult(fused, index, shapeOf(value))))
      return failure();
  return success();
}

std::optional<unsigned>
ShapeSpecializer::fillFromResultShapes(Value v,
                                       MutableArrayRef<int64_t> shape) {
  for (OpOperand &use : v.getUses()) {
    if (!isa<func::ReturnOp>(use.getOwner()))
      continue;
    unsigned index = use.getOperandNumber();
    if (index < resultShapes.size() &&
        resultShapes[index].size() == shape.size())
      for (auto [d, given] : llvm::zip_equal(shape, resultShapes[index]))
        if (ShapedType::isDynamic(d))
          d = given;
    return index;
  }
  return std::nullopt;
}

LogicalResult ShapeSpecializer::refineResult(Operation *op, unsigned index,
                                             ArrayRef<int64_t> derived) {
  Value result = op->getResult(index);
  auto type = dyn_cast<TensorType>(result.getType());
  if (!type)
    return op->emitOpError() << "result #" << index << " has type "
                             << result.getType() << "; expected a tensor";
  Shape shape(derived);
  if (type.hasRank()) {
    if (type.getRank() != static_cast<int64_t>(shape.size()))
      return op->emitOpError()
             << "result #" << index << " has type " << type
             << ", but its operands give shape " << formatShape(derived);
    for (auto [d, fixed] : llvm::zip_equal(shape, type.getShape())) {
      if (ShapedType::isDynamic(fixed))
        continue;
      if (!ShapedType::isDynamic(d) && d != fixed)
        return op->emitOpError()
               << "result #" << index << " has type " << type
               << ", but its operands give shape " << formatShape(derived);
      d = fixed;
    }
  }
  if (llvm::any_of(shape, ShapedType::isDynamic)) {
    std::optional<unsigned> returned = fillFromResultShapes(result, shape);
    if (llvm::any_of(shape, ShapedType::isDynamic)) {
      InFlightDiagnostic diag = op->emitOpError();
      diag << "result #" << index << " (" << type
           << ") has dimensions its operands do not determine ("
           << formatShape(shape) << "); ";
      if (returned)
        diag << "they come from the shape of function result #" << *returned
             << ", which was not given";
      else
        diag << "give them in its type, or return it from the function so "
                "that the caller's output buffer gives them";
      return diag;
    }
  }
  Attribute encoding;
  if (auto ranked = dyn_cast<RankedTensorType>(type))
    encoding = ranked.getEncoding();
  result.setType(RankedTensorType::get(shape, type.getElementType(), encoding));
  LLVM_DEBUG(llvm::dbgs() << "nf-specialize-shapes: " << op->getName()
                          << " result #" << index << " -> " << result.getType()
                          << "\n");
  return success();
}

LogicalResult
mlir::nf::specializeShapes(func::FuncOp fn,
                           ArrayRef<ArrayRef<int64_t>> argShapes,
                           ArrayRef<ArrayRef<int64_t>> resultShapes) {
  if (fn.isExternal())
    return fn.emitOpError() << "has no body to specialize";
  if (!fn.getBody().hasOneBlock())
    return fn.emitOpError()
           << "has " << fn.getBody().getBlocks().size()
           << " blocks; only single-block functions can be specialized";
  FunctionType fnType = fn.getFunctionType();
  if (argShapes.size() != fnType.getNumInputs())
    return fn.emitOpError()
           << "takes " << fnType.getNumInputs() << " arguments, got "
           << argShapes.size() << " shapes";
  if (!resultShapes.empty() && resultShapes.size() != fnType.getNumResults())
    return fn.emitOpError()
           << "has " << fnType.getNumResults() << " results, got "
           << resultShapes.size() << " result shapes";
  for (auto [index, shape] : llvm::enumerate(resultShapes))
    if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
      return fn.emitOpError() << "result #" << index << " cannot have shape "
                              << formatShape(shape);

  Block &entry = fn.front();
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip_equal(entry.getArguments(), argShapes))) {
    auto [arg, shape] = pair;
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return fn.emitOpError()
             << "argument #" << index << " has type " << arg.getType()
             << "; only ranked tensor arguments can be specialized";
    bool fits = type.getRank() == static_cast<int64_t>(shape.size());
    for (size_t d = 0; fits && d < shape.size(); ++d)
      fits = shape[d] >= 0 &&
             (type.isDynamicDim(d) || type.getDimSize(d) == shape[d]);
    if (!fits)
      return fn.emitOpError() << "argument #" << index << " of type " << type
                              << " cannot take shape " << formatShape(shape);
    arg.setType(RankedTensorType::get(shape, type.getElementType(),
                                      type.getEncoding()));
  }

  ShapeSpecializer specializer(fn, resultShapes);
  if (failed(specializer.specializeBlock(entry)))
    return failure();
  auto ret = entry.empty() ? nullptr : dyn_cast<func::ReturnOp>(entry.back());
  if (!ret)
    return fn.emitOpError() << "does not end with func.return";
  fn.setFunctionType(FunctionType::get(
      fn.getContext(), entry.getArgumentTypes(), ret.getOperandTypes()));
  return verify(fn);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Parses "4x768" (a rank-0 shape is not expressible).
static FailureOr<Shape> parseShape(StringRef text) {
  Shape shape;
  SmallVector<StringRef> dims;
  text.split(dims, 'x');
  for (StringRef d : dims) {
    int64_t size;
    if (d.trim().getAsInteger(10, size) || size < 0)
      return failure();
    shape.push_back(size);
  }
  return shape;
}

namespace {
struct SpecializeShapesPass
    : nf::impl::NFSpecializeShapesPassBase<SpecializeShapesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fn = module.lookupSymbol<func::FuncOp>(function);
    if (function.empty() || !fn) {
      module.emitError() << "nf-specialize-shapes: no function @" << function
                         << " in the module";
      return signalPassFailure();
    }
    SmallVector<Shape> args, results;
    for (auto [list, storage] : {std::make_pair(&shapes, &args),
                                 std::make_pair(&resultShapes, &results)}) {
      for (const std::string &text : *list) {
        FailureOr<Shape> shape = parseShape(text);
        if (failed(shape)) {
          module.emitError() << "nf-specialize-shapes: cannot parse shape '"
                             << text << "' (expected sizes joined by 'x', "
                             << "e.g. 4x768)";
          return signalPassFailure();
        }
        storage->push_back(*shape);
      }
    }
    SmallVector<ArrayRef<int64_t>> argRefs(args.begin(), args.end());
    SmallVector<ArrayRef<int64_t>> resultRefs(results.begin(), results.end());
    if (failed(specializeShapes(fn, argRefs, resultRefs)))
      signalPassFailure();
  }
};
} // namespace
