//===- IntegerTensorsTest.cpp - bool and integer tensors, end to end -*- C++
//-*-===//
//
// Part of normfuse. TOSA programs over bool, signed and unsigned integer
// tensors, as the ONNX importer writes them (unsigned tensors as uiN), with
// integer arguments and results: through the CPU JIT and the CUDA kernels
// in the simulator, op by op and after the fusion pipeline. Every result is
// exact, so each is compared with values computed here by C++'s own
// integer rules, element for element. Outputs are filled with a byte
// pattern first, so an element left unwritten fails the test.
//
//===----------------------------------------------------------------------===//

#include "JITTestUtils.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

using namespace nftest;
using normfuse::DType;
using normfuse::TensorRef;

namespace {

/// A tensor of T, described for the JIT; outputs start as 0xA5 bytes.
template <class T> struct Tensor {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<T> data;

  Tensor(DType dtype, std::vector<int64_t> shape, std::vector<T> values = {})
      : dtype(dtype), shape(std::move(shape)), data(std::move(values)) {
    int64_t n = 1;
    for (int64_t d : this->shape)
      n *= d;
    if (data.empty()) {
      data.resize(n);
      std::memset(static_cast<void *>(data.data()), 0xA5, n * sizeof(T));
    }
    EXPECT_EQ(int64_t(data.size()), n);
  }
  TensorRef ref() { return TensorRef{data.data(), dtype, shape, {}}; }
};

/// A bool as the JIT reads and writes it: one byte, 0 or 1.
using Bool = uint8_t;

class IntegerTensorsTest : public testing::TestWithParam<Run> {};

// Unsigned values order as unsigned: 200 > 100 though its bits are a
// negative i8's, in comparisons, maximum, minimum and reductions.
TEST_P(IntegerTensorsTest, UnsignedComparisonsAndExtremaOrderAsUnsigned) {
  std::string ir = R"(
func.func @f(%a: tensor<2x8xui8>, %b: tensor<2x8xui8>) -> (tensor<2x8xi1>, tensor<2x8xi1>, tensor<2x8xui8>, tensor<2x8xui8>, tensor<2x1xui8>, tensor<1x8xui8>) {
  %gt = tosa.greater %a, %b : (tensor<2x8xui8>, tensor<2x8xui8>) -> tensor<2x8xi1>
  %ge = tosa.greater_equal %a, %b : (tensor<2x8xui8>, tensor<2x8xui8>) -> tensor<2x8xi1>
  %max = tosa.maximum %a, %b : (tensor<2x8xui8>, tensor<2x8xui8>) -> tensor<2x8xui8>
  %min = tosa.minimum %a, %b : (tensor<2x8xui8>, tensor<2x8xui8>) -> tensor<2x8xui8>
  %rmax = tosa.reduce_max %a {axis = 1 : i32} : (tensor<2x8xui8>) -> tensor<2x1xui8>
  %rmin = tosa.reduce_min %b {axis = 0 : i32} : (tensor<2x8xui8>) -> tensor<1x8xui8>
  return %gt, %ge, %max, %min, %rmax, %rmin : tensor<2x8xi1>, tensor<2x8xi1>, tensor<2x8xui8>, tensor<2x8xui8>, tensor<2x1xui8>, tensor<1x8xui8>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "f");
  ASSERT_TRUE(kernel);
  Tensor<uint8_t> a(
      DType::U8, {2, 8},
      {0, 127, 128, 255, 200, 1, 129, 64, 3, 250, 7, 128, 0, 90, 255, 129});
  Tensor<uint8_t> b(
      DType::U8, {2, 8},
      {1, 128, 127, 254, 100, 1, 129, 200, 3, 5, 255, 127, 0, 91, 0, 130});
  Tensor<Bool> gt(DType::Bool, {2, 8}), ge(DType::Bool, {2, 8});
  Tensor<uint8_t> max(DType::U8, {2, 8}), min(DType::U8, {2, 8});
  Tensor<uint8_t> rmax(DType::U8, {2, 1}), rmin(DType::U8, {1, 8});
  ASSERT_EQ(errorText(kernel->run({a.ref(), b.ref()},
                                  {gt.ref(), ge.ref(), max.ref(), min.ref(),
                                   rmax.ref(), rmin.ref()})),
            "");
  for (int i = 0; i < 16; ++i) {
    uint8_t x = a.data[i], y = b.data[i];
    EXPECT_EQ(gt.data[i], Bool(x > y)) << i;
    EXPECT_EQ(ge.data[i], Bool(x >= y)) << i;
    EXPECT_EQ(max.data[i], std::max(x, y)) << i;
    EXPECT_EQ(min.data[i], std::min(x, y)) << i;
  }
  EXPECT_EQ(rmax.data, (std::vector<uint8_t>{255, 255}));
  EXPECT_EQ(rmin.data, (std::vector<uint8_t>{1, 5, 127, 127, 0, 1, 0, 130}));
}

// Add, sub and mul wrap modulo 2^N at every width, as C++'s unsigned
// arithmetic does (an i32 or i16 overflow is no undefined behaviour here).
TEST_P(IntegerTensorsTest, ArithmeticWrapsAtEveryWidth) {
  std::string ir = R"(
func.func @f(%a8: tensor<4xui8>, %b8: tensor<4xui8>, %a16: tensor<4xi16>, %a32: tensor<4xi32>, %b32: tensor<4xi32>, %a64: tensor<4xi64>) -> (tensor<4xui8>, tensor<4xi16>, tensor<4xi32>, tensor<4xi32>, tensor<4xi64>) {
  %s8 = tosa.add %a8, %b8 : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %p16 = tosa.mul %a16, %a16 {shift = 0 : i8} : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi16>
  %s32 = tosa.add %a32, %b32 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %p32 = tosa.mul %a32, %b32 {shift = 0 : i8} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %d64 = tosa.sub %a64, %a64 : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %n64 = tosa.negate %a64 : (tensor<4xi64>) -> tensor<4xi64>
  %r64 = tosa.add %d64, %n64 : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %s8, %p16, %s32, %p32, %r64 : tensor<4xui8>, tensor<4xi16>, tensor<4xi32>, tensor<4xi32>, tensor<4xi64>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "f");
  ASSERT_TRUE(kernel);
  const int32_t i32max = std::numeric_limits<int32_t>::max();
  const int64_t i64min = std::numeric_limits<int64_t>::min();
  Tensor<uint8_t> a8(DType::U8, {4}, {200, 255, 1, 128}),
      b8(DType::U8, {4}, {100, 1, 2, 128});
  Tensor<int16_t> a16(DType::I16, {4}, {32767, -32768, 181, -3});
  Tensor<int32_t> a32(DType::I32, {4}, {i32max, -7, 65536, 46341}),
      b32(DType::I32, {4}, {1, 3, 65536, 46341});
  Tensor<int64_t> a64(DType::I64, {4}, {i64min, 5, -1, int64_t(1) << 62});
  Tensor<uint8_t> s8(DType::U8, {4});
  Tensor<int16_t> p16(DType::I16, {4});
  Tensor<int32_t> s32(DType::I32, {4}), p32(DType::I32, {4});
  Tensor<int64_t> r64(DType::I64, {4});
  ASSERT_EQ(
      errorText(kernel->run(
          {a8.ref(), b8.ref(), a16.ref(), a32.ref(), b32.ref(), a64.ref()},
          {s8.ref(), p16.ref(), s32.ref(), p32.ref(), r64.ref()})),
      "");
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(s8.data[i], uint8_t(a8.data[i] + b8.data[i])) << i;
    EXPECT_EQ(p16.data[i], int16_t(uint32_t(a16.data[i]) * a16.data[i])) << i;
    EXPECT_EQ(s32.data[i], int32_t(uint32_t(a32.data[i]) + b32.data[i])) << i;
    EXPECT_EQ(p32.data[i], int32_t(uint32_t(a32.data[i]) * b32.data[i])) << i;
    EXPECT_EQ(r64.data[i], int64_t(0 - uint64_t(a64.data[i]))) << i;
  }
  // Spelled out: 200 + 100 wraps to 44, 32767^2 to 1, INT32_MAX + 1 to
  // INT32_MIN, 65536^2 to 0.
  EXPECT_EQ(s8.data[0], 44);
  EXPECT_EQ(p16.data[0], 1);
  EXPECT_EQ(s32.data[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(p32.data[2], 0);
}

// Bools are bytes of 0 and 1 at the boundary; logic, select, and the
// reductions over a row long enough for a block of warps (reduce_any,
// reduce_all, and reduce_max, which is an or).
TEST_P(IntegerTensorsTest, BoolLogicSelectsAndRowReductions) {
  std::string ir = R"(
func.func @f(%p: tensor<3x3000xi1>, %q: tensor<3x3000xi1>, %x: tensor<3x3000xi32>) -> (tensor<3x3000xi1>, tensor<3x3000xi32>, tensor<3x1xi1>, tensor<3x1xi1>, tensor<3x1xi1>) {
  %and = tosa.logical_and %p, %q : (tensor<3x3000xi1>, tensor<3x3000xi1>) -> tensor<3x3000xi1>
  %np = tosa.logical_not %p : (tensor<3x3000xi1>) -> tensor<3x3000xi1>
  %xor = tosa.logical_xor %and, %np : (tensor<3x3000xi1>, tensor<3x3000xi1>) -> tensor<3x3000xi1>
  %zero = "tosa.const"() <{value = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %sel = tosa.select %q, %x, %zero : (tensor<3x3000xi1>, tensor<3x3000xi32>, tensor<1x1xi32>) -> tensor<3x3000xi32>
  %any = tosa.reduce_any %p {axis = 1 : i32} : (tensor<3x3000xi1>) -> tensor<3x1xi1>
  %all = tosa.reduce_all %q {axis = 1 : i32} : (tensor<3x3000xi1>) -> tensor<3x1xi1>
  %max = tosa.reduce_max %p {axis = 1 : i32} : (tensor<3x3000xi1>) -> tensor<3x1xi1>
  return %xor, %sel, %any, %all, %max : tensor<3x3000xi1>, tensor<3x3000xi32>, tensor<3x1xi1>, tensor<3x1xi1>, tensor<3x1xi1>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "f");
  ASSERT_TRUE(kernel);
  const int64_t n = 3 * 3000;
  std::mt19937 rng(7);
  Tensor<Bool> p(DType::Bool, {3, 3000}, std::vector<Bool>(n, 0)),
      q(DType::Bool, {3, 3000}, std::vector<Bool>(n, 1));
  Tensor<int32_t> x(DType::I32, {3, 3000}, std::vector<int32_t>(n));
  for (int64_t i = 0; i < n; ++i)
    x.data[i] = int32_t(rng());
  // Row 0: p all false, q all true. Row 1: one true p at the very end, one
  // false q in the middle. Row 2: random.
  p.data[2 * 3000 - 1] = 1;
  q.data[3000 + 1500] = 0;
  for (int64_t i = 2 * 3000; i < n; ++i) {
    p.data[i] = rng() & 1;
    q.data[i] = rng() & 1;
  }
  Tensor<Bool> xr(DType::Bool, {3, 3000}), any(DType::Bool, {3, 1}),
      all(DType::Bool, {3, 1}), max(DType::Bool, {3, 1});
  Tensor<int32_t> sel(DType::I32, {3, 3000});
  ASSERT_EQ(errorText(kernel->run(
                {p.ref(), q.ref(), x.ref()},
                {xr.ref(), sel.ref(), any.ref(), all.ref(), max.ref()})),
            "");
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(xr.data[i], Bool((p.data[i] && q.data[i]) != !p.data[i])) << i;
    ASSERT_EQ(sel.data[i], q.data[i] ? x.data[i] : 0) << i;
  }
  for (int r = 0; r < 3; ++r) {
    bool anyP = false, allQ = true;
    for (int64_t i = 0; i < 3000; ++i) {
      anyP |= p.data[r * 3000 + i];
      allQ &= bool(q.data[r * 3000 + i]);
    }
    EXPECT_EQ(any.data[r], Bool(anyP)) << r;
    EXPECT_EQ(max.data[r], Bool(anyP)) << r;
    EXPECT_EQ(all.data[r], Bool(allQ)) << r;
  }
  EXPECT_EQ(any.data, (std::vector<Bool>{0, 1, 1}));
  EXPECT_EQ(all.data[0], 1);
  EXPECT_EQ(all.data[1], 0);
}

// Casts keep values: from unsigned integers by zero extension and
// unsigned conversion; to unsigned integers from floats rounding to
// nearest even and saturating (NaN to 0), from signed integers modulo 2^N;
// to bool as x != 0.
TEST_P(IntegerTensorsTest, CastsConvertUnsignedValuesAsUnsigned) {
  std::string ir = R"(
func.func @f(%u8: tensor<8xui8>, %f: tensor<8xf32>, %i8: tensor<8xi8>, %u32: tensor<8xui32>) -> (tensor<8xf32>, tensor<8xi32>, tensor<8xui8>, tensor<8xui16>, tensor<8xi1>, tensor<8xf32>, tensor<8xui8>) {
  %a = tosa.cast %u8 : (tensor<8xui8>) -> tensor<8xf32>
  %b = tosa.cast %u8 : (tensor<8xui8>) -> tensor<8xi32>
  %c = tosa.cast %f : (tensor<8xf32>) -> tensor<8xui8>
  %d = tosa.cast %i8 : (tensor<8xi8>) -> tensor<8xui16>
  %e = tosa.cast %i8 : (tensor<8xi8>) -> tensor<8xi1>
  %g = tosa.cast %u32 : (tensor<8xui32>) -> tensor<8xf32>
  %h = tosa.cast %u32 : (tensor<8xui32>) -> tensor<8xui8>
  return %a, %b, %c, %d, %e, %g, %h : tensor<8xf32>, tensor<8xi32>, tensor<8xui8>, tensor<8xui16>, tensor<8xi1>, tensor<8xf32>, tensor<8xui8>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "f");
  ASSERT_TRUE(kernel);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor<uint8_t> u8(DType::U8, {8}, {0, 1, 127, 128, 200, 255, 254, 7});
  Tensor<float> f(DType::F32, {8},
                  {-1.5f, nan, 2.5f, 3.5f, 255.4f, 255.6f, 1e9f, 0.49f});
  Tensor<int8_t> i8(DType::I8, {8}, {-1, 0, 1, -128, 127, 2, -2, 64});
  Tensor<uint32_t> u32(
      DType::U32, {8},
      {0, 1, 4000000000u, 4294967295u, 300, 2147483648u, 255, 256});
  Tensor<float> a(DType::F32, {8}), g(DType::F32, {8});
  Tensor<int32_t> b(DType::I32, {8});
  Tensor<uint8_t> c(DType::U8, {8}), h(DType::U8, {8});
  Tensor<uint16_t> d(DType::U16, {8});
  Tensor<Bool> e(DType::Bool, {8});
  ASSERT_EQ(errorText(kernel->run({u8.ref(), f.ref(), i8.ref(), u32.ref()},
                                  {a.ref(), b.ref(), c.ref(), d.ref(), e.ref(),
                                   g.ref(), h.ref()})),
            "");
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(a.data[i], float(u8.data[i])) << i;
    EXPECT_EQ(b.data[i], int32_t(u8.data[i])) << i;
    EXPECT_EQ(d.data[i], uint16_t(i8.data[i])) << i;
    EXPECT_EQ(e.data[i], Bool(i8.data[i] != 0)) << i;
    EXPECT_EQ(g.data[i], float(u32.data[i])) << i;
    EXPECT_EQ(h.data[i], uint8_t(u32.data[i])) << i;
  }
  EXPECT_EQ(c.data, (std::vector<uint8_t>{0, 0, 2, 4, 255, 255, 255, 0}));
}

// Integer sums are exact in their own type: int64 values near 2^60 (which
// a float64 sum would round) over a row, on every schedule of reductions
// (a warp per row, a block per row, a thread per column).
TEST_P(IntegerTensorsTest, IntegerSumsAreExact) {
  std::string ir = R"(
func.func @f(%x: tensor<4x2500xi64>, %y: tensor<300x6xi16>) -> (tensor<4x1xi64>, tensor<1x2500xi64>, tensor<300x1xi16>) {
  %rows = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x2500xi64>) -> tensor<4x1xi64>
  %cols = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<4x2500xi64>) -> tensor<1x2500xi64>
  %prods = tosa.reduce_prod %y {axis = 1 : i32} : (tensor<300x6xi16>) -> tensor<300x1xi16>
  return %rows, %cols, %prods : tensor<4x1xi64>, tensor<1x2500xi64>, tensor<300x1xi16>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "f");
  ASSERT_TRUE(kernel);
  std::mt19937_64 rng(3);
  Tensor<int64_t> x(DType::I64, {4, 2500}, std::vector<int64_t>(10000));
  for (int64_t &v : x.data)
    v = (int64_t(1) << 60) + int64_t(rng() % 4096) - 2048;
  Tensor<int16_t> y(DType::I16, {300, 6}, std::vector<int16_t>(1800));
  for (int16_t &v : y.data)
    v = int16_t(int(rng() % 41) - 20);
  Tensor<int64_t> rows(DType::I64, {4, 1}), cols(DType::I64, {1, 2500});
  Tensor<int16_t> prods(DType::I16, {300, 1});
  ASSERT_EQ(errorText(kernel->run({x.ref(), y.ref()},
                                  {rows.ref(), cols.ref(), prods.ref()})),
            "");
  for (int r = 0; r < 4; ++r) {
    uint64_t sum = 0;
    for (int64_t i = 0; i < 2500; ++i)
      sum += uint64_t(x.data[r * 2500 + i]);
    EXPECT_EQ(rows.data[r], int64_t(sum)) << r;
  }
  for (int64_t c = 0; c < 2500; ++c) {
    uint64_t sum = 0;
    for (int r = 0; r < 4; ++r)
      sum += uint64_t(x.data[r * 2500 + c]);
    ASSERT_EQ(cols.data[c], int64_t(sum)) << c;
  }
  for (int r = 0; r < 300; ++r) {
    uint32_t prod = 1;
    for (int i = 0; i < 6; ++i)
      prod *= uint32_t(y.data[r * 6 + i]);
    ASSERT_EQ(prods.data[r], int16_t(prod)) << r;
  }
}

