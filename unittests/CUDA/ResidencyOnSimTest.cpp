//===- ResidencyOnSimTest.cpp - grids sized by the device ------*- C++ -*-===//
//
// Part of normfuse. Persistent grids (the norm gradients' row slots, the
// per-channel sums' parts, the channels-last copy's tiles, the parts of a
// channels-last group norm's images) are as many
// blocks as the device holds at once, which the registers of the compiled
// kernel decide: the launch plan keeps them as Residency values that a
// runtime resolves when it loads the kernels (LaunchPlan.h). Here each
// function runs in the simulator with its plan resolved for devices that
// hold one block, a few, and the planned count, against the CPU back end
// on the same inputs; and twice with one residency, bit for bit the same.
//
//===----------------------------------------------------------------------===//

#include "CudaSimTestUtils.h"

using namespace nftest;
using normfuse::jit::CudaSimKernel;
using normfuse::runtime::Residency;

namespace {

struct ResidencyCase {
  const char *name;
  /// A function @f of static shapes.
  const char *ir;
  /// Relative error allowed against the CPU, per output.
  double tolerance = 1e-5;
  /// The GPU target the kernels are generated for.
  const char *gpu = normfuse::runtime::kDefaultGpuTarget;
};

[[maybe_unused]] void PrintTo(const ResidencyCase &c, std::ostream *os) {
  *os << c.name;
}

class ResidencyOnSimTest : public testing::TestWithParam<ResidencyCase> {};

/// The outputs of `kernel` on `inputs`, NaN-poisoned first.
std::vector<Buffer> runOn(normfuse::jit::Kernel &kernel,
                          std::vector<Buffer> &inputs) {
  std::vector<Buffer> outputs;
  for (const auto &t : kernel.getSignature().outputs) {
    outputs.emplace_back(t.dtype, t.shape);
    outputs.back().fill(std::nan(""));
  }
  std::vector<normfuse::TensorRef> in, out;
  for (Buffer &b : inputs)
    in.push_back(b.ref());
  for (Buffer &b : outputs)
    out.push_back(b.ref());
  EXPECT_EQ(errorText(kernel.run(in, out)), "");
  return outputs;
}

/// The grid of each launch of `kernel`'s plan, in order.
std::vector<unsigned> grids(const CudaSimKernel &kernel) {
  std::vector<unsigned> g;
  for (const auto &step : kernel.getPlan().steps)
    if (step.kind == normfuse::runtime::Step::Kind::Launch)
      g.push_back(step.launch.grid[0]);
  return g;
}

TEST_P(ResidencyOnSimTest, EveryResidencyMatchesTheCPU) {
  const ResidencyCase &c = GetParam();
  auto sim = compileForSim(c.ir, "f", "auto", false, c.gpu);
  auto cpu = sharedJIT().compile(c.ir, "f");
  ASSERT_TRUE(sim);
  ASSERT_TRUE(bool(cpu)) << llvm::toString(cpu.takeError());
  const auto &plan = sim->getPlan();
  ASSERT_FALSE(plan.residencies.empty()) << "no grid depends on the device:\n"
                                         << plan.str();

  std::mt19937 rng(11);
  std::vector<Buffer> inputs;
  for (const auto &t : sim->getSignature().inputs) {
    inputs.emplace_back(t.dtype, t.shape);
    inputs.back().fillNormal(rng, 0.5, 1.5);
  }
  std::vector<Buffer> expected = runOn(**cpu, inputs);

  std::vector<unsigned> planned = grids(*sim);
  for (int64_t blocks : {int64_t(1), int64_t(3), int64_t(40), INT64_MAX}) {
    SCOPED_TRACE("resident blocks " + std::to_string(blocks));
    auto device = sim->withResidency(
        [&](const Residency &r) { return std::min(blocks, r.planned); });
    ASSERT_TRUE(bool(device)) << llvm::toString(device.takeError());
    std::vector<unsigned> resolved = grids(**device);
    if (blocks == INT64_MAX)
      EXPECT_EQ(resolved, planned);
    else
      EXPECT_NE(resolved, planned) << "no grid follows the residency";
    // A kernel in clusters runs whole ones.
    for (const auto &step : (*device)->getPlan().steps)
      if (step.kind == normfuse::runtime::Step::Kind::Launch &&
          llvm::StringRef(c.name).contains("multicast"))
        EXPECT_EQ(step.launch.grid[0] % 2, 0u) << step.launch.kernel;
    std::vector<Buffer> got = runOn(**device, inputs);
    for (size_t o = 0; o < got.size(); ++o)
      EXPECT_LE(relativeError(got[o].toDoubles(), expected[o].toDoubles()),
                c.tolerance)
          << "output #" << o;
    // One device, one grid: the same bits every run.
    std::vector<Buffer> again = runOn(**device, inputs);
    for (size_t o = 0; o < got.size(); ++o)
      EXPECT_EQ(got[o].toDoubles(), again[o].toDoubles()) << "output #" << o;
  }
}

// 2003 rows of 96 (251 groups of 8 rows, the last one part-full): warp
// rows, the scale and bias of a lane's columns loaded once per block (24 of
// a warp's 32 lanes hold a vector), each block looping over row groups.
constexpr const char *kLayerNormWarpRows = R"mlir(
func.func @f(%x: tensor<2003x96xf32>, %s: tensor<96xf32>, %b: tensor<96xf32>)
    -> (tensor<2003x96xf32>, tensor<2003x1xf32>, tensor<2003x1xf32>) {
  %y, %m, %r = nf.layer_norm %x scale %s bias %b {axis = 1 : i64}
      : (tensor<2003x96xf32>, tensor<96xf32>, tensor<96xf32>)
      -> (tensor<2003x96xf32>, tensor<2003x1xf32>, tensor<2003x1xf32>)
  return %y, %m, %r : tensor<2003x96xf32>, tensor<2003x1xf32>, tensor<2003x1xf32>
})mlir";

