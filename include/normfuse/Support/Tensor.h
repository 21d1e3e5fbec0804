//===- Tensor.h - host buffers handed to normfuse kernels -------*- C++ -*-===//
//
// Part of normfuse. Plain C++ (no MLIR types): element types and a view of
// a host buffer described by dtype, shape and strides.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_SUPPORT_TENSOR_H
#define NORMFUSE_SUPPORT_TENSOR_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace normfuse {

/// The element types normfuse kernels read and write: floats, which nf ops
/// take, and the bool and integer types other ops (TOSA, arith) take at a
/// function's boundary. Bool is one byte, 0 or 1, as NumPy stores it.
enum class DType {
  F16,
  BF16,
  F32,
  F64,
  Bool,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64
};

/// "f16", "bf16", "f32", "f64", "i1" (bool), "i8" ... "i64", "ui8" ...
/// "ui64" (MLIR's spelling).
const char *getDTypeName(DType dtype);

/// The integer dtype of `width` bits (1: bool; 8, 16, 32, 64), signed or
/// unsigned, if there is one.
std::optional<DType> getIntegerDType(unsigned width, bool isUnsigned);

/// Whether `dtype` is f16, bf16, f32 or f64.
bool isFloatDType(DType dtype);

/// Bytes per element.
size_t getDTypeSize(DType dtype);

/// The dtype spelled `name` ("f32", ...), if any.
std::optional<DType> parseDType(llvm::StringRef name);

/// Prints a shape as "[2, 3, 4]".
std::string formatShape(const std::vector<int64_t> &shape);

/// Where a buffer's memory is.
enum class MemorySpace {
  Host,
  /// CUDA device (or managed) memory: `data` holds a CUdeviceptr.
  CUDADevice,
};

/// A buffer: `data` points at element [0, ..., 0]; `strides` are in
/// elements, and empty means row-major contiguous. Host memory unless
/// `space` says otherwise (only the cuda target takes device memory).
struct TensorRef {
  void *data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  MemorySpace space = MemorySpace::Host;

  int64_t getNumElements() const;
  size_t getNumBytes() const { return getNumElements() * getDTypeSize(dtype); }
  /// Whether the elements lie row-major without gaps (strides empty, or
  /// equal to the row-major strides wherever the size is above 1), or
  /// there are no elements.
  bool isContiguous() const;
};

} // namespace normfuse

#endif // NORMFUSE_SUPPORT_TENSOR_H
