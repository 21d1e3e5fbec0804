//===- LowerToGPU.h - the lowerings of nf ops to GPU kernels ----*- C++ -*-===//
//
// Part of normfuse. Each lowering replaces an nf op on tensors by the
// launch of a kernel it creates (in the module's gpu.module) on the op's
// buffers, following the schedule the CUDA schedule layer picks.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_CODEGEN_CUDA_LOWERTOGPU_H
#define NORMFUSE_LIB_CODEGEN_CUDA_LOWERTOGPU_H

#include "normfuse/Codegen/CUDA/Schedule.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::nf::cuda {

struct GPULoweringOptions {
  GpuTarget target;
  /// Row norms: the schedule kind, or Auto for the schedule layer's choice.
  ForcedRowNormKind rowNorm = ForcedRowNormKind::Auto;
  /// f32 products may run on tensor cores as tf32 (PyTorch's allow_tf32).
  bool allowTf32 = false;
};

/// The options of a pass named `pass` from its arch and row-norm-schedule
/// texts, or failure with a diagnostic at `root`.
FailureOr<GPULoweringOptions>
parseGPULoweringOptions(Operation *root, llvm::StringRef pass,
                        llvm::StringRef arch, llvm::StringRef rowNormSchedule);

/// The first step of the lowering (ChooseSchedules.cpp): every row norm,
/// norm gradient, per-channel reduction (bias_add_grad, batch norms),
/// matrix product (matmul, conv2d and its gradients), elementwise op
/// (elementwiseShapeOf), linalg.generic (genericKernelShapeOf,
/// linalgReductionShapeOf), pad and chain of insert_slices
/// (windowCopyShapeOf) under `root` without
/// a schedule gets the one the schedule layer chooses, as text in
/// kGpuScheduleAttr; one that has a schedule keeps it, checked against
/// the op (a diagnostic at the op and failure where it cannot run it).
LogicalResult chooseGpuSchedules(Operation *root,
                                 const GPULoweringOptions &options);

/// The schedule a row norm carries (chooseGpuSchedules ran), or failure
/// with a diagnostic.
FailureOr<RowNormSchedule> readRowNormSchedule(Operation *op);
/// The same for a norm gradient (layer_norm_grad, rms_norm_grad).
FailureOr<RowNormGradSchedule> readRowNormGradSchedule(Operation *op);
/// The same for a per-channel reduction (bias_add_grad,
/// batch_norm_training, batch_norm_grad).
FailureOr<ChannelReductionSchedule> readChannelReductionSchedule(Operation *op);
/// The same for a group or instance norm gradient.
FailureOr<GroupNormGradSchedule> readGroupNormGradSchedule(Operation *op);
/// The same for a matrix product (matmul, conv2d and its gradients; an
/// nf.fused product's producer).
FailureOr<TiledProductSchedule> readTiledProductSchedule(Operation *op);

/// The same for an elementwise op (relu, gelu, silu, add, mul, bias_add,
/// the activation gradients, batch_norm_inference).
FailureOr<PointwiseSchedule> readPointwiseSchedule(Operation *op);

/// What the schedule of elementwise op `op` (those lowerPointwiseToGPU
/// takes) is chosen from: its elements (kDynamic if unknown) and its
/// widest element type, of its result and its full-size operands (which
/// every vector must allow). None for other ops.
std::optional<std::pair<int64_t, Type>> elementwiseShapeOf(Operation *op);

/// The same for the elementwise pass of a batch norm (batch_norm_training's
/// y, batch_norm_grad's dx) after its sums; none for other ops.
std::optional<std::pair<int64_t, Type>> elementwisePassShapeOf(Operation *op);

/// What the schedule of product op `op` (matmul, conv2d and its gradients)
/// is chosen from, as the lowering will run it: alone, or as the producer
/// of an nf.fused group lowered as one kernel (its result then the fused
/// op's). None for other ops.
std::optional<ProductShape> productShapeOf(Operation *op,
                                           const GPULoweringOptions &options);

/// layer_norm, rms_norm, and group_norm and instance_norm of static shape;
/// fails on other ops.
LogicalResult lowerRowNormToGPU(RewriterBase &rewriter, Operation *op,
                                const GPULoweringOptions &options);

/// An nf.fused whose body is one of those norms with pointwise ops
/// around it (Codegen/Common/FusedGroups.h): one row-norm kernel that
/// applies the prologue to x as it loads it and the epilogue to y before
/// it stores it. Fails, changing nothing, for any other body.
LogicalResult lowerFusedRowNormToGPU(RewriterBase &rewriter, FusedOp fused,
                                     const GPULoweringOptions &options);

/// The most row slots (blocks of partial parameter gradients, the parts
/// their totals add) of a layer_norm_grad or rms_norm_grad of `type`
/// normalized from `axis` under `g`: what the schedule layer sizes the
/// totals' kernel for (kDynamic where the shape is not static).
int64_t plannedGradRowSlots(RankedTensorType type, int64_t axis,
                            const RowNormGradSchedule &g, Location loc);

/// layer_norm_grad and rms_norm_grad; fails on other ops.
LogicalResult lowerNormGradToGPU(RewriterBase &rewriter, Operation *op,
                                 const GPULoweringOptions &options);

