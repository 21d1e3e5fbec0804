//===- Npy.cpp - NumPy .npy files -------------------------------*- C++ -*-===//
//
// Part of normfuse. See Npy.h: the compiler's face of the runtime's .npy
// reader and writer (normfuse/Runtime/NpyFile.h), with llvm::Error and the
// DType enum.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Support/Npy.h"
#include "normfuse/Runtime/FileIO.h"
#include "normfuse/Runtime/NpyFile.h"

using namespace normfuse;

static llvm::Error npyError(const std::string &message) {
  return llvm::make_error<llvm::StringError>(message,
                                             llvm::inconvertibleErrorCode());
}

/// The runtime's array as the compiler's (the dtype names agree).
static NpyArray fromRuntime(runtime::NpyArray &&array) {
  NpyArray out;
  out.dtype = *parseDType(array.dtype);
  out.shape = std::move(array.shape);
  out.data = std::move(array.data);
  return out;
}

llvm::Expected<NpyArray> normfuse::parseNpy(llvm::StringRef bytes,
                                            llvm::StringRef name) {
  runtime::NpyArray array;
  std::string error;
  if (!runtime::parseNpy(bytes.data(), bytes.size(), name.str(), array, error))
    return npyError(error);
  return fromRuntime(std::move(array));
}

llvm::Expected<NpyArray> normfuse::readNpy(llvm::StringRef path) {
  runtime::NpyArray array;
  std::string error;
  if (!runtime::readNpyFile(path.str(), array, error))
    return npyError(error);
  return fromRuntime(std::move(array));
}

std::string normfuse::encodeNpy(const NpyArray &array) {
  return runtime::encodeNpy(getDTypeName(array.dtype), array.shape,
                            array.data.data(), array.data.size());
}

llvm::Error normfuse::writeNpy(llvm::StringRef path, const NpyArray &array) {
  return writeNpyFiles({path.str()}, {array});
}

llvm::Error normfuse::writeNpyFiles(llvm::ArrayRef<std::string> paths,
                                    llvm::ArrayRef<NpyArray> arrays) {
  assert(paths.size() == arrays.size() && "one path per array");
  std::string error;
  if (!runtime::writeFilesAllOrNothing(
          paths.vec(), [&](size_t i) { return encodeNpy(arrays[i]); }, error))
    return npyError(error);
  return llvm::Error::success();
}

NpyArray normfuse::convertF32ToBF16(const NpyArray &array) {
  runtime::NpyArray in;
  in.dtype = "f32";
  in.shape = array.shape;
  in.data = array.data;
  return fromRuntime(runtime::convertF32ToBF16(in));
}
