//===- CudaDevice.h - printed kernels compiled and run on a GPU -*- C++ -*-===//
//
// Part of normfuse. A GPU ready to run the CUDA that normfuse prints: the
// driver (CudaDriver.h), the device's primary context, NVRTC (Nvrtc.h) and
// the kernel cache (KernelCache.h). `load` compiles a translation unit for
// the device (a cubin, or PTX for a device NVRTC does not know) through the
// cache and loads it; a module runs a LaunchPlan on host buffers. Errors
// are return values with messages; nothing here throws, aborts or exits.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_CUDADEVICE_H
#define NORMFUSE_RUNTIME_CUDADEVICE_H

#include "normfuse/Runtime/CudaDriver.h"
#include "normfuse/Runtime/GpuTarget.h"
#include "normfuse/Runtime/KernelCache.h"
#include "normfuse/Runtime/LaunchPlan.h"
#include "normfuse/Runtime/Nvrtc.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace normfuse::runtime {

struct CudaDeviceOptions {
  int ordinal = 0;
  CudaDriverOptions driver;
  NvrtcOptions nvrtc;
  /// The kernel cache's folder; "default" for KernelCache's default, empty
  /// for memory only.
  std::string cacheDirectory = "default";
};

class CudaModule;

class CudaDevice : public std::enable_shared_from_this<CudaDevice> {
public:
  /// The device, or null with `error` naming why the CUDA target cannot
  /// run here (CudaDriver::open's causes, a bad ordinal, no NVRTC).
  static std::shared_ptr<CudaDevice>
  open(std::string &error, const CudaDeviceOptions &options = {});
  ~CudaDevice();
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  /// 90 for compute capability 9.0.
  int computeCapability() const { return computeCapability_; }
  const std::string &name() const { return name_; }
  int multiprocessors() const { return multiprocessors_; }
  /// What NVRTC builds for this device ("sm_90", or "compute_90").
  const std::string &target() const { return target_; }
  /// The device as code generation sees it: its own figures (SMs,
  /// registers, shared memory, L2) and `target()` as the architecture.
  const GpuTarget &gpuTarget() const { return gpuTarget_; }
  CudaDriver &driver() { return *driver_; }
  KernelCache &cache() { return *cache_; }
  /// The pool the temporaries of calls come from, in stream order (null:
  /// the device's default pool, where the driver could not make one).
  cu::MemPool memoryPool() const { return pool_; }
  /// What the pool keeps of the memory freed to it when a stream or the
  /// device synchronizes (the rest goes back to the device).
  static constexpr uint64_t kPoolKeptBytes = uint64_t(256) << 20;

  /// Makes the device's context current on the calling thread.
  bool makeCurrent(std::string &error);

  /// Compiles `source` for the device (or finds it in the cache) and loads
  /// it; null with NVRTC's log or the driver's message.
  std::unique_ptr<CudaModule> load(const std::string &source,
                                   std::string &error);
  /// Loads a compiled image: a cubin, or PTX (`isPtx`) that the driver
  /// compiles for the device; null with the driver's message.
  std::unique_ptr<CudaModule> loadImage(std::string image, bool isPtx,
                                        std::string &error);

  /// Whether [pointer, pointer + bytes) lies in one allocation of device
  /// (or managed) memory of this process; false with `error` saying what
  /// it is instead.
  bool checkDeviceRange(cu::DevicePtr pointer, size_t bytes,
                        std::string &error);

private:
  CudaDevice() = default;
  std::unique_ptr<CudaDriver> driver_;
  std::unique_ptr<Nvrtc> nvrtc_;
  std::unique_ptr<KernelCache> cache_;
  cu::Device device_ = 0;
  cu::Context context_ = nullptr;
  cu::MemPool pool_ = nullptr;
  int computeCapability_ = 0, multiprocessors_ = 0;
  std::string name_, target_;
  GpuTarget gpuTarget_;
};

/// One buffer of a call: device memory used in place, or host memory
/// copied in (an input) or out (an output).
struct CallBuffer {
  /// Host memory; null when `device` is used.
  void *host = nullptr;
  cu::DevicePtr device = 0;
  static CallBuffer onHost(const void *p) { return {const_cast<void *>(p), 0}; }
  static CallBuffer onDevice(cu::DevicePtr p) { return {nullptr, p}; }
};

/// Device timings of a plan (CUDA events), in milliseconds.
struct PlanTimings {
  std::vector<double> runs;
  /// A device-to-device copy of half the bytes the plan's buffers hold
  /// (so that it reads and writes as many bytes as the plan's inputs and
  /// outputs): the bandwidth ceiling, measured the same way.
  std::vector<double> copies;
};

/// A loaded translation unit of kernels.
class CudaModule {
public:
  ~CudaModule();
  CudaModule(const CudaModule &) = delete;
  CudaModule &operator=(const CudaModule &) = delete;

  /// Runs `plan` on host buffers: copies `inputs` in, fills the outputs
  /// with 0xff bytes (NaN, so an unwritten element shows), launches the
  /// steps in order on `stream` (null: the default stream), copies
  /// `outputs` out and waits. The buffers must hold plan.bufferBytes each,
  /// inputs first.
  bool run(const LaunchPlan &plan, const std::vector<const void *> &inputs,
           const std::vector<void *> &outputs, std::string &error,
           cu::Stream stream = nullptr);

