// nf-lower-linalg-to-loops turns linalg ops on buffers into scf.parallel
// loops over their parallel dimensions (scf.for over reductions), and
// leaves functions without linalg ops untouched.
// RUN: nf-opt %s --nf-lower-linalg-to-loops | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (0, d1)>

// CHECK-LABEL: func.func @broadcast_add
// CHECK-SAME: (%[[X:.+]]: memref<4x8xf32>, %[[B:.+]]: memref<1x8xf32>, %[[Y:.+]]: memref<4x8xf32>)
// CHECK-NOT: linalg.
// CHECK: scf.parallel (%[[I:.+]], %[[J:.+]]) = (%{{.+}}, %{{.+}}) to (%{{.+}}, %{{.+}})
// CHECK: %[[XV:.+]] = memref.load %[[X]][%[[I]], %[[J]]]
// CHECK: %[[BV:.+]] = memref.load %[[B]][%{{.+}}, %[[J]]]
// CHECK: %[[S:.+]] = arith.addf %[[XV]], %[[BV]]
// CHECK: memref.store %[[S]], %[[Y]][%[[I]], %[[J]]]
// CHECK-NOT: linalg.
func.func @broadcast_add(%x: memref<4x8xf32>, %b: memref<1x8xf32>, %y: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<4x8xf32>, memref<1x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}

// The reduced dimension is a sequential loop inside the parallel one.
// CHECK-LABEL: func.func @row_sum
// CHECK: scf.parallel (%[[I:.+]]) =
// CHECK-NEXT: scf.for %[[J:.+]] =
// CHECK: arith.addf
func.func @row_sum(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  linalg.reduce ins(%x : memref<4x8xf32>) outs(%y : memref<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
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
