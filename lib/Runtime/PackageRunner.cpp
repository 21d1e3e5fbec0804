//===- PackageRunner.cpp - kernel packages run by the runtime alone -------===//
//
// Part of normfuse. See PackageRunner.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/PackageRunner.h"
#include "normfuse/Runtime/FileIO.h"
#include "normfuse/Runtime/GpuTarget.h"

using namespace normfuse::runtime;

const char *normfuse::runtime::getPackageTargetName(PackageTarget target) {
  return target == PackageTarget::CUDA ? "cuda" : "cuda-sim";
}

std::unique_ptr<PackageRunner>
PackageRunner::open(const std::string &directory,
                    const PackageRunnerOptions &options, std::string &error) {
  std::unique_ptr<PackageRunner> runner(new PackageRunner());
  runner->directory_ = directory;
  runner->options_ = options;
  std::string text;
  if (!runner->readFile("manifest.json", text, error)) {
    error += " (a kernel package is a folder with a manifest.json, made by "
             "nf-package)";
    return nullptr;
  }
  std::optional<KernelPackage> package = readManifest(text, error);
  if (!package) {
    error = directory + "/" + error;
    return nullptr;
  }
  // The constants, checked against the manifest, as the package is opened.
  for (PackageEntry &entry : package->entries) {
    if (entry.constantsFile.empty())
      continue;
    std::string bytes;
    if (!runner->readFile(entry.constantsFile, bytes, error))
      return nullptr;
    if (!loadConstants(entry, bytes, error)) {
      error = directory + "/" + error;
      return nullptr;
    }
  }
  runner->package_ = std::move(*package);
  if (options.target == PackageTarget::CUDA) {
    runner->device_ = CudaDevice::open(error, options.device);
    if (!runner->device_) {
      error = "the cuda target cannot run here: " + error;
      return nullptr;
    }
  }
  return runner;
}

std::string PackageRunner::description() const {
  if (!device_)
    return "the CUDA simulator";
  return device_->name() + " (sm_" +
         std::to_string(device_->computeCapability()) + ")";
}

std::string PackageRunner::loadedFrom(const std::string &entry) const {
  auto it = loaded_.find(entry);
  return it == loaded_.end() ? "" : it->second.from;
}

bool PackageRunner::readFile(const std::string &file, std::string &bytes,
                             std::string &error) const {
  return readWholeFile(directory_ + "/" + file, bytes, error);
}

/// The compute capability of a cubin's "sm_90" (90), or -1 for PTX.
static int cubinVersion(const std::string &arch) {
  return arch.rfind("sm_", 0) == 0 ? parseArchVersion(arch) : -1;
}

/// The compute capability of PTX's "compute_90" (90), or -1 for a cubin.
static int ptxVersion(const std::string &arch) {
  return arch.rfind("compute_", 0) == 0 ? parseArchVersion(arch) : -1;
}

bool PackageRunner::load(const std::string &name, const PackageEntry *&entry,
                         Loaded *&loaded, std::string &error) {
  entry = package_.find(name);
  if (!entry) {
    std::string names;
    for (const PackageEntry &e : package_.entries)
      names += (names.empty() ? "" : ", ") + e.name;
    error = "the package has no entry '" + name +
            "' (it has: " + (names.empty() ? "none" : names) + ")";
    return false;
  }
  auto it = loaded_.find(name);
  if (it != loaded_.end()) {
    loaded = &it->second;
    return true;
  }
  Loaded l;
  if (!device_) {
    std::string source;
    if (!readFile(entry->source, source, error))
      return false;
    l.sim = SimModule::compile(source, error, options_.sim);
    if (!l.sim) {
      error = entry->source + ": " + error;
      return false;
    }
    l.from = "CUDA source compiled for the simulator";
  } else {
    // The cubin of the device's own architecture, else the newest PTX it
    // can run, else the source through NVRTC.
    int cc = device_->computeCapability();
    const PackageBinary *cubin = nullptr, *ptx = nullptr;
    for (const PackageBinary &b : entry->binaries) {
      if (cubinVersion(b.arch) == cc)
        cubin = &b;
      int virtualArch = ptxVersion(b.arch);
      if (virtualArch > 0 && virtualArch <= cc &&
          (!ptx || virtualArch > ptxVersion(ptx->arch)))
        ptx = &b;
    }
    if (const PackageBinary *image = cubin ? cubin : ptx) {
      std::string bytes;
      if (!readFile(image->file, bytes, error))
        return false;
      l.cuda = device_->loadImage(std::move(bytes), image == ptx, error);
      if (!l.cuda) {
        error = image->file + ": " + error;
        return false;
      }
      l.from = image == cubin
                   ? "cubin " + image->arch
                   : "PTX " + image->arch + " (compiled by the driver)";
    } else {
      std::string source;
      if (!readFile(entry->source, source, error))
        return false;
      l.cuda = device_->load(source, error);
      if (!l.cuda) {
        error = entry->source + ": " + error;
        return false;
      }
      l.from = "CUDA source compiled by NVRTC for " + device_->target();
    }
  }
  l.plan = entry->plan;
  if (l.cuda && !l.cuda->resolve(l.plan, error)) {
    error = "@" + name + ": " + error;
    return false;
  }
  loaded = &(loaded_[name] = std::move(l));
  return true;
}

bool PackageRunner::run(const std::string &name,
                        const std::vector<const void *> &inputs,
                        const std::vector<void *> &outputs,
                        std::string &error) {
  const PackageEntry *entry = nullptr;
  Loaded *loaded = nullptr;
  if (!load(name, entry, loaded, error))
    return false;
  bool ok = loaded->cuda
                ? loaded->cuda->run(loaded->plan, inputs, outputs, error)
                : runPlanInSimulator(*loaded->sim, loaded->plan, inputs,
                                     outputs, error);
  if (!ok)
    error = "@" + name + ": " + error;
  return ok;
}

bool PackageRunner::time(const std::string &name,
                         const std::vector<const void *> &inputs,
                         unsigned warmup, unsigned iterations,
                         PlanTimings &timings, std::string &error) {
  const PackageEntry *entry = nullptr;
  Loaded *loaded = nullptr;
  if (!load(name, entry, loaded, error))
    return false;
  if (!loaded->cuda) {
    error = "timing with CUDA events needs the cuda target";
    return false;
  }
  if (!loaded->cuda->time(loaded->plan, inputs, warmup, iterations, timings,
                          error)) {
    error = "@" + name + ": " + error;
    return false;
  }
  return true;
}
