//===- Nvrtc.h - NVRTC through dlopen ---------------------------*- C++ -*-===//
//
// Part of normfuse. CUDA C++ compiled at run time by NVRTC, loaded with
// dlopen like the driver (so a build without the toolkit still runs where
// one is installed): a cubin for an architecture NVRTC knows, PTX for a
// virtual one, and for a device newer than NVRTC knows, PTX for the newest
// virtual architecture it knows (the driver compiles that for the device),
// as nvcc's -gencode does. A failed compile returns NVRTC's log.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_NVRTC_H
#define NORMFUSE_RUNTIME_NVRTC_H

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace normfuse::runtime {

struct NvrtcOptions {
  /// The library to load. Empty: $NF_NVRTC_LIBRARY, else the first of
  /// libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12 that loads.
  std::string library;
  /// Where cuda_fp16.h and cuda_bf16.h are. Empty: $NF_CUDA_INCLUDE_DIR,
  /// else $CUDA_HOME/include, else the toolkit normfuse was built with,
  /// else /usr/local/cuda/include.
  std::string includeDir;
};

class Nvrtc {
public:
  /// Loads NVRTC; null with `error` when it is not installed.
  static std::unique_ptr<Nvrtc> open(std::string &error,
                                     const NvrtcOptions &options = {});
  ~Nvrtc();
  Nvrtc(const Nvrtc &) = delete;
  Nvrtc &operator=(const Nvrtc &) = delete;

  /// "nvrtc 13.0": part of every cache key.
  std::string version() const;
  /// The real architectures NVRTC compiles for (75, 80, 86, ..., 90, ...).
  const std::vector<int> &supportedArchs() const { return archs_; }
  /// What to build for a device of compute capability `sm` (90 for 9.0):
  /// "sm_86" where NVRTC knows it ("sm_90a" for 9.0: its wgmma), else
  /// "compute_NN" for the newest it knows below `sm`; empty (and `error`) for a
  /// device older than all of them.
  std::string targetFor(int sm, std::string &error) const;
  /// The options compile() passes for `arch`, as one string (cache keys).
  std::string optionsFor(const std::string &arch) const;

  /// Compiles `source` for `arch` ("sm_90": a cubin; "compute_90": PTX)
  /// into `binary`; false with NVRTC's log in `error` on failure.
  bool compile(const std::string &source, const std::string &arch,
               std::string &binary, std::string &error) const;

  /// What ptxas reported for one kernel.
  struct KernelResources {
    int64_t registers = 0;
    int64_t spillBytes = 0; ///< spill stores and loads
  };
  /// Compiles `source` for the real architecture `arch` (sm_XY) with
  /// ptxas' report and reads each kernel's registers and spills off it, by
  /// kernel name; false with the reason otherwise.
  bool kernelResources(const std::string &source, const std::string &arch,
                       std::map<std::string, KernelResources> &resources,
                       std::string &error) const;

private:
  Nvrtc() = default;
  /// compile() with `extraFlag` (if not null) among the options, the
  /// program's log in `log` (if not null) on success too.
  bool compileWith(const std::string &source, const std::string &arch,
                   const char *extraFlag, std::string &binary, std::string *log,
                   std::string &error) const;
  void *handle_ = nullptr;
  int major_ = 0, minor_ = 0;
  std::vector<int> archs_;
  std::string includeDir_;

  using Program = struct _nvrtcProgram *;
  const char *(*getErrorString_)(int) = nullptr;
  int (*version_)(int *, int *) = nullptr;
  int (*getNumSupportedArchs_)(int *) = nullptr;
  int (*getSupportedArchs_)(int *) = nullptr;
  int (*createProgram_)(Program *, const char *, const char *, int,
                        const char *const *, const char *const *) = nullptr;
  int (*compileProgram_)(Program, int, const char *const *) = nullptr;
  int (*getProgramLogSize_)(Program, size_t *) = nullptr;
  int (*getProgramLog_)(Program, char *) = nullptr;
  int (*getCUBINSize_)(Program, size_t *) = nullptr;
  int (*getCUBIN_)(Program, char *) = nullptr;
  int (*getPTXSize_)(Program, size_t *) = nullptr;
  int (*getPTX_)(Program, char *) = nullptr;
  int (*destroyProgram_)(Program *) = nullptr;
};

} // namespace normfuse::runtime

#endif // NORMFUSE_RUNTIME_NVRTC_H
