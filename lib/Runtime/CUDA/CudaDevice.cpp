//===- CudaDevice.cpp - printed kernels compiled and run on a GPU ---------===//
//
// Part of normfuse. See CudaDevice.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/CudaDevice.h"
#include "normfuse/Runtime/Sha256.h"

#include <cstdlib>

using namespace normfuse::runtime;

std::shared_ptr<CudaDevice> CudaDevice::open(std::string &error,
                                             const CudaDeviceOptions &options) {
  std::shared_ptr<CudaDevice> d(new CudaDevice());
  d->driver_ = CudaDriver::open(error, options.driver);
  if (!d->driver_)
    return nullptr;
  CudaDriver &cu = *d->driver_;
  if (options.ordinal < 0 || options.ordinal >= cu.deviceCount()) {
    error =
        "no CUDA device " + std::to_string(options.ordinal) + " (there " +
        (cu.deviceCount() == 1 ? "is 1"
                               : "are " + std::to_string(cu.deviceCount())) +
        ")";
    return nullptr;
  }
  int major = 0, minor = 0;
  char name[256] = {0};
  GpuTarget::DeviceFigures figures;
  int clusterLaunch = 0;
  auto attribute = [&](int *value, int which) {
    return cu.check(cu.cuDeviceGetAttribute(value, which, d->device_),
                    "cuDeviceGetAttribute", error);
  };
  if (!cu.check(cu.cuDeviceGet(&d->device_, options.ordinal), "cuDeviceGet",
                error) ||
      !attribute(&major, cu::kAttributeComputeCapabilityMajor) ||
      !attribute(&minor, cu::kAttributeComputeCapabilityMinor) ||
      !attribute(&figures.multiprocessors, cu::kAttributeMultiprocessorCount) ||
      !attribute(&figures.registersPerMultiprocessor,
                 cu::kAttributeMaxRegistersPerMultiprocessor) ||
      !attribute(&figures.sharedBytesPerMultiprocessor,
                 cu::kAttributeMaxSharedMemoryPerMultiprocessor) ||
      !attribute(&figures.sharedBytesPerBlockOptIn,
                 cu::kAttributeMaxSharedMemoryPerBlockOptin) ||
      !attribute(&figures.maxThreadsPerMultiprocessor,
                 cu::kAttributeMaxThreadsPerMultiprocessor) ||
      !attribute(&figures.maxBlocksPerMultiprocessor,
                 cu::kAttributeMaxBlocksPerMultiprocessor) ||
      !attribute(&figures.l2Bytes, cu::kAttributeL2CacheSize) ||
      !attribute(&clusterLaunch, cu::kAttributeClusterLaunch) ||
      !cu.check(cu.cuDeviceGetName(name, sizeof(name) - 1, d->device_),
                "cuDeviceGetName", error))
    return nullptr;
  d->computeCapability_ = major * 10 + minor;
  d->multiprocessors_ = figures.multiprocessors;
  d->name_ = name;
  d->nvrtc_ = Nvrtc::open(error, options.nvrtc);
  if (!d->nvrtc_)
    return nullptr;
  d->target_ = d->nvrtc_->targetFor(d->computeCapability_, error);
  if (d->target_.empty())
    return nullptr;
  figures.computeCapability = d->computeCapability_;
  figures.clusterLaunch = clusterLaunch != 0;
  std::optional<GpuTarget> target =
      GpuTarget::fromDevice(figures, d->target_, error);
  if (!target) {
    error = std::string(name) + ": " + error;
    return nullptr;
  }
  d->gpuTarget_ = std::move(*target);
  if (!cu.check(cu.cuDevicePrimaryCtxRetain(&d->context_, d->device_),
                "cuDevicePrimaryCtxRetain", error))
    return nullptr;
  d->cache_ = std::make_unique<KernelCache>(
      options.cacheDirectory == "default" ? KernelCache::defaultDirectory()
                                          : options.cacheDirectory);
  if (!d->makeCurrent(error))
    return nullptr;
  // The temporaries' pool: one of normfuse's own that keeps up to
  // kPoolKeptBytes of what is freed to it across synchronizations. The
  // device's default pool gives everything back at each one, so every
  // call after a synchronization mapped its temporaries afresh, perhaps at
  // addresses a CUDA graph of the plan cannot replay (the likely cause of
  // the 0.12-0.49 ms of host time the H200 run measured a call and a
  // synchronization of plans with temporaries beyond their kernels; not
  // yet measured with the pool). Where the driver cannot make the pool,
  // the default one serves.
  cu::MemPoolProps props;
  props.locationId = options.ordinal;
  uint64_t kept = kPoolKeptBytes;
  if (cu.cuMemPoolCreate(&d->pool_, &props) != cu::kSuccess)
    d->pool_ = nullptr;
  else if (cu.cuMemPoolSetAttribute(d->pool_, cu::kMemPoolAttrReleaseThreshold,
                                    &kept) != cu::kSuccess) {
    cu.cuMemPoolDestroy(d->pool_);
    d->pool_ = nullptr;
  }
  return d;
}

