//===- NvrtcTest.cpp - NVRTC through dlopen, without a GPU ----------------===//
//
// Part of normfuse. Where the toolkit is installed: NVRTC compiles a small
// kernel that uses the half types to a cubin (an ELF file) for sm_80 and to
// PTX for compute_75; a syntax error comes back with NVRTC's log; a device
// newer than NVRTC knows gets PTX for the newest virtual architecture it
// knows, one older than all of them an error; a missing library says so.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/Nvrtc.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace normfuse::runtime;

namespace {

const char *kSource = R"(#include <cuda_fp16.h>
extern "C" __global__ void scale(__half *x, float s, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = __float2half(__half2float(x[i]) * s);
}
)";

std::unique_ptr<Nvrtc> openOrSkip() {
  std::string error;
  auto nvrtc = Nvrtc::open(error);
#ifdef NF_HAVE_NVRTC
  EXPECT_TRUE(nvrtc) << error;
#endif
  return nvrtc;
}

TEST(NvrtcTest, CompilesACubinAndPTX) {
  auto nvrtc = openOrSkip();
  if (!nvrtc)
    GTEST_SKIP() << "no NVRTC here";
  std::string cubin, ptx, error;
  ASSERT_TRUE(nvrtc->compile(kSource, "sm_80", cubin, error)) << error;
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4), "\x7f"
                                "ELF");
  ASSERT_TRUE(nvrtc->compile(kSource, "compute_75", ptx, error)) << error;
  EXPECT_NE(ptx.find(".entry scale("), std::string::npos);
  EXPECT_NE(ptx.find(".target sm_75"), std::string::npos);
  EXPECT_EQ(nvrtc->version().rfind("nvrtc ", 0), 0u);
}

TEST(NvrtcTest, ACompileErrorCarriesTheLog) {
  auto nvrtc = openOrSkip();
  if (!nvrtc)
    GTEST_SKIP() << "no NVRTC here";
  std::string binary, error;
  EXPECT_FALSE(nvrtc->compile("extern \"C\" __global__ void k() { int x = ; }",
                              "sm_90", binary, error));
  EXPECT_EQ(error.rfind("NVRTC could not compile the kernels for sm_90 "
                        "(NVRTC_ERROR_COMPILATION):\n",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("nf_kernels.cu(1): error"), std::string::npos) << error;
  EXPECT_FALSE(nvrtc->compile(kSource, "gfx90a", binary, error));
  EXPECT_EQ(error, "not a CUDA architecture: 'gfx90a' (expected sm_XY or "
                   "compute_XY)");
}

TEST(NvrtcTest, ADeviceNewerThanNvrtcGetsThePTXOfTheNewestItKnows) {
  auto nvrtc = openOrSkip();
  if (!nvrtc)
    GTEST_SKIP() << "no NVRTC here";
  const std::vector<int> &archs = nvrtc->supportedArchs();
  ASSERT_FALSE(archs.empty());
  std::string error;
  EXPECT_EQ(nvrtc->targetFor(archs.front(), error),
            "sm_" + std::to_string(archs.front()));
  EXPECT_EQ(nvrtc->targetFor(999, error),
            "compute_" + std::to_string(archs.back()));
  EXPECT_EQ(nvrtc->targetFor(archs.front() - 1, error), "");
  if (std::find(archs.begin(), archs.end(), 90) != archs.end())
    EXPECT_EQ(nvrtc->targetFor(90, error), "sm_90a"); // wgmma
  EXPECT_NE(error.find("cannot compile for compute capability"),
            std::string::npos)
      << error;
}

TEST(NvrtcTest, AMissingLibrarySaysSo) {
  std::string error;
  EXPECT_FALSE(Nvrtc::open(error, {"/nonexistent/libnvrtc.so", ""}));
  EXPECT_EQ(error.rfind("NVRTC (the CUDA toolkit's runtime compiler) could "
                        "not be loaded: /nonexistent/libnvrtc.so",
                        0),
            0u)
      << error;
}

} // namespace
