// nf-expand-math replaces transcendental functions with polynomials.
// RUN: nf-opt %s --nf-expand-math | FileCheck %s

// CHECK-LABEL: func.func @transcendentals
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK-NOT: math.exp
// CHECK: math.fma
// CHECK: return
func.func @transcendentals(%x: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>) {
  %0 = math.tanh %x : vector<8xf32>
  %1 = math.erf %x : vector<8xf32>
  %2 = math.exp %x : vector<8xf32>
  return %0, %1, %2 : vector<8xf32>, vector<8xf32>, vector<8xf32>
}

// bf16 conversions become integer arithmetic.
// CHECK-LABEL: func.func @bf16_conversions
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: arith.shli
func.func @bf16_conversions(%x: bf16) -> bf16 {
  %0 = arith.extf %x : bf16 to f32
  %1 = arith.addf %0, %0 : f32
  %2 = arith.truncf %1 : f32 to bf16
  return %2 : bf16
}
