//===- Tensor.cpp - host buffers handed to normfuse kernels -----*- C++ -*-===//
//
// Part of normfuse. See Tensor.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Support/Tensor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace normfuse;

const char *normfuse::getDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  }
  return "?";
}

size_t normfuse::getDTypeSize(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
    return 4;
  case DType::F64:
    return 8;
  }
  return 0;
}

std::optional<DType> normfuse::parseDType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DType>>(name)
      .Case("f16", DType::F16)
      .Case("bf16", DType::BF16)
      .Case("f32", DType::F32)
      .Case("f64", DType::F64)
      .Default(std::nullopt);
}

std::string normfuse::formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t TensorRef::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

bool TensorRef::isContiguous() const {
  if (strides.empty())
    return true;
  if (strides.size() != shape.size())
    return false;
  // No elements: nothing is out of place, whatever the strides (NumPy
  // gives an empty array's strides as if its zero dimension were not).
  if (llvm::is_contained(shape, 0))
    return true;
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected)
      return false;
    expected *= shape[i];
  }
  return true;
}
