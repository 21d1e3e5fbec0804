// Backward ops become loops. layer_norm_grad runs 64 parallel chunks of
// rows (ceil(300 / 64) = 5 rows each); each chunk adds dy * xhat and dy
// into its own scratch row while it sums a row, and the parameter
// gradients are the f64 sums of the 64 rows. relu_grad selects from the
// forward output.
// RUN: nf-opt %s -split-input-file --pass-pipeline='builtin.module(nf-lower-to-loops{vector-width=4})' | FileCheck %s

// CHECK-LABEL: func.func @layer_norm_grad
// CHECK: %[[DX:.+]] = memref.alloc() {alignment = 64 : i64} : memref<300x40xf32>
// CHECK: %[[PER:.+]] = arith.constant 5 : index
// CHECK: %[[PS:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x40xf32>
// CHECK: %[[PB:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x40xf32>
// CHECK: scf.parallel (%[[K:.+]]) = (%{{.+}}) to (%c64{{.*}}) step
// CHECK: %[[FIRST:.+]] = arith.muli %[[K]], %[[PER]] : index
// CHECK: scf.for %[[ROW:.+]] = %[[FIRST]] to
// The first row sum, sum(g * dy * xhat), updates both scratch rows.
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (f64)
// CHECK: vector.load %[[PS]][%[[K]], %{{.+}}] : memref<64x40xf32>, vector<4xf32>
// CHECK: vector.store {{.+}}, %[[PS]][%[[K]], %{{.+}}] : memref<64x40xf32>, vector<4xf32>
// CHECK: vector.load %[[PB]][%[[K]], %{{.+}}] : memref<64x40xf32>, vector<4xf32>
// CHECK: vector.store {{.+}}, %[[PB]][%[[K]], %{{.+}}] : memref<64x40xf32>, vector<4xf32>
// Then dx of the row.
// CHECK: vector.store {{.+}}, %{{.+}}[%[[ROW]], %{{.+}}] : memref<300x40xf32>, vector<4xf32>
// The parameter gradients: per column, the f64 sum over the 64 chunks.
// CHECK: %[[DS:.+]] = memref.alloc() {alignment = 64 : i64} : memref<40xf32>
// CHECK: scf.parallel (%[[J:.+]]) = (%{{.+}}) to (%c40) step
// CHECK: scf.for %[[C:.+]] = %{{.+}} to %c64{{.*}} step %{{.+}} iter_args(%{{.+}}) -> (f64)
// CHECK: memref.load %[[PS]][%[[C]], %[[J]]] : memref<64x40xf32>
// CHECK: scf.parallel
// CHECK: memref.load %[[PB]]
func.func @layer_norm_grad(%dy: tensor<300x40xf32>, %x: tensor<300x40xf32>, %m: tensor<300x1xf32>, %r: tensor<300x1xf32>, %s: tensor<40xf32>) -> (tensor<300x40xf32>, tensor<40xf32>, tensor<40xf32>) {
  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r scale %s {axis = 1 : i64} : (tensor<300x40xf32>, tensor<300x40xf32>, tensor<300x1xf32>, tensor<300x1xf32>, tensor<40xf32>) -> (tensor<300x40xf32>, tensor<40xf32>, tensor<40xf32>)
  return %dx, %ds, %db : tensor<300x40xf32>, tensor<40xf32>, tensor<40xf32>
}

// -----

// CHECK-LABEL: func.func @relu_grad
// CHECK: %[[DY:.+]] = vector.load {{.+}} : memref<64xf16>, vector<4xf16>
// CHECK: %[[Y:.+]] = vector.load {{.+}} : memref<64xf16>, vector<4xf16>
// CHECK: %[[YF:.+]] = arith.extf %[[Y]] : vector<4xf16> to vector<4xf32>
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK: %[[OFF:.+]] = arith.cmpf ole, %[[YF]], %[[ZERO]] : vector<4xf32>
// CHECK: arith.select %[[OFF]], %[[ZERO]], %{{.+}} : vector<4xi1>, vector<4xf32>
func.func @relu_grad(%dy: tensor<64xf16>, %y: tensor<64xf16>) -> tensor<64xf16> {
  %0 = nf.relu_grad %dy, %y : tensor<64xf16>
  return %0 : tensor<64xf16>
}
