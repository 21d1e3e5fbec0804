//===- LaunchPlanFromIR.h - read a launch plan off host IR ------*- C++ -*-===//
//
// Part of normfuse. Reads the LaunchPlan (normfuse/Runtime/LaunchPlan.h)
// off a host function that the nf-cuda-pipeline lowered: its memref.alloc
// temporaries, the reshapes and casts that view a buffer as a kernel's
// flat argument, the index arithmetic of its sizes and gpu.launch_func
// ops. A host function of dynamic shape (kernels that take their sizes as
// arguments) is read for given buffer shapes: one lowering serves every
// shape.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_TARGET_LAUNCHPLANFROMIR_H
#define NORMFUSE_TARGET_LAUNCHPLANFROMIR_H

#include "normfuse/Runtime/LaunchPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::nf {

/// The plan of `host` (on buffers, results as trailing out-parameters, of
/// which there are `numOutputs`) for buffers of `bufferShapes` (one per
/// argument; none: the arguments' static shapes). Fails with an error at
/// the first op it cannot follow.
FailureOr<normfuse::runtime::LaunchPlan>
readLaunchPlan(func::FuncOp host, unsigned numOutputs,
               ArrayRef<ArrayRef<int64_t>> bufferShapes = {});

} // namespace mlir::nf

#endif // NORMFUSE_TARGET_LAUNCHPLANFROMIR_H
