//===- NFOps.h - nf dialect operations --------------------------*- C++ -*-===//
//
// Part of normfuse. Declares the ops of the nf dialect (generated from
// NFOps.td) and the helpers their verifiers and users share.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_DIALECT_NF_IR_NFOPS_H
#define NORMFUSE_DIALECT_NF_IR_NFOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "normfuse/Dialect/NF/IR/NFDialect.h"
#include "normfuse/Dialect/NF/IR/NFTraits.h"

#define GET_OP_CLASSES
#include "normfuse/Dialect/NF/IR/NFOps.h.inc"

namespace mlir::nf {

/// The channel axis of a tensor of rank `rank` in `layout`: 1 for NCHW, the
/// last dimension for NHWC. Requires rank >= 2.
inline int64_t getChannelAxis(Layout layout, int64_t rank) {
  return layout == Layout::NCHW ? 1 : rank - 1;
}

/// The element type reductions over `elementType` accumulate in: f64 for
/// f64, f32 for everything else.
Type getAccumulationType(Type elementType);

/// On a GPU kernel (gpu.func) whose blocks run in thread-block clusters of
/// this many consecutive blocks along x (2 to 8; sm_90 and newer): its
/// launches are whole clusters, and nf.cluster_barrier and
/// nf.cluster_store reach the cluster's blocks. The CUDA printer prints it
/// as __cluster_dims__.
constexpr llvm::StringLiteral kClusterBlocksAttr = "nf.cluster_blocks";
/// On a GPU kernel (gpu.func) whose warpgroups hand registers to each other
/// (nf.set_max_registers): the registers a thread of the block at launch
/// that their counts are reckoned from. A runtime refuses to launch the
/// kernel compiled to fewer (the increase would wait forever); the launch
/// plan carries it (Launch::launchRegisters).
constexpr llvm::StringLiteral kLaunchRegistersAttr = "nf.launch_registers";
/// On a host function's memref.alloc: the temporary starts as zero bytes
/// (the runtime fills it; a grid barrier's counter).
constexpr llvm::StringLiteral kZeroedAttr = "nf.zeroed";

} // namespace mlir::nf

#endif // NORMFUSE_DIALECT_NF_IR_NFOPS_H
