//===- CudaDevice.cpp - printed kernels compiled and run on a GPU ---------===//
//
// Part of normfuse. See CudaDevice.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/CudaDevice.h"
#include "normfuse/Runtime/Sha256.h"

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
  if (!cu.check(cu.cuDeviceGet(&d->device_, options.ordinal), "cuDeviceGet",
                error) ||
      !cu.check(cu.cuDeviceGetAttribute(
                    &major, cu::kAttributeComputeCapabilityMajor, d->device_),
                "cuDeviceGetAttribute", error) ||
      !cu.check(cu.cuDeviceGetAttribute(
                    &minor, cu::kAttributeComputeCapabilityMinor, d->device_),
                "cuDeviceGetAttribute", error) ||
      !cu.check(cu.cuDeviceGetAttribute(&d->multiprocessors_,
                                        cu::kAttributeMultiprocessorCount,
                                        d->device_),
                "cuDeviceGetAttribute", error) ||
      !cu.check(cu.cuDeviceGetName(name, sizeof(name) - 1, d->device_),
                "cuDeviceGetName", error))
    return nullptr;
  d->computeCapability_ = major * 10 + minor;
  d->name_ = name;
  d->nvrtc_ = Nvrtc::open(error, options.nvrtc);
  if (!d->nvrtc_)
    return nullptr;
  d->target_ = d->nvrtc_->targetFor(d->computeCapability_, error);
  if (d->target_.empty())
    return nullptr;
  if (!cu.check(cu.cuDevicePrimaryCtxRetain(&d->context_, d->device_),
                "cuDevicePrimaryCtxRetain", error))
    return nullptr;
  d->cache_ = std::make_unique<KernelCache>(
      options.cacheDirectory == "default" ? KernelCache::defaultDirectory()
                                          : options.cacheDirectory);
  if (!d->makeCurrent(error))
    return nullptr;
  return d;
}

CudaDevice::~CudaDevice() {
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
  if (!compiled || !makeCurrent(error))
    return nullptr;
  // PTX must end with its terminating zero for cuModuleLoadData.
  if (target_.rfind("compute_", 0) == 0 &&
      (binary.empty() || binary.back() != '\0'))
    binary.push_back('\0');
  cu::Module module = nullptr;
  if (!driver_->check(driver_->cuModuleLoadData(&module, binary.data()),
                      "cuModuleLoadData", error))
    return nullptr;
  return std::unique_ptr<CudaModule>(
      new CudaModule(shared_from_this(), module));
}

CudaModule::~CudaModule() {
  if (module_)
    device_->driver().cuModuleUnload(module_);
}

bool CudaModule::function(const std::string &name, cu::Function &fn,
                          std::string &error) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = functions_.find(name);
  if (it != functions_.end()) {
    fn = it->second;
    return true;
  }
  CudaDriver &cu = device_->driver();
  if (!cu.check(cu.cuModuleGetFunction(&fn, module_, name.c_str()),
                "cuModuleGetFunction", error)) {
    error += " (kernel " + name + ")";
    return false;
  }
  functions_[name] = fn;
  return true;
}

