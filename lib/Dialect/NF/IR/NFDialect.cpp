//===- NFDialect.cpp - the nf dialect ---------------------------*- C++ -*-===//
//
// Part of normfuse. Registers the ops, attributes and type of the nf dialect
// and holds the generated dialect, enum and attribute definitions.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Dialect/NF/IR/NFDialect.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nf;

#include "normfuse/Dialect/NF/IR/NFDialect.cpp.inc"
#include "normfuse/Dialect/NF/IR/NFEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "normfuse/Dialect/NF/IR/NFAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "normfuse/Dialect/NF/IR/NFTypes.cpp.inc"

void NFDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "normfuse/Dialect/NF/IR/NFOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "normfuse/Dialect/NF/IR/NFAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "normfuse/Dialect/NF/IR/NFTypes.cpp.inc"
      >();
}
