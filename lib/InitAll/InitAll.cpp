//===- InitAll.cpp - register what normfuse's tools use ---------*- C++ -*-===//
//
// Part of normfuse. See InitAll.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/InitAll.h"
#include "normfuse/Dialect/NF/IR/NFDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::nf::registerAllDialects(DialectRegistry &registry) {
  registry
      .insert<nf::NFDialect, arith::ArithDialect,
              bufferization::BufferizationDialect, func::FuncDialect,
              linalg::LinalgDialect, math::MathDialect, memref::MemRefDialect,
              scf::SCFDialect, tensor::TensorDialect, tosa::TosaDialect>();
}

void mlir::nf::registerAllPasses() {
  // Upstream generic transforms: canonicalize, cse, inline, symbol-dce,
  // loop-invariant-code-motion, print-ir, ... normfuse's own passes are
  // registered here as the Transforms and Codegen libraries gain them.
  registerTransformsPasses();
}
