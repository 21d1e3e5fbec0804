//===- NormfuseModule.cpp - the _normfuse extension module ------*- C++ -*-===//
//
// Part of normfuse. The C++ half of the Python package: compiles functions
// through the JIT library and runs them on arrays that cross by DLPack or the
// buffer protocol, or that the Python half describes itself (PyTorch
// tensors: address, shape, strides, dtype, device), without copies. Host
// arrays are host TensorRefs; CUDA device (and managed) arrays are
// MemorySpace::CUDADevice TensorRefs, which only the cuda target takes; a
// call runs on the CUstream it is given (RunOptions::cudaStream). The
// Python half (normfuse/__init__.py) reads sources, counts arguments,
// allocates results, picks the stream and turns ml_dtypes.bfloat16 arrays
// into uint16 views flagged as bf16 (NumPy cannot export that dtype).
//
// Errors: a request that does not compile raises normfuse.CompileError with
// the JIT's message; an argument of the wrong dtype raises TypeError; any
// other rejected call (shape, contiguity, memory the target cannot take)
// raises ValueError. The GIL is released while a kernel runs; the JIT and
// its kernels are safe to call from several threads.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/CUDA/Schedule.h"
#include "normfuse/JIT/CudaPlanKernel.h"
#include "normfuse/JIT/JIT.h"
#include "normfuse/JIT/ModuleTools.h"
#include "normfuse/Runtime/CudaDriver.h"
#include "normfuse/Runtime/GpuTarget.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <type_traits>

namespace nb = nanobind;
using namespace normfuse;
using namespace normfuse::jit;

namespace {

/// A request that did not compile: normfuse.CompileError.
struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The message of `error`, consumed.
std::string message(llvm::Error error) {
  return llvm::toString(std::move(error));
}

std::optional<Target> parseTarget(const std::string &name) {
  for (Target t : {Target::CPU, Target::CUDASim, Target::CUDA})
    if (name == getTargetName(t))
      return t;
  return std::nullopt;
}

/// One JIT per set of options, for the life of the process: compiling the
/// same function twice returns the cached kernel. The JITs are never
/// destroyed: at exit, LLVM's own statics (made after this map) are gone
/// before a static map's destructor would run, and tearing down an
/// execution engine needs them.
std::shared_ptr<JIT> getJIT(Target target, bool fuse, bool tf32,
                            const std::string &rowNormSchedule,
                            const std::string &cudaArch) {
  static std::mutex mutex;
  static auto *jits =
      new std::map<std::tuple<Target, bool, bool, std::string, std::string>,
                   std::shared_ptr<JIT>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<JIT> &jit =
      (*jits)[{target, fuse, tf32, rowNormSchedule, cudaArch}];
  if (!jit) {
    Options options;
    options.target = target;
    options.fuse = fuse;
    options.cuda.allowTf32 = tf32;
    options.cuda.rowNormSchedule = rowNormSchedule;
    if (!cudaArch.empty())
      options.cuda.arch = cudaArch;
    jit = std::make_shared<JIT>(options);
  }
  return jit;
}

/// (dtype name, shape with None for a dynamic dimension)
nb::list describe(const std::vector<TensorType> &types) {
  nb::list out;
  for (const TensorType &t : types) {
    nb::list shape;
    for (int64_t d : t.shape) {
      if (d == TensorType::kDynamic)
        shape.append(nb::none());
      else
        shape.append(d);
    }
    out.append(nb::make_tuple(getDTypeName(t.dtype), nb::tuple(shape)));
  }
  return out;
}

/// The dtype of an imported array: f16, bf16, f32, f64, bool or an 8- to
/// 64-bit integer; a uint16 array counts as bf16 when flagged (a view of
/// ml_dtypes.bfloat16 data).
std::optional<DType> toDType(nb::dlpack::dtype dtype, bool bf16View) {
  auto code = static_cast<nb::dlpack::dtype_code>(dtype.code);
  if (dtype.lanes != 1)
    return std::nullopt;
  if (code == nb::dlpack::dtype_code::Float) {
    if (dtype.bits == 16)
      return DType::F16;
    if (dtype.bits == 32)
      return DType::F32;
    if (dtype.bits == 64)
      return DType::F64;
  }
  if (code == nb::dlpack::dtype_code::Bfloat && dtype.bits == 16)
    return DType::BF16;
  if (bf16View && code == nb::dlpack::dtype_code::UInt && dtype.bits == 16)
    return DType::BF16;
  if (code == nb::dlpack::dtype_code::Bool && dtype.bits == 8)
    return DType::Bool;
  if ((code == nb::dlpack::dtype_code::Int ||
       code == nb::dlpack::dtype_code::UInt) &&
      dtype.bits >= 8)
    return getIntegerDType(dtype.bits, code == nb::dlpack::dtype_code::UInt);
  return std::nullopt;
}

std::string describeDType(nb::dlpack::dtype dtype) {
  const char *kind = "";
  switch (static_cast<nb::dlpack::dtype_code>(dtype.code)) {
  case nb::dlpack::dtype_code::Int:
    kind = "i";
    break;
  case nb::dlpack::dtype_code::UInt:
    kind = "u";
    break;
  case nb::dlpack::dtype_code::Float:
    kind = "f";
    break;
  case nb::dlpack::dtype_code::Bfloat:
    kind = "bf";
    break;
  case nb::dlpack::dtype_code::Complex:
    kind = "complex";
    break;
  case nb::dlpack::dtype_code::Bool:
    return "bool";
  default:
    return "an unsupported dtype (DLPack code " + std::to_string(dtype.code) +
           ")";
  }
  return kind + std::to_string(dtype.bits) +
         (dtype.lanes == 1 ? "" : "x" + std::to_string(dtype.lanes));
}

/// DLPack's device types (dlpack.h's DLDeviceType) that normfuse reads.
enum DLPackDevice : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  /// Page-locked host memory (cudaMallocHost): host memory.
  kDLCUDAHost = 3,
  /// Managed memory (cudaMallocManaged): device memory to the cuda target.
  kDLCUDAManaged = 13,
};

