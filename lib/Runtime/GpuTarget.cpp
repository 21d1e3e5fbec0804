//===- GpuTarget.cpp - the GPU that CUDA kernels are made for -------------===//
//
// Part of normfuse. See GpuTarget.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/GpuTarget.h"

#include <algorithm>
#include <cstddef>
#include <vector>

using namespace normfuse::runtime;

namespace {

constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;

/// A part's figures, from NVIDIA's data sheets and the CUDA programming
/// guide's table of compute capabilities.
struct Part {
  const char *name;
  int64_t smVersion, sms, smemPerSM, smemPerBlock, threads, blocks, l2;
};

// clang-format off
constexpr Part kParts[] = {
  {"t4",        75,  40,  64 * kKiB,  64 * kKiB, 1024, 16,  4 * kMiB},
  {"a100",      80, 108, 164 * kKiB, 163 * kKiB, 2048, 32, 40 * kMiB},
  {"a10",       86,  72, 100 * kKiB,  99 * kKiB, 1536, 16,  6 * kMiB},
  {"a40",       86,  84, 100 * kKiB,  99 * kKiB, 1536, 16,  6 * kMiB},
  {"l4",        89,  58, 100 * kKiB,  99 * kKiB, 1536, 24, 48 * kMiB},
  {"l40s",      89, 142, 100 * kKiB,  99 * kKiB, 1536, 24, 96 * kMiB},
  {"rtx4090",   89, 128, 100 * kKiB,  99 * kKiB, 1536, 24, 72 * kMiB},
  {"h100-sxm",  90, 132, 228 * kKiB, 227 * kKiB, 2048, 32, 50 * kMiB},
  {"h100-pcie", 90, 114, 228 * kKiB, 227 * kKiB, 2048, 32, 50 * kMiB},
  {"h200",      90, 132, 228 * kKiB, 227 * kKiB, 2048, 32, 50 * kMiB},
};
// clang-format on

/// The part an architecture stands for: its data-center flagship where the
/// schedules were first tuned (sm_86: the A40, sm_89: the RTX 4090, as
/// before there were parts); an architecture newer than every part takes
/// the newest part's figures below it.
const Part &partForArch(int64_t smVersion) {
  const char *name = smVersion >= 90   ? "h100-sxm"
                     : smVersion >= 89 ? "rtx4090"
                     : smVersion >= 86 ? "a40"
                     : smVersion >= 80 ? "a100"
                                       : "t4";
  for (const Part &p : kParts)
    if (std::string_view(p.name) == name)
      return p;
  return kParts[0];
}

GpuTarget fromPart(const Part &p, std::string arch) {
  GpuTarget t;
  t.arch = std::move(arch);
  t.part = p.name;
  t.smVersion = p.smVersion;
  t.multiprocessors = p.sms;
  t.registersPerMultiprocessor = 64 * 1024;
  t.sharedBytesPerMultiprocessor = p.smemPerSM;
  t.sharedBytesPerBlock = p.smemPerBlock;
  t.maxThreadsPerMultiprocessor = p.threads;
  t.maxBlocksPerMultiprocessor = p.blocks;
  t.l2Bytes = p.l2;
  t.clusters = p.smVersion >= 90;
  return t;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos)
      return parts;
    start = end + 1;
  }
}

/// A decimal count, with a KiB or MiB suffix where `sizes`; nothing on
/// anything else or past 2^40.
std::optional<int64_t> parseCount(std::string_view text, bool sizes) {
  int64_t unit = 1;
  if (sizes && text.size() > 3 &&
      (text.substr(text.size() - 3) == "KiB" ||
       text.substr(text.size() - 3) == "MiB")) {
    unit = text[text.size() - 3] == 'K' ? kKiB : kMiB;
    text.remove_suffix(3);
  }
  if (text.empty() || text.size() > 13)
    return std::nullopt;
  int64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    n = n * 10 + (c - '0');
  }
  if (n > (int64_t(1) << 40) / unit)
    return std::nullopt;
  return n * unit;
}

