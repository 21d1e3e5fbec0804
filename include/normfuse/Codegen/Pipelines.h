//===- Pipelines.h - normfuse's pass pipelines ------------------*- C++ -*-===//
//
// Part of normfuse. The CPU pipeline takes a module of functions on tensors
// of nf ops, TOSA ops and elementwise arith/math ops to the LLVM dialect,
// ready for translation and the ORC JIT (the CUDA pipeline is below):
//   TOSA and tensor arith/math to linalg on tensors -> nf-lower-to-loops ->
//   one-shot bufferization (function results become out-parameters) ->
//   linalg to parallel loops -> buffer deallocation -> OpenMP for the
//   parallel loops -> nf-expand-math -> conversion to the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_PIPELINES_H
#define NORMFUSE_CODEGEN_PIPELINES_H

#include "normfuse/Runtime/GpuTarget.h"

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::nf {

struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("Lanes of the inner vector loops (1: scalar loops)"),
      llvm::cl::init(8)};
  PassOptions::Option<bool> parallel{
      *this, "parallel",
      llvm::cl::desc("Run row loops in parallel with OpenMP"),
      llvm::cl::init(true)};
};

/// Lowers nf and TOSA ops to loops and bufferizes: a function returning
/// tensors becomes a function writing its results into trailing memref
/// arguments.
void buildCPUBufferizationPipeline(OpPassManager &pm,
                                   const CPUPipelineOptions &options);

/// The whole CPU pipeline, from nf and TOSA ops on tensors to the LLVM
/// dialect.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Registers `nf-cpu-bufferize` and `nf-cpu-pipeline` with the pass
/// registry (for nf-opt).
void registerCPUPipelines();

struct CUDAPipelineOptions : public PassPipelineOptions<CUDAPipelineOptions> {
  PassOptions::Option<std::string> arch{
      *this, "arch",
      llvm::cl::desc("The GPU target schedules are chosen for: sm_XY, "
                     "compute_XY or a part (h100-pcie), optionally with "
                     ":key=value figures (sm_90:sms=114)"),
      llvm::cl::init(normfuse::runtime::kDefaultGpuTarget)};
  PassOptions::Option<std::string> rowNormSchedule{
      *this, "row-norm-schedule",
      llvm::cl::desc("Force the row-norm schedule (auto, warp-rows, "
                     "block-row-registers, block-row-streaming, split-row, "
                     "channels-last-groups, cluster-row; sized for tests, "
                     "or with ':full' as the schedule layer sizes the kind)"),
      llvm::cl::init("auto")};
  PassOptions::Option<bool> allowTf32{
      *this, "allow-tf32",
      llvm::cl::desc("Run f32 matmuls and convolutions on tensor cores as "
                     "tf32 (sm_80 and newer)"),
      llvm::cl::init(false)};
};

/// The CUDA pipeline: nf ops on tensors to GPU kernels (nf-lower-to-gpu)
/// and a host function on buffers that launches them, results as
/// out-parameters, temporaries allocated (memref.alloc) for the whole call. Its
/// output is what nf-translate --nf-to-cuda prints and the runtimes launch.
void buildCUDAPipeline(OpPassManager &pm, const CUDAPipelineOptions &options);

/// Registers `nf-cuda-pipeline` with the pass registry (for nf-opt).
void registerCUDAPipelines();

} // namespace mlir::nf

#endif // NORMFUSE_CODEGEN_PIPELINES_H
