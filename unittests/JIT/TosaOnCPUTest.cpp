//===- TosaOnCPUTest.cpp - TOSA functions through the CPU JIT ---*- C++ -*-===//
//
// Part of normfuse. Runs functions written in TOSA ops (the decomposed
// GELU, SiLU, LayerNorm, GroupNorm, bias-add and ReLU chains that normfuse
// raises to nf ops, softmax, transpose, matmul, casts), arith/math ops on
// tensors, and a function mixing TOSA and nf ops through the same JIT as nf
// functions, and compares with float64 references computed here. Each also
// runs on the CUDA kernels in the simulator, op by op (linalg kernels; the
// convolution and the matmul on the nf product kernels) and fused. Outputs
// are poisoned with NaN first, so an element left unwritten fails the test.
//
// Tolerances (relative L2 error against float64 on the rounded inputs):
// f32 1e-5 (every op rounds to f32; tanh, erf and exp are polynomial
// approximations; measured at most 2.4e-7, softmax 1.6e-6); f16 1e-3
// (every op of a chain rounds to f16; measured at most 3.7e-4).
//
//===----------------------------------------------------------------------===//

#include "JITTestUtils.h"
#include "Reference.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

using namespace nftest;

namespace {

double tolerance(DType dtype) { return dtype == DType::F16 ? 1e-3 : 1e-5; }

/// The IR of `text` for one element type and input shape: {T} is the input
/// tensor type, {E} its element type, {C} the same rank of 1s (constants),
/// {S} the input with its last dimension 1 (row statistics), {V} a 1-D
/// tensor of the last dimension, {R} the rank-1s with the last dimension
/// (a reshaped {V}), and {RS} the shape of {R} as a new_shape array.
std::string instantiate(std::string text, DType dtype,
                        const std::vector<int64_t> &shape) {
  std::vector<int64_t> ones(shape.size(), 1), rows = shape, row = ones;
  rows.back() = 1;
  row.back() = shape.back();
  std::string rowShape;
  for (int64_t d : row)
    rowShape += (rowShape.empty() ? "" : ", ") + std::to_string(d);
  const std::pair<std::string, std::string> substitutions[] = {
      {"{T}", tensorType(dtype, shape)},
      {"{E}", normfuse::getDTypeName(dtype)},
      {"{C}", tensorType(dtype, ones)},
      {"{S}", tensorType(dtype, rows)},
      {"{V}", tensorType(dtype, {shape.back()})},
      {"{RS}", rowShape},
      {"{R}", tensorType(dtype, row)},
  };
  for (const auto &[key, value] : substitutions)
    for (size_t at = text.find(key); at != std::string::npos;
         at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  return text;
}

std::string shapeName(const std::vector<int64_t> &shape) {
  std::string name;
  for (int64_t d : shape)
    name += (name.empty() ? "" : "x") + std::to_string(d);
  return name;
}

double geluTanh(double x) {
  return 0.5 * x *
         (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
double geluErf(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double silu(double x) { return x / (1.0 + std::exp(-x)); }
double relu(double x) { return x > 0 ? x : 0.0; }

/// A pointwise activation written as a chain of TOSA ops on %x.
struct ChainCase {
  std::string name;
  std::string ir; // func.func @f(%x: {T}) -> {T}
  std::function<double(double)> ref;
};

std::vector<ChainCase> chains() {
  return {
      {"geluTanh", R"(
func.func @f(%x: {T}) -> {T} {
  %half = "tosa.const"() <{value = dense<0.5> : {C}}> : () -> {C}
  %one = "tosa.const"() <{value = dense<1.0> : {C}}> : () -> {C}
  %three = "tosa.const"() <{value = dense<3.0> : {C}}> : () -> {C}
  %c = "tosa.const"() <{value = dense<0.044715> : {C}}> : () -> {C}
  %k = "tosa.const"() <{value = dense<0.7978845608028654> : {C}}> : () -> {C}
  %x3 = tosa.pow %x, %three : ({T}, {C}) -> {T}
  %cx3 = tosa.mul %x3, %c {shift = 0 : i8} : ({T}, {C}) -> {T}
  %inner = tosa.add %x, %cx3 : ({T}, {T}) -> {T}
  %scaled = tosa.mul %inner, %k {shift = 0 : i8} : ({T}, {C}) -> {T}
  %t = tosa.tanh %scaled : ({T}) -> {T}
  %t1 = tosa.add %t, %one : ({T}, {C}) -> {T}
  %hx = tosa.mul %x, %half {shift = 0 : i8} : ({T}, {C}) -> {T}
  %y = tosa.mul %hx, %t1 {shift = 0 : i8} : ({T}, {T}) -> {T}
  return %y : {T}
}
)",
       geluTanh},
      {"geluErf", R"(
func.func @f(%x: {T}) -> {T} {
  %half = "tosa.const"() <{value = dense<0.5> : {C}}> : () -> {C}
  %one = "tosa.const"() <{value = dense<1.0> : {C}}> : () -> {C}
  %rsqrt2 = "tosa.const"() <{value = dense<0.7071067811865476> : {C}}> : () -> {C}
  %xs = tosa.mul %x, %rsqrt2 {shift = 0 : i8} : ({T}, {C}) -> {T}
  %e = tosa.erf %xs : ({T}) -> {T}
  %e1 = tosa.add %e, %one : ({T}, {C}) -> {T}
  %hx = tosa.mul %x, %half {shift = 0 : i8} : ({T}, {C}) -> {T}
  %y = tosa.mul %hx, %e1 {shift = 0 : i8} : ({T}, {T}) -> {T}
  return %y : {T}
}
)",
       geluErf},
      {"silu", R"(
func.func @f(%x: {T}) -> {T} {
  %s = tosa.sigmoid %x : ({T}) -> {T}
  %y = tosa.mul %x, %s {shift = 0 : i8} : ({T}, {T}) -> {T}
  return %y : {T}
}
)",
       silu},
      {"siluExpReciprocal", R"(
func.func @f(%x: {T}) -> {T} {
  %one = "tosa.const"() <{value = dense<1.0> : {C}}> : () -> {C}
  %n = tosa.negate %x : ({T}) -> {T}
  %e = tosa.exp %n : ({T}) -> {T}
  %d = tosa.add %e, %one : ({T}, {C}) -> {T}
  %r = tosa.reciprocal %d : ({T}) -> {T}
  %y = tosa.mul %x, %r {shift = 0 : i8} : ({T}, {T}) -> {T}
  return %y : {T}
}
)",
       silu},
      {"reluClamp", R"(
func.func @f(%x: {T}) -> {T} {
  %y = tosa.clamp %x {min_fp = 0.0 : f32, max_fp = 3.4028235e+38 : f32, min_int = 0 : i64, max_int = 2147483647 : i64} : ({T}) -> {T}
  return %y : {T}
}
)",
       relu},
      {"reluMaximum", R"(
func.func @f(%x: {T}) -> {T} {
  %zero = "tosa.const"() <{value = dense<0.0> : {C}}> : () -> {C}
  %y = tosa.maximum %x, %zero : ({T}, {C}) -> {T}
  return %y : {T}
}
)",
       relu},
      {"tanhOfArithOnTensors", R"(
func.func @f(%x: {T}) -> {T} {
  %0 = arith.mulf %x, %x : {T}
  %1 = math.tanh %0 : {T}
  %y = arith.addf %1, %x : {T}
  return %y : {T}
}
)",
       [](double x) { return std::tanh(x * x) + x; }},
  };
}