CudaDevice::~CudaDevice() {
  // (Memory still allocated from the pool keeps it until it is freed.)
  if (pool_ && driver_)
    driver_->cuMemPoolDestroy(pool_);
  if (context_ && driver_)
    driver_->cuDevicePrimaryCtxRelease(device_);
}

bool CudaDevice::makeCurrent(std::string &error) {
  return driver_->check(driver_->cuCtxSetCurrent(context_), "cuCtxSetCurrent",
                        error);
}

std::unique_ptr<CudaModule> CudaDevice::load(const std::string &source,
                                             std::string &error) {
  KernelKey key{sha256Hex(source), target_, nvrtc_->version(),
                nvrtc_->optionsFor(target_)};
  std::string binary;
  bool compiled = cache_->get(
      key,
      [&](std::string &out, std::string &err) {
        return nvrtc_->compile(source, target_, out, err);
      },
      binary, error);
  if (!compiled)
    return nullptr;
  return loadImage(std::move(binary), target_.rfind("compute_", 0) == 0, error);
}

std::unique_ptr<CudaModule> CudaDevice::loadImage(std::string image, bool isPtx,
                                                  std::string &error) {
  if (!makeCurrent(error))
    return nullptr;
  // PTX must end with its terminating zero for cuModuleLoadData.
  if (isPtx && (image.empty() || image.back() != '\0'))
    image.push_back('\0');
  if (image.empty()) {
    error = "an empty cubin";
    return nullptr;
  }
  cu::Module module = nullptr;
  if (!driver_->check(driver_->cuModuleLoadData(&module, image.data()),
                      "cuModuleLoadData", error))
    return nullptr;
  return std::unique_ptr<CudaModule>(
      new CudaModule(shared_from_this(), module));
}

bool CudaDevice::checkDeviceRange(cu::DevicePtr pointer, size_t bytes,
                                  std::string &error) {
  if (bytes == 0)
    return true;
  if (!makeCurrent(error))
    return false;
  unsigned type = 0;
  cu::DevicePtr start = 0;
  size_t size = 0;
  if (driver_->cuPointerGetAttribute(&type, cu::kPointerAttributeMemoryType,
                                     pointer) != cu::kSuccess ||
      (type != cu::kMemoryTypeDevice && type != cu::kMemoryTypeUnified)) {
    error = "is not device memory of this process (a host pointer, or one "
            "already freed)";
    return false;
  }
  if (!driver_->check(driver_->cuPointerGetAttribute(
                          &start, cu::kPointerAttributeRangeStartAddr, pointer),
                      "cuPointerGetAttribute", error) ||
      !driver_->check(driver_->cuPointerGetAttribute(
                          &size, cu::kPointerAttributeRangeSize, pointer),
                      "cuPointerGetAttribute", error))
    return false;
  if (pointer - start > size || bytes > size - (pointer - start)) {
    error = "needs " + std::to_string(bytes) + " bytes, and its allocation " +
            "holds " + std::to_string(size - (pointer - start)) + " from there";
    return false;
  }
  return true;
}

