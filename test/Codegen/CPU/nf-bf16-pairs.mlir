// bf16 rows of a norm with nothing fused run as pairs of even and odd
// lanes: 16 bf16 elements load as 8 words, the even elements are the words
// shifted left by 16, the odd ones the words with the low half cleared;
// the results, rounded, merge back into words (BF16Pairs.h). The scale and
// bias are first copied with each block of 16 in even-then-odd order.
// RUN: nf-opt %s --pass-pipeline='builtin.module(nf-lower-to-loops{vector-width=8})' | FileCheck %s

// CHECK-LABEL: func.func @layer_norm_bf16
// The scale's copy in pair layout: evens at 16k, odds at 16k + 8, then the
// last 40 % 16 = 8 elements as they are.
// CHECK: %[[SP:.+]] = memref.alloc() {alignment = 64 : i64} : memref<40xf32>
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %c16
// CHECK: %[[SV:.+]] = vector.load %{{.+}}[%[[K]]] : memref<40xf32>, vector<16xf32>
// CHECK: %[[KO:.+]] = arith.addi %[[K]], %c8
// CHECK: %[[SE:.+]] = vector.shuffle %[[SV]], %[[SV]] [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK: vector.store %[[SE]], %[[SP]][%[[K]]]
// CHECK: %[[SO:.+]] = vector.shuffle %[[SV]], %[[SV]] [1, 3, 5, 7, 9, 11, 13, 15]
// CHECK: vector.store %[[SO]], %[[SP]][%[[KO]]]
// CHECK: scf.for
// Whether the scale is finite: the sum of v - v over it is 0.
// CHECK: %[[SF:.+]] = scf.for {{.+}} -> (f32)
// CHECK: %[[SD:.+]] = arith.subf %[[S:.+]], %[[S]] : f32
// CHECK: %[[SOK:.+]] = arith.cmpf oeq, %[[SF]], %{{.+}} : f32
// CHECK: %[[PF1:.+]] = arith.andi %{{.+}}, %[[SOK]] : i1
// CHECK: %[[BP:.+]] = memref.alloc() {alignment = 64 : i64} : memref<40xf32>
// CHECK: %[[BOK:.+]] = arith.cmpf oeq
// CHECK: %[[PF:.+]] = arith.andi %[[PF1]], %[[BOK]] : i1
// The sums read words: element 2k and 2k + 1 from word k.
// CHECK: scf.parallel (%[[ROW:.+]]) =
// CHECK: %[[RAW:.+]] = vector.load %[[X:.+]][%[[ROW]], %{{.+}}] : memref<4x40xbf16>, vector<16xbf16>
// CHECK: %[[W:.+]] = vector.bitcast %[[RAW]] : vector<16xbf16> to vector<8xi32>
// CHECK: %[[EB:.+]] = arith.shli %[[W]], %{{.+}} : vector<8xi32>
// CHECK: %[[OB:.+]] = arith.andi %[[W]], %{{.+}} : vector<8xi32>
// CHECK: %[[E:.+]] = arith.bitcast %[[EB]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[O:.+]] = arith.bitcast %[[OB]] : vector<8xi32> to vector<8xf32>
// Each lane's d = x - center, even and odd added up.
// CHECK: %[[DE:.+]] = arith.subf %[[E]], %{{.+}} : vector<8xf32>
// CHECK: %[[DO:.+]] = arith.subf %[[O]], %{{.+}} : vector<8xf32>
// CHECK: arith.addf %[[DE]], %[[DO]] fastmath<contract> : vector<8xf32>
// The normalizing pass leaves out the NaN case of the rounding when the
// parameters, the variance and rstd are finite (v - v == 0).
// The row's statistics stored, then -mean * rstd.
// CHECK: memref.store %[[MEAN:.+]], %{{.+}}[%[[ROW]]] : memref<4xf32>
// CHECK-NEXT: memref.store %[[RS:.+]], %{{.+}}[%[[ROW]]] : memref<4xf32>
// CHECK-NEXT: %[[MR:.+]] = arith.mulf %[[MEAN]], %[[RS]] : f32
// CHECK-NEXT: %[[SH:.+]] = arith.negf %[[MR]] : f32
// CHECK: %[[VD:.+]] = arith.subf %[[VAR:.+]], %[[VAR]] : f32
// CHECK-NEXT: %[[Z1:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[VOK:.+]] = arith.cmpf oeq, %[[VD]], %[[Z1]] : f32
// CHECK-NEXT: %[[RD:.+]] = arith.subf %[[RS]], %[[RS]] : f32
// CHECK-NEXT: %[[Z2:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[ROK:.+]] = arith.cmpf oeq, %[[RD]], %[[Z2]] : f32
// CHECK-NEXT: %[[BOTH:.+]] = arith.andi %[[VOK]], %[[ROK]] : i1
// CHECK-NEXT: %[[FIN:.+]] = arith.andi %[[PF]], %[[BOTH]] : i1
// CHECK-NEXT: scf.if %[[FIN]] {
// 16 elements a step: (x - mean) * rstd as fma(x, rstd, -mean * rstd),
// then the even lanes with the scale and bias at j, the odd ones at j + 8;
// each lane rounded to nearest even in its word, no NaN case; the even
// results' upper halves shifted down, the odd ones' kept.
// CHECK: scf.for %[[JF:.+]] = %{{.+}} to %{{.+}} step %c16
// CHECK: %[[RV:.+]] = vector.broadcast %[[RS]] : f32 to vector<8xf32>
// CHECK-NEXT: %[[SHV:.+]] = vector.broadcast %[[SH]] : f32 to vector<8xf32>
// CHECK-NEXT: %[[T:.+]] = math.fma %{{.+}}, %[[RV]], %[[SHV]] : vector<8xf32>
// CHECK-NEXT: %[[SC:.+]] = vector.load %[[SP]][%[[JF]]] : memref<40xf32>, vector<8xf32>
// CHECK-NEXT: %[[BI:.+]] = vector.load %[[BP]][%[[JF]]] : memref<40xf32>, vector<8xf32>
// CHECK-NEXT: math.fma %[[T]], %[[SC]], %[[BI]] : vector<8xf32>
// CHECK: math.fma
// CHECK-NOT: arith.cmpf uno
// CHECK: arith.cmpi eq
// CHECK: vector.store %{{.+}}, %{{.+}}[%[[ROW]], %[[JF]]] : memref<4x40xbf16>, vector<16xbf16>
// CHECK: } else {
// The same where a result may be a NaN:
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %c16
// CHECK: vector.load %[[X]][%[[ROW]], %[[J]]] : memref<4x40xbf16>, vector<16xbf16>
// CHECK: %[[JO:.+]] = arith.addi %[[J]], %c8
// CHECK: vector.load %[[SP]][%[[J]]] : memref<40xf32>, vector<8xf32>
// CHECK: vector.load %[[BP]][%[[J]]] : memref<40xf32>, vector<8xf32>
// CHECK: math.fma
// CHECK: vector.load %[[SP]][%[[JO]]] : memref<40xf32>, vector<8xf32>
// CHECK: vector.load %[[BP]][%[[JO]]] : memref<40xf32>, vector<8xf32>
// CHECK: math.fma
// each lane rounded to nearest even in its word (NaN first made 0x7FC00000).
// CHECK: arith.cmpf uno
// CHECK: arith.select
// CHECK: arith.cmpi eq
// CHECK: arith.extsi {{.+}} : vector<8xi1> to vector<8xi32>
// CHECK: %[[LOW:.+]] = arith.shrui %{{.+}}, %{{.+}} : vector<8xi32>
// CHECK: %[[HIGH:.+]] = arith.andi %{{.+}}, %{{.+}} : vector<8xi32>
// CHECK: %[[MERGED:.+]] = arith.ori %[[LOW]], %[[HIGH]] : vector<8xi32>
// CHECK: %[[OUT:.+]] = vector.bitcast %[[MERGED]] : vector<8xi32> to vector<16xbf16>
// CHECK: vector.store %[[OUT]], %{{.+}}[%[[ROW]], %[[J]]] : memref<4x40xbf16>, vector<16xbf16>
// The last 8 elements, one by one.
// CHECK: scf.for
// CHECK: memref.load %[[X]]
func.func @layer_norm_bf16(%x: tensor<4x40xbf16>, %s: tensor<40xf32>, %b: tensor<40xf32>)
    -> (tensor<4x40xbf16>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %y, %m, %r = nf.layer_norm %x scale %s bias %b {axis = 1 : i64}
      : (tensor<4x40xbf16>, tensor<40xf32>, tensor<40xf32>) -> (tensor<4x40xbf16>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y, %m, %r : tensor<4x40xbf16>, tensor<4x1xf32>, tensor<4x1xf32>
}
