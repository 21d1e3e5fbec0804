//===- CUDAEmitter.h - print nf kernel IR as CUDA C++ -----------*- C++ -*-===//
//
// Part of normfuse. Prints the kernels of a module (the gpu.module that
// nf-lower-to-gpu fills) as one self-contained CUDA translation unit whose
// only includes are the toolkit's cuda_fp16.h and cuda_bf16.h. Everything
// a kernel does comes from its IR; the printer adds only a small fixed
// prelude of types and wrappers (nf_vec, nf_ldg, nf_stg, NF_SHARED,
// NF_SIM_ENTRY) through which the same text also compiles for the host
// against normfuse's CUDA simulator (-DNF_CUDA_SIM). Like upstream's
// Target/Cpp emitter: one emitter, one dispatch over ops, and an error at
// the op for anything it cannot print.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_TARGET_CUDAEMITTER_H
#define NORMFUSE_TARGET_CUDAEMITTER_H

#include "normfuse/Runtime/GpuTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::nf {

struct CUDAEmitOptions {
  /// The GPU target named in the file's header comment (the kernels'
  /// schedules were chosen for it).
  std::string target = normfuse::runtime::kDefaultGpuTarget;
  /// Whether a module without kernels prints (the prelude alone: a lowered
  /// function whose results are all empty launches nothing) rather than
  /// fails (nf-translate: the module was probably not lowered).
  bool allowNoKernels = false;
};

/// Prints every gpu.func kernel of `module` as CUDA C++ to `os`. Fails,
/// with an error at the op, on anything it cannot print; nothing is
/// written then.
LogicalResult translateToCUDA(ModuleOp module, llvm::raw_ostream &os,
                              const CUDAEmitOptions &options = {});

/// Registers the `nf-to-cuda` translation (for nf-translate).
void registerToCUDATranslation();

} // namespace mlir::nf

#endif // NORMFUSE_TARGET_CUDAEMITTER_H
