//===- CudaSimKernel.cpp - an nf function run by the CUDA simulator -*- C++
//-*-===//
//
// Part of normfuse. See CudaSimKernel.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/JIT/CudaSimKernel.h"
#include "HostKernel.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdlib>
#include <cstring>
#include <memory>

using namespace normfuse;
using namespace normfuse::jit;
using namespace normfuse::runtime;

/// cudaMalloc's alignment.
static constexpr size_t kDeviceAlignment = 256;

namespace {
/// A "device" buffer: aligned like cudaMalloc's, freed on destruction.
struct DeviceBuffer {
  void *data = nullptr;
  size_t bytes = 0;
  DeviceBuffer(size_t n) : bytes(n) {
    data = std::aligned_alloc(kDeviceAlignment,
                              (std::max<size_t>(n, 1) + kDeviceAlignment - 1) /
                                  kDeviceAlignment * kDeviceAlignment);
  }
  ~DeviceBuffer() { std::free(data); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
};
} // namespace

CudaSimKernel::CudaSimKernel(std::string name, Signature signature,
                             std::string source, LaunchPlan plan,
                             std::unique_ptr<SimModule> module)
    : CudaPlanKernel(std::move(name), std::move(signature), std::move(source),
                     std::move(plan)),
      module(std::move(module)) {}

CudaSimKernel::~CudaSimKernel() = default;

llvm::Error CudaSimKernel::run(llvm::ArrayRef<TensorRef> inputs,
                               llvm::ArrayRef<TensorRef> outputs,
                               int threads) const {
  (void)threads; // The simulator runs one block at a time.
  return runInSimulator(inputs, outputs, SimOrder::Forward, nullptr);
}

llvm::Error CudaSimKernel::runInSimulator(llvm::ArrayRef<TensorRef> inputs,
                                          llvm::ArrayRef<TensorRef> outputs,
                                          SimOrder order,
                                          std::vector<SimStats> *stats) const {
  if (auto err = checkCall(inputs, outputs))
    return err;

  // Device copies: inputs copied in; outputs and temporaries NaN bytes.
  std::vector<std::unique_ptr<DeviceBuffer>> buffers, temporaries;
  std::vector<SimBuffer> simBuffers;
  for (size_t i = 0; i < plan.bufferBytes.size(); ++i) {
    const TensorRef &host =
        i < inputs.size() ? inputs[i] : outputs[i - inputs.size()];
    size_t bytes = plan.bufferBytes[i];
    auto device = std::make_unique<DeviceBuffer>(bytes);
    if (!device->data)
      return llvm::createStringError("@%s: out of memory for %zu bytes",
                                     name.c_str(), bytes);
    // An empty tensor may have no data pointer at all: copy nothing.
    if (i < inputs.size() && bytes)
      std::memcpy(device->data, host.data, bytes);
    else
      std::memset(device->data, 0xff, bytes);
    SimBuffer sb;
    sb.base = device->data;
    sb.size = bytes;
    sb.name = i < inputs.size() ? "input " + std::to_string(i)
                                : "output " + std::to_string(i - inputs.size());
    sb.readOnly = i < inputs.size();
    simBuffers.push_back(sb);
    buffers.push_back(std::move(device));
  }
  for (size_t i = 0; i < plan.temporaryBytes.size(); ++i) {
    auto device = std::make_unique<DeviceBuffer>(plan.temporaryBytes[i]);
    if (!device->data)
      return llvm::createStringError("@%s: out of memory for %zu bytes",
                                     name.c_str(), plan.temporaryBytes[i]);
    std::memset(device->data, 0xff, plan.temporaryBytes[i]);
    SimBuffer sb;
    sb.base = device->data;
    sb.size = plan.temporaryBytes[i];
    sb.name = "temporary " + std::to_string(i);
    simBuffers.push_back(sb);
    temporaries.push_back(std::move(device));
  }

  if (stats)
    stats->clear();
  auto pointerOf = [&](const LaunchArg &arg) -> void * {
    return arg.kind == LaunchArg::Kind::Buffer ? buffers[arg.index]->data
                                               : temporaries[arg.index]->data;
  };
  for (const Step &step : plan.steps) {
    if (step.kind == Step::Kind::Copy) {
      if (step.copy.bytes)
        std::memcpy(pointerOf(step.copy.to), pointerOf(step.copy.from),
                    step.copy.bytes);
      continue;
    }
    const Launch &launch = step.launch;
    // Argument values, then pointers to them (cuLaunchKernel's params).
    std::vector<void *> pointers(launch.args.size());
    std::vector<int64_t> integers(launch.args.size());
    std::vector<void *> params(launch.args.size());
    for (size_t a = 0; a < launch.args.size(); ++a) {
      const LaunchArg &arg = launch.args[a];
      switch (arg.kind) {
      case LaunchArg::Kind::Buffer:
      case LaunchArg::Kind::Temporary:
        pointers[a] = pointerOf(arg);
        params[a] = &pointers[a];
        break;
      case LaunchArg::Kind::Integer:
        integers[a] = arg.value;
        params[a] = &integers[a];
        break;
      }
    }
    SimStats launchStats;
    std::string error;
    Dim3 grid{launch.grid[0], launch.grid[1], launch.grid[2]};
    Dim3 block{launch.block[0], launch.block[1], launch.block[2]};
    if (!module->launch(launch.kernel, grid, block, launch.sharedMemoryBytes,
                        params.data(), simBuffers, &launchStats, error, order,
                        /*seed=*/1, int(params.size())))
      return llvm::createStringError("@%s: kernel %s failed in the CUDA "
                                     "simulator: %s",
                                     name.c_str(), launch.kernel.c_str(),
                                     error.c_str());
    if (stats)
      stats->push_back(launchStats);
  }
  for (size_t o = 0; o < outputs.size(); ++o)
    if (size_t bytes = plan.bufferBytes[inputs.size() + o])
      std::memcpy(outputs[o].data, buffers[inputs.size() + o]->data, bytes);
  return llvm::Error::success();
}
