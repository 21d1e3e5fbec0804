// Rows no 16-byte vector divides (37 f32) are peeled (RowNormSchedule::
// peeled): from each row's first 16-byte boundary, whole float4s; the
// elements before it (the head) and after the last whole vector (the tail)
// one at a time, one of each per lane; the scale and bias, whose alignment
// is not the row's, an element at a time.
// RUN: nf-opt %s --nf-lower-to-gpu | FileCheck %s

// CHECK-LABEL: gpu.func @ln_layer_norm
// CHECK-SAME: nf.schedule = "warp-rows threads-per-row=16 rows-per-block=16 vector=4 registers=1 peeled"
// The row's first element, and the head: (4 - rowBase % 4) % 4 elements.
// CHECK: %[[ROW_BASE:.+]] = arith.muli %{{.+}}, %c37 : index
// CHECK: %[[FIRST:.+]] = arith.addi %[[ROW_BASE]], %c0
// CHECK: %[[MISALIGN:.+]] = arith.remui %[[FIRST]], %c4
// CHECK: %[[TO_BOUNDARY:.+]] = arith.subi %c4{{.*}}, %[[MISALIGN]]
// CHECK: %[[HEAD:.+]] = arith.remui %[[TO_BOUNDARY]], %c4
// CHECK: %[[HEAD_END:.+]] = arith.addi %c0{{.*}}, %[[HEAD]]
// CHECK: %[[VECTORS_BEGIN:.+]] = arith.minui %[[HEAD_END]], %c37
// The whole vectors end where fewer than 4 elements are left.
// CHECK: %[[LEFT:.+]] = arith.subi %c37, %[[VECTORS_BEGIN]]
// CHECK: %[[WHOLE:.+]] = arith.divui %[[LEFT]], %c4
// CHECK: %[[WHOLE_ELEMENTS:.+]] = arith.muli %[[WHOLE]], %c4
// CHECK: %[[VECTORS_END:.+]] = arith.addi %[[VECTORS_BEGIN]], %[[WHOLE_ELEMENTS]]
// Lane l takes head element l and tail element VECTORS_END + l.
// CHECK: %[[HEAD_COL:.+]] = arith.addi %c0{{.*}}, %[[LANE:.+]] : index
// CHECK: %[[TAIL_COL:.+]] = arith.addi %[[VECTORS_END]], %[[LANE]] : index
// CHECK: %[[IN_HEAD:.+]] = arith.cmpi ult, %[[HEAD_COL]], %[[VECTORS_BEGIN]]
// CHECK: %[[IN_TAIL:.+]] = arith.cmpi ult, %[[TAIL_COL]], %c37
// Its vector from the boundary on.
// CHECK: %[[COL:.+]] = arith.addi %[[VECTORS_BEGIN]], %{{.+}} : index
// CHECK: %[[VEC_COL:.+]] = arith.addi %[[COL]], %c0
// CHECK: %[[IN_VECTORS:.+]] = arith.cmpi ult, %[[VEC_COL]], %[[VECTORS_END]]
// CHECK: %[[VALID:.+]] = arith.andi %[[IN_VECTORS]], %{{.+}} : i1
// CHECK: scf.if %[[VALID]]
// CHECK: vector.load %arg0[%{{.+}}] : memref<?xf32>, vector<4xf32>
// CHECK: scf.if %{{.+}} -> (f32)
// CHECK: memref.load %arg0
// CHECK: scf.if %{{.+}} -> (f32)
// CHECK: memref.load %arg0
// The normalize step: the vector's scale one element at a time, one
// vector store.
// CHECK: scf.if %[[VALID]] {
// CHECK-COUNT-4: memref.load %arg1
// CHECK: vector.store %{{.+}}, %arg3[%{{.+}}] : memref<?xf32>, vector<4xf32>
// CHECK: memref.store %{{.+}}, %arg3
// CHECK: memref.store %{{.+}}, %arg3
func.func @ln(%x: tensor<3x37xf32>, %s: tensor<37xf32>, %b: tensor<37xf32>) -> tensor<3x37xf32> {
  %y, %m, %r = nf.layer_norm %x scale %s bias %b {axis = 1 : i64} : (tensor<3x37xf32>, tensor<37xf32>, tensor<37xf32>) -> (tensor<3x37xf32>, tensor<3x1xf32>, tensor<3x1xf32>)
  return %y : tensor<3x37xf32>
}
