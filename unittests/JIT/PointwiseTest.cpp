//===- PointwiseTest.cpp - pointwise nf ops on the CPU ----------*- C++ -*-===//
//
// Part of normfuse. relu, gelu (erf and tanh forms), silu, their gradients,
// add, mul and bias_add (both layouts) against float64 references, on sizes
// that cover the vector body, the scalar tail and several parallel chunks.
//
// Tolerances (relative L2 error against float64 on the rounded inputs):
// f32 2e-6 (erf, tanh and exp are polynomial approximations), f16 1e-3,
// bf16 8e-3 (output rounding).
//
//===----------------------------------------------------------------------===//

#include "JITTestUtils.h"
#include "Reference.h"

#include <cmath>
#include <functional>

using namespace nftest;

namespace {

double tolerance(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return 1e-3;
  case DType::BF16:
    return 8e-3;
  default:
    return 2e-6;
  }
}

struct UnaryCase {
  std::string op;   // the op with its attributes, e.g. "nf.gelu"
  std::string name; // test name
  std::function<double(double)> ref;
};

double geluErf(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double geluTanh(double x) {
  return 0.5 * x *
         (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
double silu(double x) { return x / (1.0 + std::exp(-x)); }

std::vector<UnaryCase> unaryOps() {
  return {
      {"nf.relu", "relu", [](double x) { return x > 0 ? x : 0.0; }},
      {"nf.gelu", "geluErf", geluErf},
      {"nf.gelu {approximate = #nf.approximation<tanh>}", "geluTanh", geluTanh},
      {"nf.silu", "silu", silu},
  };
}

using UnaryParam = std::tuple<int, DType, int64_t>;

class UnaryTest : public testing::TestWithParam<UnaryParam> {};

TEST_P(UnaryTest, MatchesFloat64Reference) {
  auto [opIndex, dtype, n] = GetParam();
  UnaryCase c = unaryOps()[opIndex];
  std::string t = tensorType(dtype, {n});
  std::string ir =
      "func.func @f(%x: " + t + ") -> " + t +
      " {\n  %0 = " + c.op.substr(0, c.op.find(' ')) + " %x" +
      (c.op.find(' ') == std::string::npos ? "" : c.op.substr(c.op.find(' '))) +
      " : " + t + "\n  return %0 : " + t + "\n}\n";
  auto kernel = compileOrFail(ir, "f");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(11);
  Buffer x(dtype, {n}), y(dtype, {n});
  x.fillNormal(rng, 0.0, 3.0);
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref()}, {y.ref()})), "");
  std::vector<double> ref = x.toDoubles();
  for (double &v : ref)
    v = c.ref(v);
  double error = relativeError(y.toDoubles(), ref);
  recordError("relative_error", error);
  EXPECT_LE(error, tolerance(dtype)) << ir;
}

std::string unaryName(const testing::TestParamInfo<UnaryParam> &info) {
  auto [opIndex, dtype, n] = info.param;
  return unaryOps()[opIndex].name + "_" + normfuse::getDTypeName(dtype) + "_" +
         std::to_string(n);
}

// 1 and 7: the scalar tail alone; 1000: vectors and a tail; 40003: three
// parallel chunks of 16384 elements, the last one partial.
INSTANTIATE_TEST_SUITE_P(
    Ops, UnaryTest,
    testing::Combine(testing::Range(0, 4),
                     testing::Values(DType::F32, DType::F16, DType::BF16),
                     testing::Values(1, 7, 1000, 40003)),
    unaryName);

TEST(ReluTest, PropagatesNaNAndClampsNegativeInfinity) {
  std::string t = tensorType(DType::F32, {3});
  auto kernel = compileOrFail("func.func @r(%x: " + t + ") -> " + t +
                                  " {\n  %0 = nf.relu %x : " + t +
                                  "\n  return %0 : " + t + "\n}\n",
                              "r");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F32, {3}), y(DType::F32, {3});
  x.set(0, std::nan(""));
  x.set(1, -INFINITY);
  x.set(2, INFINITY);
  ASSERT_EQ(errorText(kernel->run({x.ref()}, {y.ref()})), "");
  EXPECT_TRUE(std::isnan(y.get(0)));
  EXPECT_EQ(y.get(1), 0.0);
  EXPECT_EQ(y.get(2), INFINITY);
}

