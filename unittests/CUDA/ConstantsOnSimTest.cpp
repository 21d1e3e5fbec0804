//===- ConstantsOnSimTest.cpp - constant tensors on the device --*- C++ -*-===//
//
// Part of normfuse. Constant tensors that are not splats (the weights of an
// exported model, a table, a mask) live on the device: the launch plan
// holds their bytes, a runtime uploads each once and hands it to the
// kernels that read it, read-only. Run by the CUDA simulator, whose buffer
// checks fail a store into a constant, and compared exactly with values
// computed here.
//
//===----------------------------------------------------------------------===//

#include "CudaSimTestUtils.h"

#include <cstring>

using namespace nftest;
using normfuse::DType;
using normfuse::TensorRef;
using normfuse::runtime::LaunchArg;
using normfuse::runtime::Step;

namespace {

/// How many launch arguments and copies of `plan` read constant `index`.
int readsOf(const normfuse::runtime::LaunchPlan &plan, int64_t index) {
  int n = 0;
  auto counts = [&](const LaunchArg &a) {
    return a.kind == LaunchArg::Kind::Constant && a.index == index;
  };
  for (const Step &s : plan.steps) {
    if (s.kind == Step::Kind::Copy)
      n += counts(s.copy.from);
    else
      for (const LaunchArg &a : s.launch.args)
        n += counts(a);
  }
  return n;
}

template <class T> std::vector<T> valuesOf(const std::vector<uint8_t> &bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

// A weight row, a bool mask and an integer table: each one constant of the
// plan, its bytes as kernels read them (a bool a byte, though MLIR packs
// i1 elements in bits), read by the kernel that needs it; the returned
// table is copied from its constant into the caller's buffer.
TEST(ConstantsOnSimTest, WeightsMasksAndTablesAreUploadedConstants) {
  std::string ir = R"(
func.func @f(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<5xi64>) {
  %w = "tosa.const"() <{value = dense<[[0.5, -2.0, 3.0, 0.25]]> : tensor<1x4xf32>}> : () -> tensor<1x4xf32>
  %m = "tosa.const"() <{value = dense<[[true, false, true, true]]> : tensor<1x4xi1>}> : () -> tensor<1x4xi1>
  %t = "tosa.const"() <{value = dense<[1, -2, 3, 9223372036854775807, -9223372036854775808]> : tensor<5xi64>}> : () -> tensor<5xi64>
  %zero = "tosa.const"() <{value = dense<0.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %xw = tosa.mul %x, %w {shift = 0 : i8} : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  %y = tosa.select %m, %xw, %zero : (tensor<1x4xi1>, tensor<3x4xf32>, tensor<1x1xf32>) -> tensor<3x4xf32>
  return %y, %t : tensor<3x4xf32>, tensor<5xi64>
}
)";
  auto sim = compileForSim(ir, "f");
  ASSERT_TRUE(sim);
  const auto &plan = sim->getPlan();
  ASSERT_EQ(plan.constants.size(), 3u) << plan.str();
  // Which is which, by size: 16 bytes of f32, 4 of bools, 40 of i64.
  int weight = -1, mask = -1, table = -1;
  for (size_t i = 0; i < plan.constants.size(); ++i) {
    size_t n = plan.constants[i]->size();
    (n == 16 ? weight : n == 4 ? mask : table) = int(i);
  }
  ASSERT_TRUE(weight >= 0 && mask >= 0 && table >= 0) << plan.str();
  EXPECT_EQ(valuesOf<float>(*plan.constants[weight]),
            (std::vector<float>{0.5f, -2.0f, 3.0f, 0.25f}));
  EXPECT_EQ(*plan.constants[mask], (std::vector<uint8_t>{1, 0, 1, 1}));
  EXPECT_EQ(valuesOf<int64_t>(*plan.constants[table]),
            (std::vector<int64_t>{1, -2, 3, INT64_MAX, INT64_MIN}));
  EXPECT_EQ(readsOf(plan, weight), 1) << plan.str();
  EXPECT_EQ(readsOf(plan, mask), 1) << plan.str();
  EXPECT_EQ(readsOf(plan, table), 1) << plan.str();

  std::vector<float> x(12), y(12, -1.0f);
  for (int i = 0; i < 12; ++i)
    x[i] = float(i + 1);
  std::vector<int64_t> t(5, 0);
  TensorRef xr{x.data(), DType::F32, {3, 4}, {}};
  TensorRef yr{y.data(), DType::F32, {3, 4}, {}};
  TensorRef tr{t.data(), DType::I64, {5}, {}};
  ASSERT_EQ(errorText(sim->run({xr}, {yr, tr})), "");
  const float w[4] = {0.5f, -2.0f, 3.0f, 0.25f};
  const bool m[4] = {true, false, true, true};
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(y[i], m[i % 4] ? x[i] * w[i % 4] : 0.0f) << i;
  EXPECT_EQ(t, (std::vector<int64_t>{1, -2, 3, INT64_MAX, INT64_MIN}));
}

// One constant read by two kernels is uploaded once: one constant of the
// plan, read twice.
TEST(ConstantsOnSimTest, AConstantReadByTwoKernelsIsOneConstant) {
  std::string ir = R"(
func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %w = "tosa.const"() <{value = dense<[[1.0, 2.0, 4.0]]> : tensor<1x3xf32>}> : () -> tensor<1x3xf32>
  %a = tosa.add %x, %w : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %perm = "tosa.const"() <{value = dense<[1, 0]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %xt = tosa.transpose %x, %perm : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<3x2xf32>
  %wt = tosa.transpose %w, %perm : (tensor<1x3xf32>, tensor<2xi32>) -> tensor<3x1xf32>
  %b = tosa.mul %xt, %wt {shift = 0 : i8} : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  return %a, %b : tensor<2x3xf32>, tensor<3x2xf32>
}
)";
  auto sim = compileForSim(ir, "f");
  ASSERT_TRUE(sim);
  const auto &plan = sim->getPlan();
  ASSERT_EQ(plan.constants.size(), 1u) << plan.str();
  EXPECT_EQ(readsOf(plan, 0), 2) << plan.str();
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, a(6), b(6);
  TensorRef xr{x.data(), DType::F32, {2, 3}, {}};
  TensorRef ar{a.data(), DType::F32, {2, 3}, {}};
  TensorRef br{b.data(), DType::F32, {3, 2}, {}};
  ASSERT_EQ(errorText(sim->run({xr}, {ar, br})), "");
  EXPECT_EQ(a, (std::vector<float>{2, 4, 7, 5, 7, 10}));
  EXPECT_EQ(b, (std::vector<float>{1, 4, 4, 10, 12, 24}));
}

} // namespace
