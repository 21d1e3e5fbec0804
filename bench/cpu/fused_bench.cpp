//===- fused_bench.cpp - nf.fused kernels against their unfused ops ------===//
//
// Part of normfuse's benchmarks. Each case is one computation compiled
// twice by the JIT: as an nf.fused (one loop nest: the prologue computed as
// x is read, the epilogue applied before y is stored) and as the same nf ops
// unfused (one loop nest per op, every intermediate tensor written and read
// back, its buffer allocated on every call). Cases, f32 with --mib MiB per
// large tensor: post-LN residual layer_norm(x + r), layer_norm + gelu,
// GroupNorm NHWC + SiLU (UNet) and matmul + bias + gelu. In one process,
// with the same thread count, the fused kernel, the unfused module and a
// parallel copy of the bytes the fused kernel must move (its large inputs
// read once, its output written once: the memory-bandwidth ceiling) are
// timed in turn. Prints median times with the min-max spread over the
// runs, and writes JSON with the machine and the date.
//
//   nf-bench-cpu-fused [--threads T] [--mib M] [--runs R] [--json FILE]
//                      [--only CASE]
//
//===----------------------------------------------------------------------===//

#include "baselines.h"
#include "normfuse/JIT/JIT.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace normfuse;

namespace {

/// Median, minimum and maximum of a kernel's run times.
struct Times {
  double median = 0, min = 0, max = 0;
};

Times summarize(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front(), t.back()};
}

/// Times the functions in turn (see nfbench::timeInTurn).
std::vector<Times> timeRounds(int runs,
                              const std::vector<std::function<void()>> &fns) {
  std::vector<Times> out;
  for (auto &v : nfbench::timeInTurn(runs, fns))
    out.push_back(summarize(v));
  return out;
}

std::string typeOf(DType dtype, const std::vector<int64_t> &shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + getDTypeName(dtype) + ">";
}

std::string join(const std::vector<std::string> &parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i)
    s += (i ? ", " : "") + parts[i];
  return s;
}

/// One computation: its arguments and its body's ops, written with `%A<i>`
/// for argument i, and the value it returns.
struct Case {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> argShapes; // tensors of `dtype`...
  std::vector<DType> argTypes;                 // ...or these
  std::vector<std::string> ops;
  std::string result;
  int64_t movedTensors; // full-size tensors the fused kernel reads + writes
  /// A second, small f32 result (e.g. a bias gradient), if not empty.
  std::string extraResult = {};
  std::vector<int64_t> extraShape = {};
};

