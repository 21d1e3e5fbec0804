//===- VerifyUtils.h - checks shared by nf op verifiers ---------*- C++ -*-===//
//
// Part of normfuse. Small helpers that check one property of an nf op and,
// when it does not hold, emit an op error that names the operand, what it
// has and what was expected. Dynamic dimensions match any size.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_DIALECT_NF_IR_VERIFYUTILS_H
#define NORMFUSE_LIB_DIALECT_NF_IR_VERIFYUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::nf::detail {

/// Prints a shape as "[2, ?, 8]".
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Prints a type as MLIR does ("f32", "tensor<2x8xf16>").
std::string formatType(Type type);

/// Same rank and every pair of static dimensions equal.
bool isCompatibleShape(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// The shape of a ranked tensor value.
llvm::ArrayRef<int64_t> shapeOf(Value v);

/// Emits "<name> has shape [..]; expected [..] (<meaning>)" unless the shape
/// of `v` is compatible with `expected`.
LogicalResult verifyShape(Operation *op, Value v, llvm::StringRef name,
                          llvm::ArrayRef<int64_t> expected,
                          llvm::StringRef meaning);

/// Emits "<name> type T does not match the <refName> type U" unless `v` and
/// `ref` have compatible types.
LogicalResult verifySameType(Operation *op, Value v, llvm::StringRef name,
                             Value ref, llvm::StringRef refName);

/// A parameter (scale, bias, their gradients, a matmul result) has either
/// the element type of the input or f32.
LogicalResult verifyParamElementType(Operation *op, Value v,
                                     llvm::StringRef name, Type inputElement);

/// A computed result (matmul/conv output, a gradient) has the element type
/// of the input, or f32 when the input is 16-bit: results may widen, never
/// narrow.
LogicalResult verifyResultElementType(Operation *op, Value v,
                                      llvm::StringRef name, Type inputElement);

/// A statistic (mean, rstd, running stats) has the accumulation type of the
/// input's element type.
LogicalResult verifyStatElementType(Operation *op, Value v,
                                    llvm::StringRef name, Type inputElement);

/// `rank >= minRank`, else "input must have rank >= N (<layout>), got R".
LogicalResult verifyMinRank(Operation *op, Value v, llvm::StringRef name,
                            int64_t minRank, llvm::StringRef form);

/// `epsilon` is finite and non-negative.
LogicalResult verifyEpsilon(Operation *op, double epsilon);

} // namespace mlir::nf::detail

#endif // NORMFUSE_LIB_DIALECT_NF_IR_VERIFYUTILS_H
