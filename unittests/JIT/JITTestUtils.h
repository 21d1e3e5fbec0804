//===- JITTestUtils.h - shared pieces of the JIT tests ----------*- C++ -*-===//
//
// Part of normfuse. One JIT for a whole test binary (compiling is the slow
// part), and a helper that turns an llvm::Error into a testable string.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_UNITTESTS_JIT_JITTESTUTILS_H
#define NORMFUSE_UNITTESTS_JIT_JITTESTUTILS_H

#include "normfuse/JIT/JIT.h"

#include <memory>

#include <gtest/gtest.h>

#include <cstdio>

namespace nftest {

/// The JIT the tests compile their IR with, as written: op by op, without
/// the fusion pipeline that the JIT runs by default (the fusion tests make
/// JITs of their own). Held in a static on purpose: every test process then
/// destroys a JIT with live kernels during exit, which once crashed (LLVM
/// statics built during the first compile were gone before the engines'
/// deinitializers ran).
inline normfuse::jit::JIT &sharedJIT() {
  static normfuse::jit::JIT jit([] {
    normfuse::jit::Options options;
    options.fuse = false;
    return options;
  }());
  return jit;
}

/// "" for success, the message otherwise.
inline std::string errorText(llvm::Error err) {
  if (!err)
    return "";
  return llvm::toString(std::move(err));
}

/// Compiles or fails the test with the JIT's message.
inline std::shared_ptr<normfuse::jit::Kernel>
compileOrFail(const std::string &ir, const std::string &fn) {
  auto kernel = sharedJIT().compile(ir, fn);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError()) << "\nIR:\n" << ir;
    return nullptr;
  }
  return *kernel;
}

/// Where a test's kernels run: the CPU JIT, or the CUDA kernels in the
/// simulator.
enum class Backend { CPU, CUDASim };

inline std::shared_ptr<normfuse::jit::Kernel>
compileFor(Backend backend, const std::string &ir, const std::string &fn) {
  if (backend == Backend::CPU)
    return compileOrFail(ir, fn);
  static normfuse::jit::JIT jit([] {
    normfuse::jit::Options options;
    options.target = normfuse::jit::Target::CUDASim;
    return options;
  }());
  auto kernel = jit.compile(ir, fn);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError()) << "\nIR:\n" << ir;
    return nullptr;
  }
  return *kernel;
}

/// Compiles for `backend`, after the fusion pipeline where `fuse` (decomposed
/// chains raised to nf ops) or op by op; fails the test with the JIT's
/// message.
inline std::shared_ptr<normfuse::jit::Kernel>
compileWith(Backend backend, bool fuse, const std::string &ir,
            const std::string &fn) {
  static std::unique_ptr<normfuse::jit::JIT> jits[2][2];
  std::unique_ptr<normfuse::jit::JIT> &jit =
      jits[backend == Backend::CUDASim][fuse];
  if (!jit) {
    normfuse::jit::Options options;
    options.fuse = fuse;
    if (backend == Backend::CUDASim)
      options.target = normfuse::jit::Target::CUDASim;
    jit = std::make_unique<normfuse::jit::JIT>(options);
  }
  auto kernel = jit->compile(ir, fn);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError()) << "\nIR:\n" << ir;
    return nullptr;
  }
  return *kernel;
}

/// Where a TOSA program runs: the CPU op by op, or the CUDA kernels in the
/// simulator op by op (linalg kernels) and after the fusion pipeline.
enum class Run { CPU, CUDASimOpByOp, CUDASimFused };

/// Compiles for `run`.
inline std::shared_ptr<normfuse::jit::Kernel>
compileForRun(Run run, const std::string &ir, const std::string &fn) {
  return run == Run::CPU
             ? compileOrFail(ir, fn)
             : compileWith(Backend::CUDASim, run == Run::CUDASimFused, ir, fn);
}

inline std::string runName(const testing::TestParamInfo<Run> &info) {
  return info.param == Run::CPU            ? "cpu"
         : info.param == Run::CUDASimFused ? "cudaSim_fused"
                                           : "cudaSim";
}

inline std::string backendSuffix(Backend backend) {
  return backend == Backend::CPU ? "" : "_cudaSim";
}

/// Records a measured error in the test's XML/JSON report
/// (--gtest_output=json shows it).
inline void recordError(const char *what, double error) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", error);
  testing::Test::RecordProperty(what, text);
}

} // namespace nftest

#endif // NORMFUSE_UNITTESTS_JIT_JITTESTUTILS_H
