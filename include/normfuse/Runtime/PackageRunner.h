//===- PackageRunner.h - kernel packages run by the runtime alone -*- C++
//-*-===//
//
// Part of normfuse. Opens a kernel package folder (KernelPackage.h) and runs
// its entries on host buffers, on the machine's GPU or in the CUDA
// simulator, with nothing from MLIR or LLVM. On a GPU, an entry's kernels
// come from the package's cubin for the device's architecture when it has
// one, else from its newest PTX the device can run (the driver compiles
// it), else from its CUDA source compiled by NVRTC through the kernel
// cache. Every file the manifest names is read from the package folder and
// checked; errors are return values with messages.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_PACKAGERUNNER_H
#define NORMFUSE_RUNTIME_PACKAGERUNNER_H

#include "normfuse/Runtime/CudaDevice.h"
#include "normfuse/Runtime/CudaSim.h"
#include "normfuse/Runtime/KernelPackage.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace normfuse::runtime {

enum class PackageTarget {
  /// The machine's GPU.
  CUDA,
  /// The CUDA simulator on the host CPU (CudaSim.h).
  CUDASim,
};

/// "cuda", "cuda-sim".
const char *getPackageTargetName(PackageTarget target);

struct PackageRunnerOptions {
  PackageTarget target = PackageTarget::CUDA;
  /// The GPU (cuda).
  CudaDeviceOptions device;
  /// The simulator's compiler (cuda-sim).
  SimCompileOptions sim;
};

class PackageRunner {
public:
  /// Reads `directory`/manifest.json; for cuda also opens the GPU. Null
  /// with `error` naming the problem (a missing or invalid manifest, or
  /// why the GPU cannot be used).
  static std::unique_ptr<PackageRunner>
  open(const std::string &directory, const PackageRunnerOptions &options,
       std::string &error);

  const KernelPackage &package() const { return package_; }
  PackageTarget target() const { return options_.target; }
  /// Where entries run: "NVIDIA H100 80GB HBM3 (sm_90)", "the CUDA
  /// simulator".
  std::string description() const;
  /// How `entry`'s kernels were loaded once it has run: "cubin sm_90",
  /// "PTX compute_90 (compiled by the driver)", "CUDA source compiled by
  /// NVRTC for sm_90", "CUDA source compiled for the simulator".
  std::string loadedFrom(const std::string &entry) const;

  /// Runs `entry` on host buffers (its inputs, then its outputs, of the
  /// sizes its plan gives). Loads the entry's kernels on first use.
  bool run(const std::string &entry, const std::vector<const void *> &inputs,
           const std::vector<void *> &outputs, std::string &error);

  /// Times `entry` with CUDA events (CudaModule::time); cuda only.
  bool time(const std::string &entry, const std::vector<const void *> &inputs,
            unsigned warmup, unsigned iterations, PlanTimings &timings,
            std::string &error);

private:
  PackageRunner() = default;
  struct Loaded {
    std::unique_ptr<CudaModule> cuda;
    std::unique_ptr<SimModule> sim;
    std::string from;
    /// The entry's plan, its grids resolved for the device (the simulator
    /// runs it as planned).
    LaunchPlan plan;
  };
  /// The entry called `name` with its kernels loaded.
  bool load(const std::string &name, const PackageEntry *&entry,
            Loaded *&loaded, std::string &error);
  bool readFile(const std::string &file, std::string &bytes,
                std::string &error) const;

  std::string directory_;
  PackageRunnerOptions options_;
  KernelPackage package_;
  std::shared_ptr<CudaDevice> device_;
  std::map<std::string, Loaded> loaded_;
};

} // namespace normfuse::runtime

#endif // NORMFUSE_RUNTIME_PACKAGERUNNER_H
