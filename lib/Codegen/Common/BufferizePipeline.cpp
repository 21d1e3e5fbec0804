//===- BufferizePipeline.cpp - tensors to buffers, results out --*- C++ -*-===//
//
// Part of normfuse. See BufferizePipeline.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Common/BufferizePipeline.h"

#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

void nf::addBufferizeToOutParamsPasses(OpPassManager &pm) {
  bufferization::OneShotBufferizationOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsOpts outParams;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
}
