//===- nf-run.cpp - run one nf function on .npy files -----------*- C++ -*-===//
//
// Part of normfuse. Compiles one function of a .mlir file with the JIT (for
// the host CPU, or for the CUDA simulator with --target cuda-sim), runs it
// on NumPy .npy inputs and writes .npy outputs; with --bench it
// times the function and prints a table and a JSON line (median time, bytes
// read and written, GB/s). Any problem is one diagnostic on stderr and exit
// status 1; outputs are written only after a successful run, all or
// nothing (temporary files renamed into place when every one is written). A
// function with dynamic dimensions is compiled for the shapes of the input
// files, which also give the output shapes.
//
//===----------------------------------------------------------------------===//

#include "normfuse/JIT/CudaKernel.h"
#include "normfuse/JIT/JIT.h"
#include "normfuse/Runtime/CudaDevice.h"
#include "normfuse/Runtime/HostMemory.h"
#include "normfuse/Runtime/PackageFiles.h"
#include "normfuse/Support/Npy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace normfuse;

static const char *kUsage = R"(usage: nf-run FILE.mlir --entry NAME [options]
       nf-run PACKAGE --entry NAME --target cuda|cuda-sim [options]

Runs function NAME of FILE.mlir on .npy inputs and writes .npy outputs.
Dynamic dimensions ('?') take the sizes of the input files. Given a kernel
package folder (made by nf-package) instead, runs its entry NAME with the
runtime, as nf-package-run does.

  --entry NAME        the function to run (required)
  --input FILE.npy    an input, one per argument, in order
  --output FILE.npy   where to write a result, in order; results past the
                      last --output are computed and discarded
  --target T          where to run: cpu (the default); cuda: this
                      machine's GPU (kernels compiled by NVRTC for it,
                      cached in $NF_KERNEL_CACHE_DIR or
                      ~/.cache/normfuse/kernels); or cuda-sim: the CUDA
                      kernels run on this CPU by normfuse's CUDA simulator
                      (slow; checks the CUDA back end without a GPU)
  --cuda-arch TARGET  the GPU cuda-sim's kernels are generated for: sm_XY
                      (75 and up) or a part (h100-pcie, a100, ...),
                      optionally with :key=value figures (sm_90:sms=114);
                      default sm_90. The cuda target uses its device's.
  --allow-tf32        run f32 matmuls and convolutions on tensor cores as
                      tf32 (sm_80 and newer; cuda and cuda-sim targets):
                      operands rounded to 10 fraction bits, f32 sums, as
                      PyTorch's allow_tf32. Off by default
  --bench N           time N runs (1 to 1000000) after 3 warm-up runs;
                      print the median time, the bytes read and written
                      and GB/s (table and JSON); on the cuda target the
                      launches are timed with CUDA events, beside a device
                      copy of the same bytes (the bandwidth ceiling)
  --sim-order ORDER   cuda-sim: the order the simulator runs each block's
                      threads in between synchronizations: forward (the
                      default), reverse, shuffle or shuffle:SEED (a new
                      permutation each round), or stagger (forward, and a
                      cluster's blocks as far apart as they can run). A
                      kernel without races gives the same results in every
                      order
  --threads T         threads for the row loops (0: OpenMP's default; at
                      most 1024; cpu target)
  --vector-width W    vector lanes of the inner loops: 1, 2, 4, ..., 64
                      (0: the host's; cpu target)
  --no-fuse           run the function op by op as written; by default
                      decomposed chains are first raised to nf ops and each
                      producer is fused with its pointwise neighbours
                      (nf-fuse-pipeline; --fuse says so explicitly)
  --no-buffer-cache   give each large intermediate buffer back to malloc
                      when the function frees it, instead of keeping it for
                      the next run (jit::CPUOptions::cacheBuffers; cpu
                      target)
  --bf16-from-f32     convert f32 input files to bf16 where the function
                      takes bf16 (otherwise bf16 is read as ml_dtypes saves
                      it, descr '<V2')
  --gpu-target        print this machine's GPU as a GPU target (the text
                      --cuda-arch and nf-translate take: its architecture,
                      SMs, registers, shared memory, L2) and exit
  --help              this text
)";

static int fail(const llvm::Twine &message) {
  llvm::errs() << "nf-run: error: " << message << "\n";
  return 1;
}

namespace {
/// The most --bench runs and --threads (OpenMP aborts on absurd thread
/// counts, and an unsigned count would wrap).
constexpr long long kMaxBenchRuns = 1000000;
constexpr long long kMaxThreads = 1024;

/// The command line. nf-run parses it itself: libLLVM registers global
/// options of its own (one is called "threads").
struct Arguments {
  std::string inputFile, entry, target = "cpu", cudaArch, simOrder;
  std::vector<std::string> inputs, outputs;
  unsigned bench = 0;
  int threads = 0;
  int64_t vectorWidth = 0;
  bool bf16FromF32 = false, fuse = true, noBufferCache = false, help = false,
       allowTf32 = false;
  bool printGpuTarget = false;
};
} // namespace

