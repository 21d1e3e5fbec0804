//===- BufferizePipeline.h - tensors to buffers, results out ----*- C++ -*-===//
//
// Part of normfuse. The bufferization every back end runs after lowering
// nf ops: one-shot bufferization across function boundaries (identity
// layouts) with every tensor argument read-only (a caller's inputs are
// never written), then function results become caller-provided
// out-parameters, a result allocation of static shape replaced by the
// out-parameter itself.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_COMMON_BUFFERIZEPIPELINE_H
#define NORMFUSE_CODEGEN_COMMON_BUFFERIZEPIPELINE_H

namespace mlir {
class OpPassManager;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace mlir::nf {

void addBufferizeToOutParamsPasses(OpPassManager &pm);

/// Marks `fn`'s tensor arguments read-only for one-shot bufferization
/// (`bufferization.writable = false`), so that what writes into one (an
/// elementwise op into its operand, an insert_slice into an argument)
/// writes into a copy.
void markTensorArgumentsReadOnly(func::FuncOp fn);

} // namespace mlir::nf

#endif // NORMFUSE_CODEGEN_COMMON_BUFFERIZEPIPELINE_H
