//===- JIT.cpp - compile and run nf functions on the host -------*- C++ -*-===//
//
// Part of normfuse. See JIT.h. A request is parsed and verified in the JIT's
// own MLIRContext, reduced to the requested function (and what it calls),
// lowered by the nf-cpu-pipeline, translated to LLVM IR, optimized at O3 for
// the host CPU and compiled by ORC. Diagnostics on the way become the
// returned error's message.
//
// A function with dynamic dimensions becomes a ShapeGenericKernel that keeps
// the IR text; a call with new input shapes parses it again, specializes the
// function to those shapes (specializeShapes) and compiles it as above. The
// specialized kernels live in the same cache, keyed by the input shapes too.
//
//===----------------------------------------------------------------------===//

#include "BufferCache.h"
#include "Diagnostics.h"
#include "HostKernel.h"
#include "MemoryBounds.h"
#include "normfuse/Codegen/CUDA/Schedule.h"
#include "normfuse/Codegen/Pipelines.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/Dialect/NF/Transforms/FusePipeline.h"
#include "normfuse/Dialect/NF/Transforms/SpecializeShapes.h"
#include "normfuse/InitAll.h"
#include "normfuse/JIT/CudaKernel.h"
#include "normfuse/JIT/CudaSimKernel.h"
#include "normfuse/Runtime/HostMemory.h"
#include "normfuse/Support/UpstreamGuards.h"
#include "normfuse/Support/UpstreamIRGuards.h"
#include "normfuse/Target/CUDAEmitter.h"
#include "normfuse/Target/LaunchPlanFromIR.h"

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
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/MathExtras.h"
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

static std::optional<DType> toDType(mlir::Type t) {
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  // Integers by their width: signless and signed ones as NumPy's signed
  // integers, unsigned ones as its unsigned; i1 is bool.
  auto integer = mlir::dyn_cast<mlir::IntegerType>(t);
  if (!integer)
    return std::nullopt;
  return getIntegerDType(integer.getWidth(), integer.isUnsigned());
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
                     "; the JIT takes f16, bf16, f32, f64, i1 (bool) and 8- to "
                     "64-bit integer elements");
  std::vector<int64_t> shape;
  for (int64_t d : ranked.getShape())
    shape.push_back(mlir::ShapedType::isDynamic(d) ? TensorType::kDynamic : d);
  return TensorType{*dtype, std::move(shape)};
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

/// Why `options` cannot compile anything ("" when they can): an option of
/// another target than the one chosen, or a value out of its range.
static std::string checkOptions(const Options &options) {
  const CPUOptions cpu;
  const CUDAOptions cuda;
  bool isCPU = options.target == Target::CPU;
  std::string target = getTargetName(options.target);
  if (!isCPU && (options.cpu.vectorWidth != cpu.vectorWidth ||
                 options.cpu.parallel != cpu.parallel ||
                 options.cpu.cacheBuffers != cpu.cacheBuffers))
    return "the cpu options (vector width, parallel rows, buffer cache) do "
           "not apply to the " +
           target + " target";
  if (isCPU && (options.cuda.arch != cuda.arch ||
                options.cuda.rowNormSchedule != cuda.rowNormSchedule ||
                options.cuda.shapeGenericKernels != cuda.shapeGenericKernels ||
                options.cuda.allowTf32 != cuda.allowTf32))
    return "the CUDA options (architecture, row-norm schedule, shape-generic "
           "kernels, tf32) do not apply to the cpu target";
  int64_t width = options.cpu.vectorWidth;
  if (width < 0 || width > 64 || (width & (width - 1)) != 0)
    return "the vector width must be 0 (the host's) or a power of two up "
           "to 64, got " +
           std::to_string(width);
  if (std::string error; !runtime::GpuTarget::parse(options.cuda.arch, error))
    return error;
  if (mlir::failed(
          mlir::nf::cuda::parseForcedRowNormKind(options.cuda.rowNormSchedule)))
    return "unknown row-norm schedule '" + options.cuda.rowNormSchedule +
           "' (" + mlir::nf::cuda::kForcedRowNormKinds + ")";
  return "";
}

