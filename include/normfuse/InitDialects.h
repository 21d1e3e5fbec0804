//===- InitDialects.h - the dialects normfuse's IR uses ---------*- C++ -*-===//
//
// Part of normfuse. The dialects a parser of normfuse's IR needs, in a
// library of their own (NFInitDialects) so that what parses IR without
// running every pipeline (the CUDA printer's translations) does not link
// the CPU back end.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_INITDIALECTS_H
#define NORMFUSE_INITDIALECTS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::nf {

/// Adds the nf dialect and the upstream dialects normfuse consumes or
/// produces: func, arith, math, tensor, tosa, linalg, scf, memref,
/// bufferization, vector, gpu, nvgpu, llvm and omp; and the bufferization
/// models of arith, func, linalg, scf and tensor ops.
void registerAllDialects(DialectRegistry &registry);

} // namespace mlir::nf

#endif // NORMFUSE_INITDIALECTS_H
