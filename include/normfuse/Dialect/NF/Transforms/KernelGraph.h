//===- KernelGraph.h - what a function costs in kernels ---------*- C++ -*-===//
//
// Part of normfuse. Counts the kernels a function launches (each nf.fused op
// and each other compute op is one; constants, reshapes and casts are views,
// not kernels) and draws its graph of kernels as Graphviz DOT, to show what
// raising and fusion did.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_DIALECT_NF_TRANSFORMS_KERNELGRAPH_H
#define NORMFUSE_DIALECT_NF_TRANSFORMS_KERNELGRAPH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::nf {

/// Whether `op` (at the top level of a function) runs as a kernel of its
/// own: false for constants, views (reshapes, casts) and terminators.
bool isKernelOp(Operation *op);

/// The number of kernels the function's body launches.
unsigned countKernels(func::FuncOp function);

/// Writes the function's kernel graph as a DOT `subgraph cluster_*` (the
/// caller writes the enclosing `digraph`): arguments, kernels (a fused op
/// lists the ops it holds), views and results, with the tensor type on
/// each edge.
void printKernelGraph(func::FuncOp function, llvm::raw_ostream &os);

/// Writes the kernel graphs of every function the module defines as one DOT
/// `digraph`, a cluster per function.
void printKernelGraphs(ModuleOp module, llvm::raw_ostream &os);

} // namespace mlir::nf

#endif // NORMFUSE_DIALECT_NF_TRANSFORMS_KERNELGRAPH_H
