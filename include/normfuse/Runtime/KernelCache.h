//===- KernelCache.h - compiled kernels in memory and on disk ---*- C++ -*-===//
//
// Part of normfuse. Compiled GPU code (cubins, PTX) kept in memory for the
// process and in a folder across processes, keyed by everything that
// decides the result: the source's SHA-256, the architecture, the
// compiler's version and its options. Entries are written to a temporary
// file and renamed into place, so a reader sees a whole entry or none; each
// carries its key and a SHA-256 of its payload, so a corrupt, truncated or
// foreign file is detected and rebuilt. Concurrent requests for one key in
// a process compile it once; processes racing on one key each compile and
// the last rename wins (both entries are whole). Errors are return values
// with messages; a folder that cannot be written only costs the disk copy.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_KERNELCACHE_H
#define NORMFUSE_RUNTIME_KERNELCACHE_H

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace normfuse::runtime {

/// What identifies a compiled kernel.
struct KernelKey {
  std::string sourceHash;      ///< SHA-256 of the source (sha256Hex)
  std::string arch;            ///< "sm_90", "compute_90"
  std::string compilerVersion; ///< "nvrtc 13.0"
  std::string options;         ///< the compile options, as one string

  /// "<sourceHash> <arch> <compilerVersion> <options>" on one line.
  std::string str() const;
};

/// Compiles the kernel of a key into `binary`, or fails with `error`.
using CompileFn = std::function<bool(std::string &binary, std::string &error)>;

/// Where a request was answered from.
enum class CacheOutcome { Memory, Disk, Compiled };

class KernelCache {
public:
  /// A cache whose entries live in `directory` (created on first write);
  /// an empty `directory` keeps entries in memory only.
  explicit KernelCache(std::string directory);

  /// The documented default folder: $NF_KERNEL_CACHE_DIR if set (an empty
  /// value turns the disk cache off), else $XDG_CACHE_HOME/normfuse/kernels,
  /// else $HOME/.cache/normfuse/kernels; empty when none of these is set.
  static std::string defaultDirectory();

  /// The compiled kernel of `key` in `binary`: from memory, else from disk
  /// (checked), else from `compile` (then kept in memory and written to
  /// disk). Fails only when `compile` does, with its message.
  bool get(const KernelKey &key, const CompileFn &compile, std::string &binary,
           std::string &error, CacheOutcome *outcome = nullptr);

  /// The file that holds (or would hold) the entry of `key`.
  std::string entryPath(const KernelKey &key) const;

  struct Stats {
    uint64_t memoryHits = 0, diskHits = 0, compiles = 0;
    uint64_t corruptEntries = 0;    ///< disk entries found bad and rebuilt
    uint64_t diskWriteFailures = 0; ///< entries that could not be written
  };
  Stats stats() const;

private:
  struct Slot {
    std::mutex mutex;
    bool ready = false;
    std::string binary;
  };
  /// The disk entry of `key`: true with its payload if whole and for this
  /// key, false if absent; a bad entry counts as corrupt.
  bool readEntry(const KernelKey &key, std::string &binary);
  void writeEntry(const KernelKey &key, const std::string &binary);

  std::string directory_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Slot>> slots_;
  Stats stats_;
};

} // namespace normfuse::runtime

#endif // NORMFUSE_RUNTIME_KERNELCACHE_H
