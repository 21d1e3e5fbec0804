//===- LoopUtils.cpp - building blocks of the nf loop lowering --*- C++ -*-===//
//
// Part of normfuse. See LoopUtils.h.
//
//===----------------------------------------------------------------------===//

#include "LoopUtils.h"
#include "normfuse/Codegen/CPU/Schedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::nf;

Value cpu::reshapeBuffer(OpBuilder &b, Location loc, Value buffer,
                         ArrayRef<Value> sizes) {
  auto type = cast<MemRefType>(buffer.getType());
  // Row-major strides, folded to constants where the sizes are: the result
  // then has the identity layout of its (partly static) shape.
  SmallVector<OpFoldResult> ofrSizes, ofrStrides(sizes.size());
  Value stride = b.create<arith::ConstantIndexOp>(loc, 1);
  for (int64_t i = sizes.size() - 1; i >= 0; --i) {
    ofrStrides[i] = getAsOpFoldResult(stride);
    stride = b.createOrFold<arith::MulIOp>(loc, stride, sizes[i]);
  }
  SmallVector<int64_t> shape;
  for (Value s : sizes) {
    ofrSizes.push_back(getAsOpFoldResult(s));
    std::optional<int64_t> c = getConstantIntValue(ofrSizes.back());
    shape.push_back(c ? *c : ShapedType::kDynamic);
  }
  auto viewType = MemRefType::get(shape, type.getElementType());
  return b.create<memref::ReinterpretCastOp>(
      loc, viewType, buffer, b.getIndexAttr(0), ofrSizes, ofrStrides);
}

/// `element` in the shape of `like` (a scalar or a vector).
static Type shapedLike(Type like, Type element) {
  if (auto vec = dyn_cast<VectorType>(like))
    return VectorType::get(vec.getShape(), element);
  return element;
}

/// A scalar or splat-vector integer constant of `type`.
static Value intConstant(OpBuilder &b, Location loc, int64_t value, Type type) {
  auto attr = b.getIntegerAttr(getElementTypeOrSelf(type), value);
  if (auto vec = dyn_cast<VectorType>(type))
    return b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(vec, attr));
  return b.create<arith::ConstantOp>(loc, attr);
}

Value cpu::roundedBF16Words(OpBuilder &b, Location loc, Value v, bool noNaN) {
  Type i32 = shapedLike(v.getType(), b.getI32Type());
  auto c = [&](int64_t value) { return intConstant(b, loc, value, i32); };
  // A NaN becomes 0x7FC00000 first, which then rounds to 0x7FC0.
  Value isNaN, quietNaN;
  if (!noNaN) {
    isNaN = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, v, v);
    quietNaN = c(0x7FC00000);
  }
  Value bits = b.create<arith::BitcastOp>(loc, i32, v);
  if (!noNaN)
    bits = b.create<arith::SelectOp>(loc, isNaN, quietNaN, bits);
  // Adding 0x7FFF plus the lowest kept bit rounds the dropped 16 bits to
  // nearest even; a carry out of the mantissa correctly raises the exponent
  // (up to infinity). Written as 0x8000, less one where that bit is clear:
  // a compare gives the -1 without the shift that extracting the bit takes.
  Value keptBitClear = b.create<arith::CmpIOp>(
      loc, arith::CmpIPredicate::eq,
      b.create<arith::AndIOp>(loc, bits, c(0x10000)), c(0));
  Value minusOne = b.create<arith::ExtSIOp>(loc, i32, keptBitClear);
  return b.create<arith::AddIOp>(
      loc, b.create<arith::AddIOp>(loc, bits, c(0x8000)), minusOne);
}

