//===- ConvParams.h - a conv op's attributes and layout ---------*- C++ -*-===//
//
// Part of normfuse. The strides, dilations and padding of nf.conv2d and its
// gradients, and where its layout puts each dimension, for both back ends.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_COMMON_CONVPARAMS_H
#define NORMFUSE_CODEGEN_COMMON_CONVPARAMS_H

#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::nf {

/// The attributes of a conv op and the index order of its layout.
struct ConvParams {
  bool nchw;
  int64_t stride[2], dilation[2], padBefore[2], padAfter[2];

  template <typename ConvOp> static ConvParams get(ConvOp op) {
    ConvParams p;
    p.nchw = op.getLayout() == Layout::NCHW;
    for (int d = 0; d < 2; ++d) {
      p.stride[d] = op.getStrides()[d];
      p.dilation[d] = op.getDilations()[d];
      p.padBefore[d] = op.getPadding()[2 * d];
      p.padAfter[d] = op.getPadding()[2 * d + 1];
    }
    return p;
  }

  /// Dimensions of (batch, channel, h, w) in an activation.
  int64_t channelDim() const { return nchw ? 1 : 3; }
  int64_t spatialDim(int d) const { return (nchw ? 2 : 1) + d; }

  /// Indices of an activation (input or output) element.
  SmallVector<Value> act(Value n, Value c, Value h, Value w) const {
    if (nchw)
      return {n, c, h, w};
    return {n, h, w, c};
  }
  /// Indices of a filter element (OIHW or OHWI).
  SmallVector<Value> filter(Value o, Value i, Value kh, Value kw) const {
    if (nchw)
      return {o, i, kh, kw};
    return {o, kh, kw, i};
  }
};

/// The sizes of a conv op as index values (constants where static): batch,
/// input and output channels, input, filter and output spatial sizes.
struct ConvSizes {
  Value n, c, o, in[2], k[2], out[2];
};

/// conv2d of the buffers `x` and `w` with a result of `type`: the output's
/// spatial sizes from the shape rule where `type` leaves them dynamic.
ConvSizes convForwardSizes(OpBuilder &b, Location loc, const ConvParams &p,
                           Value x, Value w, RankedTensorType type);

/// conv2d_backprop_input of `dy` and `w` with a result of `type`: where
/// dynamic, the input's spatial sizes are the smallest that give dy's.
ConvSizes convBackpropInputSizes(OpBuilder &b, Location loc,
                                 const ConvParams &p, Value dy, Value w,
                                 RankedTensorType type);

/// conv2d_backprop_filter of `x` and `dy` with a result of `type`: where
/// dynamic, the filter's spatial sizes are the largest that give dy's.
ConvSizes convBackpropFilterSizes(OpBuilder &b, Location loc,
                                  const ConvParams &p, Value x, Value dy,
                                  RankedTensorType type);

} // namespace mlir::nf

#endif // NORMFUSE_CODEGEN_COMMON_CONVPARAMS_H
