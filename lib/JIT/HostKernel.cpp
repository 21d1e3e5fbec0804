//===- HostKernel.cpp - a JIT-compiled nf function --------------*- C++ -*-===//
//
// Part of normfuse. See HostKernel.h. The lowered function takes each
// buffer as an exploded memref descriptor (allocated pointer, aligned
// pointer, offset, sizes, strides); the packed wrapper MLIR's execution
// engine generates takes a pointer to each of those scalars.
//
//===----------------------------------------------------------------------===//

#include "HostKernel.h"
#include "BufferCache.h"
#include "SoftFloat.h"
#include "StridedCopy.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Target/TargetMachine.h"

#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <omp.h>

using namespace normfuse;
using namespace normfuse::jit;

Kernel::~Kernel() = default;

std::string TensorType::str() const {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += (d == kDynamic ? std::string("?") : std::to_string(d)) + "x";
  return s + getDTypeName(dtype) + ">";
}

bool TensorType::hasStaticShape() const {
  return llvm::none_of(shape, [](int64_t d) { return d == kDynamic; });
}

bool Signature::hasStaticShapes() const {
  auto isStatic = [](const TensorType &t) { return t.hasStaticShape(); };
  return llvm::all_of(inputs, isStatic) && llvm::all_of(outputs, isStatic);
}

/// Prints the shape of a type as "[2, ?, 8]".
static std::string formatDims(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + (shape[i] == TensorType::kDynamic
                                ? std::string("?")
                                : std::to_string(shape[i]));
  return s + "]";
}

/// Puts OpenMP's runtime in the process's global scope, where the compiled
/// code looks up its calls (__kmpc_fork_call, ...) by name. A tool linked
/// with libomp has it there already; a host that loaded this library with
/// RTLD_LOCAL (a Python extension module) has libomp only in that local
/// scope, and reopening it with RTLD_GLOBAL moves it. (dlsym(RTLD_DEFAULT)
/// called from this library would find it in its own scope either way, so
/// it cannot tell the two apart.)
static void exposeOpenMPRuntime() {
  static std::once_flag once;
  std::call_once(once, [] {
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&omp_get_max_threads), &info) &&
        info.dli_fname)
      llvm::sys::DynamicLibrary::LoadLibraryPermanently(info.dli_fname);
  });
}

HostKernel::HostKernel(std::string name, Signature signature)
    : Kernel(std::move(name), std::move(signature)) {}

llvm::Error HostKernel::compile(mlir::ModuleOp module, bool cacheBuffers) {
  exposeOpenMPRuntime();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    return jtmb.takeError();
  auto tm = jtmb->createTargetMachine();
  if (!tm)
    return tm.takeError();
  targetMachine = std::move(*tm);
  transformer = mlir::makeOptimizingTransformer(3, 0, targetMachine.get());

  // An op the LLVM conversions left (a lowering gap) would crash LLVM's
  // translation, inside an OpenMP region with a segmentation fault: name it
  // instead.
  mlir::Operation *leftover = nullptr;
  module.walk([&](mlir::Operation *op) {
    llvm::StringRef ns =
        op->getDialect() ? op->getDialect()->getNamespace() : llvm::StringRef();
    if (op == module.getOperation() || ns == "llvm" || ns == "omp")
      return mlir::WalkResult::advance();
    leftover = op;
    return mlir::WalkResult::interrupt();
  });
  if (leftover) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "'" << leftover->getName() << "' was not lowered to LLVM (a gap "
       << "in normfuse's CPU pipeline; please report it)";
    if (auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(leftover->getLoc()))
      os << " at " << loc.getFilename().getValue() << ":" << loc.getLine()
         << ":" << loc.getColumn();
    return llvm::make_error<llvm::StringError>(os.str(),
                                               llvm::inconvertibleErrorCode());
  }

  mlir::ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  options.enableGDBNotificationListener = false;
  options.enablePerfNotificationListener = false;
  auto created = mlir::ExecutionEngine::create(module, options);
  if (!created)
    return created.takeError();
  engine = std::move(*created);
  engine->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    // Definitions in the kernel's own library win over the process's.
    if (cacheBuffers) {
      symbols[interner("malloc")] = {
          llvm::orc::ExecutorAddr::fromPtr(&buffer_cache::allocate),
          llvm::JITSymbolFlags::Exported};
      symbols[interner("free")] = {
          llvm::orc::ExecutorAddr::fromPtr(&buffer_cache::release),
          llvm::JITSymbolFlags::Exported};
    }
    // Conversions to and from bf16 and f16 the CPU has no instruction for.
    addSoftFloatSymbols(symbols, interner);
    // A copy between strided views (e.g. into a padded buffer).
    symbols[interner("memrefCopy")] = {
        llvm::orc::ExecutorAddr::fromPtr(&normfuseStridedCopy),
        llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  auto packed = engine->lookupPacked(name);
  if (!packed)
    return packed.takeError();
  fn = *packed;
  return llvm::Error::success();
}

