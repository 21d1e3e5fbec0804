//===- GpuTargetTest.cpp - the text of a GPU target -----------------------===//
//
// Part of normfuse. A GPU target names an architecture or a part, and any
// figure may be replaced after it; every figure is written back by str(),
// so that a target read from a device travels as text (the JIT's pipeline
// option, a cache key) and comes back the same. Out-of-range figures and
// unknown names are refused with the reason.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/GpuTarget.h"

#include <gtest/gtest.h>

using namespace normfuse::runtime;

namespace {

GpuTarget parseOrFail(const std::string &text) {
  std::string error;
  std::optional<GpuTarget> t = GpuTarget::parse(text, error);
  EXPECT_TRUE(t) << text << ": " << error;
  return t.value_or(GpuTarget());
}

std::string refusal(const std::string &text) {
  std::string error;
  EXPECT_FALSE(GpuTarget::parse(text, error)) << text;
  return error;
}

TEST(GpuTargetTest, TheDefaultIsAnH100Sxm) {
  GpuTarget t = parseOrFail(kDefaultGpuTarget);
  EXPECT_EQ(t.arch, "sm_90");
  EXPECT_EQ(t.part, "h100-sxm");
  EXPECT_EQ(t.str(), "sm_90:sms=132:regs=65536:smem=233472:smem-block=232448:"
                     "threads=2048:blocks=32:l2=52428800:clusters=1");
  EXPECT_EQ(t, GpuTarget());
}

TEST(GpuTargetTest, PartsHaveTheirDataSheetFigures) {
  GpuTarget pcie = parseOrFail("h100-pcie");
  EXPECT_EQ(pcie.arch, "sm_90");
  EXPECT_EQ(pcie.multiprocessors, 114);
  EXPECT_TRUE(pcie.clusters);
  GpuTarget a100 = parseOrFail("a100");
  EXPECT_EQ(a100.str(), "sm_80:sms=108:regs=65536:smem=167936:"
                        "smem-block=166912:threads=2048:blocks=32:"
                        "l2=41943040:clusters=0");
  GpuTarget t4 = parseOrFail("t4");
  EXPECT_EQ(t4.smVersion, 75);
  EXPECT_EQ(t4.multiprocessors, 40);
  EXPECT_EQ(t4.maxThreadsPerMultiprocessor, 1024);
  EXPECT_EQ(parseOrFail("l40s").maxThreadsPerMultiprocessor, 1536);
}

TEST(GpuTargetTest, AnArchitectureStandsForItsPart) {
  EXPECT_EQ(parseOrFail("sm_80"), parseOrFail("a100"));
  EXPECT_EQ(parseOrFail("sm_75"), parseOrFail("t4"));
  EXPECT_EQ(parseOrFail("sm_86").multiprocessors, 84); // the A40
  GpuTarget ptx = parseOrFail("compute_90");
  EXPECT_TRUE(ptx.isPtx());
  EXPECT_EQ(ptx.multiprocessors, 132);
  // Newer than every part: the newest part's figures, its own version.
  GpuTarget next = parseOrFail("sm_120");
  EXPECT_EQ(next.smVersion, 120);
  EXPECT_EQ(next.part, "");
  EXPECT_EQ(next.multiprocessors, 132);
}

TEST(GpuTargetTest, FiguresReplaceThePartsOwn) {
  GpuTarget t = parseOrFail("sm_90:sms=114:l2=40MiB:smem=100KiB:"
                            "smem-block=99KiB:clusters=0:arch=sm_90a");
  EXPECT_EQ(t.arch, "sm_90a");
  EXPECT_EQ(t.part, "");
  EXPECT_EQ(t.multiprocessors, 114);
  EXPECT_EQ(t.l2Bytes, 40 << 20);
  EXPECT_EQ(t.sharedBytesPerMultiprocessor, 100 << 10);
  EXPECT_EQ(t.sharedBytesPerBlock, 99 << 10);
  EXPECT_FALSE(t.clusters);
  EXPECT_EQ(t.name(), t.str());
  EXPECT_EQ(parseOrFail("h100-pcie").name(), "h100-pcie");
}

TEST(GpuTargetTest, StrReadsBackAsTheSameTarget) {
  for (const char *text : {"t4", "a100", "a10", "a40", "l4", "l40s", "rtx4090",
                           "h100-sxm", "h100-pcie", "h200", "compute_80",
                           "sm_89:sms=7:threads=1024:blocks=8"}) {
    GpuTarget t = parseOrFail(text);
    EXPECT_EQ(parseOrFail(t.str()), t) << text;
    EXPECT_EQ(parseOrFail(t.str()).str(), t.str()) << text;
  }
}

TEST(GpuTargetTest, BadTextIsRefusedWithTheReason) {
  EXPECT_EQ(refusal("sm_70"),
            "GPU target 'sm_70': architectures before sm_75 are not supported");
  EXPECT_EQ(refusal("v100"),
            "unknown GPU target 'v100': expected sm_XY or compute_XY with XY "
            "at least 75, or a part (t4, a100, a10, a40, l4, l40s, rtx4090, "
            "h100-sxm, h100-pcie, h200), then any of :sms=N, :regs=N, "
            ":smem=BYTES, :smem-block=BYTES, :threads=N, :blocks=N, "
            ":l2=BYTES, :clusters=0|1, :arch=ARCH");
  EXPECT_EQ(refusal("").substr(0, 24), "unknown GPU target '': e");
  EXPECT_EQ(refusal("sm_90:sms"),
            "GPU target 'sm_90:sms': 'sms' is not KEY=VALUE");
  EXPECT_EQ(refusal("sm_90:sms=-3"),
            "GPU target 'sm_90:sms=-3': 'sms=-3' is not KEY=a count (or "
            "bytes, with KiB or MiB)");
  EXPECT_EQ(refusal("sm_90:sms=12KiB"),
            "GPU target 'sm_90:sms=12KiB': 'sms=12KiB' is not KEY=a count (or "
            "bytes, with KiB or MiB)");
  EXPECT_EQ(refusal("sm_90:cores=4").substr(0, 45),
            "GPU target 'sm_90:cores=4': 'cores=4' is not ");
  EXPECT_EQ(refusal("sm_90:sms=0"),
            "GPU target 'sm_90:sms=0': sms=0 is not in [1, 4096]");
  EXPECT_EQ(refusal("sm_90:threads=100"),
            "GPU target 'sm_90:threads=100': threads=100 is not a multiple "
            "of the warp size (32)");
  EXPECT_EQ(refusal("a100:clusters=1"),
            "GPU target 'a100:clusters=1': clusters=1 needs sm_90 or newer, "
            "not sm_80");
  EXPECT_EQ(refusal("h100-pcie:smem-block=300KiB"),
            "GPU target 'h100-pcie:smem-block=300KiB': smem-block=307200 is "
            "not in [49152, 233472]");
  EXPECT_EQ(refusal("a100:arch=sm_90"),
            "GPU target 'a100:arch=sm_90': 'arch=sm_90' is not an "
            "architecture of compute capability 80 (sm_, sm_...a, compute_)");
  EXPECT_EQ(refusal("sm_90:sms=99999999999999"),
            "GPU target 'sm_90:sms=99999999999999': 'sms=99999999999999' is "
            "not KEY=a count (or bytes, with KiB or MiB)");
}

TEST(GpuTargetTest, ADeviceGivesItsOwnFigures) {
  GpuTarget::DeviceFigures pcie{90,   114, 65536,    233472, 232448,
                                2048, 32,  52428800, true};
  std::string error;
  std::optional<GpuTarget> t = GpuTarget::fromDevice(pcie, "sm_90", error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(*t, parseOrFail("h100-pcie"));
  EXPECT_EQ(t->part, "");
  // A device NVRTC does not know gets PTX of an older architecture.
  GpuTarget::DeviceFigures newer = pcie;
  newer.computeCapability = 120;
  t = GpuTarget::fromDevice(newer, "compute_90", error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->smVersion, 120);
  EXPECT_EQ(parseOrFail(t->str()).smVersion, 90)
      << "the text keeps the architecture NVRTC compiles for";
  GpuTarget::DeviceFigures broken = pcie;
  broken.multiprocessors = 0;
  EXPECT_FALSE(GpuTarget::fromDevice(broken, "sm_90", error));
  EXPECT_EQ(error, "the device's figures describe no GPU normfuse can "
                   "target: sms=0 is not in [1, 4096]");
  GpuTarget::DeviceFigures volta = pcie;
  volta.computeCapability = 70;
  EXPECT_FALSE(GpuTarget::fromDevice(volta, "sm_70", error));
  EXPECT_EQ(error, "the device's figures describe no GPU normfuse can "
                   "target: compute capability 7.0 is older than 7.5");
}

TEST(GpuTargetTest, BlocksPerMultiprocessorHonourBothLimits) {
  GpuTarget h100 = parseOrFail("h100-sxm");
  EXPECT_EQ(h100.blocksPerMultiprocessor(256), 8);
  EXPECT_EQ(h100.blocksPerMultiprocessor(32), 32);
  EXPECT_EQ(h100.blocksPerMultiprocessor(1024), 2);
  EXPECT_EQ(parseOrFail("t4").blocksPerMultiprocessor(1024), 1);
  EXPECT_EQ(parseOrFail("l4").blocksPerMultiprocessor(32), 24);
}

TEST(GpuTargetTest, OccupancyFollowsCudasRules) {
  GpuTarget h100 = parseOrFail("h100-sxm");
  auto blocks = [](GpuTarget::Occupancy o) {
    return std::to_string(o.blocks) + " " + o.limit;
  };
  EXPECT_EQ(blocks(h100.occupancy(256, 32, 0)), "8 threads");
  EXPECT_EQ(blocks(h100.occupancy(256, 64, 0)), "4 registers");
  // 33 registers take 40 a thread (1280 a warp, 256 at a time): 6 blocks,
  // not the 7 that 33 x 256 would give.
  EXPECT_EQ(blocks(h100.occupancy(256, 33, 0)), "6 registers");
  // 45 KiB + 1 KiB reserved a block: 4 in 228 KiB, not 5.
  EXPECT_EQ(blocks(h100.occupancy(128, 32, 45 * 1024)), "4 shared memory");
  EXPECT_EQ(blocks(h100.occupancy(32, 16, 0)), "32 blocks");
  // The tensor-core matmul as Nsight Compute saw it on an H200: 239
  // registers (240 allocated) x 128 threads, 48 KiB: 2 blocks an SM.
  EXPECT_EQ(blocks(h100.occupancy(128, 239, 48 * 1024)), "2 registers");
  // 48 KiB + 1 KiB reserved a block: 4 of them in 228 KiB.
  EXPECT_EQ(blocks(h100.occupancy(128, 64, 48 * 1024)), "4 shared memory");
  EXPECT_EQ(blocks(h100.occupancy(128, 64, 228 * 1024)), "0 shared memory");
  // A T4 reserves none, and holds 1024 threads.
  EXPECT_EQ(blocks(parseOrFail("t4").occupancy(256, 0, 16 * 1024)),
            "4 threads");
  EXPECT_EQ(blocks(parseOrFail("t4").occupancy(256, 0, 32 * 1024)),
            "2 shared memory");
}

TEST(GpuTargetTest, ArchitectureVersions) {
  EXPECT_EQ(parseArchVersion("sm_90"), 90);
  EXPECT_EQ(parseArchVersion("sm_90a"), 90);
  EXPECT_EQ(parseArchVersion("compute_75"), 75);
  EXPECT_EQ(parseArchVersion("sm_"), -1);
  EXPECT_EQ(parseArchVersion("sm_9x"), -1);
  EXPECT_EQ(parseArchVersion("sm_123456"), -1);
  EXPECT_EQ(parseArchVersion("h100-sxm"), -1);
}

} // namespace
