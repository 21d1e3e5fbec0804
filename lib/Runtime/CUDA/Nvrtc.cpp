//===- Nvrtc.cpp - NVRTC through dlopen -----------------------------------===//
//
// Part of normfuse. See Nvrtc.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/Nvrtc.h"
#include "SymbolBinder.h"

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <sys/stat.h>

using namespace normfuse::runtime;

static bool isDirectory(const std::string &path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// Where cuda_fp16.h is, by NvrtcOptions::includeDir's rule.
static std::string findIncludeDir(const std::string &requested) {
  if (!requested.empty())
    return requested;
  if (const char *env = std::getenv("NF_CUDA_INCLUDE_DIR"); env && *env)
    return env;
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    if (isDirectory(std::string(home) + "/include"))
      return std::string(home) + "/include";
#ifdef NF_CUDA_TOOLKIT_INCLUDE_DIR
  if (isDirectory(NF_CUDA_TOOLKIT_INCLUDE_DIR))
    return NF_CUDA_TOOLKIT_INCLUDE_DIR;
#endif
  return "/usr/local/cuda/include";
}

std::unique_ptr<Nvrtc> Nvrtc::open(std::string &error,
                                   const NvrtcOptions &options) {
  std::vector<std::string> candidates;
  if (!options.library.empty())
    candidates.push_back(options.library);
  else if (const char *env = std::getenv("NF_NVRTC_LIBRARY"); env && *env)
    candidates.push_back(env);
  else
    candidates = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
  void *handle = nullptr;
  std::string why;
  for (const std::string &name : candidates) {
    handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle)
      break;
    const char *e = ::dlerror();
    why += (why.empty() ? "" : "; ") + std::string(e ? e : name);
  }
  if (!handle) {
    error = "NVRTC (the CUDA toolkit's runtime compiler) could not be "
            "loaded: " +
            why;
    return nullptr;
  }
  std::unique_ptr<Nvrtc> n(new Nvrtc());
  n->handle_ = handle;
  SymbolBinder binder(handle);
  auto bind = [&](auto &fn, const char *name) { binder.bind(fn, name); };

  bind(n->getErrorString_, "nvrtcGetErrorString");
  bind(n->version_, "nvrtcVersion");
  bind(n->getNumSupportedArchs_, "nvrtcGetNumSupportedArchs");
  bind(n->getSupportedArchs_, "nvrtcGetSupportedArchs");
  bind(n->createProgram_, "nvrtcCreateProgram");
  bind(n->compileProgram_, "nvrtcCompileProgram");
  bind(n->getProgramLogSize_, "nvrtcGetProgramLogSize");
  bind(n->getProgramLog_, "nvrtcGetProgramLog");
  bind(n->getCUBINSize_, "nvrtcGetCUBINSize");
  bind(n->getCUBIN_, "nvrtcGetCUBIN");
  bind(n->getPTXSize_, "nvrtcGetPTXSize");
  bind(n->getPTX_, "nvrtcGetPTX");
  bind(n->destroyProgram_, "nvrtcDestroyProgram");
  if (!binder.missing().empty()) {
    error = "NVRTC is too old: it lacks " + binder.missing() +
            " (normfuse needs CUDA 12 or newer)";
    return nullptr;
  }
  int count = 0;
  if (n->version_(&n->major_, &n->minor_) != 0 ||
      n->getNumSupportedArchs_(&count) != 0 || count <= 0) {
    error = "NVRTC does not report its version or architectures";
    return nullptr;
  }
  n->archs_.resize(count);
  if (n->getSupportedArchs_(n->archs_.data()) != 0) {
    error = "NVRTC does not report its architectures";
    return nullptr;
  }
  std::sort(n->archs_.begin(), n->archs_.end());
  n->includeDir_ = findIncludeDir(options.includeDir);
  return n;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NF_ADDRESS_SANITIZER 1
#endif
#endif

Nvrtc::~Nvrtc() {
#ifndef NF_ADDRESS_SANITIZER
  if (handle_)
    ::dlclose(handle_);
#else
  // Under AddressSanitizer the library stays loaded, so that LeakSanitizer
  // can name (and scripts/lsan.supp suppress) what NVRTC itself keeps.
  (void)handle_;
#endif
}

std::string Nvrtc::version() const {
  return "nvrtc " + std::to_string(major_) + "." + std::to_string(minor_);
}

std::string Nvrtc::targetFor(int sm, std::string &error) const {
  // A 9.0 device gets sm_90a, whose code runs only there: the same as
  // sm_90's, and wgmma.
  if (std::find(archs_.begin(), archs_.end(), sm) != archs_.end())
    return "sm_" + std::to_string(sm) + (sm == 90 && major_ >= 12 ? "a" : "");
  // The newest virtual architecture below the device: the driver
  // compiles its PTX for the device.
  int best = 0;
  for (int a : archs_)
    if (a < sm)
      best = a;
  if (!best) {
    error = "NVRTC " + std::to_string(major_) + "." + std::to_string(minor_) +
            " cannot compile for compute capability " +
            std::to_string(sm / 10) + "." + std::to_string(sm % 10) +
            " (its oldest architecture is sm_" +
            std::to_string(archs_.front()) + ")";
    return "";
  }
  return "compute_" + std::to_string(best);
}

std::string Nvrtc::optionsFor(const std::string &arch) const {
  return "--gpu-architecture=" + arch +
         " --std=c++17 --include-path=" + includeDir_;
}

bool Nvrtc::compile(const std::string &source, const std::string &arch,
                    std::string &binary, std::string &error) const {
  return compileWith(source, arch, nullptr, binary, nullptr, error);
}

bool Nvrtc::kernelResources(const std::string &source, const std::string &arch,
                            std::map<std::string, KernelResources> &resources,
                            std::string &error) const {
  if (arch.rfind("sm_", 0) != 0) {
    error = "ptxas reports registers for a real architecture (sm_XY), not '" +
            arch + "'";
    return false;
  }
  std::string binary, log;
  if (!compileWith(source, arch, "--ptxas-options=-v", binary, &log, error))
    return false;
  // "ptxas info    : Compiling entry function 'k' for 'sm_90'", then
  // "... N bytes spill stores, M bytes spill loads" and "Used R registers".
  std::string kernel;
  auto numberBefore = [](const std::string &line, const std::string &word) {
    size_t at = line.find(word);
    if (at == std::string::npos || at < 2)
      return int64_t(-1);
    size_t end = at - 1, start = end;
    while (start > 0 && line[start - 1] >= '0' && line[start - 1] <= '9')
      --start;
    if (start == end || end - start > 12)
      return int64_t(-1);
    return int64_t(std::stoll(line.substr(start, end - start)));
  };
  size_t pos = 0;
  while (pos < log.size()) {
    size_t end = log.find('\n', pos);
    std::string line = log.substr(
        pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? log.size() : end + 1;
    const std::string entry = "Compiling entry function '";
    if (size_t at = line.find(entry); at != std::string::npos) {
      size_t first = at + entry.size();
      kernel = line.substr(first, line.find('\'', first) - first);
      resources[kernel];
      continue;
    }
    if (kernel.empty())
      continue;
    KernelResources &r = resources[kernel];
    if (int64_t n = numberBefore(line, "registers"); n >= 0)
      r.registers = n;
    int64_t stores = numberBefore(line, "bytes spill stores");
    int64_t loads = numberBefore(line, "bytes spill loads");
    if (stores >= 0 && loads >= 0)
      r.spillBytes = stores + loads;
  }
  if (resources.empty()) {
    error = "ptxas reported no kernels";
    return false;
  }
  return true;
}

bool Nvrtc::compileWith(const std::string &source, const std::string &arch,
                        const char *extraFlag, std::string &binary,
                        std::string *log, std::string &error) const {
  bool ptx = arch.rfind("compute_", 0) == 0;
  if (!ptx && arch.rfind("sm_", 0) != 0) {
    error = "not a CUDA architecture: '" + arch +
            "' (expected sm_XY or compute_XY)";
    return false;
  }
  Program program = nullptr;
  int status = createProgram_(&program, source.c_str(), "nf_kernels.cu", 0,
                              nullptr, nullptr);
  if (status != 0) {
    error =
        std::string("nvrtcCreateProgram failed: ") + getErrorString_(status);
    return false;
  }
  std::string archFlag = "--gpu-architecture=" + arch;
  std::string include = "--include-path=" + includeDir_;
  const char *flags[] = {archFlag.c_str(), "--std=c++17", include.c_str(),
                         extraFlag};
  status = compileProgram_(program, extraFlag ? 4 : 3, flags);
  if (status == 0 && log) {
    size_t logSize = 0;
    log->clear();
    if (getProgramLogSize_(program, &logSize) == 0 && logSize > 1) {
      log->resize(logSize);
      if (getProgramLog_(program, log->data()) != 0)
        log->clear();
    }
  }
  if (status != 0) {
    size_t logSize = 0;
    std::string log;
    if (getProgramLogSize_(program, &logSize) == 0 && logSize > 1) {
      log.resize(logSize);
      if (getProgramLog_(program, log.data()) != 0)
        log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
        log.pop_back();
    }
    error = "NVRTC could not compile the kernels for " + arch + " (" +
            getErrorString_(status) + "):\n" + log;
    destroyProgram_(&program);
    return false;
  }
  size_t size = 0;
  status = ptx ? getPTXSize_(program, &size) : getCUBINSize_(program, &size);
  if (status == 0) {
    binary.assign(size, '\0');
    status = ptx ? getPTX_(program, binary.data())
                 : getCUBIN_(program, binary.data());
  }
  destroyProgram_(&program);
  if (status != 0) {
    error =
        std::string("NVRTC compiled the kernels but did not return them: ") +
        getErrorString_(status);
    return false;
  }
  return true;
}
