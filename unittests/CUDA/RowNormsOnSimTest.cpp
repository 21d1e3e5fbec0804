//===- RowNormsOnSimTest.cpp - CUDA layer/rms norm in the simulator -*- C++
//-*-===//
//
// Part of normfuse. The CUDA kernels of layer_norm and rms_norm, printed as
// CUDA C++ and run by the CUDA simulator, against float64 references, on
// shapes chosen to reach every path of each schedule: 1-element rows, odd
// sizes (single elements below 4 vectors a row, peeled rows beyond), vector
// tails (rows that do not fill the last
// register vector of every lane), a last block with rows past the end
// (warp rows), rows split into several chunks with a partial last one,
// f32/f16/bf16/f64, rows spread over clusters of 2 to 8 blocks (sm_90's
// choice from 8193 to 262144 elements), a 2^20-element row, and rows with
// mean 100 and std
// 0.01 where E[x^2] - E[x]^2 would cancel (also split across blocks).
// Small shapes are forced through each schedule. Outputs are poisoned with NaN
// by the simulator (and here), so an unwritten element fails.
//
// Tolerances (relative L2 against float64) are those of the CPU tests:
// f32 1e-5 (1e-3 mean-shifted), f16 1e-3, bf16 8e-3; statistics 1e-5.
//
//===----------------------------------------------------------------------===//

#include "CudaSimTestUtils.h"
#include "Reference.h"

#include <cmath>

using namespace nftest;
using normfuse::runtime::SimStats;

