//===- NormfuseModule.cpp - the _normfuse extension module ------*- C++ -*-===//
//
// Part of normfuse. The C++ half of the Python package: compiles functions
// through the JIT library and runs them on arrays that cross by DLPack or the
// buffer protocol, without copies. The Python half (normfuse/__init__.py)
// reads sources, counts arguments, allocates results and turns
// ml_dtypes.bfloat16 arrays into uint16 views flagged as bf16 (NumPy cannot
// export that dtype).
//
// Errors: a request that does not compile raises normfuse.CompileError with
// the JIT's message; an argument of the wrong dtype raises TypeError; any
// other rejected call (shape, contiguity, device) raises ValueError. The
// GIL is released while a kernel runs; the JIT and its kernels are safe to
// call from several threads.
//
//===----------------------------------------------------------------------===//

#include "normfuse/JIT/JIT.h"
#include "normfuse/JIT/ModuleTools.h"

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
std::shared_ptr<JIT> getJIT(Target target, bool fuse) {
  static std::mutex mutex;
  static auto *jits =
      new std::map<std::pair<Target, bool>, std::shared_ptr<JIT>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<JIT> &jit = (*jits)[{target, fuse}];
  if (!jit) {
    Options options;
    options.target = target;
    options.fuse = fuse;
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

/// The dtype of an imported array: f16, bf16, f32 or f64; a uint16 array
/// counts as bf16 when flagged (a view of ml_dtypes.bfloat16 data).
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

/// The TensorRef of argument `index` (counted from 1 in messages) of
/// `role`, checked against `expected`'s dtype and the kernel's device.
template <typename Array>
TensorRef toTensorRef(const Array &array, bool bf16View,
                      const TensorType &expected, const char *role,
                      size_t index, const std::string &function) {
  std::string what =
      std::string(role) + " " + std::to_string(index + 1) + " of @" + function;
  std::optional<DType> dtype = toDType(array.dtype(), bf16View);
  if (!dtype || *dtype != expected.dtype)
    throw nb::type_error((what + " has dtype " +
                          (dtype ? std::string(getDTypeName(*dtype))
                                 : describeDType(array.dtype())) +
                          "; it takes " + getDTypeName(expected.dtype) + " (" +
                          expected.str() + ")")
                             .c_str());
  if (array.device_type() != nb::device::cpu::value)
    throw nb::value_error((what +
                           " is not in host memory (DLPack device type " +
                           std::to_string(array.device_type()) +
                           "): normfuse's targets take host arrays for now")
                              .c_str());
  TensorRef ref;
  ref.data = const_cast<void *>(static_cast<const void *>(array.data()));
  ref.dtype = *dtype;
  for (size_t d = 0; d < array.ndim(); ++d) {
    ref.shape.push_back(array.shape(d));
    ref.strides.push_back(array.stride(d));
  }
  return ref;
}

using InArray = nb::ndarray<nb::ro>;
using OutArray = nb::ndarray<>;

/// A compiled function: its kernel and the JIT that keeps it alive.
class Function {
public:
  Function(std::shared_ptr<JIT> jit, std::shared_ptr<Kernel> kernel)
      : jit(std::move(jit)), kernel(std::move(kernel)) {}

  std::string name() const { return kernel->getName(); }
  std::string target() const { return getTargetName(kernel->getTarget()); }
  nb::list inputs() const { return describe(kernel->getSignature().inputs); }
  nb::list outputs() const { return describe(kernel->getSignature().outputs); }

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

  void run(const std::vector<InArray> &inputs,
           const std::vector<bool> &inputBF16Views,
           const std::vector<OutArray> &outputs,
           const std::vector<bool> &outputBF16Views, int threads) const {
    std::vector<TensorRef> in, out;
    refs(inputs, inputBF16Views, outputs, outputBF16Views, in, out);
    llvm::Error error = llvm::Error::success();
    {
      nb::gil_scoped_release release;
      error = kernel->run(in, out, threads);
    }
    if (error)
      throw nb::value_error(message(std::move(error)).c_str());
  }

  /// Runs the function `runs` times after one untimed call; the seconds of
  /// each timed run.
  std::vector<double> bench(const std::vector<InArray> &inputs,
                            const std::vector<bool> &inputBF16Views,
                            const std::vector<OutArray> &outputs,
                            const std::vector<bool> &outputBF16Views,
                            int threads, int runs) const {
    if (runs < 1)
      throw nb::value_error("runs must be at least 1");
    std::vector<TensorRef> in, out;
    refs(inputs, inputBF16Views, outputs, outputBF16Views, in, out);
    std::vector<double> seconds;
    llvm::Error error = llvm::Error::success();
    {
      nb::gil_scoped_release release;
      error = kernel->run(in, out, threads);
      for (int r = 0; r < runs && !error; ++r) {
        auto start = std::chrono::steady_clock::now();
        error = kernel->run(in, out, threads);
        seconds.push_back(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
      }
    }
    if (error)
      throw nb::value_error(message(std::move(error)).c_str());
    return seconds;
  }

private:
  void refs(const std::vector<InArray> &inputs,
            const std::vector<bool> &inputBF16Views,
            const std::vector<OutArray> &outputs,
            const std::vector<bool> &outputBF16Views,
            std::vector<TensorRef> &in, std::vector<TensorRef> &out) const {
    const Signature &sig = kernel->getSignature();
    if (inputs.size() != sig.inputs.size() ||
        outputs.size() != sig.outputs.size() ||
        inputBF16Views.size() != inputs.size() ||
        outputBF16Views.size() != outputs.size())
      throw nb::type_error(
          ("@" + name() + " takes " + std::to_string(sig.inputs.size()) +
           " arguments and " + std::to_string(sig.outputs.size()) + " results")
              .c_str());
    for (size_t i = 0; i < inputs.size(); ++i)
      in.push_back(toTensorRef(inputs[i], inputBF16Views[i], sig.inputs[i],
                               "argument", i, name()));
    for (size_t i = 0; i < outputs.size(); ++i)
      out.push_back(toTensorRef(outputs[i], outputBF16Views[i], sig.outputs[i],
                                "output", i, name()));
  }

  std::shared_ptr<JIT> jit;
  std::shared_ptr<Kernel> kernel;
};

/// Compiles `entry` of the module in `source`: MLIR text, or the path of a
/// file holding it when `isPath`.
std::shared_ptr<Function> compile(const std::string &source, bool isPath,
                                  const std::string &entry,
                                  const std::string &targetName, bool fuse) {
  std::optional<Target> target = parseTarget(targetName);
  if (!target)
    throw nb::value_error(
        ("unknown target '" + targetName + "' (cpu, cuda or cuda-sim)")
            .c_str());
  std::shared_ptr<JIT> jit = getJIT(*target, fuse);
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
      .def("output_shapes", &Function::outputShapes, nb::arg("input_shapes"))
      .def("run", &Function::run, nb::arg("inputs"),
           nb::arg("input_bf16_views"), nb::arg("outputs"),
           nb::arg("output_bf16_views"), nb::arg("threads"))
      .def("bench", &Function::bench, nb::arg("inputs"),
           nb::arg("input_bf16_views"), nb::arg("outputs"),
           nb::arg("output_bf16_views"), nb::arg("threads"), nb::arg("runs"));

  m.def("compile", &compile, nb::arg("source"), nb::arg("is_path"),
        nb::arg("entry"), nb::arg("target"), nb::arg("fuse"));
  m.def("fuse", &fuse, nb::arg("source"), nb::arg("buffer_name"));
  m.def("kernel_graph", &graph, nb::arg("source"), nb::arg("fuse"),
        nb::arg("buffer_name"));
}