CudaModule::~CudaModule() {
  CudaDriver &cu = device_->driver();
  for (auto &[plan, graph] : graphs_)
    if (graph.exec)
      cu.cuGraphExecDestroy(graph.exec);
  if (captureStream_)
    cu.cuStreamDestroy(captureStream_);
  for (auto &[key, constant] : constants_)
    device_->driver().cuMemFree(constant.device);
  if (module_)
    device_->driver().cuModuleUnload(module_);
}

bool CudaModule::constantsOf(const LaunchPlan &plan,
                             std::vector<cu::DevicePtr> &out,
                             std::string &error) {
  std::lock_guard<std::mutex> lock(mutex_);
  CudaDriver &cu = device_->driver();
  out.clear();
  for (const auto &bytes : plan.constants) {
    auto it = constants_.find(bytes.get());
    if (it == constants_.end()) {
      DeviceConstant c{bytes, 0};
      // cuMemAlloc refuses 0 bytes: an empty constant gets one.
      if (!cu.check(
              cu.cuMemAlloc(&c.device, bytes->empty() ? 1 : bytes->size()),
              "cuMemAlloc", error)) {
        error += " (a constant of " + std::to_string(bytes->size()) + " bytes)";
        return false;
      }
      if (!bytes->empty() &&
          !cu.check(cu.cuMemcpyHtoD(c.device, bytes->data(), bytes->size()),
                    "cuMemcpyHtoD", error)) {
        cu.cuMemFree(c.device);
        return false;
      }
      it = constants_.emplace(bytes.get(), std::move(c)).first;
    }
    out.push_back(it->second.device);
  }
  return true;
}

bool CudaModule::function(const std::string &name, size_t dynamicSharedBytes,
                          cu::Function &fn, std::string &error) {
  std::lock_guard<std::mutex> lock(mutex_);
  CudaDriver &cu = device_->driver();
  auto it = functions_.find(name);
  if (it != functions_.end()) {
    fn = it->second;
  } else {
    if (!cu.check(cu.cuModuleGetFunction(&fn, module_, name.c_str()),
                  "cuModuleGetFunction", error)) {
      error += " (kernel " + name + ")";
      return false;
    }
    functions_[name] = fn;
  }
  // Past 48 KiB, a kernel takes dynamic shared memory only once allowed.
  constexpr size_t kDefaultLimit = 48 * 1024;
  size_t &allowed = sharedAllowed_[name];
  if (dynamicSharedBytes > kDefaultLimit && dynamicSharedBytes > allowed) {
    if (!cu.check(cu.cuFuncSetAttribute(
                      fn, cu::kFuncAttributeMaxDynamicSharedSizeBytes,
                      int(dynamicSharedBytes)),
                  "cuFuncSetAttribute", error)) {
      error += " (kernel " + name + " takes " +
               std::to_string(dynamicSharedBytes) +
               " bytes of shared memory, more than this device has)";
      return false;
    }
    allowed = dynamicSharedBytes;
  }
  return true;
}

bool CudaModule::checkRegisters(const LaunchPlan &plan, std::string &error) {
  for (const Step &step : plan.steps) {
    if (step.kind != Step::Kind::Launch || !step.launch.launchRegisters ||
        step.launch.emptyGrid())
      continue;
    cu::Function fn = nullptr;
    if (!function(step.launch.kernel, step.launch.sharedMemoryBytes, fn,
                  error) ||
        !checkRegisters(step.launch, fn, error))
      return false;
  }
  return true;
}

bool CudaModule::checkRegisters(const Launch &launch, cu::Function fn,
                                std::string &error) {
  int registers = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = registers_.find(launch.kernel);
    if (it != registers_.end()) {
      registers = it->second;
    } else {
      CudaDriver &cu = device_->driver();
      if (!cu.check(
              cu.cuFuncGetAttribute(&registers, cu::kFuncAttributeNumRegs, fn),
              "cuFuncGetAttribute", error)) {
        error += " (kernel " + launch.kernel + ")";
        return false;
      }
      registers_[launch.kernel] = registers;
    }
  }
  return checkCompiledRegisters(launch, registers, error);
}

