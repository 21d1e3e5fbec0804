//===- baselines.h - what normfuse's CPU kernels are measured against ----===//
//
// Part of normfuse's benchmarks. A parallel copy of the same bytes (the
// memory-bandwidth ceiling) and LayerNorm / RMSNorm run as separate passes
// over memory, the way an eager framework runs the decomposed ops (mean,
// subtract, square, mean, rsqrt, multiply, scale, shift), and likewise
// GroupNorm (channels-last) and the backward of GroupNorm and LayerNorm.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_BENCH_CPU_BASELINES_H
#define NORMFUSE_BENCH_CPU_BASELINES_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nfbench {

/// The CPU's model name from /proc/cpuinfo ("unknown" without one).
std::string cpuModel();

/// "2x64x64x256"
std::string shapeText(const std::vector<int64_t> &shape);

/// The opening of a benchmark's JSON file, up to the "results" array: the
/// benchmark, the date (UTC), the CPU, the JIT's target, threads and runs.
std::string jsonHeader(const std::string &benchmark, int threads, int runs,
                       const std::string &target);

/// Runs the functions in turn, two rounds of warm-up then `runs` timed
/// rounds, so that all see the same machine conditions; returns each one's
/// run times in seconds.
std::vector<std::vector<double>>
timeInTurn(int runs, const std::vector<std::function<void()>> &fns);

/// Copies `bytes` from `src` to `dst` on the current OpenMP threads.
void parallelCopy(const void *src, void *dst, size_t bytes);

/// parallelCopy with non-temporal (streaming) stores where `dst` is 16-byte
/// aligned, as a copy tuned for large buffers writes: a plain store first
/// reads the line it writes, a streaming store does not. On x86 only
/// (elsewhere, parallelCopy).
void parallelStreamingCopy(const void *src, void *dst, size_t bytes);

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

/// Scratch tensors for the group-norm and backward baselines (each the size
/// of the input) and per-statistic arrays.
struct BigScratch {
  float *t0, *t1, *t2, *t3;
  double *stat0, *stat1;
};

/// GroupNorm over an (N, S, C) channels-last tensor with `groups` groups, as
/// separate passes: group mean, subtract, square, group mean, rsqrt,
/// multiply by rstd, scale, shift.
void unfusedGroupNormNHWC(const float *x, const float *scale, const float *bias,
                          float *y, int64_t n, int64_t s, int64_t c,
                          int64_t groups, float eps, BigScratch &t);

/// GroupNorm's backward over (N, S, C) from the saved (N, groups) mean and
/// rstd, as separate passes: xhat, scale * dy, their product, the two group
/// sums, the two parameter-gradient reductions and dx.
void unfusedGroupNormGradNHWC(const float *dy, const float *x,
                              const float *mean, const float *rstd,
                              const float *scale, float *dx, float *dscale,
                              float *dbias, int64_t n, int64_t s, int64_t c,
                              int64_t groups, BigScratch &t);

/// LayerNorm's backward over rows, as separate passes: xhat, scale * dy,
/// their product, the two row sums, the two column reductions and dx.
void unfusedLayerNormGrad(const float *dy, const float *x, const float *mean,
                          const float *rstd, const float *scale, float *dx,
                          float *dscale, float *dbias, int64_t rows,
                          int64_t cols, BigScratch &t);

} // namespace nfbench

#endif // NORMFUSE_BENCH_CPU_BASELINES_H