using ChainParam = std::tuple<int, DType, std::vector<int64_t>, Run>;

class TosaChainTest : public testing::TestWithParam<ChainParam> {};

TEST_P(TosaChainTest, MatchesFloat64Reference) {
  auto [index, dtype, shape, run] = GetParam();
  ChainCase c = chains()[index];
  std::string ir = instantiate(c.ir, dtype, shape);
  auto kernel = compileForRun(run, ir, "f");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(7);
  Buffer x(dtype, shape), y(dtype, shape);
  x.fillNormal(rng, 0.0, 3.0);
  Buffer before = x;
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref()}, {y.ref()})), "");
  std::vector<double> ref = x.toDoubles();
  for (double &v : ref)
    v = c.ref(v);
  EXPECT_LE(relativeError(y.toDoubles(), ref), tolerance(dtype)) << ir;
  // linalg ops may name an input as their output: the caller's input must
  // still be intact.
  EXPECT_EQ(x.bytes, before.bytes);
}

std::string chainName(const testing::TestParamInfo<ChainParam> &info) {
  auto [index, dtype, shape, run] = info.param;
  const char *suffix = run == Run::CPU            ? ""
                       : run == Run::CUDASimFused ? "_cudaSim_fused"
                                                  : "_cudaSim";
  return chains()[index].name + "_" + normfuse::getDTypeName(dtype) + "_" +
         shapeName(shape) + suffix;
}

/// The tests below run on the CPU op by op, and on the CUDA kernels in the
/// simulator op by op and fused.
class TosaBiasAddTest : public testing::TestWithParam<Run> {};
class TosaMixedWithNFTest : public testing::TestWithParam<Run> {};
class TosaCastTest : public testing::TestWithParam<Run> {};
class TosaGroupNormTest : public testing::TestWithParam<Run> {};
class TosaSoftmaxTest : public testing::TestWithParam<Run> {};
class TosaSliceTest : public testing::TestWithParam<Run> {};
class TosaPadConcatTest : public testing::TestWithParam<Run> {};
class TosaGatherTest : public testing::TestWithParam<Run> {};
class TosaConvTest : public testing::TestWithParam<Run> {};
class TosaMatmulTest : public testing::TestWithParam<Run> {};

const std::vector<int64_t> kRows = {4, 768};
const std::vector<int64_t> kImages = {2, 16, 64};
const std::vector<int64_t> kOdd = {3, 7, 1537};
// Rows longer than a warp reduces alone on the CUDA kernels.
const std::vector<int64_t> kLongRows = {2, 4099};

INSTANTIATE_TEST_SUITE_P(F32, TosaChainTest,
                         testing::Combine(testing::Range(0, 7),
                                          testing::Values(DType::F32),
                                          testing::Values(kRows, kImages, kOdd),
                                          testing::Values(Run::CPU)),
                         chainName);
INSTANTIATE_TEST_SUITE_P(F16, TosaChainTest,
                         testing::Combine(testing::Range(0, 7),
                                          testing::Values(DType::F16),
                                          testing::Values(kRows, kOdd),
                                          testing::Values(Run::CPU)),
                         chainName);
// On the CUDA kernels: odd sizes reach the one-lane path, 4x768 the
// vectors; f16 the rounding of each op's result.
INSTANTIATE_TEST_SUITE_P(
    CudaSim, TosaChainTest,
    testing::Combine(testing::Range(0, 7),
                     testing::Values(DType::F32, DType::F16),
                     testing::Values(kRows, kOdd),
                     testing::Values(Run::CUDASimOpByOp, Run::CUDASimFused)),
    chainName);