/// Runs `op` (with its attributes) on the f32 values `xs`.
std::vector<double> runUnaryF32(const std::string &op,
                                const std::vector<double> &xs) {
  int64_t n = xs.size();
  std::string t = tensorType(DType::F32, {n});
  size_t space = op.find(' ');
  std::string attrs = space == std::string::npos ? "" : op.substr(space);
  auto kernel =
      compileOrFail("func.func @f(%x: " + t + ") -> " + t +
                        " {\n  %0 = " + op.substr(0, space) + " %x" + attrs +
                        " : " + t + "\n  return %0 : " + t + "\n}\n",
                    "f");
  if (!kernel)
    return {};
  Buffer x(DType::F32, {n}), y(DType::F32, {n});
  for (int64_t i = 0; i < n; ++i)
    x.set(i, xs[i]);
  y.fill(std::nan(""));
  if (!errorText(kernel->run({x.ref()}, {y.ref()})).empty())
    return {};
  return y.toDoubles();
}

const char *kGeluTanh = "nf.gelu {approximate = #nf.approximation<tanh>}";

// In f32, GELU's tanh form and SiLU are x / (1 + 2^t). Each element is
// within 1e-5 of the float64 value relative to itself (the f32 rounding of
// t alone costs up to |t| * 1.2e-7), down to x = -8 where GELU is -1e-21:
// 0.5 x (1 + tanh(u)) would cancel there (tanh(u) is -1 to 26 digits).
// The reference is the same function written without the cancellation,
// x / (1 + e^(-2u)), in float64.
TEST(LogisticActivationsTest, EachElementIsAccurateOnNegativeArguments) {
  std::vector<double> xs;
  for (double x = -8.0; x <= 8.0; x += 1.0 / 64)
    xs.push_back(x);
  std::vector<double> gelu = runUnaryF32(kGeluTanh, xs);
  std::vector<double> silu = runUnaryF32("nf.silu", xs);
  ASSERT_EQ(gelu.size(), xs.size());
  ASSERT_EQ(silu.size(), xs.size());
  double worstGelu = 0, worstSilu = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    double x = xs[i];
    double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
    double geluRef = x / (1.0 + std::exp(-2.0 * u));
    double siluRef = x / (1.0 + std::exp(-x));
    if (x == 0) {
      EXPECT_EQ(gelu[i], 0.0);
      EXPECT_EQ(silu[i], 0.0);
      continue;
    }
    worstGelu = std::max(worstGelu, std::fabs(gelu[i] / geluRef - 1));
    worstSilu = std::max(worstSilu, std::fabs(silu[i] / siluRef - 1));
  }
  recordError("gelu_tanh_worst_relative", worstGelu);
  recordError("silu_worst_relative", worstSilu);
  EXPECT_LE(worstGelu, 1e-5);
  EXPECT_LE(worstSilu, 1e-5);
}

// The limits the formulas have in float arithmetic: NaN stays NaN, x
// beyond a few units is itself or (-)0, +inf stays +inf, and -inf gives
// NaN (-inf * 0), as PyTorch's gelu(approximate='tanh') and silu do.
TEST(LogisticActivationsTest, SaturateAndPropagateNaNLikeTheFormulas) {
  std::vector<double> xs = {std::nan(""), INFINITY, -INFINITY, 1000.0, -1000.0};
  for (const char *op : {kGeluTanh, "nf.silu"}) {
    SCOPED_TRACE(op);
    std::vector<double> y = runUnaryF32(op, xs);
    ASSERT_EQ(y.size(), xs.size());
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_EQ(y[1], INFINITY);
    EXPECT_TRUE(std::isnan(y[2]));
    EXPECT_EQ(y[3], 1000.0);
    EXPECT_EQ(y[4], 0.0);
    EXPECT_TRUE(std::signbit(y[4]));
  }
}

