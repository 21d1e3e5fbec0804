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

/// Elements per parallel chunk of a flattened pointwise op: large enough to
/// amortize scheduling, small enough to spread a few MiB across threads.
static constexpr int64_t kChunkElements = 16384;

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
  Value chunk = b.create<arith::ConstantIndexOp>(loc, kChunkElements);
  // Every chunk starts at a multiple of kChunkElements, so its vector
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

Value cpu::emitRelu(OpBuilder &b, Location loc, Value x, int64_t w) {
  // maximumf propagates NaN, as PyTorch's relu does.
  Type t = getElementTypeOrSelf(x.getType());
  return b.create<arith::MaximumFOp>(loc, x, floatConstant(b, loc, 0, t, w));
}

/// 2^t for f32 `t` (scalars or vectors of `w` lanes), for the logistic
/// functions below: 2^n * p(f), n = round(t) made in the exponent bits,
/// p the degree-7 Taylor polynomial of 2^f = e^(f ln 2) for the rest f in
/// [-0.5, 0.5] (truncation error under 1e-8 relative). t is first clamped
/// to [-126, 128] (a NaN to 128): 2^-126 stands for anything smaller, which
/// 1 + 2^t cannot tell apart, and n = 128 sets every exponent bit, which
/// makes infinity, as the exact 2^t would overflow to.
static Value emitExp2(OpBuilder &b, Location loc, Value t, int64_t w) {
  Type f32 = b.getF32Type();
  auto c = [&](double v) { return floatConstant(b, loc, v, f32, w); };
  auto ic = [&](int32_t v) -> Value {
    Type i32 = b.getI32Type();
    if (w == 1)
      return b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(v));
    auto type = VectorType::get({w}, i32);
    return b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(type, b.getI32IntegerAttr(v)));
  };
  // select(t < 128, t, 128) is 128 for a NaN (one vminps on x86).
  auto clampTo = [&](arith::CmpFPredicate keep, double bound) {
    Value limit = c(bound);
    Value inside = b.create<arith::CmpFOp>(loc, keep, t, limit);
    t = b.create<arith::SelectOp>(loc, inside, t, limit);
  };
  clampTo(arith::CmpFPredicate::OLT, 128.0);
  clampTo(arith::CmpFPredicate::OGT, -126.0);
  Value n = b.create<math::RoundEvenOp>(loc, t);
  Value f = b.create<arith::SubFOp>(loc, t, n);
  // ln(2)^i / i!, highest degree first.
  Value p = c(std::pow(M_LN2, 7) / 5040);
  for (int i = 6; i >= 0; --i) {
    double factorial = std::tgamma(i + 1);
    p = b.create<math::FmaOp>(loc, p, f, c(std::pow(M_LN2, i) / factorial));
  }
  Type intType = widen(b.getI32Type(), w);
  Value bits = b.create<arith::ShLIOp>(
      loc,
      b.create<arith::AddIOp>(loc, b.create<arith::FPToSIOp>(loc, intType, n),
                              ic(127)),
      ic(23));
  Value scale = b.create<arith::BitcastOp>(loc, widen(f32, w), bits);
  return b.create<arith::MulFOp>(loc, p, scale);
}

/// x / (1 + 2^t): x times the logistic function of -t ln 2.
static Value divideByOnePlusExp2(OpBuilder &b, Location loc, Value x, Value t,
                                 int64_t w) {
  Value one = floatConstant(b, loc, 1.0, b.getF32Type(), w);
  return b.create<arith::DivFOp>(
      loc, x, b.create<arith::AddFOp>(loc, one, emitExp2(b, loc, t, w)));
}

Value cpu::emitGelu(OpBuilder &b, Location loc, Value x, int64_t w,
                    GeluApproximation approximation) {
  Type t = getElementTypeOrSelf(x.getType());
  auto c = [&](double v) { return floatConstant(b, loc, v, t, w); };
  if (approximation == GeluApproximation::Tanh && t.isF32()) {
    // 0.5 x (1 + tanh(u)) = x / (1 + e^(-2u)), u = sqrt(2/pi) (x + a x^3):
    // e^(-2u) = 2^(x (k0 + k1 x^2)) with k0 = -2 sqrt(2/pi) log2(e) and
    // k1 = a k0. About half the operations of x^3 and MLIR's rational
    // tanh (its 11 multiply-adds, small-argument select and the final
    // 0.5 x (1 + t)), and no cancellation in 1 + tanh(u) for negative x.
    double k0 = -2.0 * std::sqrt(2.0 / M_PI) * M_LOG2E;
    double k1 = 0.044715 * k0;
    Value x2 = b.create<arith::MulFOp>(loc, x, x);
    Value exponent = b.create<arith::MulFOp>(
        loc, x, b.create<math::FmaOp>(loc, x2, c(k1), c(k0)));
    return divideByOnePlusExp2(b, loc, x, exponent, w);
  }
  Value cdfArg;
  Value special;
  if (approximation == GeluApproximation::Tanh) {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Value x3 =
        b.create<arith::MulFOp>(loc, x, b.create<arith::MulFOp>(loc, x, x));
    Value inner = b.create<arith::AddFOp>(
        loc, x, b.create<arith::MulFOp>(loc, c(0.044715), x3));
    cdfArg = b.create<arith::MulFOp>(loc, c(std::sqrt(2.0 / M_PI)), inner);
    special = b.create<math::TanhOp>(loc, cdfArg);
  } else {
    // 0.5 x (1 + erf(x / sqrt(2)))
    cdfArg = b.create<arith::MulFOp>(loc, c(M_SQRT1_2), x);
    special = b.create<math::ErfOp>(loc, cdfArg);
  }
  Value half = b.create<arith::MulFOp>(loc, c(0.5), x);
  return b.create<arith::MulFOp>(loc, half,
                                 b.create<arith::AddFOp>(loc, c(1.0), special));
}

