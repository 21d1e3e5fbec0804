//===- RowNormGradsTest.cpp - layer_norm_grad and rms_norm_grad -*- C++ -*-===//
//
// Part of normfuse. The backward trailing-axis norms against float64
// references (LayerNorm's is the GroupNorm one with a single group of
// columns), on the shapes of the forward tests plus many-row tensors whose
// parameter gradients sum over several parallel chunks, and against central
// differences of the forward kernels (f64).
//
// Tolerances (relative L2 against float64 on the rounded inputs): f32 1e-5
// (1e-4 on the mean-shifted rows, where xhat itself is only good to about
// 4e-5), f16 1e-3 and bf16 8e-3 for dx; parameter gradients, always f32,
// 1e-5.
//
//===----------------------------------------------------------------------===//

#include "JITTestUtils.h"
#include "Reference.h"

#include <cmath>

using namespace nftest;

namespace {

struct GradCase {
  DType dtype;
  int64_t rows, cols;
  double mean = 0.0, std = 1.0;

  DType statType() const {
    return dtype == DType::F64 ? DType::F64 : DType::F32;
  }
  double dxTolerance() const {
    if (dtype == DType::F16)
      return 1e-3;
    if (dtype == DType::BF16)
      return 8e-3;
    return mean != 0.0 ? 1e-4 : 1e-5;
  }
};

double norm2(const std::vector<double> &v) {
  double sum = 0;
  for (double x : v)
    sum += x * x;
  return std::sqrt(sum);
}

std::string caseName(const testing::TestParamInfo<GradCase> &info) {
  const GradCase &c = info.param;
  return std::string(normfuse::getDTypeName(c.dtype)) + "_" +
         std::to_string(c.rows) + "x" + std::to_string(c.cols) +
         (c.mean != 0.0 ? "_meanShifted" : "");
}

/// "nf.layer_norm_grad" or "nf.rms_norm_grad" over the rows of (rows, cols)
/// tensors, with a scale; returns (dx, dscale[, dbias]).
std::string gradIR(const GradCase &c, bool layerNorm) {
  std::string x = tensorType(c.dtype, {c.rows, c.cols});
  std::string st = tensorType(c.statType(), {c.rows, 1});
  std::string p = tensorType(c.statType(), {c.cols});
  if (layerNorm)
    return "func.func @g(%dy: " + x + ", %x: " + x + ", %m: " + st +
           ", %r: " + st + ", %s: " + p + ") -> (" + x + ", " + p + ", " + p +
           ") {\n  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r scale "
           "%s {axis = 1 : i64} : (" +
           x + ", " + x + ", " + st + ", " + st + ", " + p + ") -> (" + x +
           ", " + p + ", " + p + ")\n  return %dx, %ds, %db : " + x + ", " + p +
           ", " + p + "\n}\n";
  return "func.func @g(%dy: " + x + ", %x: " + x + ", %r: " + st +
         ", %s: " + p + ") -> (" + x + ", " + p +
         ") {\n  %dx, %ds = nf.rms_norm_grad %dy, %x, %r scale %s {axis = 1 "
         ": i64} : (" +
         x + ", " + x + ", " + st + ", " + p + ") -> (" + x + ", " + p +
         ")\n  return %dx, %ds : " + x + ", " + p + "\n}\n";
}

class LayerNormGradTest : public testing::TestWithParam<GradCase> {};
class RMSNormGradTest : public testing::TestWithParam<GradCase> {};

TEST_P(LayerNormGradTest, MatchesFloat64Reference) {
  const GradCase &c = GetParam();
  auto kernel = compileOrFail(gradIR(c, true), "g");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(17);
  Buffer dy(c.dtype, {c.rows, c.cols}), x(c.dtype, {c.rows, c.cols}),
      mean(c.statType(), {c.rows, 1}), rstd(c.statType(), {c.rows, 1}),
      scale(c.statType(), {c.cols});
  dy.fillNormal(rng);
  x.fillNormal(rng, c.mean, c.std);
  scale.fillNormal(rng, 1.0, 0.5);
  std::vector<double> y, rmean, rrstd;
  layerNormReference(x.toDoubles(), c.cols, nullptr, nullptr, 1e-5, y, rmean,
                     rrstd);
  for (int64_t r = 0; r < c.rows; ++r) {
    mean.set(r, rmean[r]);
    rstd.set(r, rrstd[r]);
  }
  Buffer dx(c.dtype, {c.rows, c.cols}), dscale(c.statType(), {c.cols}),
      dbias(c.statType(), {c.cols});
  for (Buffer *b : {&dx, &dscale, &dbias})
    b->fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run(
                {dy.ref(), x.ref(), mean.ref(), rstd.ref(), scale.ref()},
                {dx.ref(), dscale.ref(), dbias.ref()})),
            "");

  std::vector<double> rdx, rds, rdb, s = scale.toDoubles();
  channelNormGradReference(
      dy.toDoubles(), x.toDoubles(), ChannelDims{c.rows, c.cols, 1, true}, 1,
      false, mean.toDoubles(), rstd.toDoubles(), &s, rdx, rds, rdb);
  EXPECT_LE(relativeError(dx.toDoubles(), rdx), c.dxTolerance());
  EXPECT_LE(relativeError(dscale.toDoubles(), rds), 1e-5);
  EXPECT_LE(relativeError(dbias.toDoubles(), rdb), 1e-5);
}