struct JIT::Impl : std::enable_shared_from_this<JIT::Impl> {
  class ShapeGenericKernel;

  explicit Impl(Options opts)
      : options(opts), optionsError(checkOptions(opts)) {
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
    if (options.cpu.vectorWidth == 0 && options.target == Target::CPU)
      options.cpu.vectorWidth = getHostVectorWidth();
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (jtmb)
      target = jtmb->getTargetTriple().str() + " " + jtmb->getCPU();
    else
      llvm::consumeError(jtmb.takeError());
    // Only the CPU's kernels run through ORC (the CUDA targets' host code
    // is the runtime's): elsewhere a warm-up would compile a kernel for
    // the simulator or NVRTC and open the GPU, for nothing.
    if (options.target == Target::CPU)
      warmUp();
    buffer_cache::addUser();
  }

  /// The last JIT to go frees the buffer cache's idle blocks.
  ~Impl() { buffer_cache::removeUser(); }

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

  /// The kernel of `generic`'s function for inputs of `inputShapes`
  /// (checked against its signature by the caller).
  llvm::Expected<std::shared_ptr<Kernel>>
  specialize(const ShapeGenericKernel &generic,
             llvm::ArrayRef<std::vector<int64_t>> inputShapes,
             llvm::ArrayRef<std::vector<int64_t>> outputShapes);

  /// Parses `irText` and keeps its function `function` and what that
  /// references. Called under `mutex`.
  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
  parseFunction(llvm::StringRef irText, llvm::StringRef bufferName,
                llvm::StringRef function,
                const DiagnosticCollector &diagnostics);

  /// Lowers `module` for the CPU and JIT-compiles its `function`. Called
  /// under `mutex`.
  /// On the CUDA targets, `bufferShapes` (inputs, then outputs) are the
  /// shapes of a call to a function of dynamic shape lowered as it is
  /// (CUDAOptions::shapeGenericKernels); empty, the function's shapes are
  /// static.
  llvm::Expected<std::shared_ptr<Kernel>>
  lowerAndCompile(mlir::ModuleOp module, llvm::StringRef function,
                  const Signature &signature,
                  const DiagnosticCollector &diagnostics,
                  llvm::ArrayRef<llvm::ArrayRef<int64_t>> bufferShapes = {});

  /// The printed CUDA of a function and its launch plan.
  struct CudaLowering {
    std::string source;
    runtime::LaunchPlan plan;
  };
  /// Lowers `module` with the nf-cuda-pipeline for `arch` and prints its
  /// kernels as CUDA. Called under `mutex`.
  llvm::Expected<CudaLowering>
  lowerToCUDA(mlir::ModuleOp module, llvm::StringRef function,
              const Signature &signature,
              const DiagnosticCollector &diagnostics, const std::string &arch,
              llvm::ArrayRef<llvm::ArrayRef<int64_t>> bufferShapes);

  /// Lowers for the CUDA simulator, or for the GPU: the printed CUDA
  /// compiled for the host against the simulator, or by NVRTC for the
  /// device. Called under `mutex`.
  llvm::Expected<std::shared_ptr<Kernel>>
  lowerForCudaSim(mlir::ModuleOp module, llvm::StringRef function,
                  const Signature &signature,
                  const DiagnosticCollector &diagnostics,
                  llvm::ArrayRef<llvm::ArrayRef<int64_t>> bufferShapes);
  llvm::Expected<std::shared_ptr<Kernel>>
  lowerForCuda(mlir::ModuleOp module, llvm::StringRef function,
               const Signature &signature,
               const DiagnosticCollector &diagnostics,
               llvm::ArrayRef<llvm::ArrayRef<int64_t>> bufferShapes);

  /// The GPU of the cuda target, opened on first use; an error saying why
  /// it cannot be used. Called under `mutex`.
  llvm::Expected<std::shared_ptr<runtime::CudaDevice>> getDevice();

