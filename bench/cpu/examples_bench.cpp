//===- examples_bench.cpp - the shipped examples, fused against unfused ---===//
//
// Part of normfuse's benchmarks. Each example of examples/ is compiled
// twice by the JIT, as written (op by op: nf ops as separate kernels, TOSA
// ops through linalg loops) and with nf-fuse-pipeline (raised and fused),
// and both run on the same random inputs. Their outputs must agree (the
// largest difference relative to the output's largest magnitude is
// printed). Then calls alternate, unfused then fused then fused then
// unfused..., so that both see the same state of a machine whose memory
// bandwidth drifts: each pair of neighbouring calls gives one ratio
// unfused / fused (at most 5 pairs where an unfused call takes over a
// second). Prints and writes (JSON, with the machine and the date)
// the median times, the median of the pair ratios with its range and a
// 95% confidence interval (order statistics: no assumption about the
// distribution), how many pairs the fused module won and the one-sided
// sign test's p-value for that many wins by chance. Kernels keep their
// large intermediates between calls (jit::CPUOptions::cacheBuffers) unless
// --no-buffer-cache is given.
//
//   nf-bench-cpu-examples [--threads T] [--pairs P] [--json FILE]
//                         [--only NAME] [--examples DIR] [--no-buffer-cache]
//
//===----------------------------------------------------------------------===//

#include "baselines.h"
#include "normfuse/JIT/JIT.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace normfuse;