/// Rounds f32 `v` (a scalar or a vector) to bf16, to nearest even, in
/// integer arithmetic: the results of arith.truncf's expansion (every NaN
/// becomes the quiet NaN 0x7FC0), but with the NaN case chosen on the f32
/// bits before rounding. Choosing it after rounding, as that expansion
/// does, leaves LLVM a select of bf16 vectors, which it splits into scalar
/// selects and 2-byte stores on x86 without AVX512-BF16.
static Value truncF32ToBF16(OpBuilder &b, Location loc, Value v) {
  Value rounded = cpu::roundedBF16Words(b, loc, v);
  Type i32 = rounded.getType();
  Value high = b.create<arith::TruncIOp>(
      loc, shapedLike(i32, b.getI16Type()),
      b.create<arith::ShRUIOp>(loc, rounded, intConstant(b, loc, 16, i32)));
  return b.create<arith::BitcastOp>(loc, shapedLike(i32, b.getBF16Type()),
                                    high);
}

Value cpu::convertFloat(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = getElementTypeOrSelf(v.getType());
  Type target = shapedLike(v.getType(), to);
  if (from == to)
    return v;
  if (from.isF32() && to.isBF16())
    return truncF32ToBF16(b, loc, v);
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return b.create<arith::ExtFOp>(loc, target, v);
  return b.create<arith::TruncFOp>(loc, target, v);
}

Value cpu::loadAs(OpBuilder &b, Location loc, Value buffer, ValueRange indices,
                  int64_t width, Type accType) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  Value v = width == 1
                ? b.create<memref::LoadOp>(loc, buffer, indices).getResult()
                : b.create<vector::LoadOp>(
                       loc, VectorType::get({width}, element), buffer, indices)
                      .getResult();
  return convertFloat(b, loc, v, accType);
}

void cpu::storeAs(OpBuilder &b, Location loc, Value value, Value buffer,
                  ValueRange indices, bool streaming) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  Value v = convertFloat(b, loc, value, element);
  if (isa<VectorType>(v.getType()))
    b.create<vector::StoreOp>(loc, v, buffer, indices,
                              streaming ? b.getBoolAttr(true) : BoolAttr());
  else
    b.create<memref::StoreOp>(loc, v, buffer, indices);
}

void cpu::StreamingStores::fence(OpBuilder &b, Location loc) const {
  if (enabled)
    b.create<LLVM::FenceOp>(loc, LLVM::AtomicOrdering::seq_cst);
}

bool cpu::isFunctionResult(Value v) {
  return llvm::any_of(
      v.getUsers(), [](Operation *user) { return isa<func::ReturnOp>(user); });
}

void cpu::emitStreamingVersions(
    OpBuilder &b, Location loc, ArrayRef<Value> outputs, Value rowElements,
    int64_t width, bool returned,
    llvm::function_ref<void(OpBuilder &, Location, const StreamingStores &)>
        body) {
  // The schedule layer decides from the outputs' sizes and layout.
  StreamingQuery query;
  query.returned = returned;
  query.width = width;
  std::optional<int64_t> row = getConstantIntValue(rowElements);
  query.rowElements = row ? *row : 0;
  for (Value output : outputs) {
    auto type = cast<MemRefType>(output.getType());
    int64_t elementBytes = type.getElementTypeBitWidth() / 8;
    if (!type.hasStaticShape() || elementBytes == 0 || !row) {
      query.staticShapes = false;
      break;
    }
    query.totalBytes += type.getNumElements() * elementBytes;
    query.rowBytes = std::max(query.rowBytes, *row * elementBytes);
    if ((width * elementBytes) % kStreamingAlignment != 0)
      query.vectorsAligned = false;
  }
  StreamingChoice choice = selectStreamingStores(query);
  if (!choice.enabled)
    return body(b, loc, StreamingStores());

  // The function is marked for nf-align-streaming-stores. It is found from
  // the outputs, which were built before the loops: the loop being built
  // here may be in an operation not yet created (a builder's body), whose
  // regions have no parent yet.
  for (Region *region = Value(outputs.front()).getParentRegion(); region;) {
    Operation *parent = region->getParentOp();
    if (!parent)
      break;
    if (isa<func::FuncOp>(parent)) {
      parent->setAttr(kStreamingStoresAttr, b.getUnitAttr());
      break;
    }
    region = parent->getParentRegion();
  }
  StreamingStores streaming;
  streaming.enabled = true;
  streaming.rowsPerIteration = choice.rowsPerIteration;
  // Each output's first element (its base pointer plus its offset) on a
  // kStreamingAlignment boundary.
  Value aligned;
  for (Value output : outputs) {
    auto type = cast<MemRefType>(output.getType());
    Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, output);
    Value offset =
        b.create<memref::ExtractStridedMetadataOp>(loc, output).getOffset();
    Value first = b.create<arith::AddIOp>(
        loc, base,
        b.create<arith::MulIOp>(loc, offset,
                                b.create<arith::ConstantIndexOp>(
                                    loc, type.getElementTypeBitWidth() / 8)));
    Value misalignment = b.create<arith::RemUIOp>(
        loc, first, b.create<arith::ConstantIndexOp>(loc, kStreamingAlignment));
    Value ok =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, misalignment,
                                b.create<arith::ConstantIndexOp>(loc, 0));
    aligned = aligned ? b.create<arith::AndIOp>(loc, aligned, ok) : ok;
  }
  b.create<scf::IfOp>(
      loc, aligned,
      [&](OpBuilder &tb, Location tl) {
        body(tb, tl, streaming);
        tb.create<scf::YieldOp>(tl);
      },
      [&](OpBuilder &eb, Location el) {
        body(eb, el, StreamingStores());
        eb.create<scf::YieldOp>(el);
      });
}

