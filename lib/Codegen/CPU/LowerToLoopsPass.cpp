//===- LowerToLoopsPass.cpp - the nf-lower-to-loops pass --------*- C++ -*-===//
//
// Part of normfuse. A thin pass over the loop-lowering patterns: every nf op
// must be rewritten, and one without a lowering is reported by name.
//
//===----------------------------------------------------------------------===//

#include "LoopUtils.h"
#include "PointwiseChain.h"
#include "normfuse/Codegen/Common/FunctionPrep.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Dialect/NF/IR/NFDialect.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFLOWERTOLOOPSPASS
#include "normfuse/Codegen/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;

namespace {
/// Lowers each nf.fused whose body is a norm with a pointwise prologue and
/// epilogue to one loop nest (LowerFused.cpp), and replaces every other one
/// by the ops of its region, which then run one after the other.
void lowerFusedOps(Operation *root, const LoopLoweringOptions &options) {
  SmallVector<FusedOp> fused;
  root->walk([&](FusedOp op) { fused.push_back(op); });
  IRRewriter rewriter(root->getContext());
  // Post-order: inner ops first (nf.fused does not nest today, but the
  // order keeps this right if it ever does).
  for (FusedOp op : fused) {
    if (succeeded(cpu::lowerFusedToLoops(rewriter, op, options)))
      continue;
    inlineFusedBody(rewriter, op);
  }
}

/// llvm.fence declares no memory effects, and the buffer deallocation
/// pipeline rejects ops of unknown effects. The fences that close loops of
/// streaming stores (LoopUtils.h) order every earlier access to memory
/// before every later one: to that pipeline, they read and write.
struct FenceMemoryEffects
    : MemoryEffectOpInterface::ExternalModel<FenceMemoryEffects,
                                             LLVM::FenceOp> {
  void
  getEffects(Operation *,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

/// The caches, as a resource: memref.prefetch (which declares no memory
/// effects either) reads its memref and writes the caches, which keeps it
/// alive without ordering it against the stores of the loop nest.
struct CacheResource : SideEffects::Resource::Base<CacheResource> {
  StringRef getName() final { return "nf.caches"; }
};

struct PrefetchEffects
    : MemoryEffectOpInterface::ExternalModel<PrefetchEffects,
                                             memref::PrefetchOp> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    effects.emplace_back(MemoryEffects::Read::get(), &op->getOpOperand(0));
    effects.emplace_back(MemoryEffects::Write::get(), CacheResource::get());
  }
};

struct NFLowerToLoopsPass
    : nf::impl::NFLowerToLoopsPassBase<NFLowerToLoopsPass> {
  using NFLowerToLoopsPassBase::NFLowerToLoopsPassBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    NFLowerToLoopsPassBase::getDependentDialects(registry);
    registry.addExtension(+[](MLIRContext *ctx, LLVM::LLVMDialect *) {
      LLVM::FenceOp::attachInterface<FenceMemoryEffects>(*ctx);
    });
    registry.addExtension(+[](MLIRContext *ctx, memref::MemRefDialect *) {
      memref::PrefetchOp::attachInterface<PrefetchEffects>(*ctx);
    });
  }

  /// The declaration of the OpenMP runtime's omp_get_max_threads that the
  /// lowering may call (cpu::kMaxThreadsFunction), added unless the module
  /// has it (`added` says which); null after an error.
  func::FuncOp declareMaxThreads(ModuleOp module, bool &added) {
    OpBuilder b(module.getContext());
    auto type = b.getFunctionType({}, {b.getI32Type()});
    added = false;
    Operation *existing =
        SymbolTable::lookupSymbolIn(module, cpu::kMaxThreadsFunction);
    if (existing) {
      auto function = dyn_cast<func::FuncOp>(existing);
      if (!function || function.getFunctionType() != type) {
        existing->emitError()
            << "nf-lower-to-loops: '" << cpu::kMaxThreadsFunction
            << "' is the OpenMP runtime's, of type " << type;
        return nullptr;
      }
      return function;
    }
    b.setInsertionPointToStart(module.getBody());
    auto function =
        b.create<func::FuncOp>(module.getLoc(), cpu::kMaxThreadsFunction, type);
    function.setPrivate();
    added = true;
    return function;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Wider vectors than 64 lanes crash LLVM's instruction selection (or
    // exhaust memory): refused here, with every other non-power of two.
    if (vectorWidth < 1 || vectorWidth > 64 ||
        !llvm::isPowerOf2_64(static_cast<uint64_t>(vectorWidth))) {
      module.emitError() << "nf-lower-to-loops: vector-width must be a power "
                            "of two from 1 to 64, got "
                         << static_cast<int64_t>(vectorWidth);
      return signalPassFailure();
    }
    bool added = false;
    func::FuncOp maxThreads = declareMaxThreads(module, added);
    if (!maxThreads)
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    LoopLoweringOptions options;
    options.vectorWidth = vectorWidth;
    lowerFusedOps(module, options);
    RewritePatternSet patterns(ctx);
    populateLowerPointwiseToLoopsPatterns(patterns, options);
    populateLowerNormsToLoopsPatterns(patterns, options);
    populateLowerChannelNormsToLoopsPatterns(patterns, options);
    populateLowerNormGradsToLoopsPatterns(patterns, options);
    populateLowerProducersToLoopsPatterns(patterns, options);

    // Name the ops no pattern lowers, rather than the conversion's generic
    // "failed to legalize": the lowered ops are the patterns' roots.
    llvm::DenseSet<OperationName> lowered;
    for (const std::unique_ptr<RewritePattern> &pattern :
         patterns.getNativePatterns())
      if (std::optional<OperationName> root = pattern->getRootKind())
        lowered.insert(*root);
    bool unsupported = false;
    getOperation().walk([&](Operation *op) {
      if (isa<NFDialect>(op->getDialect()) &&
          !lowered.contains(op->getName())) {
        op->emitOpError() << "has no CPU lowering yet";
        unsupported = true;
      }
    });
    if (unsupported)
      return signalPassFailure();

    ConversionTarget target(*ctx);
    target.addIllegalDialect<NFDialect>();
    // LLVM: the fences closing parallel iterations with streaming stores.
    target.addLegalOp<LLVM::FenceOp>();
    target.addLegalDialect<
        arith::ArithDialect, bufferization::BufferizationDialect,
        math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
        tensor::TensorDialect, vector::VectorDialect, func::FuncDialect>();
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    module.walk([](func::FuncOp function) { copyAliasedResults(function); });
    if (added && SymbolTable::symbolKnownUseEmpty(maxThreads, module))
      maxThreads.erase();
  }
};
} // namespace
