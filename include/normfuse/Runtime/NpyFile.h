//===- NpyFile.h - NumPy .npy files, for the runtime alone ------*- C++ -*-===//
//
// Part of normfuse. Reads and writes NumPy's .npy format (versions 1-3):
// little-endian f16/f32/f64 arrays in C order, bf16 as the ml_dtypes
// package stores it (descr '<V2'), bool and 8- to 64-bit integers. Plain C++
// and POSIX, no MLIR or LLVM: the runtime-only tools use it directly, and the
// compiler's tools through normfuse/Support/Npy.h. Every size a header claims
// is overflow-checked against the bytes that follow it. Writes go to temporary
// files that are renamed into place when all of them are written, so a failed
// write leaves no partial file and no partial set of outputs. Errors are return
// values with messages that name the file.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_NPYFILE_H
#define NORMFUSE_RUNTIME_NPYFILE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace normfuse::runtime {

struct NpyArray {
  /// "f16" ('<f2'), "bf16" ('<V2' or '|V2'), "f32" ('<f4'), "f64" ('<f8'),
  /// "i1" (bool, '|b1': every byte 0 or 1), "i8" ... "i64" (NumPy's signed
  /// integers, '|i1' ... '<i8'), "ui8" ... "ui64" ('|u1' ... '<u8').
  std::string dtype = "f32";
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

/// Bytes per element of `dtype`, or 0 for a dtype .npy files here do not
/// hold.
size_t npyElementSize(const std::string &dtype);

/// Parses the .npy contents `bytes[0, size)`; `name` starts every message.
bool parseNpy(const char *bytes, size_t size, const std::string &name,
              NpyArray &array, std::string &error);

/// Reads the .npy file at `path`.
bool readNpyFile(const std::string &path, NpyArray &array, std::string &error);

/// The .npy encoding (version 1.0) of `array`, whose dtype must be one of
/// the four.
std::string encodeNpy(const NpyArray &array);
/// Same, of `bytes` of data at `data`.
std::string encodeNpy(const std::string &dtype,
                      const std::vector<int64_t> &shape, const void *data,
                      size_t bytes);

/// writeFilesAllOrNothing (FileIO.h) of the arrays' encodings.
bool writeNpyFiles(const std::vector<std::string> &paths,
                   const std::vector<const NpyArray *> &arrays,
                   std::string &error);

/// f32 data converted to bf16 (round to nearest even, NaN kept NaN).
NpyArray convertF32ToBF16(const NpyArray &array);

} // namespace normfuse::runtime

#endif // NORMFUSE_RUNTIME_NPYFILE_H
