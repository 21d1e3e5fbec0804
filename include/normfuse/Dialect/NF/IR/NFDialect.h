//===- NFDialect.h - the nf dialect -----------------------------*- C++ -*-===//
//
// Part of normfuse. Declares the nf dialect class, its attributes and
// its type.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_DIALECT_NF_IR_NFDIALECT_H
#define NORMFUSE_DIALECT_NF_IR_NFDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Types.h"

#include "normfuse/Dialect/NF/IR/NFDialect.h.inc"
#include "normfuse/Dialect/NF/IR/NFEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "normfuse/Dialect/NF/IR/NFAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "normfuse/Dialect/NF/IR/NFTypes.h.inc"

#endif // NORMFUSE_DIALECT_NF_IR_NFDIALECT_H
