//===- LowerToGPUPass.cpp - the nf-lower-to-gpu pass ------------*- C++ -*-===//
//
// Part of normfuse. A thin pass over the CUDA lowerings: TOSA ops (and
// elementwise arith/math ops on tensors) go to linalg as on the CPU
// (nf-lower-tosa-to-linalg), chains of elementwise linalg ops are fused,
// an nf.fused row norm with pointwise neighbours becomes one kernel, other
// nf.fused groups are inlined (their ops run one kernel each), then every
// nf op and every linalg op becomes a kernel and its launch; an op that
// cannot run on the GPU is reported by name, with the reason.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "LowerToGPU.h"
#include "normfuse/Codegen/Common/FunctionPrep.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Dialect/NF/IR/NFDialect.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/Dialect/NF/Transforms/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFLOWERTOGPUPASS
#include "normfuse/Codegen/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

/// Whether `op` computes on tensors in a way no CUDA lowering takes: a
/// TOSA or arith/math op on tensors left after the lowering to linalg, or a
/// tensor op that is not a view of its operand's buffer (a slice, a pad, a
/// concatenation, a dynamic reshape). Tensor constants are not computation;
/// the GPU lowering treats them where a kernel reads them.
static bool isUnloweredTensorOp(Operation *op) {
  Dialect *dialect = op->getDialect();
  if (!dialect)
    return false;
  StringRef ns = dialect->getNamespace();
  if (ns == "tosa")
    return true;
  if (ns == "tensor")
    return !isa<tensor::EmptyOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                tensor::CastOp, tensor::DimOp, tensor::BitcastOp>(op);
  if ((ns != "arith" && ns != "math") || isa<arith::ConstantOp>(op))
    return false;
  return llvm::any_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>);
}

namespace {

/// Prepares the function's tensor constants for the GPU: a splat that a
/// kernel reads as an operand stays (an immediate there); one used
/// otherwise (returned, or read by an nf op) becomes a linalg.fill, and so
/// a kernel that writes it. Any other constant tensor stays: bufferization
/// makes it a memref.global, which the launch plan uploads once and hands
/// the kernels that read it.
void prepareConstants(func::FuncOp function, RewriterBase &rewriter) {
  SmallVector<arith::ConstantOp> constants;
  function.walk([&](arith::ConstantOp c) {
    if (isa<RankedTensorType>(c.getType()) && !c->use_empty())
      constants.push_back(c);
  });
  for (arith::ConstantOp c : constants) {
    auto type = cast<RankedTensorType>(c.getType());
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    if (type.hasStaticShape() && type.getNumElements() == 0) {
      // Nothing to hold: an empty tensor.
      rewriter.setInsertionPointAfter(c);
      rewriter.replaceAllUsesWith(
          c, rewriter.create<tensor::EmptyOp>(c.getLoc(), type.getShape(),
                                              type.getElementType()));
      continue;
    }
    if (!dense || !dense.isSplat())
      continue;
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : c->getUses())
      if (!isa<linalg::LinalgOp>(use.getOwner()))
        uses.push_back(&use);
    if (uses.empty())
      continue;
    rewriter.setInsertionPointAfter(c);
    Value scalar = rewriter.create<arith::ConstantOp>(
        c.getLoc(), cast<TypedAttr>(dense.getSplatValue<Attribute>()));
    Value empty = rewriter.create<tensor::EmptyOp>(c.getLoc(), type.getShape(),
                                                   type.getElementType());
    Value filled =
        rewriter.create<linalg::FillOp>(c.getLoc(), scalar, empty).result();
    for (OpOperand *use : uses)
      use->set(filled);
  }
}