namespace {
/// Device allocations freed when the run ends, however it ends.
struct DeviceMemory {
  CudaDriver &cu;
  std::vector<cu::DevicePtr> pointers;
  explicit DeviceMemory(CudaDriver &cu) : cu(cu) {}
  ~DeviceMemory() {
    for (cu::DevicePtr p : pointers)
      cu.cuMemFree(p);
  }
  bool allocate(size_t bytes, cu::DevicePtr &p, std::string &error) {
    // cuMemAlloc refuses 0 bytes: an empty buffer gets one.
    if (!cu.check(cu.cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc", error)) {
      error += " (" + std::to_string(bytes) + " bytes)";
      return false;
    }
    pointers.push_back(p);
    return true;
  }
};
} // namespace

bool CudaModule::run(const LaunchPlan &plan,
                     const std::vector<const void *> &inputs,
                     const std::vector<void *> &outputs, std::string &error,
                     cu::Stream stream) {
  CudaDriver &cu = device_->driver();
  if (inputs.size() != plan.numInputs ||
      inputs.size() + outputs.size() != plan.bufferBytes.size()) {
    error = "the launch plan has " + std::to_string(plan.numInputs) +
            " inputs and " +
            std::to_string(plan.bufferBytes.size() - plan.numInputs) +
            " outputs, the call " + std::to_string(inputs.size()) + " and " +
            std::to_string(outputs.size());
    return false;
  }
  if (!device_->makeCurrent(error))
    return false;
  DeviceMemory memory(cu);
  std::vector<cu::DevicePtr> buffers(plan.bufferBytes.size()),
      temporaries(plan.temporaryBytes.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    size_t bytes = plan.bufferBytes[i];
    if (!memory.allocate(bytes, buffers[i], error))
      return false;
    if (bytes == 0)
      continue;
    bool ok =
        i < inputs.size()
            ? cu.check(cu.cuMemcpyHtoD(buffers[i], inputs[i], bytes),
                       "cuMemcpyHtoD", error)
            : cu.check(cu.cuMemsetD8Async(buffers[i], 0xff, bytes, stream),
                       "cuMemsetD8Async", error);
    if (!ok)
      return false;
  }
  for (size_t i = 0; i < temporaries.size(); ++i)
    if (!memory.allocate(plan.temporaryBytes[i], temporaries[i], error) ||
        (plan.temporaryBytes[i] != 0 &&
         !cu.check(cu.cuMemsetD8Async(temporaries[i], 0xff,
                                      plan.temporaryBytes[i], stream),
                   "cuMemsetD8Async", error)))
      return false;

  auto pointerOf = [&](const LaunchArg &arg) {
    return arg.kind == LaunchArg::Kind::Buffer ? buffers[arg.index]
                                               : temporaries[arg.index];
  };
  for (const Step &step : plan.steps) {
    if (step.kind == Step::Kind::Copy) {
      if (!cu.check(cu.cuMemcpyDtoDAsync(pointerOf(step.copy.to),
                                         pointerOf(step.copy.from),
                                         step.copy.bytes, stream),
                    "cuMemcpyDtoDAsync", error))
        return false;
      continue;
    }
    const Launch &launch = step.launch;
    cu::Function fn = nullptr;
    if (!function(launch.kernel, fn, error))
      return false;
    // Each argument's value, then a pointer to it (cuLaunchKernel's form).
    std::vector<cu::DevicePtr> pointers(launch.args.size());
    std::vector<long long> integers(launch.args.size());
    std::vector<void *> params(launch.args.size());
    for (size_t a = 0; a < launch.args.size(); ++a) {
      const LaunchArg &arg = launch.args[a];
      if (arg.kind == LaunchArg::Kind::Integer) {
        integers[a] = arg.value;
        params[a] = &integers[a];
      } else {
        pointers[a] = pointerOf(arg);
        params[a] = &pointers[a];
      }
    }
    if (!cu.check(cu.cuLaunchKernel(fn, launch.grid[0], launch.grid[1],
                                    launch.grid[2], launch.block[0],
                                    launch.block[1], launch.block[2],
                                    unsigned(launch.sharedMemoryBytes), stream,
                                    params.data(), nullptr),
                  "cuLaunchKernel", error)) {
      error += " (kernel " + launch.kernel + ")";
      return false;
    }
  }
  if (!cu.check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize", error))
    return false;
  for (size_t o = 0; o < outputs.size(); ++o) {
    size_t i = inputs.size() + o;
    if (plan.bufferBytes[i] != 0 &&
        !cu.check(cu.cuMemcpyDtoH(outputs[o], buffers[i], plan.bufferBytes[i]),
                  "cuMemcpyDtoH", error))
      return false;
  }
  return true;
}