void cpu::emitParallelRows(OpBuilder &b, Location loc, Value rows, RowBody body,
                           const StreamingStores &streaming) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  if (!streaming.enabled) {
    b.create<scf::ParallelOp>(loc, ValueRange{zero}, ValueRange{rows},
                              ValueRange{one},
                              [&](OpBuilder &pb, Location pl, ValueRange ivs) {
                                body(pb, pl, ivs[0]);
                                pb.create<scf::ReduceOp>(pl);
                              });
    return;
  }
  Value block =
      b.create<arith::ConstantIndexOp>(loc, streaming.rowsPerIteration);
  b.create<scf::ParallelOp>(
      loc, ValueRange{zero}, ValueRange{rows}, ValueRange{block},
      [&](OpBuilder &pb, Location pl, ValueRange ivs) {
        Value end = pb.create<arith::MinUIOp>(
            pl, pb.create<arith::AddIOp>(pl, ivs[0], block), rows);
        pb.create<scf::ForOp>(
            pl, ivs[0], end, one, std::nullopt,
            [&](OpBuilder &fb, Location fl, Value row, ValueRange) {
              body(fb, fl, row);
              fb.create<scf::YieldOp>(fl);
            });
        streaming.fence(pb, pl);
        pb.create<scf::ReduceOp>(pl);
      });
}

/// The largest multiple of `width` not above `upper - lower`, added to
/// `lower`: where the vector loop ends.
static Value vectorEnd(OpBuilder &b, Location loc, Value lower, Value upper,
                       int64_t width) {
  Value w = b.create<arith::ConstantIndexOp>(loc, width);
  Value n = b.create<arith::SubIOp>(loc, upper, lower);
  Value rem = b.create<arith::RemUIOp>(loc, n, w);
  return b.create<arith::SubIOp>(loc, upper, rem);
}

void cpu::emitVectorLoop(OpBuilder &b, Location loc, Value lower, Value upper,
                         int64_t width, ElementBody body) {
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value tailStart = lower;
  if (width > 1) {
    tailStart = vectorEnd(b, loc, lower, upper, width);
    Value step = b.create<arith::ConstantIndexOp>(loc, width);
    b.create<scf::ForOp>(
        loc, lower, tailStart, step, std::nullopt,
        [&](OpBuilder &nb, Location nloc, Value j, ValueRange) {
          body(nb, nloc, j, width);
          nb.create<scf::YieldOp>(nloc);
        });
  }
  b.create<scf::ForOp>(loc, tailStart, upper, one, std::nullopt,
                       [&](OpBuilder &nb, Location nloc, Value j, ValueRange) {
                         body(nb, nloc, j, 1);
                         nb.create<scf::YieldOp>(nloc);
                       });
}

