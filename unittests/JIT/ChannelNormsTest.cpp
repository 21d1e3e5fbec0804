//===- ChannelNormsTest.cpp - group/instance/batch norm on the CPU -*- C++ -*-//
//
// Part of normfuse. The norms with per-channel statistics, forward and
// backward, and bias_add_grad, in both layouts and every dtype, against
// float64 references computed here; outputs are poisoned with NaN first.
// BatchNorm (training, inference, gradient) and bias_add_grad run the same
// checks on the CUDA kernels too, in the CUDA simulator (`_cudaSim`).
// The backward ops are also checked against central differences of the
// forward kernel (f64), which does not share the reference's formula.
//
// Tolerances (relative L2 against float64): f32 1e-5 (1e-3 on the
// mean-shifted data: mean 100, std 0.01), f16 1e-3 and bf16 8e-3 for
// outputs, 1e-5 for the statistics. Parameter gradients sum over whole
// images, so f16/bf16 inputs bound them by the input rounding: 2e-3 and
// 1.6e-2.
//
//===----------------------------------------------------------------------===//

#include "JITTestUtils.h"
#include "Reference.h"

using namespace nftest;
using normfuse::getDTypeName;

namespace {

/// `nf.<op> ...` with its types, as a function returning all its results.
std::string makeFunc(const std::string &name,
                     const std::vector<std::string> &args,
                     const std::vector<std::string> &results,
                     const std::string &op) {
  std::string s = "func.func @" + name + "(";
  for (size_t i = 0; i < args.size(); ++i)
    s += (i ? ", %a" : "%a") + std::to_string(i) + ": " + args[i];
  s += ") -> (";
  std::string resultList, returned;
  for (size_t i = 0; i < results.size(); ++i) {
    resultList += (i ? ", " : "") + results[i];
    returned += (i ? ", %r#" : "%r#") + std::to_string(i);
  }
  s += resultList + ") {\n  %r:" + std::to_string(results.size()) + " = " + op +
       "\n  return " + returned + " : " + resultList + "\n}\n";
  return s;
}

std::string join(const std::vector<std::string> &parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i)
    s += (i ? ", " : "") + parts[i];
  return s;
}

std::string functional(const std::vector<std::string> &args,
                       const std::vector<std::string> &results) {
  return " : (" + join(args) + ") -> (" + join(results) + ")";
}

struct ChannelCase {
  DType dtype;
  bool channelsLast;
  int64_t n, c, h, w;
  int64_t groups; // 0: InstanceNorm, -1: BatchNorm
  double mean = 0.0, std = 1.0;

  ChannelDims dims() const { return {n, c, h * w, channelsLast}; }
  std::vector<int64_t> shape() const {
    return channelsLast ? std::vector<int64_t>{n, h, w, c}
                        : std::vector<int64_t>{n, c, h, w};
  }
  int64_t statGroups() const { return groups ? groups : c; }
  std::string layoutAttr() const {
    return channelsLast ? "layout = #nf.layout<nhwc>"
                        : "layout = #nf.layout<nchw>";
  }
  DType statType() const {
    return dtype == DType::F64 ? DType::F64 : DType::F32;
  }
  double outputTolerance() const {
    if (dtype == DType::F16)
      return 1e-3;
    if (dtype == DType::BF16)
      return 8e-3;
    return mean != 0.0 ? 1e-3 : 1e-5;
  }
  double paramGradTolerance() const {
    if (dtype == DType::F16)
      return 2e-3;
    if (dtype == DType::BF16)
      return 1.6e-2;
    return 1e-5;
  }
};

std::string caseName(const testing::TestParamInfo<ChannelCase> &info) {
  const ChannelCase &c = info.param;
  std::string name = std::string(getDTypeName(c.dtype)) +
                     (c.channelsLast ? "_nhwc_" : "_nchw_") +
                     std::to_string(c.n) + "x" + std::to_string(c.c) + "x" +
                     std::to_string(c.h) + "x" + std::to_string(c.w) +
                     (c.groups > 0    ? "_g" + std::to_string(c.groups)
                      : c.groups == 0 ? "_instance"
                                      : "");
  if (c.mean != 0.0)
    name += "_meanShifted";
  return name;
}

// gtest prints parameters with these instead of their bytes.
[[maybe_unused]] void PrintTo(const ChannelCase &c, std::ostream *os) {
  *os << caseName({c, 0});
}
[[maybe_unused]] void PrintTo(Backend backend, std::ostream *os) {
  *os << (backend == Backend::CPU ? "cpu" : "cuda-sim");
}

