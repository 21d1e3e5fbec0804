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
using normfuse::runtime::LaunchArg;
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

// The launch plan traces each view to its buffer in maps that grow as views
// are added: a chain long enough to grow them many times must keep every
// launch's arguments (an entry copied while the map grew once read freed
// memory, and a kernel wrote into another temporary).
TEST(ViewsOnSimTest, LongChainsOfViewsKeepEveryLaunchOnItsBuffers) {
  constexpr int kSteps = 120; // even: the last view is 64 long
  std::string ir = "func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {\n";
  std::string last = "%x";
  for (int i = 0; i < kSteps; ++i) {
    // A ReLU (a kernel of its own) of each shape in turn, a view between.
    std::string n = std::to_string(i);
    std::string type = i % 2 ? "tensor<8x8xf32>" : "tensor<64xf32>";
    std::string other = i % 2 ? "tensor<64xf32>" : "tensor<8x8xf32>";
    std::string shape = i % 2 ? "64" : "8, 8";
    ir += "  %a" + n + " = nf.relu " + last + " : " + type + "\n";
    ir += "  %v" + n + " = tosa.reshape %a" + n +
          " {new_shape = array<i64: " + shape + ">} : (" + type + ") -> " +
          other + "\n";
    last = "%v" + n;
  }
  ir += "  %y = nf.relu " + last + " : tensor<64xf32>\n";
  ir += "  return %y : tensor<64xf32>\n}\n";
  auto sim = compileForSim(ir, "f");
  ASSERT_TRUE(sim);
  const auto &plan = sim->getPlan();
  ASSERT_EQ(plan.steps.size(), size_t(kSteps) + 1) << plan.str();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &s = plan.steps[i];
    ASSERT_EQ(s.kind, Step::Kind::Launch) << plan.str();
    ASSERT_GE(s.launch.args.size(), 2u) << plan.str();
    // Each ReLU reads what the one before wrote, through a view.
    const LaunchArg &in = s.launch.args[0], &out = s.launch.args[1];
    if (i == 0) {
      EXPECT_EQ(in.kind, LaunchArg::Kind::Buffer) << plan.str();
      EXPECT_EQ(in.index, 0) << plan.str();
    } else {
      const LaunchArg &before = plan.steps[i - 1].launch.args[1];
      EXPECT_EQ(in.kind, before.kind) << "launch " << i << "\n" << plan.str();
      EXPECT_EQ(in.index, before.index) << "launch " << i << "\n" << plan.str();
    }
    if (i + 1 == plan.steps.size()) {
      EXPECT_EQ(out.kind, LaunchArg::Kind::Buffer) << plan.str();
      EXPECT_EQ(out.index, 1) << plan.str();
    } else {
      EXPECT_EQ(out.kind, LaunchArg::Kind::Temporary) << plan.str();
      EXPECT_EQ(out.index, int64_t(i)) << plan.str();
    }
  }
  std::vector<float> x(64), y(64, -1.0f);
  for (int i = 0; i < 64; ++i)
    x[i] = 0.25f * float(i) - 3.0f;
  TensorRef xr{x.data(), DType::F32, {64}, {}};
  TensorRef yr{y.data(), DType::F32, {64}, {}};
  ASSERT_EQ(errorText(sim->run({xr}, {yr})), "");
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(y[i], std::max(x[i], 0.0f)) << i;
}

} // namespace