namespace {

/// An example: its file, function, and the standard deviation of each
/// argument's N(0, std) values (weights scaled like an initialized layer,
/// so activations stay in range).
struct Example {
  std::string name, entry;
  std::vector<double> stds;
};

const std::vector<Example> &examples() {
  static const std::vector<Example> list = {
      {"transformer_block",
       "transformer_mlp_block",
       {1, 0.03, 1, 0.02, 1, 1, 1}},
      {"transformer_block_tosa",
       "transformer_mlp_block_tosa",
       {1, 0.03, 1, 0.02, 1, 1, 1}},
      {"unet_block", "unet_resnet_block", {1, 1, 1, 0.02, 1, 1, 1, 0.02, 1}},
      {"unet_block_tosa",
       "unet_resnet_block_tosa",
       {1, 1, 1, 0.02, 1, 1, 1, 0.02, 1}},
  };
  return list;
}

/// Pairs timed for an example whose unfused call takes over a second.
constexpr int kSlowPairs = 5;

/// A host tensor of a static TensorType.
struct HostTensor {
  HostTensor(const jit::TensorType &type)
      : dtype(type.dtype), shape(type.shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    bytes.assign(n * getDTypeSize(dtype), 0);
  }
  int64_t size() const { return bytes.size() / getDTypeSize(dtype); }
  double get(int64_t i) const {
    if (dtype == DType::F16) {
      _Float16 h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      return h;
    }
    float f;
    std::memcpy(&f, bytes.data() + 4 * i, 4);
    return f;
  }
  void set(int64_t i, double v) {
    if (dtype == DType::F16) {
      _Float16 h = static_cast<_Float16>(v);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
      return;
    }
    float f = v;
    std::memcpy(bytes.data() + 4 * i, &f, 4);
  }
  TensorRef ref() { return {bytes.data(), dtype, shape, {}}; }

  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

double seconds(const jit::Kernel &kernel, std::vector<TensorRef> &in,
               std::vector<TensorRef> &out, int threads) {
  auto start = std::chrono::steady_clock::now();
  if (llvm::Error err = kernel.run(in, out, threads)) {
    std::fprintf(stderr, "nf-bench-cpu-examples: %s\n",
                 llvm::toString(std::move(err)).c_str());
    std::exit(1);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// P(B <= k) for B ~ Binomial(n, 1/2).
double binomialHalfCdf(int n, int k) {
  double sum = 0;
  for (int i = 0; i <= k; ++i)
    sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) -
                    std::lgamma(n - i + 1.0) - n * std::log(2.0));
  return std::min(sum, 1.0);
}

/// A 95% confidence interval of the median of `v`'s distribution that
/// assumes nothing about that distribution: the order statistics k and
/// n + 1 - k (1-based) for the largest k with P(B <= k - 1) <= 2.5%; the
/// whole range when n < 6, too few for 95%.
std::pair<double, double> medianInterval(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  int n = int(v.size()), k = 1;
  while (k + 1 <= n / 2 && binomialHalfCdf(n, k) <= 0.025)
    ++k;
  return {v[k - 1], v[n - k]};
}

struct Result {
  std::string name;
  double unfused, fused;          // median seconds per call
  double ratio, ratioLo, ratioHi; // pair ratios: median, min, max
  double ciLo, ciHi;              // 95% interval of the median pair ratio
  int wins = 0, pairs = 0;        // pairs where the fused call was faster
  double signP = 1;      // one-sided sign test: P(>= wins of pairs by chance)
  double difference = 0; // max |fused - unfused| / max |unfused| over outputs
};

std::string toJSON(const std::vector<Result> &results, int threads, int pairs,
                   bool cacheBuffers) {
  std::ostringstream js;
  js << nfbench::jsonHeader("nf-bench-cpu-examples", threads, pairs,
                            std::string("examples/, unfused vs "
                                        "nf-fuse-pipeline, alternating calls, "
                                        "buffer cache ") +
                                (cacheBuffers ? "on" : "off"));
  for (size_t i = 0; i < results.size(); ++i) {
    const Result &r = results[i];
    js << "    {\"example\": \"" << r.name
       << "\", \"unfused_median_s\": " << r.unfused
       << ", \"fused_median_s\": " << r.fused
       << ", \"pair_ratio_median\": " << r.ratio
       << ", \"pair_ratio_min\": " << r.ratioLo
       << ", \"pair_ratio_max\": " << r.ratioHi
       << ", \"pair_ratio_median_95ci\": [" << r.ciLo << ", " << r.ciHi << "]"
       << ", \"sign_test_p\": " << r.signP
       << ", \"fused_faster_pairs\": " << r.wins << ", \"pairs\": " << r.pairs
       << ", \"max_relative_difference\": " << r.difference << "}"
       << (i + 1 < results.size() ? "," : "") << "\n";
  }
  js << "  ]\n}\n";
  return js.str();
}

bool runExample(const Example &ex, const std::string &dir, int threads,
                int pairs, bool cacheBuffers, Result &r) {
  std::string path = dir + "/" + ex.name + ".mlir";
  jit::Options plain, fuse;
  plain.fuse = false;
  fuse.fuse = true;
  plain.cpu.cacheBuffers = fuse.cpu.cacheBuffers = cacheBuffers;
  jit::JIT unfusedJIT(plain), fusedJIT(fuse);
  auto unfused = unfusedJIT.compileFile(path, ex.entry);
  auto fused = unfused ? fusedJIT.compileFile(path, ex.entry) : nullptr;
  if (!unfused || !fused) {
    llvm::Error err = !unfused ? unfused.takeError() : fused.takeError();
    std::fprintf(stderr, "nf-bench-cpu-examples: %s: %s\n", path.c_str(),
                 llvm::toString(std::move(err)).c_str());
    return false;
  }
  const jit::Signature &sig = (*unfused)->getSignature();
  if (sig.inputs.size() != ex.stds.size()) {
    std::fprintf(stderr, "nf-bench-cpu-examples: %s takes %zu arguments\n",
                 ex.entry.c_str(), sig.inputs.size());
    return false;
  }
  std::mt19937 rng(1);
  std::vector<HostTensor> inputs, outU, outF;
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    inputs.emplace_back(sig.inputs[i]);
    std::normal_distribution<double> dist(0.0, ex.stds[i]);
    for (int64_t k = 0; k < inputs.back().size(); ++k)
      inputs.back().set(k, dist(rng));
  }
  for (const jit::TensorType &t : sig.outputs) {
    outU.emplace_back(t);
    outF.emplace_back(t);
  }
  std::vector<TensorRef> in, u, f;
  for (HostTensor &t : inputs)
    in.push_back(t.ref());
  for (size_t k = 0; k < outU.size(); ++k) {
    u.push_back(outU[k].ref());
    f.push_back(outF[k].ref());
  }

  // Warm-up calls, and the agreement of the two modules.
  for (int i = 0; i < 2; ++i) {
    seconds(**unfused, in, u, threads);
    seconds(**fused, in, f, threads);
  }
  for (size_t k = 0; k < outU.size(); ++k) {
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < outU[k].size(); ++i) {
      diff = std::max(diff, std::fabs(outF[k].get(i) - outU[k].get(i)));
      scale = std::max(scale, std::fabs(outU[k].get(i)));
    }
    r.difference = std::max(r.difference, scale > 0 ? diff / scale : diff);
  }