void poison(std::initializer_list<Buffer *> buffers) {
  for (Buffer *b : buffers)
    b->fill(std::nan(""));
}

class GroupNormTest : public testing::TestWithParam<ChannelCase> {};

TEST_P(GroupNormTest, MatchesFloat64Reference) {
  const ChannelCase &c = GetParam();
  std::string x = tensorType(c.dtype, c.shape());
  std::string p = tensorType(DType::F32, {c.c});
  std::string st = tensorType(c.statType(), {c.n, c.statGroups()});
  std::string op =
      c.groups
          ? "nf.group_norm %a0 scale %a1 bias %a2 {num_groups = " +
                std::to_string(c.groups) + " : i64, " + c.layoutAttr() + "}"
          : "nf.instance_norm %a0 scale %a1 bias %a2 {" + c.layoutAttr() + "}";
  op += functional({x, p, p}, {x, st, st});
  auto kernel = compileOrFail(makeFunc("gn", {x, p, p}, {x, st, st}, op), "gn");
  ASSERT_TRUE(kernel);

  std::mt19937 rng(11);
  Buffer in(c.dtype, c.shape()), scale(DType::F32, {c.c}),
      bias(DType::F32, {c.c});
  in.fillNormal(rng, c.mean, c.std);
  scale.fillNormal(rng, 1.0, 0.5);
  bias.fillNormal(rng);
  Buffer y(c.dtype, c.shape()), mean(c.statType(), {c.n, c.statGroups()}),
      rstd(c.statType(), {c.n, c.statGroups()});
  poison({&y, &mean, &rstd});
  ASSERT_EQ(errorText(kernel->run({in.ref(), scale.ref(), bias.ref()},
                                  {y.ref(), mean.ref(), rstd.ref()})),
            "");

  std::vector<double> ry, rmean, rrstd, s = scale.toDoubles(),
                                        b = bias.toDoubles();
  groupNormReference(in.toDoubles(), c.dims(), c.statGroups(), &s, &b, 1e-5, ry,
                     rmean, rrstd);
  EXPECT_LE(relativeError(y.toDoubles(), ry), c.outputTolerance());
  EXPECT_LE(relativeError(mean.toDoubles(), rmean), 1e-5);
  EXPECT_LE(relativeError(rstd.toDoubles(), rrstd),
            c.mean != 0.0 ? 1e-3 : 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GroupNormTest,
    testing::Values(
        ChannelCase{DType::F32, false, 2, 6, 5, 7, 3},
        ChannelCase{DType::F32, true, 2, 6, 5, 7, 3},
        ChannelCase{DType::F32, false, 1, 4, 1, 1, 2},
        ChannelCase{DType::F32, true, 1, 4, 1, 1, 2},
        ChannelCase{DType::F32, true, 1, 1, 1, 1, 1},
        ChannelCase{DType::F32, false, 3, 32, 9, 11, 8},
        ChannelCase{DType::F32, true, 3, 32, 9, 11, 8},
        ChannelCase{DType::F32, true, 2, 320, 16, 16, 32},
        ChannelCase{DType::F32, true, 2, 64, 32, 32, 32, 100.0, 0.01},
        ChannelCase{DType::F32, false, 2, 64, 32, 32, 32, 100.0, 0.01},
        ChannelCase{DType::F16, true, 2, 64, 16, 16, 32},
        ChannelCase{DType::BF16, true, 2, 64, 16, 16, 32},
        ChannelCase{DType::BF16, false, 2, 64, 16, 16, 32},
        ChannelCase{DType::F64, true, 2, 12, 3, 5, 4},
        ChannelCase{DType::F32, false, 2, 7, 3, 5, 0},
        ChannelCase{DType::F32, true, 2, 7, 3, 5, 0},
        ChannelCase{DType::F32, true, 2, 33, 1, 1, 0},
        ChannelCase{DType::F16, false, 3, 16, 17, 9, 0},
        // From 8 images on, each thread normalizes whole images.
        ChannelCase{DType::F32, true, 9, 32, 9, 11, 8},
        ChannelCase{DType::F32, false, 9, 32, 9, 11, 8},
        ChannelCase{DType::F32, true, 8, 64, 32, 32, 32, 100.0, 0.01},
        ChannelCase{DType::F16, true, 8, 64, 16, 16, 32},
        ChannelCase{DType::BF16, false, 8, 64, 16, 16, 32},
        ChannelCase{DType::F32, true, 8, 7, 3, 5, 0}),
    caseName);

// Channels-last GroupNorm of 8 images or more cuts the images into one
// slice per thread and pipelines each slice (the next image's moments
// follow the normalizing pass chunk by chunk). 11 images of 13x11
// positions (chunks of 64, 64 and 15) and 40 channels (a block of 32 and
// a tail): the slices are uneven for 2, 3 and 4 threads, one image each
// for 16. Each image is computed the same way in every slicing, so the
// results are the same bits for every thread count, and match float64.
TEST(GroupNormPipelinedTest, SameBitsForEveryThreadCount) {
  const int64_t n = 11, h = 13, w = 11, c = 40, groups = 8;
  std::string x = tensorType(DType::F32, {n, h, w, c});
  std::string p = tensorType(DType::F32, {c});
  std::string st = tensorType(DType::F32, {n, groups});
  std::string op = "nf.group_norm %a0 scale %a1 bias %a2 {num_groups = 8 : "
                   "i64, layout = #nf.layout<nhwc>}" +
                   functional({x, p, p}, {x, st, st});
  auto kernel = compileOrFail(makeFunc("gn", {x, p, p}, {x, st, st}, op), "gn");
  ASSERT_TRUE(kernel);

  std::mt19937 rng(23);
  Buffer in(DType::F32, {n, h, w, c}), scale(DType::F32, {c}),
      bias(DType::F32, {c});
  in.fillNormal(rng, 3.0, 2.0);
  scale.fillNormal(rng, 1.0, 0.5);
  bias.fillNormal(rng);
  std::vector<double> ry, rmean, rrstd, s = scale.toDoubles(),
                                        b = bias.toDoubles();
  groupNormReference(in.toDoubles(), {n, c, h * w, true}, groups, &s, &b, 1e-5,
                     ry, rmean, rrstd);

  std::vector<double> first[3];
  for (int threads : {1, 2, 3, 4, 16}) {
    SCOPED_TRACE("threads = " + std::to_string(threads));
    Buffer y(DType::F32, {n, h, w, c}), mean(DType::F32, {n, groups}),
        rstd(DType::F32, {n, groups});
    poison({&y, &mean, &rstd});
    ASSERT_EQ(
        errorText(kernel->run({in.ref(), scale.ref(), bias.ref()},
                              {y.ref(), mean.ref(), rstd.ref()}, threads)),
        "");
    EXPECT_LE(relativeError(y.toDoubles(), ry), 1e-5);
    EXPECT_LE(relativeError(mean.toDoubles(), rmean), 1e-5);
    EXPECT_LE(relativeError(rstd.toDoubles(), rrstd), 1e-5);
    std::vector<double> results[3] = {y.toDoubles(), mean.toDoubles(),
                                      rstd.toDoubles()};
    for (int k = 0; k < 3; ++k) {
      if (threads == 1)
        first[k] = results[k];
      else
        EXPECT_EQ(results[k], first[k]) << "result " << k;
    }
  }
}

// In the pipelined mode a chunk after the first is summed in one pass
// around the previous chunk's mean, and falls back to the two passes of
// the other modes when that center is more than a standard deviation from
// the chunk's mean. Here each chunk of 64 positions is centred on +50 or
// -50 in turn (std 0.5), so every chunk falls back: each image of an
// 8-image run (pipelined) is then the same bits as that image alone (one
// image: chunks in parallel, always two passes).
TEST(GroupNormPipelinedTest, ChunkMeansFarApartTakeTwoPasses) {
  const int64_t n = 8, h = 13, w = 11, c = 40, groups = 8, hw = h * w;
  auto compile = [&](int64_t images) {
    std::string x = tensorType(DType::F32, {images, h, w, c});
    std::string p = tensorType(DType::F32, {c});
    std::string st = tensorType(DType::F32, {images, groups});
    std::string op = "nf.group_norm %a0 scale %a1 bias %a2 {num_groups = 8 : "
                     "i64, layout = #nf.layout<nhwc>}" +
                     functional({x, p, p}, {x, st, st});
    return compileOrFail(makeFunc("gn", {x, p, p}, {x, st, st}, op), "gn");
  };
  auto all = compile(n), one = compile(1);
  ASSERT_TRUE(all && one);

  std::mt19937 rng(29);
  std::normal_distribution<double> noise(0.0, 0.5);
  Buffer in(DType::F32, {n, h, w, c}), scale(DType::F32, {c}),
      bias(DType::F32, {c});
  for (int64_t i = 0; i < in.size(); ++i) {
    int64_t position = (i / c) % hw;
    in.set(i, ((position / 64) % 2 ? 50.0 : -50.0) + noise(rng));
  }
  scale.fillNormal(rng, 1.0, 0.5);
  bias.fillNormal(rng);
  Buffer y(DType::F32, {n, h, w, c}), mean(DType::F32, {n, groups}),
      rstd(DType::F32, {n, groups});
  poison({&y, &mean, &rstd});
  ASSERT_EQ(errorText(all->run({in.ref(), scale.ref(), bias.ref()},
                               {y.ref(), mean.ref(), rstd.ref()})),
            "");
  std::vector<double> ry, rmean, rrstd, s = scale.toDoubles(),
                                        b = bias.toDoubles();
  groupNormReference(in.toDoubles(), {n, c, hw, true}, groups, &s, &b, 1e-5, ry,
                     rmean, rrstd);
  EXPECT_LE(relativeError(y.toDoubles(), ry), 1e-5);

  for (int64_t m = 0; m < n; ++m) {
    SCOPED_TRACE("image " + std::to_string(m));
    Buffer image(DType::F32, {1, h, w, c}), ym(DType::F32, {1, h, w, c}),
        meanM(DType::F32, {1, groups}), rstdM(DType::F32, {1, groups});
    for (int64_t i = 0; i < image.size(); ++i)
      image.set(i, in.get(m * image.size() + i));
    poison({&ym, &meanM, &rstdM});
    ASSERT_EQ(errorText(one->run({image.ref(), scale.ref(), bias.ref()},
                                 {ym.ref(), meanM.ref(), rstdM.ref()})),
              "");
    int64_t diffs = 0;
    for (int64_t i = 0; i < ym.size(); ++i)
      diffs += ym.get(i) != y.get(m * ym.size() + i);
    for (int64_t g = 0; g < groups; ++g)
      diffs += (meanM.get(g) != mean.get(m * groups + g)) +
               (rstdM.get(g) != rstd.get(m * groups + g));
    EXPECT_EQ(diffs, 0);
  }
}

class BatchNormTest
    : public testing::TestWithParam<std::tuple<ChannelCase, Backend>> {};

TEST_P(BatchNormTest, TrainingMatchesPyTorchSemantics) {
  const ChannelCase &c = std::get<0>(GetParam());
  Backend backend = std::get<1>(GetParam());
  const double momentum = 0.25;
  std::string x = tensorType(c.dtype, c.shape());
  std::string p = tensorType(DType::F32, {c.c});
  std::string st = tensorType(c.statType(), {c.c});
  std::string op = "nf.batch_norm_training %a0 scale %a1 bias %a2 running(%a3, "
                   "%a4) {momentum = 0.25, " +
                   c.layoutAttr() + "}" +
                   functional({x, p, p, st, st}, {x, st, st, st, st});
  auto kernel = compileFor(
      backend, makeFunc("bn", {x, p, p, st, st}, {x, st, st, st, st}, op),
      "bn");
  ASSERT_TRUE(kernel);

  std::mt19937 rng(5);
  Buffer in(c.dtype, c.shape()), scale(DType::F32, {c.c}),
      bias(DType::F32, {c.c}), runMean(c.statType(), {c.c}),
      runVar(c.statType(), {c.c});
  in.fillNormal(rng, c.mean, c.std);
  scale.fillNormal(rng, 1.0, 0.5);
  bias.fillNormal(rng);
  runMean.fillNormal(rng);
  for (int64_t i = 0; i < c.c; ++i)
    runVar.set(i, 0.5 + 0.1 * i);
  Buffer y(c.dtype, c.shape()), mean(c.statType(), {c.c}),
      rstd(c.statType(), {c.c}), newMean(c.statType(), {c.c}),
      newVar(c.statType(), {c.c});
  poison({&y, &mean, &rstd, &newMean, &newVar});
  ASSERT_EQ(
      errorText(kernel->run(
          {in.ref(), scale.ref(), bias.ref(), runMean.ref(), runVar.ref()},
          {y.ref(), mean.ref(), rstd.ref(), newMean.ref(), newVar.ref()})),
      "");

  std::vector<double> ry, rmean, rrstd, rnm, rnv, s = scale.toDoubles(),
                                                  b = bias.toDoubles();
  batchNormTrainingReference(in.toDoubles(), c.dims(), &s, &b, 1e-5, momentum,
                             runMean.toDoubles(), runVar.toDoubles(), ry, rmean,
                             rrstd, rnm, rnv);
  EXPECT_LE(relativeError(y.toDoubles(), ry), c.outputTolerance());
  EXPECT_LE(relativeError(mean.toDoubles(), rmean), 1e-5);
  EXPECT_LE(relativeError(rstd.toDoubles(), rrstd), 1e-5);
  EXPECT_LE(relativeError(newMean.toDoubles(), rnm), 1e-5);
  EXPECT_LE(relativeError(newVar.toDoubles(), rnv), 1e-5);
}

TEST_P(BatchNormTest, InferenceUsesRunningStatistics) {
  const ChannelCase &c = std::get<0>(GetParam());
  Backend backend = std::get<1>(GetParam());
  std::string x = tensorType(c.dtype, c.shape());
  std::string p = tensorType(DType::F32, {c.c});
  std::string st = tensorType(c.statType(), {c.c});
  std::string op =
      "nf.batch_norm_inference %a0 scale %a1 bias %a2 running(%a3, "
      "%a4) {epsilon = 1.0e-3, " +
      c.layoutAttr() + "}" + functional({x, p, p, st, st}, {x});
  auto kernel =
      compileFor(backend, makeFunc("bni", {x, p, p, st, st}, {x}, op), "bni");
  ASSERT_TRUE(kernel);

  std::mt19937 rng(6);
  Buffer in(c.dtype, c.shape()), scale(DType::F32, {c.c}),
      bias(DType::F32, {c.c}), runMean(c.statType(), {c.c}),
      runVar(c.statType(), {c.c});
  in.fillNormal(rng);
  scale.fillNormal(rng, 1.0, 0.5);
  bias.fillNormal(rng);
  runMean.fillNormal(rng);
  for (int64_t i = 0; i < c.c; ++i)
    runVar.set(i, 0.5 + 0.1 * i);
  Buffer y(c.dtype, c.shape());
  poison({&y});
  ASSERT_EQ(errorText(kernel->run({in.ref(), scale.ref(), bias.ref(),
                                   runMean.ref(), runVar.ref()},
                                  {y.ref()})),
            "");
  ChannelDims d = c.dims();
  std::vector<double> ref(d.size()), xv = in.toDoubles();
  for (int64_t m = 0; m < d.n; ++m)
    for (int64_t ch = 0; ch < d.c; ++ch)
      for (int64_t s = 0; s < d.s; ++s) {
        int64_t at = d.at(m, ch, s);
        ref[at] = (xv[at] - runMean.get(ch)) /
                      std::sqrt(runVar.get(ch) + 1e-3) * scale.get(ch) +
                  bias.get(ch);
      }
  EXPECT_LE(relativeError(y.toDoubles(), ref), c.outputTolerance());
}

std::vector<ChannelCase> batchNormCases() {
  return {ChannelCase{DType::F32, false, 4, 6, 5, 7, -1},
          ChannelCase{DType::F32, true, 4, 6, 5, 7, -1},
          ChannelCase{DType::F32, true, 2, 3, 1, 1, -1},
          ChannelCase{DType::F32, false, 8, 64, 16, 16, -1},
          ChannelCase{DType::F32, true, 8, 64, 16, 16, -1},
          ChannelCase{DType::F32, true, 4, 16, 32, 32, -1, 100.0, 0.01},
          ChannelCase{DType::F32, false, 4, 16, 32, 32, -1, 100.0, 0.01},
          ChannelCase{DType::F16, true, 4, 40, 9, 9, -1},
          ChannelCase{DType::BF16, false, 4, 40, 9, 9, -1},
          // On the GPU: 70001 positions of 3 channels are two trips of the
          // largest grid (1056 blocks of 64 positions), the second partial,
          // so the parts' counts differ.
          ChannelCase{DType::F32, true, 1, 3, 1, 70001, -1}};
}

std::string backendCaseName(
    const testing::TestParamInfo<std::tuple<ChannelCase, Backend>> &info) {
  return caseName({std::get<0>(info.param), info.index}) +
         backendSuffix(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Shapes, BatchNormTest,
                         testing::Combine(testing::ValuesIn(batchNormCases()),
                                          testing::Values(Backend::CPU,
                                                          Backend::CUDASim)),
                         backendCaseName);

/// The gradient op of a case: group_norm_grad, instance_norm_grad, or with
/// `batch` batch_norm_grad.
std::string gradOp(const ChannelCase &c, bool batch, const std::string &x,
                   const std::string &st, const std::string &p) {
  std::string name = batch      ? "nf.batch_norm_grad"
                     : c.groups ? "nf.group_norm_grad"
                                : "nf.instance_norm_grad";
  std::string attrs = "{" + c.layoutAttr();
  if (!batch && c.groups)
    attrs += ", num_groups = " + std::to_string(c.groups) + " : i64";
  return name + " %a0, %a1, %a2, %a3 scale %a4 " + attrs + "}" +
         functional({x, x, st, st, p}, {x, p, p});
}

class ChannelNormGradTest
    : public testing::TestWithParam<std::tuple<ChannelCase, bool, Backend>> {};

TEST_P(ChannelNormGradTest, MatchesFloat64Reference) {
  auto [c, batch, backend] = GetParam();
  std::string x = tensorType(c.dtype, c.shape());
  std::string p = tensorType(DType::F32, {c.c});
  std::vector<int64_t> statShape =
      batch ? std::vector<int64_t>{c.c}
            : std::vector<int64_t>{c.n, c.statGroups()};
  std::string st = tensorType(c.statType(), statShape);
  auto kernel = compileFor(backend,
                           makeFunc("grad", {x, x, st, st, p}, {x, p, p},
                                    gradOp(c, batch, x, st, p)),
                           "grad");
  ASSERT_TRUE(kernel);

  std::mt19937 rng(21);
  Buffer dy(c.dtype, c.shape()), in(c.dtype, c.shape()),
      scale(DType::F32, {c.c}), mean(c.statType(), statShape),
      rstd(c.statType(), statShape);
  dy.fillNormal(rng);
  in.fillNormal(rng, c.mean, c.std);
  scale.fillNormal(rng, 1.0, 0.5);
  // The saved statistics are those of the forward op.
  std::vector<double> y, rmean, rrstd, unused1, unused2;
  if (batch)
    batchNormTrainingReference(in.toDoubles(), c.dims(), nullptr, nullptr, 1e-5,
                               0.1, std::vector<double>(c.c),
                               std::vector<double>(c.c), y, rmean, rrstd,
                               unused1, unused2);
  else
    groupNormReference(in.toDoubles(), c.dims(), c.statGroups(), nullptr,
                       nullptr, 1e-5, y, rmean, rrstd);
  for (size_t i = 0; i < rmean.size(); ++i) {
    mean.set(i, rmean[i]);
    rstd.set(i, rrstd[i]);
  }
  Buffer dx(c.dtype, c.shape()), dscale(DType::F32, {c.c}),
      dbias(DType::F32, {c.c});
  poison({&dx, &dscale, &dbias});
  ASSERT_EQ(errorText(kernel->run(
                {dy.ref(), in.ref(), mean.ref(), rstd.ref(), scale.ref()},
                {dx.ref(), dscale.ref(), dbias.ref()})),
            "");

  std::vector<double> rdx, rds, rdb, s = scale.toDoubles();
  channelNormGradReference(
      dy.toDoubles(), in.toDoubles(), c.dims(), batch ? c.c : c.statGroups(),
      batch, mean.toDoubles(), rstd.toDoubles(), &s, rdx, rds, rdb);
  EXPECT_LE(relativeError(dx.toDoubles(), rdx), c.outputTolerance());
  EXPECT_LE(relativeError(dscale.toDoubles(), rds), c.paramGradTolerance());
  EXPECT_LE(relativeError(dbias.toDoubles(), rdb), c.paramGradTolerance());
}

std::string gradCaseName(
    const testing::TestParamInfo<std::tuple<ChannelCase, bool, Backend>>
        &info) {
  auto [c, batch, backend] = info.param;
  std::string base = caseName({c, info.index});
  return (batch ? base + "_batchNormGrad" : base) + backendSuffix(backend);
}

std::vector<ChannelCase> gradCases() {
  return {ChannelCase{DType::F32, false, 2, 6, 5, 7, 3},
          ChannelCase{DType::F32, true, 2, 6, 5, 7, 3},
          ChannelCase{DType::F32, true, 3, 32, 9, 11, 8},
          ChannelCase{DType::F32, false, 3, 32, 9, 11, 0},
          ChannelCase{DType::F32, true, 2, 7, 3, 5, 0},
          ChannelCase{DType::F32, true, 2, 64, 32, 32, 32, 100.0, 0.01},
          ChannelCase{DType::F16, true, 2, 64, 16, 16, 32},
          ChannelCase{DType::BF16, false, 2, 64, 16, 16, 32}};
}

INSTANTIATE_TEST_SUITE_P(Shapes, ChannelNormGradTest,
                         testing::Combine(testing::ValuesIn(gradCases()),
                                          testing::Bool(),
                                          testing::Values(Backend::CPU)),
                         gradCaseName);
// The same on the CUDA kernels: batch_norm_grad, and group and instance
// norm gradients (both layouts, groups of 1 to 8 channels, a mean-shifted
// input, f16 and bf16).
INSTANTIATE_TEST_SUITE_P(CudaSim, ChannelNormGradTest,
                         testing::Combine(testing::ValuesIn(gradCases()),
                                          testing::Bool(),
                                          testing::Values(Backend::CUDASim)),
                         gradCaseName);

// Shapes that reach each path of the CUDA group norm gradient's schedule
// (LowerGroupNormGrads.cpp): NHWC with 40000 positions an image, more than
// one trip of each image's share of the grid (528 blocks of 64 positions),
// in 2-lane f16 vectors that cross groups of 3 channels; NCHW with each
// (image, channel)'s 1023 positions cut into 4 parts, the last one
// partial, and one group of 5 channels; batch 1 with 32 groups of 2
// channels in 4-lane vectors.
std::vector<ChannelCase> gpuGroupGradCases() {
  return {ChannelCase{DType::F16, true, 2, 6, 1, 40000, 2},
          ChannelCase{DType::F32, false, 2, 5, 33, 31, 1},
          ChannelCase{DType::F32, true, 1, 64, 16, 16, 32}};
}

INSTANTIATE_TEST_SUITE_P(
    CudaSimSchedules, ChannelNormGradTest,
    testing::Combine(testing::ValuesIn(gpuGroupGradCases()),
                     testing::Values(false), testing::Values(Backend::CUDASim)),
    gradCaseName);

/// The loss sum(dy * group_norm(x)) differentiated numerically through the
/// forward kernel (f64) agrees with group_norm_grad's dx, dscale and dbias.
TEST(ChannelNormGradTest, GroupNormGradMatchesCentralDifferences) {
  const ChannelCase c{DType::F64, true, 2, 6, 2, 3, 3};
  std::string x = tensorType(DType::F64, c.shape());
  std::string p = tensorType(DType::F64, {c.c});
  std::string st = tensorType(DType::F64, {c.n, c.groups});
  std::string fwdOp = "nf.group_norm %a0 scale %a1 bias %a2 {num_groups = 3 : "
                      "i64, " +
                      c.layoutAttr() + "}" + functional({x, p, p}, {x, st, st});
  auto forward =
      compileOrFail(makeFunc("fwd", {x, p, p}, {x, st, st}, fwdOp), "fwd");
  auto backward = compileOrFail(
      makeFunc("bwd", {x, x, st, st, p}, {x, p, p}, gradOp(c, false, x, st, p)),
      "bwd");
  ASSERT_TRUE(forward && backward);

  std::mt19937 rng(3);
  Buffer in(DType::F64, c.shape()), scale(DType::F64, {c.c}),
      bias(DType::F64, {c.c}), dy(DType::F64, c.shape());
  in.fillNormal(rng);
  scale.fillNormal(rng, 1.0, 0.5);
  bias.fillNormal(rng);
  dy.fillNormal(rng);
  Buffer y(DType::F64, c.shape()), mean(DType::F64, {c.n, c.groups}),
      rstd(DType::F64, {c.n, c.groups});
  auto loss = [&]() {
    EXPECT_EQ(errorText(forward->run({in.ref(), scale.ref(), bias.ref()},
                                     {y.ref(), mean.ref(), rstd.ref()})),
              "");
    double l = 0;
    for (int64_t i = 0; i < y.size(); ++i)
      l += dy.get(i) * y.get(i);
    return l;
  };
  auto numeric = [&](Buffer &param) {
    std::vector<double> grad(param.size());
    const double h = 1e-6;
    for (int64_t i = 0; i < param.size(); ++i) {
      double v = param.get(i);
      param.set(i, v + h);
      double up = loss();
      param.set(i, v - h);
      double down = loss();
      param.set(i, v);
      grad[i] = (up - down) / (2 * h);
    }
    return grad;
  };
  std::vector<double> ndx = numeric(in), nds = numeric(scale),
                      ndb = numeric(bias);
  loss(); // the saved statistics of the unperturbed input
  Buffer dx(DType::F64, c.shape()), dscale(DType::F64, {c.c}),
      dbias(DType::F64, {c.c});
  ASSERT_EQ(errorText(backward->run(
                {dy.ref(), in.ref(), mean.ref(), rstd.ref(), scale.ref()},
                {dx.ref(), dscale.ref(), dbias.ref()})),
            "");
  EXPECT_LE(relativeError(dx.toDoubles(), ndx), 1e-7);
  EXPECT_LE(relativeError(dscale.toDoubles(), nds), 1e-7);
  EXPECT_LE(relativeError(dbias.toDoubles(), ndb), 1e-7);
}

struct BiasGradCase {
  DType dtype;
  bool channelsLast;
  std::vector<int64_t> shape;
};

[[maybe_unused]] void PrintTo(const BiasGradCase &c, std::ostream *os) {
  *os << getDTypeName(c.dtype) << (c.channelsLast ? " nhwc" : " nchw");
  for (int64_t d : c.shape)
    *os << " " << d;
}

class BiasAddGradTest
    : public testing::TestWithParam<std::tuple<BiasGradCase, Backend>> {};

TEST_P(BiasAddGradTest, SumsEverythingButTheChannelAxis) {
  const BiasGradCase &c = std::get<0>(GetParam());
  Backend backend = std::get<1>(GetParam());
  int64_t axis = c.channelsLast ? c.shape.size() - 1 : 1;
  int64_t channels = c.shape[axis];
  std::string dyType = tensorType(c.dtype, c.shape);
  std::string gType = tensorType(DType::F32, {channels});
  std::string op = std::string("nf.bias_add_grad %a0 {layout = #nf.layout<") +
                   (c.channelsLast ? "nhwc" : "nchw") + ">} : " + dyType +
                   " -> " + gType;
  auto kernel =
      compileFor(backend, makeFunc("bg", {dyType}, {gType}, op), "bg");
  ASSERT_TRUE(kernel);

  std::mt19937 rng(8);
  Buffer dy(c.dtype, c.shape), grad(DType::F32, {channels});
  dy.fillNormal(rng, 0.5);
  grad.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({dy.ref()}, {grad.ref()})), "");

  std::vector<double> ref(channels, 0.0);
  int64_t inner = 1;
  for (size_t i = axis + 1; i < c.shape.size(); ++i)
    inner *= c.shape[i];
  for (int64_t i = 0; i < dy.size(); ++i)
    ref[(i / inner) % channels] += dy.get(i);
  EXPECT_LE(relativeError(grad.toDoubles(), ref), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, BiasAddGradTest,
    testing::Combine(
        testing::Values(BiasGradCase{DType::F32, true, {6, 7}},
                        BiasGradCase{DType::F32, false, {6, 7}},
                        BiasGradCase{DType::F32, true, {2, 5, 3, 33}},
                        BiasGradCase{DType::F32, false, {2, 33, 5, 3}},
                        BiasGradCase{DType::BF16, true, {4, 128, 768}},
                        BiasGradCase{DType::F16, false, {3, 16, 1, 1}},
                        // On the GPU: 70001 positions of 3 channels are more
                        // than one trip of the largest grid (1056 blocks of
                        // 64 positions); 5 x 1023 elements a channel are 20
                        // parts, the last one partial.
                        BiasGradCase{DType::F32, true, {70001, 3}},
                        BiasGradCase{DType::F32, false, {5, 7, 33, 31}},
                        // No images: every channel sums to 0.
                        BiasGradCase{DType::F32, false, {0, 5, 3, 2}},
                        BiasGradCase{DType::F32, true, {0, 3, 2, 5}}),
        testing::Values(Backend::CPU, Backend::CUDASim)),
    [](const testing::TestParamInfo<std::tuple<BiasGradCase, Backend>> &info) {
      return std::to_string(info.index) +
             backendSuffix(std::get<1>(info.param));
    });

} // namespace