/// Runs a norm kernel (x, scale, bias) -> y on a scale of N(1, 0.5) and a
/// bias of N(0, 1) values, with y poisoned first; "" or the error.
std::string runNorm(normfuse::jit::Kernel &kernel, std::mt19937 &rng, Buffer &x,
                    Buffer &scale, Buffer &bias, Buffer &y) {
  scale.fillNormal(rng, 1.0, 0.5);
  bias.fillNormal(rng);
  y.fill(std::nan(""));
  return errorText(kernel.run({x.ref(), scale.ref(), bias.ref()}, {y.ref()}));
}

/// LayerNorm over the last axis as a framework exports it: mean and
/// variance by reduce_sum times 1/N, rsqrt, then a scale reshaped from 1-D
/// and a bias given with leading 1s.
const char *kLayerNormChain = R"(
func.func @ln(%x: {T}, %scale: {V}, %bias: {R}) -> {T} {
  %invn = "tosa.const"() <{value = dense<INV_N> : {C}}> : () -> {C}
  %eps = "tosa.const"() <{value = dense<1.0e-5> : {C}}> : () -> {C}
  %sum = tosa.reduce_sum %x {axis = LAST : i32} : ({T}) -> {S}
  %mean = tosa.mul %sum, %invn {shift = 0 : i8} : ({S}, {C}) -> {S}
  %d = tosa.sub %x, %mean : ({T}, {S}) -> {T}
  %d2 = tosa.mul %d, %d {shift = 0 : i8} : ({T}, {T}) -> {T}
  %ss = tosa.reduce_sum %d2 {axis = LAST : i32} : ({T}) -> {S}
  %var = tosa.mul %ss, %invn {shift = 0 : i8} : ({S}, {C}) -> {S}
  %ve = tosa.add %var, %eps : ({S}, {C}) -> {S}
  %rstd = tosa.rsqrt %ve : ({S}) -> {S}
  %n = tosa.mul %d, %rstd {shift = 0 : i8} : ({T}, {S}) -> {T}
  %s = tosa.reshape %scale {new_shape = array<i64: {RS}>} : ({V}) -> {R}
  %ns = tosa.mul %n, %s {shift = 0 : i8} : ({T}, {R}) -> {T}
  %y = tosa.add %ns, %bias : ({T}, {R}) -> {T}
  return %y : {T}
}
)";

class TosaLayerNormTest
    : public testing::TestWithParam<std::tuple<std::vector<int64_t>, Run>> {};

TEST_P(TosaLayerNormTest, MatchesFloat64Reference) {
  auto [shape, run] = GetParam();
  int64_t cols = shape.back();
  std::string ir = instantiate(kLayerNormChain, DType::F32, shape);
  auto replace = [&](const std::string &key, const std::string &value) {
    for (size_t at = ir.find(key); at != std::string::npos; at = ir.find(key))
      ir.replace(at, key.size(), value);
  };
  char invN[32];
  std::snprintf(invN, sizeof(invN), "%.17g", 1.0 / cols);
  replace("INV_N", invN);
  replace("LAST", std::to_string(shape.size() - 1));
  auto kernel = compileForRun(run, ir, "ln");
  ASSERT_TRUE(kernel);

  std::mt19937 rng(3);
  std::vector<int64_t> row(shape.size(), 1);
  row.back() = cols;
  Buffer x(DType::F32, shape), scale(DType::F32, {cols}), bias(DType::F32, row),
      y(DType::F32, shape);
  x.fillNormal(rng, 0.5, 2.0);
  ASSERT_EQ(runNorm(*kernel, rng, x, scale, bias, y), "");

  std::vector<double> s = scale.toDoubles(), b = bias.toDoubles();
  std::vector<double> ref, mean, rstd;
  layerNormReference(x.toDoubles(), cols, &s, &b, 1e-5, ref, mean, rstd);
  EXPECT_LE(relativeError(y.toDoubles(), ref), tolerance(DType::F32)) << ir;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, TosaLayerNormTest,
    testing::Combine(testing::Values(kRows, kImages, kOdd, kLongRows),
                     testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                     Run::CUDASimFused)),
    [](const auto &info) {
      return shapeName(std::get<0>(info.param)) + "_" +
             runName(testing::TestParamInfo<Run>(std::get<1>(info.param),
                                                 info.index));
    });

