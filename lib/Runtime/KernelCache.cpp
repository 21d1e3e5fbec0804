//===- KernelCache.cpp - compiled kernels in memory and on disk -----------===//
//
// Part of normfuse. See KernelCache.h. An entry file is
//
//   normfuse-kernel-cache 1\n
//   <key.str()>\n
//   <payload bytes> <SHA-256 of the payload>\n
//   <payload>
//
// and nothing else.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/KernelCache.h"
#include "normfuse/Runtime/FileIO.h"
#include "normfuse/Runtime/Sha256.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace normfuse::runtime;

static constexpr const char *kMagic = "normfuse-kernel-cache 1";

std::string KernelKey::str() const {
  return sourceHash + " " + arch + " " + compilerVersion + " " + options;
}

KernelCache::KernelCache(std::string directory)
    : directory_(std::move(directory)) {}

std::string KernelCache::defaultDirectory() {
  if (const char *dir = std::getenv("NF_KERNEL_CACHE_DIR"))
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/normfuse/kernels";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/normfuse/kernels";
  return "";
}

std::string KernelCache::entryPath(const KernelKey &key) const {
  if (directory_.empty())
    return "";
  return directory_ + "/" + sha256Hex(key.str()) + ".bin";
}

KernelCache::Stats KernelCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

bool KernelCache::readEntry(const KernelKey &key, std::string &binary) {
  std::string path = entryPath(key);
  std::string data, unused;
  if (path.empty() || !readWholeFile(path, data, unused))
    return false;
  auto corrupt = [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.corruptEntries;
    return false;
  };
  // Three header lines, then exactly the payload.
  size_t line1 = data.find('\n');
  if (line1 == std::string::npos || data.compare(0, line1, kMagic) != 0)
    return corrupt();
  size_t line2 = data.find('\n', line1 + 1);
  if (line2 == std::string::npos ||
      data.compare(line1 + 1, line2 - line1 - 1, key.str()) != 0)
    return corrupt();
  size_t line3 = data.find('\n', line2 + 1);
  if (line3 == std::string::npos)
    return corrupt();
  std::istringstream header(data.substr(line2 + 1, line3 - line2 - 1));
  unsigned long long size = 0;
  std::string digest;
  if (!(header >> size >> digest) || data.size() - (line3 + 1) != size)
    return corrupt();
  std::string payload = data.substr(line3 + 1);
  if (sha256Hex(payload) != digest)
    return corrupt();
  binary = std::move(payload);
  return true;
}

/// `mkdir -p`: true if `dir` exists as a folder afterwards.
static bool makeDirectories(const std::string &dir) {
  if (dir.empty())
    return false;
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0)
    return S_ISDIR(st.st_mode);
  size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0 &&
      !makeDirectories(dir.substr(0, slash)))
    return false;
  return ::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST;
}

/// Writes all of `data` to `fd`.
static bool writeAll(int fd, const std::string &data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += size_t(n);
  }
  return true;
}

void KernelCache::writeEntry(const KernelKey &key, const std::string &binary) {
  std::string path = entryPath(key);
  if (path.empty())
    return;
  auto failed = [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.diskWriteFailures;
  };
  if (!makeDirectories(directory_))
    return failed();
  // A name no other writer uses: process, thread and a counter.
  static std::atomic<unsigned long> counter{0};
  std::ostringstream tmpName;
  tmpName << path << ".tmp." << ::getpid() << "."
          << std::hash<std::thread::id>()(std::this_thread::get_id()) << "."
          << counter++;
  std::string tmp = tmpName.str();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return failed();
  std::string data = std::string(kMagic) + "\n" + key.str() + "\n" +
                     std::to_string(binary.size()) + " " + sha256Hex(binary) +
                     "\n" + binary;
  bool ok = writeAll(fd, data) && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  // rename() replaces the entry whole: readers see the old file or this.
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return failed();
  }
}

bool KernelCache::get(const KernelKey &key, const CompileFn &compile,
                      std::string &binary, std::string &error,
                      CacheOutcome *outcome) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<Slot> &s = slots_[key.str()];
    if (!s)
      s = std::make_shared<Slot>();
    slot = s;
  }
  // One request per key at a time: the others wait here, then hit.
  std::lock_guard<std::mutex> lock(slot->mutex);
  if (slot->ready) {
    binary = slot->binary;
    std::lock_guard<std::mutex> statsLock(mutex_);
    ++stats_.memoryHits;
    if (outcome)
      *outcome = CacheOutcome::Memory;
    return true;
  }
  std::string found;
  if (readEntry(key, found)) {
    slot->binary = std::move(found);
    slot->ready = true;
    binary = slot->binary;
    std::lock_guard<std::mutex> statsLock(mutex_);
    ++stats_.diskHits;
    if (outcome)
      *outcome = CacheOutcome::Disk;
    return true;
  }
  std::string compiled;
  {
    std::lock_guard<std::mutex> statsLock(mutex_);
    ++stats_.compiles;
  }
  if (!compile(compiled, error))
    return false;
  writeEntry(key, compiled);
  slot->binary = std::move(compiled);
  slot->ready = true;
  binary = slot->binary;
  if (outcome)
    *outcome = CacheOutcome::Compiled;
  return true;
}
