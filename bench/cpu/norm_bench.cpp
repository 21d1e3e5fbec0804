//===- norm_bench.cpp - normfuse's CPU norms against the copy ceiling ----===//
//
// Part of normfuse's benchmarks. For each case, in one process and with the
// same thread count: a parallel copy of the same bytes the kernel moves
// (the memory-bandwidth ceiling) timed alternately with the JIT-compiled
// nf kernel, and for f32
// the same computation as separate passes (an eager framework's unfused
// ops). Prints a table and writes JSON with the machine and the date.
//
//   nf-bench-cpu-norms [--threads T] [--mib M] [--runs R] [--json FILE]
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
  Case c;
  size_t bytes;
  double fusedSeconds, copySeconds, unfusedSeconds;
  double maxRowError;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Times `a` and `b` alternately (`runs` times each, after warm-up), so both
/// see the same machine conditions; returns their medians.
std::pair<double, double> timePair(int runs, const std::function<void()> &a,
                                   const std::function<void()> &b) {
  auto once = [](const std::function<void()> &fn) {
    auto start = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  for (int i = 0; i < 2; ++i) {
    a();
    b();
  }
  std::vector<double> ta, tb;
  for (int i = 0; i < runs; ++i) {
    ta.push_back(once(a));
    tb.push_back(once(b));
  }
  return {median(ta), median(tb)};
}

double timeIt(int runs, const std::function<void()> &fn) {
  for (int i = 0; i < 2; ++i)
    fn();
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    t.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
  return median(t);
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

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0)
      return line.substr(line.find(':') + 2);
  return "unknown";
}

} // namespace

int main(int argc, char **argv) {
  int threads = 2, runs = 10;
  int64_t mib = 128;
  std::string jsonPath;
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
    else {
      std::fprintf(stderr, "usage: nf-bench-cpu-norms [--threads T] [--mib M] "
                           "[--runs R] [--json FILE]\n");
      return 1;
    }
  }
  omp_set_num_threads(threads);
  jit::JIT compiler;

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
  std::vector<Result> results;
  for (const Case &c : cases) {
    auto kernel = compiler.compile(irFor(c), "k");
    if (!kernel) {
      std::fprintf(stderr, "nf-bench-cpu-norms: %s\n",
                   llvm::toString(kernel.takeError()).c_str());
      return 1;
    }
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
    size_t bytes = 2 * n * esize + (ln ? 2 : 1) * (c.cols + c.rows) * 4;

    Result r{c, bytes, 0, 0, 0, 0};
    std::string error;
    // The copy moves the same number of bytes: half read, half written.
    std::vector<uint8_t> src(bytes / 2, 1), dst(bytes / 2, 0);
    std::tie(r.fusedSeconds, r.copySeconds) = timePair(
        runs,
        [&] {
          if (auto err = (*kernel)->run(ins, outs, threads))
            error = llvm::toString(std::move(err));
        },
        [&] { nfbench::parallelCopy(src.data(), dst.data(), bytes / 2); });
    if (!error.empty()) {
      std::fprintf(stderr, "nf-bench-cpu-norms: %s\n", error.c_str());
      return 1;
    }
    r.maxRowError = rowZeroError(c, x, y);

    if (c.dtype == DType::F32) {
      std::vector<float> a(n), b2(n), c2(n), d(n), ms(c.rows), vs(c.rows);
      std::vector<float> out(n);
      nfbench::Scratch s{a.data(), b2.data(), c2.data(),
                         d.data(), ms.data(), vs.data()};
      const float *xf = reinterpret_cast<const float *>(x.data());
      r.unfusedSeconds = timeIt(runs, [&] {
        if (ln)
          nfbench::unfusedLayerNorm(xf, scale.data(), bias.data(), out.data(),
                                    c.rows, c.cols, 1e-5f, s);
        else
          nfbench::unfusedRMSNorm(xf, scale.data(), out.data(), c.rows, c.cols,
                                  1e-5f, s);
      });
    }
    results.push_back(r);
    std::printf(
        "%-10s %-4s %6lldx%-5lld %8.2f ms %7.2f GB/s | copy %7.2f GB/s "
        "| %4.2f of copy | unfused %s | row-0 err %.1e\n",
        c.op.c_str(), getDTypeName(c.dtype), (long long)c.rows,
        (long long)c.cols, r.fusedSeconds * 1e3, bytes / r.fusedSeconds / 1e9,
        bytes / r.copySeconds / 1e9, r.copySeconds / r.fusedSeconds,
        r.unfusedSeconds > 0
            ? (std::to_string(r.unfusedSeconds / r.fusedSeconds).substr(0, 4) +
               "x slower")
                  .c_str()
            : "-",
        r.maxRowError);
    std::fflush(stdout);
  }

  if (!jsonPath.empty()) {
    std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    std::ostringstream js;
    js << "{\n  \"benchmark\": \"nf-bench-cpu-norms\",\n  \"date\": \"" << date
       << "\",\n  \"cpu\": \"" << cpuModel() << "\",\n  \"target\": \""
       << compiler.getTargetDescription() << "\",\n  \"threads\": " << threads
       << ",\n  \"runs\": " << runs << ",\n  \"results\": [\n";
    for (size_t i = 0; i < results.size(); ++i) {
      const Result &r = results[i];
      js << "    {\"op\": \"" << r.c.op << "\", \"dtype\": \""
         << getDTypeName(r.c.dtype) << "\", \"rows\": " << r.c.rows
         << ", \"cols\": " << r.c.cols << ", \"bytes\": " << r.bytes
         << ", \"fused_median_s\": " << r.fusedSeconds
         << ", \"copy_median_s\": " << r.copySeconds
         << ", \"fused_gbps\": " << r.bytes / r.fusedSeconds / 1e9
         << ", \"copy_gbps\": " << r.bytes / r.copySeconds / 1e9
         << ", \"fraction_of_copy\": " << r.copySeconds / r.fusedSeconds
         << ", \"unfused_median_s\": ";
      if (r.unfusedSeconds > 0)
        js << r.unfusedSeconds
           << ", \"speedup_vs_unfused\": " << r.unfusedSeconds / r.fusedSeconds;
      else
        js << "null, \"speedup_vs_unfused\": null";
      js << ", \"row0_max_rel_error\": " << r.maxRowError << "}"
         << (i + 1 < results.size() ? "," : "") << "\n";
    }
    js << "  ]\n}\n";
    std::ofstream(jsonPath) << js.str();
  }
  return 0;
}