HostKernel::~HostKernel() = default;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(message,
                                             llvm::inconvertibleErrorCode());
}

/// Whether a buffer of shape `shape` fits `type`.
static bool fits(const std::vector<int64_t> &shape, const TensorType &type) {
  if (shape.size() != type.shape.size())
    return false;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 0 ||
        (type.shape[d] != TensorType::kDynamic && shape[d] != type.shape[d]))
      return false;
  return true;
}

static llvm::Error checkCount(llvm::StringRef function, size_t count,
                              const std::vector<TensorType> &types,
                              llvm::StringRef role) {
  if (count == types.size())
    return llvm::Error::success();
  return makeError("@" + function + " takes " + llvm::Twine(types.size()) +
                   " " + role + (types.size() == 1 ? "" : "s") + ", got " +
                   llvm::Twine(count));
}

static llvm::Error checkShape(const llvm::Twine &what,
                              const std::vector<int64_t> &shape,
                              const TensorType &type) {
  if (!fits(shape, type))
    return makeError(what + " has shape " + formatShape(shape) + "; expected " +
                     formatDims(type.shape) + " (" + type.str() + ")");
  // Dynamic dimensions come from the caller: their bytes must be countable
  // (the kernels index them with 64-bit integers).
  uint64_t bytes = getDTypeSize(type.dtype);
  bool overflow = false;
  for (int64_t d : shape)
    overflow |= __builtin_mul_overflow(bytes, uint64_t(d), &bytes);
  if (overflow || bytes > uint64_t(INT64_MAX))
    return makeError(what + " has shape " + formatShape(shape) +
                     ", more than 2^63 bytes");
  return llvm::Error::success();
}

llvm::Error normfuse::jit::checkShapes(
    llvm::StringRef function, llvm::ArrayRef<std::vector<int64_t>> shapes,
    const std::vector<TensorType> &types, llvm::StringRef role) {
  if (auto err = checkCount(function, shapes.size(), types, role))
    return err;
  for (size_t i = 0; i < shapes.size(); ++i)
    if (auto err = checkShape(role + " #" + llvm::Twine(i) + " of @" + function,
                              shapes[i], types[i]))
      return err;
  return llvm::Error::success();
}

llvm::Error normfuse::jit::checkBuffers(llvm::StringRef function,
                                        llvm::ArrayRef<TensorRef> buffers,
                                        const std::vector<TensorType> &types,
                                        llvm::StringRef role,
                                        bool deviceAllowed) {
  if (auto err = checkCount(function, buffers.size(), types, role))
    return err;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const TensorRef &b = buffers[i];
    const TensorType &t = types[i];
    std::string what =
        (role + " #" + llvm::Twine(i) + " of @" + function).str();
    if (b.space != MemorySpace::Host && !deviceAllowed)
      return makeError(what + " is CUDA device memory; only the cuda target "
                              "takes device buffers");
    if (b.dtype != t.dtype)
      return makeError(what + " has dtype " + getDTypeName(b.dtype) +
                       "; expected " + getDTypeName(t.dtype) + " (" + t.str() +
                       ")");
    if (auto err = checkShape(what, b.shape, t))
      return err;
    if (!b.isContiguous())
      return makeError(what + " is not contiguous (strides " +
                       formatShape(b.strides) + " for shape " +
                       formatShape(b.shape) +
                       "); the CPU kernels need row-major buffers");
    if (!b.data && b.getNumElements() != 0)
      return makeError(what + " has no data (a null pointer)");
    if (b.space != MemorySpace::Host &&
        reinterpret_cast<uintptr_t>(b.data) % kDeviceBufferAlignment != 0)
      return makeError(
          what + " is device memory at " +
          llvm::formatv("{0:x}", reinterpret_cast<uintptr_t>(b.data)).str() +
          ", not " + llvm::Twine(kDeviceBufferAlignment) +
          "-byte aligned; the CUDA kernels access it 16 bytes at a time "
          "(copy it into a fresh allocation, such as PyTorch's .clone())");
  }
  return llvm::Error::success();
}

