//===- Patterns.h - nf raising and fusion pattern sets ----------*- C++ -*-===//
//
// Part of normfuse. The rewrite patterns that raise decomposed graphs (TOSA,
// elementwise arith/math on tensors, nf's own primitive ops) to nf ops, one
// populate function per family so a test pass can run each alone, and the
// fusion driver with the control function that decides what it may fuse.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_DIALECT_NF_TRANSFORMS_PATTERNS_H
#define NORMFUSE_DIALECT_NF_TRANSFORMS_PATTERNS_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::nf {

//===----------------------------------------------------------------------===//
// Raising
//===----------------------------------------------------------------------===//

/// relu from max(x, 0): tosa.maximum, tosa.clamp [0, +inf], arith.maximumf.
void populateRaiseReluPatterns(RewritePatternSet &patterns);
/// bias_add from a broadcasting add of a per-channel vector.
void populateRaiseBiasAddPatterns(RewritePatternSet &patterns);
/// gelu (tanh form) from 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))).
void populateRaiseGeluTanhPatterns(RewritePatternSet &patterns);
/// gelu (exact form) from 0.5*x*(1+erf(x/sqrt(2))) and x*Phi(x).
void populateRaiseGeluErfPatterns(RewritePatternSet &patterns);
/// silu from x*sigmoid(x).
void populateRaiseSiluPatterns(RewritePatternSet &patterns);
/// layer_norm from mean / subtract / square / mean / add eps / rsqrt / mul
/// (optional scale and shift) over trailing axes.
void populateRaiseLayerNormPatterns(RewritePatternSet &patterns);
/// rms_norm from x * rsqrt(mean(x^2) + eps) * scale.
void populateRaiseRMSNormPatterns(RewritePatternSet &patterns);
/// group_norm from a reshape to (N, G, C/G, ...) and the LayerNorm chain.
void populateRaiseGroupNormPatterns(RewritePatternSet &patterns);

/// The names of the raising families, as nf-test-raise-patterns takes them.
llvm::ArrayRef<llvm::StringRef> getRaisePatternFamilies();
/// Adds the family called `name`; fails on an unknown name.
LogicalResult populateRaisePatternFamily(RewritePatternSet &patterns,
                                         llvm::StringRef name);
/// Every raising family (what nf-raise runs).
void populateRaisePatterns(RewritePatternSet &patterns);

} // namespace mlir::nf

#endif // NORMFUSE_DIALECT_NF_TRANSFORMS_PATTERNS_H
