//===- SimPlan.cpp - a launch plan run by the CUDA simulator --------------===//
//
// Part of normfuse. See runPlanInSimulator in CudaSim.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/CudaSim.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

using namespace normfuse::runtime;

/// cudaMalloc's alignment.
static constexpr size_t kDeviceAlignment = 256;

namespace {
/// A "device" buffer: aligned like cudaMalloc's, freed on destruction.
struct DeviceBuffer {
  void *data = nullptr;
  size_t bytes = 0;
  explicit DeviceBuffer(size_t n) : bytes(n) {
    size_t rounded = std::max<size_t>(n, 1);
    if (rounded <= SIZE_MAX - kDeviceAlignment)
      data = std::aligned_alloc(kDeviceAlignment,
                                (rounded + kDeviceAlignment - 1) /
                                    kDeviceAlignment * kDeviceAlignment);
  }
  ~DeviceBuffer() { std::free(data); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
};
} // namespace

/// `plan` resolved again where it launches a kernel cooperatively: that
/// kernel's residency within what the simulator runs together, so that a
/// host function that chose a one-kernel schedule by what the device holds
/// takes its fallback where the simulator holds less (the other
/// residencies as they were resolved).
static bool withinSimulator(LaunchPlan &plan, std::string &error) {
  std::vector<const Launch *> cooperative;
  for (const Step &step : plan.steps)
    if (step.kind == Step::Kind::Launch && step.launch.cooperative)
      cooperative.push_back(&step.launch);
  if (cooperative.empty() || plan.residencies.empty())
    return true;
  return resolveResidencies(
      plan,
      [&](const Residency &r) {
        int64_t n = r.current();
        for (const Launch *l : cooperative)
          if (l->kernel == r.kernel)
            n = std::min<int64_t>(
                {n, NF_SIM_MAX_RUN_BLOCKS,
                 NF_SIM_MAX_RUN_THREADS /
                     int64_t(l->block[0] * l->block[1] * l->block[2])});
        return n;
      },
      error);
}

bool normfuse::runtime::runPlanInSimulator(
    SimModule &module, const LaunchPlan &given,
    const std::vector<const void *> &inputs, const std::vector<void *> &outputs,
    std::string &error, SimOrder order, std::vector<SimStats> *stats,
    unsigned seed) {
  LaunchPlan plan = given;
  if (!withinSimulator(plan, error))
    return false;
  if (inputs.size() != plan.numInputs ||
      inputs.size() + outputs.size() != plan.bufferBytes.size()) {
    error = "the launch plan has " + std::to_string(plan.numInputs) +
            " inputs and " +
            std::to_string(plan.bufferBytes.size() - plan.numInputs) +
            " outputs, the call " + std::to_string(inputs.size()) + " and " +
            std::to_string(outputs.size());
    return false;
  }
  // Device copies: inputs copied in; outputs and temporaries NaN bytes.
  std::vector<std::unique_ptr<DeviceBuffer>> buffers, temporaries, constants;
  std::vector<SimBuffer> simBuffers;
  auto allocate = [&](size_t bytes, const std::string &name, bool readOnly,
                      std::vector<std::unique_ptr<DeviceBuffer>> &into) {
    auto device = std::make_unique<DeviceBuffer>(bytes);
    if (!device->data) {
      error = "out of memory for " + std::to_string(bytes) + " bytes (" + name +
              ")";
      return false;
    }
    SimBuffer sb;
    sb.base = device->data;
    sb.size = bytes;
    sb.name = name;
    sb.readOnly = readOnly;
    simBuffers.push_back(sb);
    into.push_back(std::move(device));
    return true;
  };
  for (size_t i = 0; i < plan.bufferBytes.size(); ++i) {
    bool isInput = i < inputs.size();
    size_t bytes = plan.bufferBytes[i];
    if (!allocate(bytes,
                  isInput ? "input " + std::to_string(i)
                          : "output " + std::to_string(i - inputs.size()),
                  isInput, buffers))
      return false;
    // An empty tensor may have no data pointer at all: copy nothing.
    if (isInput && bytes)
      std::memcpy(buffers.back()->data, inputs[i], bytes);
    else
      std::memset(buffers.back()->data, 0xff, bytes);
  }
  for (size_t i = 0; i < plan.temporaryBytes.size(); ++i) {
    if (!allocate(plan.temporaryBytes[i], "temporary " + std::to_string(i),
                  false, temporaries))
      return false;
    bool zeroed = std::binary_search(plan.zeroedTemporaries.begin(),
                                     plan.zeroedTemporaries.end(), int64_t(i));
    std::memset(temporaries.back()->data, zeroed ? 0 : 0xff,
                plan.temporaryBytes[i]);
  }
  // Constants: read-only buffers of their bytes (a store into one fails).
  for (size_t i = 0; i < plan.constants.size(); ++i) {
    const std::vector<uint8_t> &bytes = *plan.constants[i];
    if (!allocate(bytes.size(), "constant " + std::to_string(i), true,
                  constants))
      return false;
    if (!bytes.empty())
      std::memcpy(constants.back()->data, bytes.data(), bytes.size());
  }

  if (stats)
    stats->clear();
  auto pointerOf = [&](const LaunchArg &arg) -> void * {
    return arg.kind == LaunchArg::Kind::Buffer ? buffers[arg.index]->data
           : arg.kind == LaunchArg::Kind::Constant
               ? constants[arg.index]->data
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
    if (launch.emptyGrid())
      continue;
    // Argument values, then pointers to them (cuLaunchKernel's params).
    std::vector<void *> pointers;
    std::vector<int64_t> integers;
    std::vector<TensorMapBytes> maps;
    std::vector<void *> params;
    // A tensor map is the simulator's own form of it (nf_sim_tensor_map).
    auto encode = [&](const LaunchArg &arg, void *base, TensorMapBytes &out,
                      std::string &why) {
      const TensorMapSpec &spec = arg.map;
      if (!spec.check(reinterpret_cast<uintptr_t>(base), bytesOf(plan, arg),
                      why))
        return false;
      nf_sim_tensor_map map{};
      map.base = base;
      map.rank = spec.rank;
      map.elementBytes = int(spec.elementBytes());
      map.swizzle = spec.swizzle;
      for (int d = 0; d < spec.rank; ++d) {
        map.dims[d] = spec.dims[d];
        map.box[d] = spec.box[d];
        if (d)
          map.strides[d - 1] = spec.strides[d - 1];
      }
      static_assert(sizeof(map) <= sizeof(out.bytes), "a CUtensorMap's bytes");
      std::memcpy(out.bytes, &map, sizeof(map));
      return true;
    };
    if (!makeLaunchParams(launch, pointerOf, encode, pointers, integers, maps,
                          params, error)) {
      error = "kernel " + launch.kernel + ": " + error;
      return false;
    }
    SimStats launchStats;
    std::string launchError;
    Dim3 grid{launch.grid[0], launch.grid[1], launch.grid[2]};
    Dim3 block{launch.block[0], launch.block[1], launch.block[2]};
    if (!module.launch(launch.kernel, grid, block, launch.sharedMemoryBytes,
                       params.data(), simBuffers, &launchStats, launchError,
                       order, seed, int(params.size()))) {
      error = "kernel " + launch.kernel +
              " failed in the CUDA simulator: " + launchError;
      return false;
    }
    if (stats)
      stats->push_back(launchStats);
  }
  for (size_t o = 0; o < outputs.size(); ++o)
    if (size_t bytes = plan.bufferBytes[inputs.size() + o])
      std::memcpy(outputs[o], buffers[inputs.size() + o]->data, bytes);
  return true;
}
