//===- baselines.h - what normfuse's CPU kernels are measured against ----===//
//
// Part of normfuse's benchmarks. A parallel copy of the same bytes (the
// memory-bandwidth ceiling) and LayerNorm / RMSNorm run as separate passes
// over memory, the way an eager framework runs the decomposed ops (mean,
// subtract, square, mean, rsqrt, multiply, scale, shift).
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_BENCH_CPU_BASELINES_H
#define NORMFUSE_BENCH_CPU_BASELINES_H

#include <cstddef>
#include <cstdint>

namespace nfbench {

/// Copies `bytes` from `src` to `dst` on the current OpenMP threads.
void parallelCopy(const void *src, void *dst, size_t bytes);

/// Scratch buffers the unfused baselines write between passes.
struct Scratch {
  float *centered, *squared, *normalized, *scaled;
  float *mean, *var;
};

/// LayerNorm over rows of `cols` as 7 separate parallel passes over the
/// tensor (mean, subtract, square, mean, multiply by rstd, scale, shift)
/// plus a per-row rsqrt.
void unfusedLayerNorm(const float *x, const float *scale, const float *bias,
                      float *y, int64_t rows, int64_t cols, float eps,
                      Scratch &s);

/// RMSNorm over rows of `cols` as 4 separate parallel passes over the
/// tensor (square, mean, multiply by rstd, scale) plus a per-row rsqrt.
void unfusedRMSNorm(const float *x, const float *scale, float *y, int64_t rows,
                    int64_t cols, float eps, Scratch &s);

} // namespace nfbench

#endif // NORMFUSE_BENCH_CPU_BASELINES_H
