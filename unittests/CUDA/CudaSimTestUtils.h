//===- CudaSimTestUtils.h - shared pieces of the cuda-sim tests -*- C++ -*-===//
//
// Part of normfuse. JITs for the cuda-sim target (one per forced row-norm
// schedule; compiling is the slow part) and a helper that compiles or fails
// the test with the JIT's message; errorText and the CPU JIT (sharedJIT)
// come from the JIT tests' JITTestUtils.h.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_UNITTESTS_CUDA_CUDASIMTESTUTILS_H
#define NORMFUSE_UNITTESTS_CUDA_CUDASIMTESTUTILS_H

#include "JITTestUtils.h"
#include "Reference.h"
#include "normfuse/JIT/CudaSimKernel.h"
#include "normfuse/JIT/JIT.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>

namespace nftest {

/// The cuda-sim JIT whose row norms follow `schedule` ("auto", "warp-rows",
/// "block-row-registers", "block-row-streaming", "split-row"), running
/// nf-fuse-pipeline first when `fuse`, generating kernels for GPU target
/// `gpu` (a few SMs make small products count as large), f32 products on
/// tensor cores as tf32 when `tf32`.
inline normfuse::jit::JIT &
simJIT(const std::string &schedule = "auto", bool fuse = false,
       const std::string &gpu = normfuse::runtime::kDefaultGpuTarget,
       bool tf32 = false) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<normfuse::jit::JIT>> jits;
  std::lock_guard<std::mutex> lock(mutex);
  auto &jit =
      jits[schedule + (fuse ? "/fused/" : "/") + gpu + (tf32 ? "/tf32" : "")];
  if (!jit) {
    normfuse::jit::Options options;
    options.target = normfuse::jit::Target::CUDASim;
    options.cuda.arch = gpu;
    options.cuda.rowNormSchedule = schedule;
    options.cuda.allowTf32 = tf32;
    options.fuse = fuse;
    jit = std::make_unique<normfuse::jit::JIT>(options);
  }
  return *jit;
}

/// Compiles `fn` of `ir` for the simulator or fails the test.
inline std::shared_ptr<normfuse::jit::CudaSimKernel>
compileForSim(const std::string &ir, const std::string &fn,
              const std::string &schedule = "auto", bool fuse = false,
              const std::string &gpu = normfuse::runtime::kDefaultGpuTarget,
              bool tf32 = false) {
  auto kernel = simJIT(schedule, fuse, gpu, tf32).compile(ir, fn);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError()) << "\nIR:\n" << ir;
    return nullptr;
  }
  if ((*kernel)->getTarget() != normfuse::jit::Target::CUDASim) {
    ADD_FAILURE() << "the cuda-sim JIT returned a kernel for another target";
    return nullptr;
  }
  return std::static_pointer_cast<normfuse::jit::CudaSimKernel>(*kernel);
}

/// `@ln`: layer_norm over (rows, cols) of `dtype` with f32 scale and bias,
/// returning y, mean and rstd (f64 statistics for f64 data).
inline std::string layerNormIR(DType dtype, int64_t rows, int64_t cols) {
  DType stat = dtype == DType::F64 ? DType::F64 : DType::F32;
  std::string x = tensorType(dtype, {rows, cols});
  std::string p = tensorType(DType::F32, {cols});
  std::string st = tensorType(stat, {rows, 1});
  return "func.func @ln(%x: " + x + ", %s: " + p + ", %b: " + p + ") -> (" + x +
         ", " + st + ", " + st +
         ") {\n  %y, %m, %r = nf.layer_norm %x scale %s bias %b "
         "{axis = 1 : i64} : (" +
         x + ", " + p + ", " + p + ") -> (" + x + ", " + st + ", " + st +
         ")\n  return %y, %m, %r : " + x + ", " + st + ", " + st + "\n}\n";
}

} // namespace nftest

#endif // NORMFUSE_UNITTESTS_CUDA_CUDASIMTESTUTILS_H
