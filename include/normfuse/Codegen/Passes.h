//===- Passes.h - normfuse code generation passes ---------------*- C++ -*-===//
//
// Part of normfuse. Declares the code generation passes (generated from
// Passes.td), the patterns behind them and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_PASSES_H
#define NORMFUSE_CODEGEN_PASSES_H

#include "normfuse/Runtime/GpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace affine {
class AffineDialect;
} // namespace affine
namespace arith {
class ArithDialect;
} // namespace arith
namespace bufferization {
class BufferizationDialect;
} // namespace bufferization
namespace gpu {
class GPUDialect;
} // namespace gpu
namespace index {
class IndexDialect;
} // namespace index
namespace linalg {
class LinalgDialect;
} // namespace linalg
namespace math {
class MathDialect;
} // namespace math
namespace memref {
class MemRefDialect;
} // namespace memref
namespace nf {
class NFDialect;
} // namespace nf
namespace nvgpu {
class NVGPUDialect;
} // namespace nvgpu
namespace scf {
class SCFDialect;
} // namespace scf
namespace tensor {
class TensorDialect;
} // namespace tensor
namespace vector {
class VectorDialect;
} // namespace vector
} // namespace mlir

namespace mlir::nf {

#define GEN_PASS_DECL
#include "normfuse/Codegen/Passes.h.inc"

/// How nf ops become loops.
struct LoopLoweringOptions {
  /// Lanes of the inner vector loops; 1 emits scalar loops only.
  int64_t vectorWidth = 8;
};

/// Patterns lowering the pointwise nf ops (bias_add, relu, gelu, silu, add,
/// mul) to loops.
void populateLowerPointwiseToLoopsPatterns(RewritePatternSet &patterns,
                                           const LoopLoweringOptions &options);

/// Patterns lowering the forward norms to loops.
void populateLowerNormsToLoopsPatterns(RewritePatternSet &patterns,
                                       const LoopLoweringOptions &options);

/// Patterns lowering the norms with per-channel statistics (group, instance,
/// batch norm), forward and backward, and bias_add_grad to loops.
void populateLowerChannelNormsToLoopsPatterns(
    RewritePatternSet &patterns, const LoopLoweringOptions &options);

/// Patterns lowering the backward trailing-axis norms to loops.
void populateLowerNormGradsToLoopsPatterns(RewritePatternSet &patterns,
                                           const LoopLoweringOptions &options);

/// Patterns lowering matmul, conv2d and the conv2d backward ops to loops.
void populateLowerProducersToLoopsPatterns(RewritePatternSet &patterns,
                                           const LoopLoweringOptions &options);

#define GEN_PASS_REGISTRATION
#include "normfuse/Codegen/Passes.h.inc"

} // namespace mlir::nf

#endif // NORMFUSE_CODEGEN_PASSES_H
