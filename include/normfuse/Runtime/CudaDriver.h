//===- CudaDriver.h - the CUDA driver API through dlopen --------*- C++ -*-===//
//
// Part of normfuse. The NVIDIA driver (libcuda.so.1) loaded at run time,
// never linked, so that normfuse builds and runs where there is no GPU and
// says why when the CUDA target cannot run: no driver, the toolkit's stub
// library in its place, a driver too old, no device. Every driver call's
// result is checked and turned into a message with the call's name and the
// driver's error name and text. Nothing here throws, aborts or exits.
//
// The declarations below are the driver's C ABI (cuda.h), restated so that
// the runtime needs no CUDA header to build.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_CUDADRIVER_H
#define NORMFUSE_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace normfuse::runtime {

namespace cu {
using Result = int;
using Device = int;
using DevicePtr = unsigned long long;
using Context = struct CUctx_st *;
using Module = struct CUmod_st *;
using Function = struct CUfunc_st *;
using Stream = struct CUstream_st *;
using Event = struct CUevent_st *;
using Graph = struct CUgraph_st *;
using GraphExec = struct CUgraphExec_st *;
using MemPool = struct CUmemPoolHandle_st *;

constexpr Result kSuccess = 0;
constexpr Result kErrorStubLibrary = 34;
constexpr Result kErrorInsufficientDriver = 35;
constexpr Result kErrorNoDevice = 100;
constexpr int kAttributeComputeCapabilityMajor = 75;
constexpr int kAttributeComputeCapabilityMinor = 76;
constexpr int kAttributeMultiprocessorCount = 16;
constexpr int kAttributeL2CacheSize = 38;
constexpr int kAttributeMaxThreadsPerMultiprocessor = 39;
constexpr int kAttributeMaxSharedMemoryPerMultiprocessor = 81;
constexpr int kAttributeMaxRegistersPerMultiprocessor = 82;
constexpr int kAttributeMaxSharedMemoryPerBlockOptin = 97;
constexpr int kAttributeMaxBlocksPerMultiprocessor = 106;
constexpr int kAttributeClusterLaunch = 120;
constexpr int kFuncAttributeNumRegs = 4;
constexpr int kFuncAttributeMaxDynamicSharedSizeBytes = 8;
constexpr int kPointerAttributeMemoryType = 2;
constexpr int kPointerAttributeRangeStartAddr = 11;
constexpr int kPointerAttributeRangeSize = 12;
constexpr unsigned kMemoryTypeDevice = 2;
constexpr unsigned kMemoryTypeUnified = 4;
constexpr unsigned kStreamNonBlocking = 1;
constexpr int kStreamCaptureModeRelaxed = 2;
constexpr int kStreamCaptureStatusNone = 0;
constexpr int kMemPoolAttrReleaseThreshold = 4;
constexpr int kMemAllocationTypePinned = 1;
constexpr int kMemLocationTypeDevice = 1;

/// CUmemPoolProps (88 bytes): a pool of device memory of one device, no
/// shareable handles; what follows the location zero (the defaults).
struct MemPoolProps {
  int allocType = kMemAllocationTypePinned;
  int handleTypes = 0;
  int locationType = kMemLocationTypeDevice;
  int locationId = 0;
  void *win32SecurityAttributes = nullptr;
  unsigned char rest[64] = {};
};
static_assert(sizeof(MemPoolProps) == 88, "CUmemPoolProps' size");

/// CUlaunchConfig: a launch's grid, block, dynamic shared memory and
/// stream, and its attributes (none here: a kernel's cluster size is in
/// the kernel).
struct LaunchConfig {
  unsigned gridDimX = 1, gridDimY = 1, gridDimZ = 1;
  unsigned blockDimX = 1, blockDimY = 1, blockDimZ = 1;
  unsigned sharedMemBytes = 0;
  Stream hStream = nullptr;
  void *attrs = nullptr;
  unsigned numAttrs = 0;
};
} // namespace cu

/// The oldest driver normfuse runs on: CUDA 12.0's (cuDriverGetVersion).
constexpr int kMinimumDriverVersion = 12000;

struct CudaDriverOptions {
  /// The library to load. Empty: $NF_CUDA_DRIVER, else "libcuda.so.1".
  std::string library;
};

class CudaDriver {
public:
  /// Loads and initializes the driver; null with `error` naming the cause
  /// (starting "no NVIDIA driver", "the CUDA driver library ... is the
  /// toolkit's stub", "the NVIDIA driver ... is too old" or "no CUDA
  /// device") when the CUDA target cannot run here.
  static std::unique_ptr<CudaDriver>
  open(std::string &error, const CudaDriverOptions &options = {});
  ~CudaDriver();
  CudaDriver(const CudaDriver &) = delete;
  CudaDriver &operator=(const CudaDriver &) = delete;

  /// The library that was loaded and the driver's CUDA version (12040 for
  /// 12.4).
  const std::string &library() const { return library_; }
  int version() const { return version_; }
  int deviceCount() const { return deviceCount_; }

  /// "cuXxx failed: CUDA_ERROR_NAME (text)" for a failed call.
  std::string describe(const char *call, cu::Result result) const;
  /// `result` of `call` as a success, or false with `error` set.
  bool check(cu::Result result, const char *call, std::string &error) const;