/// Parses argv; returns an error message, or "" on success.
static std::string parseArguments(int argc, char **argv, Arguments &args) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      args.help = true;
      continue;
    }
    if (!arg.starts_with("-")) {
      if (!args.inputFile.empty())
        return "more than one .mlir file: '" + args.inputFile + "' and '" +
               arg.str() + "'";
      args.inputFile = arg.str();
      continue;
    }
    llvm::StringRef name = arg.ltrim('-'), value;
    bool inlineValue = false;
    if (size_t eq = name.find('='); eq != llvm::StringRef::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inlineValue = true;
    }
    // Each flag and the value it sets.
    bool setTo = true;
    bool *flag = name == "fuse"              ? &args.fuse
                 : name == "no-fuse"         ? (setTo = false, &args.fuse)
                 : name == "bf16-from-f32"   ? &args.bf16FromF32
                 : name == "no-buffer-cache" ? &args.noBufferCache
                 : name == "allow-tf32"      ? &args.allowTf32
                 : name == "gpu-target"      ? &args.printGpuTarget
                                             : nullptr;
    if (flag) {
      if (inlineValue)
        return "--" + name.str() + " takes no value";
      *flag = setTo;
      continue;
    }
    static const char *withValue[] = {"entry",        "input",     "output",
                                      "target",       "bench",     "threads",
                                      "vector-width", "cuda-arch", "sim-order"};
    if (!llvm::is_contained(withValue, name))
      return "unknown option '" + arg.str() + "' (see --help)";
    if (!inlineValue) {
      if (i + 1 >= argc)
        return "--" + name.str() + " needs a value";
      value = argv[++i];
    }
    auto number = [&](auto &out, long long lo, long long hi) -> std::string {
      long long v;
      if (value.getAsInteger(10, v) || v < lo || v > hi)
        return "--" + name.str() + " needs an integer from " +
               std::to_string(lo) + " to " + std::to_string(hi) + ", got '" +
               value.str() + "'";
      out = v;
      return "";
    };
    std::string err;
    if (name == "entry")
      args.entry = value.str();
    else if (name == "input")
      args.inputs.push_back(value.str());
    else if (name == "output")
      args.outputs.push_back(value.str());
    else if (name == "target")
      args.target = value.str();
    else if (name == "cuda-arch")
      args.cudaArch = value.str();
    else if (name == "sim-order")
      args.simOrder = value.str();
    else if (name == "bench")
      err = number(args.bench, 1, kMaxBenchRuns);
    else if (name == "threads")
      err = number(args.threads, 0, kMaxThreads);
    else if ((err = number(args.vectorWidth, 0, 64)).empty() &&
             !llvm::isPowerOf2_64(args.vectorWidth) && args.vectorWidth != 0)
      err = "--vector-width needs 0 or a power of two up to 64, got '" +
            value.str() + "'";
    if (!err.empty())
      return err;
  }
  if (args.help || args.printGpuTarget)
    return "";
  if (args.inputFile.empty())
    return "no .mlir file given (see --help)";
  if (args.entry.empty())
    return "no --entry function given";
  return "";
}

