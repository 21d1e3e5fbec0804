//===- CudaSim.h - run printed CUDA kernels on the host CPU -----*- C++ -*-===//
//
// Part of normfuse. Compiles a printed .cu file with the host C++ compiler
// against the simulator header (lib/Runtime/Sim/nf_cuda_sim.h), loads the
// shared object and launches its kernels on the CPU, with checked and
// counted global memory accesses. Used where no GPU is present (CI). Errors
// are return values with messages; nothing here throws, aborts or exits.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_CUDASIM_H
#define NORMFUSE_RUNTIME_CUDASIM_H

#include "normfuse/Runtime/CudaSimABI.h"
#include "normfuse/Runtime/LaunchPlan.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace normfuse::runtime {

/// A grid or block shape.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// One device buffer of a launch (on the host, since nothing runs on a GPU).
struct SimBuffer {
  const void *base = nullptr;
  size_t size = 0;  ///< in bytes
  std::string name; ///< for messages; empty means "buffer #i"
  bool readOnly = false;
};

/// What a launch did, summed over its blocks.
struct SimStats {
  uint64_t bytesLoaded = 0, bytesStored = 0; ///< through nf_ldg / nf_stg
  uint64_t loads = 0, stores = 0;            ///< nf_ldg / nf_stg calls
  uint64_t barriers = 0; ///< completed __syncthreads(), counted per block
  uint64_t shuffles = 0; ///< completed warp operations, counted per warp
  uint64_t blocks = 0, threads = 0;
  /// The most global loads (nf_ldg calls) one thread made: how long a
  /// thread walks its data, which a finishing kernel should keep short.
  uint64_t maxThreadLoads = 0;
  /// Completed cluster barriers (nf_cluster_sync), counted per cluster,
  /// and stores into another block's shared memory (nf_cluster_st).
  uint64_t clusterBarriers = 0, clusterStores = 0;
};

/// The order in which a block's threads run between synchronizations
/// (and, with Stagger, the blocks that run together).
enum class SimOrder {
  Forward = NF_SIM_ORDER_FORWARD,
  Reverse = NF_SIM_ORDER_REVERSE,
  Shuffle = NF_SIM_ORDER_SHUFFLE,
  Stagger = NF_SIM_ORDER_STAGGER
};

struct SimCompileOptions {
  /// The compiler command, split at spaces ("ccache g++" works). Empty:
  /// $NF_SIM_CXX, else the C++ compiler this library was built with.
  std::string compiler;
  /// nf_cuda_sim.h. Empty: $NF_SIM_HEADER, else the NF_CUDA_SIM_HEADER macro
  /// this library was built with.
  std::string headerPath;
  /// The optimization flag. Empty: $NF_SIM_OPT (-O0 to -O3; -O0 compiles
  /// about three times faster and runs slower: for many small modules),
  /// else -O1.
  std::string optLevel;
  /// Added after the standard flags (e.g. "-Wall", "-Werror").
  std::vector<std::string> extraFlags;
  /// Keeps the temporary directory (its path is then in `keptDir`).
  bool keepTemps = false;
  /// Where the simulator header is kept precompiled (GCC and Clang; see
  /// docs/Runtime.md). Unset: $NF_SIM_PCH_DIR if set, else
  /// $XDG_CACHE_HOME/normfuse/sim-pch, else $HOME/.cache/normfuse/sim-pch.
  /// Empty: every module parses the header itself.
  std::optional<std::string> pchDirectory;
};

/// What SimModule::compile did in this process.
struct SimCompileStats {
  uint64_t modules = 0;            ///< modules compiled
  uint64_t headersPrecompiled = 0; ///< precompiled headers made
  uint64_t modulesWithPch = 0;     ///< modules compiled against one
  /// Compiles that failed against a precompiled header and passed without
  /// it (the entry is then made again on next use).
  uint64_t pchFallbacks = 0;
};

/// A printed .cu file compiled and loaded as a shared object.
class SimModule {
public:
  /// Compiles `cudaSource`; on failure returns null and sets `error` (with
  /// the compiler's output when it failed).
  static std::unique_ptr<SimModule>
  compile(const std::string &cudaSource, std::string &error,
          const SimCompileOptions &options = {});
  /// What compile() did in this process, summed over all calls.
  static SimCompileStats compileStats();
  /// Loads an already compiled module.
  static std::unique_ptr<SimModule> load(const std::string &sharedObject,
                                         std::string &error);
  ~SimModule();
  SimModule(const SimModule &) = delete;
  SimModule &operator=(const SimModule &) = delete;

  /// The kernels registered with NF_SIM_ENTRY, in definition order.
  std::vector<std::string> getKernelNames() const;
  /// The parameter count of `kernel`, or -1 if there is no such kernel.
  int getNumParams(const std::string &kernel) const;

  /// Runs `kernel` to completion. `args` points at each argument (as
  /// cuLaunchKernel's kernelParams); `numArgs` >= 0 is checked against the
  /// kernel's parameter count. Launches are serialized process-wide.
  bool launch(const std::string &kernel, Dim3 grid, Dim3 block,
              size_t dynamicSmemBytes, void **args,
              const std::vector<SimBuffer> &buffers, SimStats *stats,
              std::string &error, SimOrder order = SimOrder::Forward,
              unsigned seed = 0, int numArgs = -1);

  /// The kept temporary directory (SimCompileOptions::keepTemps), if any.
  const std::string &getKeptDir() const { return keptDir; }

private:
  SimModule() = default;

  void *handle = nullptr;
  nf_sim_launch_fn launchFn = nullptr;
  nf_sim_num_kernels_fn numKernelsFn = nullptr;
  nf_sim_kernel_name_fn kernelNameFn = nullptr;
  nf_sim_kernel_num_params_fn numParamsFn = nullptr;
  std::string keptDir;
};

/// Runs `plan` with `module`'s kernels on host buffers, as a GPU runs it on
/// device buffers: the inputs are copied into fresh "device" buffers
/// (aligned as cudaMalloc's), the outputs and temporaries filled with 0xff
/// bytes (NaN, so an element no kernel writes shows), the steps run in
/// order and the outputs copied back. The buffers must hold
/// plan.bufferBytes each, inputs first, each block's threads in `order`
/// (`seed`: a shuffle's). `stats` (may be null) gets what each launch did.
/// False with `error` naming the failing kernel.
bool runPlanInSimulator(SimModule &module, const LaunchPlan &plan,
                        const std::vector<const void *> &inputs,
                        const std::vector<void *> &outputs, std::string &error,
                        SimOrder order = SimOrder::Forward,
                        std::vector<SimStats> *stats = nullptr,
                        unsigned seed = 1);

} // namespace normfuse::runtime

#endif // NORMFUSE_RUNTIME_CUDASIM_H
