//===- KernelChecksOnSimTest.cpp - what the simulator proves ----*- C++ -*-===//
//
// Part of normfuse. What the CUDA simulator shows about the printed kernels
// besides their numbers:
// - the global-memory traffic of each row-norm schedule is the one its
//   design states (x read once when the row stays on chip, three times
//   when it is streamed; y and the statistics written once);
// - a norm gradient reads dy and x once and writes dx once when its rows
//   stay on chip, plus one row of partial parameter gradients per block;
// - a group norm gradient reads dy and x twice (the sums per (image,
//   channel), dx) and writes dx once;
// - BatchNorm training reads x twice from memory (each part's moments in
//   two sweeps, the second from cache on a GPU; the normalize step) and
//   writes y once, with partial rows of per-part moments between;
// - the kernels that finish a reduction over many parts (BatchNorm's
//   moments, bias_add_grad's totals, the norm gradients' parameters) give
//   no thread more than 64 loads (SimStats::maxThreadLoads);
// - the order of the threads between barriers does not change a result,
//   the parameter gradients included (no atomics: every run adds in the
//   same order);
// - it catches the bugs it is there to catch: a planted missing barrier
//   gives wrong numbers, a planted out-of-bounds row an error naming the
//   buffer.
//
//===----------------------------------------------------------------------===//

#include "CudaSimTestUtils.h"
#include "Reference.h"

#include <cmath>

using namespace nftest;
using normfuse::jit::CudaSimKernel;
using normfuse::runtime::LaunchArg;
using normfuse::runtime::SimModule;
using normfuse::runtime::SimOrder;
using normfuse::runtime::SimStats;

