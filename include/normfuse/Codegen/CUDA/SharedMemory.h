//===- SharedMemory.h - where a kernel's shared buffers live ----*- C++ -*-===//
//
// Part of normfuse. A kernel's workgroup buffers (its gpu.func workgroup
// attributions) laid out one after another, each at a 16-byte boundary.
// Up to the 48 KiB a kernel may declare statically the printer declares
// each as a static __shared__ array; beyond, the kernel takes one dynamic
// shared buffer that its launch sizes (and the runtime lets the kernel use
// past 48 KiB, up to what the device has: 227 KiB on sm_90, 163 KiB on
// sm_80, 99 KiB on sm_86 and sm_89).
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_CUDA_SHAREDMEMORY_H
#define NORMFUSE_CODEGEN_CUDA_SHAREDMEMORY_H

#include "normfuse/Runtime/GpuTarget.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir::nf::cuda {

using normfuse::runtime::GpuTarget;

/// The most shared memory a kernel declares statically.
constexpr int64_t kMaxStaticSharedBytes = GpuTarget::kStaticSharedBytesPerBlock;

struct SharedMemoryLayout {
  /// Each workgroup buffer's byte offset.
  llvm::SmallVector<int64_t> offsets;
  /// Bytes of all of them.
  int64_t bytes = 0;
  /// Whether they are one dynamic shared buffer of `bytes` (over
  /// kMaxStaticSharedBytes) rather than static arrays.
  bool dynamic() const { return bytes > kMaxStaticSharedBytes; }
};

/// The layout of `kernel`'s workgroup buffers (static shapes; a buffer of
/// another shape counts as empty: the printer refuses it).
SharedMemoryLayout sharedMemoryLayout(gpu::GPUFuncOp kernel);

} // namespace mlir::nf::cuda

#endif // NORMFUSE_CODEGEN_CUDA_SHAREDMEMORY_H
