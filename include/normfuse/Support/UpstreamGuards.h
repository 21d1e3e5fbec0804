//===- UpstreamGuards.h - refuse what crashes MLIR 19 -------------*- C++
//-*-===//
//
// Part of normfuse. Constructs a user can write that crash Debian's MLIR 19
// instead of failing with a diagnostic. normfuse's tools and libraries look
// for them in the text before MLIR parses it, and refuse them with a
// message. Each guard, with the upstream behaviour, is listed in
// docs/UpstreamGuards.md; the fuzzer that found it keeps its input in
// fuzz/regressions.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_SUPPORT_UPSTREAMGUARDS_H
#define NORMFUSE_SUPPORT_UPSTREAMGUARDS_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace normfuse {

/// The diagnostic ("NAME:LINE:COL: error: ...") for the first construct in
/// `text` that would crash MLIR 19's parser, or none.
std::optional<std::string> findUpstreamCrash(llvm::StringRef text,
                                             llvm::StringRef bufferName);

} // namespace normfuse

#endif // NORMFUSE_SUPPORT_UPSTREAMGUARDS_H
