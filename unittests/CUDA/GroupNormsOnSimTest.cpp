//===- GroupNormsOnSimTest.cpp - CUDA group/instance norms in the simulator -*-
// C++ -*-===//
//
// Part of normfuse. group_norm and instance_norm as CUDA kernels (a row per
// (image, group), addressed through the layout: groups of up to 1024
// elements as warp rows, larger ones split across blocks), run by the
// CUDA simulator against float64 references: NHWC with groups of
// 2 and 10 channels (8-byte vectors) and of 1 channel (scalars), NCHW with
// a spatial size no vector divides and one that 4 divides, batch 1 and
// several images, f32/f16/bf16, groups of 1024 elements (the last warp
// row), NCHW groups as block rows (1600 and 2178 elements) and on
// clusters of 2 to 4 blocks (10500 to 32768 elements), and split rows with
// chunks forced small so a group spans several blocks; in NHWC with a
// known channel count and narrow
// runs, across the channels (channels-last-groups: groups of 2, 3, 4, 16,
// 24 and 1 channels, vectors of 2 to 8 lanes, parts of a sweep each when
// forced, one group per image, 273 parts). Also GroupNorm + SiLU fused (the
// UNet block) against the unfused ops on the CPU. Tolerances as the CPU's
// channel-norm tests: f32 1e-5, f16 1e-3, bf16 8e-3; statistics 1e-5.
//
//===----------------------------------------------------------------------===//

#include "CudaSimTestUtils.h"
#include "Reference.h"

#include <cmath>

using namespace nftest;

