// nf-opt reports bad input with a diagnostic and a non-zero exit status,
// and prints nothing on stdout.
//
// A file that does not exist:
// RUN: not nf-opt %t.does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory
//
// A file that does not parse:
// RUN: not nf-opt %S/Inputs/truncated.mlir 2>&1 | FileCheck %s --check-prefix=PARSE
// PARSE: truncated.mlir:1:33: error: expected attribute name
// RUN: not nf-opt %S/Inputs/truncated.mlir 2>/dev/null | count 0
//
// An op nf does not define:
// RUN: not nf-opt %S/Inputs/unknown-op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: unknown-op.mlir:2:8: error: custom op 'nf.frobnicate' is unknown
//
// An op of a dialect nf-opt does not load, in generic form:
// RUN: not nf-opt %S/Inputs/unregistered-dialect.mlir 2>&1 | FileCheck %s --check-prefix=UNREG
// UNREG: unregistered-dialect.mlir:1:10: error: operation being parsed with an unregistered dialect. If this is intended, please use -allow-unregistered-dialect with the MLIR tool used
//
// IR that parses but does not verify:
// RUN: not nf-opt %s 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: bad-input.mlir:[[@LINE+3]]:8: error: 'nf.relu' op requires the same type for all operands and results
// RUN: not nf-opt %s 2>/dev/null | count 0
func.func @relu_changes_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  %0 = "nf.relu"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
