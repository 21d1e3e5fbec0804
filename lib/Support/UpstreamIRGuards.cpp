//===- UpstreamIRGuards.cpp - refuse parsed IR that crashes MLIR 19 -------===//
//
// Part of normfuse. See UpstreamIRGuards.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Support/UpstreamIRGuards.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace {

/// The bytes MLIR stores for each element of a dense attribute of complex
/// element type `type`, or 0 where it is not a whole number of bytes.
int64_t complexElementBytes(ComplexType type) {
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  return bits % 8 == 0 ? 2 * bits / 8 : 0;
}

/// MLIR 19 parses a real literal as a complex one (`dense<0.5> :
/// tensor<1xcomplex<f32>>`, or `[0.5]`) and stores one float per element,
/// half the bytes the type says; printing it, or reading it, runs past the
/// data (SIGSEGV in ComplexIntElementIterator).
LogicalResult checkComplexData(Operation *op, DenseIntOrFPElementsAttr attr) {
  auto complex = dyn_cast<ComplexType>(attr.getElementType());
  if (!complex || !complex.getElementType().isIntOrFloat())
    return success();
  int64_t elementBytes = complexElementBytes(complex);
  if (elementBytes == 0)
    return success();
  int64_t elements = attr.isSplat() ? 1 : attr.getNumElements();
  int64_t bytes = static_cast<int64_t>(attr.getRawData().size());
  if (bytes == elements * elementBytes)
    return success();
  return emitError(op->getLoc())
         << "a dense literal of " << complex
         << " elements needs (real, imaginary) pairs, like dense<(0.5, 0.0)>: "
            "MLIR 19 takes a real number there and then crashes reading it, "
            "so normfuse refuses it (docs/UpstreamGuards.md)";
}

/// Builds of memref.expand_shape (tensor.expand_shape's bufferization, and
/// other lowerings) infer each group's sizes from the source and crash
/// (SIGSEGV in OperandStorage) when a group of the result has two or more
/// dynamic sizes: `tensor<?xf32> into tensor<?x?xf32>`, whatever
/// output_shape says.
template <typename ExpandOp> LogicalResult checkExpandGroups(ExpandOp op) {
  auto shape = cast<ShapedType>(op.getResult().getType()).getShape();
  for (const ReassociationIndices &group : op.getReassociationIndices()) {
    int64_t dynamic = llvm::count_if(
        group, [&](int64_t dim) { return ShapedType::isDynamic(shape[dim]); });
    if (dynamic < 2)
      continue;
    InFlightDiagnostic diag = emitError(op.getLoc());
    diag << op->getName() << "'s result has " << dynamic
         << " dynamic sizes in one reassociation group (result dimensions [";
    llvm::interleaveComma(group, diag);
    diag << "]): MLIR 19 crashes lowering a group with more than one, so "
            "normfuse refuses it; give the result type the sizes "
            "output_shape knows (docs/UpstreamGuards.md)";
    return failure();
  }
  return success();
}

struct UpstreamIRGuardPass
    : public PassWrapper<UpstreamIRGuardPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(UpstreamIRGuardPass)
  StringRef getArgument() const override { return "nf-upstream-ir-guards"; }
  StringRef getDescription() const override {
    return "refuse parsed IR that crashes MLIR 19 when printed or lowered";
  }
  void runOnOperation() override {
    if (failed(normfuse::checkUpstreamIRCrashes(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult normfuse::checkUpstreamIRCrashes(Operation *root) {
  bool failed = false;
  root->walk([&](Operation *op) {
    op->getAttrDictionary().walk([&](DenseIntOrFPElementsAttr attr) {
      if (mlir::failed(checkComplexData(op, attr)))
        failed = true;
    });
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
      failed |= mlir::failed(checkExpandGroups(expand));
    else if (auto expand = dyn_cast<memref::ExpandShapeOp>(op))
      failed |= mlir::failed(checkExpandGroups(expand));
  });
  return failure(failed);
}

std::unique_ptr<Pass> normfuse::createUpstreamIRGuardPass() {
  return std::make_unique<UpstreamIRGuardPass>();
}
