//===- CudaDriverTest.cpp - why the CUDA target cannot run ----------------===//
//
// Part of normfuse. Each cause that keeps the CUDA target from running
// gives its message and no crash: no driver (a library that is not there),
// the toolkit's stub library in the driver's place (cuInit answers
// CUDA_ERROR_STUB_LIBRARY), a library without the driver's entry points (a
// driver too old). On this machine's own libcuda.so.1 the driver either
// opens with a device or says which of these it is.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/CudaDriver.h"

#include <gtest/gtest.h>
#include <unistd.h>

using namespace normfuse::runtime;

namespace {

bool startsWith(const std::string &s, const std::string &prefix) {
  return s.rfind(prefix, 0) == 0;
}

TEST(CudaDriverTest, AMissingDriverSaysThereIsNoDriver) {
  std::string error;
  auto driver = CudaDriver::open(error, {"/nonexistent/normfuse/libcuda.so.1"});
  EXPECT_FALSE(driver);
  EXPECT_TRUE(startsWith(error, "no NVIDIA driver: "
                                "/nonexistent/normfuse/libcuda.so.1 could "
                                "not be loaded ("))
      << error;
  EXPECT_NE(error.find("needs an NVIDIA GPU and its driver"), std::string::npos)
      << error;
}

TEST(CudaDriverTest, TheToolkitsStubSaysItIsTheStub) {
#ifndef NF_CUDA_STUB_DRIVER
  GTEST_SKIP() << "no CUDA toolkit, so no stub library";
#else
  // The path is the build machine's; a bundle run elsewhere (the GPU
  // machine) may have no toolkit there.
  if (::access(NF_CUDA_STUB_DRIVER, R_OK) != 0)
    GTEST_SKIP() << NF_CUDA_STUB_DRIVER << " is not on this machine";
  std::string error;
  auto driver = CudaDriver::open(error, {NF_CUDA_STUB_DRIVER});
  EXPECT_FALSE(driver);
  EXPECT_EQ(error, std::string("the CUDA driver library ") +
                       NF_CUDA_STUB_DRIVER +
                       " is the toolkit's stub, not a driver "
                       "(CUDA_ERROR_STUB_LIBRARY): install the NVIDIA "
                       "driver, or take the toolkit's stubs folder out of "
                       "the library path");
#endif
}

TEST(CudaDriverTest, ALibraryWithoutTheDriverEntryPointsIsTooOld) {
  // libm loads but has no cuGetErrorName.
  std::string error;
  auto driver = CudaDriver::open(error, {"libm.so.6"});
  EXPECT_FALSE(driver);
  EXPECT_EQ(error, "the NVIDIA driver in libm.so.6 is too old: it lacks "
                   "cuGetErrorName (normfuse needs the driver of CUDA 12.0 "
                   "or newer)");
}

TEST(CudaDriverTest, TheEnvironmentChoosesTheLibrary) {
  ::setenv("NF_CUDA_DRIVER", "/nonexistent/from-env/libcuda.so.1", 1);
  std::string error;
  auto driver = CudaDriver::open(error);
  ::unsetenv("NF_CUDA_DRIVER");
  EXPECT_FALSE(driver);
  EXPECT_NE(error.find("/nonexistent/from-env/libcuda.so.1"), std::string::npos)
      << error;
}

TEST(CudaDriverTest, ThisMachinesDriverOpensOrSaysWhyNot) {
  std::string error;
  auto driver = CudaDriver::open(error);
  if (driver) {
    EXPECT_GT(driver->deviceCount(), 0);
    EXPECT_GE(driver->version(), kMinimumDriverVersion);
    return;
  }
  EXPECT_TRUE(startsWith(error, "no NVIDIA driver") ||
              startsWith(error, "no CUDA device") ||
              startsWith(error, "the CUDA driver library") ||
              startsWith(error, "the NVIDIA driver"))
      << error;
}

} // namespace
