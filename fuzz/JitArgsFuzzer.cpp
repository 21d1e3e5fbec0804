//===- JitArgsFuzzer.cpp - fuzz the JIT's argument checks -----------------===//
//
// Part of normfuse. Kernels compiled once (static shapes, dynamic
// dimensions, several results, bf16) are called with arguments the input
// bytes describe: how many inputs and outputs, each one's dtype, rank,
// dimensions (negative and huge ones too) and strides. Each buffer holds
// exactly as many elements as its own valid shape says (inputs whose valid
// shapes are too large to allocate are skipped; invalid shapes get a small
// buffer), so any read or write past a buffer is a hole in the checks,
// which AddressSanitizer reports. A call returns an error or runs; it never
// crashes.
//
//===----------------------------------------------------------------------===//

#include "normfuse/JIT/JIT.h"

#include <climits>
#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

namespace {

const char *kModule = R"(
func.func @ln(%x: tensor<4x13xf32>) -> (tensor<4x13xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x13xf32>) -> (tensor<4x13xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y, %m, %r : tensor<4x13xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}
func.func @add(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = nf.add %a, %b : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
func.func @gelu(%x: tensor<?x8xbf16>) -> tensor<?x8xbf16> {
  %0 = nf.gelu %x : tensor<?x8xbf16>
  return %0 : tensor<?x8xbf16>
}
)";

std::vector<std::shared_ptr<normfuse::jit::Kernel>> &kernels() {
  // Kept for the whole process, and reachable (no leak to report).
  static auto *jit = new normfuse::jit::JIT();
  static auto *all = [] {
    auto *list = new std::vector<std::shared_ptr<normfuse::jit::Kernel>>();
    for (const char *name : {"ln", "add", "gelu"}) {
      auto kernel = jit->compile(kModule, name);
      if (!kernel) {
        llvm::errs() << llvm::toString(kernel.takeError()) << "\n";
        std::abort();
      }
      list->push_back(*kernel);
    }
    return list;
  }();
  return *all;
}

/// Reads bytes from the input, 0 past its end.
struct Bytes {
  const uint8_t *data;
  size_t size, at = 0;
  uint8_t next() { return at < size ? data[at++] : 0; }
};

constexpr int64_t kMaxElements = 1 << 12;

struct Tensor {
  std::vector<uint8_t> storage;
  normfuse::TensorRef ref;
};

/// A tensor the bytes describe, or none when its shape is valid but too
/// large to allocate here: the JIT cannot tell a buffer's length, so a
/// buffer smaller than a valid shape is the caller's error, not a hole in
/// the checks. Shapes the JIT must refuse (a negative dimension, a size
/// that overflows 64 bits) get a small buffer.
std::optional<Tensor> makeTensor(Bytes &in) {
  static const normfuse::DType dtypes[] = {
      normfuse::DType::F32, normfuse::DType::F16, normfuse::DType::BF16,
      normfuse::DType::F64};
  Tensor t;
  t.ref.dtype = dtypes[in.next() % 4];
  unsigned rank = in.next() % 5;
  // The element count in 128 bits: past 2^63 bytes the shape is invalid.
  unsigned __int128 elements = 1;
  bool negative = false;
  for (unsigned d = 0; d < rank; ++d) {
    uint8_t b = in.next();
    // Mostly small sizes; now and then a negative or a huge one.
    int64_t size = b < 240   ? b % 20
                   : b < 248 ? -int64_t(b % 4) - 1
                             : int64_t(1) << (b % 8 + 56);
    t.ref.shape.push_back(size);
    if (size < 0)
      negative = true;
    else if (elements <= (unsigned __int128)1 << 64)
      elements *= uint64_t(size);
  }
  if (in.next() % 4 == 0)
    for (unsigned d = 0; d < rank; ++d)
      t.ref.strides.push_back(int64_t(in.next() % 32) - 4);
  unsigned __int128 bytes = elements * normfuse::getDTypeSize(t.ref.dtype);
  bool invalid = negative || bytes > (unsigned __int128)INT64_MAX;
  if (!invalid && elements > kMaxElements)
    return std::nullopt;
  t.storage.assign(invalid || bytes == 0 ? 16 : size_t(bytes), 0);
  t.ref.data = t.storage.data();
  return t;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Bytes in{data, size};
  auto &all = kernels();
  const auto &kernel = all[in.next() % all.size()];
  std::vector<Tensor> inputs, outputs;
  unsigned numInputs = in.next() % 4, numOutputs = in.next() % 4;
  for (unsigned i = 0; i < numInputs + numOutputs; ++i) {
    std::optional<Tensor> t = makeTensor(in);
    if (!t)
      return 0;
    (i < numInputs ? inputs : outputs).push_back(std::move(*t));
  }
  std::vector<normfuse::TensorRef> inRefs, outRefs;
  for (Tensor &t : inputs)
    inRefs.push_back(t.ref);
  for (Tensor &t : outputs)
    outRefs.push_back(t.ref);
  if (llvm::Error err = kernel->run(inRefs, outRefs, /*threads=*/1))
    llvm::consumeError(std::move(err));
  return 0;
}
