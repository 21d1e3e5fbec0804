//===- BufferizePipeline.h - tensors to buffers, results out ----*- C++ -*-===//
//
// Part of normfuse. The bufferization every back end runs after lowering
// nf ops: one-shot bufferization across function boundaries (identity
// layouts), then function results become caller-provided out-parameters,
// a result allocation of static shape replaced by the out-parameter itself.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_COMMON_BUFFERIZEPIPELINE_H
#define NORMFUSE_CODEGEN_COMMON_BUFFERIZEPIPELINE_H

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::nf {

void addBufferizeToOutParamsPasses(OpPassManager &pm);

} // namespace mlir::nf

#endif // NORMFUSE_CODEGEN_COMMON_BUFFERIZEPIPELINE_H
