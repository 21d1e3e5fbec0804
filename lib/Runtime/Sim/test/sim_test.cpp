//===- sim_test.cpp - tests of the CUDA simulator ---------------*- C++ -*-===//
//
// Part of normfuse. Compiles the .cu files next to this one through
// SimModule (with the printer's prelude, lib/Target/CUDA/Prelude.cuh,
// prepended), launches their kernels and checks
// the results against host references. Prints PASS/FAIL per check and exits
// nonzero if any failed. Usage: sim_test <directory of the .cu files>;
// $NF_SIM_TEST_FLAGS adds flags to the modules' compile commands.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/CudaSim.h"
#include "normfuse/Runtime/CudaSimABI.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

using namespace normfuse::runtime;

namespace {

int numFailures = 0;
std::string testDir;
SimCompileOptions compileOptions;

void check(bool ok, const std::string &name, const std::string &detail = "") {
  std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name.c_str(),
              detail.empty() ? "" : ": ", detail.c_str());
  numFailures += !ok;
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

std::string readText(const std::string &path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Compiles `file` with the printer's prelude; `dropBarrier` removes the
/// barrier marked "// @barrier" (or `marked`).
std::unique_ptr<SimModule>
compileFile(const std::string &file, bool dropBarrier = false,
            const std::string &marked = "__syncthreads(); // @barrier") {
  std::string source = readText(testDir + "/" + file);
  if (dropBarrier) {
    size_t pos = source.find(marked);
    if (pos == std::string::npos) {
      check(false, "find '" + marked + "' in " + file);
      return nullptr;
    }
    source.erase(pos, marked.size());
  }
  std::string error;
  std::string prelude = readText(testDir + "/../../../Target/CUDA/Prelude.cuh");
  if (prelude.empty()) {
    check(false, "read lib/Target/CUDA/Prelude.cuh");
    return nullptr;
  }
  auto module = SimModule::compile(prelude + source, error, compileOptions);
  check(module != nullptr,
        "compile " + file + (dropBarrier ? " (barrier removed)" : ""), error);
  return module;
}

/// Deterministic test data in [-1, 1).
std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::vector<float> v(n);
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (float &x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = float((s >> 40) & 0xffffff) / float(1 << 23) - 1.0f;
  }
  return v;
}

template <class T> SimBuffer buffer(const std::vector<T> &v, const char *name) {
  return {v.data(), v.size() * sizeof(T), name, false};
}

const SimOrder kOrders[] = {SimOrder::Forward, SimOrder::Reverse,
                            SimOrder::Shuffle, SimOrder::Stagger};
const char *const kOrderNames[] = {"forward", "reverse", "shuffle",
                                   "staggered"};
constexpr int kNumOrders = int(std::size(kOrders));

/// Launches row_sum-like `kernel` on [rows, n]; returns false on error.
bool rowSums(SimModule &m, const char *kernel, const std::vector<float> &in,
             std::vector<float> &out, int64_t n, unsigned threads,
             std::string &error, SimOrder order = SimOrder::Forward,
             unsigned seed = 0, SimStats *stats = nullptr) {
  const float *inPtr = in.data();
  float *outPtr = out.data();
  void *args[] = {&inPtr, &outPtr, &n};
  return m.launch(kernel, {unsigned(out.size()), 1, 1}, {threads, 1, 1}, 0,
                  args, {buffer(in, "in"), buffer(out, "out")}, stats, error,
                  order, seed, 3);
}

std::string matchSums(const std::vector<float> &in,
                      const std::vector<float> &out, int64_t n) {
  for (size_t r = 0; r < out.size(); ++r) {
    double ref = 0;
    for (int64_t i = 0; i < n; ++i)
      ref += in[r * n + i];
    if (!(std::fabs(out[r] - ref) <= 1e-4 * n))
      return "row " + std::to_string(r) + ": " + std::to_string(out[r]) +
             " vs " + std::to_string(ref);
  }
  return "";
}

void testReduction() {
  auto m = compileFile("reduce.cu");
  if (!m)
    return;
  const int64_t rows = 5, n = 1000;
  std::vector<float> in = randomFloats(rows * n, 1), out(rows), first;
  for (int o = 0; o < kNumOrders; ++o)
    for (unsigned seed : {1u, 7u}) {
      if (o != 2 && seed != 1)
        continue;
      std::string error, what = std::string("reduce 256 threads ") +
                                kOrderNames[o] + " seed " +
                                std::to_string(seed);
      SimStats stats;
      std::fill(out.begin(), out.end(), 0.0f);
      bool ok = rowSums(*m, "row_sum", in, out, n, 256, error, kOrders[o], seed,
                        &stats);
      std::string mismatch = ok ? matchSums(in, out, n) : error;
      if (mismatch.empty() && first.empty())
        first = out;
      if (mismatch.empty() &&
          std::memcmp(first.data(), out.data(), rows * 4) != 0)
        mismatch = "differs bitwise from the forward order";
      check(mismatch.empty(), what, mismatch);
      if (o == 0)
        check(stats.bytesLoaded == rows * n * 4 &&
                  stats.bytesStored == rows * 4 && stats.barriers == rows &&
                  stats.shuffles == rows * (8 * 5 + 5) && stats.blocks == 5 &&
                  stats.threads == 5 * 256,
              "reduce stats",
              "loaded " + std::to_string(stats.bytesLoaded) + " stored " +
                  std::to_string(stats.bytesStored) + " barriers " +
                  std::to_string(stats.barriers) + " shuffles " +
                  std::to_string(stats.shuffles));
    }

  // A partial last warp: 48 and 1000 threads.
  for (unsigned threads : {48u, 1000u, 1u})
    for (int o = 0; o < kNumOrders; ++o) {
      std::string error;
      std::fill(out.begin(), out.end(), 0.0f);
      bool ok =
          rowSums(*m, "row_sum_any", in, out, n, threads, error, kOrders[o], 3);
      std::string mismatch = ok ? matchSums(in, out, n) : error;
      check(mismatch.empty(),
            "reduce partial warp " + std::to_string(threads) + " threads " +
                kOrderNames[o],
            mismatch);
    }
  // A full-mask xor reduction reads the missing lanes of a partial warp.
  std::string error;
  bool ok = rowSums(*m, "row_sum", in, out, n, 48, error);
  std::string wrong = ok ? matchSums(in, out, n) : error;
  check(!wrong.empty(), "full-mask shuffle over a partial warp is caught",
        wrong);

  // The same kernel without its barrier.
  auto bad = compileFile("reduce.cu", /*dropBarrier=*/true);
  if (!bad)
    return;
  error.clear();
  ok = rowSums(*bad, "row_sum", in, out, n, 256, error);
  wrong = ok ? matchSums(in, out, n) : error;
  check(!wrong.empty(), "missing __syncthreads() is caught", wrong);

  // Launches from several threads into two modules are serialized.
  std::vector<std::vector<float>> outs(4, std::vector<float>(rows));
  std::vector<std::string> errors(4);
  std::vector<int> oks(4, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      oks[i] = rowSums(i % 2 ? *m : *bad, "row_sum", in, outs[i], n, 256,
                       errors[i], SimOrder::Reverse);
    });
  for (std::thread &thread : threads)
    thread.join();
  bool parallel = true;
  for (int i = 0; i < 4; ++i)
    parallel &= oks[i] && matchSums(in, outs[i], n).empty();
  check(parallel, "launches from several threads", errors[0] + errors[1]);

  // Throughput, for information.
  std::vector<float> big = randomFloats(256 * 4096, 2), bigOut(256);
  auto start = std::chrono::steady_clock::now();
  ok = rowSums(*m, "row_sum", big, bigOut, 4096, 256, error);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  check(ok && matchSums(big, bigOut, 4096).empty(), "reduce 256x4096",
        std::to_string(ms) + " ms");
}

void testCopy() {
  auto m = compileFile("copy.cu");
  if (!m)
    return;
  std::vector<std::string> names = m->getKernelNames();
  check(names == std::vector<std::string>{"copy", "copy_vec", "copy_oob",
                                          "copy_misaligned"} &&
            m->getNumParams("copy") == 3 && m->getNumParams("nope") == -1,
        "kernel names");

  int64_t n = 1000;
  std::vector<float> in = randomFloats(n, 3), out(n, 0.0f);
  const float *inPtr = in.data();
  float *outPtr = out.data();
  void *args[] = {&inPtr, &outPtr, &n};
  auto bufs = [&](bool outReadOnly) {
    std::vector<SimBuffer> b = {buffer(in, "in"), buffer(out, "out")};
    b[0].readOnly = true;
    b[1].readOnly = outReadOnly;
    return b;
  };
  SimStats stats;
  std::string error;
  bool ok = m->launch("copy", {4, 1, 1}, {256, 1, 1}, 0, args, bufs(false),
                      &stats, error);
  check(ok && out == in && stats.bytesLoaded == uint64_t(n) * 4 &&
            stats.bytesStored == uint64_t(n) * 4 && stats.loads == uint64_t(n),
        "copy bytes",
        error + " loaded " + std::to_string(stats.bytesLoaded) + " stored " +
            std::to_string(stats.bytesStored));

  std::fill(out.begin(), out.end(), 0.0f);
  ok = m->launch("copy_vec", {1, 1, 1}, {256, 1, 1}, 0, args, bufs(false),
                 &stats, error);
  check(ok && out == in && stats.bytesLoaded == uint64_t(n) * 4 &&
            stats.loads == uint64_t(n) / 4,
        "copy_vec bytes", error);

  error.clear();
  ok = m->launch("copy_oob", {4, 1, 1}, {256, 1, 1}, 0, args, bufs(false),
                 nullptr, error);
  check(!ok && contains(error, "out-of-bounds global load of 4 bytes at "
                               "buffer 'in' + offset 4000"),
        "out-of-bounds load", error);

  error.clear();
  ok = m->launch("copy_misaligned", {1, 1, 1}, {256, 1, 1}, 0, args,
                 bufs(false), nullptr, error);
  check(!ok && contains(error, "misaligned global load of 16 bytes"),
        "misaligned vector load", error);

  error.clear();
  ok = m->launch("copy", {4, 1, 1}, {256, 1, 1}, 0, args, {}, nullptr, error);
  check(!ok && contains(error, "not in any buffer"), "load outside buffers",
        error);

  error.clear();
  ok = m->launch("copy", {4, 1, 1}, {256, 1, 1}, 0, args, bufs(true), nullptr,
                 error);
  check(!ok && contains(error, "read-only"), "store to read-only buffer",
        error);

  error.clear();
  ok = m->launch("nope", {1, 1, 1}, {1, 1, 1}, 0, args, {}, nullptr, error);
  check(!ok && contains(error, "unknown kernel 'nope'"), "unknown kernel",
        error);
  error.clear();
  ok = m->launch("copy", {1, 1, 1}, {32, 1, 1}, 0, args, bufs(false), nullptr,
                 error, SimOrder::Forward, 0, 2);
  check(!ok && contains(error, "takes 3 arguments"), "argument count", error);
  error.clear();
  ok = m->launch("copy", {1, 1, 1}, {2048, 1, 1}, 0, args, bufs(false), nullptr,
                 error);
  check(!ok && contains(error, "invalid block"), "block too large", error);
  // The module is still usable after errors.
  error.clear();
  ok = m->launch("copy", {4, 1, 1}, {256, 1, 1}, 0, args, bufs(false), nullptr,
                 error);
  check(ok && out == in, "launch after errors", error);
}

