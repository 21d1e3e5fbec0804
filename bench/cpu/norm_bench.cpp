//===- norm_bench.cpp - normfuse's CPU norms against the copy ceiling ----===//
//
// Part of normfuse's benchmarks. For each case, in one process and with the
// same thread count: the JIT-compiled nf kernel, a parallel copy of the
// same bytes the kernel moves (memcpy: the memory-bandwidth ceiling the
// fraction of copy is taken against) and the same copy with non-temporal
// stores (a copy tuned for large buffers; the kernels write outputs of 16
// MiB or more that way), timed in turn; and for f32 the same computation
// as separate passes (an eager framework's unfused ops). Prints a table and
// writes JSON with the machine and the date.
//
//   nf-bench-cpu-norms [--threads T] [--mib M] [--runs R] [--json FILE]
//                      [--only OP] [--dtype f32|f16|bf16]
//
//===----------------------------------------------------------------------===//

#include "baselines.h"
#include "normfuse/JIT/JIT.h"
#include "normfuse/Support/Npy.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace normfuse;

namespace {

struct Case {
  std::string op; // layer_norm | rms_norm
  DType dtype;
  int64_t rows, cols;
};

struct Result {
  std::string op, layout; // layout: "rows" for the trailing-axis norms
  DType dtype;
  std::vector<int64_t> shape;
  size_t bytes;
  double fusedSeconds = 0, copySeconds = 0, unfusedSeconds = 0;
  double streamingCopySeconds = 0; // the copy with non-temporal stores
  double maxRowError = 0;          // of a slice of the output, against float64
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string typeOf(DType dtype, std::vector<int64_t> shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + getDTypeName(dtype) + ">";
}

std::string irFor(const Case &c) {
  std::string x = typeOf(c.dtype, {c.rows, c.cols});
  std::string p = typeOf(DType::F32, {c.cols});
  std::string st = typeOf(DType::F32, {c.rows, 1});
  if (c.op == "layer_norm")
    return "func.func @k(%x: " + x + ", %s: " + p + ", %b: " + p + ") -> (" +
           x + ", " + st + ", " + st +
           ") {\n  %y, %m, %r = nf.layer_norm %x scale %s bias %b {axis = 1 "
           ": i64} : (" +
           x + ", " + p + ", " + p + ") -> (" + x + ", " + st + ", " + st +
           ")\n  return %y, %m, %r : " + x + ", " + st + ", " + st + "\n}\n";
  return "func.func @k(%x: " + x + ", %s: " + p + ") -> (" + x + ", " + st +
         ") {\n  %y, %r = nf.rms_norm %x scale %s {axis = 1 : i64} : (" + x +
         ", " + p + ") -> (" + x + ", " + st + ")\n  return %y, %r : " + x +
         ", " + st + "\n}\n";
}

/// Element i of a buffer of `dtype`, as a double.
double load(const std::vector<uint8_t> &buf, DType dtype, int64_t i) {
  switch (dtype) {
  case DType::F16: {
    _Float16 h;
    std::memcpy(&h, buf.data() + 2 * i, 2);
    return static_cast<double>(h);
  }
  case DType::BF16: {
    uint32_t bits = 0;
    std::memcpy(reinterpret_cast<char *>(&bits) + 2, buf.data() + 2 * i, 2);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case DType::F32: {
    float f;
    std::memcpy(&f, buf.data() + 4 * i, 4);
    return f;
  }
  case DType::F64: {
    double d;
    std::memcpy(&d, buf.data() + 8 * i, 8);
    return d;
  }
  }
  return 0;
}

std::vector<uint8_t> randomData(DType dtype, int64_t n, std::mt19937 &rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> f(n);
  for (float &v : f)
    v = dist(rng);
  NpyArray a;
  a.dtype = DType::F32;
  a.shape = {n};
  a.data.resize(n * 4);
  std::memcpy(a.data.data(), f.data(), n * 4);
  if (dtype == DType::BF16)
    return convertF32ToBF16(a).data;
  if (dtype == DType::F16) {
    std::vector<uint8_t> out(n * 2);
    for (int64_t i = 0; i < n; ++i) {
      _Float16 h = static_cast<_Float16>(f[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
    return out;
  }
  return a.data;
}

/// The worst relative error of row 0 of y against a float64 LayerNorm /
/// RMSNorm of row 0 of x (scale 1, bias 0): a check that the timed kernel
/// computes what it should.
double rowZeroError(const Case &c, const std::vector<uint8_t> &x,
                    const std::vector<uint8_t> &y) {
  double mean = 0, sq = 0;
  for (int64_t j = 0; j < c.cols; ++j)
    mean += load(x, c.dtype, j);
  mean /= c.cols;
  for (int64_t j = 0; j < c.cols; ++j) {
    double v = load(x, c.dtype, j);
    sq += c.op == "layer_norm" ? (v - mean) * (v - mean) : v * v;
  }
  double rstd = 1.0 / std::sqrt(sq / c.cols + 1e-5);
  double worst = 0, norm = 0;
  for (int64_t j = 0; j < c.cols; ++j) {
    double v = load(x, c.dtype, j);
    double ref = (c.op == "layer_norm" ? v - mean : v) * rstd;
    worst = std::max(worst, std::fabs(load(y, c.dtype, j) - ref));
    norm = std::max(norm, std::fabs(ref));
  }
  return worst / norm;
}

/// A kernel timed against the copy of the same bytes (alternately, in the
/// same process), and against its unfused baseline when there is one.
struct Timing {
  int runs, threads;
  std::string error;

  void time(Result &r, jit::Kernel &kernel, const std::vector<TensorRef> &ins,
            const std::vector<TensorRef> &outs,
            const std::function<void()> &unfused) {
    // The copy moves the same number of bytes: half read, half written.
    std::vector<uint8_t> src(r.bytes / 2, 1), dst(r.bytes / 2, 0);
    std::vector<std::vector<double>> t = nfbench::timeInTurn(
        runs,
        {[&] {
           if (auto err = kernel.run(ins, outs, threads))
             error = llvm::toString(std::move(err));
         },
         [&] { nfbench::parallelCopy(src.data(), dst.data(), r.bytes / 2); },
         [&] {
           nfbench::parallelStreamingCopy(src.data(), dst.data(), r.bytes / 2);
         }});
    r.fusedSeconds = median(t[0]);
    r.copySeconds = median(t[1]);
    r.streamingCopySeconds = median(t[2]);
    if (unfused)
      r.unfusedSeconds = median(nfbench::timeInTurn(runs, {unfused})[0]);
  }
};

void print(const Result &r) {
  std::string unfused = "-";
  if (r.unfusedSeconds > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx slower",
                  r.unfusedSeconds / r.fusedSeconds);
    unfused = buf;
  }
  std::printf(
      "%-16s %-5s %-4s %-16s %8.2f ms %6.2f GB/s | copy %6.2f GB/s "
      "| %4.2f of copy | streaming copy %6.2f GB/s, %4.2f of it "
      "| unfused %-12s | err %.1e\n",
      r.op.c_str(), r.layout.c_str(), getDTypeName(r.dtype),
      nfbench::shapeText(r.shape).c_str(), r.fusedSeconds * 1e3,
      r.bytes / r.fusedSeconds / 1e9, r.bytes / r.copySeconds / 1e9,
      r.copySeconds / r.fusedSeconds, r.bytes / r.streamingCopySeconds / 1e9,
      r.streamingCopySeconds / r.fusedSeconds, unfused.c_str(), r.maxRowError);
  std::fflush(stdout);
}

std::string toJSON(const std::vector<Result> &results, int threads, int runs,
                   const std::string &target) {
  std::ostringstream js;
  js << nfbench::jsonHeader("nf-bench-cpu-norms", threads, runs, target);
  for (size_t i = 0; i < results.size(); ++i) {
    const Result &r = results[i];
    js << "    {\"op\": \"" << r.op << "\", \"layout\": \"" << r.layout
       << "\", \"dtype\": \"" << getDTypeName(r.dtype) << "\", \"shape\": \""
       << nfbench::shapeText(r.shape) << "\"";
    if (r.layout == "rows")
      js << ", \"rows\": " << r.shape[0] << ", \"cols\": " << r.shape[1];
    js << ", \"bytes\": " << r.bytes
       << ", \"fused_median_s\": " << r.fusedSeconds
       << ", \"copy_median_s\": " << r.copySeconds
       << ", \"fused_gbps\": " << r.bytes / r.fusedSeconds / 1e9
       << ", \"copy_gbps\": " << r.bytes / r.copySeconds / 1e9
       << ", \"fraction_of_copy\": " << r.copySeconds / r.fusedSeconds
       << ", \"streaming_copy_median_s\": " << r.streamingCopySeconds
       << ", \"streaming_copy_gbps\": "
       << r.bytes / r.streamingCopySeconds / 1e9
       << ", \"fraction_of_streaming_copy\": "
       << r.streamingCopySeconds / r.fusedSeconds << ", \"unfused_median_s\": ";
    if (r.unfusedSeconds > 0)
      js << r.unfusedSeconds
         << ", \"speedup_vs_unfused\": " << r.unfusedSeconds / r.fusedSeconds;
    else
      js << "null, \"speedup_vs_unfused\": null";
    js << ", \"check_max_rel_error\": " << r.maxRowError << "}"
       << (i + 1 < results.size() ? "," : "") << "\n";
  }
  js << "  ]\n}\n";
  return js.str();
}

/// Float64 GroupNorm statistics of an (N, S, C) f32 tensor: (N, groups)
/// mean and rstd.
void groupStats(const std::vector<float> &x, int64_t n, int64_t s, int64_t c,
                int64_t groups, std::vector<float> &mean,
                std::vector<float> &rstd) {
  int64_t per = c / groups;
  mean.assign(n * groups, 0);
  rstd.assign(n * groups, 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t g = 0; g < groups; ++g) {
      double sum = 0, sq = 0, count = double(s * per);
      for (int pass = 0; pass < 2; ++pass)
        for (int64_t p = 0; p < s; ++p)
          for (int64_t j = g * per; j < (g + 1) * per; ++j) {
            double v = x[(i * s + p) * c + j];
            if (pass == 0)
              sum += v;
            else
              sq += (v - sum / count) * (v - sum / count);
          }
      mean[i * groups + g] = sum / count;
      rstd[i * groups + g] = 1.0 / std::sqrt(sq / count + 1e-5);
    }
}

/// max |out - ref| / max |ref| over image 0 of a GroupNorm (scale 1, bias
/// 0) or, with `dy`, of its backward dx; without `centered` the backward is
/// RMSNorm's (no mean(dy) term).
double groupImageZeroError(const std::vector<float> &x, const float *dy,
                           const std::vector<uint8_t> &out, DType dtype,
                           int64_t s, int64_t c, int64_t groups,
                           const std::vector<float> &mean,
                           const std::vector<float> &rstd,
                           bool centered = true) {
  int64_t per = c / groups;
  std::vector<double> a(groups, 0), b(groups, 0);
  if (dy)
    for (int64_t p = 0; p < s; ++p)
      for (int64_t j = 0; j < c; ++j) {
        int64_t g = j / per, k = p * c + j;
        double xhat = (x[k] - mean[g]) * rstd[g];
        a[g] += centered ? dy[k] / double(s * per) : 0.0;
        b[g] += dy[k] * xhat / double(s * per);
      }
  double worst = 0, norm = 0;
  for (int64_t p = 0; p < s; ++p)
    for (int64_t j = 0; j < c; ++j) {
      int64_t g = j / per, k = p * c + j;
      double xhat = (x[k] - mean[g]) * rstd[g];
      double ref = dy ? rstd[g] * (dy[k] - a[g] - xhat * b[g]) : xhat;
      worst = std::max(worst, std::fabs(load(out, dtype, k) - ref));
      norm = std::max(norm, std::fabs(ref));
    }
  return worst / norm;
}

std::vector<float> normalFloats(int64_t n, std::mt19937 &rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float &f : v)
    f = dist(rng);
  return v;
}

std::vector<uint8_t> asBytes(const std::vector<float> &v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::vector<uint8_t> toHalf(const std::vector<float> &v) {
  std::vector<uint8_t> out(v.size() * 2);
  for (size_t i = 0; i < v.size(); ++i) {
    _Float16 h = static_cast<_Float16>(v[i]);
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return out;
}

TensorRef refOf(void *data, DType dtype, std::vector<int64_t> shape) {
  return TensorRef{data, dtype, std::move(shape), {}};
}

/// GroupNorm forward and backward (channels-last, the UNet case) and the
/// backward of LayerNorm and RMSNorm.
bool runChannelAndBackwardCases(
    jit::JIT &compiler, Timing &timing, int64_t mib,
    const std::function<bool(const std::string &, DType)> &wanted,
    std::vector<Result> &results, void (*report)(const Result &)) {
  std::mt19937 rng(2);
  const int64_t hw = 64 * 64, c = 256, groups = 32;
  auto compile = [&](const std::string &ir) -> std::shared_ptr<jit::Kernel> {
    auto kernel = compiler.compile(ir, "k");
    if (!kernel) {
      timing.error = llvm::toString(kernel.takeError());
      return nullptr;
    }
    return *kernel;
  };

  // GroupNorm forward, f32 (with the unfused baseline) and f16.
  for (DType dtype : {DType::F32, DType::F16}) {
    if (!wanted("group_norm", dtype))
      continue;
    int64_t n = mib * (1 << 20) / (getDTypeSize(dtype) * hw * c);
    std::vector<int64_t> shape{n, 64, 64, c};
    std::string x = typeOf(dtype, shape), p = typeOf(DType::F32, {c}),
                st = typeOf(DType::F32, {n, groups});
    auto kernel = compile(
        "func.func @k(%x: " + x + ", %s: " + p + ", %b: " + p + ") -> (" + x +
        ", " + st + ", " + st +
        ") {\n  %y, %m, %r = nf.group_norm %x scale %s bias %b {layout = "
        "#nf.layout<nhwc>, num_groups = 32 : i64} : (" +
        x + ", " + p + ", " + p + ") -> (" + x + ", " + st + ", " + st +
        ")\n  return %y, %m, %r : " + x + ", " + st + ", " + st + "\n}\n");
    if (!kernel)
      return false;
    std::vector<float> xf = normalFloats(n * hw * c, rng);
    std::vector<uint8_t> xb = dtype == DType::F32 ? asBytes(xf) : toHalf(xf);
    if (dtype == DType::F16)
      for (int64_t i = 0; i < n * hw * c; ++i)
        xf[i] = load(xb, dtype, i);
    std::vector<uint8_t> y(xb.size(), 0xff);
    std::vector<float> scale(c, 1.0f), bias(c, 0.0f), mean(n * groups),
        rstd(n * groups), ym, yr;
    Result r{"group_norm", "nhwc", dtype, shape, 2 * xb.size()};
    std::function<void()> unfused;
    std::vector<float> t0, t1, t2, t3, out;
    std::vector<double> s0(n * groups), s1(n * groups);
    nfbench::BigScratch scratch{};
    if (dtype == DType::F32) {
      for (auto *v : {&t0, &t1, &t2, &t3, &out})
        v->resize(n * hw * c);
      scratch = {t0.data(), t1.data(), t2.data(),
                 t3.data(), s0.data(), s1.data()};
      unfused = [&] {
        nfbench::unfusedGroupNormNHWC(xf.data(), scale.data(), bias.data(),
                                      out.data(), n, hw, c, groups, 1e-5f,
                                      scratch);
      };
    }
    timing.time(r, *kernel,
                {refOf(xb.data(), dtype, shape),
                 refOf(scale.data(), DType::F32, {c}),
                 refOf(bias.data(), DType::F32, {c})},
                {refOf(y.data(), dtype, shape),
                 refOf(mean.data(), DType::F32, {n, groups}),
                 refOf(rstd.data(), DType::F32, {n, groups})},
                unfused);
    if (!timing.error.empty())
      return false;
    groupStats(xf, 1, hw, c, groups, ym, yr);
    r.maxRowError =
        groupImageZeroError(xf, nullptr, y, dtype, hw, c, groups, ym, yr);
    results.push_back(r);
    report(r);
  }

  // GroupNorm backward, f32.
  if (wanted("group_norm_grad", DType::F32)) {
    int64_t n = mib * (1 << 20) / (4 * hw * c);
    std::vector<int64_t> shape{n, 64, 64, c};
    std::string x = typeOf(DType::F32, shape), p = typeOf(DType::F32, {c}),
                st = typeOf(DType::F32, {n, groups});
    auto kernel = compile(
        "func.func @k(%dy: " + x + ", %x: " + x + ", %m: " + st +
        ", %r: " + st + ", %s: " + p + ") -> (" + x + ", " + p + ", " + p +
        ") {\n  %dx, %ds, %db = nf.group_norm_grad %dy, %x, %m, %r scale %s "
        "{layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (" +
        x + ", " + x + ", " + st + ", " + st + ", " + p + ") -> (" + x + ", " +
        p + ", " + p + ")\n  return %dx, %ds, %db : " + x + ", " + p + ", " +
        p + "\n}\n");
    if (!kernel)
      return false;
    std::vector<float> xf = normalFloats(n * hw * c, rng),
                       dy = normalFloats(n * hw * c, rng), mean, rstd;
    groupStats(xf, n, hw, c, groups, mean, rstd);
    std::vector<float> scale(c, 1.0f), dscale(c), dbias(c), dx(n * hw * c),
        t0(n * hw * c), t1(n * hw * c), t2(n * hw * c), odx(n * hw * c), ods(c),
        odb(c);
    std::vector<double> s0(n * groups), s1(n * groups);
    nfbench::BigScratch scratch{t0.data(), t1.data(), t2.data(),
                                nullptr,   s0.data(), s1.data()};
    Result r{"group_norm_grad", "nhwc", DType::F32, shape,
             size_t(3 * n * hw * c * 4)};
    timing.time(r, *kernel,
                {refOf(dy.data(), DType::F32, shape),
                 refOf(xf.data(), DType::F32, shape),
                 refOf(mean.data(), DType::F32, {n, groups}),
                 refOf(rstd.data(), DType::F32, {n, groups}),
                 refOf(scale.data(), DType::F32, {c})},
                {refOf(dx.data(), DType::F32, shape),
                 refOf(dscale.data(), DType::F32, {c}),
                 refOf(dbias.data(), DType::F32, {c})},
                [&] {
                  nfbench::unfusedGroupNormGradNHWC(
                      dy.data(), xf.data(), mean.data(), rstd.data(),
                      scale.data(), odx.data(), ods.data(), odb.data(), n, hw,
                      c, groups, scratch);
                });
    if (!timing.error.empty())
      return false;
    r.maxRowError = groupImageZeroError(xf, dy.data(), asBytes(dx), DType::F32,
                                        hw, c, groups, mean, rstd);
    results.push_back(r);
    report(r);
  }

  // LayerNorm and RMSNorm backward, f32, rows of 1024: a row is one group
  // of one image with 1024 channels, so the GroupNorm check applies.
  for (std::string op : {"layer_norm_grad", "rms_norm_grad"}) {
    if (!wanted(op, DType::F32))
      continue;
    bool ln = op == "layer_norm_grad";
    const int64_t cols = 1024, rows = mib * (1 << 20) / (4 * cols);
    std::string x = typeOf(DType::F32, {rows, cols}),
                p = typeOf(DType::F32, {cols}),
                st = typeOf(DType::F32, {rows, 1});
    std::string ir =
        ln ? "func.func @k(%dy: " + x + ", %x: " + x + ", %m: " + st +
                 ", %r: " + st + ", %s: " + p + ") -> (" + x + ", " + p + ", " +
                 p +
                 ") {\n  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r "
                 "scale %s {axis = 1 : i64} : (" +
                 x + ", " + x + ", " + st + ", " + st + ", " + p + ") -> (" +
                 x + ", " + p + ", " + p + ")\n  return %dx, %ds, %db : " + x +
                 ", " + p + ", " + p + "\n}\n"
           : "func.func @k(%dy: " + x + ", %x: " + x + ", %r: " + st +
                 ", %s: " + p + ") -> (" + x + ", " + p +
                 ") {\n  %dx, %ds = nf.rms_norm_grad %dy, %x, %r scale %s "
                 "{axis = 1 : i64} : (" +
                 x + ", " + x + ", " + st + ", " + p + ") -> (" + x + ", " + p +
                 ")\n  return %dx, %ds : " + x + ", " + p + "\n}\n";
    auto kernel = compile(ir);
    if (!kernel)
      return false;
    std::vector<float> xf = normalFloats(rows * cols, rng),
                       dy = normalFloats(rows * cols, rng), mean, rstd;
    groupStats(xf, rows, 1, cols, 1, mean, rstd);
    if (!ln)
      for (int64_t i = 0; i < rows; ++i) {
        double sq = 0;
        for (int64_t j = 0; j < cols; ++j)
          sq += double(xf[i * cols + j]) * xf[i * cols + j];
        mean[i] = 0;
        rstd[i] = 1.0 / std::sqrt(sq / cols + 1e-5);
      }
    std::vector<float> scale(cols, 1.0f), dscale(cols), dbias(cols),
        dx(rows * cols), t0(rows * cols), t1(rows * cols), t2(rows * cols),
        odx(rows * cols), ods(cols), odb(cols);
    nfbench::BigScratch scratch{t0.data(), t1.data(), t2.data(),
                                nullptr,   nullptr,   nullptr};
    TensorRef dyr = refOf(dy.data(), DType::F32, {rows, cols}),
              xr = refOf(xf.data(), DType::F32, {rows, cols}),
              mr = refOf(mean.data(), DType::F32, {rows, 1}),
              rr = refOf(rstd.data(), DType::F32, {rows, 1}),
              sr = refOf(scale.data(), DType::F32, {cols}),
              dxr = refOf(dx.data(), DType::F32, {rows, cols}),
              dsr = refOf(dscale.data(), DType::F32, {cols}),
              dbr = refOf(dbias.data(), DType::F32, {cols});
    Result r{op, "rows", DType::F32, {rows, cols}, size_t(3 * rows * cols * 4)};
    std::function<void()> unfused;
    if (ln)
      unfused = [&] {
        nfbench::unfusedLayerNormGrad(
            dy.data(), xf.data(), mean.data(), rstd.data(), scale.data(),
            odx.data(), ods.data(), odb.data(), rows, cols, scratch);
      };
    timing.time(r, *kernel,
                ln ? std::vector<TensorRef>{dyr, xr, mr, rr, sr}
                   : std::vector<TensorRef>{dyr, xr, rr, sr},
                ln ? std::vector<TensorRef>{dxr, dsr, dbr}
                   : std::vector<TensorRef>{dxr, dsr},
                unfused);
    if (!timing.error.empty())
      return false;
    r.maxRowError = groupImageZeroError(xf, dy.data(), asBytes(dx), DType::F32,
                                        1, cols, 1, mean, rstd, ln);
    results.push_back(r);
    report(r);
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  int threads = 2, runs = 10;
  int64_t mib = 128;
  std::string jsonPath, only, onlyDType;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "nf-bench-cpu-norms: %s needs a value\n",
                     a.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (a == "--threads")
      threads = std::stoi(next());
    else if (a == "--runs")
      runs = std::stoi(next());
    else if (a == "--mib")
      mib = std::stoll(next());
    else if (a == "--json")
      jsonPath = next();
    else if (a == "--only")
      only = next();
    else if (a == "--dtype")
      onlyDType = next();
    else {
      std::fprintf(stderr, "usage: nf-bench-cpu-norms [--threads T] [--mib M] "
                           "[--runs R] [--json FILE] [--only OP] "
                           "[--dtype f32|f16|bf16]\n");
      return 1;
    }
  }
  omp_set_num_threads(threads);
  jit::JIT compiler;
  Timing timing{runs, threads, ""};
  std::vector<Result> results;
  auto fail = [](const std::string &message) {
    std::fprintf(stderr, "nf-bench-cpu-norms: %s\n", message.c_str());
    return 1;
  };
  auto wanted = [&](const std::string &op, DType dtype) {
    return (only.empty() || only == op) &&
           (onlyDType.empty() || onlyDType == getDTypeName(dtype));
  };

  std::vector<Case> cases;
  for (int64_t cols : {1024, 4096}) {
    int64_t rows = mib * (1 << 20) / (4 * cols);
    cases.push_back({"layer_norm", DType::F32, rows, cols});
    cases.push_back({"rms_norm", DType::F32, rows, cols});
  }
  // 16-bit data: the same element count (half the bytes), then twice the
  // rows so the input is `mib` MiB too.
  for (DType d : {DType::BF16, DType::F16}) {
    int64_t rows = mib * (1 << 20) / (2 * 1024);
    cases.push_back({"layer_norm", d, rows, 1024});
    cases.push_back({"rms_norm", d, rows, 1024});
  }

  std::mt19937 rng(1);
  for (const Case &c : cases) {
    if (!wanted(c.op, c.dtype))
      continue;
    auto kernel = compiler.compile(irFor(c), "k");
    if (!kernel)
      return fail(llvm::toString(kernel.takeError()));
    int64_t n = c.rows * c.cols;
    size_t esize = getDTypeSize(c.dtype);
    std::vector<uint8_t> x = randomData(c.dtype, n, rng);
    std::vector<uint8_t> y(n * esize, 0xff);
    std::vector<float> scale(c.cols, 1.0f), bias(c.cols, 0.0f), mean(c.rows),
        rstd(c.rows);
    TensorRef xr{x.data(), c.dtype, {c.rows, c.cols}, {}};
    TensorRef yr{y.data(), c.dtype, {c.rows, c.cols}, {}};
    TensorRef sr{scale.data(), DType::F32, {c.cols}, {}};
    TensorRef br{bias.data(), DType::F32, {c.cols}, {}};
    TensorRef mr{mean.data(), DType::F32, {c.rows, 1}, {}};
    TensorRef rr{rstd.data(), DType::F32, {c.rows, 1}, {}};
    bool ln = c.op == "layer_norm";
    std::vector<TensorRef> ins = ln ? std::vector<TensorRef>{xr, sr, br}
                                    : std::vector<TensorRef>{xr, sr};
    std::vector<TensorRef> outs = ln ? std::vector<TensorRef>{yr, mr, rr}
                                     : std::vector<TensorRef>{yr, rr};
    Result r{c.op, "rows", c.dtype, {c.rows, c.cols}, 0};
    r.bytes = 2 * n * esize + (ln ? 2 : 1) * (c.cols + c.rows) * 4;

    std::function<void()> unfused;
    std::vector<float> a, b2, c2, d, ms, vs, out;
    nfbench::Scratch s{};
    if (c.dtype == DType::F32) {
      for (auto *v : {&a, &b2, &c2, &d, &out})
        v->resize(n);
      ms.resize(c.rows);
      vs.resize(c.rows);
      s = {a.data(), b2.data(), c2.data(), d.data(), ms.data(), vs.data()};
      const float *xf = reinterpret_cast<const float *>(x.data());
      unfused = [&, xf] {
        if (ln)
          nfbench::unfusedLayerNorm(xf, scale.data(), bias.data(), out.data(),
                                    c.rows, c.cols, 1e-5f, s);
        else
          nfbench::unfusedRMSNorm(xf, scale.data(), out.data(), c.rows, c.cols,
                                  1e-5f, s);
      };
    }
    timing.time(r, **kernel, ins, outs, unfused);
    if (!timing.error.empty())
      return fail(timing.error);
    r.maxRowError = rowZeroError(c, x, y);
    results.push_back(r);
    print(r);
  }

  if (!runChannelAndBackwardCases(compiler, timing, mib, wanted, results,
                                  print))
    return fail(timing.error);

  if (!jsonPath.empty())
    std::ofstream(jsonPath)
        << toJSON(results, threads, runs, compiler.getTargetDescription());
  return 0;
}
