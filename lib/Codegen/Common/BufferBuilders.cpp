//===- BufferBuilders.cpp - tensors to buffers and back ---------*- C++ -*-===//
//
// Part of normfuse. See BufferBuilders.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/Common/BufferBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::nf;

Value nf::getBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  return b.create<bufferization::ToMemrefOp>(loc, memrefType, tensor,
                                             /*read_only=*/true);
}

Value nf::allocBuffer(OpBuilder &b, Location loc, RankedTensorType type,
                      Value like) {
  SmallVector<Value> dynamicSizes;
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      dynamicSizes.push_back(b.create<memref::DimOp>(loc, like, i));
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  return b.create<memref::AllocOp>(loc, memrefType, dynamicSizes,
                                   b.getI64IntegerAttr(64));
}

Value nf::toTensor(OpBuilder &b, Location loc, Value buffer) {
  auto memrefType = cast<MemRefType>(buffer.getType());
  auto tensorType =
      RankedTensorType::get(memrefType.getShape(), memrefType.getElementType());
  return b.create<bufferization::ToTensorOp>(loc, tensorType, buffer,
                                             /*restrict=*/true,
                                             /*writable=*/true);
}

Value nf::toTensorOf(OpBuilder &b, Location loc, Value buffer,
                     RankedTensorType type) {
  Value tensor = toTensor(b, loc, buffer);
  if (tensor.getType() == type)
    return tensor;
  return b.create<tensor::CastOp>(loc, type, tensor);
}

Value nf::getNumElements(OpBuilder &b, Location loc, Value buffer, int64_t from,
                         int64_t to) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t staticProduct = 1;
  Value product;
  for (int64_t i = from; i < to; ++i) {
    if (!type.isDynamicDim(i)) {
      staticProduct *= type.getDimSize(i);
      continue;
    }
    Value dim = b.create<memref::DimOp>(loc, buffer, i);
    product = product ? b.createOrFold<arith::MulIOp>(loc, product, dim) : dim;
  }
  Value result = b.create<arith::ConstantIndexOp>(loc, staticProduct);
  return product ? b.createOrFold<arith::MulIOp>(loc, product, result) : result;
}