  Options options;
  /// Why `options` compile nothing (checkOptions), or "".
  std::string optionsError;
  std::string target;
  std::unique_ptr<mlir::MLIRContext> context;
  std::shared_ptr<runtime::CudaDevice> device;
  std::string deviceError;
  mutable std::mutex mutex;
  /// Compiled kernels: by (IR hash, function, options, target), and for
  /// functions with dynamic dimensions also by the shapes of the call.
  std::map<std::string, std::shared_ptr<Kernel>> cache;
  /// The kernels of functions with dynamic dimensions, by the same key as
  /// `cache`. They hold this Impl, so it must not hold them.
  std::map<std::string, std::weak_ptr<Kernel>> genericKernels;
};

/// A function with dynamic dimensions: each call compiles (once per set of
/// input shapes) and runs the function specialized to its shapes.
class JIT::Impl::ShapeGenericKernel final : public Kernel {
public:
  ShapeGenericKernel(std::shared_ptr<Impl> impl, std::string name,
                     Signature signature, std::string irText,
                     std::string bufferName, std::string key,
                     bool needsOutputShapes)
      : Kernel(std::move(name), std::move(signature)), impl(std::move(impl)),
        irText(std::move(irText)), bufferName(std::move(bufferName)),
        key(std::move(key)), needsOutputShapes(needsOutputShapes) {}

  Target getTarget() const override { return impl->options.target; }

  using Kernel::run;
  llvm::Error run(llvm::ArrayRef<TensorRef> inputs,
                  llvm::ArrayRef<TensorRef> outputs,
                  const RunOptions &options) const override {
    // Everything the buffers alone tell is checked before compiling.
    Target target = getTarget();
    if (auto err = checkRunOptions(name, options, target))
      return err;
    bool device = target == Target::CUDA;
    if (auto err =
            checkBuffers(name, inputs, signature.inputs, "input", device))
      return err;
    if (auto err =
            checkBuffers(name, outputs, signature.outputs, "output", device))
      return err;
    if (options.threads < 0)
      return makeError("threads must be 0 (the default) or positive, got " +
                       llvm::Twine(options.threads));
    std::vector<std::vector<int64_t>> inputShapes, outputShapes;
    for (const TensorRef &b : inputs)
      inputShapes.push_back(b.shape);
    for (const TensorRef &b : outputs)
      outputShapes.push_back(b.shape);
    auto kernel = specialize(inputShapes, outputShapes);
    if (!kernel)
      return kernel.takeError();
    return (*kernel)->run(inputs, outputs, options);
  }

  llvm::Expected<std::shared_ptr<Kernel>>
  specialize(llvm::ArrayRef<std::vector<int64_t>> inputShapes,
             llvm::ArrayRef<std::vector<int64_t>> outputShapes) const override {
    if (auto err = checkShapes(name, inputShapes, signature.inputs, "input"))
      return std::move(err);
    if (!outputShapes.empty())
      if (auto err =
              checkShapes(name, outputShapes, signature.outputs, "output"))
        return std::move(err);
    return impl->specialize(*this, inputShapes, outputShapes);
  }

  std::shared_ptr<Impl> impl;
  std::string irText, bufferName;
  /// The cache key of the request that made this kernel.
  std::string key;
  /// Whether some result's shape comes from the caller's output buffer
  /// (conv2d backward ops with dynamic result dimensions): the output
  /// shapes are then part of the cache key.
  bool needsOutputShapes;
};

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
JIT::Impl::parseFunction(llvm::StringRef irText, llvm::StringRef bufferName,
                         llvm::StringRef function,
                         const DiagnosticCollector &diagnostics) {
  if (auto crash = findUpstreamCrash(irText, bufferName))
    return makeError("the IR does not parse or verify:\n" + *crash);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(irText, bufferName), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, context.get());
  if (!module || mlir::failed(checkUpstreamIRCrashes(*module)))
    return makeError("the IR does not parse or verify:\n" + diagnostics.str());

  auto fn = module->lookupSymbol<mlir::func::FuncOp>(function);
  if (fn && fn.isExternal())
    return makeError("@" + function +
                     " is a declaration without a body: there is nothing "
                     "to run");
  if (!fn) {
    // The functions that can run: declarations have nothing to run.
    std::string names;
    for (auto f : module->getOps<mlir::func::FuncOp>())
      if (!f.isExternal())
        names += (names.empty() ? "@" : ", @") + f.getSymName().str();
    return makeError("no function @" + function + " in the module" +
                     (names.empty() ? std::string(" (it has none)")
                                    : " (it has " + names + ")"));
  }
  // Keep the requested function and what it references: other functions
  // may hold ops the CPU back end cannot lower yet.
  for (auto other :
       llvm::make_early_inc_range(module->getOps<mlir::func::FuncOp>()))
    if (other != fn && mlir::SymbolTable::symbolKnownUseEmpty(other, *module))
      other.erase();
  return std::move(module);
}

