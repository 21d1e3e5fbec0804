//===- NFOps.cpp - nf dialect operations ------------------------*- C++ -*-===//
//
// Part of normfuse. Holds the generated op definitions and the helpers
// shared by all nf ops. The verifiers and folders live beside their op
// families: NormOps.cpp, PointwiseOps.cpp, ProducerOps.cpp, FusedOp.cpp.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::nf;

Type mlir::nf::getAccumulationType(Type elementType) {
  if (elementType.isF64())
    return elementType;
  return Float32Type::get(elementType.getContext());
}

#define GET_OP_CLASSES
#include "normfuse/Dialect/NF/IR/NFOps.cpp.inc"
