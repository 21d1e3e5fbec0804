//===- BufferCacheTest.cpp - kernels keep their large intermediates -------===//
//
// Part of normfuse. A kernel compiled with CPUOptions::cacheBuffers (the
// default) gets its malloc and free from the buffer cache
// (lib/JIT/BufferCache.h): blocks of 128 KiB and up that it frees are kept,
// and the next call's requests of the same size class reuse them. The
// function here, x (256x64) @ w (64x512) then relu then silu, op by op,
// needs two intermediates of 512 KiB (the matmul and the relu results), both
// live at once (fused, the default, it needs none). The cache's counters are
// shared by the process: each test counts from its start.
//
//===----------------------------------------------------------------------===//

#include "BufferCache.h"
#include "JITTestUtils.h"
#include "Reference.h"

#include <cmath>
#include <thread>

using namespace nftest;
namespace bc = normfuse::jit::buffer_cache;
using normfuse::jit::BufferCacheStats;
using normfuse::jit::getBufferCacheStats;

namespace {

constexpr int64_t kRows = 256, kDepth = 64, kCols = 512;

const char *kChain = R"(
func.func @chain(%x: tensor<256x64xf32>, %w: tensor<64x512xf32>) -> tensor<256x512xf32> {
  %m = nf.matmul %x, %w : tensor<256x64xf32>, tensor<64x512xf32> -> tensor<256x512xf32>
  %r = nf.relu %m : tensor<256x512xf32>
  %s = nf.silu %r : tensor<256x512xf32>
  return %s : tensor<256x512xf32>
}
)";

std::shared_ptr<normfuse::jit::Kernel> compileChain(normfuse::jit::JIT &jit) {
  auto kernel = jit.compile(kChain, "chain");
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError());
    return nullptr;
  }
  return *kernel;
}

/// Op by op, so that the chain has intermediates to allocate.
normfuse::jit::Options withCache(bool cacheBuffers) {
  normfuse::jit::Options options;
  options.fuse = false;
  options.cpu.cacheBuffers = cacheBuffers;
  return options;
}

/// Inputs drawn from N(0, 1) with `seed`.
struct Inputs {
  explicit Inputs(unsigned seed)
      : x(DType::F32, {kRows, kDepth}), w(DType::F32, {kDepth, kCols}) {
    std::mt19937 rng(seed);
    x.fillNormal(rng);
    w.fillNormal(rng, 0.0, 0.125);
  }
  /// silu(relu(x @ w)) in double precision.
  std::vector<double> reference() const {
    std::vector<double> out(kRows * kCols);
    for (int64_t i = 0; i < kRows; ++i)
      for (int64_t j = 0; j < kCols; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < kDepth; ++k)
          sum += x.get(i * kDepth + k) * w.get(k * kCols + j);
        double r = std::max(sum, 0.0);
        out[i * kCols + j] = r / (1.0 + std::exp(-r));
      }
    return out;
  }
  Buffer x, w;
};

/// Runs `kernel` on `in`; the output, poisoned with NaN before the call.
Buffer run(normfuse::jit::Kernel &kernel, Inputs &in) {
  Buffer y(DType::F32, {kRows, kCols});
  y.fill(std::nan(""));
  EXPECT_EQ(errorText(kernel.run({in.x.ref(), in.w.ref()}, {y.ref()})), "");
  return y;
}

/// The stats now, with the counters counted from `before`.
BufferCacheStats since(const BufferCacheStats &before) {
  BufferCacheStats d = getBufferCacheStats();
  d.reused -= before.reused;
  d.allocated -= before.allocated;
  return d;
}

/// The class of the intermediates: 512 KiB and the alignment the lowering
/// adds to an allocation.
constexpr size_t kIntermediateClass = (size_t(512) << 10) + bc::kClassSlack;

class BufferCacheTest : public ::testing::Test {
protected:
  // Every test starts from an empty cache with the default limit, whatever
  // ran before it in this process, and counts from there.
  void SetUp() override {
    normfuse::jit::setBufferCacheLimit(size_t(1) << 30);
    normfuse::jit::releaseBufferCache();
    start = getBufferCacheStats();
  }
  void TearDown() override { SetUp(); }
  BufferCacheStats sinceStart() const { return since(start); }
  BufferCacheStats start;
};

