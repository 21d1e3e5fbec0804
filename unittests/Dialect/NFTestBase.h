//===- NFTestBase.h - fixture for nf dialect unit tests ---------*- C++ -*-===//
//
// Part of normfuse. A context with normfuse's dialects, a builder that
// inserts into a function whose arguments tests use as operands, and the
// diagnostics the verifier emitted.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_UNITTESTS_DIALECT_NFTESTBASE_H
#define NORMFUSE_UNITTESTS_DIALECT_NFTESTBASE_H

#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nftest {

class NFDialectTest : public ::testing::Test {
protected:
  NFDialectTest() : context(makeRegistry()), builder(&context) {
    context.loadAllAvailableDialects();
    module = mlir::ModuleOp::create(builder.getUnknownLoc());
    handler = std::make_unique<mlir::ScopedDiagnosticHandler>(
        &context, [this](mlir::Diagnostic &d) {
          diagnostics.push_back(d.str());
          return mlir::success();
        });
  }
  ~NFDialectTest() override { module->erase(); }

  static mlir::DialectRegistry makeRegistry() {
    mlir::DialectRegistry registry;
    mlir::nf::registerAllDialects(registry);
    return registry;
  }

  /// A ranked tensor type with `shape` and `element` (f32 by default).
  mlir::RankedTensorType tensor(llvm::ArrayRef<int64_t> shape,
                                mlir::Type element = {}) {
    return mlir::RankedTensorType::get(shape, element ? element
                                                      : builder.getF32Type());
  }

  /// Starts a function with arguments of `types`, sets the builder inside it
  /// and returns the arguments.
  llvm::SmallVector<mlir::Value> arguments(mlir::TypeRange types) {
    builder.setInsertionPointToEnd(module.getBody());
    auto fn = builder.create<mlir::func::FuncOp>(
        builder.getUnknownLoc(), "test", builder.getFunctionType(types, {}));
    builder.setInsertionPointToStart(fn.addEntryBlock());
    return llvm::SmallVector<mlir::Value>(fn.getArguments());
  }

  /// Verifies `op`; returns the diagnostics as text ("" when it verifies).
  std::string verifyAndDescribe(mlir::Operation *op) {
    diagnostics.clear();
    if (mlir::succeeded(mlir::verify(op)))
      return "";
    std::string all;
    for (const std::string &d : diagnostics)
      all += d;
    return all;
  }

  mlir::MLIRContext context;
  mlir::OpBuilder builder;
  mlir::ModuleOp module;
  std::vector<std::string> diagnostics;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
};

} // namespace nftest

#endif // NORMFUSE_UNITTESTS_DIALECT_NFTESTBASE_H
