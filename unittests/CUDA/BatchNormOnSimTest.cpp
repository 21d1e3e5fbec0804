//===- BatchNormOnSimTest.cpp - BatchNorm training in one kernel ----------===//
//
// Part of normfuse. batch_norm_training in NCHW runs as one cooperative
// kernel (BatchNormOneKernel.cpp): each (channel, range) task's moments,
// the grid's barrier, then each channel's ranges merged and its range
// normalized. Here, in the simulator: the bytes it moves, blocks that take
// several channels, lanes that merge more than 32 ranges, every result
// against float64 and the same bits in every thread order.
//
//===----------------------------------------------------------------------===//

#include "CudaSimTestUtils.h"

using namespace nftest;
using normfuse::jit::CudaSimKernel;
using normfuse::runtime::SimOrder;
using normfuse::runtime::SimStats;

namespace {

/// One NCHW f32 batch_norm_training call with scale, bias and running
/// statistics, its IR (with `schedule` written on the op where given) and
/// its float64 reference.
struct BatchNormCall {
  BatchNormCall(int64_t n, int64_t c, int64_t h, int64_t w,
                std::string schedule = "")
      : n(n), c(c), s(h * w), shape{n, c, h, w}, schedule(std::move(schedule)),
        x(DType::F32, shape), scale(DType::F32, {c}), bias(DType::F32, {c}),
        runningMean(DType::F32, {c}), runningVar(DType::F32, {c}),
        y(DType::F32, shape), mean(DType::F32, {c}), rstd(DType::F32, {c}),
        newMean(DType::F32, {c}), newVar(DType::F32, {c}) {
    std::mt19937 rng(17);
    x.fillNormal(rng, 3.0, 2.0);
    scale.fillNormal(rng, 1.0, 0.5);
    bias.fillNormal(rng);
    runningMean.fillNormal(rng);
    for (int64_t i = 0; i < c; ++i)
      runningVar.set(i, 0.5 + 0.01 * i);
    for (Buffer *b : {&y, &mean, &rstd, &newMean, &newVar})
      b->fill(std::nan(""));
  }
  std::string ir() const {
    std::string t = tensorType(DType::F32, shape);
    std::string p = tensorType(DType::F32, {c});
    std::string attrs = "layout = #nf.layout<nchw>, momentum = 0.25";
    if (!schedule.empty())
      attrs += ", nf.gpu_schedule = \"" + schedule + "\"";
    return "func.func @bn(%x: " + t + ", %s: " + p + ", %b: " + p +
           ", %rm: " + p + ", %rv: " + p + ") -> (" + t + ", " + p + ", " + p +
           ", " + p + ", " + p +
           ") {\n  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x scale %s "
           "bias %b running(%rm, %rv) {" +
           attrs + "} : (" + t + ", " + p + ", " + p + ", " + p + ", " + p +
           ") -> (" + t + ", " + p + ", " + p + ", " + p + ", " + p +
           ")\n  return %y, %m, %r, %nm, %nv : " + t + ", " + p + ", " + p +
           ", " + p + ", " + p + "\n}\n";
  }
  llvm::Error run(const CudaSimKernel &kernel, SimOrder order,
                  std::vector<SimStats> *stats = nullptr) {
    return kernel.runInSimulator(
        {x.ref(), scale.ref(), bias.ref(), runningMean.ref(), runningVar.ref()},
        {y.ref(), mean.ref(), rstd.ref(), newMean.ref(), newVar.ref()}, order,
        stats);
  }
  /// The largest relative error of the five results against float64.
  double error() const {
    std::vector<double> ry, rm, rr, rnm, rnv, sc = scale.toDoubles(),
                                              bi = bias.toDoubles();
    batchNormTrainingReference(x.toDoubles(), {n, c, s, false}, &sc, &bi, 1e-5,
                               0.25, runningMean.toDoubles(),
                               runningVar.toDoubles(), ry, rm, rr, rnm, rnv);
    return std::max({relativeError(y.toDoubles(), ry),
                     relativeError(mean.toDoubles(), rm),
                     relativeError(rstd.toDoubles(), rr),
                     relativeError(newMean.toDoubles(), rnm),
                     relativeError(newVar.toDoubles(), rnv)});
  }
  /// Whether every result has the same bits as `other`'s.
  bool sameBits(const BatchNormCall &other) const {
    auto same = [](const Buffer &a, const Buffer &b) {
      return a.toDoubles() == b.toDoubles();
    };
    return same(y, other.y) && same(mean, other.mean) &&
           same(rstd, other.rstd) && same(newMean, other.newMean) &&
           same(newVar, other.newVar);
  }
  int64_t n, c, s;
  std::vector<int64_t> shape;
  std::string schedule;
  Buffer x, scale, bias, runningMean, runningVar, y, mean, rstd, newMean,
      newVar;
};

// 4 images of 8 channels of 16 x 16: a channel's 1024 elements are one
// range (256 threads of float4), so 8 tasks, a block each. One launch: x
// read twice (the moments, then to normalize), y written once; each task
// writes its range's mean and M2, which each of its block's 8 warps reads
// (the mean in both sums, M2 in the second); every thread loads its
// channel's scale and bias; the block of range 0 reads the old running
// statistics and writes the four statistics.
TEST(BatchNormOneKernelTest, OneLaunchReadsXTwiceAndWritesYOnce) {
  const int64_t n = 4, c = 8, threads = 256, warps = 8;
  BatchNormCall call(n, c, 16, 16);
  auto kernel = compileForSim(call.ir(), "bn");
  ASSERT_TRUE(kernel);
  std::vector<SimStats> traffic;
  ASSERT_EQ(errorText(call.run(*kernel, SimOrder::Forward, &traffic)), "");
  EXPECT_LE(call.error(), 1e-5);
  ASSERT_EQ(traffic.size(), 1u);
  EXPECT_EQ(traffic[0].blocks, uint64_t(c));
  uint64_t tensor = uint64_t(n * c * 256 * 4), perChannel = uint64_t(c * 4);
  uint64_t partials = 2 * perChannel;
  EXPECT_EQ(traffic[0].bytesLoaded, 2 * tensor + c * warps * 3 * 4 +
                                        c * threads * 2 * 4 + 2 * perChannel);
  // (And the grid barrier's counter, 4 bytes as the simulator counts it.)
  EXPECT_EQ(traffic[0].bytesStored, tensor + partials + 4 * perChannel + 4);
}

// 3 images of 100 channels of 5 x 7 (odd planes: single elements, 8 a
// thread at once): more channels than the 32 blocks of 256 threads the
// simulator holds, so each block takes 3 or 4 channels in turn, and
// normalizes them last first. Float64's result, the same bits in every
// thread order.
TEST(BatchNormOneKernelTest, BlocksTakeSeveralChannelsInTurn) {
  BatchNormCall forward(3, 100, 5, 7), reverse(3, 100, 5, 7),
      shuffled(3, 100, 5, 7);
  auto kernel = compileForSim(forward.ir(), "bn");
  ASSERT_TRUE(kernel);
  std::vector<SimStats> traffic;
  ASSERT_EQ(errorText(forward.run(*kernel, SimOrder::Forward, &traffic)), "");
  ASSERT_EQ(traffic.size(), 1u);
  EXPECT_EQ(traffic[0].blocks, 32u);
  EXPECT_LE(forward.error(), 1e-5);
  ASSERT_EQ(errorText(reverse.run(*kernel, SimOrder::Reverse)), "");
  ASSERT_EQ(errorText(shuffled.run(*kernel, SimOrder::Shuffle)), "");
  EXPECT_TRUE(forward.sameBits(reverse));
  EXPECT_TRUE(forward.sameBits(shuffled));
}

// One channel of 8 x 32 x 32 under a schedule written on the op: blocks of
// 32 threads of float4, of which the simulator holds 64, so 64 ranges of
// 128 elements; each lane of a warp merges two ranges, 32 apart, before
// the warp's sums. Float64's result.
TEST(BatchNormOneKernelTest, LanesMergeMoreThan32RangesOfAChannel) {
  BatchNormCall call(8, 1, 32, 32,
                     "channels-first-one-kernel threads-per-row=32 "
                     "rows-per-block=1 vector=4 registers=2 max-blocks=64");
  auto kernel = compileForSim(call.ir(), "bn");
  ASSERT_TRUE(kernel);
  std::vector<SimStats> traffic;
  ASSERT_EQ(errorText(call.run(*kernel, SimOrder::Forward, &traffic)), "");
  ASSERT_EQ(traffic.size(), 1u);
  EXPECT_EQ(traffic[0].blocks, 64u);
  EXPECT_LE(call.error(), 1e-5);
}

// The split row, as asked for, keeps the three kernels the one kernel
// replaces (the GPU sweep times both): the partial moments, their merge,
// the elementwise pass; the same statistics, to float64's accuracy.
TEST(BatchNormOneKernelTest, SplitRowKeepsTheThreeKernels) {
  BatchNormCall one(4, 8, 16, 16), three(4, 8, 16, 16);
  auto oneKernel = compileForSim(one.ir(), "bn");
  auto threeKernels = compileForSim(three.ir(), "bn", "split-row");
  ASSERT_TRUE(oneKernel && threeKernels);
  std::vector<SimStats> traffic;
  ASSERT_EQ(errorText(three.run(*threeKernels, SimOrder::Forward, &traffic)),
            "");
  EXPECT_EQ(traffic.size(), 3u);
  EXPECT_LE(three.error(), 1e-5);
  ASSERT_EQ(errorText(one.run(*oneKernel, SimOrder::Forward)), "");
  EXPECT_LE(one.error(), 1e-5);
}

} // namespace
