//===- CudaGraphsTest.cpp - plans replayed as CUDA graphs ------*- C++ -*-===//
//
// Part of normfuse. On a GPU (NF_TEST_GPU set: bench/gpu/run.sh), a plan
// of several launches that meets the same buffers twice in a row is
// captured as a CUDA graph and replayed (CudaModule::enqueue): timing with
// fixed buffers replays it every iteration, and calls on host buffers
// give the same bits as the first, whether the allocator hands back the
// same device memory (a replay) or not. Without a GPU the tests skip.
//
//===----------------------------------------------------------------------===//

#include "JITTestUtils.h"
#include "Reference.h"
#include "normfuse/JIT/CudaKernel.h"

using namespace nftest;

namespace {

/// A LayerNorm gradient of block rows: a dx kernel and a parameter-sums
/// kernel.
constexpr const char *kGrad = R"mlir(
func.func @g(%dy: tensor<512x1024xf32>, %x: tensor<512x1024xf32>,
             %m: tensor<512x1xf32>, %r: tensor<512x1xf32>, %s: tensor<1024xf32>)
    -> (tensor<512x1024xf32>, tensor<1024xf32>, tensor<1024xf32>) {
  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r scale %s {axis = 1 : i64}
      : (tensor<512x1024xf32>, tensor<512x1024xf32>, tensor<512x1xf32>, tensor<512x1xf32>, tensor<1024xf32>)
      -> (tensor<512x1024xf32>, tensor<1024xf32>, tensor<1024xf32>)
  return %dx, %ds, %db : tensor<512x1024xf32>, tensor<1024xf32>, tensor<1024xf32>
})mlir";

std::shared_ptr<normfuse::jit::CudaKernel> gpuKernel() {
  const char *enabled = std::getenv("NF_TEST_GPU");
  if (!enabled || !*enabled)
    return nullptr;
  normfuse::jit::Options options;
  options.target = normfuse::jit::Target::CUDA;
  static normfuse::jit::JIT jit(options);
  auto kernel = jit.compile(kGrad, "g");
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError());
    return nullptr;
  }
  return std::static_pointer_cast<normfuse::jit::CudaKernel>(*kernel);
}

std::vector<Buffer> inputs() {
  std::mt19937 rng(3);
  std::vector<Buffer> in;
  for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{
           {512, 1024}, {512, 1024}, {512, 1}, {512, 1}, {1024}}) {
    in.emplace_back(DType::F32, shape);
    in.back().fillNormal(rng, 0.0, 1.0);
  }
  return in;
}

class CudaGraphsOnTheGpuTest : public testing::Test {
protected:
  void SetUp() override {
    kernel = gpuKernel();
    if (!kernel)
      GTEST_SKIP() << "no GPU (NF_TEST_GPU is not set)";
    in = inputs();
    for (Buffer &b : in)
      refs.push_back(b.ref());
  }
  std::shared_ptr<normfuse::jit::CudaKernel> kernel;
  std::vector<Buffer> in;
  std::vector<normfuse::TensorRef> refs;
};

TEST_F(CudaGraphsOnTheGpuTest, TimingWithFixedBuffersReplaysAGraph) {
  normfuse::runtime::PlanTimings timings;
  ASSERT_EQ(errorText(kernel->time(refs, 2, 5, timings)), "");
  EXPECT_EQ(kernel->graphsOff(), "");
  // The first warm-up runs launch by launch, the second captures.
  EXPECT_GE(kernel->graphLaunches(), 6u);
}

TEST_F(CudaGraphsOnTheGpuTest, ReplaysGiveTheFirstCallsBits) {
  std::vector<std::vector<double>> first;
  for (int call = 0; call < 4; ++call) {
    std::vector<Buffer> out;
    out.emplace_back(DType::F32, std::vector<int64_t>{512, 1024});
    out.emplace_back(DType::F32, std::vector<int64_t>{1024});
    out.emplace_back(DType::F32, std::vector<int64_t>{1024});
    std::vector<normfuse::TensorRef> outRefs;
    for (Buffer &b : out)
      outRefs.push_back(b.ref());
    ASSERT_EQ(errorText(kernel->run(refs, outRefs)), "");
    for (size_t o = 0; o < out.size(); ++o) {
      if (call == 0)
        first.push_back(out[o].toDoubles());
      else
        EXPECT_EQ(out[o].toDoubles(), first[o]) << "call " << call;
    }
  }
  std::printf("graph launches: %zu\n", kernel->graphLaunches());
}

} // namespace
