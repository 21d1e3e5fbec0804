//===- CudaModuleOnTheGpuTest.cpp - a loaded module's calls on a GPU ------===//
//
// Part of normfuse. On a GPU (NF_TEST_GPU set: bench/gpu/run.sh):
// - a launch that says its kernel counts on more registers a thread than
//   the driver says it was compiled to (a setmaxnreg kernel that would
//   hang) is refused before anything runs, naming both counts, and the
//   outputs are left as they were; the same kernel without the claim runs;
// - the device has its own pool for the calls' temporaries, and calls
//   through a temporary give the same results call after call with the
//   device synchronized between them.
// Without a GPU the tests skip (KernelPackageTest checks the message and
// the manifest).
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/CudaDevice.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace normfuse::runtime;

namespace {

constexpr const char *kKernels = R"cuda(
extern "C" __global__ void ones(float *out) { out[threadIdx.x] = 1.0f; }
extern "C" __global__ void index(float *temp) { temp[threadIdx.x] = threadIdx.x; }
extern "C" __global__ void twice(const float *temp, float *out) {
  out[threadIdx.x] = 2.0f * temp[threadIdx.x];
}
)cuda";

class CudaModuleOnTheGpuTest : public testing::Test {
protected:
  void SetUp() override {
    const char *enabled = std::getenv("NF_TEST_GPU");
    if (!enabled || !*enabled)
      GTEST_SKIP() << "no GPU (NF_TEST_GPU is not set)";
    CudaDeviceOptions options;
    options.cacheDirectory = "";
    device = CudaDevice::open(error, options);
    ASSERT_TRUE(device) << error;
    module = device->load(kKernels, error);
    ASSERT_TRUE(module) << error;
  }
  static Step launch(const char *kernel, std::vector<LaunchArg> args) {
    Step step;
    step.launch.kernel = kernel;
    step.launch.block[0] = 32;
    step.launch.args = std::move(args);
    return step;
  }
  static LaunchArg arg(LaunchArg::Kind kind, int64_t index) {
    LaunchArg a;
    a.kind = kind;
    a.index = index;
    return a;
  }
  std::string error;
  std::shared_ptr<CudaDevice> device;
  std::unique_ptr<CudaModule> module;
};

TEST_F(CudaModuleOnTheGpuTest,
       AKernelWithFewerRegistersThanItsLaunchCountsOnIsNotLaunched) {
  LaunchPlan plan;
  plan.bufferBytes = {32 * sizeof(float)};
  plan.steps = {launch("ones", {arg(LaunchArg::Kind::Buffer, 0)})};
  plan.steps[0].launch.launchRegisters = 248;

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

TEST_F(CudaModuleOnTheGpuTest,
       TemporariesComeFromTheDevicesOwnPoolCallAfterCall) {
  EXPECT_NE(device->memoryPool(), nullptr);
  LaunchPlan plan;
  plan.bufferBytes = {32 * sizeof(float)};
  plan.temporaryBytes = {32 * sizeof(float)};
  plan.steps = {launch("index", {arg(LaunchArg::Kind::Temporary, 0)}),
                launch("twice", {arg(LaunchArg::Kind::Temporary, 0),
                                 arg(LaunchArg::Kind::Buffer, 0)})};
  std::vector<float> want(32);
  for (int i = 0; i < 32; ++i)
    want[i] = 2.0f * float(i);
  for (int call = 0; call < 4; ++call) {
    std::vector<float> host(32, -1.0f);
    ASSERT_TRUE(module->run(plan, {}, {host.data()}, error))
        << "call " << call << ": " << error;
    EXPECT_EQ(host, want) << "call " << call;
    ASSERT_EQ(device->driver().cuCtxSynchronize(), cu::kSuccess);
  }
}

} // namespace
