//===- InitDialects.cpp - the dialects normfuse's IR uses -------*- C++ -*-===//
//
// Part of normfuse. See InitDialects.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/InitDialects.h"
#include "normfuse/Dialect/NF/IR/NFDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::nf::registerAllDialects(DialectRegistry &registry) {
  registry.insert<nf::NFDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, func::FuncDialect,
                  gpu::GPUDialect, linalg::LinalgDialect, LLVM::LLVMDialect,
                  math::MathDialect, memref::MemRefDialect, nvgpu::NVGPUDialect,
                  omp::OpenMPDialect, scf::SCFDialect, tensor::TensorDialect,
                  tosa::TosaDialect, vector::VectorDialect>();
  // One-shot bufferization of what the CPU lowering leaves on tensors,
  // linalg ops included (the lowering of TOSA ops).
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
}