/// GroupNorm on NCHW as a framework exports it: x reshaped to (N, G,
/// C/G * H * W), statistics over the last axis, reshaped back, then a
/// per-channel scale and bias reshaped from 1-D to (1, C, 1, 1).
TEST_P(TosaGroupNormTest, ReshapeToGroupsMatchesFloat64Reference) {
  const int64_t n = 2, c = 6, h = 5, w = 7, groups = 3;
  const int64_t perGroup = c / groups * h * w;
  std::string ir = R"(
func.func @gn(%x: tensor<2x6x5x7xf32>, %scale: tensor<6xf32>, %bias: tensor<6xf32>) -> tensor<2x6x5x7xf32> {
  %invn = "tosa.const"() <{value = dense<0.014285714285714285> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() <{value = dense<1.0e-5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %g = tosa.reshape %x {new_shape = array<i64: 2, 3, 70>} : (tensor<2x6x5x7xf32>) -> tensor<2x3x70xf32>
  %sum = tosa.reduce_sum %g {axis = 2 : i32} : (tensor<2x3x70xf32>) -> tensor<2x3x1xf32>
  %mean = tosa.mul %sum, %invn {shift = 0 : i8} : (tensor<2x3x1xf32>, tensor<1x1x1xf32>) -> tensor<2x3x1xf32>
  %d = tosa.sub %g, %mean : (tensor<2x3x70xf32>, tensor<2x3x1xf32>) -> tensor<2x3x70xf32>
  %d2 = tosa.mul %d, %d {shift = 0 : i8} : (tensor<2x3x70xf32>, tensor<2x3x70xf32>) -> tensor<2x3x70xf32>
  %ss = tosa.reduce_sum %d2 {axis = 2 : i32} : (tensor<2x3x70xf32>) -> tensor<2x3x1xf32>
  %var = tosa.mul %ss, %invn {shift = 0 : i8} : (tensor<2x3x1xf32>, tensor<1x1x1xf32>) -> tensor<2x3x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x3x1xf32>, tensor<1x1x1xf32>) -> tensor<2x3x1xf32>
  %rstd = tosa.rsqrt %ve : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %ng = tosa.mul %d, %rstd {shift = 0 : i8} : (tensor<2x3x70xf32>, tensor<2x3x1xf32>) -> tensor<2x3x70xf32>
  %nx = tosa.reshape %ng {new_shape = array<i64: 2, 6, 5, 7>} : (tensor<2x3x70xf32>) -> tensor<2x6x5x7xf32>
  %s = tosa.reshape %scale {new_shape = array<i64: 1, 6, 1, 1>} : (tensor<6xf32>) -> tensor<1x6x1x1xf32>
  %b = tosa.reshape %bias {new_shape = array<i64: 1, 6, 1, 1>} : (tensor<6xf32>) -> tensor<1x6x1x1xf32>
  %ns = tosa.mul %nx, %s {shift = 0 : i8} : (tensor<2x6x5x7xf32>, tensor<1x6x1x1xf32>) -> tensor<2x6x5x7xf32>
  %y = tosa.add %ns, %b : (tensor<2x6x5x7xf32>, tensor<1x6x1x1xf32>) -> tensor<2x6x5x7xf32>
  return %y : tensor<2x6x5x7xf32>
}
)";
  ASSERT_EQ(perGroup, 70); // the constant 1/70 above
  auto kernel = compileForRun(GetParam(), ir, "gn");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(15);
  Buffer x(DType::F32, {n, c, h, w}), scale(DType::F32, {c}),
      bias(DType::F32, {c}), y(DType::F32, {n, c, h, w});
  x.fillNormal(rng, -1.0, 2.0);
  ASSERT_EQ(runNorm(*kernel, rng, x, scale, bias, y), "");
  std::vector<double> s = scale.toDoubles(), b = bias.toDoubles();
  std::vector<double> ref, mean, rstd;
  groupNormReference(x.toDoubles(), ChannelDims{n, c, h * w, false}, groups, &s,
                     &b, 1e-5, ref, mean, rstd);
  EXPECT_LE(relativeError(y.toDoubles(), ref), tolerance(DType::F32)) << ir;
}

TEST_P(TosaBiasAddTest, ReshapedOneDimensionalBiasBroadcastsOverRows) {
  std::vector<int64_t> shape = kOdd;
  std::string ir = instantiate(R"(
func.func @bias_add(%x: {T}, %b: {V}) -> {T} {
  %b3 = tosa.reshape %b {new_shape = array<i64: {RS}>} : ({V}) -> {R}
  %y = tosa.add %x, %b3 : ({T}, {R}) -> {T}
  return %y : {T}
}
)",
                               DType::F32, shape);
  auto kernel = compileForRun(GetParam(), ir, "bias_add");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(5);
  Buffer x(DType::F32, shape), b(DType::F32, {shape.back()}),
      y(DType::F32, shape);
  x.fillNormal(rng);
  b.fillNormal(rng);
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref(), b.ref()}, {y.ref()})), "");
  std::vector<double> ref = x.toDoubles();
  for (int64_t i = 0; i < x.size(); ++i)
    ref[i] += b.get(i % shape.back());
  EXPECT_LE(relativeError(y.toDoubles(), ref), tolerance(DType::F32)) << ir;
}

TEST_P(TosaBiasAddTest, RankOneBiasIsBroadcastWithoutReshape) {
  std::string ir = R"(
func.func @bias_add(%x: tensor<4x768xf32>, %b: tensor<768xf32>) -> tensor<4x768xf32> {
  %y = tosa.add %x, %b : (tensor<4x768xf32>, tensor<768xf32>) -> tensor<4x768xf32>
  return %y : tensor<4x768xf32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "bias_add");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(6);
  Buffer x(DType::F32, {4, 768}), b(DType::F32, {768}), y(DType::F32, {4, 768});
  x.fillNormal(rng);
  b.fillNormal(rng);
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref(), b.ref()}, {y.ref()})), "");
  std::vector<double> ref = x.toDoubles();
  for (int64_t i = 0; i < x.size(); ++i)
    ref[i] += b.get(i % 768);
  EXPECT_LE(relativeError(y.toDoubles(), ref), tolerance(DType::F32)) << ir;
}

