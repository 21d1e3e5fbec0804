//===- InitAll.h - register what normfuse's tools use -----------*- C++ -*-===//
//
// Part of normfuse. One place that names the dialects and passes normfuse's
// tools load, instead of MLIR's umbrella registration headers (which cost
// seconds and a gigabyte of memory per file that includes them).
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_INITALL_H
#define NORMFUSE_INITALL_H

#include "normfuse/InitDialects.h"

namespace mlir::nf {

/// Registers the passes nf-opt offers: normfuse's own passes and pipelines,
/// the upstream generic transforms (canonicalize, cse, inline, symbol-dce,
/// ...) and bufferization passes.
void registerAllPasses();

} // namespace mlir::nf

#endif // NORMFUSE_INITALL_H