/// Runs entry `args.entry` of the kernel package folder `args.inputFile`
/// (made by nf-package) with the runtime, as nf-package-run does.
static int runPackage(const Arguments &args) {
  runtime::PackageRunnerOptions options;
  if (args.target == "cuda")
    options.target = runtime::PackageTarget::CUDA;
  else if (args.target == "cuda-sim")
    options.target = runtime::PackageTarget::CUDASim;
  else
    return fail(args.inputFile + " is a kernel package, which runs on the "
                                 "cuda and cuda-sim targets (--target cuda)");
  // What the package's compilation fixed, or the cpu target alone reads.
  if (!args.cudaArch.empty())
    return fail("--cuda-arch does not apply to a kernel package: its "
                "kernels were generated when it was made (nf-package "
                "--cuda-arch)");
  if (!args.fuse)
    return fail("--no-fuse does not apply to a kernel package: it was "
                "fused or not when it was made (nf-package --no-fuse)");
  if (args.allowTf32)
    return fail("--allow-tf32 does not apply to a kernel package: its "
                "kernels were generated when it was made");
  if (args.threads != 0 || args.vectorWidth != 0 || args.noBufferCache)
    return fail("--threads, --vector-width and --no-buffer-cache apply to "
                "the cpu target only");
  if (!args.simOrder.empty())
    return fail("--sim-order does not apply to a kernel package (it runs "
                "in the runtime's simulator in its forward order)");
  std::string error;
  auto runner = runtime::PackageRunner::open(args.inputFile, options, error);
  if (!runner)
    return fail(error);
  runtime::PackageFileRun run;
  run.entry = args.entry;
  run.inputs = args.inputs;
  run.outputs = args.outputs;
  run.bench = args.bench;
  run.bf16FromF32 = args.bf16FromF32;
  std::string report;
  if (!runtime::runPackageOnFiles(*runner, run, report, error))
    return fail(error);
  llvm::outs() << report;
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  Arguments args;
  if (std::string err = parseArguments(argc, argv, args); !err.empty())
    return fail(err);
  if (args.help) {
    llvm::outs() << kUsage;
    return 0;
  }
  if (args.printGpuTarget) {
    // The GPU as the cuda target generates kernels for it.
    std::string error;
    runtime::CudaDeviceOptions deviceOptions;
    deviceOptions.cacheDirectory = "";
    auto device = runtime::CudaDevice::open(error, deviceOptions);
    if (!device)
      return fail("--gpu-target: the GPU cannot be used: " + error);
    llvm::outs() << device->gpuTarget().str() << "\n";
    return 0;
  }
  if (llvm::sys::fs::is_directory(args.inputFile))
    return runPackage(args);
  if (llvm::StringRef(args.inputFile).ends_with(".onnx"))
    return fail(args.inputFile +
                " is an ONNX model; nf-run reads MLIR: convert it first with "
                "'python -m normfuse.onnx " +
                args.inputFile + " -o MODEL.mlir' (docs/ONNX.md)");
  const std::string &entry = args.entry;
  const std::vector<std::string> &inputs = args.inputs, &outputs = args.outputs;
  const unsigned bench = args.bench;
  const int threads = args.threads;
  const std::string &target = args.target;

  jit::Options options;
  if (target == "cpu")
    options.target = jit::Target::CPU;
  else if (target == "cuda-sim")
    options.target = jit::Target::CUDASim;
  else if (target == "cuda")
    options.target = jit::Target::CUDA;
  else
    return fail("unknown target '" + target + "' (cpu, cuda or cuda-sim)");
  // Options of another target are refused by the JIT, with the reason.
  if (!args.cudaArch.empty())
    options.cuda.arch = args.cudaArch;
  options.cuda.allowTf32 = args.allowTf32;
  options.cpu.vectorWidth = args.vectorWidth;
  options.cpu.cacheBuffers = !args.noBufferCache;
  options.fuse = args.fuse;
  if (threads != 0 && options.target != jit::Target::CPU)
    return fail("--threads applies to the cpu target only");
  jit::RunOptions runOptions;
  runOptions.threads = threads;
  if (!args.simOrder.empty()) {
    if (options.target != jit::Target::CUDASim)
      return fail("--sim-order applies to the cuda-sim target only");
    std::string error;
    if (!jit::parseSimThreadOrder(args.simOrder, runOptions, error))
      return fail("--sim-order: " + error);
  }
  jit::JIT compiler(options);
  auto compiled = compiler.compileFile(args.inputFile, entry);
  if (!compiled)
    return fail(llvm::toString(compiled.takeError()));
  std::shared_ptr<jit::Kernel> kernel = *compiled;
  const jit::Signature &sig = kernel->getSignature();

  if (inputs.size() != sig.inputs.size())
    return fail("@" + entry + " takes " + llvm::Twine(sig.inputs.size()) +
                " inputs, got " + llvm::Twine(inputs.size()) +
                " --input files");
  if (outputs.size() > sig.outputs.size())
    return fail("@" + entry + " has " + llvm::Twine(sig.outputs.size()) +
                " results, got " + llvm::Twine(outputs.size()) +
                " --output files");

  std::vector<NpyArray> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto array = readNpy(inputs[i]);
    if (!array)
      return fail(llvm::toString(array.takeError()));
    const jit::TensorType &want = sig.inputs[i];
    if (args.bf16FromF32 && want.dtype == DType::BF16 &&
        array->dtype == DType::F32)
      *array = convertF32ToBF16(*array);
    if (array->dtype != want.dtype)
      return fail(inputs[i] + ": holds " + getDTypeName(array->dtype) +
                  " data; argument #" + llvm::Twine(i) + " of @" + entry +
                  " is " + want.str() +
                  (want.dtype == DType::BF16 && array->dtype == DType::F32
                       ? " (--bf16-from-f32 converts f32 files)"
                       : ""));
    bool fits = array->shape.size() == want.shape.size();
    for (size_t d = 0; fits && d < want.shape.size(); ++d)
      fits = want.shape[d] == jit::TensorType::kDynamic ||
             want.shape[d] == array->shape[d];
    if (!fits)
      return fail(inputs[i] + ": has shape " + formatShape(array->shape) +
                  "; argument #" + llvm::Twine(i) + " of @" + entry + " is " +
                  want.str());
    in.push_back(std::move(*array));
  }

  // With dynamic dimensions, the kernel for these input shapes says the
  // output shapes.
  if (!sig.hasStaticShapes()) {
    std::vector<std::vector<int64_t>> shapes;
    for (const NpyArray &a : in)
      shapes.push_back(a.shape);
    auto specialized = kernel->specialize(shapes);
    if (!specialized)
      return fail(llvm::toString(specialized.takeError()));
    kernel = *specialized;
  }

  // The results' sizes come from the IR (or the input shapes): checked for
  // overflow and against the machine's memory before anything is allocated.
  uint64_t resultBytes = 0;
  bool overflow = false;
  for (const jit::TensorType &t : kernel->getSignature().outputs) {
    uint64_t bytes = getDTypeSize(t.dtype);
    for (int64_t d : t.shape)
      bytes = llvm::SaturatingMultiply(bytes, uint64_t(d), &overflow);
    resultBytes = llvm::SaturatingAdd(resultBytes, bytes, &overflow);
  }
  uint64_t memory = runtime::physicalMemoryBytes();
  if (overflow || resultBytes > memory)
    return fail("the results of @" + entry + " take " +
                (overflow ? std::string("more than 2^64")
                          : std::to_string(resultBytes)) +
                " bytes, more than this machine's " + std::to_string(memory) +
                " bytes of memory");
  std::vector<NpyArray> out;
  for (const jit::TensorType &t : kernel->getSignature().outputs) {
    NpyArray a;
    a.dtype = t.dtype;
    a.shape = t.shape;
    int64_t n = 1;
    for (int64_t d : t.shape)
      n *= d;
    a.data.assign(n * getDTypeSize(t.dtype), 0);
    out.push_back(std::move(a));
  }
  std::vector<TensorRef> inRefs, outRefs;
  size_t bytes = 0;
  for (NpyArray &a : in) {
    inRefs.push_back(a.ref());
    bytes += a.data.size();
  }
  for (NpyArray &a : out) {
    outRefs.push_back(a.ref());
    bytes += a.data.size();
  }

  auto runOnce = [&]() { return kernel->run(inRefs, outRefs, runOptions); };
  if (auto err = runOnce())
    return fail(llvm::toString(std::move(err)));

  // On a GPU the launches alone are timed, with CUDA events.
  if (auto *cuda = dynamic_cast<jit::CudaKernel *>(kernel.get());
      cuda && bench > 0) {
    runtime::PlanTimings timings;
    if (auto err = cuda->time(inRefs, 3, bench, timings))
      return fail(llvm::toString(std::move(err)));
    llvm::outs() << "@" << entry << " on " << cuda->getDeviceDescription()
                 << "\n"
                 << runtime::formatPlanTimings(entry, bytes, timings);
  } else if (bench > 0) {
    for (int i = 0; i < 3; ++i)
      if (auto err = runOnce())
        return fail(llvm::toString(std::move(err)));
    std::vector<double> seconds;
    for (unsigned i = 0; i < bench; ++i) {
      auto start = std::chrono::steady_clock::now();
      if (auto err = runOnce())
        return fail(llvm::toString(std::move(err)));
      auto stop = std::chrono::steady_clock::now();
      seconds.push_back(std::chrono::duration<double>(stop - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    double median = seconds[seconds.size() / 2];
    double gbps = bytes / median / 1e9;
    llvm::outs() << "@" << entry << " on " << compiler.getTargetDescription()
                 << ", threads "
                 << (threads ? std::to_string(threads) : std::string("default"))
                 << "\n";
    llvm::outs()
        << "  runs    median_ms       min_ms          bytes      GB/s\n";
    llvm::outs() << llvm::format("%6u %12.4f %12.4f %14zu %9.2f\n", bench,
                                 median * 1e3, seconds.front() * 1e3, bytes,
                                 gbps);
    jit::BufferCacheStats cache = jit::getBufferCacheStats();
    if (options.cpu.cacheBuffers)
      llvm::outs() << "  buffer cache: " << cache.reused << " reused, "
                   << cache.allocated << " allocated, " << cache.idleBlocks
                   << " idle blocks of " << cache.idleBytes << " bytes\n";
    llvm::outs() << llvm::format(
        "{\"entry\": \"%s\", \"runs\": %u, \"median_s\": %.9g, \"min_s\": "
        "%.9g, \"bytes\": %zu, \"gbps\": %.4f, \"threads\": %d, "
        "\"buffers_reused\": %llu, \"buffers_allocated\": %llu}\n",
        entry.c_str(), bench, median, seconds.front(), bytes, gbps, threads,
        (unsigned long long)cache.reused, (unsigned long long)cache.allocated);
  }

  if (auto err = writeNpyFiles(outputs, out))
    return fail(llvm::toString(std::move(err)));
  return 0;
}
