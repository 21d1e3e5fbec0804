//===- Pipelines.cpp - the CUDA pass pipeline -------------------*- C++ -*-===//
//
// Part of normfuse. See buildCUDAPipeline in Pipelines.h: nf-lower-to-gpu,
// then the same bufferization as the CPU's (function results become
// out-parameters), results of dynamic shape written straight into their
// out-parameters (nf-elide-result-copies), and canonicalization. Kernels are
// left in the gpu dialect for the CUDA printer.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Pipelines.h"
#include "normfuse/Codegen/Common/BufferizePipeline.h"
#include "normfuse/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void nf::buildCUDAPipeline(OpPassManager &pm,
                           const CUDAPipelineOptions &options) {
  NFLowerToGPUPassOptions lower;
  lower.arch = options.arch;
  lower.rowNormSchedule = options.rowNormSchedule;
  lower.allowTf32 = options.allowTf32;
  pm.addPass(createNFLowerToGPUPass(lower));

  addBufferizeToOutParamsPasses(pm);
  pm.addNestedPass<func::FuncOp>(createNFElideResultCopiesPass());
  // No buffer deallocation pipeline: it refuses gpu.launch_func (an op
  // with unknown memory effects). A temporary between launches is a
  // memref.alloc that lives until the function returns, when the runtime
  // that runs the host function frees it.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void nf::registerCUDAPipelines() {
  PassPipelineRegistration<CUDAPipelineOptions>(
      "nf-cuda-pipeline",
      "Lower nf ops on tensors to GPU kernels and a host function that "
      "launches them",
      buildCUDAPipeline);
}