// Integer division never traps (x86's idiv faults on a zero divisor and on
// INT_MIN / -1, and took the process with it): x / 0 and x % 0 are 0,
// INT_MIN / -1 wraps to INT_MIN with remainder 0, on every target alike.
// Reductions over an outer and a middle axis: on the CUDA kernels a block
// per 32 neighbouring results, a lane each, its warps sharing each result's
// elements (37 results: a second group of 5; 15 results of 2000 elements:
// one block of 32 warps). Integer sums wrap exactly whatever the order;
// float sums are kept in f64.
TEST_P(IntegerTensorsTest, ReductionsOverOuterAxesAreExact) {
  std::string ir = R"(
func.func @f(%x: tensor<1000x37xi32>, %y: tensor<3x2000x5xi32>, %z: tensor<700x9xf32>) -> (tensor<1x37xi32>, tensor<3x1x5xi32>, tensor<1x9xf32>) {
  %s = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<1000x37xi32>) -> tensor<1x37xi32>
  %m = tosa.reduce_max %y {axis = 1 : i32} : (tensor<3x2000x5xi32>) -> tensor<3x1x5xi32>
  %f = tosa.reduce_sum %z {axis = 0 : i32} : (tensor<700x9xf32>) -> tensor<1x9xf32>
  return %s, %m, %f : tensor<1x37xi32>, tensor<3x1x5xi32>, tensor<1x9xf32>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "f");
  ASSERT_TRUE(kernel);
  std::mt19937 rng(11);
  Tensor<int32_t> x(DType::I32, {1000, 37}), y(DType::I32, {3, 2000, 5});
  Tensor<float> z(DType::F32, {700, 9});
  for (int32_t &v : x.data)
    v = int32_t(rng());
  for (int32_t &v : y.data)
    v = int32_t(rng());
  std::normal_distribution<float> normal(1.0f, 3.0f);
  for (float &v : z.data)
    v = normal(rng);
  Tensor<int32_t> sums(DType::I32, {1, 37}), maxes(DType::I32, {3, 1, 5});
  Tensor<float> fsums(DType::F32, {1, 9});
  ASSERT_EQ(errorText(kernel->run({x.ref(), y.ref(), z.ref()},
                                  {sums.ref(), maxes.ref(), fsums.ref()})),
            "");
  for (int64_t c = 0; c < 37; ++c) {
    uint32_t want = 0;
    for (int64_t r = 0; r < 1000; ++r)
      want += uint32_t(x.data[r * 37 + c]);
    EXPECT_EQ(sums.data[c], int32_t(want)) << c;
  }
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t c = 0; c < 5; ++c) {
      int32_t want = INT32_MIN;
      for (int64_t r = 0; r < 2000; ++r)
        want = std::max(want, y.data[(b * 2000 + r) * 5 + c]);
      EXPECT_EQ(maxes.data[b * 5 + c], want) << b << ", " << c;
    }
  for (int64_t c = 0; c < 9; ++c) {
    double want = 0;
    for (int64_t r = 0; r < 700; ++r)
      want += z.data[r * 9 + c];
    // The f64 sum, rounded once to f32.
    EXPECT_EQ(fsums.data[c], float(want)) << c;
  }
}