std::string replaceAll(std::string s, const std::string &from,
                       const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::string moduleFor(const Case &c, bool fused) {
  std::vector<std::string> types, args, blockArgs;
  for (size_t i = 0; i < c.argShapes.size(); ++i) {
    types.push_back(typeOf(c.argTypes[i], c.argShapes[i]));
    args.push_back("%a" + std::to_string(i));
    blockArgs.push_back("%b" + std::to_string(i) + ": " + types.back());
  }
  std::string y = typeOf(c.dtype, c.shape);
  std::string last = c.result;
  if (!c.extraResult.empty()) {
    y += ", " + typeOf(DType::F32, c.extraShape);
    last += ", " + c.extraResult;
  }
  std::string resultTypes = c.extraResult.empty() ? y : "(" + y + ")";
  std::string s = "func.func @k(";
  for (size_t i = 0; i < types.size(); ++i)
    s += (i ? ", " : "") + args[i] + ": " + types[i];
  s += ") -> " + resultTypes + " {\n";
  if (!fused) {
    for (const std::string &op : c.ops)
      s += "  " + replaceAll(op, "%A", "%a") + "\n";
    return s + "  return " + last + " : " + y + "\n}\n";
  }
  bool two = !c.extraResult.empty();
  s += std::string("  %r") + (two ? ":2" : "") + " = nf.fused (" + join(args) +
       ") : (" + join(types) + ") -> " + resultTypes + " {\n  ^bb0(" +
       join(blockArgs) + "):\n";
  for (const std::string &op : c.ops)
    s += "    " + replaceAll(op, "%A", "%b") + "\n";
  return s + "    nf.yield " + last + " : " + y + "\n  }\n  return " +
         (two ? "%r#0, %r#1" : "%r") + " : " + y + "\n}\n";
}

std::vector<Case> makeCases(int64_t mib) {
  std::vector<Case> cases;
  // Transformer rows of 1024 (f32: 128 MiB per tensor at --mib 128).
  const int64_t cols = 1024, rows = mib * (1 << 20) / (4 * cols);
  std::string x = typeOf(DType::F32, {rows, cols});
  std::string p = typeOf(DType::F32, {cols});
  std::string st = typeOf(DType::F32, {rows, 1});
  std::string ln = " {axis = 1 : i64} : (" + x + ", " + p + ", " + p +
                   ") -> (" + x + ", " + st + ", " + st + ")";
  std::vector<std::vector<int64_t>> rowArgs{{rows, cols}, {cols}, {cols}};
  std::vector<DType> rowTypes{DType::F32, DType::F32, DType::F32};
  // Post-LN residual: layer_norm(x + r); reads x and r, writes y.
  cases.push_back({"residual_layer_norm",
                   DType::F32,
                   {rows, cols},
                   {{rows, cols}, {rows, cols}, {cols}, {cols}},
                   {DType::F32, DType::F32, DType::F32, DType::F32},
                   {"%h = nf.add %A0, %A1 : " + x,
                    "%n:3 = nf.layer_norm %h scale %A2 bias %A3" + ln},
                   "%n#0",
                   3});
  cases.push_back({"layer_norm_gelu",
                   DType::F32,
                   {rows, cols},
                   rowArgs,
                   rowTypes,
                   {"%n:3 = nf.layer_norm %A0 scale %A1 bias %A2" + ln,
                    "%v1 = nf.gelu %n#0 {approximate = "
                    "#nf.approximation<tanh>} : " +
                        x},
                   "%v1",
                   2});
  // UNet: GroupNorm (32 groups) + SiLU on channels-last 64x64x256 images.
  const int64_t hw = 64, c = 256, n = mib * (1 << 20) / (4 * hw * hw * c);
  std::string xi = typeOf(DType::F32, {n, hw, hw, c});
  std::string pc = typeOf(DType::F32, {c});
  std::string sg = typeOf(DType::F32, {n, 32});
  cases.push_back({"group_norm_nhwc_silu",
                   DType::F32,
                   {n, hw, hw, c},
                   {{n, hw, hw, c}, {c}, {c}},
                   rowTypes,
                   {"%n:3 = nf.group_norm %A0 scale %A1 bias %A2 {layout = "
                    "#nf.layout<nhwc>, num_groups = 32 : i64} : (" +
                        xi + ", " + pc + ", " + pc + ") -> (" + xi + ", " + sg +
                        ", " + sg + ")",
                    "%v1 = nf.silu %n#0 : " + xi},
                   "%v1",
                   2});
  // matmul (K = 32) + bias + gelu: the epilogue of an MLP's first layer.
  // The output is the only large tensor (the fused kernel's bytes).
  const int64_t k = 32, mRows = mib * (1 << 20) / (4 * cols);
  std::string lhs = typeOf(DType::F32, {mRows, k});
  std::string w = typeOf(DType::F32, {k, cols});
  std::string y = typeOf(DType::F32, {mRows, cols});
  cases.push_back(
      {"matmul_bias_gelu",
       DType::F32,
       {mRows, cols},
       {{mRows, k}, {k, cols}, {cols}},
       rowTypes,
       {"%m = nf.matmul %A0, %A1 : " + lhs + ", " + w + " -> " + y,
        "%b = nf.bias_add %m, %A2 {layout = #nf.layout<nhwc>} : " + y + ", " +
            p,
        "%v = nf.gelu %b {approximate = #nf.approximation<tanh>} : " + y},
       "%v",
       1});
  // Backward of an MLP layer's bias + GELU: the GELU gradient (needed by
  // the matmul backward) and the bias gradient; reads dy and x, writes dx.
  cases.push_back({"gelu_grad_bias_grad",
                   DType::F32,
                   {rows, cols},
                   {{rows, cols}, {rows, cols}},
                   rowTypes,
                   {"%g = nf.gelu_grad %A0, %A1 : " + x,
                    "%db = nf.bias_add_grad %g {layout = #nf.layout<nhwc>} : " +
                        x + " -> " + p},
                   "%g",
                   3,
                   "%db",
                   {cols}});
  return cases;
}

struct Result {
  std::string name;
  std::vector<int64_t> shape;
  size_t bytes;
  Times fused, unfused, copy;
  double maxDifference = 0; // |fused - unfused| over the outputs
};

void print(const Result &r) {
  std::printf("%-22s %-14s fused %8.2f ms [%.2f-%.2f] %6.2f GB/s %4.2f of copy"
              " | unfused %8.2f ms [%.2f-%.2f] | %4.2fx | diff %.1e\n",
              r.name.c_str(), nfbench::shapeText(r.shape).c_str(),
              r.fused.median * 1e3, r.fused.min * 1e3, r.fused.max * 1e3,
              r.bytes / r.fused.median / 1e9, r.copy.median / r.fused.median,
              r.unfused.median * 1e3, r.unfused.min * 1e3, r.unfused.max * 1e3,
              r.unfused.median / r.fused.median, r.maxDifference);
  std::fflush(stdout);
}

std::string toJSON(const std::vector<Result> &results, int threads, int runs,
                   const std::string &target) {
  std::ostringstream js;
  js << nfbench::jsonHeader("nf-bench-cpu-fused", threads, runs, target);
  auto times = [&](const char *key, const Times &t) {
    js << ", \"" << key << "_median_s\": " << t.median << ", \"" << key
       << "_min_s\": " << t.min << ", \"" << key << "_max_s\": " << t.max;
  };
  for (size_t i = 0; i < results.size(); ++i) {
    const Result &r = results[i];
    js << "    {\"case\": \"" << r.name << "\", \"dtype\": \"f32\", "
       << "\"shape\": \"" << nfbench::shapeText(r.shape)
       << "\", \"bytes\": " << r.bytes;
    times("fused", r.fused);
    times("unfused", r.unfused);
    times("copy", r.copy);
    js << ", \"fused_gbps\": " << r.bytes / r.fused.median / 1e9
       << ", \"fraction_of_copy\": " << r.copy.median / r.fused.median
       << ", \"speedup_vs_unfused\": " << r.unfused.median / r.fused.median
       << ", \"max_abs_difference\": " << r.maxDifference << "}"
       << (i + 1 < results.size() ? "," : "") << "\n";
  }
  js << "  ]\n}\n";
  return js.str();
}

} // namespace

