//===- RowNormGradsTest.cpp - layer_norm_grad and rms_norm_grad -*- C++ -*-===//
//
// Part of normfuse. The backward trailing-axis norms against float64
// references (LayerNorm's is the GroupNorm one with a single group of
// columns), on the shapes of the forward tests plus many-row tensors whose
// parameter gradients sum over several parallel chunks, and against central
// differences of the forward kernels (f64).
//
// Tolerances: RowNormGradChecks.h.
//
//===----------------------------------------------------------------------===//

#include "RowNormGradChecks.h"

using namespace nftest;

namespace {

using GradCase = RowNormGradShape;

std::string caseName(const testing::TestParamInfo<GradCase> &info) {
  const GradCase &c = info.param;
  return std::string(normfuse::getDTypeName(c.dtype)) + "_" +
         std::to_string(c.rows) + "x" + std::to_string(c.cols) +
         (c.mean != 0.0 ? "_meanShifted" : "");
}

std::string gradIR(const GradCase &c, bool layerNorm) {
  return rowNormGradIR(c.dtype, c.rows, c.cols, layerNorm);
}

class LayerNormGradTest : public testing::TestWithParam<GradCase> {};
class RMSNormGradTest : public testing::TestWithParam<GradCase> {};

TEST_P(LayerNormGradTest, MatchesFloat64Reference) {
  auto kernel = compileOrFail(gradIR(GetParam(), true), "g");
  ASSERT_TRUE(kernel);
  expectRowNormGradMatchesReference(*kernel, GetParam(), true);
}

TEST_P(RMSNormGradTest, MatchesFloat64Reference) {
  auto kernel = compileOrFail(gradIR(GetParam(), false), "g");
  ASSERT_TRUE(kernel);
  expectRowNormGradMatchesReference(*kernel, GetParam(), false);
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