/// Rewrites each tensor.extract_slice of static offsets, sizes and strides
/// as the linalg.generic that copies it, reading the source through the map
/// d * stride + offset (a dimension the slice drops: its offset), so that
/// it becomes a kernel, or part of its consumer's.
void slicesToGenerics(func::FuncOp function, RewriterBase &rewriter) {
  SmallVector<tensor::ExtractSliceOp> slices;
  function.walk([&](tensor::ExtractSliceOp s) { slices.push_back(s); });
  for (tensor::ExtractSliceOp slice : slices) {
    RankedTensorType source = slice.getSourceType();
    RankedTensorType result = slice.getResultType();
    if (!source.hasStaticShape() || !result.hasStaticShape() ||
        ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
        ShapedType::isDynamicShape(slice.getStaticStrides()))
      continue;
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    MLIRContext *context = rewriter.getContext();
    SmallVector<AffineExpr> reads;
    unsigned next = 0;
    for (int64_t d = 0; d < source.getRank(); ++d) {
      int64_t offset = slice.getStaticOffsets()[d];
      if (dropped.test(d)) {
        reads.push_back(getAffineConstantExpr(offset, context));
        continue;
      }
      reads.push_back(getAffineDimExpr(next++, context) *
                          slice.getStaticStrides()[d] +
                      offset);
    }
    unsigned rank = result.getRank();
    AffineMap in = AffineMap::get(rank, 0, reads, context);
    AffineMap out = AffineMap::getMultiDimIdentityMap(rank, context);
    rewriter.setInsertionPoint(slice);
    Value empty = rewriter.create<tensor::EmptyOp>(
        slice.getLoc(), result.getShape(), result.getElementType());
    auto copy = rewriter.create<linalg::GenericOp>(
        slice.getLoc(), TypeRange{result}, ValueRange{slice.getSource()},
        ValueRange{empty}, ArrayRef<AffineMap>{in, out},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &b, Location loc, ValueRange args) {
          b.create<linalg::YieldOp>(loc, args[0]);
        });
    rewriter.replaceOp(slice, copy.getResult(0));
  }
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

/// tosa.matmul and tosa.conv2d as nf.matmul and nf.conv2d (+ nf.bias_add)
/// where nf takes their types and shapes; a zero bias folds away. Only
/// those ops and what replaces them are rewritten.
void raiseProducts(func::FuncOp function) {
  SmallVector<Operation *> products;
  function.walk([&](Operation *op) {
    if (isa<tosa::MatMulOp, tosa::Conv2DOp>(op))
      products.push_back(op);
  });
  if (products.empty())
    return;
  RewritePatternSet patterns(function.getContext());
  populateRaiseProducerPatterns(patterns);
  GreedyRewriteConfig config;
  config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
  (void)applyOpPatternsAndFold(products, std::move(patterns), config);
}

struct NFLowerToGPUPass : nf::impl::NFLowerToGPUPassBase<NFLowerToGPUPass> {
  using NFLowerToGPUPassBase::NFLowerToGPUPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<GPULoweringOptions> parsed = parseGPULoweringOptions(
        module, "nf-lower-to-gpu", arch, rowNormSchedule);
    if (failed(parsed))
      return signalPassFailure();
    GPULoweringOptions options = *parsed;
    options.allowTf32 = allowTf32;

    IRRewriter rewriter(&getContext());
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions) {
      if (function.isDeclaration())
        continue;
      // Matrix products and convolutions TOSA spells run on the nf
      // product kernels, fused or not (a convolution's bias is then an
      // nf.bias_add of its own); the rest of TOSA goes to linalg as on the
      // CPU (a function of nf ops alone is left as it is), and static
      // reshapes become views of the same buffer.
      raiseProducts(function);
      OpPassManager toLinalg(func::FuncOp::getOperationName());
      toLinalg.addPass(createNFLowerTosaToLinalgPass());
      if (failed(runPipeline(toLinalg, function)))
        return signalPassFailure();
      slicesToGenerics(function, rewriter);
      fuseElementwiseLinalg(function);
      prepareConstants(function, rewriter);
      generalizeNamedLinalg(function, rewriter);
      // Then every op's schedule, written on it (or checked where it is
      // written already); the lowerings read them.
      if (failed(chooseGpuSchedules(function, options)) ||
          failed(lowerPadsAndConcatsToGPU(function, rewriter)))
        return signalPassFailure();
      lowerFusedOps(function, rewriter, options);
      copyAliasedResults(function);
      SmallVector<Operation *> ops;
      function.walk<WalkOrder::PreOrder>([&](Operation *op) {
        // A linalg op's body is lowered with it.
        if (isa<linalg::LinalgOp>(op)) {
          ops.push_back(op);
          return WalkResult::skip();
        }
        // nf.resident_blocks and nf.tensor_map are the host side of a
        // kernel lowered already (a fused op's).
        if (op->getDialect() && isa<NFDialect>(op->getDialect()) &&
            !isa<ResidentBlocksOp, TensorMapOp>(op))
          ops.push_back(op);
        else if (isUnloweredTensorOp(op))
          ops.push_back(op);
        return WalkResult::advance();
      });
      for (Operation *op : ops) {
        if (isa<linalg::LinalgOp>(op)) {
          if (failed(lowerLinalgToGPU(rewriter, op, options)))
            return signalPassFailure();
          continue;
        }
        if (!isa<NFDialect>(op->getDialect())) {
          op->emitOpError() << "cannot run on the CUDA target: no GPU kernel "
                               "computes it yet";
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
    if (auto kernels =
            module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName)) {
      expandOpsForPrinter(kernels);
      eraseDeadOps(kernels);
    }
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
