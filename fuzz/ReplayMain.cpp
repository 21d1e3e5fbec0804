//===- ReplayMain.cpp - run a fuzz target on files, without libFuzzer -----===//
//
// Part of normfuse. The main() of a fuzz target built without libFuzzer (the
// ordinary build): each argument is a file, or a folder whose files are
// read, and each file's bytes go once through LLVMFuzzerTestOneInput. ctest
// replays the seed corpora and every input a fuzzer ever crashed on
// (fuzz/regressions) this way; a crash fails the test.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
    __attribute__((weak));

static bool runFile(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  return true;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  size_t files = 0;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path arg(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      // Sorted, so that a replay runs the inputs in the same order each time.
      std::vector<std::filesystem::path> paths;
      for (std::filesystem::recursive_directory_iterator it(arg, ec), end;
           !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec))
          paths.push_back(it->path());
      if (ec) {
        std::fprintf(stderr, "replay: cannot list %s: %s\n", arg.c_str(),
                     ec.message().c_str());
        return 1;
      }
      std::sort(paths.begin(), paths.end());
      for (const auto &path : paths) {
        if (!runFile(path))
          return 1;
        ++files;
      }
    } else {
      if (!runFile(arg))
        return 1;
      ++files;
    }
  }
  std::printf("replay: %zu inputs, no crash\n", files);
  return 0;
}
