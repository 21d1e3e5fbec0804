//===- baselines.cpp - what normfuse's CPU kernels are measured against --===//
//
// Part of normfuse's benchmarks. See baselines.h. Each pass is its own
// parallel loop over the whole tensor, as separate framework ops would be;
// the arithmetic inside a pass is left to the compiler's vectorizer.
//
//===----------------------------------------------------------------------===//

#include "baselines.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

std::string nfbench::cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0)
      return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string nfbench::shapeText(const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

std::string nfbench::jsonHeader(const std::string &benchmark, int threads,
                                int runs, const std::string &target) {
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::ostringstream js;
  js << "{\n  \"benchmark\": \"" << benchmark << "\",\n  \"date\": \"" << date
     << "\",\n  \"cpu\": \"" << cpuModel() << "\",\n  \"target\": \"" << target
     << "\",\n  \"threads\": " << threads << ",\n  \"runs\": " << runs
     << ",\n  \"results\": [\n";
  return js.str();
}

std::vector<std::vector<double>>
nfbench::timeInTurn(int runs, const std::vector<std::function<void()>> &fns) {
  for (int i = 0; i < 2; ++i)
    for (const auto &fn : fns)
      fn();
  std::vector<std::vector<double>> t(fns.size());
  for (int i = 0; i < runs; ++i)
    for (size_t k = 0; k < fns.size(); ++k) {
      auto start = std::chrono::steady_clock::now();
      fns[k]();
      t[k].push_back(std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count());
    }
  return t;
}

/// Runs `copy(to, from, n)` on chunks of 1 MiB of [0, bytes), in parallel.
template <typename Copy>
static void copyInChunks(const void *src, void *dst, size_t bytes, Copy copy) {
  const size_t chunk = 1 << 20;
  int64_t chunks = (bytes + chunk - 1) / chunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    size_t begin = c * chunk;
    size_t n = begin + chunk > bytes ? bytes - begin : chunk;
    copy(static_cast<char *>(dst) + begin,
         static_cast<const char *>(src) + begin, n);
  }
}

void nfbench::parallelCopy(const void *src, void *dst, size_t bytes) {
  copyInChunks(src, dst, bytes, [](char *to, const char *from, size_t n) {
    std::memcpy(to, from, n);
  });
}

void nfbench::parallelStreamingCopy(const void *src, void *dst, size_t bytes) {
#if defined(__x86_64__)
  if (reinterpret_cast<uintptr_t>(dst) % 16 != 0)
    return parallelCopy(src, dst, bytes);
  copyInChunks(src, dst, bytes, [](char *to, const char *from, size_t n) {
    typedef long long Vec __attribute__((vector_size(16), aligned(1)));
    typedef long long AlignedVec __attribute__((vector_size(16)));
    size_t vectors = n / 16;
    for (size_t i = 0; i < vectors; ++i) {
      Vec v = *reinterpret_cast<const Vec *>(from + 16 * i);
      __builtin_nontemporal_store(static_cast<AlignedVec>(v),
                                  reinterpret_cast<AlignedVec *>(to + 16 * i));
    }
    std::memcpy(to + 16 * vectors, from + 16 * vectors, n - 16 * vectors);
    __builtin_ia32_sfence();
  });
#else
  parallelCopy(src, dst, bytes);
#endif
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

/// out[n, g] = mean over positions and the group's channels of in: one
/// reduction pass over an (N, S, C) tensor, per-channel sums along each
/// image, then per group.
static void groupMeanNHWC(const float *in, double *out, int64_t n, int64_t s,
                          int64_t c, int64_t groups) {
  int64_t per = c / groups;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    std::vector<float> acc(c, 0.0f);
    for (int64_t p = 0; p < s; ++p) {
      const float *row = in + (i * s + p) * c;
#pragma omp simd
      for (int64_t j = 0; j < c; ++j)
        acc[j] += row[j];
    }
    for (int64_t g = 0; g < groups; ++g) {
      double sum = 0;
      for (int64_t j = g * per; j < (g + 1) * per; ++j)
        sum += acc[j];
      out[i * groups + g] = sum / double(s * per);
    }
  }
}

/// out[i] = f(image, position, channel, i) over an (N, S, C) tensor.
template <typename F>
static void elementwiseNHWC(int64_t n, int64_t s, int64_t c, F f) {
#pragma omp parallel for schedule(static) collapse(2)
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < s; ++p) {
      int64_t base = (i * s + p) * c;
#pragma omp simd
      for (int64_t j = 0; j < c; ++j)
        f(i, j, base + j);
    }
}

/// out[j] = sum over rows of in[r, j] (rows of `cols`): a column reduction
/// pass, parallel over column blocks.
static void columnSum(const float *a, const float *b, float *out, int64_t rows,
                      int64_t cols) {
  const int64_t block = 256;
#pragma omp parallel for schedule(static)
  for (int64_t j0 = 0; j0 < cols; j0 += block) {
    int64_t j1 = std::min(cols, j0 + block);
    std::vector<float> acc(j1 - j0, 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
#pragma omp simd
      for (int64_t j = j0; j < j1; ++j)
        acc[j - j0] += b ? a[r * cols + j] * b[r * cols + j] : a[r * cols + j];
    }
    for (int64_t j = j0; j < j1; ++j)
      out[j] = acc[j - j0];
  }
}

