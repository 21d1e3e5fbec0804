//===- LowerToGPUPass.cpp - the nf-lower-to-gpu pass ------------*- C++ -*-===//
//
// Part of normfuse. A thin pass over the CUDA lowerings: an nf.fused row
// norm with pointwise neighbours becomes one kernel, other nf.fused groups
// are inlined (their ops run one kernel each), then every nf op becomes a
// kernel and its launch; an op that cannot run on the GPU is reported by
// name.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "LowerToGPU.h"
#include "normfuse/Codegen/Common/FunctionPrep.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Dialect/NF/IR/NFDialect.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFLOWERTOGPUPASS
#include "normfuse/Codegen/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

/// Whether `op` computes on tensors in a dialect the GPU lowering does not
/// take: TOSA, linalg, and elementwise arith or math ops on tensors (what
/// a framework's primitive ops or the ONNX importer's division and square
/// root are). Tensor constants are not computation; the GPU lowering
/// treats them where an nf op reads them.
static bool isUnloweredTensorOp(Operation *op) {
  Dialect *dialect = op->getDialect();
  if (!dialect)
    return false;
  StringRef ns = dialect->getNamespace();
  if (ns == "tosa" || ns == "linalg")
    return true;
  if ((ns != "arith" && ns != "math") || isa<arith::ConstantOp>(op))
    return false;
  return llvm::any_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>);
}

namespace {

/// Turns each static tosa.reshape into tensor.collapse_shape/expand_shape
/// (upstream's TosaToTensor pattern): views of the same buffer after
/// bufferization, so a reshaped scale or bias costs no kernel and no copy.
/// Dynamic reshapes stay, and are refused as other TOSA ops are.
LogicalResult reshapesToViews(func::FuncOp function) {
  ConversionTarget target(*function.getContext());
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  target.addDynamicallyLegalOp<tosa::ReshapeOp>([](tosa::ReshapeOp op) {
    auto from = dyn_cast<RankedTensorType>(op.getInput1().getType());
    auto to = dyn_cast<RankedTensorType>(op.getType());
    return !from || !to || !from.hasStaticShape() || !to.hasStaticShape();
  });
  TypeConverter converter;
  converter.addConversion([](Type type) { return type; });
  RewritePatternSet patterns(function.getContext());
  tosa::populateTosaToTensorConversionPatterns(converter, &patterns);
  return applyPartialConversion(function, target, std::move(patterns));
}

FailureOr<ForcedRowNormKind> parseRowNormKind(llvm::StringRef name) {
  return llvm::StringSwitch<FailureOr<ForcedRowNormKind>>(name)
      .Case("auto", ForcedRowNormKind::Auto)
      .Case("warp-rows", ForcedRowNormKind::WarpRows)
      .Case("block-row-registers", ForcedRowNormKind::BlockRowInRegisters)
      .Case("block-row-streaming", ForcedRowNormKind::BlockRowStreaming)
      .Case("split-row", ForcedRowNormKind::SplitRow)
      .Default(failure());
}

/// Lowers each nf.fused that is a row norm with pointwise neighbours, or a
/// matmul or conv2d with an epilogue, as one kernel, and inlines every
/// other one (its ops then run one kernel each).
void lowerFusedOps(func::FuncOp function, RewriterBase &rewriter,
                   const GPULoweringOptions &options) {
  SmallVector<FusedOp> fused;
  function.walk([&](FusedOp op) { fused.push_back(op); });
  for (FusedOp op : fused)
    if (failed(lowerFusedRowNormToGPU(rewriter, op, options)) &&
        failed(lowerFusedProductToGPU(rewriter, op, options)))
      inlineFusedBody(rewriter, op);
}

struct NFLowerToGPUPass : nf::impl::NFLowerToGPUPassBase<NFLowerToGPUPass> {
  using NFLowerToGPUPassBase::NFLowerToGPUPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    GPULoweringOptions options;
    FailureOr<TargetInfo> target = TargetInfo::parse(arch);
    if (failed(target)) {
      module.emitError() << "nf-lower-to-gpu: unknown GPU architecture '"
                         << arch << "' (expected sm_XY or compute_XY, 75 or "
                         << "newer)";
      return signalPassFailure();
    }
    options.target = *target;
    FailureOr<ForcedRowNormKind> rowNorm = parseRowNormKind(rowNormSchedule);
    if (failed(rowNorm)) {
      module.emitError() << "nf-lower-to-gpu: unknown row-norm schedule '"
                         << rowNormSchedule << "'";
      return signalPassFailure();
    }
    options.rowNorm = *rowNorm;

    IRRewriter rewriter(&getContext());
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions) {
      if (function.isDeclaration())
        continue;
      if (failed(reshapesToViews(function)))
        return signalPassFailure();
      lowerFusedOps(function, rewriter, options);
      copyAliasedResults(function);
      SmallVector<Operation *> ops;
      function.walk([&](Operation *op) {
        if (op->getDialect() && isa<NFDialect>(op->getDialect()))
          ops.push_back(op);
        else if (isUnloweredTensorOp(op))
          ops.push_back(op);
      });
      for (Operation *op : ops) {
        if (!isa<NFDialect>(op->getDialect())) {
          op->emitOpError()
              << "cannot run on the CUDA target: only nf ops are lowered to "
                 "GPU kernels (raise decomposed graphs first with "
                 "--nf-fuse-pipeline)";
          return signalPassFailure();
        }
        if (succeeded(lowerRowNormToGPU(rewriter, op, options)) ||
            succeeded(lowerNormGradToGPU(rewriter, op, options)) ||
            succeeded(lowerGroupNormGradToGPU(rewriter, op, options)) ||
            succeeded(lowerChannelReductionToGPU(rewriter, op, options)) ||
            succeeded(lowerPointwiseToGPU(rewriter, op, options)) ||
            succeeded(lowerProductToGPU(rewriter, op, options)))
          continue;
        op->emitOpError() << "has no CUDA lowering yet";
        return signalPassFailure();
      }
      eraseDeadOps(function);
    }
    if (auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName))
      eraseDeadOps(kernels);
  }

  /// The index arithmetic the lowerings left unused (sizes that folded to
  /// constants, constants of sizes that were not needed).
  static void eraseDeadOps(Operation *root) {
    SmallVector<Operation *> ops;
    root->walk<WalkOrder::PostOrder>([&](Operation *op) { ops.push_back(op); });
    for (Operation *op : llvm::reverse(ops))
      if (op != root && isOpTriviallyDead(op))
        op->erase();
  }
};

} // namespace