/// A TOSA residual add feeding nf.layer_norm, whose output a TOSA tanh
/// takes: the mixed functions the raising tests compare against.
TEST_P(TosaMixedWithNFTest, TosaAddFeedsLayerNormFeedsTosaTanh) {
  const int64_t rows = 3, cols = 1537;
  std::string t = tensorType(DType::F32, {rows, cols});
  std::string p = tensorType(DType::F32, {cols});
  std::string st = tensorType(DType::F32, {rows, 1});
  std::string ir =
      "func.func @mixed(%x: " + t + ", %r: " + t + ", %s: " + p + ") -> (" + t +
      ", " + st + ") {\n  %sum = tosa.add %x, %r : (" + t + ", " + t + ") -> " +
      t + "\n  %y, %m, %rstd = nf.layer_norm %sum scale %s " +
      "{axis = 1 : i64} : (" + t + ", " + p + ") -> (" + t + ", " + st + ", " +
      st + ")\n  %z = tosa.tanh %y : (" + t + ") -> " + t +
      "\n  return %z, %rstd : " + t + ", " + st + "\n}\n";
  auto kernel = compileForRun(GetParam(), ir, "mixed");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(9);
  Buffer x(DType::F32, {rows, cols}), r(DType::F32, {rows, cols}),
      s(DType::F32, {cols}), z(DType::F32, {rows, cols}),
      rstd(DType::F32, {rows, 1});
  x.fillNormal(rng);
  r.fillNormal(rng, 1.0, 0.5);
  s.fillNormal(rng, 1.0, 0.5);
  z.fill(std::nan(""));
  rstd.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref(), r.ref(), s.ref()},
                                  {z.ref(), rstd.ref()})),
            "");
  std::vector<double> sum(rows * cols), scale = s.toDoubles();
  for (int64_t i = 0; i < rows * cols; ++i)
    sum[i] = x.get(i) + r.get(i);
  std::vector<double> ref, mean, refRstd;
  layerNormReference(sum, cols, &scale, nullptr, 1e-5, ref, mean, refRstd);
  for (double &v : ref)
    v = std::tanh(v);
  EXPECT_LE(relativeError(z.toDoubles(), ref), 1e-5) << ir;
  EXPECT_LE(relativeError(rstd.toDoubles(), refRstd), 1e-5) << ir;
}

/// Softmax over the last axis: reduce_max, sub, exp, reduce_sum,
/// reciprocal, mul.
TEST_P(TosaSoftmaxTest, MatchesFloat64Reference) {
  std::vector<int64_t> shape = kOdd;
  std::string ir = instantiate(R"(
func.func @softmax(%x: {T}) -> {T} {
  %max = tosa.reduce_max %x {axis = 2 : i32} : ({T}) -> {S}
  %d = tosa.sub %x, %max : ({T}, {S}) -> {T}
  %e = tosa.exp %d : ({T}) -> {T}
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : ({T}) -> {S}
  %inv = tosa.reciprocal %sum : ({S}) -> {S}
  %y = tosa.mul %e, %inv {shift = 0 : i8} : ({T}, {S}) -> {T}
  return %y : {T}
}
)",
                               DType::F32, shape);
  auto kernel = compileForRun(GetParam(), ir, "softmax");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(10);
  Buffer x(DType::F32, shape), y(DType::F32, shape);
  x.fillNormal(rng, 0.0, 4.0);
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref()}, {y.ref()})), "");
  int64_t cols = shape.back();
  std::vector<double> in = x.toDoubles(), ref(in.size());
  for (int64_t row = 0; row < x.size() / cols; ++row) {
    double max = -INFINITY, sum = 0.0;
    for (int64_t i = 0; i < cols; ++i)
      max = std::max(max, in[row * cols + i]);
    for (int64_t i = 0; i < cols; ++i)
      sum += ref[row * cols + i] = std::exp(in[row * cols + i] - max);
    for (int64_t i = 0; i < cols; ++i)
      ref[row * cols + i] /= sum;
  }
  EXPECT_LE(relativeError(y.toDoubles(), ref), tolerance(DType::F32)) << ir;
}

TEST_P(TosaCastTest, TransposeThenCastToF16) {
  std::string ir = R"(
func.func @transpose_cast(%x: tensor<3x5x7xf32>) -> tensor<7x3x5xf16> {
  %perm = "tosa.const"() <{value = dense<[2, 0, 1]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %t = tosa.transpose %x, %perm : (tensor<3x5x7xf32>, tensor<3xi32>) -> tensor<7x3x5xf32>
  %h = tosa.cast %t : (tensor<7x3x5xf32>) -> tensor<7x3x5xf16>
  return %h : tensor<7x3x5xf16>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "transpose_cast");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(12);
  Buffer x(DType::F32, {3, 5, 7}), y(DType::F16, {7, 3, 5});
  x.fillNormal(rng);
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref()}, {y.ref()})), "");
  std::vector<double> ref(y.size());
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t b = 0; b < 5; ++b)
      for (int64_t c = 0; c < 7; ++c)
        ref[(c * 3 + a) * 5 + b] =
            roundTo(DType::F16, x.get((a * 5 + b) * 7 + c));
  EXPECT_EQ(y.toDoubles(), ref);
}

