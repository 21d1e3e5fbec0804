//===- FusedRowNormsOnSimTest.cpp - fused row norms in the simulator -*- C++
//-*-===//
//
// Part of normfuse. An nf.fused row norm with pointwise ops around it runs
// as one CUDA kernel (two for a split row): the prologue (a residual add)
// on x as it is loaded, the epilogue (bias_add, gelu, silu, a mul by
// another tensor) on y before it is stored. Each case runs fused in the
// CUDA simulator under every row-norm schedule and op by op on the CPU
// back end (checked against float64 by its own tests), on the same inputs:
// f32 agrees to 1e-5 (relative L2); f16 to 4e-3, since the unfused ops
// round y to f16 before the epilogue and the fused kernel does not (as in
// FusePipelineTest).
//
//===----------------------------------------------------------------------===//

#include "CudaSimTestUtils.h"
#include "Reference.h"

#include <cmath>

using namespace nftest;

namespace {

struct FusedCase {
  const char *name;
  DType dtype;
  int64_t rows, cols;
};

// gtest prints a parameter with this instead of its bytes.
[[maybe_unused]] void PrintTo(const FusedCase &c, std::ostream *os) {
  *os << c.name << " " << c.rows << "x" << c.cols;
}

/// residual add -> layer_norm -> bias_add -> gelu (tanh), and
/// rms_norm -> silu -> mul by a gate tensor.
std::string fusedIR(const FusedCase &c) {
  std::string t = tensorType(c.dtype, {c.rows, c.cols});
  std::string v = tensorType(c.dtype, {c.cols});
  std::string st = tensorType(DType::F32, {c.rows, 1});
  return "func.func @post_ln(%x: " + t + ", %r: " + t + ", %g: " + v +
         ", %b: " + v + ", %bias: " + v + ") -> " + t + " {\n" +
         "  %s = nf.add %x, %r : " + t + "\n" +
         "  %y, %m, %rs = nf.layer_norm %s scale %g bias %b {axis = 1 : i64} "
         ": (" +
         t + ", " + v + ", " + v + ") -> (" + t + ", " + st + ", " + st +
         ")\n" +
         "  %t = nf.bias_add %y, %bias {layout = #nf.layout<nhwc>} : " + t +
         ", " + v + "\n" +
         "  %u = nf.gelu %t {approximate = #nf.approximation<tanh>} : " + t +
         "\n  return %u : " + t + "\n}\n" + "func.func @gated_rms(%x: " + t +
         ", %gate: " + t + ", %g: " + v + ") -> (" + t + ", " + st + ") {\n" +
         "  %y, %rs = nf.rms_norm %x scale %g {axis = 1 : i64} : (" + t + ", " +
         v + ") -> (" + t + ", " + st + ")\n" + "  %a = nf.silu %y : " + t +
         "\n  %o = nf.mul %a, %gate : " + t + "\n  return %o, %rs : " + t +
         ", " + st + "\n}\n";
}

class FusedRowNormOnSimTest
    : public testing::TestWithParam<std::tuple<FusedCase, const char *>> {};

/// Runs `fn` fused on the simulator and op by op on the CPU; returns the
/// relative L2 differences of each output.
std::vector<double>
compare(const FusedCase &c, const char *schedule, const std::string &fn,
        const std::vector<std::vector<int64_t>> &inShapes,
        const std::vector<std::pair<DType, std::vector<int64_t>>> &outs) {
  std::string ir = fusedIR(c);
  auto sim = compileForSim(ir, fn, schedule, /*fuse=*/true);
  auto cpu = sharedJIT().compile(ir, fn);
  if (!sim || !cpu) {
    ADD_FAILURE() << (cpu ? "" : llvm::toString(cpu.takeError()));
    return {};
  }
  // One fused kernel (two launches for a split row), not one per op.
  EXPECT_EQ(sim->getPlan().steps.size(),
            std::string(schedule) == "split-row" ? 2u : 1u)
      << sim->getPlan().str();
  std::mt19937 rng(17);
  std::vector<Buffer> in;
  for (const auto &shape : inShapes) {
    in.emplace_back(c.dtype, shape);
    in.back().fillNormal(rng, shape.size() == 1 ? 0.5 : 0.0, 1.0);
  }
  std::vector<normfuse::TensorRef> refs;
  for (Buffer &b : in)
    refs.push_back(b.ref());
  std::vector<Buffer> fromSim, fromCPU;
  for (const auto &[dtype, shape] : outs) {
    fromSim.emplace_back(dtype, shape);
    fromCPU.emplace_back(dtype, shape);
  }
  std::vector<normfuse::TensorRef> simRefs, cpuRefs;
  for (size_t i = 0; i < outs.size(); ++i) {
    simRefs.push_back(fromSim[i].ref());
    cpuRefs.push_back(fromCPU[i].ref());
  }
  EXPECT_EQ(errorText(sim->run(refs, simRefs)), "");
  EXPECT_EQ(errorText((*cpu)->run(refs, cpuRefs)), "");
  std::vector<double> errors;
  for (size_t i = 0; i < outs.size(); ++i)
    errors.push_back(
        relativeError(fromSim[i].toDoubles(), fromCPU[i].toDoubles()));
  return errors;
}

TEST_P(FusedRowNormOnSimTest, ResidualLayerNormBiasGeluMatchesOpByOp) {
  const auto &[c, schedule] = GetParam();
  std::vector<double> errors = compare(
      c, schedule, "post_ln",
      {{c.rows, c.cols}, {c.rows, c.cols}, {c.cols}, {c.cols}, {c.cols}},
      {{c.dtype, {c.rows, c.cols}}});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_LE(errors[0], c.dtype == DType::F32 ? 1e-5 : 4e-3);
}

TEST_P(FusedRowNormOnSimTest, GatedRMSNormMatchesOpByOp) {
  const auto &[c, schedule] = GetParam();
  std::vector<double> errors = compare(
      c, schedule, "gated_rms", {{c.rows, c.cols}, {c.rows, c.cols}, {c.cols}},
      {{c.dtype, {c.rows, c.cols}}, {DType::F32, {c.rows, 1}}});
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_LE(errors[0], c.dtype == DType::F32 ? 1e-5 : 4e-3);
  EXPECT_LE(errors[1], 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, FusedRowNormOnSimTest,
    testing::Combine(testing::Values(FusedCase{"f32", DType::F32, 3, 1000},
                                     FusedCase{"f16_odd", DType::F16, 2, 999}),
                     testing::Values("warp-rows", "block-row-registers",
                                     "block-row-streaming", "split-row")),
    [](const auto &info) {
      std::string name = std::string(std::get<0>(info.param).name) + "_" +
                         std::get<1>(info.param);
      for (char &ch : name)
        if (ch == '-')
          ch = '_';
      return name;
    });

} // namespace
