//===- RowNormGradsOnSimTest.cpp - CUDA norm gradients in the simulator ---===//
//
// Part of normfuse. The CUDA kernels of layer_norm_grad and rms_norm_grad,
// printed as CUDA C++ and run by the CUDA simulator, against float64
// references, on shapes chosen to reach every path of their schedules:
// 1-element rows, odd sizes (no vectors, or peeled: a head and a tail of
// single elements around 16-byte vectors), vector tails, a last block of
// warp rows past the end, blocks that loop over several rows (forced
// schedules use two blocks), rows split into several chunks with a
// partial last one, rows held by clusters of blocks (sm_90), f32/f16/bf16/f64,
// a 2^20-element row and mean-shifted rows. Outputs are poisoned with NaN, so
// an unwritten element fails.
//
// The check and its tolerances are the CPU tests' (RowNormGradChecks.h).
//
//===----------------------------------------------------------------------===//

#include "CudaSimTestUtils.h"
#include "RowNormGradChecks.h"

using namespace nftest;

namespace {

struct SimGradCase : RowNormGradShape {
  SimGradCase(DType dtype, int64_t rows, int64_t cols,
              std::string schedule = "auto", double mean = 0.0,
              double std = 1.0)
      : RowNormGradShape{dtype, rows, cols, mean, std},
        schedule(std::move(schedule)) {}
  std::string schedule;
};

std::string describe(const SimGradCase &c) {
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

std::string caseName(const testing::TestParamInfo<SimGradCase> &info) {
  return describe(info.param);
}

[[maybe_unused]] void PrintTo(const SimGradCase &c, std::ostream *os) {
  *os << describe(c);
}

class LayerNormGradOnSimTest : public testing::TestWithParam<SimGradCase> {};
class RMSNormGradOnSimTest : public testing::TestWithParam<SimGradCase> {};

TEST_P(LayerNormGradOnSimTest, MatchesFloat64Reference) {
  const SimGradCase &c = GetParam();
  auto kernel = compileForSim(rowNormGradIR(c.dtype, c.rows, c.cols, true), "g",
                              c.schedule);
  ASSERT_TRUE(kernel);
  expectRowNormGradMatchesReference(*kernel, c, true);
}

TEST_P(RMSNormGradOnSimTest, MatchesFloat64Reference) {
  const SimGradCase &c = GetParam();
  auto kernel = compileForSim(rowNormGradIR(c.dtype, c.rows, c.cols, false),
                              "g", c.schedule);
  ASSERT_TRUE(kernel);
  expectRowNormGradMatchesReference(*kernel, c, false);
}

std::vector<SimGradCase> cases() {
  std::vector<SimGradCase> v;
  // Automatic choices on sm_90: warp rows (to 16 elements a thread), block
  // rows in registers (to 512 threads, 8192 elements), clusters of 2 to 8
  // blocks (to 65536: 10007 single columns take 3 blocks of 256 threads,
  // 14 a thread, the last chunk partial), split rows beyond.
  for (DType d : {DType::F32, DType::F16, DType::BF16})
    for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {3, 1}, {9, 17}, {4, 1000}, {3, 1537}, {2, 5121}})
      v.push_back({d, rows, cols});
  v.push_back({DType::F32, 300, 64});
  v.push_back({DType::F32, 3, 10007});
  v.push_back({DType::BF16, 3, 10007});
  v.push_back({DType::F64, 3, 1537});
  v.push_back({DType::F32, 1, int64_t(1) << 20});
  // Each schedule forced (two blocks, so blocks loop over rows): odd
  // sizes, vector tails, a last group of warp rows past the end.
  for (const char *s :
       {"warp-rows", "block-row-registers", "cluster-row", "split-row"})
    for (auto [d, rows, cols] :
         std::vector<std::tuple<DType, int64_t, int64_t>>{
             {DType::F32, 5, 3},
             {DType::F16, 3, 40},
             {DType::BF16, 2, 2056},
             {DType::F32, 37, 64}})
      v.push_back({d, rows, cols, s});
  // Peeled rows (no 16-byte vector divides them): each block's rows start
  // at one offset within a vector (rows rowSlots apart, a multiple of the
  // vector width), over many trips (two blocks forced: 8 row slots of
  // bf16, 4 of f32), a head of 1 to 7 elements in all but one row in 8;
  // warp rows of several row groups a block, clusters and split rows of
  // several chunks each with its own head and tail.
  for (const char *s :
       {"warp-rows", "block-row-registers", "cluster-row", "split-row"})
    for (auto [d, rows, cols] :
         std::vector<std::tuple<DType, int64_t, int64_t>>{
             {DType::BF16, 37, 41},
             {DType::F32, 37, 67},
             {DType::F16, 19, 1029},
             {DType::F64, 9, 999}})
      v.push_back({d, rows, cols, s});
  v.push_back({DType::BF16, 67, 5121});
  // Split rows of several chunks (64 vectors each when forced), the last
  // one partial.
  v.push_back({DType::F32, 3, 1000, "split-row"});
  v.push_back({DType::F32, 2, 999, "split-row"});
  v.push_back({DType::F64, 2, 1000, "split-row"});
  // Forced clusters (blocks of 32 threads with 2 vectors each, one cluster
  // looping over every row, so the slots of the exchanges alternate): 4
  // blocks of 256 columns, the last partial; 8 blocks of 128 single
  // columns; f64.
  v.push_back({DType::F32, 7, 1000, "cluster-row"});
  v.push_back({DType::F32, 3, 999, "cluster-row"});
  v.push_back({DType::F64, 3, 1000, "cluster-row"});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Shapes, LayerNormGradOnSimTest,
                         testing::ValuesIn(cases()), caseName);
// RMSNorm's kernels are LayerNorm's without the mean terms: a shorter
// list reaches each of their paths.
std::vector<SimGradCase> rmsCases() {
  std::vector<SimGradCase> v = {{DType::F32, 1, 1},
                                {DType::F32, 9, 17},
                                {DType::F32, 3, 1537},
                                {DType::BF16, 9, 17},
                                {DType::BF16, 2, 5121},
                                {DType::BF16, 37, 41, "warp-rows"},
                                {DType::BF16, 19, 1029, "cluster-row"},
                                {DType::F32, 37, 67, "split-row"},
                                {DType::BF16, 3, 10007},
                                {DType::F32, 1, int64_t(1) << 20},
                                {DType::F32, 2, 999, "split-row"},
                                {DType::F32, 5, 999, "cluster-row"}};
  for (const char *s : {"warp-rows", "block-row-registers", "split-row"})
    for (auto [rows, cols] :
         std::vector<std::pair<int64_t, int64_t>>{{5, 3}, {37, 64}})
      v.push_back({DType::F32, rows, cols, s});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Shapes, RMSNormGradOnSimTest,
                         testing::ValuesIn(rmsCases()), caseName);
INSTANTIATE_TEST_SUITE_P(MeanShifted, LayerNormGradOnSimTest,
                         testing::Values(SimGradCase{DType::F32, 4, 32768,
                                                     "auto", 100.0, 0.01}),
                         caseName);

} // namespace
