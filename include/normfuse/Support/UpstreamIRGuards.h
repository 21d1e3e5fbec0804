//===- UpstreamIRGuards.h - parsed IR that crashes MLIR 19 ------*- C++ -*-===//
//
// Part of normfuse. The second half of the guards in UpstreamGuards.h: IR
// that MLIR 19 parses and verifies but then crashes on when it prints or
// lowers it. These are checked on the parsed module, before anything else
// touches it, by nf-opt (as the first pass of every pipeline, the empty one
// included), nf-translate, the JIT (nf-run, Python, the C++ library) and
// normfuse.fuse. Each check and the crash it prevents are tabled in
// docs/UpstreamGuards.md.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_SUPPORT_UPSTREAMIRGUARDS_H
#define NORMFUSE_SUPPORT_UPSTREAMIRGUARDS_H

#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace normfuse {

/// Emits an error at each construct under `root` that would crash MLIR 19
/// later (the diagnostics name the location, never print the op, since
/// printing is one of the things that crashes), and fails if there is one.
mlir::LogicalResult checkUpstreamIRCrashes(mlir::Operation *root);

/// The same check as a pass on any operation, for nf-opt's pipelines.
std::unique_ptr<mlir::Pass> createUpstreamIRGuardPass();

} // namespace normfuse

#endif // NORMFUSE_SUPPORT_UPSTREAMIRGUARDS_H
