//===- nf-package.cpp - write a kernel package ------------------*- C++ -*-===//
//
// Part of normfuse. Writes the kernel package of functions of a .mlir file
// (normfuse/JIT/PackageWriter.h): their CUDA, optionally NVRTC's cubins and
// PTX for a list of architectures, and the manifest a runtime without MLIR
// reads. Any problem is one diagnostic on stderr and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "normfuse/JIT/PackageWriter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace normfuse;

static const char *kUsage =
    R"(usage: nf-package FILE.mlir --entry NAME [--entry NAME ...] -o DIR [options]

Writes DIR/manifest.json and DIR/<entry>.cu for each entry, lowered for the
CUDA back end.

  --entry NAME        a function to package (at least one)
  --input-shapes NAME=SHAPE,SHAPE,...
                      the input shapes (e.g. 2x64x64x320,320) of an entry
                      with dynamic dimensions: its kernels take their
                      sizes as arguments, its launch plan is for these
  -o DIR              the package folder (created)
  --cuda-arch LIST    comma-separated GPU targets: sm_XY / compute_XY (XY
                      at least 75) or a part (h100-pcie, a100, ...), each
                      optionally with :key=value figures (sm_90:sms=114);
                      the first one's schedules are used, each gives its
                      architecture's binary; default sm_90
  --binaries          also compile every architecture with NVRTC:
                      <entry>.sm_XY.cubin, <entry>.compute_XY.ptx
  --no-fuse           package the functions op by op, as written
  --allow-tf32        f32 matmuls and convolutions on tensor cores as tf32
                      (sm_80 and newer; operands rounded to 10 fraction
                      bits, f32 sums)
  --help              this text
)";

/// "f=2x64x320,320" as ("f", {{2, 64, 320}, {320}}).
static std::optional<std::pair<std::string, std::vector<std::vector<int64_t>>>>
parseInputShapes(llvm::StringRef text) {
  auto [name, list] = text.split('=');
  if (name.empty() || list.empty() || !text.contains('='))
    return std::nullopt;
  std::vector<std::vector<int64_t>> shapes;
  llvm::SmallVector<llvm::StringRef> parts;
  list.split(parts, ',');
  for (llvm::StringRef part : parts) {
    std::vector<int64_t> shape;
    llvm::SmallVector<llvm::StringRef> sizes;
    part.split(sizes, 'x');
    for (llvm::StringRef size : sizes) {
      uint64_t v;
      if (size.empty() || size.getAsInteger(10, v) || v > uint64_t(INT64_MAX))
        return std::nullopt;
      shape.push_back(int64_t(v));
    }
    shapes.push_back(std::move(shape));
  }
  return std::make_pair(name.str(), std::move(shapes));
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "nf-package: error: " << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  std::string input, dir;
  std::vector<std::string> entries;
  jit::PackageOptions options;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    auto value = [&](llvm::StringRef name) -> std::optional<std::string> {
      if (i + 1 >= argc)
        return std::nullopt;
      (void)name;
      return std::string(argv[++i]);
    };
    if (arg == "--help" || arg == "-h") {
      llvm::outs() << kUsage;
      return 0;
    }
    if (arg == "--binaries") {
      options.binaries = true;
    } else if (arg == "--no-fuse") {
      options.fuse = false;
    } else if (arg == "--allow-tf32") {
      options.allowTf32 = true;
    } else if (arg == "--entry" || arg == "-o" || arg == "--cuda-arch" ||
               arg == "--input-shapes") {
      auto v = value(arg);
      if (!v)
        return fail(arg + " needs a value");
      if (arg == "--entry") {
        entries.push_back(*v);
      } else if (arg == "--input-shapes") {
        auto shapes = parseInputShapes(*v);
        if (!shapes)
          return fail("--input-shapes '" + *v +
                      "': expected NAME=SHAPE,SHAPE,... with each shape "
                      "sizes joined by 'x' (e.g. f=2x64x320,320)");
        if (!options.inputShapes.emplace(shapes->first, shapes->second).second)
          return fail("--input-shapes given twice for @" + shapes->first);
      } else if (arg == "-o")
        dir = *v;
      else {
        options.archs.clear();
        llvm::SmallVector<llvm::StringRef> parts;
        llvm::StringRef(*v).split(parts, ',', -1, false);
        for (llvm::StringRef p : parts)
          options.archs.push_back(p.trim().str());
      }
    } else if (arg.starts_with("-")) {
      return fail("unknown option '" + arg + "' (see --help)");
    } else if (!input.empty()) {
      return fail("more than one .mlir file: '" + input + "' and '" + arg +
                  "'");
    } else {
      input = arg.str();
    }
  }
  if (input.empty())
    return fail("no .mlir file given (see --help)");
  if (entries.empty())
    return fail("no --entry given (see --help)");
  if (dir.empty())
    return fail("no -o DIR given (see --help)");
  auto file = llvm::MemoryBuffer::getFile(input);
  if (!file)
    return fail("cannot read " + input + ": " + file.getError().message());
  if (auto err =
          jit::writeKernelPackage((*file)->getBuffer(), entries, dir, options))
    return fail(llvm::toString(std::move(err)));
  return 0;
}
