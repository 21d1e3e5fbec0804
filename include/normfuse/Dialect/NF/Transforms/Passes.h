//===- Passes.h - nf dialect transforms -------------------------*- C++ -*-===//
//
// Part of normfuse. Declares the nf dialect's transform passes (generated
// from Passes.td) and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_DIALECT_NF_TRANSFORMS_PASSES_H
#define NORMFUSE_DIALECT_NF_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::nf {

#define GEN_PASS_DECL
#include "normfuse/Dialect/NF/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "normfuse/Dialect/NF/Transforms/Passes.h.inc"

} // namespace mlir::nf

#endif // NORMFUSE_DIALECT_NF_TRANSFORMS_PASSES_H