  // Pairs in ABBA order: unfused first in even pairs, fused first in odd.
  // An unfused call of over a second (the TOSA examples' scalar loops) gets
  // at most kSlowPairs pairs.
  if (seconds(**unfused, in, u, threads) > 1.0)
    pairs = std::min(pairs, kSlowPairs);
  std::vector<double> tu, tf, ratios;
  for (int p = 0; p < pairs; ++p) {
    double a, b;
    if (p % 2 == 0) {
      a = seconds(**unfused, in, u, threads);
      b = seconds(**fused, in, f, threads);
    } else {
      b = seconds(**fused, in, f, threads);
      a = seconds(**unfused, in, u, threads);
    }
    tu.push_back(a);
    tf.push_back(b);
    ratios.push_back(a / b);
    r.wins += b < a;
  }
  r.name = ex.name;
  r.pairs = pairs;
  r.unfused = median(tu);
  r.fused = median(tf);
  r.ratio = median(ratios);
  r.ratioLo = *std::min_element(ratios.begin(), ratios.end());
  r.ratioHi = *std::max_element(ratios.begin(), ratios.end());
  std::tie(r.ciLo, r.ciHi) = medianInterval(ratios);
  r.signP = 1 - (r.wins > 0 ? binomialHalfCdf(pairs, r.wins - 1) : 0);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  int threads = 2, pairs = 15;
  bool cacheBuffers = true;
  std::string jsonPath, only, dir = std::string(NF_SOURCE_DIR) + "/examples";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--no-buffer-cache") {
      cacheBuffers = false;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr,
                   "usage: nf-bench-cpu-examples [--threads T] [--pairs P] "
                   "[--json FILE] [--only NAME] [--examples DIR] "
                   "[--no-buffer-cache]\n");
      return 1;
    }
    std::string v = argv[++i];
    if (a == "--threads")
      threads = std::stoi(v);
    else if (a == "--pairs")
      pairs = std::stoi(v);
    else if (a == "--json")
      jsonPath = v;
    else if (a == "--only")
      only = v;
    else if (a == "--examples")
      dir = v;
    else {
      std::fprintf(stderr, "nf-bench-cpu-examples: unknown option %s\n",
                   a.c_str());
      return 1;
    }
  }
  if (threads < 1 || pairs < 1) {
    std::fprintf(stderr, "nf-bench-cpu-examples: --threads and --pairs must "
                         "be positive\n");
    return 1;
  }
  std::printf("%s, %d threads, %d alternating pairs of calls, buffer cache "
              "%s\n",
              nfbench::cpuModel().c_str(), threads, pairs,
              cacheBuffers ? "on" : "off");
  std::vector<Result> results;
  for (const Example &ex : examples()) {
    if (!only.empty() && ex.name != only)
      continue;
    Result r;
    if (!runExample(ex, dir, threads, pairs, cacheBuffers, r))
      return 1;
    std::printf("%-24s unfused %9.2f ms | fused %9.2f ms | pair ratio %.3fx "
                "(95%% CI %.3f-%.3f, range %.3f-%.3f) | fused faster in "
                "%d/%d (sign test p %.2g) | diff %.1e\n",
                r.name.c_str(), r.unfused * 1e3, r.fused * 1e3, r.ratio, r.ciLo,
                r.ciHi, r.ratioLo, r.ratioHi, r.wins, r.pairs, r.signP,
                r.difference);
    std::fflush(stdout);
    results.push_back(r);
  }
  if (!jsonPath.empty()) {
    std::string tmp = jsonPath + ".tmp";
    std::ofstream out(tmp);
    out << toJSON(results, threads, pairs, cacheBuffers);
    out.close();
    if (!out || std::rename(tmp.c_str(), jsonPath.c_str()) != 0) {
      std::fprintf(stderr, "nf-bench-cpu-examples: cannot write %s\n",
                   jsonPath.c_str());
      std::remove(tmp.c_str());
      return 1;
    }
    std::printf("wrote %s\n", jsonPath.c_str());
  }
  return 0;
}