void testDeadlocks() {
  auto m = compileFile("deadlock.cu");
  if (!m)
    return;
  std::vector<float> out(128, 0.0f);
  float *outPtr = out.data();
  void *args[] = {&outPtr};
  struct Case {
    const char *kernel, *expected;
  } cases[] = {{"shuffle_vs_barrier", "deadlock"},
               {"shuffle_exited", "shuffle with exited lanes"},
               {"divergent_barrier", "divergent __syncthreads()"}};
  for (const Case &c : cases)
    for (int o = 0; o < kNumOrders; ++o) {
      std::string error;
      bool ok = m->launch(c.kernel, {2, 1, 1}, {128, 1, 1}, 0, args,
                          {buffer(out, "out")}, nullptr, error, kOrders[o], 5);
      check(!ok && contains(error, c.expected),
            std::string(c.kernel) + " " + kOrderNames[o], error);
    }
  std::string error;
  std::fill(out.begin(), out.end(), 0.0f);
  bool ok = m->launch("barrier_after_exit", {1, 1, 1}, {128, 1, 1}, 0, args,
                      {buffer(out, "out")}, nullptr, error);
  check(ok && out[0] == 1.0f && out[63] == 1.0f && out[64] == 0.0f,
        "barrier after exits", error);
}

/// Reference half -> float, independent of the simulator.
double halfValue(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  if (e == 31)
    v = m ? NAN : INFINITY;
  return (h & 0x8000) ? -v : v;
}

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void testHalf() {
  auto m = compileFile("half.cu");
  if (!m)
    return;
  const int64_t n = 65536;
  std::vector<uint16_t> bits(n), halfBack(n), bf16Back(n);
  std::vector<float> halfAsFloat(n), bf16AsFloat(n);
  for (int64_t i = 0; i < n; ++i)
    bits[i] = uint16_t(i);
  // (probe, expected half, expected bf16); 0xffff: expect NaN.
  struct Probe {
    float value;
    uint16_t half, bf16;
  } probes[] = {
      {1.0f, 0x3c00, 0x3f80},
      {1.0f + 0x1p-11f, 0x3c00, 0x3f80},     // half tie to even
      {1.0f + 3 * 0x1p-11f, 0x3c02, 0x3f80}, // half tie to even (up)
      {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01, 0x3f80},
      {1.0f + 0x1p-8f, 0x3c04, 0x3f80},     // bf16 tie to even
      {1.0f + 3 * 0x1p-8f, 0x3c0c, 0x3f82}, // bf16 tie to even (up)
      {1.0f + 0x1p-8f + 0x1p-20f, 0x3c04, 0x3f81},
      {65504.0f, 0x7bff, 0x4780},
      {65519.99f, 0x7bff, 0x4780},
      {65520.0f, 0x7c00, 0x4780}, // half overflow to inf
      {-1e6f, 0xfc00, 0xc974},
      {INFINITY, 0x7c00, 0x7f80},
      {-0.0f, 0x8000, 0x8000},
      {0x1p-24f, 0x0001, 0x3380}, // half subnormals
      {0x1p-25f, 0x0000, 0x3300},
      {3 * 0x1p-25f, 0x0002, 0x33c0},
      {0x1p-25f + 0x1p-35f, 0x0001, 0x3300},
      {0x1p-14f - 0x1p-25f, 0x0400, 0x3880},
      {1e-8f, 0x0000, 0x322c},
      {0.1f, 0x2e66, 0x3dcd},
      {3.4028235e38f, 0x7c00, 0x7f80}, // bf16 overflow to inf
      {floatOf(0x7f7f8000), 0x7c00, 0x7f80},
      {floatOf(0x7f7e8000), 0x7c00, 0x7f7e},
      {floatOf(0x00018000), 0x0000, 0x0002}, // bf16 subnormal tie
      {NAN, 0xffff, 0xffff},
      {-NAN, 0xffff, 0xffff},
  };
  int64_t numProbes = sizeof(probes) / sizeof(probes[0]);
  std::vector<float> probeValues;
  for (const Probe &p : probes)
    probeValues.push_back(p.value);
  std::vector<uint16_t> probeHalf(numProbes), probeBf16(numProbes);

  const uint16_t *a0 = bits.data();
  float *a1 = halfAsFloat.data(), *a3 = bf16AsFloat.data();
  uint16_t *a2 = halfBack.data(), *a4 = bf16Back.data();
  const float *a5 = probeValues.data();
  uint16_t *a6 = probeHalf.data(), *a7 = probeBf16.data();
  void *args[] = {&a0, &a1, &a2, &a3, &a4, &a5, &a6, &a7, &numProbes};
  std::string error;
  bool ok = m->launch(
      "convert", {256, 1, 1}, {256, 1, 1}, 0, args,
      {buffer(bits, "bits"), buffer(halfAsFloat, "halfAsFloat"),
       buffer(halfBack, "halfBack"), buffer(bf16AsFloat, "bf16AsFloat"),
       buffer(bf16Back, "bf16Back"), buffer(probeValues, "probes"),
       buffer(probeHalf, "probeHalf"), buffer(probeBf16, "probeBf16")},
      nullptr, error, SimOrder::Forward, 0, 9);
  check(ok, "convert launch", error);
  if (!ok)
    return;

  std::string bad;
  for (int64_t i = 0; i < n && bad.empty(); ++i) {
    uint16_t h = uint16_t(i);
    double ref = halfValue(h);
    bool nan = std::isnan(ref);
    bool toFloat = nan ? std::isnan(halfAsFloat[i])
                       : bitsOf(halfAsFloat[i]) == bitsOf(float(ref));
    bool back =
        nan ? (halfBack[i] & 0x7c00) == 0x7c00 && (halfBack[i] & 0x3ff) != 0
            : halfBack[i] == h;
    bool bfNan = (h & 0x7f80) == 0x7f80 && (h & 0x7f);
    bool bfFloat = bitsOf(bf16AsFloat[i]) == uint32_t(h) << 16;
    bool bfBack = bfNan ? std::isnan(floatOf(uint32_t(bf16Back[i]) << 16))
                        : bf16Back[i] == h;
    if (!toFloat || !back || !bfFloat || !bfBack) {
      char buf[160];
      std::snprintf(buf, sizeof(buf),
                    "pattern 0x%04x: half %g -> 0x%04x, bf16 %g -> 0x%04x",
                    unsigned(h), halfAsFloat[i], unsigned(halfBack[i]),
                    bf16AsFloat[i], unsigned(bf16Back[i]));
      bad = buf;
    }
  }
  check(bad.empty(), "16-bit round trips (all 65536 patterns)", bad);

  for (int64_t i = 0; i < numProbes; ++i) {
    const Probe &p = probes[i];
    auto isHalfNan = [](uint16_t h) {
      return (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    };
    auto isBf16Nan = [](uint16_t h) {
      return (h & 0x7f80) == 0x7f80 && (h & 0x7f);
    };
    bool okHalf =
        p.half == 0xffff ? isHalfNan(probeHalf[i]) : probeHalf[i] == p.half;
    bool okBf16 =
        p.bf16 == 0xffff ? isBf16Nan(probeBf16[i]) : probeBf16[i] == p.bf16;
    char buf[160];
    std::snprintf(buf, sizeof(buf),
                  "%a -> half 0x%04x (want 0x%04x), bf16 0x%04x (want 0x%04x)",
                  double(p.value), unsigned(probeHalf[i]), unsigned(p.half),
                  unsigned(probeBf16[i]), unsigned(p.bf16));
    check(okHalf && okBf16, "rounding " + std::to_string(i),
          okHalf && okBf16 ? "" : buf);
  }
}

void testWarp() {
  auto m = compileFile("warp.cu");
  if (!m)
    return;
  int64_t n = 64;
  std::vector<int> in(n), out(11 * n);
  for (int i = 0; i < n; ++i)
    in[i] = (i * 37 + 11) % 100;
  in[40] = 7;
  const int *inPtr = in.data();
  int *outPtr = out.data();
  void *args[] = {&inPtr, &outPtr, &n};
  for (int o = 0; o < kNumOrders; ++o) {
    std::fill(out.begin(), out.end(), -1);
    std::string error;
    bool ok = m->launch("warp_ops", {1, 1, 1}, {unsigned(n), 1, 1}, 0, args,
                        {buffer(in, "in"), buffer(out, "out")}, nullptr, error,
                        kOrders[o], 11);
    std::string bad = ok ? "" : error;
    for (int t = 0; t < n && bad.empty(); ++t) {
      int want[11] = {0};
      for (int j = t / 8 * 8; j < t / 8 * 8 + 8; ++j)
        want[0] += in[j];
      want[1] = in[t / 8 * 8 + 3];
      for (int j = t / 16 * 16; j <= t; ++j)
        want[2] += in[j];
      want[3] = t % 4 + 2 <= 3 ? in[t + 2] : in[t];
      bool any = false;
      for (int l = 0; l < 32; ++l) {
        want[4] |= (in[t / 32 * 32 + l] & 1) << l;
        any |= in[t / 32 * 32 + l] == 7;
      }
      want[5] = int(any) + 2;
      want[6] = in[t ^ 1] * 1000 + (t ^ 1);
      want[7] = in[t ^ 5] * 4 + 1;
      want[8] = t & 8 ? in[t - 8] : in[t];
      want[9] = in[t / 8 * 8 + 3];
      want[10] = t % 8 >= 3 ? in[t - 3] : in[t];
      for (int k = 0; k < 11 && bad.empty(); ++k)
        if (out[11 * t + k] != want[k])
          bad = "thread " + std::to_string(t) + " result " + std::to_string(k) +
                ": " + std::to_string(out[11 * t + k]) + " vs " +
                std::to_string(want[k]);
    }
    check(bad.empty(), std::string("warp ops width < 32 ") + kOrderNames[o],
          bad);
  }
  std::vector<int> lanes(32, 0);
  int *lanesPtr = lanes.data();
  void *maskArgs[] = {&lanesPtr};
  std::string error;
  bool ok = m->launch("outside_mask", {1, 1, 1}, {32, 1, 1}, 0, maskArgs,
                      {buffer(lanes, "out")}, nullptr, error);
  for (int t = 0; t < 32; ++t)
    ok &= lanes[t] == (t < 16 ? -1 : t);
  check(ok, "shuffle reading a lane outside the mask gives poison", error);
}

void testSharedMemory() {
  auto m = compileFile("smem.cu");
  auto bad = compileFile("smem.cu", /*dropBarrier=*/true);
  if (!m || !bad)
    return;
  std::vector<float> in = randomFloats(512, 4), out(512);
  const float *inPtr = in.data();
  float *outPtr = out.data();
  void *args[] = {&inPtr, &outPtr};
  auto reversed = [&] {
    for (int i = 0; i < 512; ++i)
      if (out[i] != in[i / 256 * 256 + 255 - i % 256])
        return false;
    return true;
  };
  std::string error;
  bool ok = m->launch("reverse", {2, 1, 1}, {256, 1, 1}, 1024, args,
                      {buffer(in, "in"), buffer(out, "out")}, nullptr, error);
  check(ok && reversed(), "dynamic shared memory", error);
  ok = bad->launch("reverse", {2, 1, 1}, {256, 1, 1}, 1024, args,
                   {buffer(in, "in"), buffer(out, "out")}, nullptr, error);
  check(!ok || !reversed(), "missing barrier on dynamic shared memory caught");

  std::vector<float> fresh(3 * 128, 0.0f);
  float *freshPtr = fresh.data();
  void *freshArgs[] = {&freshPtr};
  ok = m->launch("fresh", {3, 1, 1}, {128, 1, 1}, 512, freshArgs,
                 {buffer(fresh, "out")}, nullptr, error);
  bool poisoned = ok;
  for (int i = 0; i < 3 * 128; ++i)
    poisoned &= i < 128 ? fresh[i] == 3.0f : std::isnan(fresh[i]);
  check(poisoned, "shared memory poisoned per block", error);

  std::vector<int> coords(6 * 64, -2);
  int *coordsPtr = coords.data();
  void *coordArgs[] = {&coordsPtr};
  ok = m->launch("coords", {2, 3, 1}, {8, 4, 2}, 0, coordArgs,
                 {buffer(coords, "out")}, nullptr, error, SimOrder::Shuffle, 3);
  bool right = ok;
  for (int i = 0; i < 6 * 64; ++i) {
    int b = i / 64, t = i % 64;
    int want = t % 8 + 10 * (t / 8 % 4) + 100 * (t / 32) + 1000 * (b % 2) +
               10000 * (b / 2);
    right &= coords[i] == want;
  }
  check(right, "multi-dimensional grid and block", error);

  // Shared memory in inline and template helpers.
  std::vector<float> ramp(128), sums(3, 0.0f);
  for (int i = 0; i < 128; ++i)
    ramp[i] = float(i + 1);
  const float *rampPtr = ramp.data();
  float *sumsPtr = sums.data();
  void *helperArgs[] = {&rampPtr, &sumsPtr};
  error.clear();
  ok = m->launch("helpers", {2, 1, 1}, {128, 1, 1}, 0, helperArgs,
                 {buffer(ramp, "in"), buffer(sums, "out")}, nullptr, error,
                 SimOrder::Reverse);
  check(ok && sums == std::vector<float>{8256.0f, 128.0f, 128.0f},
        "__shared__ in inline and template helpers", error);

  // The configured order is the order in which threads run.
  std::vector<std::vector<int>> orders;
  for (auto [order, seed] : {std::pair{SimOrder::Forward, 0u},
                             {SimOrder::Reverse, 0u},
                             {SimOrder::Shuffle, 1u},
                             {SimOrder::Shuffle, 2u},
                             {SimOrder::Shuffle, 1u}}) {
    std::vector<int> position(64, -2);
    int *positionPtr = position.data();
    void *orderArgs[] = {&positionPtr};
    error.clear();
    if (!m->launch("run_order", {1, 1, 1}, {64, 1, 1}, 0, orderArgs,
                   {buffer(position, "out")}, nullptr, error, order, seed))
      break;
    orders.push_back(position);
  }
  bool ordered = orders.size() == 5;
  for (int t = 0; ordered && t < 64; ++t)
    ordered = orders[0][t] == t && orders[1][t] == 63 - t;
  std::vector<int> sorted = ordered ? orders[2] : std::vector<int>();
  std::sort(sorted.begin(), sorted.end());
  ordered = ordered && orders[2] != orders[0] && orders[2] != orders[1] &&
            orders[2] != orders[3] && orders[2] == orders[4] &&
            sorted == orders[0];
  check(ordered, "forward, reverse and seeded shuffle orders", error);
}

/// Runs kernel `name` of `m` with one block of 32 threads.
bool launchWarp(SimModule &m, const char *name, void **args,
                std::vector<SimBuffer> buffers, std::string &error) {
  return m.launch(name, {1, 1, 1}, {32, 1, 1}, 0, args, std::move(buffers),
                  nullptr, error);
}

// The PTX ISA's figures, a few entries each, as literal (row, column)
// pairs: the tables tensorcore.cu writes as formulas must agree with them.
// ldmatrix (.m8n8, 16-bit): lane 0 holds row 0 columns 0-1, lane 5 row 1
// columns 2-3, lane 31 row 7 columns 6-7 of each matrix.
// mma.m16n8k16 A (.f16/.bf16): lane 0 a0 (0,0), a2 (8,0), a4 (0,8), a6
// (8,8); lane 5 a1 (1,3), a3 (9,3), a5 (1,11), a7 (9,11); lane 31 a7
// (15,15). B: lane 0 b0 (0,0), b2 (8,0); lane 5 b1 (3,1), b3 (11,1); lane 31
// b3 (15,7). C/D: lane 0 c0 (0,0), c2 (8,0); lane 5 c1 (1,3), c3 (9,3);
// lane 31 c3 (15,7).
struct Frag {
  int lane, i, row, col;
};
const Frag kIsaA[] = {{0, 0, 0, 0},  {0, 2, 8, 0},  {0, 4, 0, 8},
                      {0, 6, 8, 8},  {5, 1, 1, 3},  {5, 3, 9, 3},
                      {5, 5, 1, 11}, {5, 7, 9, 11}, {31, 7, 15, 15}};
const Frag kIsaB[] = {
    {0, 0, 0, 0}, {0, 2, 8, 0}, {5, 1, 3, 1}, {5, 3, 11, 1}, {31, 3, 15, 7}};
const Frag kIsaC[] = {
    {0, 0, 0, 0}, {0, 2, 8, 0}, {5, 1, 1, 3}, {5, 3, 9, 3}, {31, 3, 15, 7}};

// mma.m16n8k8 .tf32 A: lane 0 a0 (0,0), a1 (8,0), a2 (0,4), a3 (8,4);
// lane 5 a0 (1,1), a3 (9,5); lane 31 a3 (15,7). B: lane 0 b0 (0,0), b1
// (4,0); lane 5 b0 (1,1), b1 (5,1); lane 31 b1 (7,7).
const Frag kIsaTf32A[] = {{0, 0, 0, 0},  {0, 1, 8, 0}, {0, 2, 0, 4},
                          {0, 3, 8, 4},  {5, 0, 1, 1}, {5, 3, 9, 5},
                          {31, 3, 15, 7}};
const Frag kIsaTf32B[] = {
    {0, 0, 0, 0}, {0, 1, 4, 0}, {5, 0, 1, 1}, {5, 1, 5, 1}, {31, 1, 7, 7}};

// The same tables as tensorcore.cu writes them.
int rowA(int l, int i) { return l / 4 + (i % 4 >= 2 ? 8 : 0); }
int colA(int l, int i) { return 2 * (l % 4) + i % 2 + (i >= 4 ? 8 : 0); }
int rowB(int l, int i) { return 2 * (l % 4) + i % 2 + (i >= 2 ? 8 : 0); }
int colB(int l, int) { return l / 4; }
int rowC(int l, int i) { return l / 4 + (i >= 2 ? 8 : 0); }
int colC(int l, int i) { return 2 * (l % 4) + i % 2; }
int tf32RowA(int l, int i) { return l / 4 + (i % 2) * 8; }
int tf32ColA(int l, int i) { return l % 4 + (i / 2) * 4; }
int tf32RowB(int l, int i) { return l % 4 + i * 4; }
int tf32ColB(int l, int) { return l / 4; }

/// `x` rounded to tf32 (10 fraction bits) to nearest, ties away from zero,
/// as PTX's cvt.rna.tf32.f32 defines it (for normal x).
double roundTf32(double x) {
  if (x == 0)
    return x;
  double ulp = std::ldexp(1.0, std::ilogb(x) - 10);
  double q = std::fabs(x) / ulp;
  return std::copysign(std::floor(q + 0.5) * ulp, x);
}

void testTensorCores() {
  auto m = compileFile("tensorcore.cu");
  if (!m)
    return;
  bool pinned = true;
  for (const Frag &f : kIsaA)
    pinned &= rowA(f.lane, f.i) == f.row && colA(f.lane, f.i) == f.col;
  for (const Frag &f : kIsaB)
    pinned &= rowB(f.lane, f.i) == f.row && colB(f.lane, f.i) == f.col;
  for (const Frag &f : kIsaC)
    pinned &= rowC(f.lane, f.i) == f.row && colC(f.lane, f.i) == f.col;
  check(pinned, "mma.m16n8k16 fragment tables agree with the PTX ISA's");
  bool tf32Pinned = true;
  for (const Frag &f : kIsaTf32A)
    tf32Pinned &=
        tf32RowA(f.lane, f.i) == f.row && tf32ColA(f.lane, f.i) == f.col;
  for (const Frag &f : kIsaTf32B)
    tf32Pinned &=
        tf32RowB(f.lane, f.i) == f.row && tf32ColB(f.lane, f.i) == f.col;
  check(tf32Pinned,
        "mma.m16n8k8 .tf32 fragment tables agree with the PTX ISA's");

  // ldmatrix: rows in a scrambled order, so that each lane's address counts.
  std::vector<int> perm(32);
  for (int l = 0; l < 32; ++l)
    perm[l] = (l * 13 + 5) % 32;
  std::vector<unsigned> words(32 * 14, 0);
  const int *permPtr = perm.data();
  unsigned *wordsPtr = words.data();
  void *ldArgs[] = {&permPtr, &wordsPtr};
  std::string error;
  bool ok = launchWarp(*m, "ldmatrix_all", ldArgs,
                       {buffer(perm, "perm"), buffer(words, "out")}, error);
  std::string bad = ok ? "" : error;
  // Element (r, c) of matrix j is 1000 * perm[8j + r] + c.
  auto value = [&](int j, int r, int c) {
    return unsigned(1000 * perm[8 * j + r] + c) & 0xffffu;
  };
  const int counts[6] = {4, 2, 1, 4, 2, 1};
  for (int l = 0; l < 32 && bad.empty(); ++l) {
    int k = 0;
    for (int form = 0; form < 6 && bad.empty(); ++form)
      for (int j = 0; j < counts[form] && bad.empty(); ++j, ++k) {
        bool trans = form >= 3;
        // The lane's row and first column of the pair (ISA: lane l holds
        // row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1; .trans swaps
        // rows and columns).
        int r = l / 4, c = 2 * (l % 4);
        unsigned want = trans ? value(j, c, r) | value(j, c + 1, r) << 16
                              : value(j, r, c) | value(j, r, c + 1) << 16;
        if (words[14 * l + k] != want)
          bad = "lane " + std::to_string(l) + " form " + std::to_string(form) +
                " matrix " + std::to_string(j) + ": " +
                std::to_string(words[14 * l + k]) + " vs " +
                std::to_string(want);
      }
  }
  check(bad.empty(), "ldmatrix .x1/.x2/.x4 and .trans by the ISA's layout",
        bad);
  check(value(0, 0, 0) == unsigned(1000 * perm[0]) &&
            words[14 * 5 + 0] == (value(0, 1, 2) | value(0, 1, 3) << 16) &&
            words[14 * 31 + 0] == (value(0, 7, 6) | value(0, 7, 7) << 16),
        "ldmatrix lanes 0, 5 and 31 as the ISA's figure shows them");

  // ldmatrix of 32-bit elements: lane l holds row l / 4, word l % 4 of each
  // 8x4 matrix.
  std::vector<unsigned> words32(32 * 7, 0);
  unsigned *words32Ptr = words32.data();
  void *ld32Args[] = {&permPtr, &words32Ptr};
  error.clear();
  ok = launchWarp(*m, "ldmatrix_b32", ld32Args,
                  {buffer(perm, "perm"), buffer(words32, "out")}, error);
  bad = ok ? "" : error;
  for (int l = 0; l < 32 && bad.empty(); ++l) {
    int k = 0;
    for (int count : {4, 2, 1})
      for (int j = 0; j < count && bad.empty(); ++j, ++k) {
        unsigned want = unsigned(1000 * perm[8 * j + l / 4] + l % 4);
        if (words32[7 * l + k] != want)
          bad = "lane " + std::to_string(l) + " matrix " + std::to_string(j) +
                ": " + std::to_string(words32[7 * l + k]) + " vs " +
                std::to_string(want);
      }
  }
  check(bad.empty(), "ldmatrix .x1/.x2/.x4 of 32-bit elements", bad);

  // mma.sync: small integers, so every product and sum is exact.
  std::vector<float> a(256), b(128), c(128);
  for (int i = 0; i < 256; ++i)
    a[i] = float((i * 7) % 9 - 4);
  for (int i = 0; i < 128; ++i) {
    b[i] = float((i * 5) % 7 - 3);
    c[i] = float(i % 11 - 5) * 0.5f;
  }
  for (const char *kernel : {"mma_f16", "mma_bf16"}) {
    std::vector<float> d(128, -1.0f);
    const float *ap = a.data(), *bp = b.data(), *cp = c.data();
    float *dp = d.data();
    void *args[] = {&ap, &bp, &cp, &dp};
    error.clear();
    ok = launchWarp(
        *m, kernel, args,
        {buffer(a, "a"), buffer(b, "b"), buffer(c, "c"), buffer(d, "d")},
        error);
    bad = ok ? "" : error;
    for (int r = 0; r < 16 && bad.empty(); ++r)
      for (int n = 0; n < 8 && bad.empty(); ++n) {
        double want = c[8 * r + n];
        for (int k = 0; k < 16; ++k)
          want += double(a[16 * r + k]) * b[8 * k + n];
        if (d[8 * r + n] != want)
          bad = "D(" + std::to_string(r) + ", " + std::to_string(n) +
                ") = " + std::to_string(d[8 * r + n]) + ", not " +
                std::to_string(want);
      }
    check(bad.empty(),
          std::string(kernel) + ": D = A * B + C by the ISA's "
                                "fragments",
          bad);
  }

  // mma.sync .tf32: A holds 1 + j 2^-12 for j in 0..7 (signed), which
  // tf32 rounds to nearest with ties away from zero (1 + 2^-11 is a tie and
  // becomes 1 + 2^-10; to even it would be 1, truncated 1 + 3 2^-12 would
  // be 1), times small integers in B: every rounded product and sum is
  // exact, so D is compared exactly.
  {
    std::vector<float> ta(128), tb(64), tc(128), td(128, -1.0f);
    for (int i = 0; i < 128; ++i) {
      ta[i] = float((i % 3 == 1 ? -1.0 : 1.0) *
                    (1.0 + std::ldexp(double((i * 5) % 8), -12)));
      tc[i] = float(i % 11 - 5) * 0.25f;
    }
    for (int i = 0; i < 64; ++i)
      tb[i] = float((i * 5) % 7 - 3);
    const float *ap = ta.data(), *bp = tb.data(), *cp = tc.data();
    float *dp = td.data();
    void *args[] = {&ap, &bp, &cp, &dp};
    error.clear();
    ok = launchWarp(
        *m, "mma_tf32", args,
        {buffer(ta, "a"), buffer(tb, "b"), buffer(tc, "c"), buffer(td, "d")},
        error);
    bad = ok ? "" : error;
    for (int r = 0; r < 16 && bad.empty(); ++r)
      for (int n = 0; n < 8 && bad.empty(); ++n) {
        double want = tc[8 * r + n];
        for (int k = 0; k < 8; ++k)
          want += roundTf32(ta[8 * r + k]) * tb[8 * k + n];
        if (td[8 * r + n] != want)
          bad = "D(" + std::to_string(r) + ", " + std::to_string(n) +
                ") = " + std::to_string(td[8 * r + n]) + ", not " +
                std::to_string(want);
      }
    check(bad.empty(),
          "mma_tf32: D = tf32(A) * tf32(B) + C by the ISA's fragments, "
          "rounded to nearest with ties away",
          bad);
  }

  // cp.async groups land when waited for, not before.
  std::vector<unsigned> in(32 * 16), out(32 * 15, 7);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = unsigned(i * 2654435761u);
  const unsigned *inPtr = in.data();
  unsigned *outPtr = out.data();
  void *cpArgs[] = {&inPtr, &outPtr};
  error.clear();
  ok = launchWarp(*m, "cp_async_groups", cpArgs,
                  {buffer(in, "in"), buffer(out, "out")}, error);
  bad = ok ? "" : error;
  for (int t = 0; t < 32 && bad.empty(); ++t) {
    const unsigned *src = in.data() + 16 * t, *got = out.data() + 15 * t;
    unsigned want[15] = {src[0], src[1], src[2], src[3],  src[4],
                         0,      0,      ~0u,    ~0u,     ~0u,
                         ~0u,    src[8], src[9], src[10], src[11]};
    for (int i = 0; i < 15 && bad.empty(); ++i)
      if (got[i] != want[i])
        bad = "thread " + std::to_string(t) + " word " + std::to_string(i);
  }
  check(bad.empty(),
        "cp.async: zero fill, and a group lands at its wait_group, not before",
        bad);

  const char *misuse[] = {"cp.async destination",
                          "not 16-byte aligned shared memory", "exited lanes",
                          "not in any buffer"};
  for (int what = 0; what < 4; ++what) {
    std::vector<unsigned> sink(64, 0);
    unsigned *sinkPtr = sink.data();
    void *args[] = {&sinkPtr, &what};
    error.clear();
    ok = launchWarp(*m, "tensor_core_misuse", args, {buffer(sink, "out")},
                    error);
    check(!ok && contains(error, misuse[what]),
          std::string("misuse reported: ") + misuse[what], error);
  }
}

// wgmma's D fragments from the PTX ISA's figure ("WGMMA .m64nNk16
// register fragment layout for accumulator matrix D"): thread 0 holds d0
// (0,0), d1 (0,1), d2 (8,0), d3 (8,1), d4 (0,8); thread 37 (warp 1, lane
// 5) d0 (17,2), d3 (25,3); thread 127 d63 of n128 (63,127).
const Frag kIsaWgmmaD[] = {{0, 0, 0, 0},   {0, 1, 0, 1},      {0, 2, 8, 0},
                           {0, 3, 8, 1},   {0, 4, 0, 8},      {37, 0, 17, 2},
                           {37, 3, 25, 3}, {127, 63, 63, 127}};
// The same table as a formula: thread t (warp w = t / 32 % 4, lane l),
// accumulator i (n8 tile j = i / 4, e = i % 4).
int wgmmaRow(int t, int i) {
  return 16 * (t / 32 % 4) + t % 32 / 4 + 8 * (i % 4 / 2);
}
int wgmmaCol(int t, int i) { return 8 * (i / 4) + 2 * (t % 32 % 4) + i % 2; }

/// A 16-bit value of f16 (or bf16) for a small integer.
unsigned short bits16(int v, bool bf16) {
  float f = float(v);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (bf16)
    return (unsigned short)(x >> 16);
  if (v == 0)
    return 0;
  // Integers of magnitude below 2048 are exact in f16.
  unsigned sign = v < 0 ? 0x8000u : 0u;
  unsigned m = unsigned(v < 0 ? -v : v);
  int e = 31 - __builtin_clz(m);
  unsigned mant = (m << (10 - e)) & 0x3ffu;
  return (unsigned short)(sign | unsigned(e + 15) << 10 | mant);
}

void testWgmma() {
  auto m = compileFile("tensorcore.cu");
  if (!m)
    return;
  bool pinned = true;
  for (const Frag &f : kIsaWgmmaD)
    pinned &= wgmmaRow(f.lane, f.i) == f.row && wgmmaCol(f.lane, f.i) == f.col;
  check(pinned, "wgmma m64nNk16 D fragment table agrees with the PTX ISA's");
  // A (64 x 64) and B (128 x 64) of small integers, K along the rows.
  auto aValue = [](int r, int k) { return (r * 7 + k * 3) % 9 - 4; };
  auto bValue = [](int c, int k) { return (c * 5 + k * 11) % 7 - 3; };
  const char *modes[] = {"K-major, 128-byte swizzle, f16",
                         "K-major, 64-byte swizzle, n64",
                         "MN-major (transposed), 128-byte swizzle",
                         "K-major, 128-byte swizzle, bf16"};
  for (int mode = 0; mode < 4; ++mode)
    for (int q : {0, 1}) {
      bool bf16 = mode == 3;
      std::vector<unsigned short> a(64 * 64), b(128 * 64);
      for (int r = 0; r < 64; ++r)
        for (int k = 0; k < 64; ++k)
          a[64 * r + k] = bits16(aValue(r, k), bf16);
      for (int c = 0; c < 128; ++c)
        for (int k = 0; k < 64; ++k)
          b[64 * c + k] = bits16(bValue(c, k), bf16);
      std::vector<float> out(128 * 64, -1.0f);
      const unsigned short *aPtr = a.data(), *bPtr = b.data();
      float *outPtr = out.data();
      void *args[] = {&mode, &q, &aPtr, &bPtr, &outPtr};
      std::string error;
      bool ok = m->launch("wgmma_tile", {1, 1, 1}, {128, 1, 1}, 0, args,
                          {buffer(a, "a"), buffer(b, "b"), buffer(out, "out")},
                          nullptr, error);
      std::string bad = ok ? "" : error;
      int n = mode == 1 ? 64 : 128;
      for (int t = 0; t < 128 && bad.empty(); ++t)
        for (int i = 0; i < n / 2 && bad.empty(); ++i) {
          int row = wgmmaRow(t, i), col = wgmmaCol(t, i);
          float want = 0;
          for (int k = 16 * q; k < 16 * q + 16; ++k)
            want += float(aValue(row, k) * bValue(col, k));
          if (out[64 * t + i] != want)
            bad = "thread " + std::to_string(t) + " d" + std::to_string(i) +
                  " (" + std::to_string(row) + ", " + std::to_string(col) +
                  "): " + std::to_string(out[64 * t + i]) + " vs " +
                  std::to_string(want);
        }
      check(bad.empty(),
            std::string("wgmma m64n") + std::to_string(n) + "k16, " +
                modes[mode] + ", K step " + std::to_string(q),
            bad);
    }

  const char *rules[] = {"", "without a fence.proxy.async",
                         "without a wgmma.fence", "still reads",
                         "exits with wgmma operations in flight"};
  std::vector<__uint16_t> a16(64 * 16), b16(64 * 16);
  for (int r = 0; r < 64; ++r)
    for (int k = 0; k < 16; ++k) {
      a16[16 * r + k] = bits16(aValue(r, k), false);
      b16[16 * r + k] = bits16(bValue(r, k), false);
    }
  for (int what = 0; what < 5; ++what) {
    std::vector<float> out(128 * 32, -1.0f);
    const __uint16_t *aPtr = a16.data(), *bPtr = b16.data();
    float *outPtr = out.data();
    void *args[] = {&what, &aPtr, &bPtr, &outPtr};
    std::string error;
    bool ok =
        m->launch("wgmma_rules", {1, 1, 1}, {128, 1, 1}, 0, args,
                  {buffer(a16, "a"), buffer(b16, "b"), buffer(out, "out")},
                  nullptr, error);
    if (what > 0) {
      check(!ok && contains(error, rules[what]),
            std::string("wgmma misuse reported: ") + rules[what], error);
      continue;
    }
    std::string bad = ok ? "" : error;
    for (int t = 0; t < 128 && bad.empty(); ++t)
      for (int i = 0; i < 32 && bad.empty(); ++i) {
        int row = wgmmaRow(t, i), col = wgmmaCol(t, i);
        float want = 0;
        for (int k = 0; k < 16; ++k)
          want += float(aValue(row, k) * bValue(col, k));
        if (out[32 * t + i] != want)
          bad = "thread " + std::to_string(t) + " d" + std::to_string(i);
      }
    check(bad.empty(),
          "wgmma m64n64k16 on operands staged by cp.async, 32-byte swizzle",
          bad);
  }
}

/// setmaxnreg: a producer warpgroup giving back registers that two
/// consumer warpgroups take runs; asking for more than the block holds, in
/// part of a warpgroup, a count that is no multiple of 8, and a decrease to
/// more than held are each reported.
void testSetMaxRegisters() {
  auto m = compileFile("registers.cu");
  if (!m)
    return;
  const char *rules[] = {"", "ask for 66560 registers, the block was launched",
                         "threads of warpgroup 0 hold 232 and 168 registers",
                         "setmaxnreg.inc 236 (a multiple of 8",
                         "setmaxnreg.dec to 200 registers from the 168"};
  for (int what = 0; what < 5; ++what) {
    std::vector<int> out(384, -1);
    int *outPtr = out.data();
    void *args[] = {&what, &outPtr};
    std::string error;
    bool ok = m->launch("setmaxnreg_roles", {1, 1, 1}, {384, 1, 1}, 0, args,
                        {buffer(out, "out")}, nullptr, error);
    if (what > 0) {
      check(!ok && contains(error, rules[what]),
            std::string("setmaxnreg misuse reported: ") + rules[what], error);
      continue;
    }
    bool roles = ok;
    for (int t = 0; t < 384; ++t)
      roles = roles && out[t] == t / 128;
    check(roles,
          "setmaxnreg: the producer gives back 128 registers a "
          "thread, the consumers take 64",
          error);
  }
}

/// A kernel's tensor-map parameter as the simulator reads it.
struct alignas(64) TensorMapParam {
  nf_sim_tensor_map map;
  unsigned char rest[128 - sizeof(nf_sim_tensor_map)];
};

/// The byte offset, in a stage of the given swizzle (0, 32, 64 or 128
/// bytes) aligned to its pattern, where byte `o` of a box's dense image
/// lies: 16-byte chunk c of the swizzle-wide row r goes to chunk
/// c ^ (r * swizzle / 128 % (swizzle / 16)).
size_t swizzledOffset(size_t o, int swizzle) {
  if (!swizzle)
    return o;
  size_t row = o / size_t(swizzle), chunk = o % size_t(swizzle) / 16;
  size_t physical =
      chunk ^ (row * size_t(swizzle) / 128 % size_t(swizzle / 16));
  return row * size_t(swizzle) + physical * 16 + o % 16;
}

void testTma() {
  auto m = compileFile("tma.cu");
  if (!m)
    return;
  struct Case {
    const char *what;
    int rank, elementBytes, swizzle;
    uint64_t dims[3];
    uint32_t box[3];
    int x0, y0, z0, dx;
  };
  // Each reaches past the tensor somewhere (zeros), and the second phase
  // loads another box through the same mbarrier.
  const Case cases[] = {
      {"2-d, 16-bit, 128-byte swizzle, past the columns and rows",
       2,
       2,
       128,
       {72, 100, 1},
       {64, 16, 1},
       32,
       90,
       0,
       -32},
      {"3-d, 16-bit, 64-byte swizzle, before the columns and past z",
       3,
       2,
       64,
       {40, 30, 3},
       {32, 8, 2},
       -8,
       21,
       2,
       16},
      {"2-d, 32-bit, 32-byte swizzle",
       2,
       4,
       32,
       {24, 9, 1},
       {8, 8, 1},
       16,
       0,
       0,
       -16},
      {"2-d, 32-bit, no swizzle",
       2,
       4,
       0,
       {12, 5, 1},
       {4, 8, 1},
       10,
       0,
       0,
       -10},
  };
  for (const Case &c : cases) {
    // Rows padded to 16 bytes; element (x, y, z) holds its own index + 1
    // in every byte's worth (so zeros are never data).
    uint64_t rowBytes = (c.dims[0] * uint64_t(c.elementBytes) + 15) / 16 * 16;
    uint64_t planeBytes = rowBytes * c.dims[1];
    std::vector<unsigned char> tensor(planeBytes * c.dims[2], 0xee);
    auto valueAt = [&](uint64_t x, uint64_t y, uint64_t z, int byte) {
      return (unsigned char)((x * 7 + y * 13 + z * 29 + uint64_t(byte) * 3) %
                                 251 +
                             1);
    };
    for (uint64_t z = 0; z < c.dims[2]; ++z)
      for (uint64_t y = 0; y < c.dims[1]; ++y)
        for (uint64_t x = 0; x < c.dims[0]; ++x)
          for (int e = 0; e < c.elementBytes; ++e)
            tensor[z * planeBytes + y * rowBytes + x * c.elementBytes + e] =
                valueAt(x, y, z, e);
    TensorMapParam param{};
    param.map.base = tensor.data();
    param.map.rank = c.rank;
    param.map.elementBytes = c.elementBytes;
    param.map.swizzle = c.swizzle;
    for (int d = 0; d < c.rank; ++d) {
      param.map.dims[d] = c.dims[d];
      param.map.box[d] = c.box[d];
    }
    param.map.strides[0] = rowBytes;
    param.map.strides[1] = planeBytes;
    int bytes = int(c.box[0] * c.box[1] * c.box[2]) * c.elementBytes;
    std::vector<unsigned char> out(2 * size_t(bytes), 0);
    unsigned char *outPtr = out.data();
    int rank = c.rank, x0 = c.x0, y0 = c.y0, z0 = c.z0, dx = c.dx;
    void *args[] = {&param, &rank, &x0, &y0, &z0, &dx, &bytes, &outPtr};
    std::string error;
    bool ok = m->launch("tma_box", {1, 1, 1}, {64, 1, 1}, 0, args,
                        {buffer(tensor, "tensor"), buffer(out, "out")}, nullptr,
                        error);
    std::string bad = ok ? "" : error;
    for (int p = 0; p < 2 && bad.empty(); ++p)
      for (uint32_t k = 0; k < c.box[2] && bad.empty(); ++k)
        for (uint32_t j = 0; j < c.box[1] && bad.empty(); ++j)
          for (uint32_t i = 0; i < c.box[0] && bad.empty(); ++i) {
            int64_t x = c.x0 + p * c.dx + int64_t(i), y = c.y0 + int64_t(j),
                    z = c.z0 + int64_t(k);
            bool inside = x >= 0 && uint64_t(x) < c.dims[0] && y >= 0 &&
                          uint64_t(y) < c.dims[1] && z >= 0 &&
                          uint64_t(z) < c.dims[2];
            size_t dense =
                ((size_t(k) * c.box[1] + j) * c.box[0] + i) * c.elementBytes;
            for (int e = 0; e < c.elementBytes && bad.empty(); ++e) {
              size_t at = size_t(p) * size_t(bytes) +
                          swizzledOffset(dense + size_t(e), c.swizzle);
              unsigned char want =
                  inside ? valueAt(uint64_t(x), uint64_t(y), uint64_t(z), e)
                         : 0;
              if (out[at] != want)
                bad = "phase " + std::to_string(p) + " element (" +
                      std::to_string(x) + ", " + std::to_string(y) + ", " +
                      std::to_string(z) + ") byte " + std::to_string(e) + ": " +
                      std::to_string(out[at]) + " vs " + std::to_string(want);
            }
          }
    check(bad.empty(), std::string("TMA load, ") + c.what, bad);
  }

  // Without the barrier that ends each phase, thread 0 arms phase 1 before
  // the others have seen phase 0 complete: they then wait for parity 0
  // while the mbarrier moves on, which the simulator reports.
  if (auto racy = compileFile("tma.cu", /*dropBarrier=*/true,
                              "__syncthreads(); // @barrier")) {
    std::vector<unsigned char> tensor(4096 * 16), out(2 * 2048);
    TensorMapParam param{};
    param.map = {tensor.data(), 2, 2, 128, 0, {64, 16}, {128}, {64, 16}};
    unsigned char *outPtr = out.data();
    int rank = 2, x0 = 0, y0 = 0, z0 = 0, dx = 0, bytes = 2048;
    void *args[] = {&param, &rank, &x0, &y0, &z0, &dx, &bytes, &outPtr};
    std::string error;
    bool ok = racy->launch("tma_box", {1, 1, 1}, {64, 1, 1}, 0, args,
                           {buffer(tensor, "tensor"), buffer(out, "out")},
                           nullptr, error);
    check(!ok && contains(error, "mbarriers whose phase never completes"),
          "an mbarrier re-armed before every waiter saw its phase is "
          "reported",
          error);
  }

  // The rules: a 2-d map of 64 x 16 16-bit elements, 128-byte swizzle.
  std::vector<unsigned char> tensor(64 * 16 * 2);
  for (size_t i = 0; i < tensor.size(); ++i)
    tensor[i] = (unsigned char)(i % 251 + 1);
  TensorMapParam param{};
  param.map = {tensor.data(), 2, 2, 128, 0, {64, 16}, {128}, {64, 16}};
  const char *rules[] = {"", "TMA load in flight", "no mbarrier.init",
                         "mbarriers whose phase never completes",
                         "not 1024-byte aligned"};
  for (int what = 0; what < 5; ++what) {
    int bytes = 64 * 16 * 2;
    std::vector<unsigned char> out(size_t(bytes), 0);
    unsigned char *outPtr = out.data();
    void *args[] = {&param, &what, &bytes, &outPtr};
    std::string error;
    bool ok = m->launch("tma_rules", {1, 1, 1}, {32, 1, 1}, 0, args,
                        {buffer(tensor, "tensor"), buffer(out, "out")}, nullptr,
                        error);
    if (what > 0) {
      check(!ok && contains(error, rules[what]),
            std::string("TMA misuse reported: ") + rules[what], error);
      continue;
    }
    std::string bad = ok ? "" : error;
    for (size_t o = 0; o < tensor.size() && bad.empty(); ++o)
      if (out[swizzledOffset(o, 128)] != tensor[o])
        bad = "byte " + std::to_string(o);
    check(bad.empty(), "TMA load then mbarrier wait, nothing missing", bad);
  }
  // Without the wait, the bytes read are the poison (0xff) that shared
  // memory starts with, not the tensor's: a kernel that forgets the wait
  // computes on garbage here rather than on data that happened to land.
  {
    int what = 1, bytes = 64 * 16 * 2;
    std::vector<unsigned char> out(size_t(bytes), 0);
    unsigned char *outPtr = out.data();
    void *args[] = {&param, &what, &bytes, &outPtr};
    std::string error;
    m->launch("tma_rules", {1, 1, 1}, {32, 1, 1}, 0, args,
              {buffer(tensor, "tensor"), buffer(out, "out")}, nullptr, error);
    check(std::all_of(out.begin(), out.end(),
                      [](unsigned char b) { return b == 0xff; }),
          "a TMA load not waited for has not landed when read");
  }
}

/// The warp-specialized pipeline of pipeline.cu: a producer thread staging
/// 5 tiles through 2 stages by TMA loads, 64 consumers that release each
/// stage on an mbarrier and meet at a named barrier of their own.
void testWarpSpecialized() {
  auto m = compileFile("pipeline.cu");
  if (!m)
    return;
  const int tiles = 5;
  std::vector<uint16_t> tensor(size_t(4 * tiles) * 32);
  for (size_t i = 0; i < tensor.size(); ++i)
    tensor[i] = uint16_t((i * 7 + 3) % 1000);
  TensorMapParam param{};
  param.map = {tensor.data(), 2,      2, 0, 0, {32, uint64_t(4 * tiles)},
               {64},          {32, 4}};
  // Consumer c's sum: elements 2 c and 2 c + 1 of every tile's box.
  std::vector<unsigned> sums(64, 0), want(64);
  for (int c = 0; c < 64; ++c)
    for (int i = 0; i < tiles; ++i)
      for (int e = 2 * c; e < 2 * c + 2; ++e)
        sums[size_t(c)] += tensor[size_t(4 * i + e / 32) * 32 + size_t(e % 32)];
  for (int c = 0; c < 64; ++c)
    want[size_t(c)] = sums[size_t(c)] + sums[size_t((c + 1) % 64)];
  auto launch = [&](SimModule &mod, unsigned named, std::vector<unsigned> &out,
                    std::string &error, SimOrder order = SimOrder::Forward) {
    int n = tiles;
    unsigned *outPtr = out.data();
    void *args[] = {&param, &n, &named, &outPtr};
    return mod.launch("ws_pipeline", {1, 1, 1}, {96, 1, 1}, 0, args,
                      {buffer(tensor, "tensor"), buffer(out, "out")}, nullptr,
                      error, order, 7);
  };
  for (int o = 0; o < kNumOrders; ++o) {
    std::vector<unsigned> out(64, 0);
    std::string error;
    bool ok = launch(*m, 64, out, error, kOrders[o]);
    check(ok && out == want,
          std::string("a producer and consumers exchange stages through "
                      "full and empty mbarriers and meet at a named "
                      "barrier, ") +
              kOrderNames[o] + " order",
          error);
  }
  // A named barrier for more threads than come never completes; one of
  // part of a warp is refused.
  for (auto [named, what] : {std::pair<unsigned, const char *>{96, "named "
                                                                   "barriers"},
                             {48, "whole warps"}}) {
    std::vector<unsigned> out(64, 0);
    std::string error;
    check(!launch(*m, named, out, error) && contains(error, what),
          "a named barrier of " + std::to_string(named) +
              " threads for 64 consumers is reported",
          error);
  }
  // Without the named barrier, a consumer reads its neighbour's sum before
  // it is written (shared memory's poison).
  if (auto racy = compileFile("pipeline.cu", true,
                              "nf_named_barrier(1, named); // @named")) {
    std::vector<unsigned> out(64, 0);
    std::string error;
    bool ok = launch(*racy, 64, out, error);
    check(ok && out != want,
          "consumers that skip their named barrier read unwritten shared "
          "memory",
          error);
  }
  // A producer that does not wait for a stage to be empty arms its full
  // mbarrier again while the first load's phase is pending.
  if (auto eager = compileFile("pipeline.cu", true,
                               "nf_mbarrier_wait(&empty[s], unsigned((i / 2) % "
                               "2 ^ 1)); // @empty")) {
    std::vector<unsigned> out(64, 0);
    std::string error;
    check(!launch(*eager, 64, out, error) &&
              contains(error, "has had all its 1 arrival(s)"),
          "a producer that reuses a stage before it is empty is reported",
          error);
  }
}

/// TMA multicast in a cluster of two (multicast.cu): each block's producer
/// loads half of each of 5 tiles into both blocks' stage; the consumers of
/// both release each stage in both blocks.
void testMulticast() {
  auto m = compileFile("multicast.cu");
  if (!m)
    return;
  const int tiles = 5;
  std::vector<uint16_t> tensor(size_t(4 * tiles) * 32);
  for (size_t i = 0; i < tensor.size(); ++i)
    tensor[i] = uint16_t((i * 11 + 5) % 997);
  TensorMapParam param{};
  param.map = {tensor.data(), 2,      2, 0, 0, {32, uint64_t(4 * tiles)},
               {64},          {32, 2}};
  std::vector<unsigned> want(128, 0);
  for (int c = 0; c < 128; ++c)
    for (int i = 0; i < tiles; ++i)
      for (int e = 2 * (c % 64); e < 2 * (c % 64) + 2; ++e)
        want[size_t(c)] += tensor[size_t(4 * i + e / 32) * 32 + size_t(e % 32)];
  auto launch = [&](SimModule &mod, std::vector<unsigned> &out,
                    std::string &error, SimOrder order) {
    int n = tiles;
    unsigned *outPtr = out.data();
    void *args[] = {&param, &n, &outPtr};
    return mod.launch("ws_multicast", {2, 1, 1}, {96, 1, 1}, 0, args,
                      {buffer(tensor, "tensor"), buffer(out, "out")}, nullptr,
                      error, order, 11);
  };
  for (int o = 0; o < kNumOrders; ++o) {
    std::vector<unsigned> out(128, 0);
    std::string error;
    bool ok = launch(*m, out, error, kOrders[o]);
    check(ok && out == want,
          std::string("two blocks multicast halves of each tile to both and "
                      "release each stage in both, ") +
              kOrderNames[o] + " order",
          error);
  }
  // Each planted fault, in some order of the threads: a multicast or a
  // remote arrival before the cluster's first barrier; a stage never
  // empty in the other block (its consumers do not arrive there); a block
  // that exits while the other's consumers still arrive on its mbarriers.
  struct Fault {
    const char *marked, *what, *error;
  } faults[] = {
      {"nf_cluster_sync(); // @cluster",
       "no cluster barrier after the "
       "mbarriers are made",
       "before the cluster's first barrier"},
      {"nf_mbarrier_arrive_cluster(&empty[s], peer); // @peer",
       "consumers that release a stage in their own block only",
       "mbarriers whose phase never completes"},
      {"for (int i = tiles; i < tiles + 2; ++i) // @tail\n"
       "        nf_mbarrier_wait(&empty[i % 2], unsigned((i / 2) % 2 ^ 1)); "
       "// @tail",
       "a producer that exits before the other block's last releases",
       "has exited"},
  };
  for (const Fault &f : faults) {
    auto bad = compileFile("multicast.cu", true, f.marked);
    if (!bad)
      continue;
    std::string errors;
    bool caught = false;
    for (int o = 0; o < kNumOrders && !caught; ++o) {
      std::vector<unsigned> out(128, 0);
      std::string error;
      caught =
          !launch(*bad, out, error, kOrders[o]) && contains(error, f.error);
      errors += error + "; ";
    }
    check(caught, std::string("reported: ") + f.what, errors);
  }
}

void testClusters() {
  auto m = compileFile("cluster.cu");
  auto bad = compileFile("cluster.cu", /*dropBarrier=*/true,
                         "nf_cluster_sync(); // @cluster");
  if (!m || !bad)
    return;
  // Two clusters of 4 blocks of 64 threads.
  std::vector<float> in = randomFloats(8 * 64, 9), out(8 * 64);
  const float *inPtr = in.data();
  float *outPtr = out.data();
  void *args[] = {&inPtr, &outPtr};
  auto totals = [&] {
    std::string wrong;
    for (int c = 0; c < 2 && wrong.empty(); ++c) {
      // The blocks' sums in rank order, as every thread adds them.
      float sums[4] = {0, 0, 0, 0};
      for (int b = 0; b < 4; ++b) {
        double s = 0;
        for (int t = 0; t < 64; ++t)
          s += in[(4 * c + b) * 64 + t];
        sums[b] = float(s);
      }
      for (int i = 0; i < 256 && wrong.empty(); ++i) {
        float got = out[c * 256 + i];
        float first = out[c * 256];
        if (!(std::fabs(got - (sums[0] + sums[1] + sums[2] + sums[3])) <=
              1e-4f) ||
            std::memcmp(&got, &first, 4) != 0)
          wrong = "cluster " + std::to_string(c) + " thread " +
                  std::to_string(i) + ": " + std::to_string(got);
      }
    }
    return wrong;
  };
  for (int o = 0; o < kNumOrders; ++o) {
    std::string error, what = std::string("cluster sums ") + kOrderNames[o];
    std::fill(out.begin(), out.end(), 0.0f);
    SimStats stats;
    bool ok = m->launch("cluster_sum", {8, 1, 1}, {64, 1, 1}, 0, args,
                        {buffer(in, "in"), buffer(out, "out")}, &stats, error,
                        kOrders[o], 5);
    check(ok && totals().empty() && stats.clusterBarriers == 2 * 2 &&
              stats.clusterStores == 2 * 4 * 3 && stats.blocks == 8 &&
              stats.barriers == 8 * 2,
          what, error + totals());
    // Without the cluster barrier a block adds sums the others have not
    // stored yet (poison).
    std::fill(out.begin(), out.end(), 0.0f);
    ok = bad->launch("cluster_sum", {8, 1, 1}, {64, 1, 1}, 0, args,
                     {buffer(in, "in"), buffer(out, "out")}, nullptr, error,
                     kOrders[o], 5);
    check(!ok || !totals().empty(),
          what + ": a missing cluster barrier is caught");
  }
  // Staggered, a cluster's second block runs only while the first waits
  // (here: once it has exited); forward, the two take turns.
  for (auto [order, want] :
       {std::pair{SimOrder::Stagger,
                  std::vector<unsigned>{6, 0, 1, 2, 3, 4, 5}},
        {SimOrder::Forward, std::vector<unsigned>{6, 0, 2, 4, 1, 3, 5}}}) {
    std::vector<unsigned> log(7, 0);
    unsigned *logPtr = log.data();
    void *stepArgs[] = {&logPtr};
    std::string error;
    bool ok = m->launch("cluster_steps", {2, 1, 1}, {32, 1, 1}, 0, stepArgs,
                        {buffer(log, "log")}, nullptr, error, order);
    check(ok && log == want,
          std::string("a cluster's blocks run ") +
              (order == SimOrder::Stagger ? "one after the other, staggered"
                                          : "in turns, forward"),
          error);
  }
  std::string error;
  bool ok = m->launch("cluster_sum", {6, 1, 1}, {64, 1, 1}, 0, args,
                      {buffer(in, "in"), buffer(out, "out")}, nullptr, error);
  check(!ok && contains(error, "not a whole number of clusters of 4 blocks"),
        "a grid of part of a cluster is refused", error);

  const char *misuse[] = {"block 1 of the cluster has exited",
                          "threads of its cluster wait at the cluster barrier",
                          "divergent cluster barrier", "block 4 of a cluster",
                          "before the cluster's first barrier"};
  for (int what = 0; what < 5; ++what) {
    std::vector<float> sink(4 * 64, 0.0f);
    float *sinkPtr = sink.data();
    void *misuseArgs[] = {&sinkPtr, &what};
    error.clear();
    ok = m->launch("cluster_misuse", {4, 1, 1}, {64, 1, 1}, 0, misuseArgs,
                   {buffer(sink, "out")}, nullptr, error);
    check(!ok && contains(error, misuse[what]),
          std::string("cluster misuse reported: ") + misuse[what], error);
  }
}

void testGridBarrier() {
  auto m = compileFile("grid.cu");
  auto bad = compileFile("grid.cu", /*dropBarrier=*/true,
                         "nf_grid_sync(counter); // @grid");
  if (!m || !bad)
    return;
  // Six blocks of 64 threads, all running together.
  std::vector<float> in = randomFloats(6 * 64, 13), sums(6), out(6 * 64);
  std::vector<unsigned> counter(1);
  const float *inPtr = in.data();
  float *sumsPtr = sums.data(), *outPtr = out.data();
  unsigned *counterPtr = counter.data();
  void *args[] = {&inPtr, &sumsPtr, &counterPtr, &outPtr};
  auto buffers = [&] {
    return std::vector<SimBuffer>{buffer(in, "in"), buffer(sums, "sums"),
                                  buffer(counter, "counter"),
                                  buffer(out, "out")};
  };
  auto wrongTotal = [&] {
    float total = 0.0f;
    for (int b = 0; b < 6; ++b) {
      double s = 0;
      for (int t = 0; t < 64; ++t)
        s += in[b * 64 + t];
      total += float(s);
    }
    for (int i = 0; i < 6 * 64; ++i)
      if (!(std::fabs(out[i] - total) <= 1e-4f) ||
          std::memcmp(&out[i], &out[0], 4) != 0)
        return "thread " + std::to_string(i) + ": " + std::to_string(out[i]);
    return std::string();
  };
  for (int o = 0; o < kNumOrders; ++o) {
    std::string error, what = std::string("grid sums ") + kOrderNames[o];
    std::fill(out.begin(), out.end(), 0.0f);
    std::fill(sums.begin(), sums.end(), std::nanf(""));
    counter[0] = 6; // a multiple of the blocks: a second use of the counter
    SimStats stats;
    bool ok = m->launch("grid_sum", {6, 1, 1}, {64, 1, 1}, 0, args, buffers(),
                        &stats, error, kOrders[o], 7);
    check(ok && wrongTotal().empty() && counter[0] == 12 &&
              stats.clusterBarriers == 1 && stats.blocks == 6,
          what, error + wrongTotal());
    // Without the barrier a block adds sums the others have not written.
    std::fill(out.begin(), out.end(), 0.0f);
    std::fill(sums.begin(), sums.end(), std::nanf(""));
    ok = bad->launch("grid_sum", {6, 1, 1}, {64, 1, 1}, 0, args, buffers(),
                     nullptr, error, kOrders[o], 7);
    check(!ok || !wrongTotal().empty(),
          what + ": a missing grid barrier is caught");
  }
  std::string error;
  counter[0] = 0xffffffffu; // a temporary not zeroed
  bool ok = m->launch("grid_sum", {6, 1, 1}, {64, 1, 1}, 0, args, buffers(),
                      nullptr, error);
  check(!ok && contains(error, "not a multiple of the grid's 6 blocks"),
        "a grid barrier's counter not zeroed is reported", error);
  counter[0] = 0;
  ok = m->launch("grid_sum", {65, 1, 1}, {64, 1, 1}, 0, args, buffers(),
                 nullptr, error);
  check(!ok && contains(error, "synchronizes its grid"),
        "a synchronizing grid larger than the simulator runs is refused",
        error);
  const char *misuse[] = {"exit", "divergent grid barrier"};
  for (int what = 0; what < 2; ++what) {
    std::vector<float> sink(6 * 64, 0.0f);
    float *sinkPtr = sink.data();
    counter[0] = 0;
    void *misuseArgs[] = {&counterPtr, &sinkPtr, &what};
    error.clear();
    ok = m->launch("grid_misuse", {6, 1, 1}, {64, 1, 1}, 0, misuseArgs,
                   {buffer(counter, "counter"), buffer(sink, "out")}, nullptr,
                   error);
    check(!ok && contains(error, misuse[what]) &&
              contains(error, "grid barrier"),
          std::string("grid misuse reported: ") + misuse[what], error);
  }
  void *unregisteredArgs[] = {&counterPtr};
  ok =
      m->launch("grid_unregistered", {2, 1, 1}, {32, 1, 1}, 0, unregisteredArgs,
                {buffer(counter, "counter")}, nullptr, error);
  check(!ok && contains(error, "not registered with NF_SIM_GRID_ENTRY"),
        "a grid barrier in a kernel not launched cooperatively is reported",
        error);
}

void testCompileError() {
  std::string error;
  auto m = SimModule::compile("extern \"C\" __global__ void k() { oops; }\n",
                              error, compileOptions);
  check(!m && contains(error, "oops") && contains(error, "command:"),
        "compile error is reported", error.substr(0, 200));
}

void testOptimizationLevel() {
  const char *kernel = "extern \"C\" __global__ void k() {}\n";
  std::string error;
  // -O0 from $NF_SIM_OPT compiles; a level that is not one is refused
  // before the compiler runs.
  ::setenv("NF_SIM_OPT", "-O0", 1);
  auto m = SimModule::compile(kernel, error, compileOptions);
  check(m != nullptr, "NF_SIM_OPT=-O0 compiles", error);
  ::setenv("NF_SIM_OPT", "-Ofast", 1);
  error.clear();
  m = SimModule::compile(kernel, error, compileOptions);
  check(!m && error == "the simulator's optimization level is '-Ofast' (-O0, "
                       "-O1, -O2 or -O3; $NF_SIM_OPT)",
        "an unknown NF_SIM_OPT is an error", error);
  // The options' own level comes first.
  SimCompileOptions options = compileOptions;
  options.optLevel = "-O2";
  error.clear();
  m = SimModule::compile(kernel, error, options);
  check(m != nullptr, "SimCompileOptions::optLevel overrides NF_SIM_OPT",
        error);
  ::unsetenv("NF_SIM_OPT");
}

/// Multiplies and adds run as written (modules get -mfma where the CPU has
/// FMA, and -ffp-contract=off with it): a * b - fl(a * b) is 0, where a
/// contracted one gives the product's rounding error, which fmaf gives.
void testMultiplyAddsAsWritten() {
  const char *source =
      "extern \"C\" __global__ void k(const float *in, float *out) {\n"
      "  float a = nf_ldg(in), b = nf_ldg(in + 1);\n"
      "  float c = a * b;\n"
      "  nf_stg(out, a * b - c);\n"
      "  nf_stg(out + 1, fmaf(a, b, -c));\n"
      "}\nNF_SIM_ENTRY(k)\n";
  std::string error;
  auto m = SimModule::compile(source, error, compileOptions);
  check(m != nullptr, "compile the multiply-add module", error);
  if (!m)
    return;
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: the last term is rounded off.
  std::vector<float> in{1.0f + 0x1p-12f, 1.0f + 0x1p-12f}, out{-1.0f, -1.0f};
  const float *inPtr = in.data();
  float *outPtr = out.data();
  void *args[] = {&inPtr, &outPtr};
  bool ok = m->launch("k", {1, 1, 1}, {1, 1, 1}, 0, args,
                      {buffer(in, "in"), buffer(out, "out")}, nullptr, error,
                      SimOrder::Forward, 0, 2);
  char got[64];
  std::snprintf(got, sizeof got, "%a and %a", out[0], out[1]);
  check(ok && out[0] == 0.0f && out[1] == 0x1p-24f,
        "a * b - c is not fused into fmaf, which is exact", error + got);
}

/// The value kernel `value` of `module` writes (-1 where the launch
/// fails).
int launchValue(SimModule &module) {
  int out = -1, *outPtr = &out;
  void *args[] = {&outPtr};
  std::string error;
  if (!module.launch("value", {1, 1, 1}, {1, 1, 1}, 0, args,
                     {{&out, sizeof out, "out", false}}, nullptr, error))
    return -1;
  return out;
}

/// The simulator header is precompiled once per compiler, flags and
/// header, kept, checked by every compile, made again when the header
/// changes or the entry is corrupt; an empty folder turns it off.
void testPrecompiledHeader() {
  namespace fs = std::filesystem;
  std::string dir = (fs::temp_directory_path() / "nf-sim-pch-XXXXXX").string();
  if (!::mkdtemp(dir.data())) {
    check(false, "make a folder for the precompiled header test");
    return;
  }
  // A copy of the header, which defines NF_TEST_VALUE, and its include
  // folder (the copy finds CudaSimABI.h there).
  std::string original = readText(NF_CUDA_SIM_HEADER);
  std::string header = dir + "/sim.h";
  auto writeHeader = [&](int value) {
    std::ofstream(header) << original << "\n#define NF_TEST_VALUE " << value
                          << "\n";
  };
  writeHeader(1);
  SimCompileOptions options = compileOptions;
  options.headerPath = header;
  options.pchDirectory = dir + "/pch";
  options.extraFlags.push_back(
      "-I" + (fs::path(NF_CUDA_SIM_HEADER).parent_path() / "../../../include")
                 .lexically_normal()
                 .string());
  auto compileValue = [&](const char *expression, SimCompileOptions &o) {
    std::string error, source = std::string("extern \"C\" __global__ void "
                                            "value(int *out) { *out = ") +
                                expression + "; }\nNF_SIM_ENTRY(value)\n";
    auto m = SimModule::compile(source, error, o);
    check(m != nullptr, std::string("compile a module returning ") + expression,
          error);
    return m ? launchValue(*m) : -1;
  };
  auto delta = [base = SimModule::compileStats()] {
    SimCompileStats now = SimModule::compileStats();
    return std::vector<uint64_t>{now.headersPrecompiled -
                                     base.headersPrecompiled,
                                 now.modulesWithPch - base.modulesWithPch,
                                 now.pchFallbacks - base.pchFallbacks};
  };
  using Counts = std::vector<uint64_t>;
  auto describe = [](const Counts &c) {
    return "precompiled " + std::to_string(c[0]) + ", modules with it " +
           std::to_string(c[1]) + ", fallbacks " + std::to_string(c[2]);
  };

  int first = compileValue("NF_TEST_VALUE", options);
  int second = compileValue("NF_TEST_VALUE + 1", options);
  check(first == 1 && second == 2 && delta() == Counts{1, 2, 0},
        "the header is precompiled once and two modules compile against it",
        std::to_string(first) + " " + std::to_string(second) + "; " +
            describe(delta()));
  std::vector<fs::path> entries;
  for (const auto &e : fs::directory_iterator(dir + "/pch"))
    entries.push_back(e.path());
  std::string pch;
  for (const char *suffix : {".gch", ".pch"})
    if (entries.size() == 1 &&
        fs::exists(entries[0] / (std::string("include.h") + suffix)))
      pch = (entries[0] / (std::string("include.h") + suffix)).string();
  check(!pch.empty() && fs::exists(entries[0] / "key.txt"),
        "the entry is one folder: include.h, its precompiled file, key.txt");

  // What a process killed while precompiling left, an hour old.
  fs::path stale = entries.empty() ? fs::path(dir) / "none"
                                   : entries[0] / "include.h.pch.tmp.1";
  std::ofstream(stale) << "partial";
  fs::last_write_time(stale,
                      fs::file_time_type::clock::now() - std::chrono::hours(1));
  writeHeader(5);
  int changed = compileValue("NF_TEST_VALUE", options);
  check(changed == 5 && delta() == Counts{2, 3, 0},
        "a changed header is precompiled again",
        std::to_string(changed) + "; " + describe(delta()));
  check(!entries.empty() && !fs::exists(stale),
        "making an entry removes the temporary files a killed process left");

  if (!pch.empty())
    std::ofstream(pch, std::ios::trunc) << "not a precompiled header";
  int corrupt = compileValue("NF_TEST_VALUE", options);
  int remade = compileValue("NF_TEST_VALUE", options);
  check(corrupt == 5 && remade == 5 && delta() == Counts{3, 5, 1},
        "a corrupt entry: the module compiles without it, the next makes it "
        "again",
        describe(delta()));

  std::string error;
  auto broken = SimModule::compile(
      "extern \"C\" __global__ void k() { oops; }\n", error, options);
  check(!broken && contains(error, "oops") && delta() == Counts{3, 6, 1},
        "a compile error with the entry is reported, not counted a fallback",
        describe(delta()));

  // Twenty entries of other checkouts, used 61 to 80 minutes ago, one
  // used a minute ago, and a folder that is no entry's: making an entry
  // keeps the 16 used last (this one, the recent one and the 14 newest of
  // the old) and leaves the other folder alone.
  fs::path root = fs::path(dir) / "pch";
  auto fake = [&](const std::string &name, std::chrono::minutes age) {
    fs::create_directories(root / name);
    std::ofstream(root / name / "include.h") << "#include \"gone.h\"\n";
    std::ofstream(root / name / "key.txt") << "old\n";
    fs::last_write_time(root / name / "key.txt",
                        fs::file_time_type::clock::now() - age);
  };
  for (int i = 0; i < 20; ++i) {
    char name[17];
    std::snprintf(name, sizeof(name), "%016x", 0xa0 + i);
    fake(name, std::chrono::minutes(61 + i));
  }
  fake("00000000000000ff", std::chrono::minutes(1));
  fake("notes", std::chrono::minutes(100));
  writeHeader(6);
  int pruned = compileValue("NF_TEST_VALUE", options);
  std::vector<std::string> kept;
  for (const auto &e : fs::directory_iterator(root))
    kept.push_back(e.path().filename().string());
  std::sort(kept.begin(), kept.end());
  std::vector<std::string> want{"00000000000000ff"};
  for (int i = 0; i < 14; ++i) {
    char name[17];
    std::snprintf(name, sizeof(name), "%016x", 0xa0 + i);
    want.push_back(name);
  }
  if (!entries.empty())
    want.push_back(entries[0].filename().string());
  want.push_back("notes");
  std::sort(want.begin(), want.end());
  std::string listing;
  for (const std::string &k : kept)
    listing += k + " ";
  check(pruned == 6 && kept == want && delta() == Counts{4, 7, 1},
        "making an entry keeps the 16 used last and other folders", listing);

  SimCompileOptions off = options;
  off.pchDirectory = "";
  int plain = compileValue("NF_TEST_VALUE", off);
  check(plain == 6 && delta() == Counts{4, 7, 1},
        "an empty folder compiles the header with the module",
        describe(delta()));
  fs::remove_all(dir);
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <test directory>\n", argv[0]);
    return 2;
  }
  testDir = argv[1];
  compileOptions.extraFlags = {"-Wall", "-Wextra", "-Werror"};
  // More flags for the simulated modules, e.g. -DNF_SIM_UCONTEXT.
  if (const char *extra = std::getenv("NF_SIM_TEST_FLAGS")) {
    std::istringstream words(extra);
    for (std::string word; words >> word;)
      compileOptions.extraFlags.push_back(word);
  }
  testReduction();
  testCopy();
  testDeadlocks();
  testHalf();
  testWarp();
  testSharedMemory();
  testTensorCores();
  testWgmma();
  testSetMaxRegisters();
  testTma();
  testWarpSpecialized();
  testMulticast();
  testClusters();
  testGridBarrier();
  testCompileError();
  testOptimizationLevel();
  testMultiplyAddsAsWritten();
  testPrecompiledHeader();
  std::printf("%s: %d failure(s)\n", numFailures ? "FAILED" : "OK",
              numFailures);
  return numFailures ? 1 : 0;
}
