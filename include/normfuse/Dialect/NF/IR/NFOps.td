//===- NFOps.td - nf dialect operations --------------------*- tablegen -*-===//
//
// Part of normfuse. The ops of the nf dialect: normalizations (forward and
// backward), pointwise activations (forward and backward), the matmul and
// conv2d producers with their backward ops, and `nf.fused`, which holds one
// producer with its pointwise prologue and epilogue as a single kernel.
// Semantics follow ONNX and PyTorch; see the descriptions below and
// ARCHITECTURE.md.
//
//===----------------------------------------------------------------------===//

#ifndef NF_OPS_TD
#define NF_OPS_TD

include "normfuse/Dialect/NF/IR/NFDialect.td"
include "normfuse/Dialect/NF/IR/NFAttrs.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Attribute shorthands.
def NF_EpsilonAttr : DefaultValuedAttr<F64Attr, "1.0e-5">;
def NF_DefaultLayoutAttr
    : DefaultValuedAttr<NF_LayoutAttr, "::mlir::nf::Layout::NCHW">;
def NF_GeluApproxDefaultAttr : DefaultValuedAttr<NF_GeluApproximationAttr,
    "::mlir::nf::GeluApproximation::None">;

//===----------------------------------------------------------------------===//
// Normalization, forward
//===----------------------------------------------------------------------===//