bool CudaModule::resolve(LaunchPlan &plan, std::string &error) {
  CudaDriver &cu = device_->driver();
  std::string failure;
  bool ok = resolveResidencies(
      plan,
      [&](const Residency &r) -> int64_t {
        cu::Function fn = nullptr;
        int blocks = 0;
        if (!failure.empty() ||
            !function(r.kernel, r.sharedMemoryBytes, fn, failure))
          return r.planned;
        if (r.clusterBlocks > 1) {
          // Whole clusters: fewer than the blocks over the cluster's size
          // where the device's GPCs have odd counts of SMs.
          cu::LaunchConfig config;
          config.gridDimX = unsigned(r.clusterBlocks);
          config.blockDimX = r.block;
          config.sharedMemBytes = unsigned(r.sharedMemoryBytes);
          int clusters = 0;
          if (!cu.check(cu.cuOccupancyMaxActiveClusters(&clusters, fn, &config),
                        "cuOccupancyMaxActiveClusters", failure)) {
            failure += " (kernel " + r.kernel + ")";
            return r.planned;
          }
          return int64_t(clusters) * r.clusterBlocks;
        }
        if (!cu.check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                          &blocks, fn, int(r.block), r.sharedMemoryBytes),
                      "cuOccupancyMaxActiveBlocksPerMultiprocessor", failure)) {
          failure += " (kernel " + r.kernel + ")";
          return r.planned;
        }
        return int64_t(blocks) * device_->gpuTarget().multiprocessors;
      },
      error);
  if (!failure.empty())
    return error = failure, false;
  return ok;
}

