//===- SoftFloat.cpp - narrowing float conversions the JIT calls -*- C++ -*-=//
//
// Part of normfuse. See SoftFloat.h.
//
//===----------------------------------------------------------------------===//

#include "SoftFloat.h"

#include <cmath>
#include <cstdint>
#include <cstring>

using namespace normfuse;
using namespace normfuse::jit;

template <typename To, typename From> static To bitCast(From from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

uint16_t jit::truncateFloatToBFloat16Bits(float value) {
  uint32_t bits = bitCast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((bits >> 16) | 0x40u);
  return uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

/// `value` rounded to f32 by rounding to odd (truncated toward zero, the
/// last bit set where anything was cut off). f32 keeps more than two bits
/// beyond bf16's and f16's precision, so a second rounding from this f32
/// to either gives what rounding `value` once would.
static float roundToOddFloat(double value) {
  float narrowed = static_cast<float>(value);
  if (std::isfinite(narrowed) && static_cast<double>(narrowed) != value) {
    if (std::fabs(static_cast<double>(narrowed)) > std::fabs(value))
      narrowed = std::nextafter(narrowed, 0.0f);
    narrowed = bitCast<float>(bitCast<uint32_t>(narrowed) | 1u);
  }
  return narrowed;
}

uint16_t jit::truncateDoubleToBFloat16Bits(double value) {
  return truncateFloatToBFloat16Bits(roundToOddFloat(value));
}

uint16_t jit::truncateFloatToHalfBits(float value) {
  uint32_t bits = bitCast<uint32_t>(value);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN: quiet, with the top payload bits
    return uint16_t(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x477ff000u) // 65520 and up round to infinity
    return uint16_t(sign | 0x7c00u);
  if (magnitude >= 0x38800000u) { // a normal f16 (2^-14 and up)
    uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
    return uint16_t(sign | ((rounded - 0x38000000u) >> 13));
  }
  // Subnormal or zero: a multiple of 2^-24, rounded to nearest even in
  // the current (nearest-even) rounding mode; 2^24 scales exactly.
  float scaled = std::fabs(value) * 16777216.0f;
  return uint16_t(sign | uint16_t(std::nearbyint(scaled)));
}

uint16_t jit::truncateDoubleToHalfBits(double value) {
  return truncateFloatToHalfBits(roundToOddFloat(value));
}

float jit::extendHalfBitsToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) // infinity or NaN
    return bitCast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact
    float magnitude = std::ldexp(float(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return bitCast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// The helpers under compiler-rt's names and calling convention (__bf16 and
// _Float16 values in SSE registers).
static __bf16 truncsfbf2(float value) {
  return bitCast<__bf16>(truncateFloatToBFloat16Bits(value));
}
static __bf16 truncdfbf2(double value) {
  return bitCast<__bf16>(truncateDoubleToBFloat16Bits(value));
}
static _Float16 truncsfhf2(float value) {
  return bitCast<_Float16>(truncateFloatToHalfBits(value));
}
static _Float16 truncdfhf2(double value) {
  return bitCast<_Float16>(truncateDoubleToHalfBits(value));
}
static float extendhfsf2(_Float16 value) {
  return extendHalfBitsToFloat(bitCast<uint16_t>(value));
}

void jit::addSoftFloatSymbols(llvm::orc::SymbolMap &symbols,
                              llvm::orc::MangleAndInterner &interner) {
  auto add = [&](const char *name, auto *fn) {
    symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                               llvm::JITSymbolFlags::Exported};
  };
  add("__truncsfbf2", &truncsfbf2);
  add("__truncdfbf2", &truncdfbf2);
  add("__truncsfhf2", &truncsfhf2);
  add("__truncdfhf2", &truncdfhf2);
  add("__extendhfsf2", &extendhfsf2);
}