/// The CUDA device the cuda target runs on (runtime::CudaDeviceOptions'
/// default ordinal).
constexpr int32_t kCUDADeviceOrdinal = 0;

/// Which buffer of a call a message is about; spelled out only for an
/// error.
struct BufferName {
  const char *role;
  /// Counted from 0.
  size_t index;
  const std::string &function;
  /// "argument 2 of @ln"
  std::string str() const {
    return std::string(role) + " " + std::to_string(index + 1) + " of @" +
           function;
  }
};

/// A buffer handed over by Python, and the DLPack device it lives on.
struct Buffer {
  TensorRef ref;
  int32_t deviceType = kDLCPU;
  int32_t deviceId = 0;
};

/// Sets `buffer`'s memory space from its DLPack device, then checks that a
/// kernel of `target` (none: no check) can take it: host memory anywhere,
/// CUDA memory of the cuda target's device on the cuda target. Raises
/// ValueError otherwise.
void place(Buffer &buffer, std::optional<Target> target,
           const BufferName &name) {
  switch (buffer.deviceType) {
  case kDLCPU:
  case kDLCUDAHost:
    buffer.ref.space = MemorySpace::Host;
    return;
  case kDLCUDA:
  case kDLCUDAManaged:
    buffer.ref.space = MemorySpace::CUDADevice;
    break;
  default:
    throw nb::value_error(
        (name.str() + " is in the memory of DLPack device type " +
         std::to_string(buffer.deviceType) +
         ", which normfuse cannot read (it takes host arrays, and CUDA "
         "device arrays on the cuda target)")
            .c_str());
  }
  if (!target)
    return;
  if (*target != Target::CUDA)
    throw nb::value_error((name.str() + " is in CUDA device memory; the " +
                           getTargetName(*target) +
                           " target takes host arrays (compile with "
                           "target=\"cuda\" to pass device arrays)")
                              .c_str());
  if (buffer.deviceType == kDLCUDA && buffer.deviceId != kCUDADeviceOrdinal)
    throw nb::value_error((name.str() + " is on CUDA device " +
                           std::to_string(buffer.deviceId) +
                           "; the cuda target runs on device " +
                           std::to_string(kCUDADeviceOrdinal) +
                           " (CUDA_VISIBLE_DEVICES chooses which GPU that is)")
                              .c_str());
}

/// Raises TypeError: buffer `name` has the dtype spelled `spelled`, not
/// `expected`'s.
[[noreturn]] void throwDTypeError(const std::string &spelled,
                                  const TensorType &expected,
                                  const BufferName &name) {
  throw nb::type_error((name.str() + " has dtype " + spelled + "; it takes " +
                        getDTypeName(expected.dtype) + " (" + expected.str() +
                        ")")
                           .c_str());
}

