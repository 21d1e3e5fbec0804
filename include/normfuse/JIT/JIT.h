//===- JIT.h - compile and run nf functions on the host ---------*- C++ -*-===//
//
// Part of normfuse. The host-facing JIT: hand it MLIR text (or a file) and a
// function name, get a Kernel that runs on host buffers. Compilation goes
// through the nf-cpu-pipeline and LLVM's ORC JIT for the host CPU's own
// features, and is cached by (IR hash, function, options, target; the
// argument and result types are part of the IR): the same request returns
// the same Kernel.
//
// A function with dynamic dimensions (`tensor<?x768xf32>`) gives a Kernel
// that compiles on call: each new set of input shapes specializes the
// function to static shapes (nf-specialize-shapes), compiles it and caches
// that kernel by (IR hash, function, input shapes, options, target);
// `specialize` returns it, and its signature says the result shapes.
//
// Every wrong request or call returns an llvm::Error with a message: IR that
// does not parse or verify, an unknown function, a signature the JIT does
// not support, a wrong number of buffers, a wrong dtype or shape (also:
// inputs whose shapes disagree with each other), a buffer that is not
// contiguous. A rejected call writes nothing. A JIT and its Kernels may be
// used from several threads at once.
//
// Example:
//   normfuse::jit::JIT jit;
//   auto kernel = jit.compile(irText, "layer_norm");
//   if (!kernel) { report(kernel.takeError()); ... }
//   llvm::Error err = (*kernel)->run({x, scale, bias}, {y, mean, rstd});
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_JIT_JIT_H
#define NORMFUSE_JIT_JIT_H

#include "normfuse/Runtime/GpuTarget.h"
#include "normfuse/Support/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace normfuse::jit {

/// The type of one argument or result of a compiled function.
struct TensorType {
  /// The size of a dynamic dimension (`?` in the IR) in `shape`.
  static constexpr int64_t kDynamic = -1;
  DType dtype;
  std::vector<int64_t> shape;
  /// "tensor<4x8xf32>", "tensor<?x8xf32>"
  std::string str() const;
  bool hasStaticShape() const;
};

/// What a Kernel takes (the function's arguments) and writes (its results).
struct Signature {
  std::vector<TensorType> inputs;
  std::vector<TensorType> outputs;
  /// Whether no input or output has a dynamic dimension.
  bool hasStaticShapes() const;
};

/// Where a Kernel runs.
enum class Target {
  /// The host CPU: the nf-cpu-pipeline and LLVM's ORC JIT.
  CPU,
  /// The CUDA back end's kernels, printed as CUDA C++ and run on the host
  /// CPU by normfuse's CUDA simulator (normfuse/JIT/CudaSimKernel.h): slow,
  /// for checking the CUDA kernels where no GPU is present.
  CUDASim,
  /// The CUDA back end's kernels on the machine's GPU, compiled by NVRTC
  /// for its architecture through the kernel cache
  /// (normfuse/JIT/CudaKernel.h). Compiling fails with the reason where
  /// the GPU cannot be used (no driver, no device, ...).
  CUDA,
};

/// "cpu", "cuda-sim", "cuda".
const char *getTargetName(Target target);

/// Options of the cpu target alone.
struct CPUOptions {
  /// Lanes of the inner vector loops: 0 picks the host's (16 with AVX-512,
  /// 8 with AVX, 4 otherwise), or a power of two up to 64.
  int64_t vectorWidth = 0;
  /// Run row loops on several threads (OpenMP).
  bool parallel = true;
  /// Keep the large buffers (128 KiB and up) a kernel allocates for its
  /// intermediates when it frees them, and reuse them in later calls (of
  /// any kernel compiled with this option), instead of handing them back
  /// to malloc: glibc gives large blocks fresh pages from the system, whose
  /// page faults and zeroing can cost a multi-kernel function more than
  /// some of its kernels. What is kept is bounded by setBufferCacheLimit
  /// and freed by releaseBufferCache, or when the last JIT is destroyed.
  bool cacheBuffers = true;
};