namespace {
/// Encodes `spec` for the buffer of `bytes` bytes at `base` with
/// cuTensorMapEncodeTiled (tiled, no interleave, 128-byte L2 promotion,
/// zeros outside the tensor).
bool encodeTensorMap(CudaDriver &cu, const TensorMapSpec &spec,
                     cu::DevicePtr base, size_t bytes, TensorMapBytes &out,
                     std::string &error) {
  if (!spec.check(uintptr_t(base), bytes, error))
    return false;
  // CUtensorMapDataType: FLOAT16 6, FLOAT32 7, BFLOAT16 9; the swizzle's
  // enumerators count 32, 64 and 128 bytes as 1 to 3.
  int type = spec.element == TensorMapSpec::Element::F16    ? 6
             : spec.element == TensorMapSpec::Element::BF16 ? 9
                                                            : 7;
  int swizzle = spec.swizzle == 128  ? 3
                : spec.swizzle == 64 ? 2
                : spec.swizzle == 32 ? 1
                                     : 0;
  unsigned long long dims[5], strides[4];
  unsigned box[5], elementStrides[5] = {1, 1, 1, 1, 1};
  for (int d = 0; d < spec.rank; ++d) {
    dims[d] = spec.dims[d];
    box[d] = spec.box[d];
    if (d)
      strides[d - 1] = spec.strides[d - 1];
  }
  constexpr int kInterleaveNone = 0, kL2Promotion128B = 2, kOobZero = 0;
  return cu.check(
      cu.cuTensorMapEncodeTiled(out.bytes, type, unsigned(spec.rank),
                                reinterpret_cast<void *>(uintptr_t(base)), dims,
                                strides, box, elementStrides, kInterleaveNone,
                                swizzle, kL2Promotion128B, kOobZero),
      "cuTensorMapEncodeTiled", error);
}

/// Fills the plan's zeroed temporaries with zero bytes, in stream order.
bool zeroTemporaries(CudaDriver &cu, const LaunchPlan &plan,
                     const std::vector<cu::DevicePtr> &temporaries,
                     cu::Stream stream, std::string &error) {
  for (int64_t t : plan.zeroedTemporaries)
    if (size_t bytes = plan.temporaryBytes[size_t(t)];
        bytes &&
        !cu.check(cu.cuMemsetD8Async(temporaries[size_t(t)], 0, bytes, stream),
                  "cuMemsetD8Async", error))
      return false;
  return true;
}

/// Device allocations freed when a call ends, however it ends: in stream
/// order for those made so (from the device's pool, CudaDevice::memoryPool,
/// which keeps them for the next call), at once for the others.
struct DeviceMemory {
  CudaDriver &cu;
  cu::Stream stream;
  /// Where stream-ordered memory comes from (null: the default pool).
  cu::MemPool pool;
  std::vector<cu::DevicePtr> pointers, streamOrdered;
  DeviceMemory(CudaDriver &cu, cu::Stream stream, cu::MemPool pool)
      : cu(cu), stream(stream), pool(pool) {}
  ~DeviceMemory() {
    for (cu::DevicePtr p : streamOrdered)
      cu.cuMemFreeAsync(p, stream);
    for (cu::DevicePtr p : pointers)
      cu.cuMemFree(p);
  }
  bool allocate(size_t bytes, cu::DevicePtr &p, bool inStreamOrder,
                std::string &error) {
    // cuMemAlloc refuses 0 bytes: an empty buffer gets one.
    size_t size = bytes ? bytes : 1;
    bool ok =
        !inStreamOrder ? cu.check(cu.cuMemAlloc(&p, size), "cuMemAlloc", error)
        : pool ? cu.check(cu.cuMemAllocFromPoolAsync(&p, size, pool, stream),
                          "cuMemAllocFromPoolAsync", error)
               : cu.check(cu.cuMemAllocAsync(&p, size, stream),
                          "cuMemAllocAsync", error);
    if (!ok) {
      error += " (" + std::to_string(bytes) + " bytes)";
      return false;
    }
    (inStreamOrder ? streamOrdered : pointers).push_back(p);
    return true;
  }
};

/// A pair of CUDA events, destroyed with it.
struct EventPair {
  CudaDriver &cu;
  cu::Event start = nullptr, stop = nullptr;
  explicit EventPair(CudaDriver &cu) : cu(cu) {}
  ~EventPair() {
    if (start)
      cu.cuEventDestroy(start);
    if (stop)
      cu.cuEventDestroy(stop);
  }
  bool create(std::string &error) {
    return cu.check(cu.cuEventCreate(&start, 0), "cuEventCreate", error) &&
           cu.check(cu.cuEventCreate(&stop, 0), "cuEventCreate", error);
  }
  /// Milliseconds between the events around `work` on `stream`.
  template <typename Work>
  bool time(cu::Stream stream, Work work, double &ms, std::string &error) {
    float elapsed = 0;
    if (!cu.check(cu.cuEventRecord(start, stream), "cuEventRecord", error) ||
        !work() ||
        !cu.check(cu.cuEventRecord(stop, stream), "cuEventRecord", error) ||
        !cu.check(cu.cuEventSynchronize(stop), "cuEventSynchronize", error) ||
        !cu.check(cu.cuEventElapsedTime(&elapsed, start, stop),
                  "cuEventElapsedTime", error))
      return false;
    ms = elapsed;
    return true;
  }
};
} // namespace

static std::string countMismatch(const LaunchPlan &plan, size_t buffers) {
  return "the launch plan has " + std::to_string(plan.numInputs) +
         " inputs and " +
         std::to_string(plan.bufferBytes.size() - plan.numInputs) +
         " outputs, the call " + std::to_string(buffers) + " buffers";
}

