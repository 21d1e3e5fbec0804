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

#include <functional>

namespace mlir::nf {

//===----------------------------------------------------------------------===//
// Raising
//===----------------------------------------------------------------------===//

/// nf.matmul from tosa.matmul; nf.conv2d (nhwc) + nf.bias_add from
/// tosa.conv2d. Float only.
void populateRaiseProducerPatterns(RewritePatternSet &patterns);
/// relu from max(x, 0): tosa.maximum, tosa.clamp [0, +inf], arith.maximumf.
void populateRaiseReluPatterns(RewritePatternSet &patterns);
/// bias_add from a broadcasting add of a per-channel vector.
void populateRaiseBiasAddPatterns(RewritePatternSet &patterns);
/// nf.add from an add of two tensors of the result's type (a residual
/// connection), not of a constant or a reshaped or broadcast vector.
void populateRaiseResidualAddPatterns(RewritePatternSet &patterns);
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

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

/// Decides whether the op on one side of `use` joins the fused group on the
/// other side (as Linalg's ControlFusionFn does). For an epilogue candidate,
/// `use.getOwner()` is the pointwise consumer and `use.get()` the group's
/// current value; for a prologue candidate, `use.getOwner()` is the group's
/// producer and `use.get()` the candidate's result. The driver asks only
/// about fusions that are legal (see fuseProducerGroups); the function
/// picks among them.
using ControlFusionFn = std::function<bool(OpOperand &use)>;

/// normfuse's policy: every legal epilogue, except that a residual add (an
/// nf.add or nf.mul of two tensors) whose only user is a norm is left to
/// that norm's prologue; a norm's prologue only when the norm is its only
/// user (else the sum must be written anyway, and the norm gains nothing);
/// the activation gradient in front of nf.bias_add_grad always (dy is
/// written either way, and the bias gradient then needs no second read).
ControlFusionFn getDefaultControlFusionFn();

/// Groups each producer (nf.matmul, nf.conv2d, a forward norm,
/// nf.bias_add_grad) in `root` with the chain of pointwise nf ops that
/// consume its first result, and a norm (or nf.bias_add_grad) with the
/// pointwise op that computes its first operand, into one nf.fused op each.
/// Legality, whatever `control` says:
///  - an epilogue chain follows a value with exactly one use, so an
///    intermediate needed elsewhere ends the chain and nothing is
///    duplicated;
///  - a prologue op with other users is computed once, inside the group,
///    and its value is yielded to them;
///  - an op joins at most one group, in its own block;
///  - the nf.fused op takes the place of the group's last op, so a group
///    shrinks (last epilogue op first) until every outside user of its
///    values comes after that place.
/// A producer left alone is not wrapped. Returns the number of groups.
unsigned fuseProducerGroups(Operation *root, RewriterBase &rewriter,
                            const ControlFusionFn &control);

} // namespace mlir::nf

#endif // NORMFUSE_DIALECT_NF_TRANSFORMS_PATTERNS_H
