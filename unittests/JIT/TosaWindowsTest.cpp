//===- TosaWindowsTest.cpp - pooling, convolutions, argmax ------*- C++ -*-===//
//
// Part of normfuse. TOSA ops whose linalg form reads its input through a
// window (d1 * stride + d4 * dilation: max and average pooling, depthwise
// and integer convolutions), reduces to two results (argmax, rfft2d) or
// reads its input at computed positions (resize), run on the CPU op by op
// and on the CUDA kernels in the simulator op by op and fused.
// Inputs are small integers, so every sum, product and maximum is exact and
// each result must equal its reference exactly. Outputs are poisoned
// first, so an element left unwritten fails the test.
//
//===----------------------------------------------------------------------===//

#include "JITTestUtils.h"
#include "Reference.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <random>

using namespace nftest;

namespace {

class TosaPoolingTest : public testing::TestWithParam<Run> {};
class TosaWindowConvTest : public testing::TestWithParam<Run> {};
class TosaArgmaxTest : public testing::TestWithParam<Run> {};
class TosaResizeTest : public testing::TestWithParam<Run> {};
class TosaFFTTest : public testing::TestWithParam<Run> {};

/// x[n][h][w][c] of an NHWC tensor of small integers, some negative.
double pixel(int64_t n, int64_t h, int64_t w, int64_t c) {
  return double((n * 7 + h * 5 + w * 3 + c * 11) % 13) - 6;
}

// 3x3 windows, stride 2, padded by 1 (with -inf: the padding never wins),
// over 9x7 images of 3 channels.
TEST_P(TosaPoolingTest, MaxPoolTakesTheLargestElementOfEachWindow) {
  std::string ir = R"(
func.func @pool(%x: tensor<2x9x7x3xf32>) -> tensor<2x5x4x3xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<2x9x7x3xf32>) -> tensor<2x5x4x3xf32>
  return %y : tensor<2x5x4x3xf32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "pool");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F32, {2, 9, 7, 3}), y(DType::F32, {2, 5, 4, 3});
  for (int64_t i = 0; i < x.size(); ++i)
    x.set(i, pixel(i / 189, i / 21 % 9, i / 3 % 7, i % 3));
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref()}, {y.ref()})), "");
  std::vector<double> ref;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t h = 0; h < 5; ++h)
      for (int64_t w = 0; w < 4; ++w)
        for (int64_t c = 0; c < 3; ++c) {
          double best = -std::numeric_limits<double>::infinity();
          for (int64_t i = 2 * h - 1; i <= 2 * h + 1; ++i)
            for (int64_t j = 2 * w - 1; j <= 2 * w + 1; ++j)
              if (i >= 0 && i < 9 && j >= 0 && j < 7)
                best = std::max(best, pixel(n, i, j, c));
          ref.push_back(best);
        }
  EXPECT_EQ(y.toDoubles(), ref);
}

// 3x3 windows, stride 1, padded by 1: each mean is over the window's
// elements inside the image (TOSA does not count the padding), so a corner
// divides by 4 and an edge by 6. Integer sums, one f32 division each.
TEST_P(TosaPoolingTest, AvgPoolDividesByTheElementsInsideTheImage) {
  std::string ir = R"(
func.func @avg(%x: tensor<1x5x6x2xf32>) -> tensor<1x5x6x2xf32> {
  %y = tosa.avg_pool2d %x {acc_type = f32, kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x5x6x2xf32>) -> tensor<1x5x6x2xf32>
  return %y : tensor<1x5x6x2xf32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "avg");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F32, {1, 5, 6, 2}), y(DType::F32, {1, 5, 6, 2});
  for (int64_t i = 0; i < x.size(); ++i)
    x.set(i, pixel(0, i / 12, i / 2 % 6, i % 2));
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref()}, {y.ref()})), "");
  std::vector<double> ref;
  for (int64_t h = 0; h < 5; ++h)
    for (int64_t w = 0; w < 6; ++w)
      for (int64_t c = 0; c < 2; ++c) {
        double sum = 0;
        int count = 0;
        for (int64_t i = h - 1; i <= h + 1; ++i)
          for (int64_t j = w - 1; j <= w + 1; ++j)
            if (i >= 0 && i < 5 && j >= 0 && j < 6) {
              sum += pixel(0, i, j, c);
              ++count;
            }
        ref.push_back(double(float(sum) / float(count)));
      }
  EXPECT_EQ(y.toDoubles(), ref);
}

