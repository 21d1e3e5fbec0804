//===- ModuleTools.h - what the fusion pipeline makes of a module -*- C++
//-*-===//
//
// Part of normfuse. Library forms of two nf-opt views, for hosts that hold
// IR as text (the Python package): the module after the fusion pipeline, and
// its graph of kernels. Each call parses `irText` in a context of its own;
// IR that does not parse or verify, or a pipeline that fails, returns an
// error carrying MLIR's diagnostics (named after `bufferName`).
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_JIT_MODULETOOLS_H
#define NORMFUSE_JIT_MODULETOOLS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace normfuse::jit {

/// The module after nf-fuse-pipeline (decomposed chains raised to nf ops,
/// each producer fused with its pointwise neighbours), printed as MLIR.
llvm::Expected<std::string> fuseModule(llvm::StringRef irText,
                                       llvm::StringRef bufferName = "<ir>");

/// The kernel graph of every function the module defines, as one Graphviz
/// DOT digraph (what `nf-opt --nf-kernel-graph=dot=FILE` writes), after
/// nf-fuse-pipeline when `fuse`.
llvm::Expected<std::string> kernelGraph(llvm::StringRef irText, bool fuse,
                                        llvm::StringRef bufferName = "<ir>");

} // namespace normfuse::jit

#endif // NORMFUSE_JIT_MODULETOOLS_H