llvm::Expected<std::shared_ptr<Kernel>> JIT::Impl::lowerAndCompile(
    mlir::ModuleOp module, llvm::StringRef function, const Signature &signature,
    const DiagnosticCollector &diagnostics,
    llvm::ArrayRef<llvm::ArrayRef<int64_t>> bufferShapes) {
  if (options.target == Target::CUDASim)
    return lowerForCudaSim(module, function, signature, diagnostics,
                           bufferShapes);
  if (options.target == Target::CUDA)
    return lowerForCuda(module, function, signature, diagnostics, bufferShapes);
  if (options.fuse) {
    mlir::PassManager fusePM(context.get());
    mlir::nf::buildFusePipeline(fusePM);
    if (mlir::failed(fusePM.run(module)))
      return makeError("fusing @" + function + " failed:\n" +
                       diagnostics.str());
  }
  // What the tensors between the ops need (after fusion, which keeps some
  // of them on chip), before the kernel's allocation can fail.
  if (auto err =
          checkTensorMemory(module.lookupSymbol<mlir::func::FuncOp>(function),
                            runtime::physicalMemoryBytes()))
    return std::move(err);
  mlir::PassManager pm(context.get());
  mlir::nf::CPUPipelineOptions pipeline;
  pipeline.vectorWidth = options.cpu.vectorWidth;
  pipeline.parallel = options.cpu.parallel;
  mlir::nf::buildCPUPipeline(pm, pipeline);
  if (mlir::failed(pm.run(module)))
    return makeError("lowering @" + function + " for the CPU failed:\n" +
                     diagnostics.str());

  auto kernel = std::make_shared<HostKernel>(function.str(), signature);
  if (auto err = kernel->compile(module, options.cpu.cacheBuffers))
    return makeError(
        "JIT compilation of @" + function +
        " failed: " + llvm::toString(std::move(err)) +
        (diagnostics.str().empty() ? "" : "\n" + diagnostics.str()));
  return kernel;
}

llvm::Expected<JIT::Impl::CudaLowering> JIT::Impl::lowerToCUDA(
    mlir::ModuleOp module, llvm::StringRef function, const Signature &signature,
    const DiagnosticCollector &diagnostics, const std::string &arch,
    llvm::ArrayRef<llvm::ArrayRef<int64_t>> bufferShapes) {
  mlir::PassManager pm(context.get());
  if (options.fuse)
    mlir::nf::buildFusePipeline(pm);
  mlir::nf::CUDAPipelineOptions pipeline;
  pipeline.arch = arch;
  pipeline.rowNormSchedule = options.cuda.rowNormSchedule;
  pipeline.allowTf32 = options.cuda.allowTf32;
  mlir::nf::buildCUDAPipeline(pm, pipeline);
  if (mlir::failed(pm.run(module)))
    return makeError("lowering @" + function + " for CUDA failed:\n" +
                     diagnostics.str());
  CudaLowering result;
  llvm::raw_string_ostream os(result.source);
  mlir::nf::CUDAEmitOptions emit;
  emit.target = arch;
  // A function whose results are all empty launches nothing.
  emit.allowNoKernels = true;
  if (mlir::failed(mlir::nf::translateToCUDA(module, os, emit)))
    return makeError("printing the CUDA of @" + function + " failed:\n" +
                     diagnostics.str());
  auto host = module.lookupSymbol<mlir::func::FuncOp>(function);
  auto plan =
      mlir::nf::readLaunchPlan(host, signature.outputs.size(), bufferShapes);
  if (mlir::failed(plan))
    return makeError("reading the launch plan of @" + function + " failed:\n" +
                     diagnostics.str());
  result.plan = std::move(*plan);
  return result;
}