/// The gradients' reference is a central difference of the forward
/// reference in float64 (error about 1e-10), not a second copy of the
/// derivative formulas the lowering uses.
double centralDifference(const std::function<double(double)> &f, double x) {
  const double h = 1e-5;
  return (f(x + h) - f(x - h)) / (2 * h);
}

using GradParam = std::tuple<int, DType, int64_t>;

class ActivationGradTest : public testing::TestWithParam<GradParam> {};

TEST_P(ActivationGradTest, MatchesDerivativeOfForwardReference) {
  auto [opIndex, dtype, n] = GetParam();
  UnaryCase c = unaryOps()[opIndex];
  std::string t = tensorType(dtype, {n});
  std::string attrs =
      c.op.find(' ') == std::string::npos ? "" : c.op.substr(c.op.find(' '));
  std::string name = c.op.substr(0, c.op.find(' ')) + "_grad";
  std::string ir = "func.func @g(%dy: " + t + ", %x: " + t + ") -> " + t +
                   " {\n  %0 = " + name + " %dy, %x" + attrs + " : " + t +
                   "\n  return %0 : " + t + "\n}\n";
  auto kernel = compileOrFail(ir, "g");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(13);
  Buffer dy(dtype, {n}), x(dtype, {n}), dx(dtype, {n});
  dy.fillNormal(rng);
  x.fillNormal(rng, 0.0, 3.0);
  dx.fill(std::nan(""));
  // relu_grad takes the forward output; the others the forward input.
  Buffer forward(dtype, {n});
  for (int64_t i = 0; i < n; ++i)
    forward.set(i, name == "nf.relu_grad" ? c.ref(x.get(i)) : x.get(i));
  ASSERT_EQ(errorText(kernel->run({dy.ref(), forward.ref()}, {dx.ref()})), "");
  std::vector<double> ref(n);
  for (int64_t i = 0; i < n; ++i)
    ref[i] = dy.get(i) * (name == "nf.relu_grad"
                              ? (x.get(i) > 0 ? 1.0 : 0.0)
                              : centralDifference(c.ref, x.get(i)));
  EXPECT_LE(relativeError(dx.toDoubles(), ref), tolerance(dtype)) << ir;
}

std::string gradName(const testing::TestParamInfo<GradParam> &info) {
  auto [opIndex, dtype, n] = info.param;
  return unaryOps()[opIndex].name + "Grad_" + normfuse::getDTypeName(dtype) +
         "_" + std::to_string(n);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, ActivationGradTest,
    testing::Combine(testing::Range(0, 4),
                     testing::Values(DType::F32, DType::F16, DType::BF16),
                     testing::Values(1, 1000, 40003)),
    gradName);

TEST(ReluGradTest, PassesGradientWhereOutputIsPositiveOrNaN) {
  std::string t = tensorType(DType::F32, {4});
  auto kernel =
      compileOrFail("func.func @r(%dy: " + t + ", %y: " + t + ") -> " + t +
                        " {\n  %0 = nf.relu_grad %dy, %y : " + t +
                        "\n  return %0 : " + t + "\n}\n",
                    "r");
  ASSERT_TRUE(kernel);
  Buffer dy(DType::F32, {4}), y(DType::F32, {4}), dx(DType::F32, {4});
  for (int i = 0; i < 4; ++i)
    dy.set(i, i + 1.0);
  y.set(0, 0.0);
  y.set(1, 2.0);
  y.set(2, std::nan(""));
  y.set(3, -0.0);
  ASSERT_EQ(errorText(kernel->run({dy.ref(), y.ref()}, {dx.ref()})), "");
  EXPECT_EQ(dx.toDoubles(), (std::vector<double>{0.0, 2.0, 3.0, 0.0}));
}

class BinaryTest : public testing::TestWithParam<std::tuple<DType, int64_t>> {};

