//===- nf-opt.cpp - the normfuse optimizer driver ---------------*- C++ -*-===//
//
// Part of normfuse. An mlir-opt for normfuse: parses, verifies, runs passes
// and prints. Takes mlir-opt's flags (--pass-pipeline, -split-input-file,
// --verify-diagnostics, --mlir-print-ir-after-all, ...). Loads only the
// dialects and passes normfuse uses (see normfuse/InitAll.h), and the test
// passes of test/lib (nf-test-*). Before MLIR parses the input, constructs
// known to crash MLIR 19 are refused with a message
// (normfuse/Support/UpstreamGuards.h): the steps of mlir-opt's own main,
// with that check between reading the file and parsing it. Parsed IR that
// crashes MLIR 19 later is refused by a first pass
// (normfuse/Support/UpstreamIRGuards.h).
//
//===----------------------------------------------------------------------===//

#include "normfuse/InitAll.h"
#include "normfuse/Support/UpstreamGuards.h"
#include "normfuse/Support/UpstreamIRGuards.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::nf::test {
void registerTestCPUSchedulePass();
void registerTestFusionPass();
void registerTestRaisePatternsPass();
} // namespace mlir::nf::test

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::DialectRegistry registry;
  mlir::nf::registerAllDialects(registry);
  mlir::nf::registerAllPasses();
  mlir::nf::test::registerTestCPUSchedulePass();
  mlir::nf::test::registerTestFusionPass();
  mlir::nf::test::registerTestRaisePatternsPass();

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "normfuse optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), ",");
    llvm::outs() << "\n";
    return 0;
  }
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(inputFilename, &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (auto crash = normfuse::findUpstreamCrash(file->getBuffer(),
                                               file->getBufferIdentifier())) {
    llvm::errs() << *crash << "\n";
    return 1;
  }
  // IR that parses but crashes MLIR 19 once printed or lowered is refused
  // by a first pass ahead of whatever pipeline the flags ask for (and of
  // the empty one, before printing).
  mlir::MlirOptMainConfig requested = config;
  config.setPassPipelineSetupFn([requested](mlir::PassManager &pm) {
    pm.addPass(normfuse::createUpstreamIRGuardPass());
    return requested.setupPassPipeline(pm);
  });
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(file), registry, config)))
    return 1;
  output->keep();
  return 0;
}
