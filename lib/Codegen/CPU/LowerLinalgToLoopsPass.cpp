//===- LowerLinalgToLoopsPass.cpp - linalg to parallel loops ----*- C++ -*-===//
//
// Part of normfuse. Lowers the linalg ops on buffers that TOSA ops became
// to scf.parallel loops with upstream's convert-linalg-to-parallel-loops,
// run as a dynamic pipeline on the functions that hold linalg ops only: the
// upstream pass folds and reorders the constants of the whole function.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFLOWERLINALGTOLOOPSPASS
#include "normfuse/Codegen/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;

namespace {
struct NFLowerLinalgToLoopsPass
    : nf::impl::NFLowerLinalgToLoopsPassBase<NFLowerLinalgToLoopsPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (!fn.walk([](linalg::LinalgOp) {
             return WalkResult::interrupt();
           }).wasInterrupted())
      return;
    OpPassManager pm(func::FuncOp::getOperationName());
    pm.addPass(createConvertLinalgToParallelLoopsPass());
    if (failed(runPipeline(pm, fn)))
      signalPassFailure();
  }
};
} // namespace
