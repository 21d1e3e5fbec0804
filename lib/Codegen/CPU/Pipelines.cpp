//===- Pipelines.cpp - normfuse's pass pipelines ----------------*- C++ -*-===//
//
// Part of normfuse. See Pipelines.h. Each conversion is named one by one
// (no mlir/Conversion/Passes.h umbrella). TOSA ops, and elementwise arith
// and math ops on tensors, go through upstream's linalg lowering: linalg on
// tensors before bufferization, parallel loops after it. Both steps skip a
// function of nf ops alone, which compiles as it did without them.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Pipelines.h"
#include "normfuse/Codegen/Common/BufferizePipeline.h"
#include "normfuse/Codegen/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void nf::buildCPUBufferizationPipeline(OpPassManager &pm,
                                       const CPUPipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(createNFLowerTosaToLinalgPass());
  NFLowerToLoopsPassOptions loops;
  loops.vectorWidth = options.vectorWidth;
  // No canonicalization before bufferization: it would fold loads from
  // to_memref back into tensor.extract inside the loops.
  pm.addPass(createNFLowerToLoopsPass(loops));

  // Results become caller-provided out-parameters; a result allocation of
  // static shape is replaced by the out-parameter itself (no copy).
  addBufferizeToOutParamsPasses(pm);
  // Linalg ops whose loops are all parallel become scf.parallel, which
  // scf-to-openmp then runs on several threads like the nf row loops; the
  // ones that reduce become sequential loops.
  pm.addNestedPass<func::FuncOp>(createNFLowerLinalgToLoopsPass());
  bufferization::buildBufferDeallocationPipeline(
      pm, bufferization::BufferDeallocationPipelineOptions());
  pm.addPass(createCanonicalizerPass());
}

void nf::buildCPUPipeline(OpPassManager &pm,
                          const CPUPipelineOptions &options) {
  buildCPUBufferizationPipeline(pm, options);
  // The reshapes TOSA ops leave (memref.expand_shape, collapse_shape)
  // become reinterpret_casts the LLVM conversion takes. nf loops have none,
  // and the IR is canonical here: their functions come out unchanged.
  pm.addPass(memref::createExpandStridedMetadataPass());
  // The index arithmetic of linalg convolutions' loops (and of the
  // reinterpret_casts above) is affine.apply.
  pm.addPass(createLowerAffinePass());
  if (options.parallel) {
    pm.addPass(createConvertSCFToOpenMPPass());
    // scf-to-openmp wraps each loop body in memref.alloca_scope; the bodies
    // allocate nothing on the stack, so canonicalization inlines the scopes
    // before scf-to-cf gives them several blocks.
    pm.addPass(createCanonicalizerPass());
  }
  pm.addPass(createNFExpandMathPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createConvertSCFToCFPass());
  // Math ops LLVM has intrinsics for become those; the rest (f64 tanh and
  // erf, which nf-expand-math leaves) become libm calls, on vectors one
  // vector.extract per lane: so before the vector ops' own conversion.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createNFAlignStreamingStoresPass());
  pm.addPass(createCanonicalizerPass());
}

void nf::registerCPUPipelines() {
  PassPipelineRegistration<CPUPipelineOptions>(
      "nf-cpu-bufferize",
      "Lower nf ops to loops and bufferize (results become out-parameters)",
      buildCPUBufferizationPipeline);
  PassPipelineRegistration<CPUPipelineOptions>(
      "nf-cpu-pipeline", "Lower nf ops on tensors to the LLVM dialect",
      buildCPUPipeline);
}
