//===- LaunchRegistersTest.cpp - kernels that count on their registers ----===//
//
// Part of normfuse. On a GPU (NF_TEST_GPU set: bench/gpu/run.sh), a launch
// that says its kernel counts on more registers a thread than the driver
// says it was compiled to (a setmaxnreg kernel that would hang) is refused
// before anything runs, naming both counts, and the outputs are left as
// they were; the same kernel without the claim runs. Without a GPU the
// test skips (KernelPackageTest checks the message and the manifest).
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/CudaDevice.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace normfuse::runtime;

namespace {

constexpr const char *kOnes = R"cuda(
extern "C" __global__ void ones(float *out) { out[threadIdx.x] = 1.0f; }
)cuda";

TEST(LaunchRegistersOnTheGpuTest,
     AKernelWithFewerRegistersThanItsLaunchCountsOnIsNotLaunched) {
  const char *enabled = std::getenv("NF_TEST_GPU");
  if (!enabled || !*enabled)
    GTEST_SKIP() << "no GPU (NF_TEST_GPU is not set)";
  std::string error;
  CudaDeviceOptions options;
  options.cacheDirectory = "";
  std::shared_ptr<CudaDevice> device = CudaDevice::open(error, options);
  ASSERT_TRUE(device) << error;
  std::unique_ptr<CudaModule> module = device->load(kOnes, error);
  ASSERT_TRUE(module) << error;

  LaunchPlan plan;
  plan.bufferBytes = {32 * sizeof(float)};
  Step step;
  step.launch.kernel = "ones";
  step.launch.block[0] = 32;
  LaunchArg out;
  out.kind = LaunchArg::Kind::Buffer;
  out.index = 0;
  step.launch.args = {out};
  step.launch.launchRegisters = 248;
  plan.steps = {step};

  std::vector<float> host(32, 7.0f);
  EXPECT_FALSE(module->run(plan, {}, {host.data()}, error));
  EXPECT_EQ(error.rfind("kernel ones was compiled to ", 0), 0u) << error;
  EXPECT_NE(error.find(" registers a thread, but its warpgroups hand "
                       "registers to each other (setmaxnreg) counting on "
                       "248: launched, it would wait forever"),
            std::string::npos)
      << error;
  EXPECT_EQ(host, std::vector<float>(32, 7.0f));

  plan.steps[0].launch.launchRegisters = 0;
  ASSERT_TRUE(module->run(plan, {}, {host.data()}, error)) << error;
  EXPECT_EQ(host, std::vector<float>(32, 1.0f));
}

} // namespace
