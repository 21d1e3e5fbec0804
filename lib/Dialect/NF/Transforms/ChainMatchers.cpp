//===- ChainMatchers.cpp - dialect-neutral matching of op chains -*- C++
//-*-===//
//
// Part of normfuse. See ChainMatchers.h.
//
//===----------------------------------------------------------------------===//

#include "ChainMatchers.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::nf::chain;

namespace {

bool hasFloatTensorResult(Operation *op) {
  if (op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && isa<FloatType>(type.getElementType());
}

} // namespace

Arith nf::chain::classify(Operation *op) {
  if (!op || !hasFloatTensorResult(op))
    return Arith::None;
  return llvm::TypeSwitch<Operation *, Arith>(op)
      .Case<tosa::AddOp, arith::AddFOp, nf::AddOp>(
          [](auto) { return Arith::Add; })
      .Case<tosa::SubOp, arith::SubFOp>([](auto) { return Arith::Sub; })
      .Case<tosa::MulOp>([](tosa::MulOp mul) {
        // A non-zero shift is a fixed-point multiply, not x * y.
        return mul.getShift() == 0 ? Arith::Mul : Arith::None;
      })
      .Case<arith::MulFOp, nf::MulOp>([](auto) { return Arith::Mul; })
      .Case<arith::DivFOp>([](auto) { return Arith::Div; })
      .Case<tosa::PowOp, math::PowFOp>([](auto) { return Arith::Pow; })
      // arith.maxnumf returns the other operand for a NaN: not max(x, 0).
      .Case<tosa::MaximumOp, arith::MaximumFOp>([](auto) { return Arith::Max; })
      .Case<tosa::TanhOp, math::TanhOp>([](auto) { return Arith::Tanh; })
      .Case<tosa::ErfOp, math::ErfOp>([](auto) { return Arith::Erf; })
      .Case<tosa::SigmoidOp>([](auto) { return Arith::Sigmoid; })
      .Case<tosa::ExpOp, math::ExpOp>([](auto) { return Arith::Exp; })
      .Case<tosa::RsqrtOp, math::RsqrtOp>([](auto) { return Arith::Rsqrt; })
      .Case<math::SqrtOp>([](auto) { return Arith::Sqrt; })
      .Case<tosa::ReciprocalOp>([](auto) { return Arith::Reciprocal; })
      .Case<tosa::NegateOp, arith::NegFOp>([](auto) { return Arith::Negate; })
      .Default([](Operation *) { return Arith::None; });
}

bool nf::chain::isCommutative(Arith kind) {
  return kind == Arith::Add || kind == Arith::Mul || kind == Arith::Max;
}

Operation *nf::chain::definedBy(Value v, Arith kind) {
  Operation *op = v.getDefiningOp();
  return op && classify(op) == kind ? op : nullptr;
}

std::optional<double> nf::chain::splatValue(Value v) {
  // Look through reshapes of a constant (TOSA broadcasts by rank, so a
  // scalar often arrives as tosa.reshape of a 1-element constant).
  while (Operation *op = v.getDefiningOp()) {
    if (isa<tosa::ReshapeOp, tensor::ReshapeOp, tensor::ExpandShapeOp,
            tensor::CollapseShapeOp>(op))
      v = op->getOperand(0);
    else
      break;
  }
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  auto elements = dyn_cast<DenseFPElementsAttr>(attr);
  if (!elements || !elements.isSplat())
    return std::nullopt;
  return elements.getSplatValue<APFloat>().convertToDouble();
}

bool nf::chain::isSplatNear(Value v, double expected) {
  std::optional<double> value = splatValue(v);
  if (!value)
    return false;
  Type element = getElementTypeOrSelf(v.getType());
  double tolerance = 1e-4;
  if (auto floatType = dyn_cast<FloatType>(element);
      floatType && floatType.getFPMantissaWidth() < 24)
    tolerance = std::ldexp(1.0, 1 - int(floatType.getFPMantissaWidth()));
  return std::abs(*value - expected) <= tolerance * std::abs(expected);
}

bool nf::chain::matchOperands(Operation *op,
                              llvm::function_ref<bool(Value, Value)> fn) {
  if (op->getNumOperands() != 2)
    return false;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (fn(lhs, rhs))
    return true;
  return isCommutative(classify(op)) && fn(rhs, lhs);
}

bool nf::chain::usesStayInside(llvm::ArrayRef<Operation *> interior,
                               Operation *root) {
  llvm::SmallPtrSet<Operation *, 16> inside(interior.begin(), interior.end());
  inside.insert(root);
  for (Operation *op : interior)
    for (Operation *user : op->getUsers())
      if (!inside.contains(user))
        return false;
  return true;
}

bool nf::chain::isNFFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(
                       tensor.getElementType());
}

bool nf::chain::isSplatRounded(Value v, double expected) {
  std::optional<double> value = splatValue(v);
  auto element = dyn_cast<FloatType>(getElementTypeOrSelf(v.getType()));
  if (!value || !element)
    return false;
  double ulp = std::ldexp(1.0, 1 - int(element.getFPMantissaWidth()));
  return std::abs(*value - expected) <= ulp * std::abs(expected);
}