// A slice copies its window: rows 1 to 3 (whole rows, vectors on the GPU)
// and columns 3 to 10 (a window that starts off a vector boundary), read
// from x[i] = i so that every element says where it came from.
TEST_P(TosaSliceTest, SlicesCopyTheirWindow) {
  std::string ir = R"(
func.func @slices(%x: tensor<5x12xf32>) -> (tensor<3x12xf32>, tensor<5x8xf32>) {
  %r = tosa.slice %x {start = array<i64: 1, 0>, size = array<i64: 3, 12>} : (tensor<5x12xf32>) -> tensor<3x12xf32>
  %c = tosa.slice %x {start = array<i64: 0, 3>, size = array<i64: 5, 8>} : (tensor<5x12xf32>) -> tensor<5x8xf32>
  return %r, %c : tensor<3x12xf32>, tensor<5x8xf32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "slices");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F32, {5, 12}), rows(DType::F32, {3, 12}),
      cols(DType::F32, {5, 8});
  for (int64_t i = 0; i < x.size(); ++i)
    x.set(i, double(i));
  rows.fill(std::nan(""));
  cols.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref()}, {rows.ref(), cols.ref()})), "");
  std::vector<double> refRows, refCols;
  for (int64_t r = 1; r < 4; ++r)
    for (int64_t c = 0; c < 12; ++c)
      refRows.push_back(double(r * 12 + c));
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 3; c < 11; ++c)
      refCols.push_back(double(r * 12 + c));
  EXPECT_EQ(rows.toDoubles(), refRows);
  EXPECT_EQ(cols.toDoubles(), refCols);
}

// tosa.pad becomes, on the CPU, a copy of the input into a strided window
// of the padded buffer (memref.copy between strided views: the JIT's own
// strided copy, since normfuse links no MLIR runner library); on the GPU,
// one kernel that writes each element once, from the input inside its
// window and the pad value outside.
TEST_P(TosaPadConcatTest, PadPlacesTheInputInsideThePadValue) {
  std::string ir = R"(
func.func @pad(%x: tensor<2x3x4xf32>) -> tensor<3x6x5xf32> {
  %p = "tosa.const"() <{value = dense<[[0, 1], [1, 2], [1, 0]]> : tensor<3x2xi32>}> : () -> tensor<3x2xi32>
  %v = "tosa.const"() <{value = dense<-7.0> : tensor<f32>}> : () -> tensor<f32>
  %y = tosa.pad %x, %p, %v : (tensor<2x3x4xf32>, tensor<3x2xi32>, tensor<f32>) -> tensor<3x6x5xf32>
  return %y : tensor<3x6x5xf32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "pad");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F32, {2, 3, 4}), y(DType::F32, {3, 6, 5});
  for (int64_t i = 0; i < x.size(); ++i)
    x.set(i, double(i));
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref()}, {y.ref()})), "");
  std::vector<double> ref(y.size(), -7.0);
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 4; ++c)
        ref[(a * 6 + b + 1) * 5 + c + 1] = double((a * 3 + b) * 4 + c);
  EXPECT_EQ(y.toDoubles(), ref);
}

// A pad value the program takes as an argument: on the GPU the kernel
// reads it from that tensor (two calls, two values, one kernel).
TEST_P(TosaPadConcatTest, APadValueMayBeAnArgument) {
  std::string ir = R"(
func.func @pad(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<4x4xf32> {
  %p = "tosa.const"() <{value = dense<[[1, 1], [0, 1]]> : tensor<2x2xi32>}> : () -> tensor<2x2xi32>
  %y = tosa.pad %x, %p, %v : (tensor<2x3xf32>, tensor<2x2xi32>, tensor<f32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "pad");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F32, {2, 3}), v(DType::F32, {}), y(DType::F32, {4, 4});
  for (int64_t i = 0; i < x.size(); ++i)
    x.set(i, double(i + 1));
  for (double value : {-7.0, 0.5}) {
    v.set(0, value);
    y.fill(std::nan(""));
    ASSERT_EQ(errorText(kernel->run({x.ref(), v.ref()}, {y.ref()})), "");
    std::vector<double> ref(16, value);
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 3; ++c)
        ref[(r + 1) * 4 + c] = double(r * 3 + c + 1);
    EXPECT_EQ(y.toDoubles(), ref) << "pad value " << value;
  }
}

// An insert_slice into an argument writes into a copy: the caller's input
// stays as it was (on the CPU it used to be written in place and
// returned, and buffer-results-to-out-params crashed on the returned
// argument); on the GPU the argument is the window kernel's first window.
TEST_P(TosaPadConcatTest, AnInsertIntoAnArgumentLeavesTheArgumentAsItWas) {
  auto kernel = compileForRun(GetParam(), R"(
func.func @into(%x: tensor<2x3xf32>, %d: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y = tensor.insert_slice %x into %d[1, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
)",
                              "into");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F32, {2, 3}), d(DType::F32, {4, 4}), y(DType::F32, {4, 4});
  for (int64_t i = 0; i < x.size(); ++i)
    x.set(i, double(100 + i));
  for (int64_t i = 0; i < d.size(); ++i)
    d.set(i, double(i));
  std::vector<double> before = d.toDoubles(), expected = before;
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 3; ++c)
      expected[(r + 1) * 4 + c] = double(100 + r * 3 + c);
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref(), d.ref()}, {y.ref()})), "");
  EXPECT_EQ(y.toDoubles(), expected);
  EXPECT_EQ(d.toDoubles(), before);
}