Value cpu::emitSilu(OpBuilder &b, Location loc, Value x, int64_t w) {
  // x * sigmoid(x) = x / (1 + e^-x), e^-x = 2^(-x log2(e)) in f32.
  Type t = getElementTypeOrSelf(x.getType());
  if (t.isF32())
    return divideByOnePlusExp2(
        b, loc, x,
        b.create<arith::MulFOp>(loc, x, floatConstant(b, loc, -M_LOG2E, t, w)),
        w);
  Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
  Value denom =
      b.create<arith::AddFOp>(loc, floatConstant(b, loc, 1.0, t, w), e);
  return b.create<arith::DivFOp>(loc, x, denom);
}

/// relu_grad from the forward output y: dy where y > 0, else 0. A NaN y
/// passes dy through, as PyTorch's threshold_backward does.
Value cpu::emitReluGrad(OpBuilder &b, Location loc, Value dy, Value y,
                        int64_t w) {
  Type t = getElementTypeOrSelf(y.getType());
  Value zero = floatConstant(b, loc, 0.0, t, w);
  Value off = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, y, zero);
  return b.create<arith::SelectOp>(loc, off, zero, dy);
}

/// gelu_grad: dy * d/dx gelu(x).
Value cpu::emitGeluGrad(OpBuilder &b, Location loc, Value dy, Value x,
                        int64_t w, GeluApproximation approximation) {
  Type t = getElementTypeOrSelf(x.getType());
  auto c = [&](double v) { return floatConstant(b, loc, v, t, w); };
  auto mul = [&](Value l, Value r) {
    return b.create<arith::MulFOp>(loc, l, r).getResult();
  };
  auto add = [&](Value l, Value r) {
    return b.create<arith::AddFOp>(loc, l, r).getResult();
  };
  Value x2 = mul(x, x);
  Value derivative;
  if (approximation == GeluApproximation::Tanh) {
    // u = k (x + a x^3), t = tanh(u):
    // 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 a x^2)
    const double k = std::sqrt(2.0 / M_PI), a = 0.044715;
    Value u = mul(c(k), add(x, mul(c(a), mul(x2, x))));
    Value th = b.create<math::TanhOp>(loc, u);
    Value du = mul(c(k), add(c(1.0), mul(c(3.0 * a), x2)));
    Value sech2 = b.create<arith::SubFOp>(loc, c(1.0), mul(th, th));
    derivative =
        add(mul(c(0.5), add(c(1.0), th)), mul(mul(c(0.5), x), mul(sech2, du)));
  } else {
    // Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
    Value cdf = mul(
        c(0.5), add(c(1.0), b.create<math::ErfOp>(loc, mul(c(M_SQRT1_2), x))));
    Value pdf = mul(c(1.0 / std::sqrt(2.0 * M_PI)),
                    b.create<math::ExpOp>(loc, mul(c(-0.5), x2)));
    derivative = add(cdf, mul(x, pdf));
  }
  return mul(dy, derivative);
}

/// silu_grad: dy * s * (1 + x * (1 - s)), s = sigmoid(x).
Value cpu::emitSiluGrad(OpBuilder &b, Location loc, Value dy, Value x,
                        int64_t w) {
  Type t = getElementTypeOrSelf(x.getType());
  Value one = floatConstant(b, loc, 1.0, t, w);
  Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
  Value s =
      b.create<arith::DivFOp>(loc, one, b.create<arith::AddFOp>(loc, one, e));
  Value inner = b.create<arith::AddFOp>(
      loc, one,
      b.create<arith::MulFOp>(loc, x, b.create<arith::SubFOp>(loc, one, s)));
  return b.create<arith::MulFOp>(loc, dy,
                                 b.create<arith::MulFOp>(loc, s, inner));
}

Value cpu::emitActivationGrad(OpBuilder &b, Location loc, Operation *op,
                              Value dy, Value x, int64_t w) {
  if (isa<ReluGradOp>(op))
    return emitReluGrad(b, loc, dy, x, w);
  if (auto gelu = dyn_cast<GeluGradOp>(op))
    return emitGeluGrad(b, loc, dy, x, w, gelu.getApproximate());
  return emitSiluGrad(b, loc, dy, x, w);
}

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
