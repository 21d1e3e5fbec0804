//===- NpyFuzzer.cpp - fuzz the .npy reader -------------------------------===//
//
// Part of normfuse. Any bytes go through parseNpy: it returns an array or
// an error, never crashes, and never allocates more than the bytes it was
// given hold (the shape is checked against the payload before anything is
// allocated). An array it accepts encodes and parses back to itself.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Support/Npy.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  llvm::Expected<normfuse::NpyArray> array = normfuse::parseNpy(bytes, "fuzz");
  if (!array) {
    llvm::consumeError(array.takeError());
    return 0;
  }
  if (array->data.size() > size)
    std::abort(); // more data than the file held
  std::string encoded = normfuse::encodeNpy(*array);
  llvm::Expected<normfuse::NpyArray> again =
      normfuse::parseNpy(encoded, "fuzz-encoded");
  if (!again)
    std::abort(); // what we write, we must read
  if (again->dtype != array->dtype || again->shape != array->shape ||
      again->data != array->data)
    std::abort();
  return 0;
}
