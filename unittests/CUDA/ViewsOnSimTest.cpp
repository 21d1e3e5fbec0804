//===- ViewsOnSimTest.cpp - reshapes cost no kernel -------------*- C++ -*-===//
//
// Part of normfuse. A tosa.reshape between kernels (and the collapse and
// expand shapes TOSA's lowering makes of broadcasts) is a view of the same
// device buffer: the launch plan has no kernel and no copy for it.
//
//===----------------------------------------------------------------------===//

#include "CudaSimTestUtils.h"

#include <cmath>

using namespace nftest;
using normfuse::DType;
using normfuse::TensorRef;
using normfuse::runtime::Step;

namespace {

TEST(ViewsOnSimTest, ReshapesBetweenKernelsAreViewsOfTheSameBuffer) {
  std::string ir = R"(
func.func @f(%x: tensor<4x8xf32>, %b: tensor<1x8xf32>) -> tensor<2x16xf32> {
  %a = tosa.add %x, %b : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %r = tosa.reshape %a {new_shape = array<i64: 32>} : (tensor<4x8xf32>) -> tensor<32xf32>
  %s = tosa.reshape %r {new_shape = array<i64: 2, 16>} : (tensor<32xf32>) -> tensor<2x16xf32>
  %e = tosa.exp %s : (tensor<2x16xf32>) -> tensor<2x16xf32>
  return %e : tensor<2x16xf32>
}
)";
  auto sim = compileForSim(ir, "f");
  ASSERT_TRUE(sim);
  const auto &plan = sim->getPlan();
  // The add and the exp: two launches, no copy, one temporary between.
  ASSERT_EQ(plan.steps.size(), 2u) << plan.str();
  for (const Step &s : plan.steps)
    EXPECT_EQ(s.kind, Step::Kind::Launch) << plan.str();
  EXPECT_EQ(plan.temporaryBytes, (std::vector<size_t>{128})) << plan.str();
  std::vector<float> x(32), b(8), y(32, -1.0f);
  for (int i = 0; i < 32; ++i)
    x[i] = 0.125f * float(i % 7) - 0.25f;
  for (int i = 0; i < 8; ++i)
    b[i] = 0.0625f * float(i);
  TensorRef xr{x.data(), DType::F32, {4, 8}, {}};
  TensorRef br{b.data(), DType::F32, {1, 8}, {}};
  TensorRef yr{y.data(), DType::F32, {2, 16}, {}};
  ASSERT_EQ(errorText(sim->run({xr, br}, {yr})), "");
  for (int i = 0; i < 32; ++i)
    EXPECT_NEAR(y[i], std::exp(x[i] + b[i % 8]), 1e-6f * y[i]) << i;
}

} // namespace