// A depthwise 3x3 convolution with stride 2 and dilation 2 (each input
// channel gets 2 filters of its own), with a bias.
TEST_P(TosaWindowConvTest, DepthwiseConvWithStrideAndDilationIsExact) {
  std::string ir = R"(
func.func @dw(%x: tensor<1x9x8x3xf32>, %w: tensor<3x3x3x2xf32>, %b: tensor<6xf32>) -> tensor<1x3x2x6xf32> {
  %y = tosa.depthwise_conv2d %x, %w, %b {dilation = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x9x8x3xf32>, tensor<3x3x3x2xf32>, tensor<6xf32>) -> tensor<1x3x2x6xf32>
  return %y : tensor<1x3x2x6xf32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "dw");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F32, {1, 9, 8, 3}), w(DType::F32, {3, 3, 3, 2}),
      b(DType::F32, {6}), y(DType::F32, {1, 3, 2, 6});
  for (int64_t i = 0; i < x.size(); ++i)
    x.set(i, pixel(0, i / 24, i / 3 % 8, i % 3));
  for (int64_t i = 0; i < w.size(); ++i)
    w.set(i, double(i % 5) - 2);
  for (int64_t i = 0; i < b.size(); ++i)
    b.set(i, double(i) * 100);
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref(), w.ref(), b.ref()}, {y.ref()})), "");
  std::vector<double> ref;
  for (int64_t h = 0; h < 3; ++h)
    for (int64_t v = 0; v < 2; ++v)
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t m = 0; m < 2; ++m) {
          double sum = b.get(c * 2 + m);
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw)
              sum += pixel(0, 2 * h + 2 * kh, 2 * v + 2 * kw, c) *
                     w.get(((kh * 3 + kw) * 3 + c) * 2 + m);
          ref.push_back(sum);
        }
  EXPECT_EQ(y.toDoubles(), ref);
}

// An i8 convolution accumulated in i32, with zero points (3 for the
// input, -2 for the weights): not an nf product (nf products are floating
// point), so a linalg window on the GPU, exact; products reach 131 * -126.
TEST_P(TosaWindowConvTest, Int8ConvAccumulatesExactlyInInt32) {
  std::string ir = R"(
func.func @conv(%x: tensor<1x4x5x3xi8>, %w: tensor<2x2x3x3xi8>, %b: tensor<2xi32>) -> tensor<1x3x3x2xi32> {
  %y = tosa.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, quantization_info = #tosa.conv_quant<input_zp = 3, weight_zp = -2>, stride = array<i64: 1, 1>} : (tensor<1x4x5x3xi8>, tensor<2x2x3x3xi8>, tensor<2xi32>) -> tensor<1x3x3x2xi32>
  return %y : tensor<1x3x3x2xi32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "conv");
  ASSERT_TRUE(kernel);
  std::vector<int8_t> x(60), w(36);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = int8_t(i % 2 ? 127 - int(i) : -128 + int(i));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = int8_t(i % 3 ? 127 - int(i) : -128 + int(3 * i));
  std::vector<int32_t> b = {1000000, -7}, y(18, 99);
  ASSERT_EQ(errorText(kernel->run({{x.data(), DType::I8, {1, 4, 5, 3}, {}},
                                   {w.data(), DType::I8, {2, 2, 3, 3}, {}},
                                   {b.data(), DType::I32, {2}, {}}},
                                  {{y.data(), DType::I32, {1, 3, 3, 2}, {}}})),
            "");
  std::vector<int32_t> ref;
  for (int64_t h = 0; h < 3; ++h)
    for (int64_t v = 0; v < 3; ++v)
      for (int64_t o = 0; o < 2; ++o) {
        int32_t sum = b[o];
        for (int64_t kh = 0; kh < 2; ++kh)
          for (int64_t kw = 0; kw < 3; ++kw)
            for (int64_t c = 0; c < 3; ++c)
              sum += (int32_t(x[((h + kh) * 5 + v + kw) * 3 + c]) - 3) *
                     (int32_t(w[((o * 2 + kh) * 3 + kw) * 3 + c]) + 2);
        ref.push_back(sum);
      }
  EXPECT_EQ(y, ref);
}

