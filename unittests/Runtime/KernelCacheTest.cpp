//===- KernelCacheTest.cpp - the kernel cache without a GPU ---------------===//
//
// Part of normfuse. The kernel cache with a compile function that counts
// its calls: a miss compiles and writes an entry, a hit in memory or on
// disk does not compile, a corrupt, truncated or foreign entry is detected
// and rebuilt, eight threads asking for one kernel compile it once, two
// processes racing on one kernel both succeed and leave a whole entry, a
// folder that cannot be written costs only the disk copy, and a failed
// compile returns its message and caches nothing. Also SHA-256 against
// FIPS 180-4's examples.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/KernelCache.h"
#include "normfuse/Runtime/Sha256.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace normfuse::runtime;

namespace {

TEST(Sha256Test, MatchesTheStandardsExamples) {
  EXPECT_EQ(sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(
      sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/// A fresh folder under the test's temporary directory.
std::string freshDirectory(const std::string &name) {
  const char *tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/nf-cache-" +
                    name + "-" + std::to_string(::getpid());
  std::string cmd = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return dir;
}

KernelKey keyFor(const std::string &source) {
  return {sha256Hex(source), "sm_90", "nvrtc 13.0", "--std=c++17"};
}

/// A compile function that counts its calls and returns `payload`.
struct CountingCompiler {
  std::atomic<int> calls{0};
  std::string payload = std::string("\x7f"
                                    "ELF binary\0with zeros",
                                    22);
  CompileFn fn() {
    return [this](std::string &binary, std::string &) {
      ++calls;
      // Long enough that racing threads overlap.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      binary = payload;
      return true;
    };
  }
};

std::string fileContents(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const std::string &path, const std::string &data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

TEST(KernelCacheTest, AMissCompilesAndAHitDoesNot) {
  std::string dir = freshDirectory("hit");
  KernelCache cache(dir);
  CountingCompiler compiler;
  std::string binary, error;
  CacheOutcome outcome;
  ASSERT_TRUE(cache.get(keyFor("a"), compiler.fn(), binary, error, &outcome));
  EXPECT_EQ(outcome, CacheOutcome::Compiled);
  EXPECT_EQ(binary, compiler.payload);
  ASSERT_TRUE(cache.get(keyFor("a"), compiler.fn(), binary, error, &outcome));
  EXPECT_EQ(outcome, CacheOutcome::Memory);
  EXPECT_EQ(binary, compiler.payload);
  EXPECT_EQ(compiler.calls, 1);
  // Another source, another architecture, options or compiler: misses.
  KernelKey other = keyFor("a");
  other.arch = "sm_80";
  ASSERT_TRUE(cache.get(other, compiler.fn(), binary, error, &outcome));
  EXPECT_EQ(outcome, CacheOutcome::Compiled);
  other = keyFor("a");
  other.compilerVersion = "nvrtc 12.4";
  ASSERT_TRUE(cache.get(other, compiler.fn(), binary, error, &outcome));
  EXPECT_EQ(outcome, CacheOutcome::Compiled);
  EXPECT_EQ(compiler.calls, 3);
}

TEST(KernelCacheTest, ANewProcessFindsTheEntryOnDisk) {
  std::string dir = freshDirectory("disk");
  CountingCompiler compiler;
  std::string binary, error;
  {
    KernelCache first(dir);
    ASSERT_TRUE(first.get(keyFor("b"), compiler.fn(), binary, error));
  }
  KernelCache second(dir); // as a new process would
  CacheOutcome outcome;
  ASSERT_TRUE(second.get(keyFor("b"), compiler.fn(), binary, error, &outcome));
  EXPECT_EQ(outcome, CacheOutcome::Disk);
  EXPECT_EQ(binary, compiler.payload);
  EXPECT_EQ(compiler.calls, 1);
  // No temporary files are left beside the entry.
  std::string cmd = "test $(ls '" + dir + "' | wc -l) -eq 1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST(KernelCacheTest, ACorruptOrTruncatedEntryIsRebuilt) {
  std::string dir = freshDirectory("corrupt");
  CountingCompiler compiler;
  std::string binary, error;
  KernelKey key = keyFor("c");
  {
    KernelCache cache(dir);
    ASSERT_TRUE(cache.get(key, compiler.fn(), binary, error));
  }
  std::string path = KernelCache(dir).entryPath(key);
  std::string whole = fileContents(path);
  ASSERT_FALSE(whole.empty());
  std::string flipped = whole;
  flipped.back() ^= 1;
  KernelKey foreign = key;
  foreign.options = "-O0";
  std::string foreignEntry =
      whole.substr(0, whole.find('\n') + 1) + foreign.str() +
      whole.substr(whole.find('\n', whole.find('\n') + 1));
  for (const std::string &bad :
       {whole.substr(0, whole.size() - 3), flipped, std::string("garbage"),
        std::string(), foreignEntry}) {
    writeFile(path, bad);
    KernelCache cache(dir);
    CacheOutcome outcome;
    int before = compiler.calls;
    ASSERT_TRUE(cache.get(key, compiler.fn(), binary, error, &outcome));
    EXPECT_EQ(outcome, CacheOutcome::Compiled);
    EXPECT_EQ(compiler.calls, before + 1);
    EXPECT_EQ(cache.stats().corruptEntries, 1u);
    EXPECT_EQ(binary, compiler.payload);
    EXPECT_EQ(fileContents(path), whole) << "the entry was rewritten whole";
  }
}

TEST(KernelCacheTest, EightThreadsAskingForOneKernelCompileItOnce) {
  KernelCache cache(freshDirectory("threads"));
  CountingCompiler compiler;
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      std::string binary, error;
      if (cache.get(keyFor("d"), compiler.fn(), binary, error) &&
          binary == compiler.payload)
        ++ok;
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(ok, 8);
  EXPECT_EQ(compiler.calls, 1);
  EXPECT_EQ(cache.stats().memoryHits, 7u);
}

TEST(KernelCacheTest, TwoProcessesCompilingOneKernelBothSucceed) {
  std::string dir = freshDirectory("processes");
  KernelKey key = keyFor("e");
  std::vector<pid_t> children;
  for (int i = 0; i < 2; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      KernelCache cache(dir);
      CountingCompiler compiler;
      std::string binary, error;
      bool good = cache.get(key, compiler.fn(), binary, error) &&
                  binary == compiler.payload;
      ::_exit(good ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  KernelCache cache(dir);
  CountingCompiler compiler;
  std::string binary, error;
  CacheOutcome outcome;
  ASSERT_TRUE(cache.get(key, compiler.fn(), binary, error, &outcome));
  EXPECT_EQ(outcome, CacheOutcome::Disk);
  EXPECT_EQ(cache.stats().corruptEntries, 0u);
}

TEST(KernelCacheTest, AFolderThatCannotBeWrittenCostsOnlyTheDiskCopy) {
  // A regular file where the folder should be.
  std::string blocker = freshDirectory("blocked");
  writeFile(blocker, "not a folder");
  KernelCache cache(blocker + "/kernels");
  CountingCompiler compiler;
  std::string binary, error;
  ASSERT_TRUE(cache.get(keyFor("f"), compiler.fn(), binary, error));
  EXPECT_EQ(binary, compiler.payload);
  EXPECT_EQ(cache.stats().diskWriteFailures, 1u);
  ::unlink(blocker.c_str());
}

TEST(KernelCacheTest, AFailedCompileReturnsItsMessageAndCachesNothing) {
  KernelCache cache(freshDirectory("fail"));
  std::string binary, error;
  int calls = 0;
  CompileFn failing = [&](std::string &, std::string &e) {
    ++calls;
    e = "nf_kernels.cu(3): error: expected a \";\"";
    return false;
  };
  EXPECT_FALSE(cache.get(keyFor("g"), failing, binary, error));
  EXPECT_EQ(error, "nf_kernels.cu(3): error: expected a \";\"");
  EXPECT_FALSE(cache.get(keyFor("g"), failing, binary, error));
  EXPECT_EQ(calls, 2);
  struct stat st;
  EXPECT_NE(::stat(cache.entryPath(keyFor("g")).c_str(), &st), 0);
}

TEST(KernelCacheTest, TheDefaultFolderFollowsTheEnvironment) {
  // Restores the variables it changes when the test ends.
  struct SavedEnv {
    std::string name, value;
    bool set;
    explicit SavedEnv(const char *n) : name(n) {
      const char *v = std::getenv(n);
      set = v != nullptr;
      value = v ? v : "";
    }
    ~SavedEnv() {
      if (set)
        ::setenv(name.c_str(), value.c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
  } dir("NF_KERNEL_CACHE_DIR"), xdg("XDG_CACHE_HOME"), home("HOME");
  ::setenv("NF_KERNEL_CACHE_DIR", "/somewhere/kernels", 1);
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  ::setenv("HOME", "/home/user", 1);
  EXPECT_EQ(KernelCache::defaultDirectory(), "/somewhere/kernels");
  ::unsetenv("NF_KERNEL_CACHE_DIR");
  EXPECT_EQ(KernelCache::defaultDirectory(), "/xdg/normfuse/kernels");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(KernelCache::defaultDirectory(),
            "/home/user/.cache/normfuse/kernels");
  ::unsetenv("HOME");
  EXPECT_EQ(KernelCache::defaultDirectory(), "");
}

} // namespace
