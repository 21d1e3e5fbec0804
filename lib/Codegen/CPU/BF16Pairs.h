//===- BF16Pairs.h - bf16 rows as even and odd lanes ------------*- C++ -*-===//
//
// Part of normfuse. A CPU without AVX512-BF16 widens bf16 to f32 by a
// 16-bit shift and rounds f32 to bf16 in integer arithmetic. Done lane by
// lane, both take shuffles (zero-extension; shift, pack and permute),
// which run on two of Zen 3's four vector pipes and bound a bf16 norm.
// Viewing 2w consecutive bf16 elements as w 32-bit words instead, the
// even-indexed elements are the words shifted left by 16 and the odd ones
// the words with their low halves cleared, and rounded results merge back
// into words the same way: one shift per w elements each way, no shuffle.
// Loops that use these pairs must not mind the lane order: sums, and maps
// whose per-column operands come in the same pair layout.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_CODEGEN_CPU_BF16PAIRS_H
#define NORMFUSE_LIB_CODEGEN_CPU_BF16PAIRS_H

#include "mlir/IR/Builders.h"

namespace mlir::nf::cpu {

/// Loads bf16 elements [j, j + 2 * width) of a row of `buffer`, where j is
/// the last of `indices`, as two f32 vectors of `width` lanes: the
/// even-indexed elements and the odd-indexed ones.
std::pair<Value, Value> loadBF16Pairs(OpBuilder &b, Location loc, Value buffer,
                                      ValueRange indices, int64_t width);

/// Rounds the f32 vectors `even` and `odd` to bf16 (to nearest even, a NaN
/// to 0x7FC0, the bits of arith.truncf) and stores them interleaved as
/// elements [j, j + 2 * width) of `buffer` (non-temporal when `streaming`).
/// With `noNaN` (the caller knows the values hold no NaN) the NaN case is
/// left out, which saves two instructions per vector.
void storeBF16Pairs(OpBuilder &b, Location loc, Value even, Value odd,
                    Value buffer, ValueRange indices, bool streaming,
                    bool noNaN = false);

/// A scratch copy of the (n) f32 buffer `param` in pair layout: each whole
/// block of 2 * width elements holds its even-indexed elements, then its
/// odd-indexed ones; the elements after the last whole block are copied as
/// they are. Vector loads at 2kw and 2kw + w then give the operands of the
/// even and odd lanes of block k.
Value copyInPairLayout(OpBuilder &b, Location loc, Value param, Value n,
                       int64_t width);

} // namespace mlir::nf::cpu

#endif // NORMFUSE_LIB_CODEGEN_CPU_BF16PAIRS_H