namespace {

/// Inputs and poisoned outputs of one layer_norm call.
struct LayerNormCall {
  LayerNormCall(DType dtype, int64_t rows, int64_t cols)
      : rows(rows), cols(cols), x(dtype, {rows, cols}),
        scale(DType::F32, {cols}), bias(DType::F32, {cols}),
        y(dtype, {rows, cols}), mean(DType::F32, {rows, 1}),
        rstd(DType::F32, {rows, 1}) {
    std::mt19937 rng(3);
    x.fillNormal(rng);
    scale.fillNormal(rng, 1.0, 0.5);
    bias.fillNormal(rng);
    for (Buffer *out : {&y, &mean, &rstd})
      out->fill(std::nan(""));
  }
  llvm::Error run(const CudaSimKernel &k, SimOrder order = SimOrder::Forward,
                  std::vector<SimStats> *stats = nullptr) {
    return k.runInSimulator({x.ref(), scale.ref(), bias.ref()},
                            {y.ref(), mean.ref(), rstd.ref()}, order, stats);
  }
  double error() const {
    std::vector<double> ry, rm, rr, s = scale.toDoubles(), b = bias.toDoubles();
    layerNormReference(x.toDoubles(), cols, &s, &b, 1e-5, ry, rm, rr);
    return relativeError(y.toDoubles(), ry);
  }
  int64_t rows, cols;
  Buffer x, scale, bias, y, mean, rstd;
};

struct TrafficCase {
  const char *schedule;
  DType dtype;
  int64_t rows, cols;
  /// Times each element of x is read.
  int64_t readsOfX;
};

// gtest prints a parameter with this instead of its bytes.
[[maybe_unused]] void PrintTo(const TrafficCase &c, std::ostream *os) {
  *os << c.schedule << " " << normfuse::getDTypeName(c.dtype) << " " << c.rows
      << "x" << c.cols;
}

class RowNormTrafficTest : public testing::TestWithParam<TrafficCase> {};

TEST_P(RowNormTrafficTest, MovesTheBytesItsScheduleStates) {
  const TrafficCase &c = GetParam();
  auto kernel =
      compileForSim(layerNormIR(c.dtype, c.rows, c.cols), "ln", c.schedule);
  ASSERT_TRUE(kernel);
  LayerNormCall call(c.dtype, c.rows, c.cols);
  std::vector<SimStats> stats;
  ASSERT_EQ(errorText(call.run(*kernel, SimOrder::Forward, &stats)), "");
  ASSERT_EQ(stats.size(), 1u);
  uint64_t elements = uint64_t(c.rows * c.cols);
  uint64_t elementBytes = normfuse::getDTypeSize(c.dtype);
  // x as often as the schedule says, scale and bias (f32) once per row,
  // as they are applied; y once, mean and rstd (f32) once per row.
  EXPECT_EQ(stats[0].bytesLoaded,
            elements * elementBytes * c.readsOfX + elements * 4 * 2);
  EXPECT_EQ(stats[0].bytesStored, elements * elementBytes + c.rows * 4 * 2);
  EXPECT_LE(call.error(), c.dtype == DType::F32 ? 1e-5 : 1e-3);
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, RowNormTrafficTest,
    testing::Values(
        // 9 rows of 17: the last block of 8 rows has 7 past the end. Rows
        // of 17, 1001 and 999 are peeled: their heads and tails are read
        // once too.
        TrafficCase{"warp-rows", DType::F32, 9, 17, 1},
        TrafficCase{"block-row-registers", DType::F16, 3, 1000, 1},
        TrafficCase{"block-row-registers", DType::F16, 3, 1001, 1},
        TrafficCase{"block-row-streaming", DType::F32, 2, 1000, 3},
        TrafficCase{"block-row-streaming", DType::F32, 2, 999, 3},
        // A cluster of blocks per row, each block reading its part once.
        TrafficCase{"cluster-row", DType::F32, 3, 1000, 1},
        TrafficCase{"cluster-row", DType::F16, 3, 1001, 1}),
    [](const testing::TestParamInfo<TrafficCase> &info) {
      std::string n = info.param.schedule;
      for (char &ch : n)
        if (ch == '-')
          ch = '_';
      return n + "_" + std::to_string(info.param.cols);
    });

// A split row reads its chunk once in the first kernel (into registers:
// each thread's 2 vectors, loaded once) and once in the second, which also
// reads the row's partial moments in every thread (broadcast reads): 3
// chunks of 256 in a row of 700 f32, 32 threads a block.
TEST(RowNormTrafficTest, SplitRowMovesTheBytesItsScheduleStates) {
  const int64_t rows = 2, cols = 700, chunks = 3, threads = 32;
  auto kernel =
      compileForSim(layerNormIR(DType::F32, rows, cols), "ln", "split-row");
  ASSERT_TRUE(kernel);
  LayerNormCall call(DType::F32, rows, cols);
  std::vector<SimStats> stats;
  ASSERT_EQ(errorText(call.run(*kernel, SimOrder::Forward, &stats)), "");
  ASSERT_EQ(stats.size(), 2u);
  uint64_t bytes = uint64_t(rows * cols * 4);
  uint64_t partials = uint64_t(rows * chunks * 2 * 4);
  EXPECT_EQ(stats[0].bytesLoaded, bytes);
  EXPECT_EQ(stats[0].maxThreadLoads, 2u);
  EXPECT_EQ(stats[0].bytesStored, partials);
  EXPECT_EQ(stats[1].bytesLoaded,
            bytes + 2 * bytes /* scale, bias */ +
                uint64_t(rows * chunks * threads) * chunks * 2 * 4);
  EXPECT_EQ(stats[1].bytesStored, bytes + rows * 4 * 2);
  EXPECT_LE(call.error(), 1e-5);
}

// A forced cluster row of 1000 f32 is 4 blocks of 32 threads (250 vectors,
// 2 a thread): after a cluster barrier that only says every block has
// started, each block hands its sum to the 3 others twice (the mean, then
// the squared deviations), one cluster barrier each, and every thread
// of the cluster adds the same four sums in the same order, so the result
// has the same bits in every thread order.
TEST(ClusterRowTest, BlocksShareTheirSumsThroughDistributedSharedMemory) {
  const int64_t rows = 3, cols = 1000, blocks = 4;
  auto kernel =
      compileForSim(layerNormIR(DType::F32, rows, cols), "ln", "cluster-row");
  ASSERT_TRUE(kernel);
  std::vector<LayerNormCall> calls;
  for (SimOrder order : {SimOrder::Forward, SimOrder::Reverse,
                         SimOrder::Shuffle, SimOrder::Stagger}) {
    calls.emplace_back(DType::F32, rows, cols);
    std::vector<SimStats> stats;
    ASSERT_EQ(errorText(calls.back().run(*kernel, order, &stats)), "");
    ASSERT_EQ(stats.size(), 1u);
    EXPECT_EQ(stats[0].blocks, uint64_t(rows * blocks));
    EXPECT_EQ(stats[0].clusterBarriers, uint64_t(rows * 3));
    EXPECT_EQ(stats[0].clusterStores,
              uint64_t(rows * 2 * blocks * (blocks - 1)));
    EXPECT_LE(calls.back().error(), 1e-5);
  }
  for (const LayerNormCall &other : {calls[1], calls[2], calls[3]}) {
    EXPECT_EQ(calls[0].y.bytes, other.y.bytes);
    EXPECT_EQ(calls[0].mean.bytes, other.mean.bytes);
    EXPECT_EQ(calls[0].rstd.bytes, other.rstd.bytes);
  }
}

/// That every call in `others` got the same dx, dscale and dbias bits as
/// `expected` (the same kernels run in other thread orders).
template <typename Call>
void expectSameGradientBits(const Call &expected,
                            std::initializer_list<const Call *> others) {
  for (const Call *other : others) {
    EXPECT_EQ(expected.dx.bytes, other->dx.bytes);
    EXPECT_EQ(expected.dscale.bytes, other->dscale.bytes);
    EXPECT_EQ(expected.dbias.bytes, other->dbias.bytes);
  }
}

/// Inputs and poisoned outputs of one layer_norm_grad call (f32).
struct LayerNormGradCall {
  LayerNormGradCall(int64_t rows, int64_t cols)
      : rows(rows), cols(cols), dy(DType::F32, {rows, cols}),
        x(DType::F32, {rows, cols}), mean(DType::F32, {rows, 1}),
        rstd(DType::F32, {rows, 1}), scale(DType::F32, {cols}),
        dx(DType::F32, {rows, cols}), dscale(DType::F32, {cols}),
        dbias(DType::F32, {cols}) {
    std::mt19937 rng(5);
    dy.fillNormal(rng);
    x.fillNormal(rng);
    scale.fillNormal(rng, 1.0, 0.5);
    std::vector<double> y, m, r;
    layerNormReference(x.toDoubles(), cols, nullptr, nullptr, 1e-5, y, m, r);
    for (int64_t i = 0; i < rows; ++i) {
      mean.set(i, m[i]);
      rstd.set(i, r[i]);
    }
    for (Buffer *out : {&dx, &dscale, &dbias})
      out->fill(std::nan(""));
  }
  llvm::Error run(const CudaSimKernel &k, SimOrder order = SimOrder::Forward,
                  std::vector<SimStats> *stats = nullptr) {
    return k.runInSimulator(
        {dy.ref(), x.ref(), mean.ref(), rstd.ref(), scale.ref()},
        {dx.ref(), dscale.ref(), dbias.ref()}, order, stats);
  }
  /// The largest relative error of dx, dscale and dbias.
  double error() const {
    std::vector<double> rdx, rds, rdb, s = scale.toDoubles();
    channelNormGradReference(
        dy.toDoubles(), x.toDoubles(), ChannelDims{rows, cols, 1, true}, 1,
        false, mean.toDoubles(), rstd.toDoubles(), &s, rdx, rds, rdb);
    return std::max({relativeError(dx.toDoubles(), rdx),
                     relativeError(dscale.toDoubles(), rds),
                     relativeError(dbias.toDoubles(), rdb)});
  }
  int64_t rows, cols;
  Buffer dy, x, mean, rstd, scale, dx, dscale, dbias;
};

// 32 rows of 64 f32: warp rows of 16 threads (one float4 each), 16 rows a
// block, two blocks. The dx kernel reads dy and x once, mean and rstd in
// every thread of a row, the scale once per thread; it writes dx once and
// a partial row of dscale and of dbias per block. The last kernel reads
// those two rows per column and writes dscale and dbias.
TEST(RowNormGradTrafficTest, ReadsDyAndXOnceAndWritesOnePartialRowPerBlock) {
  const int64_t rows = 32, cols = 64, threadsPerRow = 16, blocks = 2;
  auto kernel = compileForSim(rowNormGradIR(DType::F32, rows, cols, true), "g");
  ASSERT_TRUE(kernel);
  LayerNormGradCall call(rows, cols);
  std::vector<SimStats> stats;
  ASSERT_EQ(errorText(call.run(*kernel, SimOrder::Forward, &stats)), "");
  ASSERT_EQ(stats.size(), 2u);
  uint64_t tensor = uint64_t(rows * cols * 4);
  uint64_t partialRows = uint64_t(2 * blocks * cols * 4);
  EXPECT_EQ(stats[0].bytesLoaded, 2 * tensor +
                                      uint64_t(rows * threadsPerRow * 2 * 4) +
                                      uint64_t(rows * cols * 4) /* scale */);
  EXPECT_EQ(stats[0].bytesStored, tensor + partialRows);
  EXPECT_EQ(stats[1].bytesLoaded, partialRows);
  EXPECT_EQ(stats[1].bytesStored, uint64_t(2 * cols * 4));
  EXPECT_LE(call.error(), 1e-5);
}

// A forced cluster row of layer_norm_grad over 7 rows of 1000 f32 is 4
// blocks of 32 threads, 2 float4 a thread (chunks of 256 columns, the
// last 232), and one cluster, which loops over the 7 rows (forced
// schedules plan 2 blocks). After a barrier that only says every block
// has started, each row's two block sums go to the 3 other blocks, one
// cluster barrier a row, into one of two sets of slots by the row's
// parity: with one set, a block running ahead stores the next row's sums
// before a slower one has read this row's (the staggered order runs the
// cluster's blocks as far apart as its barriers let them). dy and x are
// read once, the one partial row of dscale and of dbias written once,
// float64's numbers and the same bits in every thread order.
TEST(ClusterRowTest, GradientBlocksShareTheirRowSumsThroughTwoSetsOfSlots) {
  const int64_t rows = 7, cols = 1000, blocks = 4, threads = 32;
  auto kernel = compileForSim(rowNormGradIR(DType::F32, rows, cols, true), "g",
                              "cluster-row");
  ASSERT_TRUE(kernel);
  std::vector<LayerNormGradCall> calls;
  for (SimOrder order : {SimOrder::Forward, SimOrder::Reverse,
                         SimOrder::Shuffle, SimOrder::Stagger}) {
    calls.emplace_back(rows, cols);
    std::vector<SimStats> stats;
    ASSERT_EQ(errorText(calls.back().run(*kernel, order, &stats)), "");
    ASSERT_EQ(stats.size(), 2u);
    EXPECT_EQ(stats[0].blocks, uint64_t(blocks));
    EXPECT_EQ(stats[0].clusterBarriers, uint64_t(1 + rows));
    EXPECT_EQ(stats[0].clusterStores,
              uint64_t(rows * 2 * blocks * (blocks - 1)));
    uint64_t tensor = uint64_t(rows * cols * 4);
    EXPECT_EQ(stats[0].bytesLoaded,
              2 * tensor + uint64_t(rows * blocks * threads * 2 * 4) +
                  uint64_t(cols * 4) /* scale */);
    EXPECT_EQ(stats[0].bytesStored, tensor + uint64_t(2 * cols * 4));
    EXPECT_LE(calls.back().error(), 1e-5);
  }
  expectSameGradientBits(calls[0], {&calls[1], &calls[2], &calls[3]});
}

// 300 rows of 40 f32: warp rows of 16 threads, 16 rows a block, so 19
// blocks and 19 partial rows of dscale and of dbias. The parameter kernel
// adds them with 8 warps over runs of 4 partial rows (the last run 3), a
// lane per column (two runs of 32 columns, 24 lanes past the end): every
// partial value read once, dscale and dbias written once, float64's
// numbers, and the same bits whatever order the threads run in.
TEST(RowNormGradTrafficTest, ManyPartialRowsAreAddedByManyWarpsOnce) {
  const int64_t rows = 300, cols = 40, blocks = 19;
  auto kernel = compileForSim(rowNormGradIR(DType::F32, rows, cols, true), "g");
  ASSERT_TRUE(kernel);
  LayerNormGradCall forward(rows, cols), reverse(rows, cols),
      shuffled(rows, cols);
  std::vector<SimStats> stats;
  ASSERT_EQ(errorText(forward.run(*kernel, SimOrder::Forward, &stats)), "");
  ASSERT_EQ(stats.size(), 2u);
  uint64_t partialRows = uint64_t(2 * blocks * cols * 4);
  EXPECT_EQ(stats[0].bytesStored, uint64_t(rows * cols * 4) + partialRows);
  EXPECT_EQ(stats[1].bytesLoaded, partialRows);
  EXPECT_EQ(stats[1].bytesStored, uint64_t(2 * cols * 4));
  EXPECT_LE(forward.error(), 1e-5);
  ASSERT_EQ(errorText(reverse.run(*kernel, SimOrder::Reverse)), "");
  ASSERT_EQ(errorText(shuffled.run(*kernel, SimOrder::Shuffle)), "");
  expectSameGradientBits(forward, {&reverse, &shuffled});
}

// 4 x 8 x 8 images of 16 f32 channels, NHWC: 4 threads of float4 cover a
// position, 64 positions a block, so 256 positions are 4 blocks, each
// writing three partial rows of 16 (the mean from the pivot, M2, the
// pivot).
TEST(BatchNormTrafficTest, ReadsXTwiceForTheMomentsOnceToNormalize) {
  const int64_t n = 4, h = 8, w = 8, c = 16, blocks = 4, threads = 256;
  std::string x = tensorType(DType::F32, {n, h, w, c});
  std::string p = tensorType(DType::F32, {c});
  std::string ir = "func.func @bn(%x: " + x + ", %s: " + p + ", %b: " + p +
                   ", %rm: " + p + ", %rv: " + p + ") -> (" + x + ", " + p +
                   ", " + p + ", " + p + ", " + p +
                   ") {\n  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x "
                   "scale %s bias %b running(%rm, %rv) {layout = "
                   "#nf.layout<nhwc>} : (" +
                   x + ", " + p + ", " + p + ", " + p + ", " + p + ") -> (" +
                   x + ", " + p + ", " + p + ", " + p + ", " + p +
                   ")\n  return %y, %m, %r, %nm, %nv : " + x + ", " + p + ", " +
                   p + ", " + p + ", " + p + "\n}\n";
  auto kernel = compileForSim(ir, "bn");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(9);
  Buffer in(DType::F32, {n, h, w, c}), y(DType::F32, {n, h, w, c});
  in.fillNormal(rng);
  std::vector<Buffer> params(4, Buffer(DType::F32, {c}));
  for (Buffer &b : params)
    b.fill(0.5);
  std::vector<Buffer> stats(4, Buffer(DType::F32, {c}));
  std::vector<SimStats> traffic;
  ASSERT_EQ(errorText(kernel->runInSimulator(
                {in.ref(), params[0].ref(), params[1].ref(), params[2].ref(),
                 params[3].ref()},
                {y.ref(), stats[0].ref(), stats[1].ref(), stats[2].ref(),
                 stats[3].ref()},
                SimOrder::Forward, &traffic)),
            "");
  ASSERT_EQ(traffic.size(), 3u);
  uint64_t tensor = uint64_t(n * h * w * c * 4), row = uint64_t(c * 4);
  // The moments: each thread reads its channels' pivot (the first
  // position's value) once, then x twice (the part's sum from the pivot,
  // the squared deviations: from cache on a GPU); three partial rows a
  // block.
  EXPECT_EQ(traffic[0].bytesLoaded, 2 * tensor + blocks * threads * 16);
  EXPECT_EQ(traffic[0].bytesStored, blocks * 3 * row);
  // A lane per channel (a warp: 4 parts) merges the parts (mean and M2
  // each, the pivot once) and, with the old running statistics, writes
  // mean, rstd and both running statistics; lanes past the 16 channels
  // load nothing.
  EXPECT_EQ(traffic[1].bytesLoaded, uint64_t(c * (blocks * 8 + 4 + 8)));
  EXPECT_EQ(traffic[1].bytesStored, 4 * row);
  // Normalize: x a third time, y once; mean, rstd, scale and bias are read
  // per element (from cache on a GPU).
  EXPECT_EQ(traffic[2].bytesLoaded, tensor + 4 * tensor);
  EXPECT_EQ(traffic[2].bytesStored, tensor);
}

/// Inputs and poisoned outputs of one NHWC group_norm_grad call (f32,
/// `groups` groups, with a scale), its IR, and its float64 reference.
struct GroupNormGradCall {
  GroupNormGradCall(int64_t n, int64_t hw, int64_t c, int64_t groups)
      : n(n), hw(hw), c(c), groups(groups), dy(DType::F32, {n, hw, c}),
        x(DType::F32, {n, hw, c}), mean(DType::F32, {n, groups}),
        rstd(DType::F32, {n, groups}), scale(DType::F32, {c}),
        dx(DType::F32, {n, hw, c}), dscale(DType::F32, {c}),
        dbias(DType::F32, {c}) {
    std::mt19937 rng(31);
    dy.fillNormal(rng);
    x.fillNormal(rng, 0.5, 2.0);
    scale.fillNormal(rng, 1.0, 0.5);
    std::vector<double> y, m, r;
    groupNormReference(x.toDoubles(), {n, c, hw, true}, groups, nullptr,
                       nullptr, 1e-5, y, m, r);
    for (size_t i = 0; i < m.size(); ++i) {
      mean.set(i, m[i]);
      rstd.set(i, r[i]);
    }
    for (Buffer *b : {&dx, &dscale, &dbias})
      b->fill(std::nan(""));
  }
  std::string ir() const {
    std::string t = tensorType(DType::F32, {n, hw, c});
    std::string st = tensorType(DType::F32, {n, groups});
    std::string p = tensorType(DType::F32, {c});
    return "func.func @g(%dy: " + t + ", %x: " + t + ", %m: " + st +
           ", %r: " + st + ", %s: " + p + ") -> (" + t + ", " + p + ", " + p +
           ") {\n  %dx, %ds, %db = nf.group_norm_grad %dy, %x, %m, %r scale "
           "%s {layout = #nf.layout<nhwc>, num_groups = " +
           std::to_string(groups) + " : i64} : (" + t + ", " + t + ", " + st +
           ", " + st + ", " + p + ") -> (" + t + ", " + p + ", " + p +
           ")\n  return %dx, %ds, %db : " + t + ", " + p + ", " + p + "\n}\n";
  }
  llvm::Error run(const CudaSimKernel &kernel, SimOrder order,
                  std::vector<SimStats> *stats = nullptr) {
    return kernel.runInSimulator(
        {dy.ref(), x.ref(), mean.ref(), rstd.ref(), scale.ref()},
        {dx.ref(), dscale.ref(), dbias.ref()}, order, stats);
  }
  /// The largest relative error of dx, dscale and dbias.
  double error() const {
    std::vector<double> rdx, rds, rdb, s = scale.toDoubles();
    channelNormGradReference(dy.toDoubles(), x.toDoubles(), {n, c, hw, true},
                             groups, false, mean.toDoubles(), rstd.toDoubles(),
                             &s, rdx, rds, rdb);
    return std::max({relativeError(dx.toDoubles(), rdx),
                     relativeError(dscale.toDoubles(), rds),
                     relativeError(dbias.toDoubles(), rdb)});
  }
  int64_t n, hw, c, groups;
  Buffer dy, x, mean, rstd, scale, dx, dscale, dbias;
};

// The four kernels (forced: the one kernel is below). 2 images of 64
// positions of 16 f32 channels in 4 groups: the sums kernel has 4 threads
// of float4 a position and 64 positions a block, so a block per image; dx
// is elementwise in float4s, a group's 4 channels a vector.
TEST(GroupNormGradTrafficTest, ReadsDyAndXTwiceAndWritesDxOnce) {
  const int64_t n = 2, hw = 64, c = 16, groups = 4, threads = 256;
  GroupNormGradCall call(n, hw, c, groups);
  auto kernel = compileForSim(call.ir(), "g", "channels-last-groups");
  ASSERT_TRUE(kernel);
  std::vector<SimStats> traffic;
  ASSERT_EQ(errorText(call.run(*kernel, SimOrder::Forward, &traffic)), "");
  EXPECT_LE(call.error(), 1e-5);
  ASSERT_EQ(traffic.size(), 4u);
  uint64_t tensor = uint64_t(n * hw * c * 4), row = uint64_t(c * 4);
  // Sums: dy and x once; each thread reads the mean and rstd of its 4
  // channels' groups once (from cache on a GPU); a block writes a partial
  // row of 16 channels for each of its 2 sums.
  EXPECT_EQ(traffic[0].bytesLoaded, 2 * tensor + n * threads * 2 * 4 * 4);
  EXPECT_EQ(traffic[0].bytesStored, n * 2 * row);
  // Totals: each (image, channel)'s one part, read once, written once.
  EXPECT_EQ(traffic[1].bytesLoaded, n * 2 * row);
  EXPECT_EQ(traffic[1].bytesStored, n * 2 * row);
  // Finish: a thread per (image, group) reads its 4 channels' 2 totals and
  // scales; a thread per channel its 2 images' 2 totals. It writes 2 sums
  // per (image, group), dscale and dbias.
  EXPECT_EQ(traffic[2].bytesLoaded,
            uint64_t(n * groups * (4 * 2 + 4) * 4 + c * n * 2 * 4));
  EXPECT_EQ(traffic[2].bytesStored, uint64_t(n * groups * 2 * 4 + 2 * row));
  // dx: dy and x a second time and dx once; per float4 its scales and its
  // group's mean, rstd and two sums (from cache on a GPU).
  EXPECT_EQ(traffic[3].bytesLoaded, 2 * tensor + (tensor / 16) * 32);
  EXPECT_EQ(traffic[3].bytesStored, tensor);
}

// The four kernels (forced). One image of 300 positions of 40 f32
// channels: the sums kernel cuts it into 19 parts (16 positions a block),
// and the totals kernel adds each channel's 19 parts in 8 warps, runs of 4
// parts (the last run 3), two runs of 32 channels of which 8 are past the
// end. Each partial sum is read once, every (channel, sum) total written
// once; the result is float64's and the same bits whatever order the
// threads run in.
TEST(GroupNormGradTrafficTest, ManyPartsAreAddedByManyWarpsOnce) {
  const int64_t n = 1, hw = 300, c = 40, groups = 4, parts = 19;
  GroupNormGradCall forward(n, hw, c, groups), reverse(n, hw, c, groups),
      shuffled(n, hw, c, groups);
  auto kernel = compileForSim(forward.ir(), "g", "channels-last-groups");
  ASSERT_TRUE(kernel);
  std::vector<SimStats> traffic;
  ASSERT_EQ(errorText(forward.run(*kernel, SimOrder::Forward, &traffic)), "");
  ASSERT_EQ(traffic.size(), 4u);
  uint64_t partials = uint64_t(parts * 2 * c * 4);
  EXPECT_EQ(traffic[0].bytesStored, partials);
  EXPECT_EQ(traffic[1].bytesLoaded, partials);
  EXPECT_EQ(traffic[1].bytesStored, uint64_t(2 * c * 4));
  EXPECT_LE(forward.error(), 1e-5);
  ASSERT_EQ(errorText(reverse.run(*kernel, SimOrder::Reverse)), "");
  ASSERT_EQ(errorText(shuffled.run(*kernel, SimOrder::Shuffle)), "");
  expectSameGradientBits(forward, {&reverse, &shuffled});
}

// The one kernel, where the device holds its grid (the simulator holds
// the 2 blocks): 2 images of 64 positions of 16 f32 channels in 4 groups,
// a block of 4 float4 threads x 64 positions per image. One launch: dy and
// x read twice, the two partial sums of each (block, channel) written and
// read once, each (image, channel)'s two totals written once and read by
// its group's thread, dscale, dbias and dx written once. Each thread
// loads its group's mean and rstd (its 4 channels are one group) before
// each sweep and its 4 scales before the second; a group's thread its 4
// channels' scales.
TEST(GroupNormGradOneKernelTest, OneLaunchReadsDyAndXTwiceAndItsSumsOnce) {
  const int64_t n = 2, hw = 64, c = 16, groups = 4, threads = 256;
  GroupNormGradCall call(n, hw, c, groups);
  auto kernel = compileForSim(call.ir(), "g");
  ASSERT_TRUE(kernel);
  std::vector<SimStats> traffic;
  ASSERT_EQ(errorText(call.run(*kernel, SimOrder::Forward, &traffic)), "");
  EXPECT_LE(call.error(), 1e-5);
  ASSERT_EQ(traffic.size(), 1u);
  uint64_t tensor = uint64_t(n * hw * c * 4);
  uint64_t partials = uint64_t(n * 2 * c * 4), totals = partials;
  uint64_t statistics = uint64_t(n * threads * 2 * 4 * 2);
  uint64_t scales = uint64_t(n * threads * 4 * 4);
  uint64_t groupSums = uint64_t(n * groups * (c / groups) * (2 + 1) * 4);
  EXPECT_EQ(traffic[0].bytesLoaded,
            4 * tensor + statistics + scales + partials + groupSums);
  // (And the grid barrier's counter, 4 bytes a barrier as the simulator
  // counts it.)
  EXPECT_EQ(traffic[0].bytesStored,
            tensor + partials + totals + 2 * c * 4 + 2 * 4);
}

// 300 positions of 40 f32 channels in 4 groups, 1 image: parts of 32
// positions (10 blocks of 10 float4 threads x 32 positions, as many as
// the simulator holds of 320 threads, 25, allow). Float64's result, and
// the same bits in every thread order (staggered: the blocks as far apart
// as their grid barriers let them run).
TEST(GroupNormGradOneKernelTest, ThreadOrderDoesNotChangeTheResult) {
  GroupNormGradCall forward(1, 300, 40, 4), reverse(1, 300, 40, 4),
      shuffled(1, 300, 40, 4), staggered(1, 300, 40, 4);
  auto kernel = compileForSim(forward.ir(), "g");
  ASSERT_TRUE(kernel);
  std::vector<SimStats> traffic;
  ASSERT_EQ(errorText(forward.run(*kernel, SimOrder::Forward, &traffic)), "");
  ASSERT_EQ(traffic.size(), 1u);
  EXPECT_EQ(traffic[0].blocks, 10u);
  EXPECT_LE(forward.error(), 1e-5);
  ASSERT_EQ(errorText(reverse.run(*kernel, SimOrder::Reverse)), "");
  ASSERT_EQ(errorText(shuffled.run(*kernel, SimOrder::Shuffle)), "");
  ASSERT_EQ(errorText(staggered.run(*kernel, SimOrder::Stagger)), "");
  expectSameGradientBits(forward, {&reverse, &shuffled, &staggered});
}

// 84 positions of 384 f32 channels in 32 groups, 1 image: blocks of 96
// float4 threads x 2 positions, 42 of which the simulator holds, so 42
// parts of 2 positions; each warp's lanes add an image's parts 32 apart,
// so lanes 0 to 9 add two. Float64's result.
TEST(GroupNormGradOneKernelTest, LanesAddEveryPartOfAnImageOfMoreThan32) {
  GroupNormGradCall call(1, 84, 384, 32);
  auto kernel = compileForSim(call.ir(), "g");
  ASSERT_TRUE(kernel);
  std::vector<SimStats> traffic;
  ASSERT_EQ(errorText(call.run(*kernel, SimOrder::Forward, &traffic)), "");
  ASSERT_EQ(traffic.size(), 1u);
  EXPECT_EQ(traffic[0].blocks, 42u);
  EXPECT_LE(call.error(), 1e-5);
}

// 3 images of 50 positions of 24 f32 channels: blocks of 6 float4 threads
// x 48 positions, of which the simulator holds 28, so 9 parts an image are
// wanted, each whole sweeps of 48 positions: 2 parts an image. Where the
// device holds fewer blocks than the images (here 1 for 3), the four
// kernels run instead, from the same lowering; both give float64's
// result.
TEST(GroupNormGradOneKernelTest, FourKernelsWhereTheDeviceHoldsTooFewBlocks) {
  GroupNormGradCall one(3, 50, 24, 6), four(3, 50, 24, 6);
  auto kernel = compileForSim(one.ir(), "g");
  ASSERT_TRUE(kernel);
  std::vector<SimStats> traffic;
  ASSERT_EQ(errorText(one.run(*kernel, SimOrder::Forward, &traffic)), "");
  ASSERT_EQ(traffic.size(), 1u);
  EXPECT_EQ(traffic[0].blocks, 6u);
  EXPECT_LE(one.error(), 1e-5);
  auto fewer = kernel->withResidency(
      [](const normfuse::runtime::Residency &) { return int64_t(1); });
  ASSERT_TRUE(bool(fewer)) << llvm::toString(fewer.takeError());
  traffic.clear();
  ASSERT_EQ(errorText(four.run(**fewer, SimOrder::Forward, &traffic)), "");
  EXPECT_EQ(traffic.size(), 4u);
  EXPECT_LE(four.error(), 1e-5);
}

TEST(SimulatorOrderTest, ThreadOrderDoesNotChangeAGroupNormGradient) {
  // 64 position groups of a block hand their channel sums over in
  // workgroup memory; the finishing threads add in a fixed order.
  GroupNormGradCall forward(2, 100, 16, 4), reverse(2, 100, 16, 4),
      shuffled(2, 100, 16, 4);
  auto kernel = compileForSim(forward.ir(), "g");
  ASSERT_TRUE(kernel);
  ASSERT_EQ(errorText(forward.run(*kernel, SimOrder::Forward)), "");
  ASSERT_EQ(errorText(reverse.run(*kernel, SimOrder::Reverse)), "");
  ASSERT_EQ(errorText(shuffled.run(*kernel, SimOrder::Shuffle)), "");
  EXPECT_LE(forward.error(), 1e-5);
  expectSameGradientBits(forward, {&reverse, &shuffled});
}

TEST(SimulatorOrderTest, ThreadOrderDoesNotChangeANormGradient) {
  // Forced warp rows: two blocks of 16 rows of 40 loop over 37 rows
  // and hand their column sums over in workgroup memory.
  auto kernel =
      compileForSim(rowNormGradIR(DType::F32, 37, 40, true), "g", "warp-rows");
  ASSERT_TRUE(kernel);
  LayerNormGradCall forward(37, 40), reverse(37, 40), shuffled(37, 40);
  ASSERT_EQ(errorText(forward.run(*kernel, SimOrder::Forward)), "");
  ASSERT_EQ(errorText(reverse.run(*kernel, SimOrder::Reverse)), "");
  ASSERT_EQ(errorText(shuffled.run(*kernel, SimOrder::Shuffle)), "");
  EXPECT_LE(forward.error(), 1e-5);
  expectSameGradientBits(forward, {&reverse, &shuffled});
}

TEST(SimulatorOrderTest, ThreadOrderDoesNotChangeABlockRowNorm) {
  auto kernel = compileForSim(layerNormIR(DType::F32, 3, 1000), "ln",
                              "block-row-registers");
  ASSERT_TRUE(kernel);
  LayerNormCall forward(DType::F32, 3, 1000), reverse(DType::F32, 3, 1000),
      shuffled(DType::F32, 3, 1000);
  ASSERT_EQ(errorText(forward.run(*kernel, SimOrder::Forward)), "");
  ASSERT_EQ(errorText(reverse.run(*kernel, SimOrder::Reverse)), "");
  ASSERT_EQ(errorText(shuffled.run(*kernel, SimOrder::Shuffle)), "");
  // Every thread adds the same partial sums in the same order: the results
  // agree bit for bit.
  EXPECT_EQ(forward.y.bytes, reverse.y.bytes);
  EXPECT_EQ(forward.y.bytes, shuffled.y.bytes);
  EXPECT_EQ(forward.rstd.bytes, shuffled.rstd.bytes);
}

/// `kernel` with its source edited by `edit` and its plan by `editPlan`.
std::shared_ptr<CudaSimKernel>
plant(const CudaSimKernel &kernel,
      const std::function<void(std::string &)> &edit,
      const std::function<void(normfuse::runtime::LaunchPlan &)> &editPlan =
          nullptr) {
  std::string source = kernel.getSource();
  edit(source);
  std::string error;
  auto module = SimModule::compile(source, error);
  if (!module) {
    ADD_FAILURE() << error;
    return nullptr;
  }
  normfuse::runtime::LaunchPlan plan = kernel.getPlan();
  if (editPlan)
    editPlan(plan);
  return std::make_shared<CudaSimKernel>(
      kernel.getName(), kernel.getSignature(), source, plan, std::move(module));
}

/// Where the first kernel of printed CUDA `source` begins (its prelude
/// before).
size_t firstKernel(const std::string &source) {
  size_t at = source.find("extern \"C\" __global__");
  EXPECT_NE(at, std::string::npos) << source;
  return at == std::string::npos ? 0 : at;
}

TEST(PlantedBugTest, AMissingBarrierGivesWrongNumbers) {
  auto kernel = compileForSim(layerNormIR(DType::F32, 3, 1000), "ln",
                              "block-row-registers");
  ASSERT_TRUE(kernel);
  LayerNormCall good(DType::F32, 3, 1000);
  ASSERT_EQ(errorText(good.run(*kernel)), "");
  EXPECT_LE(good.error(), 1e-5);

  // The barrier after the warps' partial sums are written to shared
  // memory, and before they are read: the first one in the kernel (past
  // the prelude's).
  auto broken = plant(*kernel, [](std::string &source) {
    size_t at = source.find("__syncthreads();", firstKernel(source));
    ASSERT_NE(at, std::string::npos) << source;
    source.replace(at, std::string("__syncthreads();").size(), "");
  });
  ASSERT_TRUE(broken);
  LayerNormCall bad(DType::F32, 3, 1000);
  ASSERT_EQ(errorText(bad.run(*broken)), "");
  EXPECT_FALSE(bad.error() <= 1e-5) << "the planted race went unnoticed";
}

TEST(PlantedBugTest, AMissingBarrierInAGradientsHandOverGivesWrongNumbers) {
  auto kernel =
      compileForSim(rowNormGradIR(DType::F32, 37, 40, true), "g", "warp-rows");
  ASSERT_TRUE(kernel);
  // Warp rows sum nothing across warps: the first barrier is the one
  // between the row groups' stores of their column sums and group 0's
  // reads.
  auto broken = plant(*kernel, [](std::string &source) {
    size_t at = source.find("__syncthreads();", firstKernel(source));
    ASSERT_NE(at, std::string::npos) << source;
    source.replace(at, std::string("__syncthreads();").size(), "");
  });
  ASSERT_TRUE(broken);
  LayerNormGradCall bad(37, 40);
  ASSERT_EQ(errorText(bad.run(*broken)), "");
  EXPECT_FALSE(bad.error() <= 1e-5) << "the planted race went unnoticed";
}

TEST(PlantedBugTest, AnOutOfBoundsRowIsAnErrorNamingTheBuffer) {
  auto kernel = compileForSim(layerNormIR(DType::F32, 3, 1000), "ln",
                              "block-row-streaming");
  ASSERT_TRUE(kernel);
  // One block more than there are rows: the fourth block reads past x.
  auto broken = plant(
      *kernel, [](std::string &) {},
      [](normfuse::runtime::LaunchPlan &plan) {
        ASSERT_EQ(plan.steps.size(), 1u);
        plan.steps[0].launch.grid[0] += 1;
        for (LaunchArg &arg : plan.steps[0].launch.args)
          if (arg.kind == LaunchArg::Kind::Integer && arg.value == 3)
            arg.value = 4; // rows
      });
  ASSERT_TRUE(broken);
  LayerNormCall call(DType::F32, 3, 1000);
  std::string error = errorText(call.run(*broken));
  EXPECT_NE(error.find("out-of-bounds global load"), std::string::npos)
      << error;
  EXPECT_NE(error.find("input 0"), std::string::npos) << error;
}

} // namespace

