//===- MlirPipelineFuzzer.cpp - fuzz parse, verify and the pipelines ------===//
//
// Part of normfuse. Any text goes through what nf-opt does with a file:
// the upstream-crash guards, parse and verify, then the fusion pipeline
// (nf-fuse-pipeline) and the CPU pipeline down to the LLVM dialect, each step
// on what the previous one left. Every step may fail with diagnostics (they are
// swallowed here); none may crash. Functions are not compiled to machine code
// (the JIT fuzzer's job is the calls).
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Pipelines.h"
#include "normfuse/Dialect/NF/Transforms/FusePipeline.h"
#include "normfuse/InitAll.h"
#include "normfuse/Support/UpstreamGuards.h"
#include "normfuse/Support/UpstreamIRGuards.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <memory>
#include <string>

static mlir::MLIRContext &context() {
  static std::unique_ptr<mlir::MLIRContext> ctx = [] {
    mlir::DialectRegistry registry;
    mlir::nf::registerAllDialects(registry);
    auto c = std::make_unique<mlir::MLIRContext>(
        registry, mlir::MLIRContext::Threading::DISABLED);
    c->loadAllAvailableDialects();
    // Diagnostics are expected; printing them costs time.
    c->getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
    return c;
  }();
  return *ctx;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Large inputs only slow the search down.
  if (size > 16384)
    return 0;
  // A copy, so that the text ends in a NUL as a file's buffer does.
  std::string text(reinterpret_cast<const char *>(data), size);
  // What the tools refuse before MLIR parses it.
  if (normfuse::findUpstreamCrash(text, "fuzz"))
    return 0;
  mlir::ParserConfig config(&context());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config, "fuzz");
  if (!module || mlir::failed(normfuse::checkUpstreamIRCrashes(*module)))
    return 0;
  mlir::PassManager fuse(&context());
  mlir::nf::buildFusePipeline(fuse);
  if (mlir::failed(fuse.run(*module)))
    return 0;
  mlir::PassManager cpu(&context());
  mlir::nf::CPUPipelineOptions options;
  mlir::nf::buildCPUPipeline(cpu, options);
  (void)cpu.run(*module);
  return 0;
}
