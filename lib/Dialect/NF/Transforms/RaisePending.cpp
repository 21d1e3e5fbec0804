//===- RaisePending.cpp - raising families not yet written ------*- C++ -*-===//
//
// Part of normfuse. Work in progress (issue 4): each of these families is
// being written in its own file; until then it adds no pattern, and its
// lit tests do not exist yet. Delete a definition here when its file lands.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Dialect/NF/Transforms/Patterns.h"

using namespace mlir;

void nf::populateRaiseLayerNormPatterns(RewritePatternSet &) {}
void nf::populateRaiseRMSNormPatterns(RewritePatternSet &) {}
void nf::populateRaiseGroupNormPatterns(RewritePatternSet &) {}
