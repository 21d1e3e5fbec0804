//===- RaiseProducers.cpp - tosa.matmul / tosa.conv2d -> nf -----*- C++ -*-===//
//
// Part of normfuse. The producers frameworks hand over in TOSA become nf
// producers, so their epilogues can fuse: tosa.matmul -> nf.matmul, and
// tosa.conv2d (NHWC input, OHWI weight, a bias built in) -> nf.conv2d with
// layout nhwc followed by nf.bias_add. Quantized ops are left alone.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/Dialect/NF/Transforms/Patterns.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::nf;

namespace {

Type elementOf(Value v) { return getElementTypeOrSelf(v.getType()); }

/// nf producers keep the operands' element type or widen to f32.
bool isNFResultType(Type result, Type operand) {
  return result == operand || result.isF32();
}

/// (N, M, K) x (N, K, P) -> (N, M, P), all static.
bool hasMatmulShape(tosa::MatMulOp matmul) {
  auto a = cast<ShapedType>(matmul.getA().getType());
  auto b = cast<ShapedType>(matmul.getB().getType());
  auto c = cast<ShapedType>(matmul.getC().getType());
  if (!a.hasStaticShape() || !b.hasStaticShape() || !c.hasStaticShape())
    return false;
  return a.getDimSize(0) == b.getDimSize(0) &&
         c.getDimSize(0) == a.getDimSize(0) &&
         a.getDimSize(2) == b.getDimSize(1) &&
         c.getDimSize(1) == a.getDimSize(1) &&
         c.getDimSize(2) == b.getDimSize(2);
}

/// Whether the op's static result shape is the one nf.conv2d computes (the
/// TOSA verifier does not check it; nf's does).
bool hasConvShape(tosa::Conv2DOp conv) {
  auto input = cast<ShapedType>(conv.getInput().getType());
  auto weight = cast<ShapedType>(conv.getWeight().getType());
  auto output = cast<ShapedType>(conv.getOutput().getType());
  if (!input.hasStaticShape() || !weight.hasStaticShape() ||
      !output.hasStaticShape())
    return false;
  ArrayRef<int64_t> pad = conv.getPad(), stride = conv.getStride(),
                    dilation = conv.getDilation();
  for (int i = 0; i < 2; ++i) {
    int64_t padded = input.getDimSize(1 + i) + pad[2 * i] + pad[2 * i + 1];
    int64_t extent = dilation[i] * (weight.getDimSize(1 + i) - 1) + 1;
    if (stride[i] <= 0 || padded < extent ||
        output.getDimSize(1 + i) != (padded - extent) / stride[i] + 1)
      return false;
  }
  return output.getDimSize(0) == input.getDimSize(0) &&
         output.getDimSize(3) == weight.getDimSize(0) &&
         weight.getDimSize(3) == input.getDimSize(3);
}

struct RaiseTosaMatmul : OpRewritePattern<tosa::MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tosa::MatMulOp matmul,
                                PatternRewriter &rewriter) const override {
    if (matmul.getQuantizationInfo())
      return rewriter.notifyMatchFailure(matmul, "quantized");
    Type element = elementOf(matmul.getA());
    if (!isa<FloatType>(element) || elementOf(matmul.getB()) != element ||
        !isNFResultType(elementOf(matmul.getC()), element))
      return rewriter.notifyMatchFailure(matmul, "element types");
    if (!hasMatmulShape(matmul))
      return rewriter.notifyMatchFailure(matmul, "shapes do not agree");
    rewriter.replaceOpWithNewOp<MatmulOp>(matmul, matmul.getType(),
                                          matmul.getA(), matmul.getB());
    return success();
  }
};

struct RaiseTosaConv2D : OpRewritePattern<tosa::Conv2DOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tosa::Conv2DOp conv,
                                PatternRewriter &rewriter) const override {
    if (conv.getQuantizationInfo())
      return rewriter.notifyMatchFailure(conv, "quantized");
    Type element = elementOf(conv.getInput());
    Type result = elementOf(conv.getOutput());
    Type bias = elementOf(conv.getBias());
    if (!isa<FloatType>(element) || elementOf(conv.getWeight()) != element ||
        !isNFResultType(result, element) || !isNFResultType(bias, result))
      return rewriter.notifyMatchFailure(conv, "element types");
    if (!hasConvShape(conv))
      return rewriter.notifyMatchFailure(conv, "result shape is not the "
                                               "conv2d shape");
    auto nhwc = LayoutAttr::get(getContext(), Layout::NHWC);
    Value y = rewriter.create<Conv2DOp>(
        conv.getLoc(), conv.getType(), conv.getInput(), conv.getWeight(),
        conv.getStrideAttr(), conv.getPadAttr(), conv.getDilationAttr(), nhwc);
    // A zero bias folds away in canonicalization.
    rewriter.replaceOpWithNewOp<BiasAddOp>(conv, conv.getType(), y,
                                           conv.getBias(), nhwc);
    return success();
  }
};

} // namespace

void nf::populateRaiseProducerPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseTosaMatmul, RaiseTosaConv2D>(patterns.getContext());
}