TEST_P(RMSNormGradTest, MatchesFloat64Reference) {
  const GradCase &c = GetParam();
  auto kernel = compileOrFail(gradIR(c, false), "g");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(19);
  Buffer dy(c.dtype, {c.rows, c.cols}), x(c.dtype, {c.rows, c.cols}),
      rstd(c.statType(), {c.rows, 1}), scale(c.statType(), {c.cols});
  dy.fillNormal(rng);
  x.fillNormal(rng, c.mean, c.std);
  scale.fillNormal(rng, 1.0, 0.5);
  std::vector<double> y, rrstd;
  rmsNormReference(x.toDoubles(), c.cols, nullptr, 1e-6, y, rrstd);
  for (int64_t r = 0; r < c.rows; ++r)
    rstd.set(r, rrstd[r]);
  Buffer dx(c.dtype, {c.rows, c.cols}), dscale(c.statType(), {c.cols});
  dx.fill(std::nan(""));
  dscale.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({dy.ref(), x.ref(), rstd.ref(), scale.ref()},
                                  {dx.ref(), dscale.ref()})),
            "");

  std::vector<double> rdx, rds, s = scale.toDoubles();
  rmsNormGradReference(dy.toDoubles(), x.toDoubles(), c.cols, rstd.toDoubles(),
                       &s, rdx, rds);
  if (c.cols == 1) {
    // dx = rstd * g * dy * (1 - x^2 / (x^2 + eps)): two terms within eps of
    // each other, so the error is measured against the terms' size.
    std::vector<double> out = dx.toDoubles(), diff(c.rows), term(c.rows);
    for (int64_t r = 0; r < c.rows; ++r) {
      diff[r] = out[r] - rdx[r];
      term[r] = rstd.get(r) * s[0] * dy.get(r);
    }
    EXPECT_LE(norm2(diff) / norm2(term), c.dxTolerance());
  } else {
    EXPECT_LE(relativeError(dx.toDoubles(), rdx), c.dxTolerance());
  }
  EXPECT_LE(relativeError(dscale.toDoubles(), rds), 1e-5);
}

std::vector<GradCase> shapes() {
  std::vector<GradCase> cases;
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {3, 1}, {5, 3}, {2, 7}, {4, 1000}, {3, 1537}, {2, 5121}})
      cases.push_back({dtype, rows, cols});
  // 300 and 1000 rows: several rows per parallel chunk, a partial last one.
  cases.push_back({DType::F32, 300, 64});
  cases.push_back({DType::BF16, 1000, 33});
  cases.push_back({DType::F32, 1, int64_t(1) << 20});
  cases.push_back({DType::F64, 3, 1537});
  cases.push_back({DType::F32, 4, 32768, 100.0, 0.01});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Shapes, LayerNormGradTest, testing::ValuesIn(shapes()),
                         caseName);
INSTANTIATE_TEST_SUITE_P(Shapes, RMSNormGradTest, testing::ValuesIn(shapes()),
                         caseName);