  /// Runs `plan` on `buffers` (inputs, then outputs; plan.bufferBytes
  /// each) on `stream`. Device buffers are used in place; host ones get a
  /// device copy (inputs copied in, outputs filled with 0xff bytes and
  /// copied out). Temporaries are allocated and freed in stream order
  /// (cuMemAllocAsync), and filled with 0xff bytes first only where
  /// $NF_CUDA_POISON is 1 (the device checks set it, so that a kernel that
  /// reads what none wrote shows; a launch a temporary otherwise). When
  /// every buffer is on the device the call returns once the work is
  /// enqueued; otherwise it waits for the stream.
  bool run(const LaunchPlan &plan, const std::vector<CallBuffer> &buffers,
           std::string &error, cu::Stream stream = nullptr);

  /// Times `plan` on device copies of host `inputs`: `warmup` runs, then
  /// `iterations` runs and as many copies of the same bytes, each between
  /// two CUDA events on one stream.
  bool time(const LaunchPlan &plan, const std::vector<const void *> &inputs,
            unsigned warmup, unsigned iterations, PlanTimings &timings,
            std::string &error);

  /// Resolves `plan`'s residencies (LaunchPlan.h) for this device: each
  /// kernel's blocks per multiprocessor from the driver's occupancy
  /// calculator (its registers, shared memory and block), times the
  /// device's multiprocessors. Once per plan, after loading.
  bool resolve(LaunchPlan &plan, std::string &error);

  CudaDevice &device() { return *device_; }

private:
  friend class CudaDevice;
  CudaModule(std::shared_ptr<CudaDevice> device, cu::Module module)
      : device_(std::move(device)), module_(module) {}
  /// Whether every kernel `plan` launches was compiled to the registers
  /// its setmaxnreg counts on (checkCompiledRegisters; the driver asked
  /// once a kernel): false, and why, before anything is launched.
  bool checkRegisters(const LaunchPlan &plan, std::string &error);
  bool checkRegisters(const Launch &launch, cu::Function fn,
                      std::string &error);
  /// Kernel `name`, allowed `dynamicSharedBytes` of dynamic shared memory
  /// (past the 48 KiB every kernel may take, once per kernel).
  bool function(const std::string &name, size_t dynamicSharedBytes,
                cu::Function &fn, std::string &error);
  /// Enqueues the plan's steps on `stream`: the first time a plan meets
  /// the same buffers, temporaries and constants twice in a row it is
  /// captured as a CUDA graph, replayed from then on while they stay the
  /// same (one launch instead of one per kernel); launch by launch
  /// otherwise, on a stream that is itself being captured, and where
  /// $NF_CUDA_GRAPHS is 0.
  bool enqueue(const LaunchPlan &plan,
               const std::vector<cu::DevicePtr> &buffers,
               const std::vector<cu::DevicePtr> &temporaries,
               const std::vector<cu::DevicePtr> &constants, cu::Stream stream,
               std::string &error);
  /// The device copies of the plan's constants, uploaded on first use and
  /// kept as long as the module.
  bool constantsOf(const LaunchPlan &plan, std::vector<cu::DevicePtr> &out,
                   std::string &error);

  std::shared_ptr<CudaDevice> device_;
  cu::Module module_ = nullptr;
  std::mutex mutex_;
  std::map<std::string, cu::Function> functions_;
  /// The dynamic shared memory each kernel has been allowed past 48 KiB.
  std::map<std::string, size_t> sharedAllowed_;
  /// The registers a thread each kernel was compiled to, as the driver
  /// says (asked once, for kernels that hand registers among warpgroups).
  std::map<std::string, int> registers_;
  /// By the address of the bytes; the pointer held keeps that address
  /// theirs.
  struct DeviceConstant {
    std::shared_ptr<const std::vector<uint8_t>> bytes;
    cu::DevicePtr device = 0;
  };
  std::map<const void *, DeviceConstant> constants_;

  /// Enqueues the plan's steps on `stream` one by one.
  bool enqueueSteps(const LaunchPlan &plan,
                    const std::vector<cu::DevicePtr> &buffers,
                    const std::vector<cu::DevicePtr> &temporaries,
                    const std::vector<cu::DevicePtr> &constants,
                    cu::Stream stream, std::string &error);
  /// A plan's steps captured as a CUDA graph, for the pointers it was
  /// captured with; and the pointers of the call before, which a second
  /// call with the same ones captures. Keyed by the plan's address: the
  /// plans a module runs live as long as it does (a JIT kernel's, a
  /// package entry's).
  struct PlanGraph {
    std::vector<cu::DevicePtr> pointers, seen;
    cu::GraphExec exec = nullptr;
  };
  std::mutex graphMutex_;
  std::map<const LaunchPlan *, PlanGraph> graphs_;
  /// The stream graphs are captured on (capturing runs nothing).
  cu::Stream captureStream_ = nullptr;
  /// Why graphs are off for this module ("" while they are on).
  std::string graphsOff_;
  size_t graphLaunches_ = 0;

public:
  /// How many calls ran as a replayed CUDA graph.
  size_t graphLaunches() {
    std::lock_guard<std::mutex> lock(graphMutex_);
    return graphLaunches_;
  }
  /// Why this module runs plans launch by launch ("": it replays graphs).
  std::string graphsOff() {
    std::lock_guard<std::mutex> lock(graphMutex_);
    return graphsOff_;
  }
};

} // namespace normfuse::runtime

#endif // NORMFUSE_RUNTIME_CUDADEVICE_H
