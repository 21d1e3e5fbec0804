//===- BufferBuilders.h - tensors to buffers and back -----------*- C++ -*-===//
//
// Part of normfuse. How a lowering of an nf op on tensors reaches buffers:
// the buffer of an operand (bufferization.to_memref), a fresh buffer for a
// result and the tensor that hands it back (bufferization.to_tensor), so
// one-shot bufferization takes the function from there. Every back end
// lowers this way.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_COMMON_BUFFERBUILDERS_H
#define NORMFUSE_CODEGEN_COMMON_BUFFERBUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::nf {

/// The buffer holding a ranked tensor value (identity layout).
Value getBuffer(OpBuilder &b, Location loc, Value tensor);

/// Allocates a buffer for a tensor of `type`; dynamic sizes come from the
/// same-rank buffer `like` (which must have the same shape).
Value allocBuffer(OpBuilder &b, Location loc, RankedTensorType type,
                  Value like);

/// The tensor whose contents are `buffer` (freshly written by a lowering).
Value toTensor(OpBuilder &b, Location loc, Value buffer);

/// The tensor of `buffer`, cast to `type` where the two differ only in which
/// sizes are static.
Value toTensorOf(OpBuilder &b, Location loc, Value buffer,
                 RankedTensorType type);

/// The product of dimensions [from, to) of `buffer`, as an index value.
Value getNumElements(OpBuilder &b, Location loc, Value buffer, int64_t from,
                     int64_t to);

} // namespace mlir::nf

#endif // NORMFUSE_CODEGEN_COMMON_BUFFERBUILDERS_H