/// group_norm_grad and instance_norm_grad of static shape: sums per
/// (image, channel), the group sums and parameter gradients from them, then
/// dx; fails on other ops.
LogicalResult lowerGroupNormGradToGPU(RewriterBase &rewriter, Operation *op,
                                      const GPULoweringOptions &options);

/// batch_norm_training, batch_norm_grad and bias_add_grad (static shapes):
/// per-channel sums, then elementwise kernels; fails on other ops.
LogicalResult lowerChannelReductionToGPU(RewriterBase &rewriter, Operation *op,
                                         const GPULoweringOptions &options);

/// matmul, conv2d, conv2d_backprop_input and conv2d_backprop_filter of
/// static shape: one tiled product kernel each; fails on other ops.
LogicalResult lowerProductToGPU(RewriterBase &rewriter, Operation *op,
                                const GPULoweringOptions &options);

/// An nf.fused matmul or conv2d with a pointwise epilogue (no prologue, a
/// bias along the output channels): one product kernel that applies the
/// epilogue before it stores. Fails, changing nothing, for any other body.
LogicalResult lowerFusedProductToGPU(RewriterBase &rewriter, FusedOp fused,
                                     const GPULoweringOptions &options);

/// The value of one element from its operands' values (in the accumulation
/// type).
using ElementFn =
    llvm::function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)>;

/// Launches, at `b`'s insertion point, an elementwise kernel named after
/// `op` and `name` under schedule `s` over the tensors `operands` (of
/// `type`'s shape) and the per-channel (C) tensors `perChannel` along
/// `channelAxis`; returns the result tensor of `type`. `fn` gets the
/// operands' values, then the per-channel ones, in order.
Value emitElementwise(OpBuilder &b, Operation *op, RankedTensorType type,
                      ValueRange operands, ValueRange perChannel,
                      int64_t channelAxis, const PointwiseSchedule &s,
                      llvm::StringRef name, ElementFn fn);

/// relu, gelu, silu, add, mul, bias_add, the activation gradients and
/// batch_norm_inference; fails on other ops.
LogicalResult lowerPointwiseToGPU(RewriterBase &rewriter, Operation *op,
                                  const GPULoweringOptions &options);

/// Rewrites the kernels' index dialect ops and signed floor and ceiling
/// divisions (copied from linalg bodies) as the arith ops the CUDA printer
/// prints (ExpandForPrinter.cpp).
void expandOpsForPrinter(gpu::GPUModuleOp kernels);

/// Fuses the chains of elementwise linalg.generic ops of `function`, each
/// producer into its only user (upstream's elementwise fusion).
void fuseElementwiseLinalg(func::FuncOp function);

/// Each tensor.pad of static sizes and a constant value, and each chain of
/// static tensor.insert_slice ops into a tensor.empty (what TOSA's concat
/// becomes), as one kernel that writes every element of the result once
/// (LowerPadsAndConcats.cpp), under the schedule written on the pad or
/// the chain's last insert_slice. Others are left for the caller to
/// report. Fails, with a diagnostic, on a schedule it cannot read.
LogicalResult lowerPadsAndConcatsToGPU(func::FuncOp function,
                                       RewriterBase &rewriter);

/// What the schedule of the copy kernel of a pad or a chain of
/// insert_slices (lowerPadsAndConcatsToGPU) is chosen from: the result's
/// elements and their type, for a tensor.pad and the last insert_slice of
/// a chain that kernel takes. None for other ops.
std::optional<std::pair<int64_t, Type>> windowCopyShapeOf(Operation *op);

/// What the schedule of the kernel of a linalg.generic with reduction
/// loops (lowerLinalgReduction) is chosen from. None for other ops.
std::optional<LinalgReductionShape> linalgReductionShapeOf(Operation *op);

/// The schedule a linalg reduction's generic carries (chooseGpuSchedules
/// ran), or failure with a diagnostic at the op.
FailureOr<LinalgReductionSchedule> readLinalgReductionSchedule(Operation *op);

/// What the schedule of the kernel of an all-parallel linalg.generic
/// (those lowerLinalgToGPU takes as elementwise kernels) is chosen from.
/// None for other ops (a generic with reduction loops among them).
std::optional<GenericKernelShape> genericKernelShapeOf(Operation *op);

/// Every named linalg op (a transpose, a broadcast, a map, a fill that
/// does not only initialize reductions) as the generic it is, so that its
/// kernel's schedule can be written on it; one without a generic form is
/// left for lowerLinalgToGPU to report.
void generalizeNamedLinalg(func::FuncOp function, RewriterBase &rewriter);

/// A linalg op on tensors (a generic, named ops generalized first): one
/// elementwise kernel that reads each operand through its indexing map
/// where its loops are all parallel, else one reduction kernel
/// (LowerLinalgReductions.cpp); what neither takes is an error at the op
/// naming the reason.
LogicalResult lowerLinalgToGPU(RewriterBase &rewriter, Operation *op,
                               const GPULoweringOptions &options);

} // namespace mlir::nf::cuda

#endif // NORMFUSE_LIB_CODEGEN_CUDA_LOWERTOGPU_H