llvm::Expected<std::shared_ptr<runtime::CudaDevice>> JIT::Impl::getDevice() {
  if (!device && deviceError.empty()) {
    device = runtime::CudaDevice::open(deviceError);
    if (!device && deviceError.empty())
      deviceError = "the GPU could not be opened";
  }
  if (!device)
    return makeError("the cuda target cannot run here: " + deviceError);
  return device;
}

llvm::Expected<std::shared_ptr<Kernel>> JIT::Impl::lowerForCudaSim(
    mlir::ModuleOp module, llvm::StringRef function, const Signature &signature,
    const DiagnosticCollector &diagnostics,
    llvm::ArrayRef<llvm::ArrayRef<int64_t>> bufferShapes) {
  auto lowered = lowerToCUDA(module, function, signature, diagnostics,
                             options.cuda.arch, bufferShapes);
  if (!lowered)
    return lowered.takeError();
  // The simulator's device memory is the host's: its temporaries (all live
  // for the whole call) must fit beside the inputs and outputs.
  uint64_t temporaryBytes = 0;
  for (size_t bytes : lowered->plan.temporaryBytes)
    temporaryBytes = llvm::SaturatingAdd(temporaryBytes, uint64_t(bytes));
  if (uint64_t memory = runtime::physicalMemoryBytes(); temporaryBytes > memory)
    return makeError("the temporaries of @" + function.str() + " take " +
                     std::to_string(temporaryBytes) +
                     " bytes, more than this machine's " +
                     std::to_string(memory) + " bytes of memory");
  std::string error;
  auto simModule = runtime::SimModule::compile(lowered->source, error);
  if (!simModule)
    return makeError("compiling the CUDA of @" + function +
                     " for the simulator failed: " + error);
  return std::make_shared<CudaSimKernel>(
      function.str(), signature, std::move(lowered->source),
      std::move(lowered->plan), std::move(simModule));
}

llvm::Expected<std::shared_ptr<Kernel>>
JIT::Impl::lowerForCuda(mlir::ModuleOp module, llvm::StringRef function,
                        const Signature &signature,
                        const DiagnosticCollector &diagnostics,
                        llvm::ArrayRef<llvm::ArrayRef<int64_t>> bufferShapes) {
  auto gpu = getDevice();
  if (!gpu)
    return gpu.takeError();
  // Kernels for the device's own architecture and figures (its SMs,
  // shared memory, ...).
  std::string arch = (*gpu)->gpuTarget().str();
  auto lowered =
      lowerToCUDA(module, function, signature, diagnostics, arch, bufferShapes);
  if (!lowered)
    return lowered.takeError();
  std::string error;
  auto gpuModule = (*gpu)->load(lowered->source, error);
  if (!gpuModule)
    return makeError("loading the CUDA of @" + function + " on " +
                     (*gpu)->name() + " failed: " + error);
  // Persistent grids from the compiled kernels' occupancy on this device.
  if (!gpuModule->resolve(lowered->plan, error))
    return makeError("sizing the grids of @" + function + " on " +
                     (*gpu)->name() + " failed: " + error);
  return std::make_shared<CudaKernel>(
      function.str(), signature, std::move(lowered->source),
      std::move(lowered->plan), std::move(gpuModule));
}

