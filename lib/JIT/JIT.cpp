//===- JIT.cpp - compile and run nf functions on the host -------*- C++ -*-===//
//
// Part of normfuse. See JIT.h. A request is parsed and verified in the JIT's
// own MLIRContext, reduced to the requested function (and what it calls),
// lowered by the nf-cpu-pipeline, translated to LLVM IR, optimized at O3 for
// the host CPU and compiled by ORC. Diagnostics on the way become the
// returned error's message.
//
//===----------------------------------------------------------------------===//

#include "HostKernel.h"
#include "normfuse/Codegen/Pipelines.h"
#include "normfuse/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <map>
#include <mutex>

using namespace normfuse;
using namespace normfuse::jit;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(message,
                                             llvm::inconvertibleErrorCode());
}

/// Lanes of a vector register of the host, in f32 elements.
static int64_t getHostVectorWidth() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (features.lookup("avx512f"))
    return 16;
  if (features.lookup("avx"))
    return 8;
  return 4;
}

/// Collects the diagnostics emitted while alive, one per line.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext &ctx)
      : handler(&ctx, [this](mlir::Diagnostic &d) {
          std::string loc;
          llvm::raw_string_ostream os(loc);
          if (auto fileLoc =
                  mlir::dyn_cast<mlir::FileLineColLoc>(d.getLocation()))
            os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine()
               << ":" << fileLoc.getColumn();
          else
            os << d.getLocation();
          text += (text.empty() ? "" : "\n") + loc + ": " + d.str();
          for (const mlir::Diagnostic &note : d.getNotes())
            if (!llvm::StringRef(note.str())
                     .starts_with("see current operation"))
              text += "\n  note: " + note.str();
          return mlir::success();
        }) {}
  const std::string &str() const { return text; }

private:
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

static std::optional<DType> toDType(mlir::Type t) {
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  return std::nullopt;
}

static llvm::Expected<TensorType> toTensorType(mlir::Type t,
                                               const llvm::Twine &what) {
  auto ranked = mlir::dyn_cast<mlir::RankedTensorType>(t);
  std::string typeText;
  llvm::raw_string_ostream os(typeText);
  os << t;
  if (!ranked)
    return makeError(what + " has type " + typeText +
                     "; the JIT takes ranked tensors");
  std::optional<DType> dtype = toDType(ranked.getElementType());
  if (!dtype)
    return makeError(what + " has type " + typeText +
                     "; the JIT takes f16, bf16, f32 or f64 elements");
  if (!ranked.hasStaticShape())
    return makeError(what + " has type " + typeText +
                     "; the JIT compiles static shapes only (dynamic "
                     "dimensions are not supported yet)");
  return TensorType{*dtype, std::vector<int64_t>(ranked.getShape().begin(),
                                                 ranked.getShape().end())};
}

static llvm::Expected<Signature> getSignature(mlir::func::FuncOp fn) {
  Signature sig;
  std::string name = ("@" + fn.getSymName()).str();
  for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
    auto tt = toTensorType(t, name + " argument #" + llvm::Twine(i));
    if (!tt)
      return tt.takeError();
    sig.inputs.push_back(*tt);
  }
  for (auto [i, t] : llvm::enumerate(fn.getResultTypes())) {
    auto tt = toTensorType(t, name + " result #" + llvm::Twine(i));
    if (!tt)
      return tt.takeError();
    sig.outputs.push_back(*tt);
  }
  return sig;
}

struct JIT::Impl {
  explicit Impl(Options opts) : options(opts) {
    static std::once_flag nativeTarget;
    std::call_once(nativeTarget, [] {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
    });
    mlir::DialectRegistry registry;
    mlir::nf::registerAllDialects(registry);
    mlir::registerBuiltinDialectTranslation(registry);
    mlir::registerLLVMDialectTranslation(registry);
    mlir::registerOpenMPDialectTranslation(registry);
    context = std::make_unique<mlir::MLIRContext>(registry);
    context->loadAllAvailableDialects();
    // Compilation happens under `mutex`; the context need not be threaded.
    context->disableMultithreading();
    if (options.vectorWidth == 0)
      options.vectorWidth = getHostVectorWidth();
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (jtmb)
      target = jtmb->getTargetTriple().str() + " " + jtmb->getCPU();
    else
      llvm::consumeError(jtmb.takeError());
    warmUp();
  }

