//===- FusePipeline.h - the raise + fuse pipeline ---------------*- C++ -*-===//
//
// Part of normfuse. nf-fuse-pipeline: nf-raise, canonicalize, cse, nf-fuse,
// canonicalize, on every function of a module.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_DIALECT_NF_TRANSFORMS_FUSEPIPELINE_H
#define NORMFUSE_DIALECT_NF_TRANSFORMS_FUSEPIPELINE_H

namespace mlir {
class OpPassManager;
namespace nf {

/// Adds the raise + fuse pipeline to a module-level pass manager.
void buildFusePipeline(OpPassManager &pm);

/// Registers it as nf-fuse-pipeline.
void registerFusePipeline();

} // namespace nf
} // namespace mlir

#endif // NORMFUSE_DIALECT_NF_TRANSFORMS_FUSEPIPELINE_H
