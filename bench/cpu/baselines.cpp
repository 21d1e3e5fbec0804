//===- baselines.cpp - what normfuse's CPU kernels are measured against --===//
//
// Part of normfuse's benchmarks. See baselines.h. Each pass is its own
// parallel loop over the whole tensor, as separate framework ops would be;
// the arithmetic inside a pass is left to the compiler's vectorizer.
//
//===----------------------------------------------------------------------===//

#include "baselines.h"

#include <cmath>
#include <cstring>

void nfbench::parallelCopy(const void *src, void *dst, size_t bytes) {
  const size_t chunk = 1 << 20;
  int64_t chunks = (bytes + chunk - 1) / chunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    size_t begin = c * chunk;
    size_t n = begin + chunk > bytes ? bytes - begin : chunk;
    std::memcpy(static_cast<char *>(dst) + begin,
                static_cast<const char *>(src) + begin, n);
  }
}

/// mean[r] = sum(in[r, :]) / cols: one pass that reads the tensor, a
/// vectorized f32 sum per row (as a framework's reduction kernel).
static void rowMean(const float *in, float *mean, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < cols; ++j)
      s += in[r * cols + j];
    mean[r] = s / cols;
  }
}

/// out[r, j] = f(r, j) over the whole tensor: one elementwise pass.
template <typename F> static void elementwise(int64_t rows, int64_t cols, F f) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j)
      f(r, j, r * cols + j);
  }
}

void nfbench::unfusedLayerNorm(const float *x, const float *scale,
                               const float *bias, float *y, int64_t rows,
                               int64_t cols, float eps, Scratch &s) {
  rowMean(x, s.mean, rows, cols);                              // 1: mean
  elementwise(rows, cols, [&](int64_t r, int64_t, int64_t i) { // 2: x - mean
    s.centered[i] = x[i] - s.mean[r];
  });
  elementwise(rows, cols, [&](int64_t, int64_t, int64_t i) { // 3: square
    s.squared[i] = s.centered[i] * s.centered[i];
  });
  rowMean(s.squared, s.var, rows, cols); // 4: mean of squares
  for (int64_t r = 0; r < rows; ++r)     // 5: rsqrt(var + eps), per row
    s.var[r] = 1.0f / std::sqrt(s.var[r] + eps);
  elementwise(rows, cols, [&](int64_t r, int64_t, int64_t i) { // 6: * rstd
    s.normalized[i] = s.centered[i] * s.var[r];
  });
  elementwise(rows, cols, [&](int64_t, int64_t j, int64_t i) { // 7: * scale
    s.scaled[i] = s.normalized[i] * scale[j];
  });
  elementwise(rows, cols, [&](int64_t, int64_t j, int64_t i) { // 8: + bias
    y[i] = s.scaled[i] + bias[j];
  });
}

void nfbench::unfusedRMSNorm(const float *x, const float *scale, float *y,
                             int64_t rows, int64_t cols, float eps,
                             Scratch &s) {
  elementwise(rows, cols, [&](int64_t, int64_t, int64_t i) { // 1: square
    s.squared[i] = x[i] * x[i];
  });
  rowMean(s.squared, s.var, rows, cols); // 2: mean of squares
  for (int64_t r = 0; r < rows; ++r)     // 3: rsqrt(ms + eps), per row
    s.var[r] = 1.0f / std::sqrt(s.var[r] + eps);
  elementwise(rows, cols, [&](int64_t r, int64_t, int64_t i) { // 4: * rstd
    s.normalized[i] = x[i] * s.var[r];
  });
  elementwise(rows, cols, [&](int64_t, int64_t j, int64_t i) { // 5: * scale
    y[i] = s.normalized[i] * scale[j];
  });
}