TEST_P(BinaryTest, AddThenMulMatchFloat64Reference) {
  auto [dtype, n] = GetParam();
  std::string t = tensorType(dtype, {n});
  std::string ir = "func.func @am(%a: " + t + ", %b: " + t + ") -> " + t +
                   " {\n  %0 = nf.add %a, %b : " + t +
                   "\n  %1 = nf.mul %0, %b : " + t + "\n  return %1 : " + t +
                   "\n}\n";
  auto kernel = compileOrFail(ir, "am");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(5);
  Buffer a(dtype, {n}), b(dtype, {n}), y(dtype, {n});
  a.fillNormal(rng);
  b.fillNormal(rng);
  ASSERT_EQ(errorText(kernel->run({a.ref(), b.ref()}, {y.ref()})), "");
  std::vector<double> ref(n);
  for (int64_t i = 0; i < n; ++i)
    ref[i] = roundTo(dtype, a.get(i) + b.get(i)) * b.get(i);
  EXPECT_LE(relativeError(y.toDoubles(), ref), tolerance(dtype));
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, BinaryTest,
    testing::Combine(testing::Values(DType::F32, DType::F16, DType::BF16),
                     testing::Values(1, 1000, 40003)));

/// A bf16 product whose exact f32 value rounds to `expected` bits.
struct BF16Product {
  uint16_t a, b, expected;
  const char *what;
};

// nf.mul on bf16 computes a * b in f32 (exactly: 8-bit mantissas) and
// rounds once to bf16, so these pin the bits of the f32 -> bf16 rounding.
TEST(BF16RoundingTest, ProductsRoundToNearestEvenBitExactly) {
  const std::vector<BF16Product> cases = {
      // 1.5 * (1 + 2^-7) = 0x3FC18000: a tie, kept bits odd: up.
      {0x3FC0, 0x3F81, 0x3FC2, "tie rounds up to even"},
      // 1.5 * (1 + 3 * 2^-7) = 0x3FC48000: a tie, kept bits even: down.
      {0x3FC0, 0x3F83, 0x3FC4, "tie rounds down to even"},
      // (1 + 2^-7)^2 = 0x3F820200 (below the half): down.
      {0x3F81, 0x3F81, 0x3F82, "below half rounds down"},
      // (2 - 2^-7) * (1 + 2^-7) = 2 - 2^-14 = 0x3FFFFE00: up into the
      // exponent, 2.0.
      {0x3FFF, 0x3F81, 0x4000, "carry into the exponent"},
      // The largest finite bf16 times (1 + 2^-7): up to infinity.
      {0x7F7F, 0x3F81, 0x7F80, "carry into infinity"},
      {0xBFC0, 0x3F81, 0xBFC2, "negative tie rounds up in magnitude"},
      {0x7F80, 0x3F80, 0x7F80, "infinity"},
      {0xFF80, 0x3F80, 0xFF80, "negative infinity"},
      // inf * 0 is the x86 default NaN, 0xFFC00000: every NaN is 0x7FC0.
      {0x7F80, 0x0000, 0x7FC0, "new NaN"},
      {0x7FC1, 0x3F80, 0x7FC0, "NaN with a payload"},
      {0xFFFF, 0x3F80, 0x7FC0, "negative NaN, all mantissa bits"},
  };
  // Each case fills a whole vector of 8 lanes, then once more in the
  // scalar tail.
  const int64_t k = cases.size(), n = 9 * k;
  std::string t = tensorType(DType::BF16, {n});
  auto kernel = compileOrFail("func.func @m(%a: " + t + ", %b: " + t + ") -> " +
                                  t + " {\n  %0 = nf.mul %a, %b : " + t +
                                  "\n  return %0 : " + t + "\n}\n",
                              "m");
  ASSERT_TRUE(kernel);
  Buffer a(DType::BF16, {n}), b(DType::BF16, {n}), y(DType::BF16, {n});
  auto caseOf = [&](int64_t i) { return i < 8 * k ? i / 8 : i - 8 * k; };
  auto bits = [](Buffer &buffer, int64_t i) {
    return reinterpret_cast<uint16_t *>(buffer.bytes.data()) + i;
  };
  for (int64_t i = 0; i < n; ++i) {
    *bits(a, i) = cases[caseOf(i)].a;
    *bits(b, i) = cases[caseOf(i)].b;
  }
  ASSERT_EQ(errorText(kernel->run({a.ref(), b.ref()}, {y.ref()})), "");
  for (int64_t i = 0; i < n; ++i) {
    const BF16Product &c = cases[caseOf(i)];
    EXPECT_EQ(*bits(y, i), c.expected) << c.what << " at element " << i
                                       << ": got 0x" << std::hex << *bits(y, i);
  }
}

