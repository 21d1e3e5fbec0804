//===- PackageWriter.cpp - kernel packages from nf functions ----*- C++ -*-===//
//
// Part of normfuse. See PackageWriter.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/JIT/PackageWriter.h"
#include "normfuse/JIT/CudaPlanKernel.h"
#include "normfuse/JIT/JIT.h"
#include "normfuse/Runtime/FileIO.h"
#include "normfuse/Runtime/GpuTarget.h"
#include "normfuse/Runtime/KernelPackage.h"
#include "normfuse/Runtime/Nvrtc.h"
#include "normfuse/Runtime/Sha256.h"
#include "normfuse/Support/Tensor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>

using namespace normfuse;
using namespace normfuse::jit;

static llvm::Error packageError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error jit::writeKernelPackage(llvm::StringRef irText,
                                    llvm::ArrayRef<std::string> entries,
                                    llvm::StringRef dir,
                                    const PackageOptions &options) {
  if (entries.empty())
    return packageError("a package needs at least one entry");
  if (options.archs.empty())
    return packageError("a package needs at least one architecture");
  Options jitOptions;
  jitOptions.target = Target::CUDASim;
  jitOptions.fuse = options.fuse;
  jitOptions.cuda.arch = options.archs.front();
  jitOptions.cuda.allowTf32 = options.allowTf32;
  // The architecture of each binary, one binary an architecture.
  std::vector<std::string> binaryArchs;
  for (const std::string &text : options.archs) {
    std::string error;
    std::optional<runtime::GpuTarget> target =
        runtime::GpuTarget::parse(text, error);
    if (!target)
      return packageError(error);
    if (llvm::is_contained(binaryArchs, target->arch))
      return packageError("two of the package's targets have architecture " +
                          target->arch +
                          ": a package holds one binary an "
                          "architecture");
    binaryArchs.push_back(target->arch);
  }
  JIT jit(jitOptions);
  // Entries of dynamic shape: lowered as they are, their plans read for the
  // shapes given (a JIT of their own, made only where there are some).
  std::unique_ptr<JIT> shapeGenericJIT;
  if (!options.inputShapes.empty()) {
    jitOptions.cuda.shapeGenericKernels = true;
    shapeGenericJIT = std::make_unique<JIT>(jitOptions);
  }
  std::unique_ptr<runtime::Nvrtc> nvrtc;
  if (options.binaries) {
    std::string error;
    nvrtc = runtime::Nvrtc::open(error);
    if (!nvrtc)
      return packageError("cannot compile the package's binaries: " + error);
  }

  // Everything is made in memory first; files are written at the end.
  runtime::KernelPackage package;
  std::map<std::string, std::string> files;
  for (const auto &[name, shapes] : options.inputShapes)
    if (!llvm::is_contained(entries, name))
      return packageError("input shapes given for @" + name +
                          ", which is not an entry");
  for (const std::string &name : entries) {
    if (package.find(name))
      return packageError("@" + name + " is listed twice");
    auto shapes = options.inputShapes.find(name);
    bool generic = shapes != options.inputShapes.end();
    auto compiled = (generic ? *shapeGenericJIT : jit).compile(irText, name);
    if (!compiled)
      return compiled.takeError();
    if (generic && (*compiled)->getSignature().hasStaticShapes())
      return packageError("@" + name +
                          " has static shapes: give input shapes only for "
                          "an entry with dynamic dimensions");
    if (generic) {
      compiled = (*compiled)->specialize(shapes->second);
      if (!compiled)
        return compiled.takeError();
    }
    const Signature &sig = (*compiled)->getSignature();
    if (!sig.hasStaticShapes())
      return packageError("@" + name +
                          " has dynamic dimensions: a package's launch plan "
                          "needs the input shapes (--input-shapes)");
    auto *kernel = dynamic_cast<const CudaPlanKernel *>(compiled->get());
    if (!kernel)
      return packageError("@" + name + " did not lower to CUDA kernels");
    runtime::PackageEntry entry;
    entry.name = name;
    entry.source = name + ".cu";
    files[entry.source] = kernel->getSource();
    for (const TensorType &t : sig.inputs)
      entry.args.push_back(
          {runtime::PackageArg::Role::Input, getDTypeName(t.dtype), t.shape});
    for (const TensorType &t : sig.outputs)
      entry.args.push_back(
          {runtime::PackageArg::Role::Output, getDTypeName(t.dtype), t.shape});
    entry.plan = kernel->getPlan();
    // The constants' bytes, one after another, in a file of their own.
    if (!entry.plan.constants.empty()) {
      std::string bytes;
      for (const auto &constant : entry.plan.constants) {
        bytes.append(constant->begin(), constant->end());
        entry.constantBytes.push_back(constant->size());
      }
      entry.constantsFile = name + ".constants";
      entry.constantsSha256 = runtime::sha256Hex(bytes);
      files[entry.constantsFile] = std::move(bytes);
    }
    for (const std::string &arch : binaryArchs) {
      if (!nvrtc)
        break;
      std::string binary, error;
      if (!nvrtc->compile(kernel->getSource(), arch, binary, error))
        return packageError("NVRTC failed on @" + name + " for " + arch +
                            ":\n" + error);
      bool ptx = llvm::StringRef(arch).starts_with("compute_");
      std::string file = name + "." + arch + (ptx ? ".ptx" : ".cubin");
      files[file] = ptx ? llvm::StringRef(binary).rtrim('\0').str() : binary;
      entry.binaries.push_back({arch, file});
    }
    package.entries.push_back(std::move(entry));
  }
  files["manifest.json"] = runtime::writeManifest(package);
  // What a runtime will check, checked here first.
  std::string invalid;
  if (!runtime::readManifest(files["manifest.json"], invalid))
    return packageError("the manifest written does not read back: " + invalid);

  if (auto ec = llvm::sys::fs::create_directories(dir))
    return packageError("cannot create " + dir + ": " + ec.message());
  std::vector<std::string> paths, contents;
  for (const auto &[file, bytes] : files) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, file);
    paths.push_back(std::string(path));
    contents.push_back(bytes);
  }
  std::string error;
  if (!runtime::writeFilesAllOrNothing(
          paths, [&](size_t i) { return contents[i]; }, error))
    return packageError("cannot write the package: " + error);
  return llvm::Error::success();
}