INSTANTIATE_TEST_SUITE_P(
    Functions, ResidencyOnSimTest,
    testing::Values(
        // 4000 rows of 64 (250 blocks of 16): warp rows, more row slots than an
        // H100's SMs.
        ResidencyCase{"layer_norm_grad_rows", R"mlir(
func.func @f(%dy: tensor<4000x64xf32>, %x: tensor<4000x64xf32>,
             %m: tensor<4000x1xf32>, %r: tensor<4000x1xf32>, %s: tensor<64xf32>)
    -> (tensor<4000x64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r scale %s {axis = 1 : i64}
      : (tensor<4000x64xf32>, tensor<4000x64xf32>, tensor<4000x1xf32>, tensor<4000x1xf32>, tensor<64xf32>)
      -> (tensor<4000x64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %dx, %ds, %db : tensor<4000x64xf32>, tensor<64xf32>, tensor<64xf32>
})mlir"},
        // 2 x 8 x 32 positions of 64 channels: 512 parts planned (channels
        // last, one a block), and 16 x 64 (channels first).
        ResidencyCase{"bias_add_grad_nhwc_and_nchw", R"mlir(
func.func @f(%dy: tensor<8x32x32x64xf32>, %dy2: tensor<8x64x16x64xf32>)
    -> (tensor<64xf32>, tensor<64xf32>) {
  %g = nf.bias_add_grad %dy {layout = #nf.layout<nhwc>} : tensor<8x32x32x64xf32> -> tensor<64xf32>
  %g2 = nf.bias_add_grad %dy2 {layout = #nf.layout<nchw>} : tensor<8x64x16x64xf32> -> tensor<64xf32>
  return %g, %g2 : tensor<64xf32>, tensor<64xf32>
})mlir"},
        ResidencyCase{"layer_norm_warp_rows", kLayerNormWarpRows},
        // The same on a target whose L2 (64 KiB) x outgrows: y goes out
        // through streaming stores.
        ResidencyCase{"layer_norm_warp_rows_streaming", kLayerNormWarpRows,
                      1e-5, "h100-sxm:l2=65536"},
        // 150 rows of 2048 bf16: a block per row, the scale loaded once
        // per block.
        ResidencyCase{"rms_norm_block_rows_bf16", R"mlir(
func.func @f(%x: tensor<150x2048xbf16>, %s: tensor<2048xbf16>)
    -> (tensor<150x2048xbf16>, tensor<150x1xf32>) {
  %y, %r = nf.rms_norm %x scale %s {axis = 1 : i64}
      : (tensor<150x2048xbf16>, tensor<2048xbf16>) -> (tensor<150x2048xbf16>, tensor<150x1xf32>)
  return %y, %r : tensor<150x2048xbf16>, tensor<150x1xf32>
})mlir",
                      1e-2},
        // 150 rows of 1101 f32: peeled block rows (the scale per row).
        ResidencyCase{"layer_norm_peeled_rows", R"mlir(
func.func @f(%x: tensor<150x1101xf32>, %s: tensor<1101xf32>, %b: tensor<1101xf32>)
    -> tensor<150x1101xf32> {
  %y, %m, %r = nf.layer_norm %x scale %s bias %b {axis = 1 : i64}
      : (tensor<150x1101xf32>, tensor<1101xf32>, tensor<1101xf32>)
      -> (tensor<150x1101xf32>, tensor<150x1xf32>, tensor<150x1xf32>)
  return %y : tensor<150x1101xf32>
})mlir"},
        // A group norm's rows: 48 images x 32 groups of 2 channels x 64
        // positions, NCHW (192 blocks of 8 rows).
        ResidencyCase{"group_norm_nchw_rows", R"mlir(
func.func @f(%x: tensor<48x64x8x8xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>)
    -> tensor<48x64x8x8xf32> {
  %y, %m, %r = nf.group_norm %x scale %s bias %b {num_groups = 32 : i64}
      : (tensor<48x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>)
      -> (tensor<48x64x8x8xf32>, tensor<48x32xf32>, tensor<48x32xf32>)
  return %y : tensor<48x64x8x8xf32>
})mlir"},
        // A group norm in NHWC, 4 channels a group (16-byte runs): its
        // three kernels' parts of an image's positions are sized by the
        // blocks the device holds of the partial and normalizing kernels
        // (planned: 384 parts of 8 positions for 3 images of 1024). Its one
        // kernel (48 blocks, parts of 64 positions) is planned for an
        // H100, but more than 40 blocks, or than the simulator runs
        // together: the three kernels run at every residency here.
        ResidencyCase{"group_norm_nhwc_parts", R"mlir(
func.func @f(%x: tensor<3x32x32x128xf32>, %s: tensor<128xf32>, %b: tensor<128xf32>)
    -> (tensor<3x32x32x128xf32>, tensor<3x32xf32>, tensor<3x32xf32>) {
  %y, %m, %r = nf.group_norm %x scale %s bias %b {num_groups = 32 : i64, layout = #nf.layout<nhwc>}
      : (tensor<3x32x32x128xf32>, tensor<128xf32>, tensor<128xf32>)
      -> (tensor<3x32x32x128xf32>, tensor<3x32xf32>, tensor<3x32xf32>)
  return %y, %m, %r : tensor<3x32x32x128xf32>, tensor<3x32xf32>, tensor<3x32xf32>
})mlir"},
        // BatchNorm's moments over 4 x 32 x 40 positions of 32 channels.
        ResidencyCase{"batch_norm_training_nhwc", R"mlir(
func.func @f(%x: tensor<4x32x40x32xf32>, %rm: tensor<32xf32>, %rv: tensor<32xf32>)
    -> (tensor<4x32x40x32xf32>, tensor<32xf32>, tensor<32xf32>) {
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x running(%rm, %rv) {layout = #nf.layout<nhwc>}
      : (tensor<4x32x40x32xf32>, tensor<32xf32>, tensor<32xf32>)
      -> (tensor<4x32x40x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  return %y, %nm, %nv : tensor<4x32x40x32xf32>, tensor<32xf32>, tensor<32xf32>
})mlir"},
        // BatchNorm in NCHW, one kernel: 3 channels of 16 x 32 x 32, 16
        // ranges a channel planned (a vector a thread of 256: at most
        // 16), 13 where 40 blocks are held, 1 where 3 or 1 are (that block
        // taking the 3 channels in turn).
        ResidencyCase{"batch_norm_training_nchw", R"mlir(
func.func @f(%x: tensor<16x3x32x32xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %rm: tensor<3xf32>, %rv: tensor<3xf32>)
    -> (tensor<16x3x32x32xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x scale %s bias %b running(%rm, %rv) {layout = #nf.layout<nchw>}
      : (tensor<16x3x32x32xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
      -> (tensor<16x3x32x32xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y, %m, %r, %nm, %nv : tensor<16x3x32x32xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
})mlir"},
        // Its gradient, the same ranges (2 vectors of dy and of x a thread
        // at once).
        ResidencyCase{"batch_norm_grad_nchw", R"mlir(
func.func @f(%dy: tensor<16x3x32x32xf32>, %x: tensor<16x3x32x32xf32>, %m: tensor<3xf32>, %r: tensor<3xf32>, %s: tensor<3xf32>)
    -> (tensor<16x3x32x32xf32>, tensor<3xf32>, tensor<3xf32>) {
  %dx, %ds, %db = nf.batch_norm_grad %dy, %x, %m, %r scale %s {layout = #nf.layout<nchw>}
      : (tensor<16x3x32x32xf32>, tensor<16x3x32x32xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
      -> (tensor<16x3x32x32xf32>, tensor<3xf32>, tensor<3xf32>)
  return %dx, %ds, %db : tensor<16x3x32x32xf32>, tensor<3xf32>, tensor<3xf32>
})mlir"},
        // An NCHW f16 convolution of 16 channels: the input copied
        // channels-last by a grid-stride kernel on the resident blocks.
        ResidencyCase{"conv2d_nchw_f16", R"mlir(
func.func @f(%x: tensor<2x16x64x64xf16>, %w: tensor<8x16x1x1xf16>) -> tensor<2x8x32x32xf16> {
  %y = nf.conv2d %x, %w {strides = array<i64: 2, 2>} : tensor<2x16x64x64xf16>, tensor<8x16x1x1xf16> -> tensor<2x8x32x32xf16>
  return %y : tensor<2x8x32x32xf16>
})mlir",
                      1e-3},
        // Warp specialized on sm_90a, 49 tiles of 64 x 128: the producer
        // of each resident block runs into its next tile.
        ResidencyCase{"matmul_warp_specialized_f16", R"mlir(
func.func @f(%a: tensor<448x32xf16>, %b: tensor<32x896xf16>) -> tensor<448x896xf16> {
  %y = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=64x128x16 warps=4x1 stages=3 wgmma tma warp-specialized"} : tensor<448x32xf16>, tensor<32x896xf16> -> tensor<448x896xf16>
  return %y : tensor<448x896xf16>
})mlir",
                      1e-3, "sm_90a"},
        // The same in clusters of two sharing B's tiles: 28 pairs of tiles
        // along M (the last pair's second block past M), in whole
        // clusters at every residency: 3 blocks or 1 is one cluster,
        // which loops over every pair.
        ResidencyCase{"matmul_multicast_f16", R"mlir(
func.func @f(%a: tensor<448x32xf16>, %b: tensor<32x896xf16>) -> tensor<448x896xf16> {
  %y = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=64x128x16 warps=4x1 stages=3 wgmma tma warp-specialized multicast"} : tensor<448x32xf16>, tensor<32x896xf16> -> tensor<448x896xf16>
  return %y : tensor<448x896xf16>
})mlir",
                      1e-3, "sm_90a"},
        // In two teams taking turns: each resident block's teams take its
        // units in turns (one block: all 49, 25 and 24).
        ResidencyCase{"matmul_pingpong_f16", R"mlir(
func.func @f(%a: tensor<448x32xf16>, %b: tensor<32x896xf16>) -> tensor<448x896xf16> {
  %y = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=64x128x16 warps=4x1 stages=3 wgmma tma warp-specialized pingpong"} : tensor<448x32xf16>, tensor<32x896xf16> -> tensor<448x896xf16>
  return %y : tensor<448x896xf16>
})mlir",
                      1e-3, "sm_90a"},
        // Warp specialized with K split in 2 (the partial sums, then the
        // finish): 98 units of 49 tiles on the resident blocks.
        ResidencyCase{"matmul_warp_specialized_split_k_f16", R"mlir(
func.func @f(%a: tensor<448x64xf16>, %b: tensor<64x896xf16>) -> tensor<448x896xf16> {
  %y = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=64x128x16 warps=4x1 stages=3 wgmma tma warp-specialized split-k=2 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"} : tensor<448x64xf16>, tensor<64x896xf16> -> tensor<448x896xf16>
  return %y : tensor<448x896xf16>
})mlir",
                      1e-3, "sm_90a"}),
    [](const testing::TestParamInfo<ResidencyCase> &info) {
      return std::string(info.param.name);
    });

} // namespace
