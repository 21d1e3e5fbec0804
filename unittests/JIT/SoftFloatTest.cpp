//===- SoftFloatTest.cpp - the JIT's own float conversions ------*- C++ -*-===//
//
// Part of normfuse. The conversions the JIT defines under compiler-rt's
// names (SoftFloat.h) against LLVM's APFloat, which rounds IEEE-correctly:
// every f16 value, every rounding boundary around each f16 and bf16 step,
// and a million random f32 and f64 bit patterns.
//
//===----------------------------------------------------------------------===//

#include "SoftFloat.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace normfuse::jit;

namespace {

uint16_t reference(double value, const llvm::fltSemantics &to) {
  llvm::APFloat f(value);
  bool lost;
  f.convert(to, llvm::APFloat::rmNearestTiesToEven, &lost);
  return uint16_t(f.bitcastToAPInt().getZExtValue());
}

uint16_t referenceHalf(double value) {
  return reference(value, llvm::APFloat::IEEEhalf());
}

uint16_t referenceBFloat(double value) {
  return reference(value, llvm::APFloat::BFloat());
}

double halfValue(uint16_t bits) {
  return llvm::APFloat(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits))
      .convertToDouble();
}

bool isNaNHalf(uint16_t bits) {
  return (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu);
}

float floatOf(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

double doubleOf(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

} // namespace

TEST(SoftFloatTest, EveryHalfExtendsExactlyAndTruncatesBack) {
  for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
    float extended = extendHalfBitsToFloat(uint16_t(bits));
    if (isNaNHalf(uint16_t(bits))) {
      ASSERT_TRUE(std::isnan(extended)) << bits;
      ASSERT_TRUE(isNaNHalf(truncateFloatToHalfBits(extended))) << bits;
      continue;
    }
    ASSERT_EQ(double(extended), halfValue(uint16_t(bits))) << bits;
    ASSERT_EQ(truncateFloatToHalfBits(extended), bits) << bits;
    ASSERT_EQ(truncateDoubleToHalfBits(double(extended)), bits) << bits;
  }
}

TEST(SoftFloatTest, HalfwayCasesBetweenHalvesRoundToEven) {
  // Midpoints between neighbouring finite halves, and the doubles just
  // either side of them (a double rounding through f32 would get these
  // wrong), in both signs, subnormals included.
  for (uint32_t bits = 0; bits < 0x7bffu; ++bits) {
    for (double sign : {1.0, -1.0}) {
      double mid = sign *
                   (halfValue(uint16_t(bits)) + halfValue(uint16_t(bits + 1))) /
                   2;
      for (double x :
           {mid, std::nextafter(mid, 0.0), std::nextafter(mid, sign * 1e9)}) {
        ASSERT_EQ(truncateDoubleToHalfBits(x), referenceHalf(x)) << x;
        if (double(float(x)) == x)
          ASSERT_EQ(truncateFloatToHalfBits(float(x)), referenceHalf(x)) << x;
      }
    }
  }
}

TEST(SoftFloatTest, OverflowSaturatesToInfinityAndNaNStaysNaN) {
  EXPECT_EQ(truncateFloatToHalfBits(65504.0f), 0x7bffu);
  EXPECT_EQ(truncateFloatToHalfBits(65519.996f), 0x7bffu);
  EXPECT_EQ(truncateFloatToHalfBits(65520.0f), 0x7c00u);
  EXPECT_EQ(truncateDoubleToHalfBits(-1e300), 0xfc00u);
  EXPECT_EQ(truncateFloatToHalfBits(std::numeric_limits<float>::infinity()),
            0x7c00u);
  EXPECT_TRUE(isNaNHalf(
      truncateDoubleToHalfBits(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_EQ(truncateDoubleToBFloat16Bits(-0.0), 0x8000u);
  EXPECT_EQ(truncateDoubleToHalfBits(-0.0), 0x8000u);
}

TEST(SoftFloatTest, RandomFloatsAndDoublesRoundOnceToNearestEven) {
  std::mt19937_64 rng(20261126);
  for (int i = 0; i < 1000000; ++i) {
    uint64_t bits = rng();
    double d = doubleOf(bits);
    // Most random doubles are far outside f16's range: also draw ones of
    // f16's exponents (2^-26 to 2^17).
    double near =
        std::ldexp(1.0 + double(bits >> 12) * 0x1p-52, int(bits % 44) - 26) *
        ((bits >> 11) & 1 ? -1 : 1);
    float f = floatOf(uint32_t(bits >> 32));
    for (double x : {d, near}) {
      if (std::isnan(x))
        continue;
      ASSERT_EQ(truncateDoubleToHalfBits(x), referenceHalf(x)) << x;
      ASSERT_EQ(truncateDoubleToBFloat16Bits(x), referenceBFloat(x)) << x;
    }
    if (!std::isnan(f)) {
      ASSERT_EQ(truncateFloatToHalfBits(f), referenceHalf(f)) << f;
      ASSERT_EQ(truncateFloatToBFloat16Bits(f), referenceBFloat(f)) << f;
    }
  }
}
