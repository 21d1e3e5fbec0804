//===- CudaDriver.cpp - the CUDA driver API through dlopen ----------------===//
//
// Part of normfuse. See CudaDriver.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/CudaDriver.h"
#include "SymbolBinder.h"

#include <cstdlib>
#include <dlfcn.h>

using namespace normfuse::runtime;

namespace {

/// "12.4" from 12040.
std::string versionString(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

} // namespace

std::unique_ptr<CudaDriver> CudaDriver::open(std::string &error,
                                             const CudaDriverOptions &options) {
  std::string library = options.library;
  if (library.empty()) {
    const char *env = std::getenv("NF_CUDA_DRIVER");
    library = env && *env ? env : "libcuda.so.1";
  }
  void *handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = ::dlerror();
    error = "no NVIDIA driver: " + library + " could not be loaded (" +
            (why ? why : "unknown reason") +
            "); the CUDA target needs an NVIDIA GPU and its driver";
    return nullptr;
  }
  std::unique_ptr<CudaDriver> d(new CudaDriver());
  d->handle_ = handle;
  d->library_ = library;

  // Every entry point, or the driver predates what normfuse uses.
  SymbolBinder binder(handle);
  auto bind = [&](auto &fn, const char *name) { binder.bind(fn, name); };

  bind(d->cuGetErrorName, "cuGetErrorName");
  bind(d->cuGetErrorString, "cuGetErrorString");
  bind(d->cuInit, "cuInit");
  bind(d->cuDriverGetVersion, "cuDriverGetVersion");
  bind(d->cuDeviceGetCount, "cuDeviceGetCount");
  bind(d->cuDeviceGet, "cuDeviceGet");
  bind(d->cuDeviceGetAttribute, "cuDeviceGetAttribute");
  bind(d->cuDeviceGetName, "cuDeviceGetName");
  bind(d->cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(d->cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  bind(d->cuCtxSetCurrent, "cuCtxSetCurrent");
  bind(d->cuCtxSynchronize, "cuCtxSynchronize");
  bind(d->cuModuleLoadData, "cuModuleLoadData");
  bind(d->cuModuleUnload, "cuModuleUnload");
  bind(d->cuModuleGetFunction, "cuModuleGetFunction");
  bind(d->cuFuncGetAttribute, "cuFuncGetAttribute");
  bind(d->cuFuncSetAttribute, "cuFuncSetAttribute");
  bind(d->cuOccupancyMaxActiveBlocksPerMultiprocessor,
       "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  bind(d->cuOccupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters");
  bind(d->cuLaunchKernel, "cuLaunchKernel");
  bind(d->cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel");
  bind(d->cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
  bind(d->cuMemAlloc, "cuMemAlloc_v2");
  bind(d->cuMemFree, "cuMemFree_v2");
  bind(d->cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  bind(d->cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  bind(d->cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  bind(d->cuMemsetD8Async, "cuMemsetD8Async");
  bind(d->cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  bind(d->cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  bind(d->cuMemAllocAsync, "cuMemAllocAsync");
  bind(d->cuMemPoolCreate, "cuMemPoolCreate");
  bind(d->cuMemPoolDestroy, "cuMemPoolDestroy");
  bind(d->cuMemPoolSetAttribute, "cuMemPoolSetAttribute");
  bind(d->cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync");
  bind(d->cuMemFreeAsync, "cuMemFreeAsync");
  bind(d->cuPointerGetAttribute, "cuPointerGetAttribute");
  bind(d->cuStreamSynchronize, "cuStreamSynchronize");
  bind(d->cuStreamCreate, "cuStreamCreate");
  bind(d->cuStreamDestroy, "cuStreamDestroy_v2");
  bind(d->cuStreamBeginCapture, "cuStreamBeginCapture_v2");
  bind(d->cuStreamEndCapture, "cuStreamEndCapture");
  bind(d->cuStreamIsCapturing, "cuStreamIsCapturing");
  bind(d->cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
  bind(d->cuGraphLaunch, "cuGraphLaunch");
  bind(d->cuGraphExecDestroy, "cuGraphExecDestroy");
  bind(d->cuGraphDestroy, "cuGraphDestroy");
  bind(d->cuEventCreate, "cuEventCreate");
  bind(d->cuEventRecord, "cuEventRecord");
  bind(d->cuEventSynchronize, "cuEventSynchronize");
  bind(d->cuEventElapsedTime, "cuEventElapsedTime");
  bind(d->cuEventDestroy, "cuEventDestroy_v2");
  if (!binder.missing().empty()) {
    error = "the NVIDIA driver in " + library + " is too old: it lacks " +
            binder.missing() + " (normfuse needs the driver of CUDA " +
            versionString(kMinimumDriverVersion) + " or newer)";
    return nullptr;
  }

  cu::Result init = d->cuInit(0);
  if (init == cu::kErrorStubLibrary) {
    error = "the CUDA driver library " + library +
            " is the toolkit's stub, not a driver (CUDA_ERROR_STUB_LIBRARY): "
            "install the NVIDIA driver, or take the toolkit's stubs folder "
            "out of the library path";
    return nullptr;
  }
  if (init == cu::kErrorInsufficientDriver) {
    error = "the NVIDIA driver in " + library +
            " is too old for this CUDA runtime "
            "(CUDA_ERROR_INSUFFICIENT_DRIVER)";
    return nullptr;
  }
  if (init == cu::kErrorNoDevice) {
    error = "no CUDA device: the NVIDIA driver is loaded but sees no GPU "
            "(CUDA_ERROR_NO_DEVICE)";
    return nullptr;
  }
  if (!d->check(init, "cuInit", error) ||
      !d->check(d->cuDriverGetVersion(&d->version_), "cuDriverGetVersion",
                error))
    return nullptr;
  if (d->version_ < kMinimumDriverVersion) {
    error = "the NVIDIA driver in " + library +
            " is too old: it supports CUDA " + versionString(d->version_) +
            ", normfuse needs " + versionString(kMinimumDriverVersion) +
            " or newer";
    return nullptr;
  }
  if (!d->check(d->cuDeviceGetCount(&d->deviceCount_), "cuDeviceGetCount",
                error))
    return nullptr;
  if (d->deviceCount_ == 0) {
    error = "no CUDA device: the NVIDIA driver is loaded but sees no GPU";
    return nullptr;
  }
  return d;
}

CudaDriver::~CudaDriver() {
  if (handle_)
    ::dlclose(handle_);
}

std::string CudaDriver::describe(const char *call, cu::Result result) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName && cuGetErrorName(result, &name) != cu::kSuccess)
    name = nullptr;
  if (cuGetErrorString && cuGetErrorString(result, &text) != cu::kSuccess)
    text = nullptr;
  std::string s = std::string(call) + " failed: " +
                  (name ? name : "CUDA error " + std::to_string(result));
  if (text)
    s += std::string(" (") + text + ")";
  return s;
}

bool CudaDriver::check(cu::Result result, const char *call,
                       std::string &error) const {
  if (result == cu::kSuccess)
    return true;
  error = describe(call, result);
  return false;
}