bool CudaModule::enqueue(const LaunchPlan &plan,
                         const std::vector<cu::DevicePtr> &buffers,
                         const std::vector<cu::DevicePtr> &temporaries,
                         const std::vector<cu::DevicePtr> &constants,
                         cu::Stream stream, std::string &error) {
  CudaDriver &cu = device_->driver();
  auto steps = [&] {
    return enqueueSteps(plan, buffers, temporaries, constants, stream, error);
  };
  std::unique_lock<std::mutex> lock(graphMutex_);
  if (graphsOff_.empty()) {
    const char *env = std::getenv("NF_CUDA_GRAPHS");
    if (env && std::string(env) == "0")
      graphsOff_ = "NF_CUDA_GRAPHS=0";
  }
  // A caller's capture (a framework's CUDA graph) takes the launches
  // themselves.
  int capturing = cu::kStreamCaptureStatusNone;
  if (graphsOff_.empty() &&
      cu.cuStreamIsCapturing(stream, &capturing) != cu::kSuccess)
    capturing = -1; // an unknown stream: its launches say why
  if (!graphsOff_.empty() || capturing != cu::kStreamCaptureStatusNone) {
    lock.unlock();
    return steps();
  }
  std::vector<cu::DevicePtr> pointers(buffers);
  pointers.insert(pointers.end(), temporaries.begin(), temporaries.end());
  pointers.insert(pointers.end(), constants.begin(), constants.end());
  PlanGraph &graph = graphs_[&plan];
  if (graph.exec && graph.pointers == pointers) {
    if (!cu.check(cu.cuGraphLaunch(graph.exec, stream), "cuGraphLaunch", error))
      return false;
    ++graphLaunches_;
    return true;
  }
  if (graph.seen != pointers) {
    graph.seen = pointers;
    lock.unlock();
    return steps();
  }
  // The second call in a row with these pointers: capture the steps (on a
  // stream of this module's: capturing runs nothing), then launch the
  // graph on the caller's stream. A capture that fails turns graphs off
  // for the module and runs the steps as they are.
  cu::Graph captured = nullptr;
  cu::GraphExec exec = nullptr;
  std::string why;
  bool ok =
      (captureStream_ ||
       cu.check(cu.cuStreamCreate(&captureStream_, cu::kStreamNonBlocking),
                "cuStreamCreate", why)) &&
      cu.check(cu.cuStreamBeginCapture(captureStream_,
                                       cu::kStreamCaptureModeRelaxed),
               "cuStreamBeginCapture", why);
  if (ok) {
    bool enqueued = enqueueSteps(plan, buffers, temporaries, constants,
                                 captureStream_, why);
    bool ended = cu.check(cu.cuStreamEndCapture(captureStream_, &captured),
                          "cuStreamEndCapture", why);
    ok = enqueued && ended &&
         cu.check(cu.cuGraphInstantiateWithFlags(&exec, captured, 0),
                  "cuGraphInstantiateWithFlags", why);
    if (captured)
      cu.cuGraphDestroy(captured);
  }
  if (!ok) {
    graphsOff_ = "capturing a CUDA graph failed: " + why;
    lock.unlock();
    return steps();
  }
  if (graph.exec)
    cu.cuGraphExecDestroy(graph.exec);
  graph.exec = exec;
  graph.pointers = pointers;
  if (!cu.check(cu.cuGraphLaunch(graph.exec, stream), "cuGraphLaunch", error))
    return false;
  ++graphLaunches_;
  return true;
}