class BiasAddTest
    : public testing::TestWithParam<std::tuple<DType, std::string>> {};

TEST_P(BiasAddTest, AddsOneValuePerChannel) {
  auto [dtype, layout] = GetParam();
  bool nhwc = layout == "nhwc";
  std::vector<int64_t> shape = nhwc ? std::vector<int64_t>{2, 5, 3, 19}
                                    : std::vector<int64_t>{2, 19, 5, 3};
  std::string t = tensorType(dtype, shape);
  std::string bt = tensorType(DType::F32, {19});
  std::string ir = "func.func @ba(%x: " + t + ", %b: " + bt + ") -> " + t +
                   " {\n  %0 = nf.bias_add %x, %b {layout = #nf.layout<" +
                   layout + ">} : " + t + ", " + bt + "\n  return %0 : " + t +
                   "\n}\n";
  auto kernel = compileOrFail(ir, "ba");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(9);
  Buffer x(dtype, shape), b(DType::F32, {19}), y(dtype, shape);
  x.fillNormal(rng);
  b.fillNormal(rng);
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref(), b.ref()}, {y.ref()})), "");
  std::vector<double> ref(x.size());
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t c = nhwc ? i % 19 : (i / 15) % 19;
    ref[i] = x.get(i) + b.get(c);
  }
  EXPECT_LE(relativeError(y.toDoubles(), ref), tolerance(dtype));
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, BiasAddTest,
    testing::Combine(testing::Values(DType::F32, DType::F16, DType::BF16),
                     testing::Values("nchw", "nhwc")));

} // namespace

/// Folding turns `bias_add %x, zeros` into %x itself, and a function may
/// return one value twice: each output buffer still gets its own copy
/// (this used to crash the bufferization of results into out-parameters).
TEST(ReturnedValuesTest, AnArgumentReturnedAfterFoldingIsCopiedOut) {
  auto kernel =
      compileOrFail("func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, "
                    "tensor<2x3xf32>) {\n"
                    "  %z = arith.constant dense<0.0> : tensor<3xf32>\n"
                    "  %y = nf.bias_add %x, %z {layout = #nf.layout<nhwc>} : "
                    "tensor<2x3xf32>, tensor<3xf32>\n"
                    "  %r = nf.relu %x : tensor<2x3xf32>\n"
                    "  %s = nf.relu %r : tensor<2x3xf32>\n"
                    "  return %y, %s : tensor<2x3xf32>, tensor<2x3xf32>\n}\n",
                    "f");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F32, {2, 3}), y(DType::F32, {2, 3}), s(DType::F32, {2, 3});
  for (int64_t i = 0; i < 6; ++i)
    x.set(i, double(i) - 2.5);
  ASSERT_EQ(errorText(kernel->run({x.ref()}, {y.ref(), s.ref()})), "");
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(y.get(i), double(i) - 2.5) << i;
    EXPECT_EQ(s.get(i), std::max(double(i) - 2.5, 0.0)) << i;
  }
}

TEST(ReturnedValuesTest, OneValueReturnedTwiceFillsBothOutputs) {
  auto kernel = compileOrFail(
      "func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n"
      "  %r = nf.relu %x : tensor<4xf32>\n"
      "  return %r, %r : tensor<4xf32>, tensor<4xf32>\n}\n",
      "f");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F32, {4}), a(DType::F32, {4}), b(DType::F32, {4});
  for (int64_t i = 0; i < 4; ++i)
    x.set(i, double(i) - 1.5);
  ASSERT_EQ(errorText(kernel->run({x.ref()}, {a.ref(), b.ref()})), "");
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(a.get(i), std::max(double(i) - 1.5, 0.0)) << i;
    EXPECT_EQ(b.get(i), std::max(double(i) - 1.5, 0.0)) << i;
  }
}