llvm::Expected<std::shared_ptr<Kernel>> HostKernel::specialize(
    llvm::ArrayRef<std::vector<int64_t>> inputShapes,
    llvm::ArrayRef<std::vector<int64_t>> outputShapes) const {
  if (auto err = checkOwnShapes(name, signature, inputShapes, outputShapes))
    return std::move(err);
  return std::const_pointer_cast<HostKernel>(shared_from_this());
}

llvm::Error
jit::checkOwnShapes(llvm::StringRef function, const Signature &signature,
                    llvm::ArrayRef<std::vector<int64_t>> inputShapes,
                    llvm::ArrayRef<std::vector<int64_t>> outputShapes) {
  if (auto err = checkShapes(function, inputShapes, signature.inputs, "input"))
    return err;
  if (!outputShapes.empty())
    return checkShapes(function, outputShapes, signature.outputs, "output");
  return llvm::Error::success();
}

llvm::Error jit::checkRunOptions(llvm::StringRef function,
                                 const RunOptions &options, Target target) {
  if (options.cudaStream && target != Target::CUDA)
    return makeError("@" + function + ": the " + getTargetName(target) +
                     " target takes no CUDA stream");
  if (options.simOrder != SimThreadOrder::Forward && target != Target::CUDASim)
    return makeError("@" + function + ": the " + getTargetName(target) +
                     " target runs no simulator, so no thread order (that "
                     "is the cuda-sim target's)");
  return llvm::Error::success();
}

llvm::Error HostKernel::run(llvm::ArrayRef<TensorRef> inputs,
                            llvm::ArrayRef<TensorRef> outputs,
                            const RunOptions &options) const {
  const int threads = options.threads;
  if (auto err = checkRunOptions(name, options, Target::CPU))
    return err;
  if (auto err = checkBuffers(name, inputs, signature.inputs, "input"))
    return err;
  if (auto err = checkBuffers(name, outputs, signature.outputs, "output"))
    return err;
  if (threads < 0)
    return makeError("threads must be 0 (the default) or positive, got " +
                     llvm::Twine(threads));

  // One slot per scalar of each exploded descriptor: allocated pointer,
  // aligned pointer, offset, sizes, strides (row-major).
  size_t slots = 0;
  for (const auto *list : {&inputs, &outputs})
    for (const TensorRef &b : *list)
      slots += 3 + 2 * b.shape.size();
  std::vector<int64_t> storage;
  storage.reserve(slots);
  std::vector<void *> args;
  args.reserve(slots);
  auto push = [&](int64_t v) {
    storage.push_back(v);
    args.push_back(&storage.back());
  };
  for (const auto *list : {&inputs, &outputs}) {
    for (const TensorRef &b : *list) {
      push(reinterpret_cast<intptr_t>(b.data));
      push(reinterpret_cast<intptr_t>(b.data));
      push(0);
      for (int64_t d : b.shape)
        push(d);
      int64_t stride = 1;
      std::vector<int64_t> strides(b.shape.size());
      for (size_t i = b.shape.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= b.shape[i];
      }
      for (int64_t s : strides)
        push(s);
    }
  }
  // The thread count is the calling thread's OpenMP setting: set it for
  // this call only.
  int previousThreads = omp_get_max_threads();
  if (threads > 0)
    omp_set_num_threads(threads);
  fn(args.data());
  if (threads > 0)
    omp_set_num_threads(previousThreads);
  return llvm::Error::success();
}