/// An array imported by DLPack or the buffer protocol, kept alive by
/// `held` while its TensorRef is in use; its memory checked (`place`)
/// before its dtype.
template <typename Array>
Buffer importArray(nb::handle object, bool bf16View, const TensorType &expected,
                   std::optional<Target> target, const BufferName &name,
                   std::vector<Array> &held) {
  Array array;
  if (!nb::try_cast(object, array, /*convert=*/false))
    throw nb::type_error(
        (name.str() + (std::is_same_v<Array, nb::ndarray<nb::ro>>
                           ? " could not be read as an array (DLPack or the "
                             "buffer protocol refused it)"
                           : " is not a writable array (read-only, or neither "
                             "DLPack nor the buffer protocol exports it)"))
            .c_str());
  Buffer buffer;
  buffer.deviceType = array.device_type();
  buffer.deviceId = array.device_id();
  place(buffer, target, name);
  std::optional<DType> dtype = toDType(array.dtype(), bf16View);
  if (!dtype || *dtype != expected.dtype)
    throwDTypeError(dtype ? getDTypeName(*dtype) : describeDType(array.dtype()),
                    expected, name);
  TensorRef &ref = buffer.ref;
  ref.data = const_cast<void *>(static_cast<const void *>(array.data()));
  ref.dtype = *dtype;
  ref.shape.resize(array.ndim());
  ref.strides.resize(array.ndim());
  for (size_t d = 0; d < array.ndim(); ++d) {
    ref.shape[d] = array.shape(d);
    ref.strides[d] = array.stride(d);
  }
  held.push_back(std::move(array));
  return buffer;
}

/// The integers of `sequence` (a tuple, or any iterable).
void readInts(nb::handle sequence, std::vector<int64_t> &ints) {
  if (nb::isinstance<nb::tuple>(sequence)) {
    auto tuple = nb::borrow<nb::tuple>(sequence);
    ints.resize(tuple.size());
    for (size_t i = 0; i < ints.size(); ++i)
      ints[i] = nb::cast<int64_t>(tuple[i]);
    return;
  }
  for (nb::handle d : sequence)
    ints.push_back(nb::cast<int64_t>(d));
}

/// A buffer the Python half describes itself, as it does PyTorch tensors
/// (reading their attributes is faster than a DLPack export): (address,
/// shape, strides in elements, dtype name, DLPack device type, device id).
Buffer readDescribedBuffer(nb::handle object, const TensorType &expected,
                           std::optional<Target> target,
                           const BufferName &name) {
  auto fields = nb::borrow<nb::tuple>(object);
  if (fields.size() != 6 || !nb::isinstance<nb::str>(fields[3]))
    throw nb::type_error(
        (name.str() +
         ": a described buffer is (address, shape, strides, dtype name, "
         "DLPack device type, device id)")
            .c_str());
  Buffer buffer;
  buffer.deviceType = nb::cast<int32_t>(fields[4]);
  buffer.deviceId = nb::cast<int32_t>(fields[5]);
  place(buffer, target, name);
  const char *dtypeName = nb::borrow<nb::str>(fields[3]).c_str();
  std::optional<DType> dtype = parseDType(dtypeName);
  if (!dtype || *dtype != expected.dtype)
    throwDTypeError(dtypeName, expected, name);
  TensorRef &ref = buffer.ref;
  ref.data = reinterpret_cast<void *>(nb::cast<uintptr_t>(fields[0]));
  ref.dtype = *dtype;
  readInts(fields[1], ref.shape);
  readInts(fields[2], ref.strides);
  if (ref.strides.size() != ref.shape.size())
    throw nb::value_error(
        (name.str() + " has " + std::to_string(ref.shape.size()) +
         " dimensions and " + std::to_string(ref.strides.size()) + " strides")
            .c_str());
  return buffer;
}

/// The CUDA driver, opened on first use (for Function.bench on device
/// arrays, which waits for the stream after each call). Never closed, as
/// the JITs are never destroyed.
runtime::CudaDriver &getCudaDriver() {
  static std::mutex mutex;
  static runtime::CudaDriver *driver = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (!driver) {
    std::string error;
    driver = runtime::CudaDriver::open(error).release();
    if (!driver)
      throw nb::value_error(("waiting for the CUDA stream: " + error).c_str());
  }
  return *driver;
}

using InArray = nb::ndarray<nb::ro>;
using OutArray = nb::ndarray<>;

