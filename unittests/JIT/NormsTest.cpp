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

/// Runs f32 layer_norm without scale or bias over the (rows, cols) `in`
/// and expects y and the mean within `tolerance` (relative L2) of float64,
/// and each rstd within 1e-6 of its own value.
void expectLayerNormMatchesFloat64(const Buffer &in, int64_t rows, int64_t cols,
                                   double tolerance) {
  std::string x = tensorType(DType::F32, {rows, cols});
  std::string st = tensorType(DType::F32, {rows, 1});
  std::string ir =
      "func.func @ln(%x: " + x + ") -> (" + x + ", " + st + ", " + st +
      ") {\n  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (" + x +
      ") -> (" + x + ", " + st + ", " + st + ")\n  return %y, %m, %r : " + x +
      ", " + st + ", " + st + "\n}\n";
  auto kernel = compileOrFail(ir, "ln");
  ASSERT_TRUE(kernel);
  Buffer x0 = in;
  Buffer y(DType::F32, {rows, cols}), mean(DType::F32, {rows, 1}),
      rstd(DType::F32, {rows, 1});
  for (Buffer *out : {&y, &mean, &rstd})
    out->fill(std::nan(""));
  ASSERT_EQ(
      errorText(kernel->run({x0.ref()}, {y.ref(), mean.ref(), rstd.ref()})),
      "");
  std::vector<double> ry, rmean, rrstd;
  layerNormReference(in.toDoubles(), cols, nullptr, nullptr, 1e-5, ry, rmean,
                     rrstd);
  EXPECT_LE(relativeError(y.toDoubles(), ry), tolerance);
  EXPECT_LE(relativeError(mean.toDoubles(), rmean), tolerance);
  for (int64_t r = 0; r < rows; ++r)
    EXPECT_NEAR(rstd.get(r), rrstd[r], 1e-6 * rrstd[r]) << "row " << r;
}

// LayerNorm sums a row in one pass around the mean of its first 16
// elements, and makes a second pass around the mean when that center is
// more than a standard deviation away. Rows 0 and 1 start with 16 elements
// at +1000 and -1000 (std about 16, so a single pass around them would
// lose about 12 bits of the variance to cancellation); row 2 is ordinary.
TEST(LayerNormCenterTest, RowsStartingFarFromTheirMeanMatchFloat64) {
  const int64_t rows = 3, cols = 65536;
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  Buffer in(DType::F32, {rows, cols});
  for (int64_t j = 0; j < cols; ++j) {
    in.set(j, j < 16 ? 1000.0 : 0.01 * normal(rng));
    in.set(cols + j, j < 16 ? -1000.0 : 5.0 + normal(rng));
    in.set(2 * cols + j, normal(rng));
  }
  expectLayerNormMatchesFloat64(in, rows, cols, 1e-5);
}

// A finite f32 row whose squares overflow f32 (rows alternating +-3e38, the
// variance 9e76) has finite statistics: they are taken again in f64, and
// rstd (3.3e-39) is a subnormal f32. Each row also holds one element that
// makes its mean nonzero (13 columns: the mean is 3e38 / 13).
TEST(LayerNormOverflowTest, RowsAlternatingPlusMinus3e38MatchFloat64) {
  const int64_t rows = 4, cols = 13;
  Buffer in(DType::F32, {rows, cols});
  for (int64_t i = 0; i < rows * cols; ++i)
    in.set(i, (i % 2 ? -3e38 : 3e38) * (i / cols % 2 ? -1 : 1));
  expectLayerNormMatchesFloat64(in, rows, cols, 1e-5);
}