void cpu::emitWideVectorLoop(OpBuilder &b, Location loc, Value lower,
                             Value upper, int64_t wide, int64_t width,
                             ElementBody body) {
  if (wide > width && width > 1) {
    Value wideEnd = vectorEnd(b, loc, lower, upper, wide);
    b.create<scf::ForOp>(
        loc, lower, wideEnd, b.create<arith::ConstantIndexOp>(loc, wide),
        std::nullopt, [&](OpBuilder &nb, Location nloc, Value j, ValueRange) {
          body(nb, nloc, j, wide);
          nb.create<scf::YieldOp>(nloc);
        });
    lower = wideEnd;
  }
  emitVectorLoop(b, loc, lower, upper, width, body);
}

/// Sums each of the `count` terms of `terms` over [lower, upper) in vectors
/// of `width` lanes with `unroll` independent accumulators per term (so
/// consecutive adds do not wait on each other); `upper - lower` must be a
/// multiple of `width * unroll`.
static SmallVector<Value> emitVectorSums(OpBuilder &b, Location loc,
                                         Value lower, Value upper,
                                         int64_t width, int64_t unroll,
                                         Type accType, unsigned count,
                                         cpu::SumTerms terms) {
  Value step = b.create<arith::ConstantIndexOp>(loc, width * unroll);
  SmallVector<Value> inits(unroll * count,
                           cpu::floatConstant(b, loc, 0.0, accType, width));
  auto loop = b.create<scf::ForOp>(
      loc, lower, upper, step, inits,
      [&](OpBuilder &ib, Location il, Value j, ValueRange acc) {
        SmallVector<Value> next;
        for (int64_t k = 0; k < unroll; ++k) {
          Value jk =
              k == 0 ? j
                     : ib.create<arith::AddIOp>(
                           il, j,
                           ib.create<arith::ConstantIndexOp>(il, k * width));
          SmallVector<Value> t = terms(ib, il, jk, width);
          assert(t.size() == count && "one value per term");
          // contract: a term that is a product may fuse into an fma.
          for (unsigned i = 0; i < count; ++i)
            next.push_back(ib.create<arith::AddFOp>(
                il, acc[k * count + i], t[i], arith::FastMathFlags::contract));
        }
        ib.create<scf::YieldOp>(il, next);
      });
  // Per term, pairwise combination of the partial sums.
  SmallVector<Value> sums;
  for (unsigned i = 0; i < count; ++i) {
    SmallVector<Value> partial;
    for (int64_t k = 0; k < unroll; ++k)
      partial.push_back(loop.getResult(k * count + i));
    while (partial.size() > 1) {
      SmallVector<Value> half;
      for (size_t k = 0; k + 1 < partial.size(); k += 2)
        half.push_back(
            b.create<arith::AddFOp>(loc, partial[k], partial[k + 1]));
      if (partial.size() % 2)
        half.push_back(partial.back());
      partial = half;
    }
    sums.push_back(partial.front());
  }
  return sums;
}

Value cpu::emitBlockedSum(OpBuilder &b, Location loc, Value n, int64_t width,
                          Type accType, SumTerm term) {
  return convertFloat(
      b, loc, emitBlockedSumF64(b, loc, n, width, accType, term), accType);
}

Value cpu::emitBlockedSumF64(OpBuilder &b, Location loc, Value n, int64_t width,
                             Type accType, SumTerm term) {
  return emitBlockedSumsF64(
      b, loc, n, width, accType, 1,
      [&](OpBuilder &tb, Location tl, Value j, int64_t w) {
        return SmallVector<Value>{term(tb, tl, j, w)};
      })[0];
}