/// sum(dy * norm(x)) differentiated numerically through the f64 forward
/// kernel agrees with the gradient op (dx and dscale; dbias for LayerNorm).
void checkAgainstCentralDifferences(bool layerNorm) {
  const int64_t rows = 3, cols = 5;
  std::string x = tensorType(DType::F64, {rows, cols});
  std::string st = tensorType(DType::F64, {rows, 1});
  std::string p = tensorType(DType::F64, {cols});
  std::string fwd =
      layerNorm
          ? "func.func @f(%x: " + x + ", %s: " + p + ", %b: " + p + ") -> (" +
                x + ", " + st + ", " + st +
                ") {\n  %y, %m, %r = nf.layer_norm %x scale %s bias %b {axis "
                "= 1 : i64} : (" +
                x + ", " + p + ", " + p + ") -> (" + x + ", " + st + ", " + st +
                ")\n  return %y, %m, %r : " + x + ", " + st + ", " + st +
                "\n}\n"
          : "func.func @f(%x: " + x + ", %s: " + p + ") -> (" + x + ", " + st +
                ") {\n  %y, %r = nf.rms_norm %x scale %s {axis = 1 : i64, "
                "epsilon = 1.0e-6} : (" +
                x + ", " + p + ") -> (" + x + ", " + st +
                ")\n  return %y, %r : " + x + ", " + st + "\n}\n";
  auto forward = compileOrFail(fwd, "f");
  auto backward =
      compileOrFail(gradIR(GradCase{DType::F64, rows, cols}, layerNorm), "g");
  ASSERT_TRUE(forward && backward);

  std::mt19937 rng(23);
  Buffer in(DType::F64, {rows, cols}), scale(DType::F64, {cols}),
      bias(DType::F64, {cols}), dy(DType::F64, {rows, cols});
  in.fillNormal(rng);
  scale.fillNormal(rng, 1.0, 0.5);
  bias.fillNormal(rng);
  dy.fillNormal(rng);
  Buffer y(DType::F64, {rows, cols}), mean(DType::F64, {rows, 1}),
      rstd(DType::F64, {rows, 1});
  auto loss = [&]() {
    llvm::Error err =
        layerNorm
            ? forward->run({in.ref(), scale.ref(), bias.ref()},
                           {y.ref(), mean.ref(), rstd.ref()})
            : forward->run({in.ref(), scale.ref()}, {y.ref(), rstd.ref()});
    EXPECT_EQ(errorText(std::move(err)), "");
    double l = 0;
    for (int64_t i = 0; i < y.size(); ++i)
      l += dy.get(i) * y.get(i);
    return l;
  };
  auto numeric = [&](Buffer &param) {
    std::vector<double> grad(param.size());
    for (int64_t i = 0; i < param.size(); ++i) {
      double v = param.get(i), h = 1e-6;
      param.set(i, v + h);
      double up = loss();
      param.set(i, v - h);
      double down = loss();
      param.set(i, v);
      grad[i] = (up - down) / (2 * h);
    }
    return grad;
  };
  std::vector<double> ndx = numeric(in), nds = numeric(scale),
                      ndb = numeric(bias);
  loss();
  Buffer dx(DType::F64, {rows, cols}), dscale(DType::F64, {cols}),
      dbias(DType::F64, {cols});
  llvm::Error err =
      layerNorm ? backward->run(
                      {dy.ref(), in.ref(), mean.ref(), rstd.ref(), scale.ref()},
                      {dx.ref(), dscale.ref(), dbias.ref()})
                : backward->run({dy.ref(), in.ref(), rstd.ref(), scale.ref()},
                                {dx.ref(), dscale.ref()});
  ASSERT_EQ(errorText(std::move(err)), "");
  EXPECT_LE(relativeError(dx.toDoubles(), ndx), 1e-7);
  EXPECT_LE(relativeError(dscale.toDoubles(), nds), 1e-7);
  if (layerNorm)
    EXPECT_LE(relativeError(dbias.toDoubles(), ndb), 1e-7);
}

TEST(LayerNormGradTest, MatchesCentralDifferencesOfForward) {
  checkAgainstCentralDifferences(true);
}

TEST(RMSNormGradTest, MatchesCentralDifferencesOfForward) {
  checkAgainstCentralDifferences(false);
}

} // namespace