/// The buffers of one call, and the imported arrays behind them.
struct Call {
  std::vector<TensorRef> inputs, outputs;
  std::vector<InArray> heldInputs;
  std::vector<OutArray> heldOutputs;
  bool anyOnDevice = false;
};

/// A compiled function: its kernel and the JIT that keeps it alive.
class Function {
public:
  Function(std::shared_ptr<JIT> jit, std::shared_ptr<Kernel> kernel)
      : jit(std::move(jit)), kernel(std::move(kernel)) {}

  std::string name() const { return kernel->getName(); }
  std::string target() const { return getTargetName(kernel->getTarget()); }
  nb::list inputs() const { return describe(kernel->getSignature().inputs); }
  nb::list outputs() const { return describe(kernel->getSignature().outputs); }
  /// The kernels one call launches on a CUDA target (its launch plan's
  /// launches of one block or more: a fallback not taken has none); none
  /// on the CPU, or for a function of dynamic shape (its plan is made per
  /// input shapes).
  std::optional<size_t> launches() const {
    const auto *planned =
        dynamic_cast<const normfuse::jit::CudaPlanKernel *>(kernel.get());
    if (!planned)
      return std::nullopt;
    return llvm::count_if(planned->getPlan().steps, [](const auto &step) {
      return step.kind == std::decay_t<decltype(step)>::Kind::Launch &&
             !step.launch.emptyGrid();
    });
  }

  /// The result shapes for inputs of `inputShapes` (compiling the kernel
  /// for them when the function has dynamic dimensions).
  std::vector<std::vector<int64_t>>
  outputShapes(const std::vector<std::vector<int64_t>> &inputShapes) const {
    llvm::Expected<std::shared_ptr<Kernel>> specialized = [&] {
      nb::gil_scoped_release release;
      return kernel->specialize(inputShapes);
    }();
    if (!specialized)
      throw nb::value_error(message(specialized.takeError()).c_str());
    std::vector<std::vector<int64_t>> shapes;
    for (const TensorType &t : (*specialized)->getSignature().outputs)
      shapes.push_back(t.shape);
    return shapes;
  }

  /// Runs the kernel on `stream` (a CUstream; the cuda target's alone).
  void run(nb::list inputs, const std::vector<bool> &inputBF16Views,
           nb::list outputs, const std::vector<bool> &outputBF16Views,
           int threads, uintptr_t stream, const std::string &simOrder) const {
    Call call = prepare(inputs, inputBF16Views, outputs, outputBF16Views,
                        kernel->getTarget());
    RunOptions options = runOptions(threads, stream, simOrder);
    llvm::Error error = llvm::Error::success();
    {
      nb::gil_scoped_release release;
      error = kernel->run(call.inputs, call.outputs, options);
    }
    if (error)
      throw nb::value_error(message(std::move(error)).c_str());
  }