TEST_P(IntegerTensorsTest, DivisionByZeroAndOverflowHaveAnswers) {
  std::string ir = R"(
func.func @f(%a: tensor<6xi32>, %b: tensor<6xi32>, %c: tensor<6xi8>, %d: tensor<6xi8>) -> (tensor<6xi32>, tensor<6xi8>, tensor<6xi8>) {
  %q = tosa.int_div %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %r = arith.remsi %c, %d : tensor<6xi8>
  %u = arith.divui %c, %d : tensor<6xi8>
  return %q, %r, %u : tensor<6xi32>, tensor<6xi8>, tensor<6xi8>
}
)";
  auto kernel = compileForRun(GetParam(), ir, "f");
  ASSERT_TRUE(kernel);
  const int32_t i32min = std::numeric_limits<int32_t>::min();
  Tensor<int32_t> a(DType::I32, {6}, {7, -8, i32min, 5, 0, i32min}),
      b(DType::I32, {6}, {2, 3, -1, 0, 0, 1});
  Tensor<int8_t> c(DType::I8, {6}, {7, -128, -128, 5, -7, -1}),
      d(DType::I8, {6}, {2, -1, 0, 3, 2, 16});
  Tensor<int32_t> q(DType::I32, {6});
  Tensor<int8_t> r(DType::I8, {6}), u(DType::I8, {6});
  ASSERT_EQ(errorText(kernel->run({a.ref(), b.ref(), c.ref(), d.ref()},
                                  {q.ref(), r.ref(), u.ref()})),
            "");
  EXPECT_EQ(q.data, (std::vector<int32_t>{3, -2, i32min, 0, 0, i32min}));
  EXPECT_EQ(r.data, (std::vector<int8_t>{1, 0, 0, 2, -1, -1}));
  // Unsigned: 0x80 / 0xff = 0, 0xf9 / 2 = 124, 0xff / 16 = 15.
  EXPECT_EQ(u.data, (std::vector<int8_t>{3, 0, 0, 1, 124, 15}));
}

INSTANTIATE_TEST_SUITE_P(CpuAndCudaSim, IntegerTensorsTest,
                         testing::Values(Run::CPU, Run::CUDASimOpByOp,
                                         Run::CUDASimFused),
                         runName);

} // namespace
