// nf-lower-linalg-to-loops turns linalg ops on buffers into scf.parallel
// loops over their parallel dimensions (scf.for over reductions, sums taken
// in f64), and leaves functions without linalg ops untouched.
// RUN: nf-opt %s --nf-lower-linalg-to-loops | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (0, d1)>

// CHECK-LABEL: func.func @broadcast_add
// CHECK-SAME: (%[[X:.+]]: memref<4x8xf32>, %[[B:.+]]: memref<1x8xf32>, %[[Y:.+]]: memref<4x8xf32>)
// CHECK-NOT: linalg.
// CHECK: scf.parallel (%[[I:.+]], %[[J:.+]]) = (%{{.+}}, %{{.+}}) to (%{{.+}}, %{{.+}})
// CHECK: %[[XV:.+]] = memref.load %[[X]][%[[I]], %[[J]]]
// CHECK: %[[BV:.+]] = memref.load %[[.extf %[[XV]] : f32 to f64
// CHECK: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[XW]] : f64
// CHECK: scf.yield %[[NEXT]]
// CHECK: %[[OLD:.+]] = memref.load %[[Y]][%[[I]]]
// CHECK: %[[OW:.+]] = arith.extf %[[OLD]] : f32 to f64
// CHECK: %[[SUM:.+]] = arith.addf %[[OW]], %[[T]] : f64
// CHECK: %[[R:.+]] = arith.truf16>)
// CHECK: scf.parallel (%[[I:.+]], %[[J:.+]]) =
// CHECK: scf.for %[[K:[a-z0-9_]+]] = {{.+}} -> (f64)
// CHECK-DAG: %[[AV:.+]] = memref.load %[[A]][%[[I]], %[[K]]]
// CHECK-DAG: %[[BV:.+]] = memref.load %[[B]][%[[K]], %[[J]]]
// CHECK: %[[P:.+]] = arith.mulf %[[AV]], %[[BV]] : f16
// CHECK: %[[P32:.+]] = arith.extf %[[P]] : f16 to f32
// CHECK: arith.extf %[[P32]] : f32 to f64
// CHECK: %[[S32:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK: %[[S16:.+]] = arith.truncf %[[S32]] : f32 to f16
// CHECK: memref.store %[[S16]], %[[C]][%[[I]],CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC %[[J]]]
func.func @matmul_f16(%a: memref<2x3xf16>, %b: memref<3x4xf16>, %c: memref<2x4xf16>) {
  linalg.matmul ins(%a, %b : memref<2x3xf16>, memref<3x4xf16>) outs(%c : memref<2x4xf16>)
  return
}

// Summing every element leaves no parallel loop.
// CHECK-LABEL: func.func @total
// CHECK-NOT: scf.parallel
// CHECK: scf.for {{.+}} -> (f64)
// CHECK: memref.store %{{.+}}, %{{.+}}[] : memref<f32>
func.func @total(%x: memref<?xf32>, %y: memref<f32>) {
  linalg.reduce ins(%x : memref<?xf32>) outs(%y : memref<f32>) dimensions = [paddin0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// A reduction that is not a sum keeps upstream's loops: the running maximum
// is read from and written to the output at each step.
// CHECK-LABEL: func.func @row_max
// CHECK: scf.parallel (%[[I:.+]]) =
// CHECK-NEXT: scf.for %[[J:.+]] =
// CHECK: arith.maximumf
// CHECK-NOT: f64
func.func @row_max(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  linalg.reduce ins(%x : memref<4x8xf32>) outs(%y : memref<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  return
}

// Without linalg ops nothing changes: the upstream pass would move %c1 to
// the top of the function.
// CHECK-LABEL: func.func @no_linalg_is_untouched
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V:.+]] = memref.load %{{.+}}[%[[C0]]]
// CHECK-NEXT: %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT: memref.store %[[V]], %{{.+}}[%[[C1]]]
func.func @no_linalg_is_untouched(%m: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<4xf32>
  %c1 = arith.constant 1 : index
  memref.store %v, %m[%c1] : memref<4xf32>
  return
}
