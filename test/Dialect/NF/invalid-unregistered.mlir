// Verifier rules that only IR with unregistered ops can reach.
// RUN: nf-opt %s -allow-unregistered-dialect -split-input-file -verify-diagnostics

// An unregistered op may end a block (it might be a terminator), so only
// nf.fused's own check catches a body that does not end with nf.yield.
func.func @fused_ending_without_yield(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'nf.fused' op body must end with nf.yield}}
  %0 = "nf.fused"(%x) ({
  ^bb0(%a: tensor<4x4xf32>):
    %1 = nf.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    "foo.bar"(%1) : (tensor<4x4xf32>) -> ()
  }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}
