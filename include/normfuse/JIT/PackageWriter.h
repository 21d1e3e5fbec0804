//===- PackageWriter.h - kernel packages from nf functions ------*- C++ -*-===//
//
// Part of normfuse. Writes a kernel package (normfuse/Runtime/KernelPackage.h)
// for functions of a module: each entry lowered for the CUDA back end (for
// the first architecture listed), its CUDA checked by compiling it for the
// simulator, optionally compiled ahead of time by NVRTC for every listed
// architecture, and the manifest. A launch plan is fixed: an entry of
// dynamic shape is packaged for given input shapes, with its shape-generic
// kernels (sizes as arguments) and the plan for those shapes. Nothing is
// written unless every entry lowered and compiled.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_JIT_PACKAGEWRITER_H
#define NORMFUSE_JIT_PACKAGEWRITER_H

#include "normfuse/Runtime/GpuTarget.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace normfuse::jit {

struct PackageOptions {
  /// GPU targets (normfuse/Runtime/GpuTarget.h: sm_XY, compute_XY, a part
  /// such as h100-pcie, with :key=value figures): the first one's
  /// schedules are the package's, and each names the architecture of a
  /// binary (no two the same).
  std::vector<std::string> archs = {runtime::kDefaultGpuTarget};
  /// Compile cubins/PTX with NVRTC for every target's architecture.
  bool binaries = false;
  /// Run nf-fuse-pipeline first.
  bool fuse = true;
  /// f32 matmuls and convolutions on tensor cores as tf32
  /// (CUDAOptions::allowTf32).
  bool allowTf32 = false;
  /// The input shapes of entries with dynamic dimensions, by name.
  std::map<std::string, std::vector<std::vector<int64_t>>> inputShapes;
};

/// Writes the package of `entries` of the module `irText` into `dir`
/// (created if need be): every file to a temporary first, renamed into
/// place when all are written, so that a failure leaves no partial package.
llvm::Error writeKernelPackage(llvm::StringRef irText,
                               llvm::ArrayRef<std::string> entries,
                               llvm::StringRef dir,
                               const PackageOptions &options = {});

} // namespace normfuse::jit

#endif // NORMFUSE_JIT_PACKAGEWRITER_H