// tosa.argmax over the rows (the innermost axis) and over the columns: the
// index of the first largest element, ties going to the lower index.
TEST_P(TosaArgmaxTest, ArgmaxNamesTheFirstLargestElement) {
  std::string ir = R"(
func.func @am(%x: tensor<4x6xf32>) -> (tensor<4xi32>, tensor<6xi32>) {
  %r = tosa.argmax %x {axis = 1 : i32} : (tensor<4x6xf32>) -> tensor<4xi32>
  %c = tosa.argmax %x {axis = 0 : i32} : (tensor<4x6xf32>) -> tensor<6xi32>
  return %r, %c : tensor<4xi32>, tensor<6xi32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "am");
  ASSERT_TRUE(kernel);
  const double values[4][6] = {{1, 5, 5, -2, 0, 3},
                               {-9, -8, -7, -7, -8, -9},
                               {4, 4, 4, 4, 4, 4},
                               {0, 0, 6, 0, 8, 1}};
  Buffer x(DType::F32, {4, 6});
  for (int64_t i = 0; i < 24; ++i)
    x.set(i, values[i / 6][i % 6]);
  std::vector<int32_t> rows(4, -1), cols(6, -1);
  ASSERT_EQ(
      errorText(kernel->run({x.ref()}, {{rows.data(), DType::I32, {4}, {}},
                                        {cols.data(), DType::I32, {6}, {}}})),
      "");
  EXPECT_EQ(rows, (std::vector<int32_t>{1, 2, 0, 4}));
  EXPECT_EQ(cols, (std::vector<int32_t>{2, 0, 3, 2, 3, 2}));
}

/// Argmax as the serial loop defines it: the first index whose value is
/// strictly larger than every one before it and than `initial` (TOSA's
/// -FLT_MAX); 0 where none is (NaN never is).
template <typename Get>
int32_t firstLargest(int64_t n, Get get, double initial) {
  double best = initial;
  int32_t index = 0;
  for (int64_t j = 0; j < n; ++j)
    if (get(j) > best) {
      best = get(j);
      index = int32_t(j);
    }
  return index;
}

// Long rows (split over parts and lanes on the GPU, combined as a tree)
// and long columns: the first largest element wins ties across parts, NaN
// and -inf never win, -0 and +0 tie, and a row with no element above
// -FLT_MAX names index 0.
TEST_P(TosaArgmaxTest, LongRowsAndColumnsNameTheFirstLargestElement) {
  constexpr int64_t kRows = 4, kCols = 5000;
  std::string ir = R"(
func.func @am(%x: tensor<4x5000xf32>, %t: tensor<5000x40xf16>) -> (tensor<4xi32>, tensor<40xi32>) {
  %r = tosa.argmax %x {axis = 1 : i32} : (tensor<4x5000xf32>) -> tensor<4xi32>
  %c = tosa.argmax %t {axis = 0 : i32} : (tensor<5000x40xf16>) -> tensor<40xi32>
  return %r, %c : tensor<4xi32>, tensor<40xi32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "am");
  ASSERT_TRUE(kernel);
  const double nan = std::nan(""), inf = INFINITY;
  Buffer x(DType::F32, {kRows, kCols}), t(DType::F16, {kCols, 40});
  for (int64_t j = 0; j < kCols; ++j) {
    x.set(j, double((j * 37) % 101) - 50); // the largest, 50: j % 101 = 30
    x.set(kCols + j, nan);
    x.set(2 * kCols + j, -inf);
    x.set(3 * kCols + j, double((j * 11) % 17) - 20);
  }
  x.set(4321, 77); // a tie, the later one in a part far from the first
  x.set(1234, 77);
  x.set(kCols + 4000, 0.0);
  x.set(kCols + 3000, -0.0);
  x.set(3 * kCols + 4999, 9); // the last element only
  for (int64_t i = 0; i < t.size(); ++i)
    t.set(i, double((i * 13) % 29) - 14);
  for (int64_t c = 0; c < 40; ++c) {
    t.set((c * 97 + 11) % kCols * 40 + c, 100);
    t.set((c * 97 + 4011) % kCols * 40 + c, 100);
  }
  t.set(17 * 40 + 5, nan);
  std::vector<int32_t> rows(kRows, -1), cols(40, -1);
  ASSERT_EQ(errorText(kernel->run({x.ref(), t.ref()},
                                  {{rows.data(), DType::I32, {kRows}, {}},
                                   {cols.data(), DType::I32, {40}, {}}})),
            "");
  EXPECT_EQ(rows, (std::vector<int32_t>{1234, 3000, 0, 4999}));
  std::vector<int32_t> want;
  for (int64_t c = 0; c < 40; ++c)
    want.push_back(firstLargest(
        kCols, [&](int64_t j) { return t.get(j * 40 + c); }, -FLT_MAX));
  EXPECT_EQ(cols, want);
  EXPECT_EQ(cols[0], 11); // 100 at rows 11 and 4011 of column 0
}