bool CudaModule::enqueueSteps(const LaunchPlan &plan,
                              const std::vector<cu::DevicePtr> &buffers,
                              const std::vector<cu::DevicePtr> &temporaries,
                              const std::vector<cu::DevicePtr> &constants,
                              cu::Stream stream, std::string &error) {
  CudaDriver &cu = device_->driver();
  auto pointerOf = [&](const LaunchArg &arg) {
    return arg.kind == LaunchArg::Kind::Buffer     ? buffers[arg.index]
           : arg.kind == LaunchArg::Kind::Constant ? constants[arg.index]
                                                   : temporaries[arg.index];
  };
  for (const Step &step : plan.steps) {
    if (step.kind == Step::Kind::Copy) {
      if (step.copy.bytes &&
          !cu.check(cu.cuMemcpyDtoDAsync(pointerOf(step.copy.to),
                                         pointerOf(step.copy.from),
                                         step.copy.bytes, stream),
                    "cuMemcpyDtoDAsync", error))
        return false;
      continue;
    }
    const Launch &launch = step.launch;
    if (launch.emptyGrid())
      continue;
    cu::Function fn = nullptr;
    if (!function(launch.kernel, launch.sharedMemoryBytes, fn, error))
      return false;
    // Each argument's value, then a pointer to it (cuLaunchKernel's form).
    std::vector<cu::DevicePtr> pointers;
    std::vector<int64_t> integers;
    std::vector<TensorMapBytes> maps;
    std::vector<void *> params;
    auto encode = [&](const LaunchArg &arg, cu::DevicePtr base,
                      TensorMapBytes &out, std::string &why) {
      return encodeTensorMap(cu, arg.map, base, bytesOf(plan, arg), out, why);
    };
    if (!makeLaunchParams(launch, pointerOf, encode, pointers, integers, maps,
                          params, error)) {
      error += " (kernel " + launch.kernel + ")";
      return false;
    }
    // A kernel that synchronizes its grid needs every block resident: a
    // cooperative launch refuses a grid the device cannot hold.
    bool launched =
        launch.cooperative
            ? cu.check(cu.cuLaunchCooperativeKernel(
                           fn, launch.grid[0], launch.grid[1], launch.grid[2],
                           launch.block[0], launch.block[1], launch.block[2],
                           unsigned(launch.sharedMemoryBytes), stream,
                           params.data()),
                       "cuLaunchCooperativeKernel", error)
            : cu.check(cu.cuLaunchKernel(fn, launch.grid[0], launch.grid[1],
                                         launch.grid[2], launch.block[0],
                                         launch.block[1], launch.block[2],
                                         unsigned(launch.sharedMemoryBytes),
                                         stream, params.data(), nullptr),
                       "cuLaunchKernel", error);
    if (!launched) {
      error += " (kernel " + launch.kernel + ")";
      return false;
    }
  }
  return true;
}

bool CudaModule::run(const LaunchPlan &plan,
                     const std::vector<const void *> &inputs,
                     const std::vector<void *> &outputs, std::string &error,
                     cu::Stream stream) {
  if (inputs.size() != plan.numInputs) {
    error = countMismatch(plan, inputs.size() + outputs.size());
    return false;
  }
  std::vector<CallBuffer> buffers;
  for (const void *p : inputs)
    buffers.push_back(CallBuffer::onHost(p));
  for (void *p : outputs)
    buffers.push_back(CallBuffer::onHost(p));
  return run(plan, buffers, error, stream);
}

