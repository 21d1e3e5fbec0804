//===- LowerPointwise.cpp - pointwise nf ops to loops -----------*- C++ -*-===//
//
// Part of normfuse. Lowers relu, gelu, silu, their gradients, add, mul and
// bias_add to parallel loops over chunks of their flattened operands, each
// chunk an inner vector loop with a scalar tail. Arithmetic is in f32 (f64 for
// f64 data); f16 and bf16 are converted on load and store.
//
//===----------------------------------------------------------------------===//

#include "LoopUtils.h"
#include "PointwiseChain.h"
#include "normfuse/Codegen/CPU/Schedule.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;

namespace {

/// Computes the op's value from its operands' values (scalars or vectors in
/// the accumulation type).
using PointwiseFn =
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange, int64_t width)>;

/// Emits `result[i] = fn(operands[i]...)` over all elements of same-shape
/// operands, as parallel chunks of vector loops, for the op result
/// `originalResult`; returns the result tensor.
Value lowerElementwise(OpBuilder &b, Location loc, ValueRange operands,
                       Value originalResult, int64_t vectorWidth,
                       PointwiseFn fn) {
  auto resultType = cast<RankedTensorType>(originalResult.getType());
  Type acc = getAccumulationType(resultType.getElementType());
  SmallVector<Value> buffers;
  for (Value operand : operands)
    buffers.push_back(getBuffer(b, loc, operand));
  Value result = allocBuffer(b, loc, resultType, buffers.front());
  int64_t rank = resultType.getRank();
  Value n = getNumElements(b, loc, buffers.front(), 0, rank);

  SmallVector<Value> flat;
  for (Value buffer : buffers)
    flat.push_back(reshapeBuffer(b, loc, buffer, {n}));
  Value flatResult = reshapeBuffer(b, loc, result, {n});

  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value chunk = b.create<arith::ConstantIndexOp>(loc, kPointwiseChunkElements);
  // Every chunk starts at a multiple of kPointwiseChunkElements, so its vector
  // stores are aligned like rows of that many elements: a large result is
  // written around the caches (see StreamingStores).
  emitStreamingVersions(
      b, loc, {flatResult}, chunk, vectorWidth,
      isFunctionResult(originalResult),
      [&](OpBuilder &sb, Location sl, const StreamingStores &streaming) {
        sb.create<scf::ParallelOp>(
            sl, ValueRange{zero}, ValueRange{n}, ValueRange{chunk},
            [&](OpBuilder &pb, Location pl, ValueRange ivs) {
              Value end = pb.create<arith::MinUIOp>(
                  pl, pb.create<arith::AddIOp>(pl, ivs[0], chunk), n);
              emitVectorLoop(
                  pb, pl, ivs[0], end, vectorWidth,
                  [&](OpBuilder &lb, Location ll, Value j, int64_t w) {
                    SmallVector<Value> values;
                    for (Value buffer : flat)
                      values.push_back(loadAs(lb, ll, buffer, j, w, acc));
                    storeAs(lb, ll, fn(lb, ll, values, w), flatResult, j,
                            streaming.enabled);
                  });
              streaming.fence(pb, pl);
              pb.create<scf::ReduceOp>(pl);
            });
      });
  return toTensor(b, loc, result);
}

} // namespace

