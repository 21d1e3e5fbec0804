//===- FusedProductsOnSimTest.cpp - fused matmul and conv epilogues -------===//
//
// Part of normfuse. An nf.fused matmul or conv2d with a pointwise epilogue
// runs as one tiled CUDA kernel that applies the epilogue (bias_add along
// the output channels, gelu, relu, silu, a residual add) to each sum before
// it stores it. Each case runs fused in the CUDA simulator and op by op on
// the CPU back end (checked against float64 by its own tests) on the same
// inputs: f32 agrees to 1e-5 (relative L2); f16 to 4e-3, since the unfused
// ops round each intermediate to f16 and the fused kernel does not.
//
//===----------------------------------------------------------------------===//

#include "CudaSimTestUtils.h"
#include "Reference.h"

#include <cmath>

using namespace nftest;

namespace {

struct EpilogueCase {
  const char *name;
  /// The function, with T for the element type.
  const char *ir;
  std::vector<std::vector<int64_t>> inputs;
  std::vector<int64_t> output;
};

std::vector<EpilogueCase> epilogueCases() {
  return {
      // M = 37, N = 70, K = 45: tiles cut by every edge.
      {"matmulBiasGelu",
       R"(
func.func @f(%a: tensor<37x45xT>, %b: tensor<45x70xT>, %c: tensor<70xT>) -> tensor<37x70xT> {
  %p = nf.matmul %a, %b : tensor<37x45xT>, tensor<45x70xT> -> tensor<37x70xT>
  %q = nf.bias_add %p, %c {layout = #nf.layout<nhwc>} : tensor<37x70xT>, tensor<70xT>
  %z = nf.gelu %q {approximate = #nf.approximation<tanh>} : tensor<37x70xT>
  return %z : tensor<37x70xT>
})",
       {{37, 45}, {45, 70}, {70}},
       {37, 70}},
      {"batchedMatmulTransposedSiluResidual",
       R"(
func.func @f(%a: tensor<2x33x9xT>, %b: tensor<41x33xT>, %r: tensor<2x9x41xT>) -> tensor<2x9x41xT> {
  %p = nf.matmul %a, %b {transpose_lhs, transpose_rhs} : tensor<2x33x9xT>, tensor<41x33xT> -> tensor<2x9x41xT>
  %s = nf.silu %p : tensor<2x9x41xT>
  %z = nf.add %s, %r : tensor<2x9x41xT>
  return %z : tensor<2x9x41xT>
})",
       {{2, 33, 9}, {41, 33}, {2, 9, 41}},
       {2, 9, 41}},
      {"convNHWCBiasRelu",
       R"(
func.func @f(%x: tensor<2x9x7x5xT>, %w: tensor<6x3x3x5xT>, %c: tensor<6xT>) -> tensor<2x5x4x6xT> {
  %y = nf.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 2>, layout = #nf.layout<nhwc>} : tensor<2x9x7x5xT>, tensor<6x3x3x5xT> -> tensor<2x5x4x6xT>
  %b = nf.bias_add %y, %c {layout = #nf.layout<nhwc>} : tensor<2x5x4x6xT>, tensor<6xT>
  %z = nf.relu %b : tensor<2x5x4x6xT>
  return %z : tensor<2x5x4x6xT>
})",
       {{2, 9, 7, 5}, {6, 3, 3, 5}, {6}},
       {2, 5, 4, 6}},
      {"convNCHWBiasGelu",
       R"(
func.func @f(%x: tensor<1x4x8x9xT>, %w: tensor<5x4x3x3xT>, %c: tensor<5xT>) -> tensor<1x5x6x6xT> {
  %y = nf.conv2d %x, %w {dilations = array<i64: 1, 2>, padding = array<i64: 0, 0, 1, 0>} : tensor<1x4x8x9xT>, tensor<5x4x3x3xT> -> tensor<1x5x6x6xT>
  %b = nf.bias_add %y, %c {layout = #nf.layout<nchw>} : tensor<1x5x6x6xT>, tensor<5xT>
  %z = nf.gelu %b : tensor<1x5x6x6xT>
  return %z : tensor<1x5x6x6xT>
})",
       {{1, 4, 8, 9}, {5, 4, 3, 3}, {5}},
       {1, 5, 6, 6}},
  };
}

std::string instantiate(const char *ir, DType dtype) {
  std::string text = ir, type = dtype == DType::F16 ? "f16" : "f32";
  for (size_t at = text.find("xT>"); at != std::string::npos;
       at = text.find("xT>", at))
    text.replace(at + 1, 1, type);
  return text;
}

using EpilogueParam = std::tuple<int, DType>;
class FusedProductOnSimTest : public testing::TestWithParam<EpilogueParam> {};

TEST_P(FusedProductOnSimTest, OneKernelMatchesTheOpsOnTheCPU) {
  auto [index, dtype] = GetParam();
  EpilogueCase c = epilogueCases()[index];
  std::string ir = instantiate(c.ir, dtype);
  auto sim = compileForSim(ir, "f", "auto", /*fuse=*/true);
  auto cpu = sharedJIT().compile(ir, "f");
  ASSERT_TRUE(sim);
  ASSERT_TRUE(bool(cpu)) << llvm::toString(cpu.takeError());
  // The epilogue runs inside the product's kernel: one launch in all.
  EXPECT_EQ(sim->getPlan().steps.size(), 1u) << sim->getPlan().str();
  // f16 takes the tensor cores (an NCHW convolution too, its input
  // gathered one element at a time); f32 the SIMT kernel.
  bool tensorCores = dtype == DType::F16;
  EXPECT_NE(sim->getSource().find(tensorCores ? "tensor-core-product"
                                              : "tiled-product"),
            std::string::npos);

  std::mt19937 rng(23);
  std::vector<Buffer> in;
  std::vector<normfuse::TensorRef> refs;
  for (const auto &shape : c.inputs) {
    in.emplace_back(dtype, shape);
    in.back().fillNormal(rng);
  }
  for (Buffer &b : in)
    refs.push_back(b.ref());
  Buffer fromSim(dtype, c.output), fromCPU(dtype, c.output);
  fromSim.fill(std::nan(""));
  ASSERT_EQ(errorText(sim->run(refs, {fromSim.ref()})), "");
  ASSERT_EQ(errorText((*cpu)->run(refs, {fromCPU.ref()})), "");
  double error = relativeError(fromSim.toDoubles(), fromCPU.toDoubles());
  recordError("relative_error", error);
  EXPECT_LE(error, dtype == DType::F32 ? 1e-5 : 4e-3) << ir;
}

INSTANTIATE_TEST_SUITE_P(
    Epilogues, FusedProductOnSimTest,
    testing::Combine(testing::Range(0, int(epilogueCases().size())),
                     testing::Values(DType::F32, DType::F16)),
    [](const testing::TestParamInfo<EpilogueParam> &info) {
      return std::string(epilogueCases()[std::get<0>(info.param)].name) +
             (std::get<1>(info.param) == DType::F16 ? "_f16" : "_f32");
    });

} // namespace