llvm::Expected<std::shared_ptr<Kernel>>
JIT::Impl::compile(llvm::StringRef irText, llvm::StringRef bufferName,
                   llvm::StringRef function) {
  if (!optionsError.empty())
    return makeError(optionsError);
  std::lock_guard<std::mutex> lock(mutex);
  std::string key =
      std::to_string(llvm::xxh3_64bits(irText)) + "/" + function.str() + "/w" +
      std::to_string(options.cpu.vectorWidth) +
      (options.cpu.parallel ? "/omp/" : "/serial/") +
      (options.fuse ? "fused/" : "") +
      (options.cpu.cacheBuffers ? "cached-buffers/" : "") +
      getTargetName(options.target) + "/" + options.cuda.arch + "/" +
      options.cuda.rowNormSchedule +
      (options.cuda.shapeGenericKernels ? "/shape-generic/" : "/") +
      (options.cuda.allowTf32 ? "tf32/" : "") + target;
  if (auto it = cache.find(key); it != cache.end())
    return it->second;
  if (auto it = genericKernels.find(key); it != genericKernels.end())
    if (std::shared_ptr<Kernel> kernel = it->second.lock())
      return kernel;

  DiagnosticCollector diagnostics(*context);
  auto module = parseFunction(irText, bufferName, function, diagnostics);
  if (!module)
    return module.takeError();
  auto fn = (*module)->lookupSymbol<mlir::func::FuncOp>(function);
  auto signature = getSignature(fn);
  if (!signature)
    return signature.takeError();

  if (!signature->hasStaticShapes()) {
    bool needsOutputShapes = false;
    fn.walk([&](mlir::Operation *op) {
      if (mlir::isa<mlir::nf::Conv2DBackpropInputOp,
                    mlir::nf::Conv2DBackpropFilterOp>(op) &&
          !mlir::cast<mlir::ShapedType>(op->getResult(0).getType())
               .hasStaticShape())
        needsOutputShapes = true;
    });
    auto kernel = std::make_shared<ShapeGenericKernel>(
        shared_from_this(), function.str(), *signature, irText.str(),
        bufferName.str(), key, needsOutputShapes);
    for (auto it = genericKernels.begin(); it != genericKernels.end();)
      it = it->second.expired() ? genericKernels.erase(it) : std::next(it);
    genericKernels[key] = kernel;
    return kernel;
  }

  auto kernel = lowerAndCompile(**module, function, *signature, diagnostics);
  if (kernel)
    cache.emplace(key, *kernel);
  return kernel;
}

/// "[2, 8], [8]"
static std::string
formatShapeList(llvm::ArrayRef<std::vector<int64_t>> shapes) {
  std::string s;
  for (const std::vector<int64_t> &shape : shapes)
    s += (s.empty() ? "" : ", ") + formatShape(shape);
  return s;
}

llvm::Expected<std::shared_ptr<Kernel>>
JIT::Impl::specialize(const ShapeGenericKernel &generic,
                      llvm::ArrayRef<std::vector<int64_t>> inputShapes,
                      llvm::ArrayRef<std::vector<int64_t>> outputShapes) {
  const std::string &function = generic.getName();
  std::string key = generic.key + "/inputs " + formatShapeList(inputShapes);
  if (generic.needsOutputShapes)
    key += "/outputs " + formatShapeList(outputShapes);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end())
    return it->second;

  DiagnosticCollector diagnostics(*context);
  auto module =
      parseFunction(generic.irText, generic.bufferName, function, diagnostics);
  if (!module)
    return module.takeError();
  auto fn = (*module)->lookupSymbol<mlir::func::FuncOp>(function);
  llvm::SmallVector<llvm::ArrayRef<int64_t>> argShapes(inputShapes.begin(),
                                                       inputShapes.end());
  llvm::SmallVector<llvm::ArrayRef<int64_t>> resultShapes;
  if (generic.needsOutputShapes)
    resultShapes.assign(outputShapes.begin(), outputShapes.end());
  if (mlir::failed(mlir::nf::specializeShapes(fn, argShapes, resultShapes)))
    return makeError("@" + function + " cannot take inputs of shapes " +
                     formatShapeList(inputShapes) + ":\n" + diagnostics.str());
  auto signature = getSignature(fn);
  if (!signature)
    return signature.takeError();
  // Outputs of the wrong shape are an error before anything is compiled.
  for (size_t i = 0; i < outputShapes.size(); ++i) {
    const TensorType &t = signature->outputs[i];
    if (outputShapes[i] != t.shape)
      return makeError("output #" + llvm::Twine(i) + " of @" + function +
                       " has shape " + formatShape(outputShapes[i]) +
                       "; expected " + formatShape(t.shape) + " (" + t.str() +
                       " for inputs of shapes " + formatShapeList(inputShapes) +
                       ")");
  }

  std::shared_ptr<Kernel> kernel;
  if (options.target != Target::CPU && options.cuda.shapeGenericKernels) {
    // The function as written, its kernels taking their sizes as
    // arguments; the plan for these shapes.
    auto asWritten = parseFunction(generic.irText, generic.bufferName, function,
                                   diagnostics);
    if (!asWritten)
      return asWritten.takeError();
    llvm::SmallVector<llvm::ArrayRef<int64_t>> bufferShapes(argShapes);
    for (const TensorType &t : signature->outputs)
      bufferShapes.push_back(t.shape);
    auto lowered = lowerAndCompile(**asWritten, function, *signature,
                                   diagnostics, bufferShapes);
    if (!lowered)
      return lowered.takeError();
    kernel = *lowered;
  } else {
    auto lowered = lowerAndCompile(**module, function, *signature, diagnostics);
    if (!lowered)
      return lowered.takeError();
    kernel = *lowered;
  }
  cache.emplace(key, kernel);
  return kernel;
}

