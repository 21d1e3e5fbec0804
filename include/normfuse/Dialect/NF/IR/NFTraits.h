//===- NFTraits.h - traits of nf ops ----------------------------*- C++ -*-===//
//
// Part of normfuse. Marker traits that classify nf ops for fusion: a
// Producer (matmul, conv2d, a forward norm) anchors an nf.fused op, and
// Pointwise ops (bias_add, activations, add, mul) may surround it.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_DIALECT_NF_IR_NFTRAITS_H
#define NORMFUSE_DIALECT_NF_IR_NFTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::nf::OpTrait {

/// An op that may appear before or after the producer of an nf.fused op: its
/// result has the shape of its first operand, element for element.
template <typename ConcreteType>
class Pointwise : public ::mlir::OpTrait::TraitBase<ConcreteType, Pointwise> {};

/// An op that may be the one producer of an nf.fused op.
template <typename ConcreteType>
class Producer : public ::mlir::OpTrait::TraitBase<ConcreteType, Producer> {};

/// An op the CUDA lowering makes, on no tensor: inside its kernels, or on
/// its host side (nf.resident_blocks). No tensor program holds one.
template <typename ConcreteType>
class GpuLowering
    : public ::mlir::OpTrait::TraitBase<ConcreteType, GpuLowering> {};

} // namespace mlir::nf::OpTrait

namespace mlir::nf {

/// Whether `op` may be fused as a pointwise prologue or epilogue.
inline bool isPointwiseOp(Operation *op) {
  return op->hasTrait<OpTrait::Pointwise>();
}

/// Whether `op` may be the producer of an nf.fused op.
inline bool isProducerOp(Operation *op) {
  return op->hasTrait<OpTrait::Producer>();
}

} // namespace mlir::nf

#endif // NORMFUSE_DIALECT_NF_IR_NFTRAITS_H
