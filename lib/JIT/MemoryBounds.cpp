//===- MemoryBounds.cpp - the memory a function's tensors need ------------===//
//
// Part of normfuse. See MemoryBounds.h.
//
//===----------------------------------------------------------------------===//

#include "MemoryBounds.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#include <limits>
#include <string>

using namespace normfuse;
using namespace normfuse::jit;

namespace {

uint64_t elementBytes(mlir::Type type) {
  if (auto complex = mlir::dyn_cast<mlir::ComplexType>(type))
    return 2 * elementBytes(complex.getElementType());
  if (type.isIntOrFloat())
    return (type.getIntOrFloatBitWidth() + 7) / 8;
  return 8; // index and anything else: a machine word
}

/// The bytes of a tensor of static shape; 0 for anything else.
uint64_t tensorBytes(mlir::Type type) {
  auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  bool overflow = false;
  uint64_t bytes = elementBytes(tensor.getElementType());
  for (int64_t d : tensor.getShape())
    bytes = llvm::SaturatingMultiply(bytes, uint64_t(d), &overflow);
  return bytes;
}

} // namespace

uint64_t jit::peakTensorBytes(mlir::func::FuncOp fn, mlir::Type &largest) {
  largest = nullptr;
  if (fn.isExternal())
    return 0;
  mlir::Block &body = fn.getBody().front();
  llvm::DenseMap<mlir::Operation *, unsigned> position;
  unsigned index = 0;
  for (mlir::Operation &op : body)
    position[&op] = index++;

  // What each position frees after it runs: the tensors whose last use it
  // is (a use inside a nested region counts at its top-level ancestor).
  std::vector<uint64_t> freedAfter(index, 0);
  uint64_t live = 0, peak = 0, largestBytes = 0;
  index = 0;
  for (mlir::Operation &op : body) {
    for (mlir::Value result : op.getResults()) {
      uint64_t bytes = tensorBytes(result.getType());
      if (bytes == 0)
        continue;
      if (bytes > largestBytes) {
        largestBytes = bytes;
        largest = result.getType();
      }
      unsigned last = index;
      for (mlir::Operation *user : result.getUsers())
        if (mlir::Operation *ancestor = body.findAncestorOpInBlock(*user))
          last = std::max(last, position[ancestor]);
      live = llvm::SaturatingAdd(live, bytes);
      freedAfter[last] = llvm::SaturatingAdd(freedAfter[last], bytes);
    }
    peak = std::max(peak, live);
    // A saturated sum stays saturated: nothing is subtracted from it.
    if (live != std::numeric_limits<uint64_t>::max())
      live -= std::min(live, freedAfter[index]);
    ++index;
  }
  return peak;
}

llvm::Error jit::checkTensorMemory(mlir::func::FuncOp fn,
                                   uint64_t memoryBytes) {
  mlir::Type largest;
  uint64_t peak = peakTensorBytes(fn, largest);
  if (peak <= memoryBytes)
    return llvm::Error::success();
  std::string type;
  llvm::raw_string_ostream os(type);
  os << largest;
  return llvm::createStringError(
      "@" + fn.getSymName().str() + " computes tensors that take " +
      (peak == std::numeric_limits<uint64_t>::max()
           ? std::string("more than 2^64")
           : std::to_string(peak)) +
      " bytes at once (the largest: " + type + "), more than this machine's " +
      std::to_string(memoryBytes) + " bytes of memory");
}
