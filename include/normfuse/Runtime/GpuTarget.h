//===- GpuTarget.h - the GPU that CUDA kernels are made for ----*- C++ -*-===//
//
// Part of normfuse. The one description of a GPU that the CUDA back end
// generates kernels for: its architecture and the resources that size
// schedules (multiprocessors, registers, shared memory and threads a
// multiprocessor, the L2 cache, thread-block clusters). Code generation
// chooses schedules from it, nf-translate, nf-run, the JIT and the package
// writer take it as text ("sm_90", "h100-pcie", "sm_90:sms=114"), NVRTC
// compiles for its `arch`, and the runtime fills one in from the device it
// opens (CudaDevice::gpuTarget), so that kernels run on a GPU are sized for
// that GPU. Plain C++: no MLIR or LLVM.
//
// The text is `BASE[:KEY=VALUE]...`. BASE is an architecture (sm_XY, sm_XYa,
// compute_XY: PTX, with XY at least 75), which stands for the part listed
// for it below, or a part's name; each KEY=VALUE then replaces one figure:
//   sms         multiprocessors
//   regs        32-bit registers a multiprocessor
//   smem        shared memory a multiprocessor, bytes (KiB, MiB suffixes)
//   smem-block  shared memory one block may opt in to, bytes
//   threads     threads a multiprocessor holds at once (a multiple of 32)
//   blocks      blocks a multiprocessor holds at once
//   l2          L2 cache, bytes (KiB, MiB suffixes)
//   clusters    0 or 1: thread-block clusters (sm_90 and newer)
//   arch        the architecture NVRTC compiles for (a part's own or a
//               variant of it: sm_90a, compute_90)
// str() writes every figure, and parse(str()) gives the same target back.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_GPUTARGET_H
#define NORMFUSE_RUNTIME_GPUTARGET_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace normfuse::runtime {

/// The target every tool and library uses when none is given.
inline constexpr const char *kDefaultGpuTarget = "sm_90";

/// The parts a target may be named by, as a list for messages.
inline constexpr const char *kGpuTargetParts =
    "t4, a100, a10, a40, l4, l40s, rtx4090, h100-sxm, h100-pcie, h200";

struct GpuTarget {
  static constexpr int64_t kWarpSize = 32;
  static constexpr int64_t kMaxThreadsPerBlock = 1024;
  /// The widest global load or store one thread issues.
  static constexpr int64_t kMaxAccessBytes = 16;
  /// Shared memory a block has without opting in (static arrays).
  static constexpr int64_t kStaticSharedBytesPerBlock = 48 * 1024;

  /// What NVRTC compiles for: "sm_90" (a cubin), "sm_90a", "compute_90"
  /// (PTX).
  std::string arch = "sm_90";
  /// The part it describes ("h100-pcie"), or "" when the figures were
  /// given or found on a device rather than named.
  std::string part = "h100-sxm";
  /// 90 for sm_90.
  int64_t smVersion = 90;
  /// Whether `arch` has the architecture-specific features ("sm_90a":
  /// wgmma), which its code runs only on parts of exactly smVersion.
  bool archSpecific() const { return !arch.empty() && arch.back() == 'a'; }
  int64_t multiprocessors = 132;
  int64_t registersPerMultiprocessor = 65536;
  int64_t sharedBytesPerMultiprocessor = 228 * 1024;
  int64_t sharedBytesPerBlock = 227 * 1024;
  int64_t maxThreadsPerMultiprocessor = 2048;
  int64_t maxBlocksPerMultiprocessor = 32;
  int64_t l2Bytes = 50 * 1024 * 1024;
  bool clusters = true;

  /// The target `text` describes (the syntax above), or nothing with
  /// `error` saying what is wrong with it.
  static std::optional<GpuTarget> parse(std::string_view text,
                                        std::string &error);

  /// The figures a device reports (cuDeviceGetAttribute), for code that
  /// NVRTC compiles to `arch`.
  struct DeviceFigures {
    int computeCapability = 0;
    int multiprocessors = 0;
    int registersPerMultiprocessor = 0;
    int sharedBytesPerMultiprocessor = 0;
    int sharedBytesPerBlockOptIn = 0;
    int maxThreadsPerMultiprocessor = 0;
    int maxBlocksPerMultiprocessor = 0;
    int l2Bytes = 0;
    bool clusterLaunch = false;
  };
  /// The target of a device with these figures, or nothing with `error`
  /// where one is out of range (an architecture before sm_75, no
  /// multiprocessors, ...).
  static std::optional<GpuTarget> fromDevice(const DeviceFigures &figures,
                                             const std::string &arch,
                                             std::string &error);

  /// Every figure: "sm_90:sms=132:regs=65536:smem=233472:smem-block=232448:
  /// threads=2048:blocks=32:l2=52428800:clusters=1" (one line).
  std::string str() const;
  /// The part's name where it has one, else str().
  std::string name() const { return part.empty() ? str() : part; }
  /// Whether NVRTC makes PTX for it (compute_XY) rather than a cubin.
  bool isPtx() const { return arch.rfind("compute_", 0) == 0; }
  /// The blocks of `threadsPerBlock` threads that one multiprocessor holds
  /// by its thread and block limits alone (registers and shared memory
  /// aside).
  int64_t blocksPerMultiprocessor(int64_t threadsPerBlock) const;
  /// What limits the blocks of a kernel resident on one multiprocessor.
  struct Occupancy {
    int64_t blocks = 0;
    /// "threads", "blocks", "registers" or "shared memory": the limit
    /// reached first.
    const char *limit = "threads";
  };
  /// The blocks of a kernel of `threadsPerBlock` threads, each using
  /// `registersPerThread` registers (0: unknown, not counted) and
  /// `sharedBytes` of shared memory a block, that one multiprocessor holds
  /// at once (CUDA's occupancy rules: registers allocated 256 a warp, 1 KiB
  /// of shared memory reserved a block from sm_80 on). 0 where one block
  /// does not fit.
  Occupancy occupancy(int64_t threadsPerBlock, int64_t registersPerThread,
                      int64_t sharedBytes) const;

  bool operator==(const GpuTarget &other) const;
  bool operator!=(const GpuTarget &other) const { return !(*this == other); }
};

/// The compute capability of "sm_90", "sm_90a" or "compute_90" (90), or -1
/// for anything else.
int parseArchVersion(std::string_view arch);

} // namespace normfuse::runtime

#endif // NORMFUSE_RUNTIME_GPUTARGET_H
