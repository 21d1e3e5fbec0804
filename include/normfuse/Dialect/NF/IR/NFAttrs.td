//===- NFAttrs.td - nf dialect attributes ------------------*- tablegen -*-===//
//
// Part of normfuse. Enumerations shared by nf ops: the data layout that
// places the channel axis, and the GELU approximation.
//
//===----------------------------------------------------------------------===//

#ifndef NF_ATTRS_TD
#define NF_ATTRS_TD

include "normfuse/Dialect/NF/IR/NFDialect.td"
include "mlir/IR/EnumAttr.td"

def NF_Layout : I32EnumAttr<"Layout", "where the channel axis is", [
    I32EnumAttrCase<"NCHW", 0, "nchw">,
    I32EnumAttrCase<"NHWC", 1, "nhwc">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::nf";
  let description = [{
    `nchw` (channels first): the channel axis is dimension 1, as in PyTorch.
    `nhwc` (channels last): the channel axis is the last dimension, as in
    TensorFlow and TOSA. For rank-2 `(N, C)` tensors both name dimension 1.
    For conv2d, `nchw` pairs with an OIHW filter and `nhwc` with an OHWI
    filter (TOSA's and cuDNN's channels-last filter layout).
  }];
}

def NF_LayoutAttr : EnumAttr<NF_Dialect, NF_Layout, "layout"> {
  let assemblyFormat = "`<` $value `>`";
}

def NF_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how GELU evaluates the Gaussian CDF", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Tanh", 1, "tanh">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::nf";
  let description = [{
    `none`: exact, `0.5 * x * (1 + erf(x / sqrt(2)))`.
    `tanh`: `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.
  }];
}

def NF_GeluApproximationAttr
    : EnumAttr<NF_Dialect, NF_GeluApproximation, "approximation"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // NF_ATTRS_TD