def NF_LayerNormOp : NF_Op<"layer_norm",
    [Pure, AttrSizedOperandSegments, NF_ProducerTrait]> {
  let summary = "layer normalization over the trailing dimensions";
  let description = [{
    Normalizes `input` over dimensions `[axis, rank)`, as ONNX
    LayerNormalization does (Keras `axis=(1, 2, 3)` on an NCHW tensor is
    `axis = 1`):

    ```
    mean = mean(x[..., axis:]),  var = mean((x - mean)^2)
    rstd = 1 / sqrt(var + epsilon)
    y    = (x - mean) * rstd * scale + bias
    ```

    `scale` and `bias` are optional and have shape `input.shape[axis:]`.
    `mean` and `rstd` have shape `input.shape[:axis]` followed by ones, in the
    accumulation type; they are what `nf.layer_norm_grad` consumes.

    Example:
    ```mlir
    %y, %mean, %rstd = nf.layer_norm %x scale %g bias %b {axis = 2 : i64}
        : (tensor<8x128x768xf16>, tensor<768xf32>, tensor<768xf32>)
        -> (tensor<8x128x768xf16>, tensor<8x128x1xf32>, tensor<8x128x1xf32>)
    ```
  }];
  let arguments = (ins NF_Tensor:$input, Optional<NF_Tensor>:$scale,
                   Optional<NF_Tensor>:$bias, I64Attr:$axis,
                   NF_EpsilonAttr:$epsilon);
  let results = (outs NF_Tensor:$result, NF_StatTensor:$mean,
                 NF_StatTensor:$rstd);
  let assemblyFormat = [{
    $input (`scale` $scale^)? (`bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def NF_RMSNormOp : NF_Op<"rms_norm",
    [Pure, NF_ProducerTrait]> {
  let summary = "root-mean-square normalization over the trailing dimensions";
  let description = [{
    ```
    rstd = 1 / sqrt(mean(x[..., axis:]^2) + epsilon)
    y    = x * rstd * scale
    ```
    `scale` is optional with shape `input.shape[axis:]`; `rstd` has shape
    `input.shape[:axis]` followed by ones, in the accumulation type.

    Example:
    ```mlir
    %y, %rstd = nf.rms_norm %x scale %g {axis = 1 : i64, epsilon = 1.0e-06}
        : (tensor<16x4096xbf16>, tensor<4096xbf16>)
        -> (tensor<16x4096xbf16>, tensor<16x1xf32>)
    ```
  }];
  let arguments = (ins NF_Tensor:$input, Optional<NF_Tensor>:$scale,
                   I64Attr:$axis, NF_EpsilonAttr:$epsilon);
  let results = (outs NF_Tensor:$result, NF_StatTensor:$rstd);
  let assemblyFormat = [{
    $input (`scale` $scale^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def NF_GroupNormOp : NF_Op<"group_norm",
    [Pure, AttrSizedOperandSegments, NF_ProducerTrait]> {
  let summary = "group normalization (NCHW or NHWC)";
  let description = [{
    Splits the `C` channels (dimension 1 for `nchw`, the last dimension for
    `nhwc`) into `num_groups` groups of `C / num_groups` consecutive channels
    and normalizes each `(n, group)` over its channels and all spatial
    dimensions. `scale` and `bias` are per channel, shape `(C)`; `mean` and
    `rstd` have shape `(N, num_groups)`. `num_groups` must divide `C`.

    Example (a UNet block on channels-last activations):
    ```mlir
    %y, %mean, %rstd = nf.group_norm %x scale %g bias %b
        {layout = #nf.layout<nhwc>, num_groups = 32 : i64}
        : (tensor<2x64x64x320xf16>, tensor<320xf16>, tensor<320xf16>)
        -> (tensor<2x64x64x320xf16>, tensor<2x32xf32>, tensor<2x32xf32>)
    ```
  }];
  let arguments = (ins NF_Tensor:$input, Optional<NF_Tensor>:$scale,
                   Optional<NF_Tensor>:$bias, I64Attr:$num_groups,
                   NF_EpsilonAttr:$epsilon, NF_DefaultLayoutAttr:$layout);
  let results = (outs NF_Tensor:$result, NF_StatTensor:$mean,
                 NF_StatTensor:$rstd);
  let assemblyFormat = [{
    $input (`scale` $scale^)? (`bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def NF_InstanceNormOp : NF_Op<"instance_norm",
    [Pure, AttrSizedOperandSegments, NF_ProducerTrait]> {
  let summary = "instance normalization (NCHW or NHWC)";
  let description = [{
    Group normalization with one group per channel: each `(n, c)` is
    normalized over all spatial dimensions (the input needs at least one).
    `scale` and `bias` have shape `(C)`; `mean` and `rstd` have shape `(N, C)`.
  }];
  let arguments = (ins NF_Tensor:$input, Optional<NF_Tensor>:$scale,
                   Optional<NF_Tensor>:$bias, NF_EpsilonAttr:$epsilon,
                   NF_DefaultLayoutAttr:$layout);
  let results = (outs NF_Tensor:$result, NF_StatTensor:$mean,
                 NF_StatTensor:$rstd);
  let assemblyFormat = [{
    $input (`scale` $scale^)? (`bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def NF_BatchNormTrainingOp : NF_Op<"batch_norm_training",
    [Pure, AttrSizedOperandSegments, NF_ProducerTrait]> {
  let summary = "batch normalization with batch statistics (training)";
  let description = [{
    Normalizes each channel over every dimension but the channel axis with
    the batch statistics, and returns them with the updated running
    statistics, as PyTorch's `batch_norm(training=True)`:

    ```
    running_mean' = (1 - momentum) * running_mean + momentum * batch_mean
    running_var'  = (1 - momentum) * running_var  + momentum * var * n/(n-1)
    ```
    where `var` is the biased batch variance and `n` the number of elements
    per channel. With `unbiased_running_var = false` the running variance
    takes `var` itself, as ONNX's `BatchNormalization` in training mode
    does. `scale`, `bias`, the running statistics and every result but
    `result` have shape `(C)`; statistics are in the accumulation type.
    `momentum` lies in `[0, 1]` and weighs the new batch statistic, as in
    PyTorch (ONNX's momentum is the weight of the old value: `1 - m`). With
    the unbiased update (the default) the input must hold more than one
    value per channel.
  }];
  let arguments = (ins NF_Tensor:$input, Optional<NF_Tensor>:$scale,
                   Optional<NF_Tensor>:$bias, NF_StatTensor:$running_mean,
                   NF_StatTensor:$running_var, NF_EpsilonAttr:$epsilon,
                   DefaultValuedAttr<F64Attr, "0.1">:$momentum,
                   NF_DefaultLayoutAttr:$layout,
                   DefaultValuedAttr<BoolAttr, "true">:$unbiased_running_var);
  let results = (outs NF_Tensor:$result, NF_StatTensor:$batch_mean,
                 NF_StatTensor:$batch_rstd, NF_StatTensor:$new_running_mean,
                 NF_StatTensor:$new_running_var);
  let assemblyFormat = [{
    $input (`scale` $scale^)? (`bias` $bias^)?
    `running` `(` $running_mean `,` $running_var `)` attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def NF_BatchNormInferenceOp : NF_Op<"batch_norm_inference",
    [Pure, AttrSizedOperandSegments, NF_ProducerTrait]> {
  let summary = "batch normalization with running statistics (inference)";
  let description = [{
    `y = (x - running_mean) / sqrt(running_var + epsilon) * scale + bias`,
    per channel. All operands but `input` have shape `(C)`.
  }];
  let arguments = (ins NF_Tensor:$input, Optional<NF_Tensor>:$scale,
                   Optional<NF_Tensor>:$bias, NF_StatTensor:$running_mean,
                   NF_StatTensor:$running_var, NF_EpsilonAttr:$epsilon,
                   NF_DefaultLayoutAttr:$layout);
  let results = (outs NF_Tensor:$result);
  let assemblyFormat = [{
    $input (`scale` $scale^)? (`bias` $bias^)?
    `running` `(` $running_mean `,` $running_var `)` attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalization, backward
//===----------------------------------------------------------------------===//

class NF_NormGradOp<string mnemonic, string norm> : NF_Op<mnemonic, [Pure]> {
  let summary = "gradients of `nf." # norm # "`";
  let description = [{
    From the output gradient, the forward input, the statistics the forward
    op saved and the optional scale, computes the gradients of the input,
    the scale and the bias. Without `scale` the forward op is taken to have
    had unit scale; `grad_scale` is then the gradient a unit scale would get.
    Shapes and types follow the forward op; parameter gradients have the
    shape of the forward op's scale.
  }];
  let results = (outs NF_Tensor:$grad_input, NF_Tensor:$grad_scale,
                 NF_Tensor:$grad_bias);
  let assemblyFormat = [{
    $grad_output `,` $input `,` $mean `,` $rstd (`scale` $scale^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def NF_LayerNormGradOp : NF_NormGradOp<"layer_norm_grad", "layer_norm"> {
  let arguments = (ins NF_Tensor:$grad_output, NF_Tensor:$input,
                   NF_StatTensor:$mean, NF_StatTensor:$rstd,
                   Optional<NF_Tensor>:$scale, I64Attr:$axis);
}

def NF_GroupNormGradOp : NF_NormGradOp<"group_norm_grad", "group_norm"> {
  let arguments = (ins NF_Tensor:$grad_output, NF_Tensor:$input,
                   NF_StatTensor:$mean, NF_StatTensor:$rstd,
                   Optional<NF_Tensor>:$scale, I64Attr:$num_groups,
                   NF_DefaultLayoutAttr:$layout);
}

def NF_InstanceNormGradOp
    : NF_NormGradOp<"instance_norm_grad", "instance_norm"> {
  let arguments = (ins NF_Tensor:$grad_output, NF_Tensor:$input,
                   NF_StatTensor:$mean, NF_StatTensor:$rstd,
                   Optional<NF_Tensor>:$scale, NF_DefaultLayoutAttr:$layout);
}

def NF_BatchNormGradOp : NF_NormGradOp<"batch_norm_grad", "batch_norm_training"> {
  let arguments = (ins NF_Tensor:$grad_output, NF_Tensor:$input,
                   NF_StatTensor:$mean, NF_StatTensor:$rstd,
                   Optional<NF_Tensor>:$scale, NF_DefaultLayoutAttr:$layout);
}

def NF_RMSNormGradOp : NF_Op<"rms_norm_grad", [Pure]> {
  let summary = "gradients of `nf.rms_norm`";
  let description = [{
    From the output gradient, the forward input, the saved `rstd` and the
    optional scale, computes the gradients of the input and of the scale.
  }];
  let arguments = (ins NF_Tensor:$grad_output, NF_Tensor:$input,
                   NF_StatTensor:$rstd, Optional<NF_Tensor>:$scale,
                   I64Attr:$axis);
  let results = (outs NF_Tensor:$grad_input, NF_Tensor:$grad_scale);
  let assemblyFormat = [{
    $grad_output `,` $input `,` $rstd (`scale` $scale^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pointwise ops
//===----------------------------------------------------------------------===//

class NF_UnaryPointwiseOp<string mnemonic, list<Trait> traits = []>
    : NF_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
                                           SameOperandsAndResultType,
                                           NF_PointwiseTrait])> {
  let results = (outs NF_Tensor:$result);
}

def NF_ReluOp : NF_UnaryPointwiseOp<"relu"> {
  let summary = "rectified linear unit, max(x, 0)";
  let description = [{ `relu(NaN)` is NaN. Folds `relu(relu(x))` to `relu(x)`. }];
  let arguments = (ins NF_Tensor:$input);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasFolder = 1;
}

def NF_GeluOp : NF_UnaryPointwiseOp<"gelu"> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `x * Phi(x)`; `approximate` picks the exact erf form (`none`, the
    default) or the tanh form.

    ```mlir
    %y = nf.gelu %x {approximate = #nf.approximation<tanh>} : tensor<8x3072xf16>
    ```
  }];
  let arguments = (ins NF_Tensor:$input,
                   NF_GeluApproxDefaultAttr:$approximate);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def NF_SiluOp : NF_UnaryPointwiseOp<"silu"> {
  let summary = "sigmoid linear unit, x * sigmoid(x)";
  let arguments = (ins NF_Tensor:$input);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

class NF_BinaryPointwiseOp<string mnemonic> : NF_Op<mnemonic,
    [Pure, Elementwise, Commutative, SameOperandsAndResultType,
     NF_PointwiseTrait]> {
  let arguments = (ins NF_Tensor:$lhs, NF_Tensor:$rhs);
  let results = (outs NF_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let hasFolder = 1;
}

def NF_AddOp : NF_BinaryPointwiseOp<"add"> {
  let summary = "elementwise addition (e.g. a residual connection)";
  let description = [{ Both operands and the result have one type. Folds `x + 0`. }];
}

def NF_MulOp : NF_BinaryPointwiseOp<"mul"> {
  let summary = "elementwise multiplication";
  let description = [{ Both operands and the result have one type. Folds `x * 1`. }];
}

def NF_BiasAddOp : NF_Op<"bias_add",
    [Pure, AllTypesMatch<["input", "result"]>, NF_PointwiseTrait]> {
  let summary = "adds a per-channel bias along the channel axis";
  let description = [{
    `y[..., c, ...] = x[..., c, ...] + bias[c]` with the channel axis given by
    `layout` (dimension 1 for `nchw`, the last for `nhwc`; for a rank-2
    matmul output both are dimension 1). `layout` has no default: a bias
    after a matmul (`nhwc`, the last dimension) and after an NCHW conv
    (`nchw`, dimension 1) differ as soon as the rank is above 2. `bias` has shape `(C)` and either
    the input's element type or `f32`. Folds a bias that is a zero constant.

    ```mlir
    %y = nf.bias_add %x, %b {layout = #nf.layout<nhwc>}
        : tensor<2x16x16x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins NF_Tensor:$input, NF_Tensor:$bias,
                   NF_LayoutAttr:$layout);
  let results = (outs NF_Tensor:$result);
  let assemblyFormat = "$input `,` $bias attr-dict `:` type($input) `,` type($bias)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Pointwise backward ops
//===----------------------------------------------------------------------===//

def NF_ReluGradOp : NF_Op<"relu_grad", [Pure, Elementwise, NF_PointwiseTrait,
                                        SameOperandsAndResultType]> {
  let summary = "ReLU gradient from the forward output";
  let description = [{
    `grad_input = result > 0 ? grad_output : 0`, from the forward *output*
    (not the input), so the forward input need not be kept alive.
  }];
  let arguments = (ins NF_Tensor:$grad_output, NF_Tensor:$result);
  let results = (outs NF_Tensor:$grad_input);
  let assemblyFormat = "$grad_output `,` $result attr-dict `:` type($grad_input)";
}

def NF_GeluGradOp : NF_Op<"gelu_grad", [Pure, Elementwise, NF_PointwiseTrait,
                                        SameOperandsAndResultType]> {
  let summary = "GELU gradient from the forward input";
  let arguments = (ins NF_Tensor:$grad_output, NF_Tensor:$input,
                   NF_GeluApproxDefaultAttr:$approximate);
  let results = (outs NF_Tensor:$grad_input);
  let assemblyFormat = "$grad_output `,` $input attr-dict `:` type($grad_input)";
}

def NF_SiluGradOp : NF_Op<"silu_grad", [Pure, Elementwise, NF_PointwiseTrait,
                                        SameOperandsAndResultType]> {
  let summary = "SiLU gradient from the forward input";
  let description = [{
    `grad_input = grad_output * s * (1 + x * (1 - s))` with `s = sigmoid(x)`.
  }];
  let arguments = (ins NF_Tensor:$grad_output, NF_Tensor:$input);
  let results = (outs NF_Tensor:$grad_input);
  let assemblyFormat = "$grad_output `,` $input attr-dict `:` type($grad_input)";
}

def NF_BiasAddGradOp : NF_Op<"bias_add_grad", [Pure, NF_ProducerTrait]> {
  let summary = "bias gradient: the output gradient summed per channel";
  let description = [{
    Sums `grad_output` over every dimension but the channel axis (`layout`
    is required, as for `nf.bias_add`). The result
    has shape `(C)` and the element type of `grad_output` or `f32`.
  }];
  let arguments = (ins NF_Tensor:$grad_output, NF_LayoutAttr:$layout);
  let results = (outs NF_Tensor:$grad_bias);
  let assemblyFormat = [{
    $grad_output attr-dict `:` type($grad_output) `->` type($grad_bias)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Producers: matmul and conv2d
//===----------------------------------------------------------------------===//

def NF_MatmulOp : NF_Op<"matmul", [Pure, NF_ProducerTrait]> {
  let summary = "batched matrix multiplication with optional transposes";
  let description = [{
    `result[b..., m, n] = sum_k lhs[b..., m, k] * rhs[b..., k, n]`, where
    `transpose_lhs` stores `lhs` as `[b..., k, m]` and `transpose_rhs` stores
    `rhs` as `[b..., n, k]`. The batch dimensions of the operands are equal,
    or one operand has none (a weight shared across the batch). Operands
    have one element type; the result has it too, or `f32`. The gradients
    of a matmul are matmuls with transposes.

    ```mlir
    %h = nf.matmul %x, %w {transpose_rhs}
        : tensor<8x128x768xf16>, tensor<3072x768xf16> -> tensor<8x128x3072xf16>
    ```
  }];
  let arguments = (ins NF_Tensor:$lhs, NF_Tensor:$rhs, UnitAttr:$transpose_lhs,
                   UnitAttr:$transpose_rhs);
  let results = (outs NF_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The result shape the operands' shapes give (`batch..., M, N`; dynamic
    /// where they are). Emits an error and fails where they disagree.
    ::mlir::FailureOr<::llvm::SmallVector<int64_t>> inferResultShape();
  }];
}

class NF_ConvOp<string mnemonic, list<Trait> traits = []>
    : NF_Op<mnemonic, !listconcat(traits, [Pure])> {
  dag convAttrs = (ins
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations,
      NF_DefaultLayoutAttr:$layout);
  let hasVerifier = 1;
}

def NF_Conv2DOp : NF_ConvOp<"conv2d", [NF_ProducerTrait]> {
  let summary = "2-D convolution (NCHW with OIHW filters or NHWC with OHWI)";
  let description = [{
    Cross-correlation of `input` with `filter`. `strides` and `dilations`
    are `[h, w]` and positive; `padding` is `[top, bottom, left, right]` and
    non-negative. With `nchw` the filter is `(O, I, KH, KW)`, with `nhwc` it
    is `(O, KH, KW, I)`. The output spatial size is
    `(H + top + bottom - dilation * (KH - 1) - 1) / stride + 1`.

    ```mlir
    %y = nf.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>}
        : tensor<2x3x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<2x16x32x32xf32>
    ```
  }];
  let arguments = !con((ins NF_Tensor:$input, NF_Tensor:$filter), convAttrs);
  let results = (outs NF_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $filter attr-dict `:` type($input) `,` type($filter) `->`
    type($result)
  }];
  let extraClassDeclaration = [{
    /// The result shape the shape rule above gives for the operands' shapes
    /// (dynamic where they are). Emits an error and fails where the
    /// operands and attributes do not fit together.
    ::mlir::FailureOr<::llvm::SmallVector<int64_t>> inferResultShape();
  }];
}

def NF_Conv2DBackpropInputOp : NF_ConvOp<"conv2d_backprop_input"> {
  let summary = "gradient of conv2d with respect to its input";
  let description = [{
    Given the output gradient and the filter of a `nf.conv2d` with these
    attributes, computes the gradient of its input. The result type names
    the input shape (several input sizes give one output size when the
    stride is above 1); the verifier checks that a conv2d of that input with
    this filter has the shape of `grad_output`.
  }];
  let arguments = !con((ins NF_Tensor:$grad_output, NF_Tensor:$filter),
                       convAttrs);
  let results = (outs NF_Tensor:$grad_input);
  let assemblyFormat = [{
    $grad_output `,` $filter attr-dict `:` type($grad_output) `,`
    type($filter) `->` type($grad_input)
  }];
}

def NF_Conv2DBackpropFilterOp : NF_ConvOp<"conv2d_backprop_filter"> {
  let summary = "gradient of conv2d with respect to its filter";
  let description = [{
    Given the input and the output gradient of a `nf.conv2d` with these
    attributes, computes the gradient of its filter; the verifier checks that
    a conv2d of `input` with a filter of the result's shape has the shape of
    `grad_output`.
  }];
  let arguments = !con((ins NF_Tensor:$input, NF_Tensor:$grad_output),
                       convAttrs);
  let results = (outs NF_Tensor:$grad_filter);
  let assemblyFormat = [{
    $input `,` $grad_output attr-dict `:` type($input) `,` type($grad_output)
    `->` type($grad_filter)
  }];
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def NF_FusedOp : NF_Op<"fused", [IsolatedFromAbove, RecursiveMemoryEffects,
                                 SingleBlock]> {
  let summary = "a producer with its pointwise prologue and epilogue, one kernel";
  let description = [{
    Holds exactly one producer (`nf.matmul`, `nf.conv2d`, a forward norm,
    or `nf.bias_add_grad`, a reduction) and any number of pointwise nf ops
    (`nf.bias_add`, `nf.relu`, `nf.gelu`, `nf.silu`, `nf.add`, `nf.mul` and
    the activation gradients) before it (a prologue, such as the residual
    add in front of a LayerNorm, or the GELU gradient whose result the bias
    gradient sums) and after it (the epilogue).
    The region is isolated from above: its block arguments are the
    `inputs`, in order, and `nf.yield` returns the `results`. Code
    generation emits the whole region as one kernel.

    ```mlir
    %y = nf.fused (%x, %w, %b) : (tensor<128x768xf16>, tensor<768x3072xf16>,
                                  tensor<3072xf16>) -> tensor<128x3072xf16> {
    ^bb0(%a: tensor<128x768xf16>, %k: tensor<768x3072xf16>, %c: tensor<3072xf16>):
      %0 = nf.matmul %a, %k : tensor<128x768xf16>, tensor<768x3072xf16> -> tensor<128x3072xf16>
      %1 = nf.bias_add %0, %c : tensor<128x3072xf16>, tensor<3072xf16>
      %2 = nf.gelu %1 {approximate = #nf.approximation<tanh>} : tensor<128x3072xf16>
      nf.yield %2 : tensor<128x3072xf16>
    }
    ```
  }];
  let arguments = (ins Variadic<NF_Tensor>:$inputs);
  let results = (outs Variadic<NF_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` `:` functional-type($inputs, $results)
    attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The one producer op in the body (null only on unverified IR).
    ::mlir::Operation *getProducer();
  }];
}

def NF_YieldOp : NF_Op<"yield", [Pure, Terminator, HasParent<"FusedOp">]> {
  let summary = "returns the results of an `nf.fused` body";
  let arguments = (ins Variadic<NF_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Host side of GPU lowering
//===----------------------------------------------------------------------===//

def NF_ResidentBlocksOp : NF_Op<"resident_blocks", [Pure, NF_GpuLoweringTrait]> {
  let summary = "how many blocks of a GPU kernel the device runs at once";
  let description = [{
    The blocks of `kernel`, launched with `block` threads and `shared`
    bytes of dynamic shared memory, that all the device's
    multiprocessors hold at once: the size of a persistent or one-wave grid.
    It depends on the registers the compiled kernel takes, so it is known
    only where the kernel is loaded: the launch plan keeps it as a value to
    compute then (normfuse::runtime::Residency). `planned` is the target's
    count from threads and shared memory alone, an upper bound: the plan is
    read with it, and the device's count never exceeds it. It does not fold.

    ```mlir
    %n = nf.resident_blocks @kernels::@k block 256 shared 0 planned 1056
    ```
  }];
  let arguments = (ins SymbolRefAttr:$kernel,
                       ConfinedAttr<I64Attr, [IntPositive]>:$block,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$shared,
                       ConfinedAttr<I64Attr, [IntPositive]>:$planned);
  let results = (outs Index:$blocks);
  let assemblyFormat = [{
    $kernel `block` $block `shared` $shared `planned` $planned attr-dict
  }];
}

def NF_TensorMapOp : NF_Op<"tensor_map", [Pure, NF_GpuLoweringTrait]> {
  let summary = "a TMA tensor map of a buffer, for a GPU kernel";
  let description = [{
    On the host: the tensor map of `buffer`, a flat buffer of f16, bf16 or
    f32, read as a tensor of `dims` elements (the innermost dimension
    first; one to three of them) whose dimensions after the first lie
    `strides` bytes apart (one per dimension after the first, multiples of
    16), loaded in boxes of `box` elements (at most 256 per dimension, the
    innermost a multiple of 16 bytes and at most the swizzle's width) that
    land in shared memory with a `swizzle` of 0, 32, 64 or 128 bytes.
    Elements outside the tensor load as zeros. The launch plan keeps it as
    a kernel argument that the runtime encodes where the buffer lies
    (`cuTensorMapEncodeTiled` on a GPU), and refuses a buffer not aligned
    to 16 bytes.

    ```mlir
    %m = nf.tensor_map %a dims [768, 512] strides [1536] box [64, 128]
        swizzle 128 : memref<?xf16>
    ```
  }];
  let arguments = (ins Arg<MemRefRankOf<[F16, BF16, F32], [1]>, "",
                           [MemRead]>:$buffer,
                       DenseI64ArrayAttr:$dims, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$box, I64Attr:$swizzle);
  let results = (outs NF_TensorMapType:$map);
  let assemblyFormat = [{
    $buffer `dims` $dims `strides` $strides `box` $box `swizzle` $swizzle
    attr-dict `:` type($buffer)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Inside GPU kernels: thread-block clusters
//===----------------------------------------------------------------------===//

def NF_ClusterBarrierOp : NF_Op<"cluster_barrier", [NF_GpuLoweringTrait]> {
  let summary = "the barrier of a thread-block cluster";
  let description = [{
    Inside a GPU kernel launched in clusters (`nf.cluster_blocks` on the
    kernel): every thread of every block of the cluster waits here until
    all have arrived, and the shared-memory stores each made before it (to
    its own block or through `nf.cluster_store` to another) are seen by
    all after it (PTX `barrier.cluster.arrive.release` and
    `barrier.cluster.wait.acquire`). No thread of the cluster may have
    exited. `relaxed` orders no memory (`barrier.cluster.arrive.relaxed`):
    it only waits until every block of the cluster has started, which a
    block must know before it stores into another's shared memory.

    ```mlir
    nf.cluster_barrier
    nf.cluster_barrier relaxed
    ```
  }];
  let arguments = (ins UnitAttr:$relaxed);
  let assemblyFormat = "(`relaxed` $relaxed^)? attr-dict";
}

def NF_ClusterStoreOp : NF_Op<"cluster_store", [NF_GpuLoweringTrait,
    TypesMatchWith<"the value is an element of the buffer", "memref", "value",
                   "::llvm::cast<::mlir::MemRefType>($_self).getElementType()">
  ]> {
  let summary = "stores into the shared memory of a block of the cluster";
  let description = [{
    Stores `value` at `memref[index]`, a workgroup buffer of this kernel,
    in the copy of block `rank` of the cluster (0 to the cluster's blocks
    less one; this block's own rank stores locally): PTX `mapa` and
    `st.shared::cluster`. The other block sees it after the next
    `nf.cluster_barrier`.

    ```mlir
    nf.cluster_store %v, %slots[%i] rank %r : memref<8xf32, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins AnyTypeOf<[F32, F64]>:$value,
                       Arg<MemRefRankOf<[F32, F64], [1]>, "",
                           [MemWrite]>:$memref,
                       Index:$index, Index:$rank);
  let assemblyFormat = [{
    $value `,` $memref `[` $index `]` `rank` $rank attr-dict `:` type($memref)
  }];
}

def NF_NamedBarrierOp : NF_Op<"named_barrier", [NF_GpuLoweringTrait]> {
  let summary = "a named barrier of some of a block's threads (bar.sync id, n)";
  let description = [{
    Inside a GPU kernel: the calling thread waits here until `threads`
    threads of its block (whole warps: a multiple of 32) have arrived at
    barrier `id` (1 to 15; 0 is `gpu.barrier`'s), and the shared-memory
    stores each made before it are seen by all after it (PTX `bar.sync id,
    threads`). The block's other threads go on: the consumer warpgroups of
    a warp-specialized kernel meet so while its producer runs ahead.

    ```mlir
    nf.named_barrier 1, 256
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<1>, IntMaxValue<15>]>:$id,
                       ConfinedAttr<I64Attr, [IntMinValue<32>, IntMaxValue<1024>]>:$threads);
  let assemblyFormat = "$id `,` $threads attr-dict";
  let hasVerifier = 1;
}

def NF_GridBarrierOp : NF_Op<"grid_barrier", [NF_GpuLoweringTrait]> {
  let summary = "the barrier of a kernel's whole grid";
  let description = [{
    Inside a GPU kernel: every thread of every block of the grid waits here
    until all have arrived, and the global-memory stores each made before
    it are seen by all after it. Each block's first thread adds 1 to
    `counter[0]` and waits until it reaches the next multiple of the grid's
    blocks, so `counter` must hold 0 when the launch begins (a temporary
    the runtime zeroes, `nf.zeroed` on its `memref.alloc`) and the grid's
    blocks must all be resident at once: the launch plan launches the
    kernel cooperatively (`cuLaunchCooperativeKernel`), which refuses a
    grid the device cannot hold. No thread may have exited.

    ```mlir
    nf.grid_barrier %counter : memref<1xi32>
    ```
  }];
  let arguments = (ins Arg<MemRefRankOf<[I32], [1]>, "",
                           [MemRead, MemWrite]>:$counter);
  let assemblyFormat = "$counter attr-dict `:` type($counter)";
}

//===----------------------------------------------------------------------===//
// Inside GPU kernels: warpgroup matrix multiply-accumulate (sm_90a)
//===----------------------------------------------------------------------===//

def NF_WarpgroupMmaOp : NF_Op<"warpgroup_mma", [NF_GpuLoweringTrait,
    AllTypesMatch<["acc", "result"]>
  ]> {
  let summary = "one wgmma.mma_async m64nNk16 of a warpgroup";
  let description = [{
    Inside a GPU kernel whose blocks are whole warpgroups (128 threads):
    every thread of a warpgroup issues it together, and `acc`, the
    thread's `n` / 2 f32 accumulators of a 64 x `n` tile (mma.sync's m16n8
    C fragments side by side, warp w of the warpgroup rows 16 w to 16 w +
    15), gets A (64 x 16) times B (16 x `n`) added. A starts at
    `memref[a]` and B at `memref[b]`, a workgroup buffer of f16 or bf16,
    each in the PTX ISA's canonical layout that its matrix descriptor
    gives: K-major (16-byte chunks along K) or, with `a_mn_major` /
    `b_mn_major`, MN-major (the instruction's transpose), with a swizzle of
    32, 64 or 128 bytes and leading and stride byte offsets. The buffer must
    be aligned to 1024 bytes.

    It is asynchronous: the result may be read, and the operands' shared
    memory written, only after `nf.warpgroup_commit` and an
    `nf.warpgroup_wait` that retires its group (then
    `nf.warpgroup_fence_operand`); an `nf.warpgroup_fence` comes before
    the first after each wait. Shared memory written by cp.async needs an
    `nf.async_proxy_fence` by its writers before the barrier that precedes
    the read.

    ```mlir
    %d = nf.warpgroup_mma %c, %smem[%a], [%b] {n = 128 : i64,
        a_swizzle = 128 : i64, a_leading = 16 : i64, a_stride = 1024 : i64,
        b_swizzle = 128 : i64, b_leading = 16 : i64, b_stride = 1024 : i64}
        : memref<24576xf16, #gpu.address_space<workgroup>>, vector<64xf32>
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [F32]>:$acc,
                       Arg<MemRefRankOf<[F16, BF16], [1]>, "",
                           [MemRead]>:$memref,
                       Index:$a, Index:$b,
                       I64Attr:$n, UnitAttr:$a_mn_major, UnitAttr:$b_mn_major,
                       I64Attr:$a_swizzle, I64Attr:$a_leading,
                       I64Attr:$a_stride, I64Attr:$b_swizzle,
                       I64Attr:$b_leading, I64Attr:$b_stride);
  let results = (outs VectorOfRankAndType<[1], [F32]>:$result);
  let assemblyFormat = [{
    $acc `,` $memref `[` $a `]` `,` `[` $b `]` attr-dict `:` type($memref) `,`
    type($acc)
  }];
  let hasVerifier = 1;
}

def NF_WarpgroupFenceOp : NF_Op<"warpgroup_fence", [NF_GpuLoweringTrait]> {
  let summary = "wgmma.fence";
  let description = [{
    Orders the warpgroup's register accesses before the
    `nf.warpgroup_mma` ops after it: one before the first after each wait.

    ```mlir
    nf.warpgroup_fence
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def NF_WarpgroupCommitOp : NF_Op<"warpgroup_commit", [NF_GpuLoweringTrait]> {
  let summary = "wgmma.commit_group";
  let description = [{
    Makes the thread's `nf.warpgroup_mma` ops since the last commit one
    group, which `nf.warpgroup_wait` waits for.

    ```mlir
    nf.warpgroup_commit
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def NF_WarpgroupWaitOp : NF_Op<"warpgroup_wait", [NF_GpuLoweringTrait]> {
  let summary = "wgmma.wait_group";
  let description = [{
    Waits until at most `pending` of the thread's committed groups of
    `nf.warpgroup_mma` are in flight: the older ones' results are written
    and their operands' shared memory may be written again.

    ```mlir
    nf.warpgroup_wait 1
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$pending);
  let assemblyFormat = "$pending attr-dict";
}

def NF_WarpgroupFenceOperandOp : NF_Op<"warpgroup_fence_operand", [NF_GpuLoweringTrait,
    AllTypesMatch<["acc", "result"]>
  ]> {
  let summary = "accumulators read after the wait before it";
  let description = [{
    `acc` unchanged, but not read (or moved) by the compiler before the
    `nf.warpgroup_wait` that precedes it: what comes after reads the
    result, printed as an empty asm statement on each register.

    ```mlir
    %r = nf.warpgroup_fence_operand %d : vector<64xf32>
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [F32]>:$acc);
  let results = (outs VectorOfRankAndType<[1], [F32]>:$result);
  let assemblyFormat = "$acc attr-dict `:` type($acc)";
}

def NF_AsyncProxyFenceOp : NF_Op<"async_proxy_fence", [NF_GpuLoweringTrait]> {
  let summary = "fence.proxy.async.shared::cta";
  let description = [{
    The thread's shared-memory writes before it (its landed cp.async
    copies among them) are seen by the asynchronous proxy, which
    `nf.warpgroup_mma` reads through, once a barrier follows.

    ```mlir
    nf.async_proxy_fence
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def NF_SetMaxRegistersOp : NF_Op<"set_max_registers", [NF_GpuLoweringTrait]> {
  let summary = "setmaxnreg: a warpgroup's registers a thread, raised or lowered";
  let description = [{
    Inside a GPU kernel for sm_90a whose warpgroups have roles (a producer
    that only copies, consumers that hold accumulators): every thread of
    the calling warpgroup (4 whole warps, executed by all of them, as one
    branch of the kernel's role `if`) gives back registers down to `count`
    a thread, or (`increase`) waits until the block has freed enough to
    hold `count` a thread (PTX `setmaxnreg.dec/inc.sync.aligned.u32`).
    `count` is a multiple of 8 from 24 to 256. The block's registers stay
    those it was launched with (the kernel's, a thread, times its threads;
    the kernel is compiled with `__launch_bounds__(threads, 1)`, so ptxas
    gives it the most that one block of its threads can have): an increase
    that the warpgroups' counts cannot fit in waits forever.

    ```mlir
    nf.set_max_registers decrease 40
    nf.set_max_registers increase 232
    ```
  }];
  let arguments = (ins UnitAttr:$increase, I64Attr:$count);
  let assemblyFormat = "(`increase` $increase^) : (`decrease`)? $count attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Inside GPU kernels: mbarriers and TMA loads (sm_90)
//===----------------------------------------------------------------------===//

def NF_MbarrierInitOp : NF_Op<"mbarrier_init", [NF_GpuLoweringTrait]> {
  let summary = "mbarrier.init";
  let description = [{
    Initializes the mbarrier at `barriers[index]`, a workgroup buffer of
    i64: each of its phases completes after `count` arrivals and the
    transaction bytes expected of them. One thread initializes it, then
    `nf.mbarrier_init_fence` and a barrier before any use.

    ```mlir
    nf.mbarrier_init %bars[%i] count 1 : memref<4xi64, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins Arg<MemRefRankOf<[I64], [1]>, "",
                           [MemWrite]>:$barriers, Index:$index,
                       ConfinedAttr<I64Attr, [IntPositive]>:$count);
  let assemblyFormat = [{
    $barriers `[` $index `]` `count` $count attr-dict `:` type($barriers)
  }];
}

def NF_MbarrierInitFenceOp : NF_Op<"mbarrier_init_fence", [NF_GpuLoweringTrait]> {
  let summary = "fence.mbarrier_init";
  let description = [{
    The thread's `nf.mbarrier_init`s are seen by the asynchronous proxy
    (the TMA loads that complete on them) once a barrier follows.

    ```mlir
    nf.mbarrier_init_fence
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def NF_MbarrierArriveExpectTxOp : NF_Op<"mbarrier_arrive_expect_tx",
                                        [NF_GpuLoweringTrait]> {
  let summary = "mbarrier.arrive.expect_tx";
  let description = [{
    The current phase of the mbarrier at `barriers[index]` waits for
    `bytes` more transaction bytes (of the TMA loads that complete on it),
    then the thread arrives on it.

    ```mlir
    nf.mbarrier_arrive_expect_tx %bars[%i] bytes 32768 : memref<4xi64, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins Arg<MemRefRankOf<[I64], [1]>, "",
                           [MemRead, MemWrite]>:$barriers, Index:$index,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$bytes);
  let assemblyFormat = [{
    $barriers `[` $index `]` `bytes` $bytes attr-dict `:` type($barriers)
  }];
}

def NF_MbarrierArriveOp : NF_Op<"mbarrier_arrive", [NF_GpuLoweringTrait]> {
  let summary = "mbarrier.arrive";
  let description = [{
    The thread arrives on the current phase of the mbarrier at
    `barriers[index]` (one of the `count` arrivals its phases wait for):
    a consumer telling a producer that a buffer is free again. With `rank`,
    on that mbarrier in block `rank` of the thread-block cluster (PTX
    `mapa` and `mbarrier.arrive.release.cluster.shared::cluster`), which
    must have started (a cluster barrier since the kernel began) and not
    exited.

    ```mlir
    nf.mbarrier_arrive %empty[%i] : memref<4xi64, #gpu.address_space<workgroup>>
    nf.mbarrier_arrive %empty[%i] rank %r : memref<4xi64, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins Arg<MemRefRankOf<[I64], [1]>, "",
                           [MemRead, MemWrite]>:$barriers, Index:$index,
                       Optional<Index>:$rank);
  let assemblyFormat = [{
    $barriers `[` $index `]` (`rank` $rank^)? attr-dict `:` type($barriers)
  }];
}

def NF_MbarrierWaitOp : NF_Op<"mbarrier_wait", [NF_GpuLoweringTrait]> {
  let summary = "mbarrier.try_wait.parity until it succeeds";
  let description = [{
    Returns once the phase of parity `parity` (its lowest bit) of the
    mbarrier at `barriers[index]` has completed: the TMA loads that
    completed on it have landed. A thread must see every phase complete
    before the mbarrier's next phase is armed (a phase two on has the same
    parity).

    ```mlir
    nf.mbarrier_wait %bars[%i], %parity : memref<4xi64, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins Arg<MemRefRankOf<[I64], [1]>, "",
                           [MemRead, MemWrite]>:$barriers, Index:$index,
                       Index:$parity);
  let assemblyFormat = [{
    $barriers `[` $index `]` `,` $parity attr-dict `:` type($barriers)
  }];
}

def NF_TmaLoadOp : NF_Op<"tma_load", [NF_GpuLoweringTrait,
                                       AttrSizedOperandSegments]> {
  let summary = "a TMA load of one box (cp.async.bulk.tensor)";
  let description = [{
    Copies the box of `map`'s tensor at `coords` (element coordinates, the
    innermost dimension first, one per dimension of the map; those outside
    the tensor load zeros) into `memref[offset]`, a workgroup buffer
    aligned as the map's swizzle needs (1024 bytes for 128), asynchronously:
    its bytes complete on the mbarrier at `barriers[index]`, whose phase
    expects them (`nf.mbarrier_arrive_expect_tx`). The data may be read
    once a wait has seen that phase complete. With `multicast`, a mask of
    the thread-block cluster's block ranks (bit r for block r), the box
    lands at `memref[offset]` in each of those blocks and completes on
    each one's mbarrier at `barriers[index]` (`.multicast::cluster`).

    ```mlir
    nf.tma_load %map[%k0, %m0], %smem[%at], %bars[%i]
        : memref<49152xf16, #gpu.address_space<workgroup>>,
          memref<4xi64, #gpu.address_space<workgroup>>
    nf.tma_load %map[%k0, %n0], %smem[%at], %bars[%i] multicast %mask
        : memref<49152xf16, #gpu.address_space<workgroup>>,
          memref<4xi64, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins NF_TensorMapType:$map, Variadic<Index>:$coords,
                       Arg<MemRefRankOf<[F16, BF16, F32], [1]>, "",
                           [MemWrite]>:$memref, Index:$offset,
                       Arg<MemRefRankOf<[I64], [1]>, "",
                           [MemRead, MemWrite]>:$barriers, Index:$index,
                       Optional<Index>:$multicast);
  let assemblyFormat = [{
    $map `[` $coords `]` `,` $memref `[` $offset `]` `,` $barriers `[` $index
    `]` (`multicast` $multicast^)? attr-dict `:` type($memref) `,`
    type($barriers)
  }];
  let hasVerifier = 1;
}

#endif // NF_OPS_TD