// Integers: i8 rows of 3000 (TOSA starts from -128, which no element
// passes), the first of equal maxima.
TEST_P(TosaArgmaxTest, ArgmaxOfInt8RowsNamesTheFirstLargest) {
  std::string ir = R"(
func.func @am(%x: tensor<3x3000xi8>) -> tensor<3xi32> {
  %r = tosa.argmax %x {axis = 1 : i32} : (tensor<3x3000xi8>) -> tensor<3xi32>
  return %r : tensor<3xi32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "am");
  ASSERT_TRUE(kernel);
  std::vector<int8_t> x(3 * 3000, -128);
  for (int64_t j = 0; j < 3000; ++j)
    x[j] = int8_t((j * 7) % 200 - 100); // 99 at j = 57, 257, ...
  x[2999] = 127;
  x[2500] = 127;
  x[3000 + 1500] = -127; // row 1: -128 but for one element
  std::vector<int32_t> rows(3, -1);
  ASSERT_EQ(errorText(kernel->run({{x.data(), DType::I8, {3, 3000}, {}}},
                                  {{rows.data(), DType::I32, {3}, {}}})),
            "");
  EXPECT_EQ(rows, (std::vector<int32_t>{2500, 1500, 0}));
}

// An argmin as a linalg.generic (the comparison `olt`, from +FLT_MAX):
// the first smallest element of rows of 3000 and its value, NaN never
// taken.
TEST_P(TosaArgmaxTest, ArgminWrittenAsLinalgNamesTheFirstSmallest) {
  std::string ir = R"(
#row = affine_map<(d0, d1) -> (d0, d1)>
#res = affine_map<(d0, d1) -> (d0)>
func.func @amin(%x: tensor<2x3000xf32>) -> (tensor<2xi32>, tensor<2xf32>) {
  %i0 = tensor.empty() : tensor<2xi32>
  %z = arith.constant 0 : i32
  %i = linalg.fill ins(%z : i32) outs(%i0 : tensor<2xi32>) -> tensor<2xi32>
  %v0 = tensor.empty() : tensor<2xf32>
  %big = arith.constant 3.40282347E+38 : f32
  %v = linalg.fill ins(%big : f32) outs(%v0 : tensor<2xf32>) -> tensor<2xf32>
  %r:2 = linalg.generic {indexing_maps = [#row, #res, #res], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x3000xf32>) outs(%i, %v : tensor<2xi32>, tensor<2xf32>) {
  ^bb0(%in: f32, %oi: i32, %ov: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %lt = arith.cmpf olt, %in, %ov : f32
    %nv = arith.select %lt, %in, %ov : f32
    %ni = arith.select %lt, %ji, %oi : i32
    linalg.yield %ni, %nv : i32, f32
  } -> (tensor<2xi32>, tensor<2xf32>)
  return %r#0, %r#1 : tensor<2xi32>, tensor<2xf32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "amin");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F32, {2, 3000});
  for (int64_t j = 0; j < 3000; ++j) {
    x.set(j, double((j * 13) % 31) - 15); // -15 first at j = 0
    x.set(3000 + j, j % 3 ? std::nan("") : 1000.0 - double(j % 1000));
  }
  x.set(2222, -40);
  x.set(2777, -40);
  std::vector<int32_t> rows(2, -1);
  std::vector<float> values(2, -1.0f);
  ASSERT_EQ(
      errorText(kernel->run({x.ref()}, {{rows.data(), DType::I32, {2}, {}},
                                        {values.data(), DType::F32, {2}, {}}})),
      "");
  // Row 1: 1 at j = 999 (the first j % 1000 == 999 with j % 3 == 0).
  EXPECT_EQ(rows, (std::vector<int32_t>{2222, 999}));
  EXPECT_EQ(values, (std::vector<float>{-40.0f, 1.0f}));
}

// A bilinear resize to twice the size (less one), 4x4 to 7x7: each output
// is the mean of its one, two or four nearest inputs (weights 1 and 1/2:
// exact). On the GPU the kernel reads the input at computed positions and
// its vectors of 4 lanes cross the rows of 2 channels, so each lane needs
// its own loop indices.
TEST_P(TosaResizeTest, BilinearResizeAveragesTheNearestInputs) {
  std::string ir = R"(
func.func @resize(%x: tensor<1x4x4x2xf32>) -> tensor<1x7x7x2xf32> {
  %y = tosa.resize %x {border = array<i64: 0, 0>, mode = "BILINEAR", offset = array<i64: 0, 0>, scale = array<i64: 2, 1, 2, 1>} : (tensor<1x4x4x2xf32>) -> tensor<1x7x7x2xf32>
  return %y : tensor<1x7x7x2xf32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "resize");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F32, {1, 4, 4, 2}), y(DType::F32, {1, 7, 7, 2});
  for (int64_t i = 0; i < x.size(); ++i)
    x.set(i, pixel(0, i / 8, i / 2 % 4, i % 2));
  y.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref()}, {y.ref()})), "");
  std::vector<double> ref;
  for (int64_t h = 0; h < 7; ++h)
    for (int64_t w = 0; w < 7; ++w)
      for (int64_t c = 0; c < 2; ++c) {
        // Output h lies at input h / 2: on an input, or halfway between.
        auto at = [&](int64_t i, int64_t j) {
          return pixel(0, std::min<int64_t>(i, 3), std::min<int64_t>(j, 3), c);
        };
        double dy = h % 2 ? 0.5 : 0.0, dx = w % 2 ? 0.5 : 0.0;
        int64_t i = h / 2, j = w / 2;
        ref.push_back((at(i, j) * (1 - dx) + at(i, j + 1) * dx) * (1 - dy) +
                      (at(i + 1, j) * (1 - dx) + at(i + 1, j + 1) * dx) * dy);
      }
  EXPECT_EQ(y.toDoubles(), ref);
}

