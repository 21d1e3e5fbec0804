//===- Pipelines.cpp - the CUDA pass pipeline -------------------*- C++ -*-===//
//
// Part of normfuse. See buildCUDAPipeline in Pipelines.h: nf-lower-to-gpu,
// then the same bufferization as the CPU's (function results become
// out-parameters), results of dynamic shape written straight into their
// out-parameters, and canonicalization. Kernels are
// left in the gpu dialect for the CUDA printer.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Pipelines.h"
#include "normfuse/Codegen/Common/BufferizePipeline.h"
#include "normfuse/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

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
    : PassWrapper<ElideResultCopiesPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ElideResultCopiesPass)
  StringRef getArgument() const final { return "nf-elide-result-copies"; }

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

void nf::buildCUDAPipeline(OpPassManager &pm,
                           const CUDAPipelineOptions &options) {
  NFLowerToGPUPassOptions lower;
  lower.arch = options.arch;
  lower.rowNormSchedule = options.rowNormSchedule;
  pm.addPass(createNFLowerToGPUPass(lower));

  addBufferizeToOutParamsPasses(pm);
  pm.addNestedPass<func::FuncOp>(std::make_unique<ElideResultCopiesPass>());
  // No buffer deallocation pipeline: it refuses gpu.launch_func (an op
  // with unknown memory effects). A temporary between launches is a
  // memref.alloc that lives until the function returns, when the runtime
  // that runs the host function frees it.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void nf::registerCUDAPipelines() {
  PassPipelineRegistration<CUDAPipelineOptions>(
      "nf-cuda-pipeline",
      "Lower nf ops on tensors to GPU kernels and a host function that "
      "launches them",
      buildCUDAPipeline);
}
