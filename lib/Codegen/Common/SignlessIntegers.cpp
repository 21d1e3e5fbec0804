//===- SignlessIntegers.cpp - unsigned TOSA programs as signless ones -----===//
//
// Part of normfuse. See SignlessIntegers.h. The types change first, all at
// once (the same bits, so nothing is converted); then the ops recorded as
// reading an unsigned value where the sign matters are rewritten over the
// signless values.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Common/SignlessIntegers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

using namespace mlir;

namespace {

/// The element type of `type` (or `type`) if it is an integer with a sign.
IntegerType signedOrUnsigned(Type type) {
  auto integer = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
  return integer && !integer.isSignless() ? integer : nullptr;
}

bool isUnsignedInteger(Type type) {
  IntegerType integer = signedOrUnsigned(type);
  return integer && integer.isUnsigned();
}

Type toSignless(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.isSignless()
               ? type
               : IntegerType::get(type.getContext(), integer.getWidth());
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.clone(toSignless(shaped.getElementType()));
  return type;
}

/// What an op that reads an unsigned integer needs beyond new types.
enum class Fix {
  /// Nothing: the result does not depend on the sign.
  None,
  /// Its operands read with the top bit flipped (a comparison).
  FlipOperands,
  /// Its operands read, and its result given back, with the top bit
  /// flipped (maximum, minimum, reduce_max, reduce_min).
  FlipOperandsAndResult,
  /// Its input read with the top bit flipped (argmax).
  FlipInput,
  /// A tosa.cast that converts an unsigned value, or to an unsigned type.
  Cast,
};

/// The fix `op` needs, or failure (with the error emitted) for an op that
/// takes an unsigned integer where the program cannot say what it means.
FailureOr<Fix> classify(Operation *op) {
  // Upstream orders i1 as signed (true is -1, below false); TOSA's
  // maximum of booleans is their or. Booleans are ordered as unsigned.
  auto orderedAsUnsigned = [](Type type) {
    return isUnsignedInteger(type) || getElementTypeOrSelf(type).isInteger(1);
  };
  bool ordered = llvm::any_of(op->getOperandTypes(), orderedAsUnsigned);
  if (ordered && isa<tosa::GreaterOp, tosa::GreaterEqualOp>(op))
    return Fix::FlipOperands;
  if (ordered && isa<tosa::MaximumOp, tosa::MinimumOp, tosa::ReduceMaxOp,
                     tosa::ReduceMinOp>(op))
    return Fix::FlipOperandsAndResult;
  if (ordered && isa<tosa::ArgMaxOp>(op))
    return Fix::FlipInput;
  bool readsUnsigned = llvm::any_of(op->getOperandTypes(), isUnsignedInteger);
  bool writesUnsigned = llvm::any_of(op->getResultTypes(), isUnsignedInteger);
  if (!readsUnsigned && !writesUnsigned)
    return Fix::None;
  if (isa<tosa::CastOp>(op))
    return Fix::Cast;
  if (auto mul = dyn_cast<tosa::MulOp>(op); mul && mul.getShift() != 0)
    return op->emitOpError()
           << "takes unsigned integers with a shift; normfuse runs tosa.mul "
              "of unsigned integers without one only";
  if (isa<tosa::AddOp, tosa::SubOp, tosa::MulOp, tosa::NegateOp, tosa::EqualOp,
          tosa::BitwiseAndOp, tosa::BitwiseOrOp, tosa::BitwiseXorOp,
          tosa::BitwiseNotOp, tosa::LogicalLeftShiftOp,
          tosa::LogicalRightShiftOp, tosa::ClzOp, tosa::SelectOp,
          tosa::ReshapeOp, tosa::TransposeOp, tosa::SliceOp, tosa::ConcatOp,
          tosa::TileOp, tosa::GatherOp, tosa::ScatterOp, tosa::PadOp,
          tosa::IdentityOp, tosa::ReduceSumOp, tosa::ReduceProdOp,
          tosa::ConstOp, arith::ConstantOp, func::ReturnOp>(op) ||
      isa_and_nonnull<tensor::TensorDialect>(op->getDialect()))
    return Fix::None;
  return op->emitOpError()
         << "takes or gives unsigned integers, which normfuse runs for "
            "TOSA's add, sub, mul, negate, comparisons, maximum, minimum, "
            "bitwise and logical ops, casts, reductions, argmax and data "
            "movement only";
}

/// A constant's value over signless integers (the same bits).
FailureOr<Attribute> signlessValue(Operation *op, Attribute value) {
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return op->emitOpError()
           << "holds unsigned or signed integers in an attribute normfuse "
              "cannot reinterpret (write it as a dense literal)";
  return Attribute(dense.bitcast(toSignless(dense.getElementType())));
}

/// Gives every value, argument and constant of `function` signless types.
LogicalResult retype(func::FuncOp function) {
  WalkResult walk = function.walk([&](Operation *op) {
    for (Value result : op->getResults())
      result.setType(toSignless(result.getType()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          arg.setType(toSignless(arg.getType()));
    if (isa<tosa::ConstOp, arith::ConstantOp>(op)) {
      Attribute value = op->getAttr("value");
      if (!signedOrUnsigned(cast<TypedAttr>(value).getType()))
        return WalkResult::advance();
      FailureOr<Attribute> signless = signlessValue(op, value);
      if (failed(signless))
        return WalkResult::interrupt();
      op->setAttr("value", *signless);
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (BlockArgument arg : function.getArguments())
    arg.setType(toSignless(arg.getType()));
  FunctionType type = function.getFunctionType();
  SmallVector<Type> inputs(llvm::map_range(type.getInputs(), toSignless));
  SmallVector<Type> results(llvm::map_range(type.getResults(), toSignless));
  function.setFunctionType(
      FunctionType::get(function.getContext(), inputs, results));
  return success();
}

/// `value` with its top bit flipped: tosa.bitwise_xor with a constant of
/// ones in every dimension, which TOSA broadcasts.
Value flipTopBit(OpBuilder &builder, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  auto integer = cast<IntegerType>(type.getElementType());
  auto constType =
      RankedTensorType::get(SmallVector<int64_t>(type.getRank(), 1), integer);
  Value top = builder.create<tosa::ConstOp>(
      loc, constType,
      DenseElementsAttr::get(constType,
                             APInt::getSignedMinValue(integer.getWidth())));
  return builder.create<tosa::BitwiseXorOp>(loc, type, value, top);
}

/// The linalg.generic that maps each element of `input` through `body`
/// into a tensor of `element`s of the input's shape.
Value mapElements(OpBuilder &builder, Location loc, Value input, Type element,
                  function_ref<Value(OpBuilder &, Location, Value)> body) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(builder.create<tensor::DimOp>(loc, input, d));
  Value init =
      builder.create<tensor::EmptyOp>(loc, type.getShape(), element, sizes);
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  return builder
      .create<linalg::GenericOp>(
          loc, TypeRange{init.getType()}, ValueRange{input}, ValueRange{init},
          ArrayRef<AffineMap>{identity, identity},
          SmallVector<utils::IteratorType>(type.getRank(),
                                           utils::IteratorType::parallel),
          [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
            nested.create<linalg::YieldOp>(nestedLoc,
                                           body(nested, nestedLoc, args[0]));
          })
      .getResult(0);
}

/// A float rounded to nearest even and converted to an unsigned integer
/// of `width` bits, saturating (NaN and negative values give 0).
Value floatToUnsigned(OpBuilder &b, Location loc, Value x, IntegerType to) {
  auto from = cast<FloatType>(x.getType());
  Value rounded = b.create<math::RoundEvenOp>(loc, x);
  Value converted = b.create<arith::FPToUIOp>(loc, to, rounded);
  Value zeroF = b.create<arith::ConstantOp>(loc, b.getFloatAttr(from, 0.0));
  // 2^N, or infinity where the type cannot hold it.
  APFloat limit(std::ldexp(1.0, to.getWidth()));
  bool lost;
  limit.convert(from.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
  Value high = b.create<arith::ConstantOp>(loc, b.getFloatAttr(from, limit));
  Value isLow =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ULT, rounded, zeroF);
  Value isHigh =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGE, rounded, high);
  Value zero = b.create<arith::ConstantOp>(loc, b.getIntegerAttr(to, 0));
  Value ones = b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(to, APInt::getAllOnes(to.getWidth())));
  Value low = b.create<arith::SelectOp>(loc, isLow, zero, converted);
  return b.create<arith::SelectOp>(loc, isHigh, ones, low);
}

/// The tosa.cast `op` from `from` to `to` elements (their types before the
/// retyping), where one of them is unsigned, as the generic that converts
/// it; a cast to i1 (x != 0) and one from a signed value (extsi, trunci)
/// mean the same over signless integers and stay.
void rewriteCast(tosa::CastOp op, Type from, Type to) {
  auto fromInt = dyn_cast<IntegerType>(from);
  auto toInt = dyn_cast<IntegerType>(to);
  bool fromUnsigned = fromInt && fromInt.isUnsigned();
  if ((toInt && toInt.getWidth() == 1) ||
      (!fromUnsigned && !isa<FloatType>(from)))
    return;
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Value input = op.getInput();
  Type result = toSignless(to);
  if (fromUnsigned && toInt && toInt.getWidth() == fromInt.getWidth()) {
    op.replaceAllUsesWith(input);
    op.erase();
    return;
  }
  Value mapped = mapElements(builder, loc, input, result,
                             [&](OpBuilder &b, Location l, Value x) -> Value {
                               if (!fromUnsigned)
                                 return floatToUnsigned(
                                     b, l, x, cast<IntegerType>(result));
                               if (isa<FloatType>(result))
                                 return b.create<arith::UIToFPOp>(l, result, x);
                               if (toInt.getWidth() > fromInt.getWidth())
                                 return b.create<arith::ExtUIOp>(l, result, x);
                               return b.create<arith::TruncIOp>(l, result, x);
                             });
  op.replaceAllUsesWith(mapped);
  op.erase();
}

struct Recorded {
  Operation *op;
  Fix fix;
  Type from, to;
};

} // namespace

LogicalResult mlir::nf::makeIntegersSignless(func::FuncOp function) {
  bool retyped = llvm::any_of(function.getArgumentTypes(), signedOrUnsigned) ||
                 llvm::any_of(function.getResultTypes(), signedOrUnsigned);
  if (retyped) {
    auto module = function->getParentOfType<ModuleOp>();
    if (module && !SymbolTable::symbolKnownUseEmpty(function, module))
      return function.emitOpError()
             << "takes or returns unsigned or signed integers and is called "
                "by another function; normfuse runs such a function only as "
                "an entry point";
  }

  SmallVector<Recorded> recorded;
  WalkResult walk = function.walk([&](Operation *op) {
    FailureOr<Fix> fix = classify(op);
    if (failed(fix))
      return WalkResult::interrupt();
    if (*fix == Fix::Cast)
      recorded.push_back({op, *fix,
                          getElementTypeOrSelf(op->getOperand(0).getType()),
                          getElementTypeOrSelf(op->getResult(0).getType())});
    else if (*fix != Fix::None)
      recorded.push_back({op, *fix, {}, {}});
    if (llvm::any_of(op->getResultTypes(), signedOrUnsigned))
      retyped = true;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // Types change only where some are not signless.
  if (retyped && failed(retype(function)))
    return failure();

  for (const Recorded &r : recorded) {
    Operation *op = r.op;
    if (r.fix == Fix::Cast) {
      rewriteCast(cast<tosa::CastOp>(op), r.from, r.to);
      continue;
    }
    OpBuilder builder(op);
    unsigned flipped = r.fix == Fix::FlipInput ? 1 : op->getNumOperands();
    for (unsigned i = 0; i < flipped; ++i)
      op->setOperand(i, flipTopBit(builder, op->getLoc(), op->getOperand(i)));
    if (r.fix != Fix::FlipOperandsAndResult)
      continue;
    builder.setInsertionPointAfter(op);
    Value result = op->getResult(0);
    Value back = flipTopBit(builder, op->getLoc(), result);
    result.replaceAllUsesExcept(back, back.getDefiningOp());
  }
  return success();
}

void mlir::nf::makeIntegerDivisionTotal(func::FuncOp function) {
  SmallVector<Operation *> divisions;
  function.walk([&](Operation *op) {
    if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp>(
            op) &&
        isa<IntegerType>(op->getResult(0).getType()))
      divisions.push_back(op);
  });
  for (Operation *op : divisions) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto type = cast<IntegerType>(op->getResult(0).getType());
    unsigned w = type.getWidth();
    auto constant = [&](const APInt &v) -> Value {
      return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(type, v));
    };
    Value x = op->getOperand(0), y = op->getOperand(1);
    Value zero = constant(APInt::getZero(w)), one = constant(APInt(w, 1));
    Value byZero =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, y, zero);
    Value unsafe = byZero;
    bool isSigned = isa<arith::DivSIOp, arith::RemSIOp>(op);
    Value overflow;
    if (isSigned && w > 1) {
      Value min = constant(APInt::getSignedMinValue(w));
      Value minusOne = constant(APInt::getAllOnes(w));
      overflow = b.create<arith::AndIOp>(
          loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, x, min),
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, y, minusOne));
      unsafe = b.create<arith::OrIOp>(loc, byZero, overflow);
    }
    Value safeY = b.create<arith::SelectOp>(loc, unsafe, one, y);
    Operation *safe = b.clone(*op);
    safe->setOperand(1, safeY);
    Value r = safe->getResult(0);
    // INT_MIN / 1 is INT_MIN, the wrapped quotient already; its remainder
    // by 1 is 0. Only a zero divisor needs its own answer.
    Value result = b.create<arith::SelectOp>(loc, byZero, zero, r);
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
  }
}