namespace {

struct GroupCase {
  const char *name;
  DType dtype;
  int64_t n, c, h, w, groups;
  bool channelsLast;
  const char *schedule = "auto";
  bool instance = false;
};

[[maybe_unused]] void PrintTo(const GroupCase &c, std::ostream *os) {
  *os << c.name;
}

std::vector<int64_t> shapeOf(const GroupCase &c) {
  return c.channelsLast ? std::vector<int64_t>{c.n, c.h, c.w, c.c}
                        : std::vector<int64_t>{c.n, c.c, c.h, c.w};
}

class GroupNormOnSimTest : public testing::TestWithParam<GroupCase> {};

TEST_P(GroupNormOnSimTest, MatchesFloat64Reference) {
  const GroupCase &c = GetParam();
  std::string x = tensorType(c.dtype, shapeOf(c));
  std::string p = tensorType(DType::F32, {c.c});
  int64_t groups = c.instance ? c.c : c.groups;
  std::string st = tensorType(DType::F32, {c.n, groups});
  std::string layout = c.channelsLast ? "nhwc" : "nchw";
  std::string op =
      c.instance ? "nf.instance_norm %x scale %s bias %b {layout = "
                   "#nf.layout<" +
                       layout + ">}"
                 : "nf.group_norm %x scale %s bias %b {layout = "
                   "#nf.layout<" +
                       layout + ">, num_groups = " + std::to_string(groups) +
                       " : i64}";
  std::string ir =
      "func.func @gn(%x: " + x + ", %s: " + p + ", %b: " + p + ") -> (" + x +
      ", " + st + ", " + st + ") {\n  %y, %m, %r = " + op + " : (" + x + ", " +
      p + ", " + p + ") -> (" + x + ", " + st + ", " + st +
      ")\n  return %y, %m, %r : " + x + ", " + st + ", " + st + "\n}\n";
  auto kernel = compileForSim(ir, "gn", c.schedule);
  ASSERT_TRUE(kernel);
  std::mt19937 rng(23);
  Buffer in(c.dtype, shapeOf(c)), scale(DType::F32, {c.c}),
      bias(DType::F32, {c.c});
  in.fillNormal(rng, 0.5, 2.0);
  scale.fillNormal(rng, 1.0, 0.5);
  bias.fillNormal(rng);
  Buffer y(c.dtype, shapeOf(c)), mean(DType::F32, {c.n, groups}),
      rstd(DType::F32, {c.n, groups});
  ASSERT_EQ(errorText(kernel->run({in.ref(), scale.ref(), bias.ref()},
                                  {y.ref(), mean.ref(), rstd.ref()})),
            "");
  std::vector<double> ry, rmean, rrstd, s = scale.toDoubles(),
                                        b = bias.toDoubles();
  groupNormReference(in.toDoubles(), {c.n, c.c, c.h * c.w, c.channelsLast},
                     groups, &s, &b, 1e-5, ry, rmean, rrstd);
  double tolerance = c.dtype == DType::F32   ? 1e-5
                     : c.dtype == DType::F16 ? 1e-3
                                             : 8e-3;
  EXPECT_LE(relativeError(y.toDoubles(), ry), tolerance);
  EXPECT_LE(relativeError(mean.toDoubles(), rmean), 1e-5);
  EXPECT_LE(relativeError(rstd.toDoubles(), rrstd), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GroupNormOnSimTest,
    testing::Values(
        GroupCase{"nhwc_batch1_f32", DType::F32, 1, 64, 8, 8, 32, true},
        GroupCase{"nhwc_unet_f16", DType::F16, 2, 320, 4, 4, 32, true},
        GroupCase{"nhwc_one_channel_groups_bf16", DType::BF16, 2, 8, 3, 5, 8,
                  true},
        GroupCase{"nhwc_small_chunks_f32", DType::F32, 1, 64, 8, 8, 32, true,
                  "split-row"},
        GroupCase{"nchw_odd_spatial_f32", DType::F32, 2, 64, 5, 5, 8, false},
        GroupCase{"nchw_small_chunks_f16", DType::F16, 2, 16, 8, 8, 4, false,
                  "split-row"},
        GroupCase{"instance_nhwc_f32", DType::F32, 2, 16, 4, 4, 16, true,
                  "auto", true},
        GroupCase{"instance_nchw_bf16", DType::BF16, 1, 8, 6, 6, 8, false,
                  "auto", true},
        // 1024 elements a group in runs of 32 bytes: warp rows; of 2 bytes
        // (an instance norm of 7 x 7 bf16): across the channels.
        GroupCase{"nhwc_1024_elements_warp_rows_f16", DType::F16, 1, 16, 8, 8,
                  1, true},
        GroupCase{"instance_nhwc_7x7_across_channels_bf16", DType::BF16, 2, 64,
                  7, 7, 64, true, "auto", true},
        GroupCase{"nhwc_1156_elements_channels_last_f32", DType::F32, 1, 8, 17,
                  17, 2, true},
        // NCHW groups as rows in registers: a block row (2178 odd elements,
        // 256 threads of 9; an instance norm of 40 x 40 f16, 224 threads of
        // a vector of 8), clusters (18432 f32 elements: 3 blocks of 256
        // threads of 6 float4s; 10500: 2 blocks, the last vectors past the
        // row's end; 32768 bf16: 4 blocks of 256 threads of 4 vectors of
        // 8).
        GroupCase{"nchw_2178_elements_block_row_f32", DType::F32, 1, 4, 33, 33,
                  2, false},
        GroupCase{"instance_nchw_block_row_f16", DType::F16, 2, 3, 40, 40, 3,
                  false, "auto", true},
        GroupCase{"nchw_18432_elements_cluster_f32", DType::F32, 1, 4, 96, 96,
                  2, false},
        GroupCase{"nchw_10500_elements_cluster_tail_f32", DType::F32, 1, 3, 50,
                  70, 1, false},
        GroupCase{"nchw_32768_elements_cluster_bf16", DType::BF16, 1, 2, 128,
                  128, 1, false},
        // Channels last across a block: vectors of 4 over groups of 3
        // (two groups a vector), 40 parts of 10 positions, the last of 9.
        GroupCase{"nhwc_3_channel_groups_channels_last_f32", DType::F32, 2, 96,
                  19, 21, 32, true},
        GroupCase{"nhwc_channels_last_small_parts_f16", DType::F16, 1, 96, 5, 7,
                  6, true, "channels-last-groups"},
        GroupCase{"nhwc_one_group_channels_last_f32", DType::F32, 3, 24, 4, 4,
                  1, true, "channels-last-groups"},
        // 273 parts of 4 positions: a finishing thread combines two.
        GroupCase{"nhwc_channels_last_many_parts_f32", DType::F32, 1, 256, 33,
                  33, 8, true, "channels-last-groups"},
        GroupCase{"instance_nhwc_channels_last_bf16", DType::BF16, 2, 30, 3, 5,
                  30, true, "channels-last-groups", true},
        // The one-kernel variant (2 vectors a thread): 320 channels in 32
        // groups, 2 parts of 8 positions an image; a tail part (35
        // positions, parts of 2 x 16); one group; an instance norm of 30
        // bf16 channels (blocks of 480 threads, a part an image); and 137
        // parts, more blocks than the simulator runs together: the three
        // kernels instead.
        GroupCase{"nhwc_one_kernel_f32", DType::F32, 2, 320, 4, 4, 32, true,
                  "channels-last-one-kernel"},
        GroupCase{"nhwc_one_kernel_tail_f16", DType::F16, 2, 96, 5, 7, 6, true,
                  "channels-last-one-kernel"},
        GroupCase{"nhwc_one_kernel_one_group_f32", DType::F32, 3, 24, 4, 4, 1,
                  true, "channels-last-one-kernel"},
        GroupCase{"instance_nhwc_one_kernel_bf16", DType::BF16, 2, 30, 3, 5, 30,
                  true, "channels-last-one-kernel", true},
        GroupCase{"nhwc_one_kernel_too_many_parts_f32", DType::F32, 1, 256, 33,
                  33, 8, true, "channels-last-one-kernel"}),
    [](const auto &info) { return std::string(info.param.name); });

/// The launches of `plan` that run (a grid of more than 0 blocks).
size_t launchesRun(const normfuse::runtime::LaunchPlan &plan) {
  return size_t(llvm::count_if(plan.steps, [](const auto &step) {
    return step.kind == normfuse::runtime::Step::Kind::Launch &&
           !step.launch.emptyGrid();
  }));
}

// The UNet block's GroupNorm + SiLU in f16 fused on the GPU, in `kernels`
// kernels, against the unfused ops on the CPU: 4e-3 (the unfused ops round
// y to f16 before the SiLU).
void expectGroupNormSiluMatchesOpByOp(std::vector<int64_t> shape,
                                      int64_t groups, size_t kernels) {
  int64_t c = shape.back();
  std::string x = tensorType(DType::F16, shape);
  std::string p = tensorType(DType::F16, {c});
  std::string st = tensorType(DType::F32, {shape[0], groups});
  std::string ir =
      "func.func @gn_silu(%x: " + x + ", %s: " + p + ", %b: " + p + ") -> " +
      x +
      " {\n  %y, %m, %r = nf.group_norm %x scale %s bias %b {layout = "
      "#nf.layout<nhwc>, num_groups = " +
      std::to_string(groups) + " : i64} : (" + x + ", " + p + ", " + p +
      ") -> (" + x + ", " + st + ", " + st + ")\n  %a = nf.silu %y : " + x +
      "\n  return %a : " + x + "\n}\n";
  auto sim = compileForSim(ir, "gn_silu", "auto", /*fuse=*/true);
  ASSERT_TRUE(sim);
  EXPECT_EQ(launchesRun(sim->getPlan()), kernels) << sim->getPlan().str();
  auto cpu = sharedJIT().compile(ir, "gn_silu");
  ASSERT_TRUE(bool(cpu)) << llvm::toString(cpu.takeError());
  std::mt19937 rng(29);
  Buffer in(DType::F16, shape), scale(DType::F16, {c}), bias(DType::F16, {c});
  in.fillNormal(rng);
  scale.fillNormal(rng, 1.0, 0.5);
  bias.fillNormal(rng);
  Buffer fromSim(DType::F16, shape), fromCPU(DType::F16, shape);
  ASSERT_EQ(
      errorText(sim->run({in.ref(), scale.ref(), bias.ref()}, {fromSim.ref()})),
      "");
  ASSERT_EQ(errorText((*cpu)->run({in.ref(), scale.ref(), bias.ref()},
                                  {fromCPU.ref()})),
            "");
  EXPECT_LE(relativeError(fromSim.toDoubles(), fromCPU.toDoubles()), 4e-3);
}

// Groups of 4 channels x 576 positions: the one channels-last kernel (the
// device holds its 6 blocks), the SiLU in its epilogue.
TEST(FusedGroupNormOnSimTest, ChannelsLastGroupNormSiluMatchesOpByOp) {
  expectGroupNormSiluMatchesOpByOp({1, 24, 24, 96}, 24, 1u);
}

// Groups of 128 elements: one warp-row kernel.
TEST(FusedGroupNormOnSimTest, GroupNormSiluMatchesOpByOp) {
  expectGroupNormSiluMatchesOpByOp({2, 8, 8, 64}, 32, 1u);
}

} // namespace

namespace {

// GroupNorm NHWC of 2 x 4 x 4 x 320 f32 in 32 groups, the one-kernel
// variant forced: where the device holds its 4 blocks, one cooperative
// launch with one grid barrier and a zeroed counter; where it holds one
// block of each kernel, the three kernels. Both match the three kernels
// forced, within f32 rounding (they combine in other orders).
TEST(OneKernelGroupNormTest, RunsAloneWhereItsGridIsResidentElseThreeKernels) {
  std::string x = tensorType(DType::F32, {2, 4, 4, 320});
  std::string p = tensorType(DType::F32, {320});
  std::string ir =
      "func.func @gn(%x: " + x + ", %s: " + p + ", %b: " + p + ") -> " + x +
      " {\n  %y, %m, %r = nf.group_norm %x scale %s bias %b "
      "{layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (" +
      x + ", " + p + ", " + p + ") -> (" + x + ", " +
      tensorType(DType::F32, {2, 32}) + ", " + tensorType(DType::F32, {2, 32}) +
      ")\n  return %y : " + x + "\n}\n";
  auto one = compileForSim(ir, "gn", "channels-last-one-kernel");
  auto three = compileForSim(ir, "gn", "channels-last-groups");
  ASSERT_TRUE(one && three);
  std::string plan = one->getPlan().str();
  EXPECT_NE(plan.find("bytes zeroed"), std::string::npos) << plan;
  EXPECT_NE(plan.find("gn_group_norm_one_kernel grid (4 (integer"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("cooperative"), std::string::npos) << plan;
  auto fewer = one->withResidency(
      [](const normfuse::runtime::Residency &) { return int64_t(1); });
  ASSERT_TRUE(bool(fewer)) << llvm::toString(fewer.takeError());

  std::mt19937 rng(31);
  Buffer in(DType::F32, {2, 4, 4, 320}), scale(DType::F32, {320}),
      bias(DType::F32, {320});
  in.fillNormal(rng, 0.5, 2.0);
  scale.fillNormal(rng, 1.0, 0.5);
  bias.fillNormal(rng);
  auto run = [&](const normfuse::jit::CudaSimKernel &k, size_t launches,
                 uint64_t gridBarriers) {
    Buffer y(DType::F32, {2, 4, 4, 320});
    std::vector<normfuse::runtime::SimStats> stats;
    EXPECT_EQ(errorText(k.runInSimulator(
                  {in.ref(), scale.ref(), bias.ref()}, {y.ref()},
                  normfuse::runtime::SimOrder::Shuffle, &stats)),
              "");
    EXPECT_EQ(stats.size(), launches);
    uint64_t barriers = 0;
    for (const auto &st : stats)
      barriers += st.clusterBarriers;
    EXPECT_EQ(barriers, gridBarriers);
    return y.toDoubles();
  };
  std::vector<double> expected = run(*three, 3, 0);
  EXPECT_LE(relativeError(run(*one, 1, 1), expected), 1e-6);
  EXPECT_LE(relativeError(run(**fewer, 3, 0), expected), 1e-6);
}

} // namespace
