//===- NormsTest.cpp - layer_norm and rms_norm on the CPU -------*- C++ -*-===//
//
// Part of normfuse. Runs the JIT-compiled norms on every dtype and on shapes
// that break naive kernels (1-element rows, odd sizes, 2^20-element rows,
// rows with mean 100 and std 0.01 where E[x^2] - E[x]^2 cancels in f32) and
// compares with a float64 reference computed here. Outputs are poisoned
// with NaN first, so an element left unwritten fails the test.
//
// Tolerances (relative L2 error against float64): f32 1e-5 on N(0, 1)
// data and 1e-3 on the mean-shifted rows; f16 outputs 1e-3 and bf16 outputs
// 8e-3 (their rounding alone costs about 3e-4 and 2.5e-3); statistics,
// always f32, 1e-5.
//
//===----------------------------------------------------------------------===//

#include "JITTestUtils.h"
#include "Reference.h"

using namespace nftest;

namespace {

struct NormCase {
  DType dtype;
  int64_t rows, cols;
  double mean = 0.0, std = 1.0;
};

std::string caseName(const testing::TestParamInfo<NormCase> &info) {
  const NormCase &c = info.param;
  std::string name = std::string(normfuse::getDTypeName(c.dtype)) + "_" +
                     std::to_string(c.rows) + "x" + std::to_string(c.cols);
  if (c.mean != 0.0)
    name += "_meanShifted";
  return name;
}

DType statType(const NormCase &c) {
  return c.dtype == DType::F64 ? DType::F64 : DType::F32;
}

double outputTolerance(const NormCase &c) {
  switch (c.dtype) {
  case DType::F16:
    return 1e-3;
  case DType::BF16:
    return 8e-3;
  default:
    return c.mean != 0.0 ? 1e-3 : 1e-5;
  }
}

class LayerNormTest : public testing::TestWithParam<NormCase> {};
class RMSNormTest : public testing::TestWithParam<NormCase> {};

TEST_P(LayerNormTest, MatchesFloat64Reference) {
  const NormCase &c = GetParam();
  std::string x = tensorType(c.dtype, {c.rows, c.cols});
  std::string p = tensorType(DType::F32, {c.cols});
  std::string st = tensorType(statType(c), {c.rows, 1});
  std::string ir = "func.func @ln(%x: " + x + ", %s: " + p + ", %b: " + p +
                   ") -> (" + x + ", " + st + ", " + st +
                   ") {\n"
                   "  %y, %m, %r = nf.layer_norm %x scale %s bias %b "
                   "{axis = 1 : i64} : (" +
                   x + ", " + p + ", " + p + ") -> (" + x + ", " + st + ", " +
                   st +
                   ")\n"
                   "  return %y, %m, %r : " +
                   x + ", " + st + ", " + st + "\n}\n";
  auto kernel = compileOrFail(ir, "ln");
  ASSERT_TRUE(kernel);

  std::mt19937 rng(42);
  Buffer in(c.dtype, {c.rows, c.cols}), scale(DType::F32, {c.cols}),
      bias(DType::F32, {c.cols});
  in.fillNormal(rng, c.mean, c.std);
  scale.fillNormal(rng, 1.0, 0.5);
  bias.fillNormal(rng);
  Buffer y(c.dtype, {c.rows, c.cols}), mean(statType(c), {c.rows, 1}),
      rstd(statType(c), {c.rows, 1});
  for (Buffer *out : {&y, &mean, &rstd})
    out->fill(std::nan(""));

  ASSERT_EQ(errorText(kernel->run({in.ref(), scale.ref(), bias.ref()},
                                  {y.ref(), mean.ref(), rstd.ref()})),
            "");

  std::vector<double> ry, rmean, rrstd, s = scale.toDoubles(),
                                        b = bias.toDoubles();
  layerNormReference(in.toDoubles(), c.cols, &s, &b, 1e-5, ry, rmean, rrstd);
  EXPECT_LE(relativeError(y.toDoubles(), ry), outputTolerance(c));
  EXPECT_LE(relativeError(mean.toDoubles(), rmean), 1e-5);
  EXPECT_LE(relativeError(rstd.toDoubles(), rrstd),
            c.mean != 0.0 ? 1e-3 : 1e-5);
}

TEST_P(RMSNormTest, MatchesFloat64Reference) {
  const NormCase &c = GetParam();
  std::string x = tensorType(c.dtype, {c.rows, c.cols});
  std::string p = tensorType(c.dtype, {c.cols});
  std::string st = tensorType(statType(c), {c.rows, 1});
  std::string ir = "func.func @rms(%x: " + x + ", %s: " + p + ") -> (" + x +
                   ", " + st +
                   ") {\n"
                   "  %y, %r = nf.rms_norm %x scale %s {axis = 1 : i64, "
                   "epsilon = 1.0e-6} : (" +
                   x + ", " + p + ") -> (" + x + ", " + st +
                   ")\n"
                   "  return %y, %r : " +
                   x + ", " + st + "\n}\n";
  auto kernel = compileOrFail(ir, "rms");
  ASSERT_TRUE(kernel);

  std::mt19937 rng(7);
  Buffer in(c.dtype, {c.rows, c.cols}), scale(c.dtype, {c.cols});
  in.fillNormal(rng, c.mean, c.std);
  scale.fillNormal(rng, 1.0, 0.5);
  Buffer y(c.dtype, {c.rows, c.cols}), rstd(statType(c), {c.rows, 1});
  y.fill(std::nan(""));
  rstd.fill(std::nan(""));

  ASSERT_EQ(
      errorText(kernel->run({in.ref(), scale.ref()}, {y.ref(), rstd.ref()})),
      "");
  std::vector<double> ry, rrstd, s = scale.toDoubles();
  rmsNormReference(in.toDoubles(), c.cols, &s, 1e-6, ry, rrstd);
  EXPECT_LE(relativeError(y.toDoubles(), ry), outputTolerance(c));
  EXPECT_LE(relativeError(rstd.toDoubles(), rrstd), 1e-5);
}

std::vector<NormCase> shapes() {
  std::vector<NormCase> cases;
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (auto [rows, cols] :
         std::vector<std::pair<int64_t, int64_t>>{{1, 1},
                                                  {3, 1},
                                                  {5, 3},
                                                  {2, 7},
                                                  {2, 17},
                                                  {4, 1000},
                                                  {3, 1537},
                                                  {2, 5121}})
      cases.push_back({dtype, rows, cols});
  cases.push_back({DType::F32, 1, int64_t(1) << 20});
  cases.push_back({DType::F16, 1, int64_t(1) << 20});
  cases.push_back({DType::BF16, 1, int64_t(1) << 20});
  cases.push_back({DType::F64, 3, 1537});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Shapes, LayerNormTest, testing::ValuesIn(shapes()),
                         caseName);
INSTANTIATE_TEST_SUITE_P(Shapes, RMSNormTest, testing::ValuesIn(shapes()),
                         caseName);

// Mean 100, std 0.01: E[x^2] - E[x]^2 is 1e4 - 1e4 in f32, all cancellation.
INSTANTIATE_TEST_SUITE_P(MeanShifted, LayerNormTest,
                         testing::Values(NormCase{DType::F32, 4, 32768, 100.0,
                                                  0.01}),
                         caseName);

TEST(LayerNormAxisTest, NormalizesOverEveryTrailingDimension) {
  // axis = 1 of a (2, 3, 5) tensor: rows of 15 elements.
  std::string x = tensorType(DType::F32, {2, 3, 5});
  std::string st = tensorType(DType::F32, {2, 1, 1});
  std::string ir = "func.func @ln3(%x: " + x + ") -> (" + x + ", " + st +
                   ") {\n  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (" +
                   x + ") -> (" + x + ", " + st + ", " + st +
                   ")\n  return %y, %m : " + x + ", " + st + "\n}\n";
  auto kernel = compileOrFail(ir, "ln3");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(3);
  Buffer in(DType::F32, {2, 3, 5}), y(DType::F32, {2, 3, 5}),
      mean(DType::F32, {2, 1, 1});
  in.fillNormal(rng);
  ASSERT_EQ(errorText(kernel->run({in.ref()}, {y.ref(), mean.ref()})), "");
  std::vector<double> ry, rmean, rrstd;
  layerNormReference(in.toDoubles(), 15, nullptr, nullptr, 1e-5, ry, rmean,
                     rrstd);
  EXPECT_LE(relativeError(y.toDoubles(), ry), 1e-5);
  EXPECT_LE(relativeError(mean.toDoubles(), rmean), 1e-5);
}

} // namespace
