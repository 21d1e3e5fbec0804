//===- ProducerOps.cpp - verifiers of matmul and the conv ops ---*- C++ -*-===//
//
// Part of normfuse. Shape rules of nf.matmul and of nf.conv2d with its two
// backward ops. The backward ops are checked through the forward shape
// rule: a conv2d of the (given or resulting) input with the filter must
// have the shape of the output gradient.
//
//===----------------------------------------------------------------------===//

#include "VerifyUtils.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::detail;

static LogicalResult verifySameElementType(Operation *op, Value a,
                                           StringRef aName, Value b,
                                           StringRef bName) {
  Type ea = getElementTypeOrSelf(a), eb = getElementTypeOrSelf(b);
  if (ea == eb)
    return success();
  return op->emitOpError() << aName << " element type " << ea
                           << " does not match the " << bName
                           << " element type " << eb;
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> MatmulOp::inferResultShape() {
  if (failed(verifyMinRank(*this, getLhs(), "lhs", 2, "..., M, K")) ||
      failed(verifyMinRank(*this, getRhs(), "rhs", 2, "..., K, N")))
    return failure();
  ArrayRef<int64_t> lhs = shapeOf(getLhs()), rhs = shapeOf(getRhs());
  ArrayRef<int64_t> lhsBatch = lhs.drop_back(2), rhsBatch = rhs.drop_back(2);
  if (!lhsBatch.empty() && !rhsBatch.empty() &&
      !isCompatibleShape(lhsBatch, rhsBatch))
    return emitOpError() << "batch dimensions differ: lhs has "
                         << formatShape(lhsBatch) << ", rhs has "
                         << formatShape(rhsBatch);

  size_t l = lhs.size(), r = rhs.size();
  int64_t m = getTransposeLhs() ? lhs[l - 1] : lhs[l - 2];
  int64_t lhsK = getTransposeLhs() ? lhs[l - 2] : lhs[l - 1];
  int64_t rhsK = getTransposeRhs() ? rhs[r - 1] : rhs[r - 2];
  int64_t n = getTransposeRhs() ? rhs[r - 2] : rhs[r - 1];
  if (!ShapedType::isDynamic(lhsK) && !ShapedType::isDynamic(rhsK) &&
      lhsK != rhsK)
    return emitOpError() << "contraction dimensions differ: lhs has K = "
                         << lhsK << ", rhs has K = " << rhsK;

  SmallVector<int64_t> shape(lhsBatch.empty() ? rhsBatch : lhsBatch);
  shape.append({m, n});
  return shape;
}

LogicalResult MatmulOp::verify() {
  if (failed(verifyMinRank(*this, getLhs(), "lhs", 2, "..., M, K")) ||
      failed(verifyMinRank(*this, getRhs(), "rhs", 2, "..., K, N")) ||
      failed(verifySameElementType(*this, getLhs(), "lhs", getRhs(), "rhs")) ||
      failed(verifyResultElementType(*this, getResult(), "result",
                                     getElementTypeOrSelf(getLhs()))))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = inferResultShape();
  if (failed(shape))
    return failure();
  return verifyShape(*this, getResult(), "result", *shape, "batch..., M, N");
}

//===----------------------------------------------------------------------===//
// Conv ops
//===----------------------------------------------------------------------===//

namespace {
/// The attributes shared by conv2d and its backward ops.
struct ConvAttrs {
  ArrayRef<int64_t> strides, padding, dilations;
  Layout layout;
};
} // namespace

template <typename ConvOp> static ConvAttrs getConvAttrs(ConvOp op) {
  return {op.getStrides(), op.getPadding(), op.getDilations(), op.getLayout()};
}

static LogicalResult verifyConvAttrs(Operation *op, const ConvAttrs &a) {
  auto allAtLeast = [](ArrayRef<int64_t> values, int64_t lo) {
    return llvm::all_of(values, [&](int64_t v) { return v >= lo; });
  };
  if (a.strides.size() != 2 || !allAtLeast(a.strides, 1))
    return op->emitOpError() << "strides must be 2 positive values [h, w], got "
                             << formatShape(a.strides);
  if (a.dilations.size() != 2 || !allAtLeast(a.dilations, 1))
    return op->emitOpError()
           << "dilations must be 2 positive values [h, w], got "
           << formatShape(a.dilations);
  if (a.padding.size() != 4 || !allAtLeast(a.padding, 0))
    return op->emitOpError() << "padding must be 4 non-negative values "
                                "[top, bottom, left, right], got "
                             << formatShape(a.padding);
  return success();
}

static LogicalResult verifyRank4(Operation *op, Value v, StringRef name,
                                 StringRef form) {
  int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
  if (rank == 4)
    return success();
  return op->emitOpError() << name << " must have rank 4 (" << form
                           << "), got rank " << rank;
}

/// The output shape of a conv2d of `inputV` with `filterV`, after checking
/// that they agree. Names in diagnostics are those of the calling op.
static FailureOr<SmallVector<int64_t>>
inferConv2DShape(Operation *op, const ConvAttrs &a, Value inputV,
                 StringRef inputName, Value filterV, StringRef filterName) {
  bool nchw = a.layout == Layout::NCHW;
  if (failed(verifyConvAttrs(op, a)) ||
      failed(verifyRank4(op, inputV, inputName,
                         nchw ? "N, C, H, W" : "N, H, W, C")) ||
      failed(verifyRank4(op, filterV, filterName,
                         nchw ? "O, I, KH, KW" : "O, KH, KW, I")))
    return failure();

  ArrayRef<int64_t> in = shapeOf(inputV), f = shapeOf(filterV);
  int64_t n = in[0], c = nchw ? in[1] : in[3];
  int64_t o = f[0], i = nchw ? f[1] : f[3];
  int64_t spatial[2] = {nchw ? in[2] : in[1], nchw ? in[3] : in[2]};
  int64_t kernel[2] = {nchw ? f[2] : f[1], nchw ? f[3] : f[2]};
  if (!ShapedType::isDynamic(c) && !ShapedType::isDynamic(i) && c != i)
    return op->emitOpError()
           << inputName << " has " << c << " channels but the " << filterName
           << " expects " << i;

  for (int d = 0; d < 2; ++d)
    if (!ShapedType::isDynamic(kernel[d]) && kernel[d] < 1)
      return op->emitOpError()
             << "the " << filterName << " has an empty window "
             << formatShape(kernel) << "; its spatial sizes must be positive";

  // Sizes near INT64_MAX must not wrap around into plausible shapes.
  int64_t padded[2], extent[2], out[2];
  bool fits = true;
  for (int d = 0; d < 2; ++d) {
    std::optional<int64_t> pad =
        llvm::checkedAdd(a.padding[2 * d], a.padding[2 * d + 1]);
    std::optional<int64_t> size = pad && !ShapedType::isDynamic(spatial[d])
                                      ? llvm::checkedAdd(spatial[d], *pad)
                                      : pad;
    std::optional<int64_t> span =
        ShapedType::isDynamic(kernel[d])
            ? std::optional<int64_t>(0)
            : llvm::checkedMul(a.dilations[d], kernel[d] - 1);
    if (!size || !span || *span == INT64_MAX)
      return op->emitOpError()
             << "padding " << formatShape(a.padding) << " or dilations "
             << formatShape(a.dilations) << " overflow a 64-bit size";
    padded[d] =
        ShapedType::isDynamic(spatial[d]) ? ShapedType::kDynamic : *size;
    extent[d] =
        ShapedType::isDynamic(kernel[d]) ? ShapedType::kDynamic : *span + 1;
    if (ShapedType::isDynamic(padded[d]) || ShapedType::isDynamic(extent[d])) {
      out[d] = ShapedType::kDynamic;
      continue;
    }
    fits &= padded[d] >= extent[d];
    out[d] = (padded[d] - extent[d]) / a.strides[d] + 1;
  }
  if (!fits)
    return op->emitOpError() << "the dilated filter (" << formatShape(extent)
                             << ") is larger than the padded " << inputName
                             << " (" << formatShape(padded) << ")";

  if (nchw)
    return SmallVector<int64_t>{n, o, out[0], out[1]};
  return SmallVector<int64_t>{n, out[0], out[1], o};
}

FailureOr<SmallVector<int64_t>> Conv2DOp::inferResultShape() {
  return inferConv2DShape(*this, getConvAttrs(*this), getInput(), "input",
                          getFilter(), "filter");
}

LogicalResult Conv2DOp::verify() {
  FailureOr<SmallVector<int64_t>> shape = inferResultShape();
  if (failed(shape) ||
      failed(verifySameElementType(*this, getFilter(), "filter", getInput(),
                                   "input")) ||
      failed(verifyResultElementType(*this, getResult(), "result",
                                     getElementTypeOrSelf(getInput()))))
    return failure();
  return verifyShape(*this, getResult(), "result", *shape,
                     "the conv2d output shape");
}

LogicalResult Conv2DBackpropInputOp::verify() {
  auto shape = inferConv2DShape(*this, getConvAttrs(*this), getGradInput(),
                                "grad_input", getFilter(), "filter");
  if (failed(shape) ||
      failed(verifySameElementType(*this, getFilter(), "filter",
                                   getGradOutput(), "grad_output")) ||
      failed(verifyResultElementType(*this, getGradInput(), "grad_input",
                                     getElementTypeOrSelf(getGradOutput()))))
    return failure();
  return verifyShape(*this, getGradOutput(), "grad_output", *shape,
                     "the conv2d output shape for grad_input and filter");
}

LogicalResult Conv2DBackpropFilterOp::verify() {
  auto shape = inferConv2DShape(*this, getConvAttrs(*this), getInput(), "input",
                                getGradFilter(), "grad_filter");
  if (failed(shape) ||
      failed(verifySameElementType(*this, getGradOutput(), "grad_output",
                                   getInput(), "input")) ||
      failed(verifyResultElementType(*this, getGradFilter(), "grad_filter",
                                     getElementTypeOrSelf(getInput()))))
    return failure();
  return verifyShape(*this, getGradOutput(), "grad_output", *shape,
                     "the conv2d output shape for input and grad_filter");
}