  // The driver's entry points (the _v2 ones where the ABI has them).
  cu::Result (*cuInit)(unsigned) = nullptr;
  cu::Result (*cuDriverGetVersion)(int *) = nullptr;
  cu::Result (*cuDeviceGetCount)(int *) = nullptr;
  cu::Result (*cuDeviceGet)(cu::Device *, int) = nullptr;
  cu::Result (*cuDeviceGetAttribute)(int *, int, cu::Device) = nullptr;
  cu::Result (*cuDeviceGetName)(char *, int, cu::Device) = nullptr;
  cu::Result (*cuDevicePrimaryCtxRetain)(cu::Context *, cu::Device) = nullptr;
  cu::Result (*cuDevicePrimaryCtxRelease)(cu::Device) = nullptr;
  cu::Result (*cuCtxSetCurrent)(cu::Context) = nullptr;
  cu::Result (*cuCtxSynchronize)() = nullptr;
  cu::Result (*cuModuleLoadData)(cu::Module *, const void *) = nullptr;
  cu::Result (*cuModuleUnload)(cu::Module) = nullptr;
  cu::Result (*cuModuleGetFunction)(cu::Function *, cu::Module,
                                    const char *) = nullptr;
  cu::Result (*cuFuncGetAttribute)(int *, int, cu::Function) = nullptr;
  cu::Result (*cuFuncSetAttribute)(cu::Function, int, int) = nullptr;
  cu::Result (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, cu::Function,
                                                            int,
                                                            size_t) = nullptr;
  cu::Result (*cuOccupancyMaxActiveClusters)(
      int *, cu::Function, const cu::LaunchConfig *) = nullptr;
  cu::Result (*cuLaunchKernel)(cu::Function, unsigned, unsigned, unsigned,
                               unsigned, unsigned, unsigned, unsigned,
                               cu::Stream, void **, void **) = nullptr;
  cu::Result (*cuLaunchCooperativeKernel)(cu::Function, unsigned, unsigned,
                                          unsigned, unsigned, unsigned,
                                          unsigned, unsigned, cu::Stream,
                                          void **) = nullptr;
  /// cuTensorMapEncodeTiled(map, data type, rank, base, dims, strides,
  /// box, element strides, interleave, swizzle, L2 promotion, OOB fill).
  cu::Result (*cuTensorMapEncodeTiled)(void *, int, unsigned, void *,
                                       const unsigned long long *,
                                       const unsigned long long *,
                                       const unsigned *, const unsigned *, int,
                                       int, int, int) = nullptr;
  cu::Result (*cuMemAlloc)(cu::DevicePtr *, size_t) = nullptr;
  cu::Result (*cuMemFree)(cu::DevicePtr) = nullptr;
  cu::Result (*cuMemcpyHtoD)(cu::DevicePtr, const void *, size_t) = nullptr;
  cu::Result (*cuMemcpyDtoH)(void *, cu::DevicePtr, size_t) = nullptr;
  cu::Result (*cuMemcpyDtoDAsync)(cu::DevicePtr, cu::DevicePtr, size_t,
                                  cu::Stream) = nullptr;
  cu::Result (*cuMemsetD8Async)(cu::DevicePtr, unsigned char, size_t,
                                cu::Stream) = nullptr;
  cu::Result (*cuMemcpyHtoDAsync)(cu::DevicePtr, const void *, size_t,
                                  cu::Stream) = nullptr;
  cu::Result (*cuMemcpyDtoHAsync)(void *, cu::DevicePtr, size_t,
                                  cu::Stream) = nullptr;
  cu::Result (*cuMemAllocAsync)(cu::DevicePtr *, size_t, cu::Stream) = nullptr;
  cu::Result (*cuMemPoolCreate)(cu::MemPool *,
                                const cu::MemPoolProps *) = nullptr;
  cu::Result (*cuMemPoolDestroy)(cu::MemPool) = nullptr;
  cu::Result (*cuMemPoolSetAttribute)(cu::MemPool, int, void *) = nullptr;
  cu::Result (*cuMemAllocFromPoolAsync)(cu::DevicePtr *, size_t, cu::MemPool,
                                        cu::Stream) = nullptr;
  cu::Result (*cuMemFreeAsync)(cu::DevicePtr, cu::Stream) = nullptr;
  cu::Result (*cuPointerGetAttribute)(void *, int, cu::DevicePtr) = nullptr;
  cu::Result (*cuStreamSynchronize)(cu::Stream) = nullptr;
  cu::Result (*cuStreamCreate)(cu::Stream *, unsigned) = nullptr;
  cu::Result (*cuStreamDestroy)(cu::Stream) = nullptr;
  cu::Result (*cuStreamBeginCapture)(cu::Stream, int) = nullptr;
  cu::Result (*cuStreamEndCapture)(cu::Stream, cu::Graph *) = nullptr;
  cu::Result (*cuStreamIsCapturing)(cu::Stream, int *) = nullptr;
  cu::Result (*cuGraphInstantiateWithFlags)(cu::GraphExec *, cu::Graph,
                                            unsigned long long) = nullptr;
  cu::Result (*cuGraphLaunch)(cu::GraphExec, cu::Stream) = nullptr;
  cu::Result (*cuGraphExecDestroy)(cu::GraphExec) = nullptr;
  cu::Result (*cuGraphDestroy)(cu::Graph) = nullptr;
  cu::Result (*cuEventCreate)(cu::Event *, unsigned) = nullptr;
  cu::Result (*cuEventRecord)(cu::Event, cu::Stream) = nullptr;
  cu::Result (*cuEventSynchronize)(cu::Event) = nullptr;
  cu::Result (*cuEventElapsedTime)(float *, cu::Event, cu::Event) = nullptr;
  cu::Result (*cuEventDestroy)(cu::Event) = nullptr;
  cu::Result (*cuGetErrorName)(cu::Result, const char **) = nullptr;
  cu::Result (*cuGetErrorString)(cu::Result, const char **) = nullptr;

private:
  CudaDriver() = default;
  void *handle_ = nullptr;
  std::string library_;
  int version_ = 0;
  int deviceCount_ = 0;
};

} // namespace normfuse::runtime

#endif // NORMFUSE_RUNTIME_CUDADRIVER_H