namespace {

/// relu_grad, gelu_grad and silu_grad: (grad_output, forward value).
template <typename NFOp>
struct LowerActivationGrad : LoopLoweringPattern<NFOp> {
  using LoopLoweringPattern<NFOp>::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(NFOp op, typename NFOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value forward;
    if constexpr (std::is_same_v<NFOp, ReluGradOp>)
      forward = adaptor.getResult();
    else
      forward = adaptor.getInput();
    Value result = lowerElementwise(
        rewriter, op.getLoc(), {adaptor.getGradOutput(), forward},
        op.getResult(), this->options.vectorWidth,
        [&](OpBuilder &b, Location loc, ValueRange v, int64_t w) -> Value {
          if constexpr (std::is_same_v<NFOp, ReluGradOp>)
            return emitReluGrad(b, loc, v[0], v[1], w);
          else if constexpr (std::is_same_v<NFOp, SiluGradOp>)
            return emitSiluGrad(b, loc, v[0], v[1], w);
          else
            return emitGeluGrad(b, loc, v[0], v[1], w, op.getApproximate());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

template <typename NFOp> struct LowerUnary : LoopLoweringPattern<NFOp> {
  using LoopLoweringPattern<NFOp>::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(NFOp op, typename NFOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value result = lowerElementwise(
        rewriter, op.getLoc(), adaptor.getInput(), op.getResult(),
        this->options.vectorWidth,
        [&](OpBuilder &b, Location loc, ValueRange v, int64_t w) -> Value {
          if constexpr (std::is_same_v<NFOp, ReluOp>)
            return emitRelu(b, loc, v[0], w);
          else if constexpr (std::is_same_v<NFOp, SiluOp>)
            return emitSilu(b, loc, v[0], w);
          else
            return emitGelu(b, loc, v[0], w, op.getApproximate());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

template <typename NFOp, typename ArithOp>
struct LowerBinary : LoopLoweringPattern<NFOp> {
  using LoopLoweringPattern<NFOp>::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(NFOp op, typename NFOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value result = lowerElementwise(
        rewriter, op.getLoc(), {adaptor.getLhs(), adaptor.getRhs()},
        op.getResult(), this->options.vectorWidth,
        [](OpBuilder &b, Location loc, ValueRange v, int64_t) -> Value {
          return b.create<ArithOp>(loc, v[0], v[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// bias_add: the input is viewed as (outer, C, inner). Channels-last
/// (inner == 1) runs rows of C with a vector of biases; channels-first runs
/// rows of `inner` elements that share one bias.
struct LowerBiasAdd : LoopLoweringPattern<BiasAddOp> {
  using LoopLoweringPattern::LoopLoweringPattern;

  LogicalResult
  matchAndRewrite(BiasAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    RankedTensorType type = op.getType();
    Type acc = getAccumulationType(type.getElementType());
    int64_t rank = type.getRank();
    int64_t axis = getChannelAxis(op.getLayout(), rank);
    int64_t w = options.vectorWidth;

    Value x = getBuffer(b, loc, adaptor.getInput());
    Value bias = getBuffer(b, loc, adaptor.getBias());
    Value y = allocBuffer(b, loc, type, x);
    Value outer = getNumElements(b, loc, x, 0, axis);
    Value channels = getNumElements(b, loc, x, axis, axis + 1);
    Value inner = getNumElements(b, loc, x, axis + 1, rank);
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);

    if (axis == rank - 1) {
      Value x2 = reshapeBuffer(b, loc, x, {outer, channels});
      Value y2 = reshapeBuffer(b, loc, y, {outer, channels});
      emitParallelRows(b, loc, outer, [&](OpBuilder &pb, Location pl, Value r) {
        emitVectorLoop(pb, pl, zero, channels, w,
                       [&](OpBuilder &lb, Location ll, Value c, int64_t width) {
                         Value v = lb.create<arith::AddFOp>(
                             ll, loadAs(lb, ll, x2, {r, c}, width, acc),
                             loadAs(lb, ll, bias, c, width, acc));
                         storeAs(lb, ll, v, y2, {r, c});
                       });
      });
    } else {
      Value rows = b.createOrFold<arith::MulIOp>(loc, outer, channels);
      Value x2 = reshapeBuffer(b, loc, x, {rows, inner});
      Value y2 = reshapeBuffer(b, loc, y, {rows, inner});
      emitParallelRows(b, loc, rows, [&](OpBuilder &pb, Location pl, Value r) {
        Value c = pb.create<arith::RemUIOp>(pl, r, channels);
        Value scalarBias = loadAs(pb, pl, bias, c, 1, acc);
        emitVectorLoop(pb, pl, zero, inner, w,
                       [&](OpBuilder &lb, Location ll, Value j, int64_t width) {
                         Value bv = width == 1 ? scalarBias
                                               : lb.create<vector::BroadcastOp>(
                                                       ll, widen(acc, width),
                                                       scalarBias)
                                                     .getResult();
                         Value v = lb.create<arith::AddFOp>(
                             ll, loadAs(lb, ll, x2, {r, j}, width, acc), bv);
                         storeAs(lb, ll, v, y2, {r, j});
                       });
      });
    }
    rewriter.replaceOp(op, toTensor(b, loc, y));
    return success();
  }
};

} // namespace

void mlir::nf::populateLowerPointwiseToLoopsPatterns(
    RewritePatternSet &patterns, const LoopLoweringOptions &options) {
  MLIRContext *ctx = patterns.getContext();
  patterns
      .add<LowerUnary<ReluOp>, LowerUnary<GeluOp>, LowerUnary<SiluOp>,
           LowerBinary<AddOp, arith::AddFOp>, LowerBinary<MulOp, arith::MulFOp>,
           LowerBiasAdd, LowerActivationGrad<ReluGradOp>,
           LowerActivationGrad<GeluGradOp>, LowerActivationGrad<SiluGradOp>>(
          ctx, options);
}