  /// Compiles, runs and destroys a trivial kernel. An execution engine's
  /// destructor compiles ORC's deinitializer code; that code generation
  /// builds function-local statics inside LLVM on first use. Building them
  /// here, before this JIT is fully constructed, makes them outlive it: a
  /// JIT held in a static is then destroyed at exit without touching
  /// statics that exit has already destroyed.
  void warmUp() {
    const char *ir =
        "func.func @nf_warm_up(%x: tensor<8xf16>) -> tensor<8xf16> "
        "{\n  %0 = nf.relu %x : tensor<8xf16>\n  return %0 : "
        "tensor<8xf16>\n}\n";
    auto kernel = compile(ir, "<warm-up>", "nf_warm_up");
    if (!kernel) {
      llvm::consumeError(kernel.takeError());
      return;
    }
    std::lock_guard<std::mutex> lock(mutex);
    cache.clear();
  }

  llvm::Expected<std::shared_ptr<Kernel>> compile(llvm::StringRef irText,
                                                  llvm::StringRef bufferName,
                                                  llvm::StringRef function);

  Options options;
  std::string target;
  std::unique_ptr<mlir::MLIRContext> context;
  mutable std::mutex mutex;
  std::map<std::string, std::shared_ptr<Kernel>> cache;
};

llvm::Expected<std::shared_ptr<Kernel>>
JIT::Impl::compile(llvm::StringRef irText, llvm::StringRef bufferName,
                   llvm::StringRef function) {
  std::lock_guard<std::mutex> lock(mutex);
  std::string key = std::to_string(llvm::xxh3_64bits(irText)) + "/" +
                    function.str() + "/w" +
                    std::to_string(options.vectorWidth) +
                    (options.parallel ? "/omp/" : "/serial/") + target;
  if (auto it = cache.find(key); it != cache.end())
    return it->second;

  DiagnosticCollector diagnostics(*context);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(irText, bufferName), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, context.get());
  if (!module)
    return makeError("the IR does not parse or verify:\n" + diagnostics.str());

  auto fn = module->lookupSymbol<mlir::func::FuncOp>(function);
  if (!fn || fn.isExternal()) {
    std::string names;
    for (auto f : module->getOps<mlir::func::FuncOp>())
      names += (names.empty() ? "@" : ", @") + f.getSymName().str();
    return makeError("no function @" + function + " in the module" +
                     (names.empty() ? std::string(" (it has none)")
                                    : " (it has " + names + ")"));
  }
  auto signature = getSignature(fn);
  if (!signature)
    return signature.takeError();

  // Keep the requested function and what it references: other functions
  // may hold ops the CPU back end cannot lower yet.
  for (auto other :
       llvm::make_early_inc_range(module->getOps<mlir::func::FuncOp>()))
    if (other != fn && mlir::SymbolTable::symbolKnownUseEmpty(other, *module))
      other.erase();

  mlir::PassManager pm(context.get());
  mlir::nf::CPUPipelineOptions pipeline;
  pipeline.vectorWidth = options.vectorWidth;
  pipeline.parallel = options.parallel;
  mlir::nf::buildCPUPipeline(pm, pipeline);
  if (mlir::failed(pm.run(*module)))
    return makeError("lowering @" + function + " for the CPU failed:\n" +
                     diagnostics.str());

  auto kernel = std::make_shared<HostKernel>(function.str(), *signature);
  if (auto err = kernel->compile(*module))
    return makeError(
        "JIT compilation of @" + function +
        " failed: " + llvm::toString(std::move(err)) +
        (diagnostics.str().empty() ? "" : "\n" + diagnostics.str()));
  cache.emplace(key, kernel);
  return kernel;
}

JIT::JIT(Options options) : impl(std::make_unique<Impl>(options)) {}
JIT::~JIT() = default;

llvm::Expected<std::shared_ptr<Kernel>> JIT::compile(llvm::StringRef irText,
                                                     llvm::StringRef function) {
  return impl->compile(irText, "<ir>", function);
}

llvm::Expected<std::shared_ptr<Kernel>>
JIT::compileFile(llvm::StringRef path, llvm::StringRef function) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return makeError("cannot read " + path + ": " +
                     buffer.getError().message());
  return impl->compile((*buffer)->getBuffer(), path, function);
}

std::string JIT::getTargetDescription() const {
  return impl->target + ", vector width " +
         std::to_string(impl->options.vectorWidth) +
         (impl->options.parallel ? ", OpenMP rows" : ", one thread");
}

size_t JIT::getCacheSize() const {
  std::lock_guard<std::mutex> lock(impl->mutex);
  return impl->cache.size();
}
