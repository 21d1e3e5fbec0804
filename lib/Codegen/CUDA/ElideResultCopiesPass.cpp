//===- ElideResultCopiesPass.cpp - the nf-elide-result-copies pass -------===//
//
// Part of normfuse. See NFElideResultCopiesPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFELIDERESULTCOPIESPASS
#include "normfuse/Codegen/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;

namespace {

/// Writes a result of dynamic shape straight into its out-parameter.
/// Bufferization leaves such a result in a fresh allocation (sized on the
/// host) copied into the out-parameter at the end (it hoists only static
/// allocations); on the GPU that copy is a second pass over the result.
/// Where the allocation is the copy's whole source, used only before the
/// copy, and the out-parameter is used by nothing else, the out-parameter
/// takes the allocation's place.
struct ElideResultCopiesPass
    : nf::impl::NFElideResultCopiesPassBase<ElideResultCopiesPass> {

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isDeclaration())
      return;
    Block &body = function.getBody().front();
    SmallVector<memref::CopyOp> copies(body.getOps<memref::CopyOp>());
    for (memref::CopyOp copy : copies) {
      auto out = dyn_cast<BlockArgument>(copy.getTarget());
      auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
      if (!out || out.getOwner() != &body || !alloc ||
          alloc->getBlock() != &body || !out.hasOneUse() ||
          out.getType() != alloc.getType())
        continue;
      bool usedAfter = llvm::any_of(alloc->getUsers(), [&](Operation *user) {
        Operation *inBody = body.findAncestorOpInBlock(*user);
        return user != copy && (!inBody || !inBody->isBeforeInBlock(copy));
      });
      if (usedAfter)
        continue;
      copy->erase();
      alloc.replaceAllUsesWith(Value(out));
      alloc->erase();
    }
  }
};

} // namespace
