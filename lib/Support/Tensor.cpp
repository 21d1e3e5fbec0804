//===- Tensor.cpp - host buffers handed to normfuse kernels -----*- C++ -*-===//
//
// Part of normfuse. See Tensor.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Support/Tensor.h"

#include "llvm/ADT/STLExtras.h"

using namespace normfuse;

namespace {
struct DTypeInfo {
  DType dtype;
  const char *name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F16, "f16", 2},  {DType::BF16, "bf16", 2}, {DType::F32, "f32", 4},
    {DType::F64, "f64", 8},  {DType::Bool, "i1", 1},   {DType::I8, "i8", 1},
    {DType::I16, "i16", 2},  {DType::I32, "i32", 4},   {DType::I64, "i64", 8},
    {DType::U8, "ui8", 1},   {DType::U16, "ui16", 2},  {DType::U32, "ui32", 4},
    {DType::U64, "ui64", 8},
};

const DTypeInfo *find(DType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return &info;
  return nullptr;
}
} // namespace

const char *normfuse::getDTypeName(DType dtype) {
  const DTypeInfo *info = find(dtype);
  return info ? info->name : "?";
}

size_t normfuse::getDTypeSize(DType dtype) {
  const DTypeInfo *info = find(dtype);
  return info ? info->size : 0;
}

std::optional<DType> normfuse::getIntegerDType(unsigned width,
                                               bool isUnsigned) {
  switch (width) {
  case 1:
    return isUnsigned ? std::nullopt : std::optional<DType>(DType::Bool);
  case 8:
    return isUnsigned ? DType::U8 : DType::I8;
  case 16:
    return isUnsigned ? DType::U16 : DType::I16;
  case 32:
    return isUnsigned ? DType::U32 : DType::I32;
  case 64:
    return isUnsigned ? DType::U64 : DType::I64;
  default:
    return std::nullopt;
  }
}

bool normfuse::isFloatDType(DType dtype) {
  return dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F32 ||
         dtype == DType::F64;
}

std::optional<DType> normfuse::parseDType(llvm::StringRef name) {
  for (const DTypeInfo &info : kDTypes)
    if (name == info.name)
      return info.dtype;
  return std::nullopt;
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