namespace {

struct SimNormCase {
  DType dtype;
  int64_t rows, cols;
  std::string schedule = "auto";
  double mean = 0.0, std = 1.0;
};

std::string describe(const SimNormCase &c) {
  std::string name = std::string(normfuse::getDTypeName(c.dtype)) + "_" +
                     std::to_string(c.rows) + "x" + std::to_string(c.cols) +
                     "_" + c.schedule;
  for (char &ch : name)
    if (ch == '-')
      ch = '_';
  if (c.mean != 0.0)
    name += "_meanShifted";
  return name;
}

std::string caseName(const testing::TestParamInfo<SimNormCase> &info) {
  return describe(info.param);
}

// gtest prints a parameter with this instead of its bytes.
[[maybe_unused]] void PrintTo(const SimNormCase &c, std::ostream *os) {
  *os << describe(c);
}

DType statType(DType d) { return d == DType::F64 ? DType::F64 : DType::F32; }

double outputTolerance(const SimNormCase &c) {
  switch (c.dtype) {
  case DType::F16:
    return 1e-3;
  case DType::BF16:
    return 8e-3;
  default:
    return c.mean != 0.0 ? 1e-3 : 1e-5;
  }
}

class LayerNormOnSimTest : public testing::TestWithParam<SimNormCase> {};
class RMSNormOnSimTest : public testing::TestWithParam<SimNormCase> {};

TEST_P(LayerNormOnSimTest, MatchesFloat64Reference) {
  const SimNormCase &c = GetParam();
  auto kernel =
      compileForSim(layerNormIR(c.dtype, c.rows, c.cols), "ln", c.schedule);
  ASSERT_TRUE(kernel);
  std::mt19937 rng(42);
  Buffer in(c.dtype, {c.rows, c.cols}), scale(DType::F32, {c.cols}),
      bias(DType::F32, {c.cols});
  in.fillNormal(rng, c.mean, c.std);
  scale.fillNormal(rng, 1.0, 0.5);
  bias.fillNormal(rng);
  Buffer y(c.dtype, {c.rows, c.cols}), mean(statType(c.dtype), {c.rows, 1}),
      rstd(statType(c.dtype), {c.rows, 1});
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

TEST_P(RMSNormOnSimTest, MatchesFloat64Reference) {
  const SimNormCase &c = GetParam();
  std::string x = tensorType(c.dtype, {c.rows, c.cols});
  std::string p = tensorType(c.dtype, {c.cols});
  std::string st = tensorType(statType(c.dtype), {c.rows, 1});
  std::string ir = "func.func @rms(%x: " + x + ", %s: " + p + ") -> (" + x +
                   ", " + st +
                   ") {\n  %y, %r = nf.rms_norm %x scale %s {axis = 1 : i64, "
                   "epsilon = 1.0e-6} : (" +
                   x + ", " + p + ") -> (" + x + ", " + st +
                   ")\n  return %y, %r : " + x + ", " + st + "\n}\n";
  auto kernel = compileForSim(ir, "rms", c.schedule);
  ASSERT_TRUE(kernel);
  std::mt19937 rng(7);
  Buffer in(c.dtype, {c.rows, c.cols}), scale(c.dtype, {c.cols});
  in.fillNormal(rng, c.mean, c.std);
  scale.fillNormal(rng, 1.0, 0.5);
  Buffer y(c.dtype, {c.rows, c.cols}), rstd(statType(c.dtype), {c.rows, 1});
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

std::vector<SimNormCase> cases() {
  std::vector<SimNormCase> v;
  // Automatic choices: warp rows (1 to 1024 elements), block rows in
  // registers (to 32 elements a thread), split rows beyond.
  for (DType d : {DType::F32, DType::F16, DType::BF16})
    for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {3, 1}, {9, 17}, {4, 1000}, {3, 1537}, {2, 5121}})
      v.push_back({d, rows, cols});
  v.push_back({DType::F64, 3, 1537});
  // Clusters (sm_90, the default target): 2 blocks of 256 threads (16384
  // f32), 3 of 224 (a peeled row of 20001 f16), 8 of 1024 (262144 bf16).
  v.push_back({DType::F32, 2, 16384});
  v.push_back({DType::F16, 2, 20001});
  v.push_back({DType::BF16, 1, 262144});
  v.push_back({DType::F32, 1, int64_t(1) << 20});
  v.push_back({DType::BF16, 1, int64_t(1) << 20});
  // Each schedule forced on small rows: vector tails, odd sizes, and for
  // warp rows a last block whose rows run past the end. Rows of 37 are
  // peeled (16-byte vectors from each row's first 16-byte boundary, single
  // elements before and after): 3 rows of f32 start 0, 1 and 2 elements
  // past a boundary (heads of 0, 3 and 2 elements), f16 rows need a head
  // of up to 7 elements from as few as 4 vectors a row.
  for (const char *s : {"warp-rows", "block-row-registers",
                        "block-row-streaming", "split-row", "cluster-row"})
    for (auto [d, rows, cols] :
         std::vector<std::tuple<DType, int64_t, int64_t>>{
             {DType::F32, 5, 3},
             {DType::F16, 3, 40},
             {DType::BF16, 2, 2056},
             {DType::F32, 3, 37},
             {DType::F16, 3, 37}})
      v.push_back({d, rows, cols, s});
  // Split rows of several chunks (64 vectors each when forced), the last
  // one partial: 1000 f32 is 4 chunks of 256, the last of 232; 999 f32 has
  // no vector, 16 chunks of 64.
  v.push_back({DType::F32, 3, 1000, "split-row"});
  v.push_back({DType::F32, 2, 999, "split-row"});
  v.push_back({DType::F64, 2, 1000, "split-row"});
  // Forced clusters of 8 blocks of 32 threads (1000 f64: 500 vectors of 2),
  // and of 8 blocks of 64 threads with vector tails (999 f32, 1 element
  // a vector).
  v.push_back({DType::F64, 2, 1000, "cluster-row"});
  v.push_back({DType::F32, 2, 999, "cluster-row"});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Shapes, LayerNormOnSimTest, testing::ValuesIn(cases()),
                         caseName);
INSTANTIATE_TEST_SUITE_P(Shapes, RMSNormOnSimTest, testing::ValuesIn(cases()),
                         caseName);
// Mean 100, std 0.01: E[x^2] - E[x]^2 is 1e4 - 1e4 in f32, all cancellation.
INSTANTIATE_TEST_SUITE_P(
    MeanShifted, LayerNormOnSimTest,
    testing::Values(SimNormCase{DType::F32, 4, 32768, "auto", 100.0, 0.01},
                    SimNormCase{DType::F32, 2, 65536, "auto", 100.0, 0.01}),
    caseName);

} // namespace
