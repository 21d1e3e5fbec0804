//===- ConvSizes.cpp - the sizes of a conv op as index values -------------===//
//
// Part of normfuse. See ConvParams.h. Every size folds to a constant where
// the shapes are static.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Common/BufferBuilders.h"
#include "normfuse/Codegen/Common/ConvParams.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::nf;

namespace {

/// Folding index arithmetic on the host.
struct Sizes {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
  Value add(Value x, Value y) {
    return b.createOrFold<arith::AddIOp>(loc, x, y);
  }
  Value sub(Value x, Value y) {
    return b.createOrFold<arith::SubIOp>(loc, x, y);
  }
  Value mul(Value x, int64_t y) {
    return y == 1 ? x : b.createOrFold<arith::MulIOp>(loc, x, c(y));
  }
  Value div(Value x, int64_t y) {
    return y == 1 ? x : b.createOrFold<arith::DivUIOp>(loc, x, c(y));
  }
  /// max(x, 0)
  Value atLeastZero(Value x) {
    return b.createOrFold<arith::MaxSIOp>(loc, x, c(0));
  }
  Value dim(Value buffer, int64_t i) {
    return getNumElements(b, loc, buffer, i, i + 1);
  }
};

} // namespace

ConvSizes nf::convForwardSizes(OpBuilder &b, Location loc, const ConvParams &p,
                               Value x, Value w, RankedTensorType type) {
  Sizes z{b, loc};
  ConvSizes s;
  s.n = z.dim(x, 0);
  s.c = z.dim(x, p.channelDim());
  s.o = z.dim(w, 0);
  for (int d = 0; d < 2; ++d) {
    s.in[d] = z.dim(x, p.spatialDim(d));
    s.k[d] = z.dim(w, p.spatialDim(d));
    int64_t known = type.getDimSize(p.spatialDim(d));
    if (!ShapedType::isDynamic(known)) {
      s.out[d] = z.c(known);
      continue;
    }
    // (in + pads - dilation * (k - 1) - 1) / stride + 1
    Value padded = z.add(s.in[d], z.c(p.padBefore[d] + p.padAfter[d] - 1));
    Value span = z.mul(z.sub(s.k[d], z.c(1)), p.dilation[d]);
    s.out[d] =
        z.add(z.div(z.atLeastZero(z.sub(padded, span)), p.stride[d]), z.c(1));
  }
  return s;
}

ConvSizes nf::convBackpropInputSizes(OpBuilder &b, Location loc,
                                     const ConvParams &p, Value dy, Value w,
                                     RankedTensorType type) {
  Sizes z{b, loc};
  ConvSizes s;
  s.n = z.dim(dy, 0);
  s.o = z.dim(dy, p.channelDim());
  s.c = z.dim(w, p.nchw ? 1 : 3);
  for (int d = 0; d < 2; ++d) {
    s.out[d] = z.dim(dy, p.spatialDim(d));
    s.k[d] = z.dim(w, p.spatialDim(d));
    int64_t known = type.getDimSize(p.spatialDim(d));
    if (!ShapedType::isDynamic(known)) {
      s.in[d] = z.c(known);
      continue;
    }
    // The smallest input with this output size:
    // (out - 1) * stride + dilation * (k - 1) + 1 - pads.
    Value extent = z.add(z.mul(z.sub(s.out[d], z.c(1)), p.stride[d]),
                         z.mul(z.sub(s.k[d], z.c(1)), p.dilation[d]));
    s.in[d] =
        z.atLeastZero(z.sub(extent, z.c(p.padBefore[d] + p.padAfter[d] - 1)));
  }
  return s;
}

ConvSizes nf::convBackpropFilterSizes(OpBuilder &b, Location loc,
                                      const ConvParams &p, Value x, Value dy,
                                      RankedTensorType type) {
  Sizes z{b, loc};
  ConvSizes s;
  s.n = z.dim(x, 0);
  s.c = z.dim(x, p.channelDim());
  s.o = z.dim(dy, p.channelDim());
  for (int d = 0; d < 2; ++d) {
    s.in[d] = z.dim(x, p.spatialDim(d));
    s.out[d] = z.dim(dy, p.spatialDim(d));
    int64_t known = type.getDimSize(p.spatialDim(d));
    if (!ShapedType::isDynamic(known)) {
      s.k[d] = z.c(known);
      continue;
    }
    // The largest filter with this output size:
    // (in + pads - 1 - (out - 1) * stride) / dilation + 1.
    Value room = z.sub(z.add(s.in[d], z.c(p.padBefore[d] + p.padAfter[d] - 1)),
                       z.mul(z.sub(s.out[d], z.c(1)), p.stride[d]));
    s.k[d] = z.add(z.div(z.atLeastZero(room), p.dilation[d]), z.c(1));
  }
  return s;
}
