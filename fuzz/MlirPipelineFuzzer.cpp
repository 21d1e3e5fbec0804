//===- MlirPipelineFuzzer.cpp - fuzz parse, verify and the pipelines ------===//
//
// Part of normfuse. Any text goes through what nf-opt does with a file:
// the upstream-crash guards, parse and verify, then the fusion pipeline
// (nf-fuse-pipeline); then, each on its own copy of the fused module, the
// CPU pipeline down to the LLVM dialect and the CUDA back end (the
// nf-cuda-pipeline, the CUDA printer, and each host function's launch plan,
// as the JIT's cuda targets take them). Every step may fail with
// diagnostics (they are swallowed here); none may crash. Functions are not
// compiled to machine code (the JIT fuzzer's job is the calls).
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Pipelines.h"
#include "normfuse/Dialect/NF/Transforms/FusePipeline.h"
#include "normfuse/InitAll.h"
#include "normfuse/Support/UpstreamGuards.h"
#include "normfuse/Support/UpstreamIRGuards.h"
#include "normfuse/Target/CUDAEmitter.h"
#include "normfuse/Target/LaunchPlanFromIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <map>
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
  mlir::OwningOpRef<mlir::ModuleOp> gpu = module->clone();
  mlir::PassManager cpu(&context());
  mlir::nf::CPUPipelineOptions options;
  mlir::nf::buildCPUPipeline(cpu, options);
  (void)cpu.run(*module);

  // Each function's results, which its lowered host function takes as
  // trailing out-parameters.
  std::map<std::string, unsigned> results;
  for (auto f : gpu->getOps<mlir::func::FuncOp>())
    results[f.getSymName().str()] = f.getNumResults();
  mlir::PassManager cuda(&context());
  mlir::nf::CUDAPipelineOptions cudaOptions;
  mlir::nf::buildCUDAPipeline(cuda, cudaOptions);
  if (mlir::failed(cuda.run(*gpu)))
    return 0;
  std::string source;
  llvm::raw_string_ostream os(source);
  mlir::nf::CUDAEmitOptions emit;
  emit.allowNoKernels = true;
  if (mlir::failed(mlir::nf::translateToCUDA(*gpu, os, emit)))
    return 0;
  for (auto f : gpu->getOps<mlir::func::FuncOp>()) {
    auto it = results.find(f.getSymName().str());
    if (!f.isExternal() && it != results.end())
      (void)mlir::nf::readLaunchPlan(f, it->second);
  }
  return 0;
}
