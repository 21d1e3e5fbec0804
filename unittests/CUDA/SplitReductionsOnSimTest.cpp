//===- SplitReductionsOnSimTest.cpp - reductions across blocks -*- C++ -*-===//
//
// Part of normfuse. A linalg reduction with too few results to fill the
// device (a sum over a whole tensor, the column sums of a few columns)
// splits each result's elements into parts, a block (or block column)
// each, and a second kernel adds a result's parts in part order
// (LowerLinalgReductions.cpp, LinalgReductionSchedule::splits). Each case
// runs in the simulator against the CPU back end on the same inputs:
// float sums within f64 rounding of the CPU's, extrema and integer
// reductions bit for bit; and each case checks that it was split.
//
//===----------------------------------------------------------------------===//

#include "CudaSimTestUtils.h"

using namespace nftest;

namespace {

struct SplitCase {
  const char *name;
  /// A function @f of one input.
  const char *ir;
  DType input;
  std::vector<int64_t> shape;
  /// Relative error allowed against the CPU (0: the same bits).
  double tolerance = 0;
};

[[maybe_unused]] void PrintTo(const SplitCase &c, std::ostream *os) {
  *os << c.name;
}

class SplitReductionOnSimTest : public testing::TestWithParam<SplitCase> {};

TEST_P(SplitReductionOnSimTest, MatchesTheCPUAcrossBlocks) {
  const SplitCase &c = GetParam();
  auto sim = compileForSim(c.ir, "f");
  auto cpu = sharedJIT().compile(c.ir, "f");
  ASSERT_TRUE(sim);
  ASSERT_TRUE(bool(cpu)) << llvm::toString(cpu.takeError());
  EXPECT_NE(sim->getSource().find("splits="), std::string::npos)
      << "the reduction was not split";
  EXPECT_NE(sim->getSource().find("_reduce_finish"), std::string::npos);

  std::mt19937 rng(5);
  const auto &out = sim->getSignature().outputs[0];
  if (c.input == DType::I32) {
    // Integers (Buffer holds floats): sums that wrap past 2^31.
    int64_t n = 1, results = 1;
    for (int64_t d : c.shape)
      n *= d;
    for (int64_t d : out.shape)
      results *= d;
    std::vector<int32_t> x(n), got(results, 7), expected(results, 9);
    for (int32_t &v : x)
      v = int32_t(rng());
    normfuse::TensorRef in{x.data(), DType::I32, c.shape, {}};
    ASSERT_EQ(
        errorText(sim->run({in}, {{got.data(), DType::I32, out.shape, {}}})),
        "");
    ASSERT_EQ(errorText((*cpu)->run(
                  {in}, {{expected.data(), DType::I32, out.shape, {}}})),
              "");
    EXPECT_EQ(got, expected);
    return;
  }
  Buffer x(c.input, c.shape);
  x.fillNormal(rng, 0.25, 2.0);
  Buffer got(out.dtype, out.shape), expected(out.dtype, out.shape);
  got.fill(std::nan(""));
  ASSERT_EQ(errorText(sim->run({x.ref()}, {got.ref()})), "");
  ASSERT_EQ(errorText((*cpu)->run({x.ref()}, {expected.ref()})), "");
  if (c.tolerance == 0)
    EXPECT_EQ(got.toDoubles(), expected.toDoubles());
  else
    EXPECT_LE(relativeError(got.toDoubles(), expected.toDoubles()),
              c.tolerance);
}

INSTANTIATE_TEST_SUITE_P(
    Reductions, SplitReductionOnSimTest,
    testing::Values(
        // One result of 200003 elements: block rows of 256 threads, the
        // last part short.
        SplitCase{"sum_of_a_long_row",
                  R"mlir(
func.func @f(%x: tensor<1x200003xf32>) -> tensor<1x1xf32> {
  %s = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<1x200003xf32>) -> tensor<1x1xf32>
  return %s : tensor<1x1xf32>
})mlir",
                  DType::F32,
                  {1, 200003},
                  1e-6},
        // Eight column sums of 6000 rows: one block column, split by rows.
        SplitCase{"column_sums_of_few_columns",
                  R"mlir(
func.func @f(%x: tensor<6000x8xf32>) -> tensor<1x8xf32> {
  %s = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<6000x8xf32>) -> tensor<1x8xf32>
  return %s : tensor<1x8xf32>
})mlir",
                  DType::F32,
                  {6000, 8},
                  1e-6},
        // A maximum of f16 rows: a combiner other than a sum.
        SplitCase{"max_of_two_long_rows",
                  R"mlir(
func.func @f(%x: tensor<2x70001xf16>) -> tensor<2x1xf16> {
  %m = tosa.reduce_max %x {axis = 1 : i32} : (tensor<2x70001xf16>) -> tensor<2x1xf16>
  return %m : tensor<2x1xf16>
})mlir",
                  DType::F16,
                  {2, 70001}},
        // An integer sum of random 32-bit values, exact (wrapping as the
        // CPU's does).
        SplitCase{"integer_sum",
                  R"mlir(
func.func @f(%x: tensor<3x90000xi32>) -> tensor<3x1xi32> {
  %s = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<3x90000xi32>) -> tensor<3x1xi32>
  return %s : tensor<3x1xi32>
})mlir",
                  DType::I32,
                  {3, 90000}}),
    [](const testing::TestParamInfo<SplitCase> &info) {
      return std::string(info.param.name);
    });

} // namespace
