//===- SymbolBinder.h - entry points of a dlopen'ed library -----*- C++ -*-===//
//
// Part of normfuse. Binds function pointers to a loaded library's symbols
// one after another and remembers the first that is missing, for the
// "too old" message of the driver and of NVRTC.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_RUNTIME_CUDA_SYMBOLBINDER_H
#define NORMFUSE_LIB_RUNTIME_CUDA_SYMBOLBINDER_H

#include <dlfcn.h>
#include <string>
#include <type_traits>

namespace normfuse::runtime {

class SymbolBinder {
public:
  explicit SymbolBinder(void *handle) : handle_(handle) {}

  /// Points `fn` at symbol `name`, unless an earlier one was missing.
  template <typename Fn> void bind(Fn &fn, const char *name) {
    if (!missing_.empty())
      return;
    fn = reinterpret_cast<Fn>(::dlsym(handle_, name));
    if (!fn)
      missing_ = name;
  }
  /// The first symbol that was not found; empty if all were.
  const std::string &missing() const { return missing_; }

private:
  void *handle_;
  std::string missing_;
};

} // namespace normfuse::runtime

#endif // NORMFUSE_LIB_RUNTIME_CUDA_SYMBOLBINDER_H