  /// Runs the function `runs` times after one untimed call; the seconds of
  /// each timed run. With a buffer in device memory each run's time lasts
  /// until `stream` has finished its work.
  std::vector<double>
  bench(nb::list inputs, const std::vector<bool> &inputBF16Views,
        nb::list outputs, const std::vector<bool> &outputBF16Views, int threads,
        uintptr_t stream, const std::string &simOrder, int runs) const {
    if (runs < 1)
      throw nb::value_error("runs must be at least 1");
    Call call = prepare(inputs, inputBF16Views, outputs, outputBF16Views,
                        kernel->getTarget());
    RunOptions options = runOptions(threads, stream, simOrder);
    runtime::CudaDriver *driver = call.anyOnDevice ? &getCudaDriver() : nullptr;
    std::vector<double> seconds;
    llvm::Error error = llvm::Error::success();
    std::string waitError;
    {
      nb::gil_scoped_release release;
      // A device call returns once its work is enqueued: wait for it.
      auto once = [&] {
        error = kernel->run(call.inputs, call.outputs, options);
        return !error &&
               (!driver || driver->check(driver->cuStreamSynchronize(
                                             static_cast<runtime::cu::Stream>(
                                                 options.cudaStream)),
                                         "cuStreamSynchronize", waitError));
      };
      bool ok = once();
      for (int r = 0; r < runs && ok; ++r) {
        auto start = std::chrono::steady_clock::now();
        ok = once();
        seconds.push_back(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
      }
    }
    if (error)
      throw nb::value_error(message(std::move(error)).c_str());
    if (!waitError.empty())
      throw nb::value_error(("@" + name() + ": " + waitError).c_str());
    return seconds;
  }

  /// What a call would hand the kernel, without running it: for each
  /// input, then each output, (space "host" or "cuda", address, dtype,
  /// shape, strides). Each buffer's memory is checked as a kernel of
  /// `targetName` would take it, or not at all when it is None. For the
  /// tests of the package, which have no GPU.
  nb::list tensorRefs(nb::list inputs, const std::vector<bool> &inputBF16Views,
                      nb::list outputs,
                      const std::vector<bool> &outputBF16Views,
                      const std::optional<std::string> &targetName) const {
    std::optional<Target> target;
    if (targetName && !(target = parseTarget(*targetName)))
      throw nb::value_error(("unknown target '" + *targetName + "'").c_str());
    Call call =
        prepare(inputs, inputBF16Views, outputs, outputBF16Views, target);
    nb::list described;
    for (const auto *refs : {&call.inputs, &call.outputs})
      for (const TensorRef &r : *refs)
        described.append(nb::make_tuple(
            r.space == MemorySpace::Host ? "host" : "cuda",
            reinterpret_cast<uintptr_t>(r.data), getDTypeName(r.dtype),
            nb::tuple(nb::cast(r.shape)), nb::tuple(nb::cast(r.strides))));
    return described;
  }

private:
  RunOptions runOptions(int threads, uintptr_t stream,
                        const std::string &simOrder) const {
    RunOptions options;
    options.threads = threads;
    options.cudaStream = reinterpret_cast<void *>(stream);
    std::string error;
    if (!parseSimThreadOrder(simOrder, options, error))
      throw nb::value_error(("sim_order: " + error).c_str());
    return options;
  }

  /// The buffers of a call. Each element of `inputs` and `outputs` is an
  /// array (DLPack or the buffer protocol) or a described buffer (a
  /// tuple, see readDescribedBuffer). Each buffer's memory is checked
  /// (`place`) as a kernel of `target` takes it, unless `target` is none.
  Call prepare(nb::list inputs, const std::vector<bool> &inputBF16Views,
               nb::list outputs, const std::vector<bool> &outputBF16Views,
               std::optional<Target> target) const {
    const Signature &sig = kernel->getSignature();
    if (inputs.size() != sig.inputs.size() ||
        outputs.size() != sig.outputs.size() ||
        inputBF16Views.size() != inputs.size() ||
        outputBF16Views.size() != outputs.size())
      throw nb::type_error(
          ("@" + name() + " takes " + std::to_string(sig.inputs.size()) +
           " arguments and " + std::to_string(sig.outputs.size()) + " results")
              .c_str());
    Call call;
    call.inputs.reserve(inputs.size());
    call.outputs.reserve(outputs.size());
    call.heldInputs.reserve(inputs.size());
    call.heldOutputs.reserve(outputs.size());
    for (size_t i = 0; i < inputs.size() + outputs.size(); ++i) {
      bool isInput = i < inputs.size();
      size_t index = isInput ? i : i - inputs.size();
      nb::handle object = isInput ? inputs[index] : outputs[index];
      const TensorType &expected =
          isInput ? sig.inputs[index] : sig.outputs[index];
      BufferName bufferName{isInput ? "argument" : "output", index,
                            kernel->getName()};
      Buffer buffer;
      if (nb::isinstance<nb::tuple>(object))
        buffer = readDescribedBuffer(object, expected, target, bufferName);
      else if (isInput)
        buffer = importArray(object, inputBF16Views[index], expected, target,
                             bufferName, call.heldInputs);
      else
        buffer = importArray(object, outputBF16Views[index], expected, target,
                             bufferName, call.heldOutputs);
      call.anyOnDevice |= buffer.ref.space != MemorySpace::Host;
      (isInput ? call.inputs : call.outputs).push_back(std::move(buffer.ref));
    }
    return call;
  }

  std::shared_ptr<JIT> jit;
  std::shared_ptr<Kernel> kernel;
};

/// Compiles `entry` of the module in `source`: MLIR text, or the path of a
/// file holding it when `isPath`; f32 products as tf32 when `tf32` and row
/// norms under `rowNormSchedule` (the CUDA targets); the simulator's
/// kernels for the GPU target `cudaArch` (empty: the default).
std::shared_ptr<Function> compile(const std::string &source, bool isPath,
                                  const std::string &entry,
                                  const std::string &targetName, bool fuse,
                                  bool tf32, const std::string &rowNormSchedule,
                                  const std::string &cudaArch) {
  std::optional<Target> target = parseTarget(targetName);
  if (!target)
    throw nb::value_error(
        ("unknown target '" + targetName + "' (cpu, cuda or cuda-sim)")
            .c_str());
  if (tf32 && *target == Target::CPU)
    throw nb::value_error(
        "allow_tf32 applies to the cuda and cuda-sim targets, not cpu");
  if (mlir::failed(mlir::nf::cuda::parseForcedRowNormKind(rowNormSchedule)))
    throw nb::value_error(("unknown row_norm_schedule '" + rowNormSchedule +
                           "' (" + mlir::nf::cuda::kForcedRowNormKinds + ")")
                              .c_str());
  if (rowNormSchedule != "auto" && *target == Target::CPU)
    throw nb::value_error(
        "row_norm_schedule applies to the cuda and cuda-sim targets, not cpu");
  if (!cudaArch.empty()) {
    if (*target != Target::CUDASim)
      throw nb::value_error(
          ("cuda_arch applies to the cuda-sim target, not " + targetName +
           (*target == Target::CUDA ? " (which compiles for the GPU it finds)"
                                    : ""))
              .c_str());
    std::string error;
    if (!normfuse::runtime::GpuTarget::parse(cudaArch, error))
      throw nb::value_error(("cuda_arch: " + error).c_str());
  }
  std::shared_ptr<JIT> jit =
      getJIT(*target, fuse, tf32, rowNormSchedule, cudaArch);
  llvm::Expected<std::shared_ptr<Kernel>> kernel = [&] {
    nb::gil_scoped_release release;
    return isPath ? jit->compileFile(source, entry)
                  : jit->compile(source, entry);
  }();
  if (!kernel)
    throw CompileError(message(kernel.takeError()));
  return std::make_shared<Function>(jit, *kernel);
}

std::string fuse(const std::string &source, const std::string &bufferName) {
  llvm::Expected<std::string> text = [&] {
    nb::gil_scoped_release release;
    return fuseModule(source, bufferName);
  }();
  if (!text)
    throw CompileError(message(text.takeError()));
  return *text;
}

std::string graph(const std::string &source, bool fuse,
                  const std::string &bufferName) {
  llvm::Expected<std::string> dot = [&] {
    nb::gil_scoped_release release;
    return kernelGraph(source, fuse, bufferName);
  }();
  if (!dot)
    throw CompileError(message(dot.takeError()));
  return *dot;
}

} // namespace