// tosa.rfft2d (two results, the real and imaginary parts, each a sum of
// products with cosines and sines over the whole input) against the DFT in
// float64.
TEST_P(TosaFFTTest, Rfft2dMatchesTheFloat64DFT) {
  std::string ir = R"(
func.func @rfft(%x: tensor<2x4x8xf32>) -> (tensor<2x4x5xf32>, tensor<2x4x5xf32>) {
  %re, %im = tosa.rfft2d %x : (tensor<2x4x8xf32>) -> (tensor<2x4x5xf32>, tensor<2x4x5xf32>)
  return %re, %im : tensor<2x4x5xf32>, tensor<2x4x5xf32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "rfft");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(3);
  Buffer x(DType::F32, {2, 4, 8}), re(DType::F32, {2, 4, 5}),
      im(DType::F32, {2, 4, 5});
  x.fillNormal(rng);
  re.fill(std::nan(""));
  im.fill(std::nan(""));
  ASSERT_EQ(errorText(kernel->run({x.ref()}, {re.ref(), im.ref()})), "");
  std::vector<double> refRe, refIm;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t u = 0; u < 4; ++u)
      for (int64_t v = 0; v < 5; ++v) {
        double sumRe = 0, sumIm = 0;
        for (int64_t h = 0; h < 4; ++h)
          for (int64_t w = 0; w < 8; ++w) {
            double angle = 2 * M_PI * (double(u * h) / 4 + double(v * w) / 8);
            sumRe += x.get((n * 4 + h) * 8 + w) * std::cos(angle);
            sumIm -= x.get((n * 4 + h) * 8 + w) * std::sin(angle);
          }
        refRe.push_back(sumRe);
        refIm.push_back(sumIm);
      }
  EXPECT_LE(relativeError(re.toDoubles(), refRe), 1e-5);
  EXPECT_LE(relativeError(im.toDoubles(), refIm), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaPoolingTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);
INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaWindowConvTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);
INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaArgmaxTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);
INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaResizeTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);
INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, TosaFFTTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);

} // namespace