TEST_F(BufferCacheTest, SizeClassesAreFourPerPowerOfTwoPlusAPage) {
  const size_t k = 1024, page = bc::kClassSlack;
  EXPECT_EQ(page, 4 * k);
  EXPECT_EQ(bc::roundToClass(1), 1u);
  EXPECT_EQ(bc::roundToClass(128 * k - 1), 128 * k - 1);
  EXPECT_EQ(bc::roundToClass(128 * k), 128 * k + page);
  EXPECT_EQ(bc::roundToClass(132 * k), 128 * k + page);
  EXPECT_EQ(bc::roundToClass(132 * k + 1), 160 * k + page);
  EXPECT_EQ(bc::roundToClass(164 * k + 1), 192 * k + page);
  EXPECT_EQ(bc::roundToClass(228 * k), 224 * k + page);
  EXPECT_EQ(bc::roundToClass(228 * k + 1), 256 * k + page);
  EXPECT_EQ(bc::roundToClass(512 * k + 64), 512 * k + page);
  EXPECT_EQ(bc::roundToClass(3 * k * k + page + 1), 3584 * k + page);
}

TEST_F(BufferCacheTest, BlocksStartOnACacheLine) {
  for (size_t bytes : {size_t(1), size_t(1000), size_t(200) << 10}) {
    void *block = bc::allocate(bytes);
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % 64, 0u) << bytes;
    bc::release(block);
  }
  bc::release(nullptr);
}

TEST_F(BufferCacheTest, AReleasedBlockServesTheNextRequestOfItsClass) {
  void *first = bc::allocate(140 << 10);
  bc::release(first);
  EXPECT_EQ(getBufferCacheStats().idleBytes, size_t(164) << 10);
  // 150 KiB is in the same class (160 KiB and a page); 200 KiB is not.
  void *other = bc::allocate(200 << 10);
  EXPECT_NE(other, first);
  void *same = bc::allocate(150 << 10);
  EXPECT_EQ(same, first);
  bc::release(same);
  bc::release(other);
  BufferCacheStats stats = sinceStart();
  EXPECT_EQ(stats.idleBlocks, 2u);
  EXPECT_EQ(stats.idleBytes, size_t(164 + 228) << 10);
  EXPECT_EQ(stats.reused, 1u);
  EXPECT_EQ(stats.allocated, 2u);
}

TEST_F(BufferCacheTest, SecondCallReusesTheFirstCallsIntermediates) {
  normfuse::jit::JIT jit(withCache(true));
  auto kernel = compileChain(jit);
  ASSERT_TRUE(kernel);
  Inputs in(1);
  run(*kernel, in);
  BufferCacheStats first = sinceStart();
  EXPECT_EQ(first.allocated, 2u);
  EXPECT_EQ(first.reused, 0u);
  EXPECT_EQ(first.idleBlocks, 2u);
  EXPECT_EQ(first.idleBytes, 2 * kIntermediateClass);

  BufferCacheStats before = getBufferCacheStats();
  run(*kernel, in);
  BufferCacheStats second = since(before);
  EXPECT_EQ(second.allocated, 0u);
  EXPECT_EQ(second.reused, 2u);
  EXPECT_EQ(second.idleBlocks, 2u);
}

TEST_F(BufferCacheTest, ReusedBuffersGiveTheBitsOfFreshOnes) {
  normfuse::jit::JIT cached(withCache(true)), uncached(withCache(false));
  auto reusing = compileChain(cached);
  auto fresh = compileChain(uncached);
  ASSERT_TRUE(reusing && fresh);
  // The second call's intermediates hold the first call's values.
  Inputs a(2), b(3);
  run(*reusing, a);
  Buffer y = run(*reusing, b);
  EXPECT_EQ(sinceStart().reused, 2u);
  EXPECT_EQ(y.bytes, run(*fresh, b).bytes);
  EXPECT_LE(relativeError(y.toDoubles(), b.reference()), 1e-5);
}

TEST_F(BufferCacheTest, KernelsWithoutTheCacheLeaveItUntouched) {
  normfuse::jit::JIT jit(withCache(false));
  auto kernel = compileChain(jit);
  ASSERT_TRUE(kernel);
  Inputs in(4);
  Buffer y = run(*kernel, in);
  run(*kernel, in);
  BufferCacheStats stats = sinceStart();
  EXPECT_EQ(stats.allocated, 0u);
  EXPECT_EQ(stats.reused, 0u);
  EXPECT_EQ(stats.idleBlocks, 0u);
  EXPECT_LE(relativeError(y.toDoubles(), in.reference()), 1e-5);
}

