//===- FileIO.cpp - whole files read and written, for the runtime ---------===//
//
// Part of normfuse. See FileIO.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/FileIO.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

using namespace normfuse::runtime;

namespace {

bool fail(std::string &error, const std::string &name,
          const std::string &what) {
  error = name + ": " + what;
  return false;
}

std::string errnoText(int code) { return std::strerror(code); }

/// Writes all of `bytes` to `fd`, retrying interrupted and short writes.
bool writeAll(int fd, std::string_view bytes, int &code) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      code = errno;
      return false;
    }
    bytes.remove_prefix(size_t(n));
  }
  return true;
}

/// Whether `path` names something that exists and is not a regular file (a
/// device or a pipe: /dev/null, /dev/stdout), which is written directly: a
/// temporary renamed over it would replace the device with a file.
bool isDevice(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

bool writeDevice(const std::string &path, const std::string &bytes,
                 std::string &error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0)
    return fail(error, path, "cannot open: " + errnoText(errno));
  int code = 0;
  bool ok = writeAll(fd, bytes, code);
  if (::close(fd) != 0 && ok) {
    ok = false;
    code = errno;
  }
  if (!ok)
    return fail(error, path, "cannot write: " + errnoText(code));
  return true;
}

/// Writes `bytes` to a new file beside `path` (its mode as a plain new
/// file's) and sets `temp` to its name; on failure nothing is left behind.
bool writeTemporary(const std::string &path, const std::string &bytes,
                    std::string &temp, std::string &error) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "."
                    : slash == 0               ? "/"
                                               : path.substr(0, slash);
  std::string file = slash == std::string::npos ? path : path.substr(slash + 1);
  static thread_local std::mt19937_64 random{std::random_device{}()};
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    static const char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    std::string suffix;
    uint64_t r = random();
    for (int i = 0; i < 8; ++i, r /= 36)
      suffix += kDigits[r % 36];
    temp = dir + "/" + file + ".tmp-" + suffix;
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0)
    return fail(error, path,
                "cannot create a file next to it: " + errnoText(errno));
  int code = 0;
  bool ok = writeAll(fd, bytes, code);
  if (::close(fd) != 0 && ok) {
    ok = false;
    code = errno;
  }
  if (!ok) {
    ::unlink(temp.c_str());
    return fail(error, path, "cannot write: " + errnoText(code));
  }
  return true;
}

} // namespace

bool normfuse::runtime::readWholeFile(const std::string &path,
                                      std::string &bytes, std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(error, path, "cannot read: " + errnoText(errno));
  bytes.clear();
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
    bytes.reserve(size_t(st.st_size));
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int code = errno;
      ::close(fd);
      return fail(error, path, "cannot read: " + errnoText(code));
    }
    if (n == 0)
      break;
    bytes.append(chunk, size_t(n));
  }
  ::close(fd);
  return true;
}

bool normfuse::runtime::writeFilesAllOrNothing(
    const std::vector<std::string> &paths,
    const std::function<std::string(size_t)> &contents, std::string &error) {
  // Every regular file first goes to its temporary; then the devices are
  // written; only when all of that succeeded are the temporaries renamed.
  std::vector<std::string> temps(paths.size());
  auto removeTemps = [&] {
    for (const std::string &temp : temps)
      if (!temp.empty())
        ::unlink(temp.c_str());
  };
  for (size_t i = 0; i < paths.size(); ++i) {
    if (isDevice(paths[i]))
      continue;
    if (!writeTemporary(paths[i], contents(i), temps[i], error)) {
      temps[i].clear();
      removeTemps();
      return false;
    }
  }
  for (size_t i = 0; i < paths.size(); ++i)
    if (temps[i].empty() && !writeDevice(paths[i], contents(i), error)) {
      removeTemps();
      return false;
    }
  for (size_t i = 0; i < paths.size(); ++i) {
    if (temps[i].empty())
      continue;
    if (::rename(temps[i].c_str(), paths[i].c_str()) != 0) {
      int code = errno;
      removeTemps();
      return fail(error, paths[i],
                  "cannot move the written file into place: " +
                      errnoText(code));
    }
    temps[i].clear();
  }
  return true;
}
