//===- nf-package-run.cpp - run a kernel package on .npy files --*- C++ -*-===//
//
// Part of normfuse. The runtime-only build's runner: runs one entry of a
// kernel package (made by nf-package on a machine with the compiler) on
// NumPy .npy inputs and writes .npy outputs, on the machine's GPU or in the
// CUDA simulator; with --bench it times the entry with CUDA events next to
// a device copy of the same bytes. Needs neither MLIR nor LLVM. Any problem
// is one diagnostic on stderr and exit status 1, and no output is written
// unless all of them are.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/PackageFiles.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace normfuse::runtime;

static const char *kUsage =
    R"(usage: nf-package-run PACKAGE --entry NAME [options]
       nf-package-run PACKAGE --list

Runs entry NAME of the kernel package folder PACKAGE (made by nf-package)
on .npy inputs and writes .npy outputs.

  --entry NAME        the entry to run
  --input FILE.npy    an input, one per input argument, in order
  --output FILE.npy   where to write a result, in order; results past the
                      last --output are computed and discarded
  --target T          cuda (the default): this machine's GPU, with the
                      package's cubin for it, else its PTX, else its CUDA
                      compiled by NVRTC (cached in $NF_KERNEL_CACHE_DIR or
                      ~/.cache/normfuse/kernels); cuda-sim: the CUDA kernels
                      run on this CPU by normfuse's CUDA simulator
  --bench N           time N runs (1 to 1000000) after 3 warm-up runs: CUDA
                      events, beside a device copy of the same bytes (the
                      bandwidth ceiling); table and JSON line
  --bf16-from-f32     convert f32 input files to bf16 where the entry takes
                      bf16
  --list              print the entries and their arguments
  --help              this text
)";

static int fail(const std::string &message) {
  std::fprintf(stderr, "nf-package-run: error: %s\n", message.c_str());
  return 1;
}

int main(int argc, char **argv) {
  std::string package;
  PackageFileRun run;
  PackageRunnerOptions options;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--list") {
      list = true;
      continue;
    }
    if (arg == "--bf16-from-f32") {
      run.bf16FromF32 = true;
      continue;
    }
    if (arg == "--entry" || arg == "--input" || arg == "--output" ||
        arg == "--target" || arg == "--bench") {
      if (i + 1 >= argc)
        return fail(arg + " needs a value");
      std::string value = argv[++i];
      if (arg == "--entry")
        run.entry = value;
      else if (arg == "--input")
        run.inputs.push_back(value);
      else if (arg == "--output")
        run.outputs.push_back(value);
      else if (arg == "--target") {
        if (value == "cuda")
          options.target = PackageTarget::CUDA;
        else if (value == "cuda-sim")
          options.target = PackageTarget::CUDASim;
        else
          return fail("unknown target '" + value + "' (cuda or cuda-sim)");
      } else {
        char *end = nullptr;
        errno = 0;
        long long n = std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || *end || errno || n < 1 || n > 1000000)
          return fail("--bench takes a count from 1 to 1000000, not '" + value +
                      "'");
        run.bench = unsigned(n);
      }
      continue;
    }
    if (arg.rfind("-", 0) == 0)
      return fail("unknown option '" + arg + "' (see --help)");
    if (!package.empty())
      return fail("more than one package: '" + package + "' and '" + arg + "'");
    package = arg;
  }
  if (package.empty())
    return fail("no package folder given (see --help)");
  if (!list && run.entry.empty())
    return fail("--entry NAME is required (--list shows the entries)");

  std::string error;
  if (list) {
    // Listing needs no GPU: the simulator target opens nothing.
    options.target = PackageTarget::CUDASim;
    auto runner = PackageRunner::open(package, options, error);
    if (!runner)
      return fail(error);
    for (const PackageEntry &entry : runner->package().entries) {
      std::string inputs, results;
      for (const PackageArg &arg : entry.args) {
        std::string &list =
            arg.role == PackageArg::Role::Input ? inputs : results;
        list += (list.empty() ? "" : ", ") + formatTensorType(arg);
      }
      std::printf("@%s(%s) -> (%s)", entry.name.c_str(), inputs.c_str(),
                  results.c_str());
      for (const PackageBinary &b : entry.binaries)
        std::printf(" %s", b.arch.c_str());
      std::printf("\n");
    }
    return 0;
  }
  auto runner = PackageRunner::open(package, options, error);
  if (!runner)
    return fail(error);
  std::string report;
  if (!runPackageOnFiles(*runner, run, report, error))
    return fail(error);
  std::fputs(report.c_str(), stdout);
  return 0;
}