TEST_F(BufferCacheTest, ALimitBelowABlockKeepsNothing) {
  normfuse::jit::setBufferCacheLimit(256 << 10);
  normfuse::jit::JIT jit(withCache(true));
  auto kernel = compileChain(jit);
  ASSERT_TRUE(kernel);
  Inputs in(5);
  run(*kernel, in);
  Buffer y = run(*kernel, in);
  BufferCacheStats stats = sinceStart();
  EXPECT_EQ(stats.allocated, 4u);
  EXPECT_EQ(stats.reused, 0u);
  EXPECT_EQ(stats.idleBytes, 0u);
  EXPECT_EQ(stats.limitBytes, size_t(256) << 10);
  EXPECT_LE(relativeError(y.toDoubles(), in.reference()), 1e-5);
}

TEST_F(BufferCacheTest, LoweringTheLimitFreesIdleBlocksDownToIt) {
  normfuse::jit::JIT jit(withCache(true));
  auto kernel = compileChain(jit);
  ASSERT_TRUE(kernel);
  Inputs in(6);
  run(*kernel, in);
  normfuse::jit::setBufferCacheLimit(600 << 10);
  EXPECT_EQ(getBufferCacheStats().idleBlocks, 1u);
  EXPECT_EQ(getBufferCacheStats().idleBytes, kIntermediateClass);
  normfuse::jit::releaseBufferCache();
  EXPECT_EQ(getBufferCacheStats().idleBlocks, 0u);
  EXPECT_EQ(getBufferCacheStats().idleBytes, 0u);
}

TEST_F(BufferCacheTest, BlocksStayWhileAnotherJITLives) {
  normfuse::jit::JIT first(withCache(true));
  {
    normfuse::jit::JIT second(withCache(true));
    auto kernel = compileChain(second);
    ASSERT_TRUE(kernel);
    Inputs in(7);
    run(*kernel, in);
  }
  // `first` is alive: the blocks stay.
  EXPECT_EQ(getBufferCacheStats().idleBlocks, 2u);
}

TEST_F(BufferCacheTest, TheLastJITToGoFreesTheIdleBlocks) {
  if (bc::getUsers() != 0)
    GTEST_SKIP() << "another JIT of this process is alive (run this test "
                    "alone, as ctest does)";
  {
    normfuse::jit::JIT jit(withCache(true));
    auto kernel = compileChain(jit);
    ASSERT_TRUE(kernel);
    Inputs in(8);
    run(*kernel, in);
    EXPECT_EQ(getBufferCacheStats().idleBlocks, 2u);
  }
  EXPECT_EQ(getBufferCacheStats().idleBlocks, 0u);
}

TEST_F(BufferCacheTest, ConcurrentCallsGetTheirOwnBuffers) {
  normfuse::jit::JIT jit(withCache(true));
  auto kernel = compileChain(jit);
  ASSERT_TRUE(kernel);
  Inputs a(9), b(10);
  Buffer ya = run(*kernel, a), yb = run(*kernel, b);
  // Each thread checks its results against its own input's first result;
  // a buffer handed to both threads at once would mix them.
  auto calls = [&](Inputs &in, const Buffer &expected, int &same) {
    for (int i = 0; i < 10; ++i) {
      Buffer y(DType::F32, {kRows, kCols});
      if (errorText(kernel->run({in.x.ref(), in.w.ref()}, {y.ref()}, 1))
              .empty() &&
          y.bytes == expected.bytes)
        ++same;
    }
  };
  int sameA = 0, sameB = 0;
  std::thread ta(calls, std::ref(a), std::cref(ya), std::ref(sameA));
  std::thread tb(calls, std::ref(b), std::cref(yb), std::ref(sameB));
  ta.join();
  tb.join();
  EXPECT_EQ(sameA, 10);
  EXPECT_EQ(sameB, 10);
  // At most two calls ran at once: at most four blocks were ever made.
  EXPECT_LE(sinceStart().allocated, 4u);
}

} // namespace

// Fusion is the JIT's default: the chain then runs as one fused kernel
// (matmul with its relu and silu epilogue) that allocates no intermediate.
TEST_F(BufferCacheTest,
       TheDefaultOptionsFuseTheChainIntoOneKernelWithoutIntermediates) {
  normfuse::jit::JIT jit;
  EXPECT_TRUE(llvm::StringRef(jit.getTargetDescription()).ends_with(", fused"));
  auto kernel = compileChain(jit);
  ASSERT_TRUE(kernel);
  Inputs in(1);
  run(*kernel, in);
  BufferCacheStats stats = sinceStart();
  EXPECT_EQ(stats.allocated, 0u);
  EXPECT_EQ(stats.reused, 0u);
}
