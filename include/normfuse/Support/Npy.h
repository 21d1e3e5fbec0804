//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Part of normfuse. Reads and writes NumPy's .npy format (versions 1-3),
// little-endian f16/f32/f64 arrays in C order, bf16 as the ml_dtypes
// package stores it (descr '<V2'), bool and 8- to 64-bit integers. Writes go to
// temporary files that are renamed into place when all of them are written, so
// a failed write leaves no partial file and no partial set of outputs.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_SUPPORT_NPY_H
#define NORMFUSE_SUPPORT_NPY_H

#include "normfuse/Support/Tensor.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace normfuse {

struct NpyArray {
  /// The dtype the file's descr names: '<f2' f16, '<f4' f32, '<f8' f64,
  /// '<V2' bf16 (ml_dtypes), '|b1' bool, '|i1' ... '<i8' i8 ... i64,
  /// '|u1' ... '<u8' ui8 ... ui64.
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  TensorRef ref() { return TensorRef{data.data(), dtype, shape, {}}; }
};

/// Parses the .npy contents `bytes`; `name` is used in messages.
llvm::Expected<NpyArray> parseNpy(llvm::StringRef bytes, llvm::StringRef name);

/// Reads the .npy file at `path`.
llvm::Expected<NpyArray> readNpy(llvm::StringRef path);

/// The .npy encoding (version 1.0) of `array`.
std::string encodeNpy(const NpyArray &array);

/// Writes `array` to `path` through a temporary file renamed into place.
llvm::Error writeNpy(llvm::StringRef path, const NpyArray &array);

/// Writes `arrays[i]` to `paths[i]`, all or nothing: each goes to a
/// temporary file first, and the files are renamed into place only when
/// every one was written. A path that names a device or a pipe (/dev/null)
/// is written directly, after the temporaries and before the renames. Only
/// a failed rename, after others succeeded, leaves some outputs replaced.
llvm::Error writeNpyFiles(llvm::ArrayRef<std::string> paths,
                          llvm::ArrayRef<NpyArray> arrays);

/// Converts f32 data to bf16 (round to nearest even, NaN kept NaN).
NpyArray convertF32ToBF16(const NpyArray &array);

} // namespace normfuse

#endif // NORMFUSE_SUPPORT_NPY_H
