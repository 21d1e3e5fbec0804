//===- InitAll.cpp - register what normfuse's tools use ---------*- C++ -*-===//
//
// Part of normfuse. See InitAll.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/InitAll.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Codegen/Pipelines.h"
#include "normfuse/Dialect/NF/Transforms/FusePipeline.h"
#include "normfuse/Dialect/NF/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

void mlir::nf::registerAllPasses() {
  // Upstream generic transforms (canonicalize, cse, inline, symbol-dce,
  // ...), bufferization passes, normfuse's passes and pipelines.
  registerTransformsPasses();
  bufferization::registerBufferizationPasses();
  registerNFDialectTransformsPasses();
  registerFusePipeline();
  registerNFCodegenPasses();
  registerCPUPipelines();
  registerCUDAPipelines();
}
