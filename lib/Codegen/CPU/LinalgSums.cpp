//===- LinalgSums.cpp - linalg sums as blocked f64 sums ---------*- C++ -*-===//
//
// Part of normfuse. See LinalgSums.h.
//
//===----------------------------------------------------------------------===//

#include "LinalgSums.h"
#include "LoopUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

Value nf::cpu::matchLinalgSumTerm(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 || op.hasIndexSemantics())
    return {};
  Block *body = op.getBlock();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return {};
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || add->getBlock() != body)
    return {};
  BlockArgument out = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  if (!out.hasOneUse())
    return {};
  if (add.getLhs() == out)
    return add.getRhs();
  if (add.getRhs() == out)
    return add.getLhs();
  return {};
}

/// `v` converted to `to`, through f32 between f64 and f16/bf16 (the
/// conversions that the CPU back end emits).
static Value convertViaF32(OpBuilder &b, Location loc, Value v, Type to) {
  unsigned from = getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth();
  unsigned bits = to.getIntOrFloatBitWidth();
  if ((from < 32 && bits > 32) || (from > 32 && bits < 32))
    v = nf::cpu::convertFloat(b, loc, v, b.getF32Type());
  return nf::cpu::convertFloat(b, loc, v, to);
}

/// The indices of `operand`'s element at the loop indices `ivs`.
static SmallVector<Value> operandIndices(OpBuilder &b, Location loc,
                                         linalg::LinalgOp op,
                                         OpOperand &operand, ValueRange ivs) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<Value> indices;
  for (unsigned r = 0; r < map.getNumResults(); ++r)
    indices.push_back(
        b.create<affine::AffineApplyOp>(loc, map.getSubMap({r}), ivs));
  return indices;
}

void nf::cpu::lowerLinalgSum(RewriterBase &rewriter, linalg::LinalgOp op) {
  Value term = matchLinalgSumTerm(op);
  assert(term && "lowerLinalgSum takes the ops matchLinalgSumTerm matches");
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Block *body = op.getBlock();
  Operation *add = body->getTerminator()->getOperand(0).getDefiningOp();
  OpOperand *output = op.getDpsInitOperand(0);
  Type outType = getElementTypeOrSelf(output->get().getType());

  // Loop ranges of a linalg op on buffers start at 0 with step 1.
  SmallVector<Range> ranges = op.createLoopRanges(rewriter, loc);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<Value> lower, upper, steps;
  unsigned reduction = 0;
  for (auto [d, iterator] : llvm::enumerate(iterators)) {
    if (iterator == utils::IteratorType::reduction) {
      reduction = d;
      continue;
    }
    lower.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, ranges[d].offset));
    upper.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, ranges[d].size));
    steps.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, ranges[d].stride));
  }
  Value length =
      getValueOrCreateConstantIndexOp(rewriter, loc, ranges[reduction].size);

  auto element = [&](OpBuilder &b, Location l, ValueRange parallelIvs) {
    SmallVector<Value> ivs(iterators.size());
    for (unsigned d = 0, p = 0; d < iterators.size(); ++d)
      if (d != reduction)
        ivs[d] = parallelIvs[p++];
    ivs[reduction] = b.create<arith::ConstantIndexOp>(l, 0);
    Value total = emitBlockedSumF64(
        b, l, length, /*width=*/1, b.getF64Type(),
        [&](OpBuilder &tb, Location tl, Value j, int64_t) {
          ivs[reduction] = j;
          IRMapping map;
          for (OpOperand *input : op.getDpsInputOperands()) {
            Value value = input->get();
            if (isa<MemRefType>(value.getType()))
              value = tb.create<memref::LoadOp>(
                  tl, value, operandIndices(tb, tl, op, *input, ivs));
            map.map(op.getMatchingBlockArgument(input), value);
          }
          for (Operation &bodyOp : body->without_terminator())
            if (&bodyOp != add)
              tb.clone(bodyOp, map);
          return convertViaF32(tb, tl, map.lookupOrDefault(term),
                               tb.getF64Type());
        });
    // The output's own value joins the f64 total: one rounding in all.
    SmallVector<Value> at = operandIndices(b, l, op, *output, ivs);
    Value old = b.create<memref::LoadOp>(l, output->get(), at);
    Value sum = b.create<arith::AddFOp>(
        l, convertViaF32(b, l, old, b.getF64Type()), total);
    b.create<memref::StoreOp>(l, convertViaF32(b, l, sum, outType),
                              output->get(), at);
  };
  if (lower.empty())
    element(rewriter, loc, {});
  else
    rewriter.create<scf::ParallelOp>(
        loc, lower, upper, steps,
        [&](OpBuilder &b, Location l, ValueRange ivs) { element(b, l, ivs); });
  rewriter.eraseOp(op);
}