SmallVector<Value> cpu::emitBlockedSumsF64(OpBuilder &b, Location loc, Value n,
                                           int64_t width, Type accType,
                                           unsigned count, SumTerms terms) {
  Type f64 = b.getF64Type();
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  SmallVector<Value> totals(count, floatConstant(b, loc, 0.0, f64, 1));
  Value tailStart = zero;
  if (width > 1) {
    // Blocks of whole unrolled groups: four accumulators of `width` lanes
    // per term.
    constexpr int64_t kUnroll = kSumUnroll;
    int64_t group = width * kUnroll;
    int64_t blockElements = std::max(kSumBlockElements, group);
    blockElements -= blockElements % group;
    Value blocksEnd = vectorEnd(b, loc, zero, n, blockElements);
    Value blockStep = b.create<arith::ConstantIndexOp>(loc, blockElements);
    // The lanes of a block's sum are added in any order (a tree, not a
    // chain of `width` dependent adds): they are partial sums of a few
    // dozen terms each, and their order does not change the error bound.
    auto addToTotals = [&](OpBuilder &bb, Location bl, ArrayRef<Value> vecs,
                           ValueRange acc) {
      SmallVector<Value> next;
      for (auto [vec, total] : llvm::zip(vecs, acc)) {
        Value sum = bb.create<vector::ReductionOp>(
            bl, getElementTypeOrSelf(vec.getType()), vector::CombiningKind::ADD,
            vec, Value(), arith::FastMathFlags::reassoc);
        next.push_back(bb.create<arith::AddFOp>(
            bl, total, convertFloat(bb, bl, sum, f64)));
      }
      return next;
    };
    auto blocks = b.create<scf::ForOp>(
        loc, zero, blocksEnd, blockStep, totals,
        [&](OpBuilder &bb, Location bl, Value start, ValueRange acc) {
          Value end = bb.create<arith::AddIOp>(bl, start, blockStep);
          SmallVector<Value> vecs = emitVectorSums(
              bb, bl, start, end, width, kUnroll, accType, count, terms);
          bb.create<scf::YieldOp>(bl, addToTotals(bb, bl, vecs, acc));
        });
    totals = blocks.getResults();
    // What is left after the whole blocks: unrolled groups, then single
    // vectors, then scalars.
    Value groupsEnd = vectorEnd(b, loc, blocksEnd, n, group);
    totals = addToTotals(b, loc,
                         emitVectorSums(b, loc, blocksEnd, groupsEnd, width,
                                        kUnroll, accType, count, terms),
                         totals);
    tailStart = vectorEnd(b, loc, groupsEnd, n, width);
    totals = addToTotals(b, loc,
                         emitVectorSums(b, loc, groupsEnd, tailStart, width, 1,
                                        accType, count, terms),
                         totals);
  }
  auto tail = b.create<scf::ForOp>(
      loc, tailStart, n, one, totals,
      [&](OpBuilder &tb, Location tl, Value j, ValueRange acc) {
        SmallVector<Value> t = terms(tb, tl, j, 1);
        SmallVector<Value> next;
        for (unsigned i = 0; i < count; ++i)
          next.push_back(tb.create<arith::AddFOp>(
              tl, acc[i], convertFloat(tb, tl, t[i], f64)));
        tb.create<scf::YieldOp>(tl, next);
      });
  return tail.getResults();
}

Value cpu::indexToFloat(OpBuilder &b, Location loc, Value index, Type type) {
  return b.create<arith::UIToFPOp>(
      loc, type, b.create<arith::IndexCastUIOp>(loc, b.getI64Type(), index));
}

Value cpu::splat(OpBuilder &b, Location loc, Value scalar, int64_t width) {
  if (width == 1)
    return scalar;
  return b.create<vector::BroadcastOp>(
      loc, VectorType::get({width}, scalar.getType()), scalar);
}

Value cpu::allocScratch(OpBuilder &b, Location loc, ArrayRef<Value> sizes,
                        Type elementType) {
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamicSizes;
  for (Value size : sizes) {
    std::optional<int64_t> c = getConstantIntValue(size);
    shape.push_back(c ? *c : ShapedType::kDynamic);
    if (!c)
      dynamicSizes.push_back(size);
  }
  return b.create<memref::AllocOp>(loc, MemRefType::get(shape, elementType),
                                   dynamicSizes, b.getI64IntegerAttr(64));
}