NB_MODULE(_normfuse, m) {
  m.doc() = "normfuse's compiler and JIT (use the normfuse package)";
  nb::exception<CompileError>(m, "CompileError");

  nb::class_<Function>(m, "Function")
      .def_prop_ro("name", &Function::name)
      .def_prop_ro("target", &Function::target)
      .def_prop_ro("inputs", &Function::inputs)
      .def_prop_ro("outputs", &Function::outputs)
      .def_prop_ro("launches", &Function::launches)
      .def("output_shapes", &Function::outputShapes, nb::arg("input_shapes"))
      .def("run", &Function::run, nb::arg("inputs"),
           nb::arg("input_bf16_views"), nb::arg("outputs"),
           nb::arg("output_bf16_views"), nb::arg("threads"), nb::arg("stream"),
           nb::arg("sim_order"))
      .def("bench", &Function::bench, nb::arg("inputs"),
           nb::arg("input_bf16_views"), nb::arg("outputs"),
           nb::arg("output_bf16_views"), nb::arg("threads"), nb::arg("stream"),
           nb::arg("sim_order"), nb::arg("runs"))
      .def("tensor_refs", &Function::tensorRefs, nb::arg("inputs"),
           nb::arg("input_bf16_views"), nb::arg("outputs"),
           nb::arg("output_bf16_views"), nb::arg("target").none());

  m.def("compile", &compile, nb::arg("source"), nb::arg("is_path"),
        nb::arg("entry"), nb::arg("target"), nb::arg("fuse"),
        nb::arg("allow_tf32"), nb::arg("row_norm_schedule"),
        nb::arg("cuda_arch"));
  m.def("fuse", &fuse, nb::arg("source"), nb::arg("buffer_name"));
  m.def(
      "check_sim_order",
      [](const std::string &text) {
        RunOptions options;
        std::string error;
        if (!parseSimThreadOrder(text, options, error))
          throw nb::value_error(("sim_order: " + error).c_str());
      },
      nb::arg("text"));
  m.def("kernel_graph", &graph, nb::arg("source"), nb::arg("fuse"),
        nb::arg("buffer_name"));
}