/// Why `t`'s figures cannot describe a GPU, or "".
std::string checkFigures(const GpuTarget &t) {
  auto range = [](const char *key, int64_t value, int64_t lo, int64_t hi) {
    if (value >= lo && value <= hi)
      return std::string();
    return std::string(key) + "=" + std::to_string(value) + " is not in [" +
           std::to_string(lo) + ", " + std::to_string(hi) + "]";
  };
  for (std::string why :
       {range("sms", t.multiprocessors, 1, 4096),
        range("regs", t.registersPerMultiprocessor, 8192, 1 << 20),
        range("smem", t.sharedBytesPerMultiprocessor, 16 * kKiB, 16 * kMiB),
        range("smem-block", t.sharedBytesPerBlock,
              GpuTarget::kStaticSharedBytesPerBlock,
              t.sharedBytesPerMultiprocessor),
        range("threads", t.maxThreadsPerMultiprocessor, GpuTarget::kWarpSize,
              1 << 16),
        range("blocks", t.maxBlocksPerMultiprocessor, 1, 1024),
        range("l2", t.l2Bytes, 0, int64_t(1) << 40)})
    if (!why.empty())
      return why;
  if (t.maxThreadsPerMultiprocessor % GpuTarget::kWarpSize != 0)
    return "threads=" + std::to_string(t.maxThreadsPerMultiprocessor) +
           " is not a multiple of the warp size (32)";
  if (t.clusters && t.smVersion < 90)
    return "clusters=1 needs sm_90 or newer, not sm_" +
           std::to_string(t.smVersion);
  return "";
}

} // namespace

