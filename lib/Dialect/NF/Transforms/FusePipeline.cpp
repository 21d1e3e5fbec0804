//===- FusePipeline.cpp - raise, fuse, clean up -----------------*- C++ -*-===//
//
// Part of normfuse. The standard graph pipeline: raise decomposed chains to
// nf ops, clean up, group producers with their pointwise neighbours.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Dialect/NF/Transforms/FusePipeline.h"
#include "normfuse/Dialect/NF/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void nf::buildFusePipeline(OpPassManager &pm) {
  OpPassManager &function = pm.nest<func::FuncOp>();
  // CSE first: a chain that computes a value twice (ONNX's LayerNorm body
  // takes 1/stddev once for the output and once for InvStdDev) is one
  // chain to raising, which refuses values used outside their chain.
  function.addPass(createCSEPass());
  function.addPass(createNFRaisePass());
  // Canonicalization folds what raising left dead (constants, reshapes)
  // and CSE merges repeated constants before fusion looks at uses.
  function.addPass(createCanonicalizerPass());
  function.addPass(createCSEPass());
  function.addPass(createNFFusePass());
  function.addPass(createCanonicalizerPass());
}

void nf::registerFusePipeline() {
  PassPipelineRegistration<>(
      "nf-fuse-pipeline",
      "Raise decomposed chains to nf ops, then fuse each producer with its "
      "pointwise prologue and epilogue (nf-raise, canonicalize, cse, "
      "nf-fuse, canonicalize)",
      buildFusePipeline);
}