// tosa.gather reads the rows its indices name (an embedding lookup): on
// the GPU the generic's body loads from the table at computed positions,
// a buffer of its own; f16 rows, repeated and out-of-order indices.
TEST_P(TosaGatherTest, GatherReadsTheRowsItsIndicesName) {
  std::string ir = R"(
func.func @embed(%table: tensor<2x10x3xf16>, %ids: tensor<2x5xi32>) -> tensor<2x5x3xf16> {
  %y = tosa.gather %table, %ids : (tensor<2x10x3xf16>, tensor<2x5xi32>) -> tensor<2x5x3xf16>
  return %y : tensor<2x5x3xf16>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "embed");
  ASSERT_TRUE(kernel);
  Buffer table(DType::F16, {2, 10, 3}), y(DType::F16, {2, 5, 3});
  for (int64_t i = 0; i < table.size(); ++i)
    table.set(i, double(i));
  std::vector<int32_t> ids = {3, 0, 9, 3, 1, 9, 8, 0, 0, 5};
  y.fill(std::nan(""));
  ASSERT_EQ(
      errorText(kernel->run({table.ref(), {ids.data(), DType::I32, {2, 5}, {}}},
                            {y.ref()})),
      "");
  std::vector<double> ref;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t w = 0; w < 5; ++w)
      for (int64_t c = 0; c < 3; ++c)
        ref.push_back(double((n * 10 + ids[n * 5 + w]) * 3 + c));
  EXPECT_EQ(y.toDoubles(), ref);
}

/// Runs an embedding bag of the 10x3 table (as `tableShape`) over six
/// indices (as `idsShape`, one repeated) and checks the three sums
/// exactly.
void checkBag(normfuse::jit::Kernel &kernel,
              const std::vector<int64_t> &tableShape,
              const std::vector<int64_t> &idsShape,
              const std::vector<int64_t> &sumShape) {
  Buffer table(DType::F32, tableShape), y(DType::F32, sumShape);
  for (int64_t i = 0; i < table.size(); ++i)
    table.set(i, double(i * i % 17));
  std::vector<int32_t> ids = {3, 0, 9, 3, 1, 7};
  y.fill(std::nan(""));
  ASSERT_EQ(
      errorText(kernel.run(
          {table.ref(), {ids.data(), DType::I32, idsShape, {}}}, {y.ref()})),
      "");
  std::vector<double> ref(3, 0.0);
  for (int32_t id : ids)
    for (int64_t c = 0; c < 3; ++c)
      ref[c] += table.get(id * 3 + c);
  EXPECT_EQ(y.toDoubles(), ref);
}

// An embedding bag: the rows the indices name, summed (tosa.gather, then
// tosa.reduce_sum over the looked-up rows); small integers, so the sums are
// exact.
TEST_P(TosaGatherTest, GatheredRowsCanBeSummed) {
  std::string ir = R"(
func.func @bag(%table: tensor<1x10x3xf32>, %ids: tensor<1x6xi32>) -> tensor<1x1x3xf32> {
  %rows = tosa.gather %table, %ids : (tensor<1x10x3xf32>, tensor<1x6xi32>) -> tensor<1x6x3xf32>
  %sum = tosa.reduce_sum %rows {axis = 1 : i32} : (tensor<1x6x3xf32>) -> tensor<1x1x3xf32>
  return %sum : tensor<1x1x3xf32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "bag");
  ASSERT_TRUE(kernel);
  checkBag(*kernel, {1, 10, 3}, {1, 6}, {1, 1, 3});
}

// The same bag as one linalg reduction whose body reads the table at the
// positions the indices give (what fusing a gather into a sum makes): on
// the GPU one kernel that loads from the table itself.
TEST_P(TosaGatherTest, AReductionMayGatherInItsBody) {
  std::string ir = R"(
func.func @bag(%table: tensor<10x3xf32>, %ids: tensor<6xi32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<3xf32>) -> tensor<3xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(c, r) -> (r)>, affine_map<(c, r) -> (c)>], iterator_types = ["parallel", "reduction"]} ins(%ids : tensor<6xi32>) outs(%init : tensor<3xf32>) {
  ^bb0(%id: i32, %acc: f32):
    %row = arith.index_cast %id : i32 to index
    %col = linalg.index 0 : index
    %v = tensor.extract %table[%row, %col] : tensor<10x3xf32>
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %sum : tensor<3xf32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "bag");
  ASSERT_TRUE(kernel);
  checkBag(*kernel, {10, 3}, {6}, {3});
}

// tosa.concat writes each input into its columns: on the GPU one kernel
// for the whole result, any element type (i8 here).
TEST_P(TosaPadConcatTest, ConcatPlacesEachInputInItsColumns) {
  std::string ir = R"(
func.func @cat(%a: tensor<2x3xi8>, %b: tensor<2x1xi8>, %c: tensor<2x4xi8>) -> (tensor<2x8xi8>, tensor<6x1xi8>) {
  %y = tosa.concat %a, %b, %c {axis = 1 : i32} : (tensor<2x3xi8>, tensor<2x1xi8>, tensor<2x4xi8>) -> tensor<2x8xi8>
  %bt = tosa.concat %b, %b, %b {axis = 0 : i32} : (tensor<2x1xi8>, tensor<2x1xi8>, tensor<2x1xi8>) -> tensor<6x1xi8>
  return %y, %bt : tensor<2x8xi8>, tensor<6x1xi8>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "cat");
  ASSERT_TRUE(kernel);
  std::vector<int8_t> a = {1, 2, 3, 4, 5, 6}, b = {-1, -2},
                      c = {10, 11, 12, 13, 14, 15, 16, 17};
  std::vector<int8_t> y(16, 99), bt(6, 99);
  ASSERT_EQ(errorText(kernel->run({{a.data(), DType::I8, {2, 3}, {}},
                                   {b.data(), DType::I8, {2, 1}, {}},
                                   {c.data(), DType::I8, {2, 4}, {}}},
                                  {{y.data(), DType::I8, {2, 8}, {}},
                                   {bt.data(), DType::I8, {6, 1}, {}}})),
            "");
  EXPECT_EQ(y, (std::vector<int8_t>{1, 2, 3, -1, 10, 11, 12, 13, 4, 5, 6, -2,
                                    14, 15, 16, 17}));
  EXPECT_EQ(bt, (std::vector<int8_t>{-1, -2, -1, -2, -1, -2}));
}

