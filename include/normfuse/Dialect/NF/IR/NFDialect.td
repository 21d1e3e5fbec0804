//===- NFDialect.td - the nf dialect definition ------------*- tablegen -*-===//
//
// Part of normfuse. The nf dialect: normalization layers, pointwise
// activations, matmul/conv2d producers and the fused op that holds a producer
// plus its pointwise epilogue. This file defines the dialect, the base class
// of its ops and the type constraints they share.
//
//===----------------------------------------------------------------------===//

#ifndef NF_DIALECT_TD
#define NF_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def NF_Dialect : Dialect {
  let name = "nf";
  let cppNamespace = "::mlir::nf";
  let summary = "Fused normalization and epilogue operations";
  let description = [{
    The `nf` dialect models the memory-bound layers of neural networks at the
    level frameworks express them: layer, RMS, group, instance and batch
    normalization (forward and backward), bias-add and the ReLU, GELU and
    SiLU activations (forward and backward), and the matmul and conv2d
    producers whose pointwise epilogues normfuse fuses into one kernel
    (`nf.fused`).

    All ops work on ranked tensors of `f16`, `bf16`, `f32` or `f64`.
    Reductions accumulate in `f32` (`f64` for `f64` inputs): saved statistics
    (mean, rstd, running mean and variance) have that accumulation type.
    Scale and bias operands have either the element type of the input or
    `f32` (mixed precision, as in Apex's fused layer norm).

    Statistics follow ONNX and PyTorch: `rstd` is `1 / sqrt(var + epsilon)`
    with the biased variance; the batch-norm running variance is updated with
    the unbiased variance, as PyTorch does.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 0;
}

class NF_Op<string mnemonic, list<Trait> traits = []>
    : Op<NF_Dialect, mnemonic, traits>;

// The TMA tensor map a GPU kernel takes (sm_90): what the host encodes for
// one buffer (nf.tensor_map), passed to the kernel by value.
def NF_TensorMapType : TypeDef<NF_Dialect, "TensorMap"> {
  let mnemonic = "tensor_map";
  let summary = "a TMA tensor map";
  let description = [{
    A tensor map of the Hopper Tensor Memory Accelerator: a tensor in
    global memory (its base address, element type, dimensions and strides),
    the box that one load copies and the shared-memory swizzle it lands
    with. `nf.tensor_map` makes one on the host; a GPU kernel takes it as
    an argument (printed as a `__grid_constant__` CUDA parameter, the
    runtime encoding it with `cuTensorMapEncodeTiled`) and `nf.tma_load`
    reads boxes through it.
  }];
}

// Marks ops that may appear as the epilogue (or prologue) of an `nf.fused`
// producer: elementwise in their first operand, one result of its shape.
def NF_PointwiseTrait : NativeOpTrait<"Pointwise"> {
  let cppNamespace = "::mlir::nf::OpTrait";
}

// Marks ops that may be the producer of an `nf.fused` op.
def NF_ProducerTrait : NativeOpTrait<"Producer"> {
  let cppNamespace = "::mlir::nf::OpTrait";
}

// Marks ops that the CUDA lowering makes, on no tensor: inside its kernels
// (barriers, cluster stores, wgmma), or on its host side.
def NF_GpuLoweringTrait : NativeOpTrait<"GpuLowering"> {
  let cppNamespace = "::mlir::nf::OpTrait";
}

def NF_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def NF_Tensor : RankedTensorOf<[F16, BF16, F32, F64]>;
// Statistics are held in the accumulation type.
def NF_StatTensor : RankedTensorOf<[F32, F64]>;

#endif // NF_DIALECT_TD
