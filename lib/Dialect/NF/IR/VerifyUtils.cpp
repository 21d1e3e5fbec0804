//===- VerifyUtils.cpp - checks shared by nf op verifiers -------*- C++ -*-===//
//
// Part of normfuse. See VerifyUtils.h.
//
//===----------------------------------------------------------------------===//

#include "VerifyUtils.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;

std::string nf::detail::formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << '?';
    else
      os << d;
  });
  os << ']';
  return s;
}

std::string nf::detail::formatType(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

bool nf::detail::isCompatibleShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip_equal(a, b))
    if (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y)
      return false;
  return true;
}

ArrayRef<int64_t> nf::detail::shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

LogicalResult nf::detail::verifyShape(Operation *op, Value v, StringRef name,
                                      ArrayRef<int64_t> expected,
                                      StringRef meaning) {
  if (isCompatibleShape(shapeOf(v), expected))
    return success();
  return op->emitOpError() << name << " has shape " << formatShape(shapeOf(v))
                           << "; expected " << formatShape(expected) << " ("
                           << meaning << ")";
}

LogicalResult nf::detail::verifySameType(Operation *op, Value v, StringRef name,
                                         Value ref, StringRef refName) {
  if (succeeded(verifyCompatibleShape(v.getType(), ref.getType())) &&
      getElementTypeOrSelf(v) == getElementTypeOrSelf(ref))
    return success();
  return op->emitOpError() << name << " type " << v.getType()
                           << " does not match the " << refName << " type "
                           << ref.getType();
}

LogicalResult nf::detail::verifyParamElementType(Operation *op, Value v,
                                                 StringRef name,
                                                 Type inputElement) {
  Type element = getElementTypeOrSelf(v);
  if (element == inputElement || element.isF32())
    return success();
  return op->emitOpError() << name << " element type " << element
                           << " must be the input element type ("
                           << inputElement << ") or f32";
}

LogicalResult nf::detail::verifyResultElementType(Operation *op, Value v,
                                                  StringRef name,
                                                  Type inputElement) {
  Type element = getElementTypeOrSelf(v);
  if (element == inputElement ||
      (element.isF32() && inputElement.getIntOrFloatBitWidth() == 16))
    return success();
  return op->emitOpError() << name << " element type " << element
                           << " must be the input element type ("
                           << inputElement << "), or f32 for a 16-bit input";
}

LogicalResult nf::detail::verifyStatElementType(Operation *op, Value v,
                                                StringRef name,
                                                Type inputElement) {
  Type element = getElementTypeOrSelf(v);
  Type acc = getAccumulationType(inputElement);
  if (element == acc)
    return success();
  return op->emitOpError() << name << " element type " << element
                           << " is not the accumulation type " << acc
                           << " of the input element type " << inputElement;
}

LogicalResult nf::detail::verifyMinRank(Operation *op, Value v, StringRef name,
                                        int64_t minRank, StringRef form) {
  int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
  if (rank >= minRank)
    return success();
  return op->emitOpError() << name << " must have rank >= " << minRank << " ("
                           << form << "), got rank " << rank;
}

LogicalResult nf::detail::verifyEpsilon(Operation *op, double epsilon) {
  if (std::isfinite(epsilon) && epsilon >= 0.0)
    return success();
  return op->emitOpError() << "epsilon must be finite and non-negative, got "
                           << epsilon;
}