// f64 to bf16 is one rounding to nearest even (the JIT's own
// __truncdfbf2): 1 + 2^-8 + 2^-40 lies above the halfway point between the
// bf16 values 1 and 1 + 2^-7, which rounding to f32 first would turn into
// a tie (and round down to 1).
TEST_P(TosaCastTest, F64ToBF16RoundsOnceToNearestEven) {
  std::string ir = R"(
func.func @narrow(%x: tensor<5xf64>) -> tensor<5xbf16> {
  %y = arith.truncf %x : tensor<5xf64> to tensor<5xbf16>
  return %y : tensor<5xbf16>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "narrow");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F64, {5}), y(DType::BF16, {5});
  const double above = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  const double inputs[] = {above, 1.0 + std::ldexp(1.0, -8),
                           1.0 + 3 * std::ldexp(1.0, -8), -above, 1e300};
  for (int64_t i = 0; i < 5; ++i)
    x.set(i, inputs[i]);
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref()}, {y.ref()})), "");
  EXPECT_EQ(y.toDoubles(),
            (std::vector<double>{1.0078125, 1.0, 1.015625, -1.0078125,
                                 std::numeric_limits<double>::infinity()}));
}

// A convolution of f16 data with an f32 result (TOSA's f16 inputs with f32
// accumulation), 3x3, padded, with an f16 bias: small integers, so every
// product and sum is exact and the result must equal the reference exactly.
TEST_P(TosaConvTest, F16DataWithF32ResultIsExact) {
  std::string ir = R"(
func.func @conv(%x: tensor<2x5x6x3xf16>, %w: tensor<4x3x3x3xf16>, %b: tensor<4xf16>) -> tensor<2x5x6x4xf32> {
  %y = tosa.conv2d %x, %w, %b {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<2x5x6x3xf16>, tensor<4x3x3x3xf16>, tensor<4xf16>) -> tensor<2x5x6x4xf32>
  return %y : tensor<2x5x6x4xf32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "conv");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F16, {2, 5, 6, 3}), w(DType::F16, {4, 3, 3, 3}),
      b(DType::F16, {4}), y(DType::F32, {2, 5, 6, 4});
  for (int64_t i = 0; i < x.size(); ++i)
    x.set(i, double(i % 7) - 3);
  for (int64_t i = 0; i < w.size(); ++i)
    w.set(i, double(i % 5) - 2);
  for (int64_t i = 0; i < b.size(); ++i)
    b.set(i, double(i) * 16);
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref(), w.ref(), b.ref()}, {y.ref()})), "");
  std::vector<double> ref(y.size());
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t h = 0; h < 5; ++h)
      for (int64_t v = 0; v < 6; ++v)
        for (int64_t o = 0; o < 4; ++o) {
          double sum = b.get(o);
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw)
              for (int64_t c = 0; c < 3; ++c) {
                int64_t ih = h + kh - 1, iw = v + kw - 1;
                if (ih < 0 || ih >= 5 || iw < 0 || iw >= 6)
                  continue;
                sum += x.get(((n * 5 + ih) * 6 + iw) * 3 + c) *
                       w.get(((o * 3 + kh) * 3 + kw) * 3 + c);
              }
          ref[((n * 5 + h) * 6 + v) * 4 + o] = sum;
        }
  EXPECT_EQ(y.toDoubles(), ref);
}

TEST_P(TosaMatmulTest, BatchedMatmulMatchesFloat64Reference) {
  const int64_t batch = 2, m = 5, k = 33, n = 7;
  std::string a = tensorType(DType::F32, {batch, m, k});
  std::string b = tensorType(DType::F32, {batch, k, n});
  std::string c = tensorType(DType::F32, {batch, m, n});
  std::string ir = "func.func @mm(%a: " + a + ", %b: " + b + ") -> " + c +
                   " {\n  %0 = tosa.matmul %a, %b : (" + a + ", " + b +
                   ") -> " + c + "\n  return %0 : " + c + "\n}\n";
  auto kernel = compileForRun(GetParam(), ir, "mm");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(14);
  Buffer lhs(DType::F32, {batch, m, k}), rhs(DType::F32, {batch, k, n}),
      out(DType::F32, {batch, m, n});
  lhs.fillNormal(rng);
  rhs.fillNormal(rng);
  out.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({lhs.ref(), rhs.ref()}, {out.ref()})), "");
  std::vector<double> ref(out.size(), 0.0);
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < k; ++l)
          ref[(p * m + i) * n + j] +=
              lhs.get((p * m + i) * k + l) * rhs.get((p * k + l) * n + j);
  EXPECT_LE(relativeError(out.toDoubles(), ref), tolerance(DType::F32)) << ir;
}

INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaBiasAddTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);
INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaMixedWithNFTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);
INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaGroupNormTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);
INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaSoftmaxTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);
INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaGatherTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);
INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaPadConcatTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);
INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaSliceTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);
INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaConvTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);
INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaMatmulTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);
INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaCastTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);

} // namespace