/// Options of the CUDA targets (cuda-sim and cuda) alone.
struct CUDAOptions {
  /// The GPU target CUDA kernels are generated for (cuda-sim; the cuda
  /// target generates them for the device it opens, with the device's own
  /// figures): sm_XY, compute_XY or a part (h100-pcie), optionally with
  /// :key=value figures (normfuse/Runtime/GpuTarget.h).
  std::string arch = runtime::kDefaultGpuTarget;
  /// The row-norm schedule of CUDA kernels: "auto" (the schedule layer's
  /// choice), or "warp-rows", "block-row-registers", "block-row-streaming",
  /// "split-row", "channels-last-groups", "channels-last-one-kernel",
  /// "cluster-row" to force one, sized for tests (small shapes reach every
  /// path), or any of them with ":full" ("split-row:full") at the sizes the
  /// schedule layer gives that kind (comparing schedules on a GPU).
  std::string rowNormSchedule = "auto";
  /// f32 matmuls and convolutions on tensor cores as tf32 (sm_80 and
  /// newer; PyTorch's allow_tf32): each operand element rounded to 10
  /// fraction bits, products summed in f32. Off (the default), f32
  /// products keep f32 precision.
  bool allowTf32 = false;
  /// Functions with dynamic dimensions: lowered once as they are, the
  /// kernels taking their sizes as arguments (what nf-opt's
  /// --nf-cuda-pipeline makes of such a function), each call's launch plan
  /// read off that lowering for the call's shapes. Off (the default), each
  /// new set of shapes specializes the function first: kernels of constant
  /// sizes, which index faster.
  bool shapeGenericKernels = false;
};

struct Options {
  /// Where kernels run.
  Target target = Target::CPU;
  /// Run nf-fuse-pipeline first (the default): decomposed chains (TOSA,
  /// arith/math on tensors) are raised to nf ops and each producer is fused
  /// with its pointwise neighbours, so the function runs as fewer, fused
  /// kernels. Off, the function runs op by op as written.
  bool fuse = true;
  /// Read by the cpu target only: any other target refuses to compile when
  /// they differ from their defaults.
  CPUOptions cpu;
  /// Read by the cuda-sim and cuda targets only: the cpu target refuses to
  /// compile when they differ from their defaults.
  CUDAOptions cuda;
};

/// The state of the buffer cache (CPUOptions::cacheBuffers), shared by all
/// JITs of the process.
struct BufferCacheStats {
  /// Requests of 128 KiB and up served from the cache.
  uint64_t reused = 0;
  /// Requests of 128 KiB and up that found no idle block and went to
  /// malloc.
  uint64_t allocated = 0;
  /// Blocks kept for reuse now, and their bytes.
  size_t idleBlocks = 0;
  size_t idleBytes = 0;
  /// The most bytes kept idle (1 GiB unless set).
  size_t limitBytes = 0;
};
BufferCacheStats getBufferCacheStats();
/// Sets the most bytes the buffer cache keeps idle, freeing idle blocks
/// (largest first) down to it; 0 keeps none.
void setBufferCacheLimit(size_t bytes);
/// Frees every idle block of the buffer cache.
void releaseBufferCache();

/// cuda-sim: the order in which the simulator runs each block's threads
/// between two synchronizations: thread 0 first, the last first, a
/// permutation drawn anew each round (seeded), or forward with the blocks
/// that run together (a cluster's, a grid's that synchronizes) as far
/// apart as they can be. A kernel without races gives the same results
/// in every order, so running in several is a check for them.
enum class SimThreadOrder { Forward, Reverse, Shuffle, Stagger };

/// How one call of a Kernel runs.
struct RunOptions {
  /// cpu: > 0 sets the number of threads of the row loops for this call, 0
  /// keeps the OpenMP default. The CUDA targets ignore it.
  int threads = 0;
  /// cuda: the CUstream the call is enqueued on; null is the default
  /// stream. Any other target refuses a stream.
  void *cudaStream = nullptr;
  /// cuda-sim: the simulator's thread order, and Shuffle's seed. Any other
  /// target refuses an order but Forward.
  SimThreadOrder simOrder = SimThreadOrder::Forward;
  unsigned simSeed = 1;
};