bool CudaModule::run(const LaunchPlan &plan,
                     const std::vector<CallBuffer> &call, std::string &error,
                     cu::Stream stream) {
  CudaDriver &cu = device_->driver();
  if (call.size() != plan.bufferBytes.size()) {
    error = countMismatch(plan, call.size());
    return false;
  }
  if (!device_->makeCurrent(error) || !checkRegisters(plan, error))
    return false;
  std::vector<cu::DevicePtr> constants;
  if (!constantsOf(plan, constants, error))
    return false;
  bool anyHost = false;
  {
    // Freed in stream order when this scope ends, after the last launch.
    DeviceMemory memory(cu, stream, device_->memoryPool());
    std::vector<cu::DevicePtr> buffers(call.size()),
        temporaries(plan.temporaryBytes.size());
    for (size_t i = 0; i < call.size(); ++i) {
      size_t bytes = plan.bufferBytes[i];
      if (!call[i].host) {
        buffers[i] = call[i].device;
        continue;
      }
      anyHost = true;
      if (!memory.allocate(bytes, buffers[i], /*inStreamOrder=*/true, error))
        return false;
      if (bytes == 0)
        continue;
      bool ok =
          i < plan.numInputs
              ? cu.check(cu.cuMemcpyHtoDAsync(buffers[i], call[i].host, bytes,
                                              stream),
                         "cuMemcpyHtoDAsync", error)
              : cu.check(cu.cuMemsetD8Async(buffers[i], 0xff, bytes, stream),
                         "cuMemsetD8Async", error);
      if (!ok)
        return false;
    }
    const char *poison = std::getenv("NF_CUDA_POISON");
    bool poisonTemporaries = poison && std::string(poison) == "1";
    for (size_t i = 0; i < temporaries.size(); ++i)
      if (!memory.allocate(plan.temporaryBytes[i], temporaries[i],
                           /*inStreamOrder=*/true, error) ||
          (poisonTemporaries && plan.temporaryBytes[i] != 0 &&
           !cu.check(cu.cuMemsetD8Async(temporaries[i], 0xff,
                                        plan.temporaryBytes[i], stream),
                     "cuMemsetD8Async", error)))
        return false;
    if (!zeroTemporaries(cu, plan, temporaries, stream, error))
      return false;
    if (!enqueue(plan, buffers, temporaries, constants, stream, error))
      return false;
    for (size_t i = plan.numInputs; i < call.size(); ++i)
      if (call[i].host && plan.bufferBytes[i] != 0 &&
          !cu.check(cu.cuMemcpyDtoHAsync(call[i].host, buffers[i],
                                         plan.bufferBytes[i], stream),
                    "cuMemcpyDtoHAsync", error))
        return false;
  }
  if (anyHost &&
      !cu.check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize", error))
    return false;
  return true;
}

bool CudaModule::time(const LaunchPlan &plan,
                      const std::vector<const void *> &inputs, unsigned warmup,
                      unsigned iterations, PlanTimings &timings,
                      std::string &error) {
  CudaDriver &cu = device_->driver();
  if (inputs.size() != plan.numInputs) {
    error = countMismatch(plan, inputs.size());
    return false;
  }
  if (!device_->makeCurrent(error) || !checkRegisters(plan, error))
    return false;
  std::vector<cu::DevicePtr> constants;
  if (!constantsOf(plan, constants, error))
    return false;
  cu::Stream stream = nullptr;
  DeviceMemory memory(cu, stream, device_->memoryPool());
  std::vector<cu::DevicePtr> buffers(plan.bufferBytes.size()),
      temporaries(plan.temporaryBytes.size());
  size_t totalBytes = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    size_t bytes = plan.bufferBytes[i];
    totalBytes += bytes;
    if (!memory.allocate(bytes, buffers[i], false, error) ||
        (bytes && i < inputs.size() &&
         !cu.check(cu.cuMemcpyHtoD(buffers[i], inputs[i], bytes),
                   "cuMemcpyHtoD", error)))
      return false;
  }
  for (size_t i = 0; i < temporaries.size(); ++i)
    if (!memory.allocate(plan.temporaryBytes[i], temporaries[i], false, error))
      return false;
  // Once: a grid barrier's counter stays a multiple of the grid's blocks
  // from one run to the next.
  if (!zeroTemporaries(cu, plan, temporaries, stream, error))
    return false;
  // The copy's source and destination: half the bytes each.
  size_t copyBytes = totalBytes / 2;
  cu::DevicePtr copyFrom = 0, copyTo = 0;
  if (!memory.allocate(copyBytes, copyFrom, false, error) ||
      !memory.allocate(copyBytes, copyTo, false, error))
    return false;
  EventPair events(cu);
  if (!events.create(error))
    return false;
  auto runOnce = [&] {
    return enqueue(plan, buffers, temporaries, constants, stream, error);
  };
  auto copyOnce = [&] {
    return copyBytes == 0 ||
           cu.check(cu.cuMemcpyDtoDAsync(copyTo, copyFrom, copyBytes, stream),
                    "cuMemcpyDtoDAsync", error);
  };
  for (unsigned i = 0; i < warmup; ++i)
    if (!runOnce() || !copyOnce())
      return false;
  timings = {};
  for (unsigned i = 0; i < iterations; ++i) {
    double run = 0, copy = 0;
    if (!events.time(stream, runOnce, run, error) ||
        !events.time(stream, copyOnce, copy, error))
      return false;
    timings.runs.push_back(run);
    timings.copies.push_back(copy);
  }
  return cu.check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize", error);
}
