// nf-kernel-graph counts kernels (a fused op is one; constants and
// reshapes are none) and writes the kernel graph as DOT; the IR is left
// unchanged.
// RUN: nf-opt %s --nf-kernel-graph=dot=%t.dot 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: FileCheck %s --check-prefix=DOT < %t.dot
// RUN: not nf-opt %s --nf-kernel-graph=dot=%t.missing/dir/graph.dot 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not test -e %t.missing
// A device that refuses the write (/dev/full) is an error too, and stays a
// device: the graph once went through a temporary file renamed over it,
// and a failed write exited 0 (issue 17).
// RUN: not nf-opt %s --nf-kernel-graph=dot=/dev/full 2>&1 | FileCheck %s --check-prefix=FULL
// RUN: test -c /dev/full
// FULL: error: nf-kernel-graph: cannot write '/dev/full': No space left on device
// FULL-NOT: see current operation

// COUNT: nf-kernel-graph: @fused_then_relu: 2 kernels
// COUNT: nf-kernel-graph: @views_are_not_kernels: 1 kernels
// COUNT-LABEL: func @fused_then_relu
// COUNT: nf.fused

// DOT: digraph kernels {
// DOT:   subgraph "cluster_fused_then_relu" {
// DOT:     label="@fused_then_relu: 2 kernels";
// DOT:     "fused_then_relu_arg0" [shape=ellipse, label="arg 0"];
// DOT:     "fused_then_relu_op0" [shape=box, style=filled, fillcolor="#b6d7a8", label="nf.fused\nmatmul + bias_add"];
// DOT:     "fused_then_relu_arg0" -> "fused_then_relu_op0" [label="4x4xf32"];
// DOT:     "fused_then_relu_arg1" -> "fused_then_relu_op0" [label="4xf32"];
// DOT:     "fused_then_relu_op1" [shape=box, style=filled, fillcolor="#cfe2f3", label="nf.relu"];
// DOT:     "fused_then_relu_op0" -> "fused_then_relu_op1" [label="4x4xf32"];
// DOT:     "fused_then_relu_op2" [shape=ellipse, label="results"];
// DOT:     "fused_then_relu_op1" -> "fused_then_relu_op2" [label="4x4xf32"];
// DOT:   subgraph "cluster_views_are_not_kernels" {
// DOT:     "views_are_not_kernels_op0" [shape=box, style=dashed, label="tosa.reshape"];
// DOT:     "views_are_not_kernels_op1" [shape=box, style=filled, fillcolor="#cfe2f3", label="tosa.add"];
// DOT:     "views_are_not_kernels_op0" -> "views_are_not_kernels_op1" [label="1x4xf32"];
// DOT: }

// ERR: error: nf-kernel-graph: cannot write '{{.*}}graph.dot'

func.func @fused_then_relu(%x: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  %f = nf.fused (%x, %b) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>, %c: tensor<4xf32>):
    %m = nf.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %y = nf.bias_add %m, %c {layout = #nf.layout<nhwc>} : tensor<4x4xf32>, tensor<4xf32>
    nf.yield %y : tensor<4x4xf32>
  }
  %r = nf.relu %f : tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

func.func @views_are_not_kernels(%x: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  %c = "tosa.const"() {value = dense<1.0> : tensor<4x4xf32>} : () -> tensor<4x4xf32>
  %b2 = tosa.reshape %b {new_shape = array<i64: 1, 4>} : (tensor<4xf32>) -> tensor<1x4xf32>
  %y = tosa.add %x, %b2 : (tensor<4x4xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