// bf16 rows round without the NaN case where no result can be a NaN (the
// scale, bias, variance and rstd all finite), and with it elsewhere: every
// NaN result is the canonical 0x7FC0 either way. Rows of 40 (two blocks of
// 16 and a tail of 8): a constant row, an ordinary one, one with a NaN, one
// with an infinity, and one whose squares overflow f32 (3.3e38 and 39
// times -3.3e38: its statistics are taken again in f64, and bf16 rows
// normalize as x * rstd - mean * rstd, so y is finite and right); with
// scale[3] = +inf, then with a finite scale.
TEST(BF16LayerNormTest, NaNResultsAreTheCanonicalNaN) {
  const int64_t rows = 5, cols = 40;
  std::string x = tensorType(DType::BF16, {rows, cols});
  std::string p = tensorType(DType::F32, {cols});
  std::string st = tensorType(DType::F32, {rows, 1});
  std::string ir = "func.func @ln(%x: " + x + ", %s: " + p + ", %b: " + p +
                   ") -> " + x +
                   " {\n  %y, %m, %r = nf.layer_norm %x scale %s bias %b "
                   "{axis = 1 : i64} : (" +
                   x + ", " + p + ", " + p + ") -> (" + x + ", " + st + ", " +
                   st + ")\n  return %y : " + x + "\n}\n";
  auto kernel = compileOrFail(ir, "ln");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(13);
  Buffer in(DType::BF16, {rows, cols}), scale(DType::F32, {cols}),
      bias(DType::F32, {cols});
  in.fillNormal(rng);
  for (int64_t j = 0; j < cols; ++j)
    in.set(j, 0.0);
  in.set(2 * cols + 5, std::nan(""));
  in.set(3 * cols + 20, INFINITY);
  for (int64_t j = 0; j < cols; ++j)
    in.set(4 * cols + j, j == 0 ? 3.3e38 : -3.3e38);
  scale.fill(1.0);
  bias.fill(0.25);
  auto bits = [](Buffer &b, int64_t i) {
    return static_cast<const uint16_t *>(b.ref().data)[i];
  };
  for (double scale3 : {double(INFINITY), 1.0}) {
    SCOPED_TRACE("scale[3] = " + std::to_string(scale3));
    scale.set(3, scale3);
    Buffer y(DType::BF16, {rows, cols});
    y.fill(-1.0);
    ASSERT_EQ(
        errorText(kernel->run({in.ref(), scale.ref(), bias.ref()}, {y.ref()})),
        "");
    std::vector<double> ry, rmean, rrstd, s = scale.toDoubles(),
                                          b = bias.toDoubles();
    layerNormReference(in.toDoubles(), cols, &s, &b, 1e-5, ry, rmean, rrstd);
    for (int64_t j = 0; j < cols; ++j) {
      // Row 0: (x - mean) = 0, so y = bias, and 0 * inf = NaN at column 3.
      EXPECT_EQ(bits(y, j), j == 3 && scale3 != 1.0 ? 0x7FC0 : 0x3E80)
          << "row 0, column " << j;
      // Row 1: infinities at column 3 with the sign of x - mean.
      double expected = ry[cols + j];
      if (std::isinf(expected))
        EXPECT_EQ(bits(y, cols + j), expected > 0 ? 0x7F80 : 0xFF80)
            << "row 1, column " << j;
      else
        EXPECT_NEAR(y.get(cols + j), expected, 1e-2 * std::abs(expected))
            << "row 1, column " << j;
      // Rows 2 and 3: a NaN or an infinity in x makes every result NaN.
      EXPECT_EQ(bits(y, 2 * cols + j), 0x7FC0) << "row 2, column " << j;
      EXPECT_EQ(bits(y, 3 * cols + j), 0x7FC0) << "row 3, column " << j;
    }
    for (int64_t j = 0; j < cols; ++j) {
      double expected = ry[4 * cols + j];
      if (std::isnan(expected))
        EXPECT_EQ(bits(y, 4 * cols + j), 0x7FC0) << "row 4, column " << j;
      else if (std::isinf(expected))
        EXPECT_EQ(y.get(4 * cols + j), expected) << "row 4, column " << j;
      else
        EXPECT_NEAR(y.get(4 * cols + j), expected, 1e-2 * std::abs(expected))
            << "row 4, column " << j;
    }
    for (int64_t i = 0; i < rows * cols; ++i)
      if (std::isnan(y.get(i)))
        EXPECT_EQ(bits(y, i), 0x7FC0) << "element " << i;
  }
}

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
