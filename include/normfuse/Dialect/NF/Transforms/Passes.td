//===- Passes.td - nf dialect transforms -------------------*- tablegen -*-===//
//
// Part of normfuse. Passes that rewrite nf IR without lowering it:
// nf-specialize-shapes turns a function with dynamic dimensions into one
// with the static shapes of a call (what the JIT does for each new shape).
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_DIALECT_NF_TRANSFORMS_PASSES_TD
#define NORMFUSE_DIALECT_NF_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def NFSpecializeShapesPass : Pass<"nf-specialize-shapes", "ModuleOp"> {
  let summary = "Give a function's dynamic dimensions the sizes of a call";
  let description = [{
    Rewrites the arguments of `function` to the static `shapes` (one per
    argument, e.g. `shapes=4x768,768,768`), then gives every value in its
    body the static type the nf shape rules derive from its operands: op by
    op, through `nf.fused` bodies and `tensor.cast`, up to the function's
    result types. A shape that disagrees with a static dimension of the
    argument, or with another argument (the rewritten function must
    verify), is an error; so is an op outside the nf dialect whose results
    stay dynamic.

    `nf.conv2d_backprop_input` and `nf.conv2d_backprop_filter` name the
    shape they compute in their result type: dimensions their operands do
    not determine are taken from `result-shapes` (one per function result,
    like the caller's output buffers) where the op's result is returned.

    Other functions of the module are left alone.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The function to specialize">,
    ListOption<"shapes", "shapes", "std::string",
               "The shape of each argument, as 4x768 (comma-separated)">,
    ListOption<"resultShapes", "result-shapes", "std::string",
               "The shape of each result, for results whose shape the "
               "arguments do not determine">
  ];
}

def NFRaisePass : Pass<"nf-raise", "func::FuncOp"> {
  let summary = "Raise decomposed chains (TOSA, arith/math, nf.add/mul) to nf ops";
  let description = [{
    Recognizes what frameworks hand a compiler as chains of primitive ops and
    replaces each chain by the nf op it computes: GELU in its tanh and erf
    forms, SiLU, ReLU, bias-add, LayerNorm, RMSNorm and GroupNorm (see
    `normfuse/Dialect/NF/Transforms/Patterns.h` for the spellings each
    family accepts). A chain is raised only when none of its intermediate
    values has a user outside it, and constants must match within the
    rounding of their element type. `nf-test-raise-patterns` runs one
    family alone.
  }];
  let dependentDialects = ["nf::NFDialect", "tensor::TensorDialect",
                           "tosa::TosaDialect"];
}

def NFFusePass : Pass<"nf-fuse", "func::FuncOp"> {
  let summary = "Group each producer with its pointwise prologue and epilogue into nf.fused";
  let description = [{
    Wraps each producer (`nf.matmul`, `nf.conv2d`, a forward norm,
    `nf.bias_add_grad`) and the chain of pointwise nf ops that consume its
    first result (bias_add, relu, gelu, silu, a residual add or multiply)
    into one `nf.fused` op, which code generation emits as one kernel. A
    norm also takes the pointwise op that computes its input when the norm
    is that op's only user (the residual add in front of a LayerNorm), and
    `nf.bias_add_grad` takes the activation gradient that computes its
    input (yielding that gradient to its other users).

    An epilogue chain stops at a value with more than one user (nothing is
    duplicated, no intermediate is lost), and a group never moves a value
    after one of its users. The policy is normfuse's default control
    function (`getDefaultControlFusionFn` in Patterns.h);
    `nf-test-fusion` runs the driver with other control functions.
  }];
  let dependentDialects = ["nf::NFDialect"];
}

def NFKernelGraphPass : Pass<"nf-kernel-graph", "ModuleOp"> {
  let summary = "Report each function's kernel count and write its kernel graph as DOT";
  let description = [{
    Prints `nf-kernel-graph: @NAME: N kernels` on stderr for each function
    (each `nf.fused` op and each other compute op is a kernel; constants,
    reshapes and casts are not) and, with `dot=FILE`, writes the graph of
    kernels as Graphviz DOT (render with `dot -Tsvg FILE -o FILE.svg`).
    Leaves the IR unchanged: run it before and after `nf-fuse-pipeline`.
  }];
  let options = [
    Option<"dotFile", "dot", "std::string", /*default=*/"\"\"",
           "Write the DOT graph to this file">
  ];
}

#endif // NORMFUSE_DIALECT_NF_TRANSFORMS_PASSES_TD
