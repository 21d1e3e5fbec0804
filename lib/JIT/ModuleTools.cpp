//===- ModuleTools.cpp - fused IR and kernel graphs as text -----*- C++ -*-===//
//
// Part of normfuse. See ModuleTools.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/JIT/ModuleTools.h"

#include "Diagnostics.h"
#include "normfuse/Dialect/NF/Transforms/FusePipeline.h"
#include "normfuse/Dialect/NF/Transforms/KernelGraph.h"
#include "normfuse/InitAll.h"
#include "normfuse/Support/UpstreamGuards.h"
#include "normfuse/Support/UpstreamIRGuards.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace normfuse;
using namespace normfuse::jit;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(message,
                                             llvm::inconvertibleErrorCode());
}

namespace {
/// A context with every dialect normfuse reads, and the module parsed into
/// it, verified, and fused when asked.
struct ParsedModule {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;

  ParsedModule() {
    mlir::DialectRegistry registry;
    mlir::nf::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.disableMultithreading();
  }

  llvm::Error parse(llvm::StringRef irText, llvm::StringRef bufferName,
                    bool fuse) {
    if (auto crash = normfuse::findUpstreamCrash(irText, bufferName))
      return makeError("the IR does not parse or verify:\n" + *crash);
    DiagnosticCollector diagnostics(context);
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(irText, bufferName),
        llvm::SMLoc());
    module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
    if (!module || mlir::failed(normfuse::checkUpstreamIRCrashes(*module)))
      return makeError("the IR does not parse or verify:\n" +
                       diagnostics.str());
    if (!fuse)
      return llvm::Error::success();
    mlir::PassManager pm(&context);
    mlir::nf::buildFusePipeline(pm);
    if (mlir::failed(pm.run(*module)))
      return makeError("the fusion pipeline failed:\n" + diagnostics.str());
    return llvm::Error::success();
  }
};
} // namespace

llvm::Expected<std::string> jit::fuseModule(llvm::StringRef irText,
                                            llvm::StringRef bufferName) {
  ParsedModule parsed;
  if (auto err = parsed.parse(irText, bufferName, /*fuse=*/true))
    return std::move(err);
  std::string text;
  llvm::raw_string_ostream os(text);
  parsed.module->print(os);
  return text;
}

llvm::Expected<std::string> jit::kernelGraph(llvm::StringRef irText, bool fuse,
                                             llvm::StringRef bufferName) {
  ParsedModule parsed;
  if (auto err = parsed.parse(irText, bufferName, fuse))
    return std::move(err);
  std::string dot;
  llvm::raw_string_ostream os(dot);
  mlir::nf::printKernelGraphs(*parsed.module, os);
  return dot;
}
