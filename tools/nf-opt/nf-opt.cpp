//===- nf-opt.cpp - the normfuse optimizer driver ---------------*- C++ -*-===//
//
// Part of normfuse. An mlir-opt for normfuse: parses, verifies, runs passes
// and prints. Takes mlir-opt's flags (--pass-pipeline, -split-input-file,
// --verify-diagnostics, --mlir-print-ir-after-all, ...). Loads only the
// dialects and passes normfuse uses (see normfuse/InitAll.h), and the test
// passes of test/lib (nf-test-*).
//
//===----------------------------------------------------------------------===//

#include "normfuse/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace mlir::nf::test {
void registerTestFusionPass();
void registerTestRaisePatternsPass();
} // namespace mlir::nf::test

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::nf::registerAllDialects(registry);
  mlir::nf::registerAllPasses();
  mlir::nf::test::registerTestFusionPass();
  mlir::nf::test::registerTestRaisePatternsPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "normfuse optimizer driver\n", registry));
}
