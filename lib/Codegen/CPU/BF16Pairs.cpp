//===- BF16Pairs.cpp - bf16 rows as even and odd lanes ----------*- C++ -*-===//
//
// Part of normfuse. See BF16Pairs.h.
//
//===----------------------------------------------------------------------===//

#include "BF16Pairs.h"
#include "LoopUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;

static Value wordConstant(OpBuilder &b, Location loc, uint32_t value,
                          VectorType type) {
  return b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(
               type, b.getIntegerAttr(type.getElementType(),
                                      static_cast<int32_t>(value))));
}

std::pair<Value, Value> cpu::loadBF16Pairs(OpBuilder &b, Location loc,
                                           Value buffer, ValueRange indices,
                                           int64_t width) {
  auto words = VectorType::get({width}, b.getI32Type());
  auto f32s = VectorType::get({width}, b.getF32Type());
  Value raw = b.create<vector::LoadOp>(
      loc, VectorType::get({2 * width}, b.getBF16Type()), buffer, indices);
  Value w = b.create<vector::BitCastOp>(loc, words, raw);
  Value even = b.create<arith::ShLIOp>(loc, w, wordConstant(b, loc, 16, words));
  Value odd =
      b.create<arith::AndIOp>(loc, w, wordConstant(b, loc, 0xFFFF0000, words));
  return {b.create<arith::BitcastOp>(loc, f32s, even),
          b.create<arith::BitcastOp>(loc, f32s, odd)};
}

void cpu::storeBF16Pairs(OpBuilder &b, Location loc, Value even, Value odd,
                         Value buffer, ValueRange indices, bool streaming,
                         bool noNaN) {
  Value evenWords = roundedBF16Words(b, loc, even, noNaN);
  Value oddWords = roundedBF16Words(b, loc, odd, noNaN);
  auto words = cast<VectorType>(evenWords.getType());
  Value low =
      b.create<arith::ShRUIOp>(loc, evenWords, wordConstant(b, loc, 16, words));
  Value high = b.create<arith::AndIOp>(loc, oddWords,
                                       wordConstant(b, loc, 0xFFFF0000, words));
  Value merged = b.create<vector::BitCastOp>(
      loc, VectorType::get({2 * words.getNumElements()}, b.getBF16Type()),
      b.create<arith::OrIOp>(loc, low, high));
  b.create<vector::StoreOp>(loc, merged, buffer, indices,
                            streaming ? b.getBoolAttr(true) : BoolAttr());
}

Value cpu::copyInPairLayout(OpBuilder &b, Location loc, Value param, Value n,
                            int64_t width) {
  Value copy = allocScratch(b, loc, {n}, b.getF32Type());
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value block = b.create<arith::ConstantIndexOp>(loc, 2 * width);
  Value blocksEnd =
      b.create<arith::SubIOp>(loc, n, b.create<arith::RemUIOp>(loc, n, block));
  SmallVector<int64_t> evens, odds;
  for (int64_t i = 0; i < width; ++i) {
    evens.push_back(2 * i);
    odds.push_back(2 * i + 1);
  }
  b.create<scf::ForOp>(
      loc, zero, blocksEnd, block, std::nullopt,
      [&](OpBuilder &fb, Location fl, Value j, ValueRange) {
        Value v = loadAs(fb, fl, param, j, 2 * width, fb.getF32Type());
        Value oddAt = fb.create<arith::AddIOp>(
            fl, j, fb.create<arith::ConstantIndexOp>(fl, width));
        fb.create<vector::StoreOp>(
            fl, fb.create<vector::ShuffleOp>(fl, v, v, evens), copy, j);
        fb.create<vector::StoreOp>(
            fl, fb.create<vector::ShuffleOp>(fl, v, v, odds), copy, oddAt);
        fb.create<scf::YieldOp>(fl);
      });
  b.create<scf::ForOp>(
      loc, blocksEnd, n, one, std::nullopt,
      [&](OpBuilder &fb, Location fl, Value j, ValueRange) {
        storeAs(fb, fl, loadAs(fb, fl, param, j, 1, fb.getF32Type()), copy, j);
        fb.create<scf::YieldOp>(fl);
      });
  return copy;
}