/// Reads "forward", "reverse", "shuffle", "shuffle:SEED" or "stagger" into
/// `options`' simOrder and simSeed; false with `error` saying what is
/// accepted otherwise.
bool parseSimThreadOrder(llvm::StringRef text, RunOptions &options,
                         std::string &error);

/// A compiled function. Run it with input buffers matching
/// `getSignature().inputs` and output buffers matching `.outputs`; a
/// dynamic dimension matches any size, and the output shapes must be those
/// the input shapes give (see `specialize`).
class Kernel {
public:
  virtual ~Kernel();
  const Signature &getSignature() const { return signature; }
  const std::string &getName() const { return name; }
  /// Where this kernel runs.
  virtual Target getTarget() const { return Target::CPU; }
  /// Runs the kernel. Nothing is written when an error is returned. With
  /// dynamic dimensions, the first call with new input shapes compiles (see
  /// `specialize`). Buffers are host memory, except on the cuda target,
  /// which takes device memory (MemorySpace::CUDADevice) in place and
  /// copies host buffers in and out; a cuda call whose buffers are all on
  /// the device returns once its work is enqueued on the stream.
  virtual llvm::Error run(llvm::ArrayRef<TensorRef> inputs,
                          llvm::ArrayRef<TensorRef> outputs,
                          const RunOptions &options) const = 0;
  /// run with `threads` (RunOptions::threads) and the default stream.
  llvm::Error run(llvm::ArrayRef<TensorRef> inputs,
                  llvm::ArrayRef<TensorRef> outputs, int threads = 0) const {
    RunOptions options;
    options.threads = threads;
    return run(inputs, outputs, options);
  }
  /// The kernel for inputs of `inputShapes`: one with static shapes whose
  /// signature gives the output shapes. A kernel with static shapes returns
  /// itself (when the shapes are its own); one with dynamic dimensions
  /// returns the kernel compiled for these shapes (compiling it on first
  /// use, cached by its JIT, which such a kernel keeps alive). `outputShapes`
  /// may be empty; it is needed only for results whose shape the inputs do
  /// not determine (`nf.conv2d_backprop_*` with dynamic result dimensions).
  /// Inputs whose shapes disagree (with the function or with each other)
  /// are an error.
  virtual llvm::Expected<std::shared_ptr<Kernel>>
  specialize(llvm::ArrayRef<std::vector<int64_t>> inputShapes,
             llvm::ArrayRef<std::vector<int64_t>> outputShapes = {}) const = 0;

protected:
  Kernel(std::string name, Signature signature)
      : name(std::move(name)), signature(std::move(signature)) {}
  std::string name;
  Signature signature;
};

class JIT {
public:
  explicit JIT(Options options = {});
  ~JIT();
  JIT(const JIT &) = delete;
  JIT &operator=(const JIT &) = delete;

  /// Compiles `function` of the module in `irText` (or returns the cached
  /// kernel).
  llvm::Expected<std::shared_ptr<Kernel>> compile(llvm::StringRef irText,
                                                  llvm::StringRef function);
  /// Same, with the module read from `path`.
  llvm::Expected<std::shared_ptr<Kernel>> compileFile(llvm::StringRef path,
                                                      llvm::StringRef function);

  /// The host target kernels are compiled for, e.g.
  /// "x86_64-pc-linux-gnu skylake-avx512, vector width 16".
  std::string getTargetDescription() const;
  /// How many compiled kernels the cache holds: one per function with
  /// static shapes, one per set of input shapes of a function with dynamic
  /// dimensions.
  size_t getCacheSize() const;

private:
  struct Impl;
  /// Shared with the Kernels of functions with dynamic dimensions, which
  /// compile on call.
  std::shared_ptr<Impl> impl;
};

} // namespace normfuse::jit

#endif // NORMFUSE_JIT_JIT_H
