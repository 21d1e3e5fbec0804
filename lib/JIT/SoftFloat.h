//===- SoftFloat.h - narrowing float conversions the JIT calls --*- C++ -*-===//
//
// Part of normfuse. Where the CPU has no instruction for a conversion to or
// from bf16 or f16 (bf16 on x86 without AVX512-BF16; f64 -> f16 anywhere),
// LLVM calls compiler-rt's helpers by name (__truncsfbf2, __truncdfhf2,
// ...). libgcc lacks some, and a host that loads normfuse privately (the
// Python module) exposes none, so the JIT defines them itself.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_JIT_SOFTFLOAT_H
#define NORMFUSE_LIB_JIT_SOFTFLOAT_H

#include "llvm/ExecutionEngine/Orc/Mangling.h"

namespace normfuse::jit {

/// Adds the conversions, under compiler-rt's names, to `symbols`.
void addSoftFloatSymbols(llvm::orc::SymbolMap &symbols,
                         llvm::orc::MangleAndInterner &interner);

/// The conversions themselves, for tests: each rounds to nearest even
/// once (no double rounding from f64), keeps NaN a quiet NaN and
/// saturates to infinity.
uint16_t truncateFloatToBFloat16Bits(float value);
uint16_t truncateDoubleToBFloat16Bits(double value);
uint16_t truncateFloatToHalfBits(float value);
uint16_t truncateDoubleToHalfBits(double value);
float extendHalfBitsToFloat(uint16_t bits);

} // namespace normfuse::jit

#endif // NORMFUSE_LIB_JIT_SOFTFLOAT_H