int main(int argc, char **argv) {
  int threads = 2, runs = 10;
  int64_t mib = 128;
  std::string jsonPath, only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "usage: nf-bench-cpu-fused [--threads T] [--mib M] "
                           "[--runs R] [--json FILE] [--only CASE]\n");
      return 1;
    }
    std::string v = argv[++i];
    if (a == "--threads")
      threads = std::stoi(v);
    else if (a == "--runs")
      runs = std::stoi(v);
    else if (a == "--mib")
      mib = std::stoll(v);
    else if (a == "--json")
      jsonPath = v;
    else if (a == "--only")
      only = v;
    else {
      std::fprintf(stderr, "nf-bench-cpu-fused: unknown option %s\n",
                   a.c_str());
      return 1;
    }
  }
  omp_set_num_threads(threads);
  jit::JIT compiler;
  std::vector<Result> results;
  std::mt19937 rng(1);
  for (const Case &c : makeCases(mib)) {
    if (!only.empty() && only != c.name)
      continue;
    auto fused = compiler.compile(moduleFor(c, true), "k");
    auto unfused = compiler.compile(moduleFor(c, false), "k");
    for (auto *k : {&fused, &unfused})
      if (!*k) {
        std::fprintf(stderr, "nf-bench-cpu-fused: %s: %s\n", c.name.c_str(),
                     llvm::toString(k->takeError()).c_str());
        return 1;
      }
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<std::vector<float>> args;
    std::vector<TensorRef> ins;
    for (size_t i = 0; i < c.argShapes.size(); ++i) {
      int64_t size = 1;
      for (int64_t d : c.argShapes[i])
        size *= d;
      args.emplace_back(size);
      for (float &v : args.back())
        v = dist(rng);
      ins.push_back(
          TensorRef{args.back().data(), DType::F32, c.argShapes[i], {}});
    }
    int64_t elements = 1;
    for (int64_t d : c.shape)
      elements *= d;
    std::vector<float> yFused(elements), yUnfused(elements);
    std::vector<TensorRef> fusedOut{
        TensorRef{yFused.data(), DType::F32, c.shape, {}}};
    std::vector<TensorRef> unfusedOut{
        TensorRef{yUnfused.data(), DType::F32, c.shape, {}}};
    int64_t extraElements = 1;
    for (int64_t d : c.extraShape)
      extraElements *= d;
    std::vector<float> extraFused(extraElements), extraUnfused(extraElements);
    if (!c.extraResult.empty()) {
      fusedOut.push_back(
          TensorRef{extraFused.data(), DType::F32, c.extraShape, {}});
      unfusedOut.push_back(
          TensorRef{extraUnfused.data(), DType::F32, c.extraShape, {}});
    }
    Result r;
    r.name = c.name;
    r.shape = c.shape;
    r.bytes = size_t(c.movedTensors * elements * 4);
    std::vector<uint8_t> src(r.bytes / 2, 1), dst(r.bytes / 2, 0);
    std::string error;
    auto runKernel = [&](jit::Kernel &k, const std::vector<TensorRef> &out) {
      if (auto err = k.run(ins, out, threads))
        error = llvm::toString(std::move(err));
    };
    std::vector<Times> t = timeRounds(
        runs,
        {[&] { runKernel(**fused, fusedOut); },
         [&] { runKernel(**unfused, unfusedOut); },
         [&] { nfbench::parallelCopy(src.data(), dst.data(), r.bytes / 2); }});
    if (!error.empty()) {
      std::fprintf(stderr, "nf-bench-cpu-fused: %s: %s\n", c.name.c_str(),
                   error.c_str());
      return 1;
    }
    r.fused = t[0];
    r.unfused = t[1];
    r.copy = t[2];
    for (int64_t i = 0; i < elements; ++i)
      r.maxDifference =
          std::max<double>(r.maxDifference, std::fabs(yFused[i] - yUnfused[i]));
    for (size_t i = 0; i < extraFused.size() && !c.extraResult.empty(); ++i)
      r.maxDifference = std::max<double>(
          r.maxDifference, std::fabs(extraFused[i] - extraUnfused[i]));
    results.push_back(r);
    print(r);
  }
  if (!jsonPath.empty())
    std::ofstream(jsonPath)
        << toJSON(results, threads, runs, compiler.getTargetDescription());
  return 0;
}