namespace {

/// The simulator's record of each launch of `k` run on `inputs`, beside
/// its kernel's name.
std::vector<std::pair<std::string, SimStats>>
launchesOf(const CudaSimKernel &k, std::vector<Buffer> &inputs,
           std::vector<Buffer> &outputs) {
  std::vector<normfuse::TensorRef> in, out;
  for (Buffer &b : inputs)
    in.push_back(b.ref());
  for (Buffer &b : outputs)
    out.push_back(b.ref());
  std::vector<SimStats> stats;
  EXPECT_EQ(errorText(k.runInSimulator(in, out, SimOrder::Forward, &stats)),
            "");
  std::vector<std::pair<std::string, SimStats>> launches;
  size_t next = 0;
  for (const auto &step : k.getPlan().steps)
    if (step.kind == normfuse::runtime::Step::Kind::Launch &&
        !step.launch.emptyGrid() && next < stats.size())
      launches.push_back({step.launch.kernel, stats[next++]});
  EXPECT_EQ(next, stats.size());
  return launches;
}

} // namespace

// The kernels that finish a reduction over many parts (256 or more here:
// the blocks of the kernel before; BatchNorm's moments, bias_add_grad's
// totals, layer_norm_grad's parameters, group_norm_grad's totals and
// finish) split each channel's or column's parts among many warps: no thread
// loads more than 64 values, where a thread per channel walking the parts in
// turn loaded 2 x 256 (BatchNorm's finish before 2026-11-27) or 256. A planted
// serial walk fails this.
TEST(FinishingKernelTest, NoThreadWalksThePartsAlone) {
  std::mt19937 rng(3);
  auto filled = [&](std::vector<int64_t> shape) {
    Buffer b(DType::F32, shape);
    b.fillNormal(rng, 0.5, 1.0);
    return b;
  };
  struct Case {
    std::string ir, fn;
    std::vector<std::vector<int64_t>> in, out;
  };
  std::string x = tensorType(DType::F32, {4, 32, 32, 64});
  std::string c = tensorType(DType::F32, {64});
  std::string rows = tensorType(DType::F32, {4096, 64});
  std::string stat = tensorType(DType::F32, {4096, 1});
  std::vector<Case> cases = {
      {"func.func @bn(%x: " + x + ", %rm: " + c + ", %rv: " + c + ") -> (" + x +
           ", " + c + ", " + c + ", " + c + ", " + c +
           ") {\n  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x "
           "running(%rm, %rv) {layout = #nf.layout<nhwc>} : (" +
           x + ", " + c + ", " + c + ") -> (" + x + ", " + c + ", " + c + ", " +
           c + ", " + c + ")\n  return %y, %m, %r, %nm, %nv : " + x + ", " + c +
           ", " + c + ", " + c + ", " + c + "\n}\n",
       "bn",
       {{4, 32, 32, 64}, {64}, {64}},
       {{4, 32, 32, 64}, {64}, {64}, {64}, {64}}},
      {"func.func @bg(%dy: " + x + ") -> " + c +
           " {\n  %g = nf.bias_add_grad %dy {layout = #nf.layout<nhwc>} : " +
           x + " -> " + c + "\n  return %g : " + c + "\n}\n",
       "bg",
       {{4, 32, 32, 64}},
       {{64}}},
      {"func.func @lg(%dy: " + rows + ", %x: " + rows + ", %m: " + stat +
           ", %r: " + stat + ", %s: " + tensorType(DType::F32, {64}) +
           ") -> (" + rows + ", " + tensorType(DType::F32, {64}) + ", " +
           tensorType(DType::F32, {64}) +
           ") {\n  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r scale "
           "%s {axis = 1 : i64} : (" +
           rows + ", " + rows + ", " + stat + ", " + stat + ", " +
           tensorType(DType::F32, {64}) + ") -> (" + rows + ", " +
           tensorType(DType::F32, {64}) + ", " + tensorType(DType::F32, {64}) +
           ")\n  return %dx, %ds, %db : " + rows + ", " +
           tensorType(DType::F32, {64}) + ", " + tensorType(DType::F32, {64}) +
           "\n}\n",
       "lg",
       {{4096, 64}, {4096, 64}, {4096, 1}, {4096, 1}, {64}},
       {{4096, 64}, {64}, {64}}},
      {"func.func @gg(%dy: " + x + ", %x: " + x +
           ", %m: " + tensorType(DType::F32, {4, 32}) +
           ", %r: " + tensorType(DType::F32, {4, 32}) + ", %s: " + c +
           ") -> (" + x + ", " + c + ", " + c +
           ") {\n  %dx, %ds, %db = nf.group_norm_grad %dy, %x, %m, %r scale "
           "%s {layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (" +
           x + ", " + x + ", " + tensorType(DType::F32, {4, 32}) + ", " +
           tensorType(DType::F32, {4, 32}) + ", " + c + ") -> (" + x + ", " +
           c + ", " + c + ")\n  return %dx, %ds, %db : " + x + ", " + c + ", " +
           c + "\n}\n",
       "gg",
       {{4, 32, 32, 64}, {4, 32, 32, 64}, {4, 32}, {4, 32}, {64}},
       {{4, 32, 32, 64}, {64}, {64}}},
  };
  for (const Case &cs : cases) {
    SCOPED_TRACE(cs.fn);
    // (The group norm gradient's four kernels: its one kernel is not a
    // finishing kernel.)
    auto kernel = compileForSim(
        cs.ir, cs.fn, cs.fn == "gg" ? "channels-last-groups" : "auto");
    ASSERT_TRUE(kernel);
    std::vector<Buffer> in, out;
    for (const auto &s : cs.in)
      in.push_back(filled(s));
    for (const auto &s : cs.out)
      out.push_back(Buffer(DType::F32, s));
    // Positive rstd for the norm gradients.
    if (cs.fn == "lg" || cs.fn == "gg")
      for (int64_t i = 0; i < in[3].size(); ++i)
        in[3].set(i, 1.0 + 0.1 * (i % 7));
    auto launches = launchesOf(*kernel, in, out);
    ASSERT_GE(launches.size(), 2u);
    // The first kernel's blocks are the parts the finish merges.
    EXPECT_GE(launches.front().second.blocks, 256u) << launches.front().first;
    int finishing = 0;
    for (const auto &[name, stats] : launches) {
      llvm::StringRef n(name);
      if (!n.ends_with("_totals") && !n.ends_with("_finish") &&
          !n.ends_with("_params"))
        continue;
      ++finishing;
      EXPECT_LE(stats.maxThreadLoads, 64u) << name;
    }
    EXPECT_GE(finishing, 1) << cs.fn;
  }
}