JIT::JIT(Options options) : impl(std::make_shared<Impl>(options)) {}
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

const char *jit::getTargetName(Target target) {
  switch (target) {
  case Target::CPU:
    return "cpu";
  case Target::CUDASim:
    return "cuda-sim";
  case Target::CUDA:
    return "cuda";
  }
  return "unknown";
}

std::string JIT::getTargetDescription() const {
  if (impl->options.target == Target::CUDA) {
    std::lock_guard<std::mutex> lock(impl->mutex);
    if (!impl->device)
      return impl->deviceError.empty()
                 ? "CUDA GPU (not opened yet)"
                 : "CUDA GPU (unavailable: " + impl->deviceError + ")";
    return impl->device->name() + " (CUDA " +
           std::to_string(impl->device->computeCapability() / 10) + "." +
           std::to_string(impl->device->computeCapability() % 10) +
           ", kernels for " + impl->device->target() + ")" +
           (impl->options.fuse ? ", fused" : "");
  }
  if (impl->options.target == Target::CUDASim)
    return "CUDA simulator on the host (kernels for " +
           impl->options.cuda.arch + ")" +
           (impl->options.fuse ? ", fused" : "");
  return impl->target + ", vector width " +
         std::to_string(impl->options.cpu.vectorWidth) +
         (impl->options.cpu.parallel ? ", OpenMP rows" : ", one thread") +
         (impl->options.fuse ? ", fused" : "");
}

size_t JIT::getCacheSize() const {
  std::lock_guard<std::mutex> lock(impl->mutex);
  return impl->cache.size();
}

bool jit::parseSimThreadOrder(llvm::StringRef text, RunOptions &options,
                              std::string &error) {
  auto [name, seed] = text.split(':');
  std::optional<SimThreadOrder> order =
      llvm::StringSwitch<std::optional<SimThreadOrder>>(name)
          .Case("forward", SimThreadOrder::Forward)
          .Case("reverse", SimThreadOrder::Reverse)
          .Case("shuffle", SimThreadOrder::Shuffle)
          .Case("stagger", SimThreadOrder::Stagger)
          .Default(std::nullopt);
  unsigned value = 1;
  bool seeded = text.contains(':');
  if (!order || (seeded && (*order != SimThreadOrder::Shuffle ||
                            seed.getAsInteger(10, value)))) {
    error = "unknown thread order '" + text.str() +
            "' (forward, reverse, shuffle, shuffle:SEED with SEED an "
            "unsigned integer, or stagger)";
    return false;
  }
  options.simOrder = *order;
  options.simSeed = value;
  return true;
}
