//===- BatchNormOnSimTest.cpp - BatchNorm training in one kernel ----------===//
//
// Part of normfuse. batch_norm_training and batch_norm_grad in NCHW run as
// one cooperative kernel each (BatchNormOneKernel.cpp): each (channel,
// range) task's moments or sums, the grid's barrier, then each channel's
// ranges merged and its range normalized (its dx written). Here, in the
// simulator: the bytes it moves, blocks that take several channels, lanes that
// merge more than 32 ranges, every result against float64 and the same bits in
// every thread order.
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
// thread order (staggered: the blocks as far apart as their grid barriers
// let them run).
TEST(BatchNormOneKernelTest, BlocksTakeSeveralChannelsInTurn) {
  BatchNormCall forward(3, 100, 5, 7), reverse(3, 100, 5, 7),
      shuffled(3, 100, 5, 7), staggered(3, 100, 5, 7);
  auto kernel = compileForSim(forward.ir(), "bn");
  ASSERT_TRUE(kernel);
  std::vector<SimStats> traffic;
  ASSERT_EQ(errorText(forward.run(*kernel, SimOrder::Forward, &traffic)), "");
  ASSERT_EQ(traffic.size(), 1u);
  EXPECT_EQ(traffic[0].blocks, 32u);
  EXPECT_LE(forward.error(), 1e-5);
  ASSERT_EQ(errorText(reverse.run(*kernel, SimOrder::Reverse)), "");
  ASSERT_EQ(errorText(shuffled.run(*kernel, SimOrder::Shuffle)), "");
  ASSERT_EQ(errorText(staggered.run(*kernel, SimOrder::Stagger)), "");
  EXPECT_TRUE(forward.sameBits(reverse));
  EXPECT_TRUE(forward.sameBits(shuffled));
  EXPECT_TRUE(forward.sameBits(staggered));
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

/// One NCHW f32 batch_norm_grad call with a scale, its saved statistics
/// from float64, its IR and its float64 reference.
struct BatchNormGradCall {
  BatchNormGradCall(int64_t n, int64_t c, int64_t h, int64_t w)
      : n(n), c(c), s(h * w), shape{n, c, h, w}, dy(DType::F32, shape),
        x(DType::F32, shape), mean(DType::F32, {c}), rstd(DType::F32, {c}),
        scale(DType::F32, {c}), dx(DType::F32, shape), dscale(DType::F32, {c}),
        dbias(DType::F32, {c}) {
    std::mt19937 rng(23);
    dy.fillNormal(rng);
    x.fillNormal(rng, 0.5, 2.0);
    scale.fillNormal(rng, 1.0, 0.5);
    std::vector<double> y, m, r, nm, nv, running(c, 0.0);
    batchNormTrainingReference(x.toDoubles(), {n, c, s, false}, nullptr,
                               nullptr, 1e-5, 0.1, running, running, y, m, r,
                               nm, nv);
    for (int64_t i = 0; i < c; ++i) {
      mean.set(i, m[i]);
      rstd.set(i, r[i]);
    }
    for (Buffer *b : {&dx, &dscale, &dbias})
      b->fill(std::nan(""));
  }
  std::string ir() const {
    std::string t = tensorType(DType::F32, shape);
    std::string p = tensorType(DType::F32, {c});
    return "func.func @bg(%dy: " + t + ", %x: " + t + ", %m: " + p +
           ", %r: " + p + ", %s: " + p + ") -> (" + t + ", " + p + ", " + p +
           ") {\n  %dx, %ds, %db = nf.batch_norm_grad %dy, %x, %m, %r scale "
           "%s {layout = #nf.layout<nchw>} : (" +
           t + ", " + t + ", " + p + ", " + p + ", " + p + ") -> (" + t + ", " +
           p + ", " + p + ")\n  return %dx, %ds, %db : " + t + ", " + p + ", " +
           p + "\n}\n";
  }
  llvm::Error run(const CudaSimKernel &kernel, SimOrder order,
                  std::vector<SimStats> *stats = nullptr) {
    return kernel.runInSimulator(
        {dy.ref(), x.ref(), mean.ref(), rstd.ref(), scale.ref()},
        {dx.ref(), dscale.ref(), dbias.ref()}, order, stats);
  }
  double error() const {
    std::vector<double> rdx, rds, rdb, sc = scale.toDoubles();
    channelNormGradReference(dy.toDoubles(), x.toDoubles(), {n, c, s, false}, c,
                             true, mean.toDoubles(), rstd.toDoubles(), &sc, rdx,
                             rds, rdb);
    return std::max({relativeError(dx.toDoubles(), rdx),
                     relativeError(dscale.toDoubles(), rds),
                     relativeError(dbias.toDoubles(), rdb)});
  }
  bool sameBits(const BatchNormGradCall &other) const {
    return dx.toDoubles() == other.dx.toDoubles() &&
           dscale.toDoubles() == other.dscale.toDoubles() &&
           dbias.toDoubles() == other.dbias.toDoubles();
  }
  int64_t n, c, s;
  std::vector<int64_t> shape;
  Buffer dy, x, mean, rstd, scale, dx, dscale, dbias;
};

// The gradient in one kernel: 4 images of 8 channels of 16 x 16, a task
// (a block) a channel. dy and x read twice (the sums, then dx), dx written
// once; every thread loads its channel's mean and rstd in each sweep and
// its scale in the second; each task's two sums written and read by its
// block's 8 warps; dscale and dbias written once a channel. Where the
// four kernels (sums, totals, finish, dx) read them twice in four launches.
TEST(BatchNormGradOneKernelTest, OneLaunchReadsDyAndXTwiceAndWritesDxOnce) {
  const int64_t n = 4, c = 8, threads = 256, warps = 8;
  BatchNormGradCall call(n, c, 16, 16);
  auto kernel = compileForSim(call.ir(), "bg");
  ASSERT_TRUE(kernel);
  std::vector<SimStats> traffic;
  ASSERT_EQ(errorText(call.run(*kernel, SimOrder::Forward, &traffic)), "");
  EXPECT_LE(call.error(), 1e-5);
  ASSERT_EQ(traffic.size(), 1u);
  EXPECT_EQ(traffic[0].blocks, uint64_t(c));
  uint64_t tensor = uint64_t(n * c * 256 * 4), perChannel = uint64_t(c * 4);
  EXPECT_EQ(traffic[0].bytesLoaded,
            4 * tensor + c * (threads * 2 * 4 + warps * 2 * 4 +
                              threads * 2 * 4 + threads * 4));
  // (And the grid barrier's counter, 4 bytes as the simulator counts it.)
  EXPECT_EQ(traffic[0].bytesStored, tensor + 4 * perChannel + 4);
}

// 3 images of 100 channels of 5 x 7: each of the simulator's 32 blocks
// takes 3 or 4 channels in turn. Float64's gradients, the same bits in
// every thread order (staggered too); the split row keeps the four
// kernels, to float64's accuracy too.
TEST(BatchNormGradOneKernelTest, BlocksTakeSeveralChannelsInTurn) {
  BatchNormGradCall forward(3, 100, 5, 7), reverse(3, 100, 5, 7),
      shuffled(3, 100, 5, 7), staggered(3, 100, 5, 7), four(3, 100, 5, 7);
  auto kernel = compileForSim(forward.ir(), "bg");
  ASSERT_TRUE(kernel);
  std::vector<SimStats> traffic;
  ASSERT_EQ(errorText(forward.run(*kernel, SimOrder::Forward, &traffic)), "");
  ASSERT_EQ(traffic.size(), 1u);
  EXPECT_EQ(traffic[0].blocks, 32u);
  EXPECT_LE(forward.error(), 1e-5);
  ASSERT_EQ(errorText(reverse.run(*kernel, SimOrder::Reverse)), "");
  ASSERT_EQ(errorText(shuffled.run(*kernel, SimOrder::Shuffle)), "");
  ASSERT_EQ(errorText(staggered.run(*kernel, SimOrder::Stagger)), "");
  EXPECT_TRUE(forward.sameBits(reverse));
  EXPECT_TRUE(forward.sameBits(shuffled));
  EXPECT_TRUE(forward.sameBits(staggered));
  auto fourKernels = compileForSim(four.ir(), "bg", "split-row");
  ASSERT_TRUE(fourKernels);
  traffic.clear();
  ASSERT_EQ(errorText(four.run(*fourKernels, SimOrder::Forward, &traffic)), "");
  EXPECT_EQ(traffic.size(), 4u);
  EXPECT_LE(four.error(), 1e-5);
}

} // namespace