int normfuse::runtime::parseArchVersion(std::string_view arch) {
  std::string_view digits;
  if (arch.rfind("sm_", 0) == 0)
    digits = arch.substr(3);
  else if (arch.rfind("compute_", 0) == 0)
    digits = arch.substr(8);
  else
    return -1;
  if (!digits.empty() && digits.back() == 'a')
    digits.remove_suffix(1);
  if (digits.empty() || digits.size() > 4)
    return -1;
  int n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::optional<GpuTarget> GpuTarget::parse(std::string_view text,
                                          std::string &error) {
  std::vector<std::string_view> fields = split(text, ':');
  std::string_view base = fields.front();
  auto unknown = [&] {
    error = "unknown GPU target '" + std::string(base) +
            "': expected sm_XY or compute_XY with XY at least 75, or a "
            "part (" +
            kGpuTargetParts +
            "), then any of :sms=N, :regs=N, :smem=BYTES, :smem-block=BYTES, "
            ":threads=N, :blocks=N, :l2=BYTES, :clusters=0|1, :arch=ARCH";
    return std::nullopt;
  };
  GpuTarget t;
  if (int version = parseArchVersion(base); version >= 0) {
    if (version < 75) {
      error = "GPU target '" + std::string(base) +
              "': architectures before sm_75 are not supported";
      return std::nullopt;
    }
    t = fromPart(partForArch(version), std::string(base));
    t.smVersion = version;
    t.clusters = version >= 90;
    if (version != partForArch(version).smVersion)
      t.part.clear();
  } else {
    const Part *part = nullptr;
    for (const Part &p : kParts)
      if (base == p.name)
        part = &p;
    if (!part)
      return unknown();
    t = fromPart(*part, "sm_" + std::to_string(part->smVersion));
  }
  for (size_t i = 1; i < fields.size(); ++i) {
    std::string_view field = fields[i];
    size_t eq = field.find('=');
    std::string_view key = field.substr(0, eq);
    std::string_view value = eq == std::string_view::npos
                                 ? std::string_view()
                                 : field.substr(eq + 1);
    auto bad = [&](const char *expected) {
      error = "GPU target '" + std::string(text) + "': '" + std::string(field) +
              "' is not " + expected;
      return std::nullopt;
    };
    if (eq == std::string_view::npos)
      return bad("KEY=VALUE");
    if (key == "arch") {
      int version = parseArchVersion(value);
      if (version != t.smVersion)
        return bad(("an architecture of compute capability " +
                    std::to_string(t.smVersion) + " (sm_, sm_...a, compute_)")
                       .c_str());
      t.arch = std::string(value);
      continue;
    }
    int64_t *slot = key == "sms"          ? &t.multiprocessors
                    : key == "regs"       ? &t.registersPerMultiprocessor
                    : key == "smem"       ? &t.sharedBytesPerMultiprocessor
                    : key == "smem-block" ? &t.sharedBytesPerBlock
                    : key == "threads"    ? &t.maxThreadsPerMultiprocessor
                    : key == "blocks"     ? &t.maxBlocksPerMultiprocessor
                    : key == "l2"         ? &t.l2Bytes
                                          : nullptr;
    if (key == "clusters") {
      if (value != "0" && value != "1")
        return bad("clusters=0 or clusters=1");
      t.clusters = value == "1";
    } else if (!slot) {
      return bad("one of sms, regs, smem, smem-block, threads, blocks, l2, "
                 "clusters, arch");
    } else if (std::optional<int64_t> n =
                   parseCount(value, key == "smem" || key == "smem-block" ||
                                         key == "l2")) {
      *slot = *n;
    } else {
      return bad("KEY=a count (or bytes, with KiB or MiB)");
    }
    // Figures of one's own describe no listed part.
    if (key != "arch")
      t.part.clear();
  }
  if (std::string why = checkFigures(t); !why.empty()) {
    error = "GPU target '" + std::string(text) + "': " + why;
    return std::nullopt;
  }
  return t;
}

std::optional<GpuTarget> GpuTarget::fromDevice(const DeviceFigures &figures,
                                               const std::string &arch,
                                               std::string &error) {
  GpuTarget t;
  t.arch = arch;
  t.part.clear();
  t.smVersion = figures.computeCapability;
  t.multiprocessors = figures.multiprocessors;
  t.registersPerMultiprocessor = figures.registersPerMultiprocessor;
  t.sharedBytesPerMultiprocessor = figures.sharedBytesPerMultiprocessor;
  t.sharedBytesPerBlock = figures.sharedBytesPerBlockOptIn;
  t.maxThreadsPerMultiprocessor = figures.maxThreadsPerMultiprocessor;
  t.maxBlocksPerMultiprocessor = figures.maxBlocksPerMultiprocessor;
  t.l2Bytes = figures.l2Bytes;
  t.clusters = figures.clusterLaunch && t.smVersion >= 90;
  std::string why;
  if (t.smVersion < 75)
    why = "compute capability " + std::to_string(t.smVersion / 10) + "." +
          std::to_string(t.smVersion % 10) + " is older than 7.5";
  else if (parseArchVersion(arch) < 75 || parseArchVersion(arch) > t.smVersion)
    why = "'" + arch + "' is not an architecture it runs";
  else
    why = checkFigures(t);
  if (!why.empty()) {
    error = "the device's figures describe no GPU normfuse can target: " + why;
    return std::nullopt;
  }
  return t;
}

std::string GpuTarget::str() const {
  return arch + ":sms=" + std::to_string(multiprocessors) +
         ":regs=" + std::to_string(registersPerMultiprocessor) +
         ":smem=" + std::to_string(sharedBytesPerMultiprocessor) +
         ":smem-block=" + std::to_string(sharedBytesPerBlock) +
         ":threads=" + std::to_string(maxThreadsPerMultiprocessor) +
         ":blocks=" + std::to_string(maxBlocksPerMultiprocessor) +
         ":l2=" + std::to_string(l2Bytes) +
         ":clusters=" + (clusters ? "1" : "0");
}

int64_t GpuTarget::blocksPerMultiprocessor(int64_t threadsPerBlock) const {
  return std::max<int64_t>(1,
                           std::min(maxBlocksPerMultiprocessor,
                                    maxThreadsPerMultiprocessor /
                                        std::max<int64_t>(1, threadsPerBlock)));
}

GpuTarget::Occupancy GpuTarget::occupancy(int64_t threadsPerBlock,
                                          int64_t registersPerThread,
                                          int64_t sharedBytes) const {
  int64_t warps =
      std::max<int64_t>(1, (threadsPerBlock + kWarpSize - 1) / kWarpSize);
  Occupancy o{maxThreadsPerMultiprocessor / (warps * kWarpSize), "threads"};
  auto limit = [&](int64_t blocks, const char *why) {
    if (blocks < o.blocks)
      o = {blocks, why};
  };
  limit(maxBlocksPerMultiprocessor, "blocks");
  if (registersPerThread > 0) {
    // Registers are allocated to warps 256 at a time.
    int64_t perWarp = (registersPerThread * kWarpSize + 255) / 256 * 256;
    limit(registersPerMultiprocessor / perWarp / warps, "registers");
  }
  int64_t reserved = smVersion >= 80 ? 1024 : 0;
  if (sharedBytes > 0 || reserved > 0)
    limit(sharedBytes > sharedBytesPerBlock
              ? 0
              : sharedBytesPerMultiprocessor / (sharedBytes + reserved),
          "shared memory");
  return o;
}

bool GpuTarget::operator==(const GpuTarget &o) const {
  return arch == o.arch && smVersion == o.smVersion &&
         multiprocessors == o.multiprocessors &&
         registersPerMultiprocessor == o.registersPerMultiprocessor &&
         sharedBytesPerMultiprocessor == o.sharedBytesPerMultiprocessor &&
         sharedBytesPerBlock == o.sharedBytesPerBlock &&
         maxThreadsPerMultiprocessor == o.maxThreadsPerMultiprocessor &&
         maxBlocksPerMultiprocessor == o.maxBlocksPerMultiprocessor &&
         l2Bytes == o.l2Bytes && clusters == o.clusters;
}