void nfbench::unfusedGroupNormNHWC(const float *x, const float *scale,
                                   const float *bias, float *y, int64_t n,
                                   int64_t s, int64_t c, int64_t groups,
                                   float eps, BigScratch &t) {
  int64_t per = c / groups;
  groupMeanNHWC(x, t.stat0, n, s, c, groups); // 1: group mean
  elementwiseNHWC(n, s, c, [&](int64_t i, int64_t j, int64_t k) { // 2: x - mean
    t.t0[k] = x[k] - float(t.stat0[i * groups + j / per]);
  });
  elementwiseNHWC(n, s, c, [&](int64_t, int64_t, int64_t k) { // 3: square
    t.t1[k] = t.t0[k] * t.t0[k];
  });
  groupMeanNHWC(t.t1, t.stat1, n, s, c, groups); // 4: group variance
  for (int64_t k = 0; k < n * groups; ++k)       // 5: rsqrt
    t.stat1[k] = 1.0 / std::sqrt(t.stat1[k] + eps);
  elementwiseNHWC(n, s, c, [&](int64_t i, int64_t j, int64_t k) { // 6: * rstd
    t.t2[k] = t.t0[k] * float(t.stat1[i * groups + j / per]);
  });
  elementwiseNHWC(n, s, c, [&](int64_t, int64_t j, int64_t k) { // 7: * scale
    t.t3[k] = t.t2[k] * scale[j];
  });
  elementwiseNHWC(n, s, c, [&](int64_t, int64_t j, int64_t k) { // 8: + bias
    y[k] = t.t3[k] + bias[j];
  });
}

void nfbench::unfusedGroupNormGradNHWC(const float *dy, const float *x,
                                       const float *mean, const float *rstd,
                                       const float *scale, float *dx,
                                       float *dscale, float *dbias, int64_t n,
                                       int64_t s, int64_t c, int64_t groups,
                                       BigScratch &t) {
  int64_t per = c / groups;
  elementwiseNHWC(n, s, c, [&](int64_t i, int64_t j, int64_t k) { // 1: xhat
    int64_t g = i * groups + j / per;
    t.t0[k] = (x[k] - mean[g]) * rstd[g];
  });
  elementwiseNHWC(n, s, c, [&](int64_t, int64_t j, int64_t k) { // 2: g * dy
    t.t1[k] = dy[k] * scale[j];
  });
  elementwiseNHWC(n, s, c, [&](int64_t, int64_t, int64_t k) { // 3: g dy xhat
    t.t2[k] = t.t1[k] * t.t0[k];
  });
  groupMeanNHWC(t.t1, t.stat0, n, s, c, groups); // 4: mean(g dy)
  groupMeanNHWC(t.t2, t.stat1, n, s, c, groups); // 5: mean(g dy xhat)
  columnSum(dy, t.t0, dscale, n * s, c);         // 6: dscale
  columnSum(dy, nullptr, dbias, n * s, c);       // 7: dbias
  elementwiseNHWC(n, s, c, [&](int64_t i, int64_t j, int64_t k) { // 8: dx
    int64_t g = i * groups + j / per;
    dx[k] =
        rstd[g] * (t.t1[k] - float(t.stat0[g]) - t.t0[k] * float(t.stat1[g]));
  });
}

void nfbench::unfusedLayerNormGrad(const float *dy, const float *x,
                                   const float *mean, const float *rstd,
                                   const float *scale, float *dx, float *dscale,
                                   float *dbias, int64_t rows, int64_t cols,
                                   BigScratch &t) {
  elementwise(rows, cols, [&](int64_t r, int64_t, int64_t i) { // 1: xhat
    t.t0[i] = (x[i] - mean[r]) * rstd[r];
  });
  elementwise(rows, cols, [&](int64_t, int64_t j, int64_t i) { // 2: g * dy
    t.t1[i] = dy[i] * scale[j];
  });
  elementwise(rows, cols, [&](int64_t, int64_t, int64_t i) { // 3: g dy xhat
    t.t2[i] = t.t1[i] * t.t0[i];
  });
  std::vector<float> a(rows), b(rows);
  rowMean(t.t1, a.data(), rows, cols);       // 4: mean(g dy)
  rowMean(t.t2, b.data(), rows, cols);       // 5: mean(g dy xhat)
  columnSum(dy, t.t0, dscale, rows, cols);   // 6: dscale
  columnSum(dy, nullptr, dbias, rows, cols); // 7: dbias
  elementwise(rows, cols, [&](int64_t r, int64_t, int64_t i) { // 8: dx
    dx[i] = rstd[r] * (t.t1[i] - a[r] - t.t0[i] * b[r]);
  });
}
