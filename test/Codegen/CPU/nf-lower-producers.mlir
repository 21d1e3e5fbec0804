// matmul and the conv ops become parallel loops over the rows of their
// results: vectors along the contiguous dimension with a scalar tail,
// multiply-adds in f32 (f16/bf16 widened on load, narrowed on the final
// store), padding clipped by index ranges rather than loaded.
// RUN: nf-opt %s -split-input-file --pass-pipeline='builtin.module(nf-lower-to-loops{vector-width=8})' | FileCheck %s

// A parallel iteration takes up to 96 rows by 32 columns (here 7 x 45:
// two iterations, the second with 13 columns) and walks k in blocks of
// 128 (here one block of 33). For each k block it first copies its columns
// of the block's rows of rhs into a contiguous 128 x 32 panel (vectors,
// then scalars for the 13-column iteration), then runs its rows over the
// panel: blocks of 3 rows by 4 vectors of 8 columns keep their 12 sums in
// registers over the k block, each panel vector loaded used by 3 rows,
// each lhs element by the 32 columns. The sums start at zero in the first
// k block and from a 96 x 32 scratch tile in the others; after the last
// block they are stored to the result, after the others to the tile.
// Leftover rows (7 = 2 * 3 + 1) take one row at a time, and leftover
// columns single vectors, then scalars (13 = 8 + 5).
// CHECK-LABEL: func.func @matmul_rows_in_registers
// CHECK-SAME: (%[[A:.+]]: tensor<7x33xf32>, %[[B:.+]]: tensor<33x45xf32>)
// CHECK: %[[AB:.+]] = bufferization.to_memref %[[A]] read_only : memref<7x33xf32>
// CHECK: %[[BB:.+]] = bufferization.to_memref %[[B]] read_only : memref<33x45xf32>
// CHECK: %[[A3:.+]] = memref.reinterpret_cast %[[AB]] {{.+}} sizes: [1, 7, 33]
// CHECK: %[[B3:.+]] = memref.reinterpret_cast %[[BB]] {{.+}} sizes: [1, 33, 45]
// CHECK: %[[OUT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<7x45xf32>
// CHECK: %[[O3:.+]] = memref.reinterpret_cast %[[OUT]] {{.+}} sizes: [1, 7, 45]
// CHECK: scf.parallel (%[[IT:.+]]) = (%{{.+}}) to (%c2{{.*}})
// CHECK: %[[CHUNK:.+]] = arith.remui %[[IT]]
// CHECK: %[[BLOCK:.+]] = arith.remui
// CHECK: %[[BATCH:.+]] = arith.divui
// CHECK: %[[J0:.+]] = arith.muli %[[BLOCK]], %c32
// CHECK: %[[M0:.+]] = arith.muli %[[CHUNK]], %c96
// CHECK: %[[PANEL:.+]] = memref.alloc() {alignment = 64 : i64} : memref<128x32xf32>
// CHECK: %[[TILE:.+]] = memref.alloc() {alignment = 64 : i64} : memref<96x32xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.for %[[KB:.+]] = %{{.+}} to %{{.+}} step %c1
// CHECK: %[[K0:.+]] = arith.muli %[[KB]], %c128
// CHECK: %[[LEFT:.+]] = arith.subi %c33, %[[K0]]
// CHECK: %[[DEPTH:.+]] = arith.minsi %[[LEFT]], %c128
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[KB]], %c0
// CHECK: %[[LAST:.+]] = arith.cmpi eq
// CHECK: scf.for %[[KK:.+]] = %{{.+}} to %[[DEPTH]] step %c1
// CHECK: %[[KROW:.+]] = arith.addi %[[K0]], %[[KK]]
// CHECK: scf.for %[[PJ:.+]] = %[[J0]] to %{{.+}} step %c32
// CHECK: %[[V:.+]] = vector.load %[[B3]][%{{.+}}, %[[KROW]], %[[PJ]]] : memref<1x33x45xf32>, vector<8xf32>
// CHECK: %[[PC:.+]] = arith.subi %[[PJ]], %[[J0]]
// CHECK: vector.store %[[V]], %[[PANEL]][%[[KK]], %[[PC]]] : memref<128x32xf32>, vector<8xf32>
// CHECK-COUNT-3: vector.store {{.+}}, %[[PANEL]]
// CHECK: scf.for {{.+}} step %c8
// CHECK: vector.store {{.+}}, %[[PANEL]]
// CHECK: scf.for {{.+}} step %c1
// CHECK: memref.store {{.+}}, %[[PANEL]]
// CHECK: scf.for %[[J:.+]] = %[[J0]] to %{{.+}} step %c32
// CHECK: scf.for %[[M:.+]] = %[[M0]] to %{{.+}} step %c3{{(_[0-9]+)?}} {
// CHECK: %[[M1:.+]] = arith.addi %[[M]], %c1
// CHECK: %[[M2:.+]] = arith.addi %[[M]], %c2
// CHECK: %[[TR:.+]] = arith.subi %[[M]], %[[M0]]
// CHECK: %[[TC:.+]] = arith.subi %[[J]], %[[J0]]
// CHECK: %[[INIT:.+]]:12 = scf.if %[[FIRST]] -> (vector<8xf32>, {{.+}}) {
// CHECK: scf.yield %[[ZERO:.+]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]] :
// CHECK: } else {
// CHECK: vector.load %[[TILE]][%[[TR]], %[[TC]]] : memref<96x32xf32>, vector<8xf32>
// CHECK-COUNT-11: vector.load %[[TILE]]
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %[[DEPTH]] step %{{.+}} iter_args(%{{.+}} = %[[INIT]]#0, {{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: %[[KAT:.+]] = arith.addi %[[K0]], %[[K]]
// CHECK: %[[L0:.+]] = memref.load %[[A3]][%{{.+}}, %[[M]], %[[KAT]]] : memref<1x7x33xf32>
// CHECK: %[[LV0:.+]] = vector.broadcast %[[L0]] : f32 to vector<8xf32>
// CHECK: memref.load %[[A3]][%{{.+}}, %[[M1]], %[[KAT]]] : memref<1x7x33xf32>
// CHECK: memref.load %[[A3]][%{{.+}}, %[[M2]], %[[KAT]]] : memref<1x7x33xf32>
// CHECK: %[[R:.+]] = vector.load %[[PANEL]][%[[K]], %[[TC]]] : memref<128x32xf32>, vector<8xf32>
// CHECK: math.fma %[[LV0]], %[[R]], %{{.+}} : vector<8xf32>
// CHECK-COUNT-11: math.fma {{.+}} : vector<8xf32>
// CHECK-NOT: math.fma
// CHECK: scf.yield
// CHECK: scf.if %[[LAST]] {
// CHECK: vector.store %{{.+}}, %[[O3]][%[[BATCH]], %[[M]], %[[J]]] : memref<1x7x45xf32>, vector<8xf32>
// CHECK-COUNT-11: vector.store {{.+}}, %[[O3]]
// CHECK: } else {
// CHECK: vector.store %{{.+}}, %[[TILE]][%[[TR]], %[[TC]]] : memref<96x32xf32>, vector<8xf32>
// CHECK-COUNT-11: vector.store {{.+}}, %[[TILE]]
// CHECK: scf.for {{.+}} step %c1
// CHECK: iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: scf.for {{.+}} step %c8
// CHECK: scf.for {{.+}} step %c3
// CHECK: iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: scf.for {{.+}} to %{{.+}} step %c1
// CHECK: iter_args({{.+}}) -> (f32, f32, f32)
// CHECK: math.fma {{.+}} : f32
// CHECK: memref.store {{.+}} : memref<1x7x45xf32>
// CHECK: scf.reduce
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT: nf.matmul
func.func @matmul_rows_in_registers(%a: tensor<7x33xf32>, %b: tensor<33x45xf32>) -> tensor<7x45xf32> {
  %0 = nf.matmul %a, %b : tensor<7x33xf32>, tensor<33x45xf32> -> tensor<7x45xf32>
  return %0 : tensor<7x45xf32>
}

// -----

// transpose_rhs (the nn.Linear layout, weights stored (out, in)) runs the
// same blocks: the panel's columns are packed from rhs rows, each a
// contiguous run of k loaded in vectors and stored lane by lane down a
// panel column. f16 operands accumulate in f32 and give an f32 result.
// CHECK-LABEL: func.func @matmul_transpose_rhs
// CHECK: %[[B3:.+]] = memref.reinterpret_cast {{.+}} sizes: [1, 5, 64]
// CHECK: %[[OUT:.+]] = memref.alloc() {{.+}} : memref<4x5xf32>
// CHECK: scf.parallel
// CHECK: %[[J0:.+]] = arith.muli %{{.+}}, %c32
// CHECK: %[[PANEL:.+]] = memref.alloc() {{.+}} : memref<128x32xf32>
// CHECK: %[[K0:.+]] = arith.muli %{{.+}}, %c128
// CHECK: scf.for %[[COL:.+]] = %[[J0]] to %{{.+}} step %c1
// CHECK: %[[PC:.+]] = arith.subi %[[COL]], %[[J0]]
// CHECK: scf.for %[[KC:.+]] = %[[K0]] to %{{.+}} step %c32
// CHECK: %[[RV:.+]] = vector.load %[[B3]][%{{.+}}, %[[COL]], %[[KC]]] : memref<1x5x64xf16>, vector<8xf16>
// CHECK: %[[RW:.+]] = arith.extf %[[RV]] : vector<8xf16> to vector<8xf32>
// CHECK: %[[KK:.+]] = arith.subi %[[KC]], %[[K0]]
// CHECK: %[[E0:.+]] = vector.extract %[[RW]][0] : f32 from vector<8xf32>
// CHECK: memref.store %[[E0]], %[[PANEL]][%[[KK]], %[[PC]]] : memref<128x32xf32>
// CHECK: %[[E1:.+]] = vector.extract %[[RW]][1] : f32 from vector<8xf32>
// CHECK: %[[KK1:.+]] = arith.addi %[[KK]], %c1
// CHECK: memref.store %[[E1]], %[[PANEL]][%[[KK1]], %[[PC]]] : memref<128x32xf32>
// CHECK-COUNT-6: vector.extract %[[RW]]
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: vector.load %[[PANEL]]
// CHECK: memref.store {{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : memref<1x4x5xf32>
func.func @matmul_transpose_rhs(%a: tensor<4x64xf16>, %b: tensor<5x64xf16>) -> tensor<4x5xf32> {
  %0 = nf.matmul %a, %b {transpose_rhs} : tensor<4x64xf16>, tensor<5x64xf16> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// Both transposed (f32): the rhs panel is packed from rhs rows; lhs, in
// f32 already, is not packed, and its column is read element by element,
// each value broadcast.
// CHECK-LABEL: func.func @matmul_transpose_both
// CHECK: %[[A3:.+]] = memref.reinterpret_cast {{.+}} sizes: [1, 64, 4]
// CHECK: %[[PANEL:.+]] = memref.alloc() {{.+}} : memref<128x32xf32>
// CHECK-NOT: memref<96x128xf32>
// CHECK: vector.load {{.+}} : memref<1x5x64xf32>, vector<8xf32>
// CHECK: vector.extract
// CHECK: memref.store {{.+}}, %[[PANEL]]
// CHECK: scf.for %[[K:.+]] = {{.+}} iter_args
// CHECK: %[[KAT:.+]] = arith.addi %{{.+}}, %[[K]]
// CHECK: %[[A:.+]] = memref.load %[[A3]][%{{.+}}, %[[KAT]], %{{.+}}] : memref<1x64x4xf32>
// CHECK: vector.broadcast %[[A]] : f32 to vector<8xf32>
// CHECK: vector.load %[[PANEL]][%[[K]], %{{.+}}] : memref<128x32xf32>, vector<8xf32>
func.func @matmul_transpose_both(%a: tensor<64x4xf32>, %b: tensor<5x64xf32>) -> tensor<4x5xf32> {
  %0 = nf.matmul %a, %b {transpose_lhs, transpose_rhs} : tensor<64x4xf32>, tensor<5x64xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// A weight without batch dimensions is shared: the batch dimensions of lhs
// flatten to 6 (one parallel iteration each) and rhs is read at batch 0.
// 16-bit operands are widened once, as they are packed: rhs into the
// panel, the iteration's rows of lhs into a 96 x 128 f32 panel that the
// k loop broadcasts from.
// bf16 results are narrowed once, on the store.
// CHECK-LABEL: func.func @matmul_shared_weight
// CHECK: %[[A3:.+]] = memref.reinterpret_cast {{.+}} sizes: [6, 4, 16]
// CHECK: %[[B3:.+]] = memref.reinterpret_cast {{.+}} sizes: [1, 16, 8]
// CHECK: %[[O3:.+]] = memref.reinterpret_cast {{.+}} sizes: [6, 4, 8]
// CHECK: scf.parallel (%[[IT:.+]]) = ({{.+}}) to (%c6{{.*}})
// CHECK: arith.divui %[[IT]]
// CHECK: %[[BATCH:.+]] = arith.divui
// CHECK: %[[PANEL:.+]] = memref.alloc() {{.+}} : memref<128x32xf32>
// CHECK: memref.alloc() {{.+}} : memref<96x32xf32>
// CHECK: %[[LHSP:.+]] = memref.alloc() {{.+}} : memref<96x128xf32>
// CHECK: %[[RV:.+]] = vector.load %[[B3]][%[[ZERO:.+]], %{{.+}}, %{{.+}}] : memref<1x16x8xbf16>, vector<8xbf16>
// CHECK: %[[RW:.+]] = arith.extf %[[RV]] : vector<8xbf16> to vector<8xf32>
// CHECK: vector.store %[[RW]], %[[PANEL]]
// CHECK: %[[LV:.+]] = vector.load %[[A3]][%[[BATCH]], %{{.+}}, %{{.+}}] : memref<6x4x16xbf16>, vector<8xbf16>
// CHECK: %[[LW:.+]] = arith.extf %[[LV]] : vector<8xbf16> to vector<8xf32>
// CHECK: vector.store %[[LW]], %[[LHSP]]
// CHECK: scf.for %[[M:.+]] = {{.+}} step %c3{{(_[0-9]+)?}} {
// CHECK: scf.for
// CHECK: %[[A:.+]] = memref.load %[[LHSP]][%{{.+}}, %{{.+}}] : memref<96x128xf32>
// CHECK: vector.broadcast %[[A]] : f32 to vector<8xf32>
// CHECK: vector.load %[[PANEL]]
// CHECK: %[[NARROW:.+]] = arith.bitcast {{.+}} : vector<8xi16> to vector<8xbf16>
// CHECK: vector.store %[[NARROW]], %[[O3]][%[[BATCH]], %[[M]], %{{.+}}] : memref<6x4x8xbf16>, vector<8xbf16>
func.func @matmul_shared_weight(%a: tensor<2x3x4x16xbf16>, %b: tensor<16x8xbf16>) -> tensor<2x3x4x8xbf16> {
  %0 = nf.matmul %a, %b : tensor<2x3x4x16xbf16>, tensor<16x8xbf16> -> tensor<2x3x4x8xbf16>
  return %0 : tensor<2x3x4x8xbf16>
}

// -----

// Dynamic M and N come from the operands' buffers. Whether rhs is packed
// is then decided at run time: below 4 rows (a matrix-vector product) the
// blocks read rhs in place, with no panel; from 4 rows on, they pack it.
// (The JIT specializes dynamic shapes per call, so there M is static and
// only one of the two is emitted.)
// CHECK-LABEL: func.func @matmul_dynamic
// CHECK: %[[AB:.+]] = bufferization.to_memref {{.+}} : memref<?x16xf32>
// CHECK: %[[BB:.+]] = bufferization.to_memref {{.+}} : memref<16x?xf32>
// CHECK: %[[M:.+]] = memref.dim %[[AB]], %c0
// CHECK: %[[N:.+]] = memref.dim %[[BB]], %c1
// CHECK: %[[B3:.+]] = memref.reinterpret_cast %[[BB]]
// CHECK: memref.alloc(%[[M]], %[[N]]) {alignment = 64 : i64} : memref<?x?xf32>
// CHECK: %[[FEW:.+]] = arith.cmpi ult, %[[M]], %c4
// CHECK: scf.if %[[FEW]] {
// CHECK: %[[NP:.+]] = arith.addi %[[N]], %c31
// CHECK: %[[BLOCKS:.+]] = arith.divui %[[NP]], %c32
// CHECK: %[[MP:.+]] = arith.addi %[[M]], %c95
// CHECK: %[[CHUNKS:.+]] = arith.divui %[[MP]], %c96
// CHECK: scf.parallel
// CHECK: arith.remui %{{.+}}, %[[CHUNKS]]
// CHECK: arith.remui %{{.+}}, %[[BLOCKS]]
// CHECK-NOT: memref<128x32xf32>
// CHECK: memref.alloc() {{.+}} : memref<96x32xf32>
// CHECK-NOT: memref<128x32xf32>
// CHECK: vector.load %[[B3]]{{.+}} : memref<1x16x?xf32>, vector<8xf32>
// CHECK-NEXT: math.fma
// CHECK: } else {
// CHECK: scf.parallel
// CHECK: %[[PANEL:.+]] = memref.alloc() {{.+}} : memref<128x32xf32>
// CHECK: vector.load %[[B3]]{{.+}} : memref<1x16x?xf32>, vector<8xf32>
// CHECK-NEXT: arith.subi
// CHECK-NEXT: vector.store {{.+}}, %[[PANEL]]
func.func @matmul_dynamic(%a: tensor<?x16xf32>, %b: tensor<16x?xf32>) -> tensor<?x?xf32> {
  %0 = nf.matmul %a, %b : tensor<?x16xf32>, tensor<16x?xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// NCHW conv with an f16 result: rows (n, o, oh) accumulate in f32 in a
// scratch slot (64 slots, one per parallel chunk of rows), in tiles of
// 1024; each filter tap adds a scaled span of an input row (stride 1:
// vector loads), clipped to the input; the row is narrowed on the store.
// CHECK-LABEL: func.func @conv_nchw_f16_scratch
// CHECK: %[[X:.+]] = bufferization.to_memref {{.+}} : memref<2x3x16x16xf16>
// CHECK: %[[W:.+]] = bufferization.to_memref {{.+}} : memref<4x3x3x3xf16>
// CHECK: %[[Y:.+]] = memref.alloc() {{.+}} : memref<2x4x16x16xf16>
// CHECK: %[[S:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x1024xf32>
// CHECK: scf.parallel (%[[SLOT:.+]]) = ({{.+}}) to (%c64
// CHECK: scf.for %[[ROW:.+]] = {{.+}} to {{.+}} step %c1
// CHECK: %[[OH:.+]] = arith.remui %[[ROW]], %c16
// CHECK: scf.for %[[T:.+]] = {{.+}} step %c1024
// CHECK: vector.store %{{.+}}, %[[S]][%[[SLOT]], %{{.+}}] : memref<64x1024xf32>, vector<8xf32>
// CHECK: memref.store %{{.+}}, %[[S]][%[[SLOT]], %{{.+}}] : memref<64x1024xf32>
// CHECK: scf.for %[[C:.+]] =
// CHECK: scf.for %[[KH:.+]] =
// CHECK: scf.for %[[KW:.+]] =
// CHECK: %[[WV:.+]] = memref.load %[[W]][%{{.+}}, %[[C]], %[[KH]], %[[KW]]] : memref<4x3x3x3xf16>
// CHECK: %[[WF:.+]] = arith.extf %[[WV]] : f16 to f32
// CHECK: scf.for %[[OW:.+]] = {{.+}} step %c8
// CHECK: %[[IW:.+]] = arith.addi %[[OW]],
// CHECK: %[[XV:.+]] = vector.load %[[X]][%{{.+}}, %[[C]], %{{.+}}, %[[IW]]] : memref<2x3x16x16xf16>, vector<8xf16>
// CHECK: %[[XF:.+]] = arith.extf %[[XV]] : vector<8xf16> to vector<8xf32>
// CHECK: %[[WS:.+]] = vector.broadcast %[[WF]] : f32 to vector<8xf32>
// CHECK: %[[AT:.+]] = arith.subi %[[OW]], %[[T]]
// CHECK: %[[ACC:.+]] = vector.load %[[S]][%[[SLOT]], %[[AT]]] : memref<64x1024xf32>, vector<8xf32>
// CHECK: %[[SUM:.+]] = math.fma %[[WS]], %[[XF]], %[[ACC]] : vector<8xf32>
// CHECK: vector.store %[[SUM]], %[[S]][%[[SLOT]], %[[AT]]] : memref<64x1024xf32>, vector<8xf32>
// CHECK: vector.load %[[S]][%[[SLOT]], %{{.+}}] : memref<64x1024xf32>, vector<8xf32>
// CHECK: %[[NARROW:.+]] = arith.truncf {{.+}} : vector<8xf32> to vector<8xf16>
// CHECK: vector.store %[[NARROW]], %[[Y]][%{{.+}}, %{{.+}}, %[[OH]], %{{.+}}] : memref<2x4x16x16xf16>, vector<8xf16>
func.func @conv_nchw_f16_scratch(%x: tensor<2x3x16x16xf16>, %w: tensor<4x3x3x3xf16>) -> tensor<2x4x16x16xf16> {
  %0 = nf.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<2x3x16x16xf16>, tensor<4x3x3x3xf16> -> tensor<2x4x16x16xf16>
  return %0 : tensor<2x4x16x16xf16>
}

// -----

// An f32 result accumulates in place, one parallel iteration per row
// (n, o, oh), with no scratch. Stride 2 along w: the input span is
// strided, so it is read element by element.
// CHECK-LABEL: func.func @conv_nchw_stride2_in_place
// CHECK: %[[X:.+]] = bufferization.to_memref {{.+}} : memref<1x3x16x16xf32>
// CHECK: %[[Y:.+]] = memref.alloc() {{.+}} : memref<1x4x8x9xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%{{.+}}) = ({{.+}}) to (%c32)
// CHECK: vector.store %{{.+}}, %[[Y]]
// CHECK: memref.load {{.+}} : memref<4x3x3x3xf32>
// CHECK-NOT: vector.load
// CHECK: scf.for %[[OW:.+]] = {{.+}} step %c1
// CHECK: %[[S:.+]] = arith.muli %[[OW]], %c2
// CHECK: %[[IW:.+]] = arith.addi %[[S]],
// CHECK: %[[XV:.+]] = memref.load %[[X]][%{{.+}}, %{{.+}}, %{{.+}}, %[[IW]]] : memref<1x3x16x16xf32>
// CHECK: %[[ACC:.+]] = memref.load %[[Y]][%{{.+}}, %{{.+}}, %{{.+}}, %[[OW]]] : memref<1x4x8x9xf32>
// CHECK: %[[SUM:.+]] = math.fma %{{.+}}, %[[XV]], %[[ACC]] : f32
// CHECK: memref.store %[[SUM]], %[[Y]][%{{.+}}, %{{.+}}, %{{.+}}, %[[OW]]] : memref<1x4x8x9xf32>
func.func @conv_nchw_stride2_in_place(%x: tensor<1x3x16x16xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x9xf32> {
  %0 = nf.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 0, 1, 2, 1>} : tensor<1x3x16x16xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x9xf32>
  return %0 : tensor<1x4x8x9xf32>
}

// -----

// NHWC conv: one parallel iteration per (n, oh, chunk of 32 output
// channels). Positions whose window lies wholly in the input (all 6 here:
// no padding, so no one-at-a-time loop for clipped windows) are computed in
// tiles of 3 positions x 4 channels: 12 vector accumulators over the whole
// window, one span of kw * c = 48 elements per kh (dilation 1 along w),
// each input vector used for 4 channels and each filter vector for 3
// positions; the lanes are added once at the end, with the scalar tails.
// CHECK-LABEL: func.func @conv_nhwc_spans
// CHECK: %[[X3:.+]] = memref.reinterpret_cast {{.+}} sizes: [1, 8, 128]
// CHECK: %[[W3:.+]] = memref.reinterpret_cast {{.+}} sizes: [32, 3, 48]
// CHECK: scf.parallel (%{{.+}}) = ({{.+}}) to (%c6{{.*}})
// CHECK-NOT: -> (f32)
// CHECK: scf.for %[[O0:.+]] = {{.+}} step %c4
// CHECK: scf.for %[[OW0:.+]] = {{.+}} to %c6{{.*}} step %c3
// CHECK: scf.for %[[KH:.+]] = {{.+}} iter_args({{.+}}) -> ([[V12:(vector<8xf32>, ){12}]][[S12:(f32, ){11}f32]])
// CHECK: scf.for {{.+}} -> ([[V12]][[S12]])
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %c48{{.*}} step %c8{{.*}} iter_args({{.+}}) -> ([[V11:(vector<8xf32>, ){11}]]vector<8xf32>)
// CHECK-COUNT-3: vector.load %[[X3]]{{.+}} : memref<1x8x128xf32>, vector<8xf32>
// CHECK: vector.load %[[W3]][%[[O0]], %[[KH]], %{{.+}}] : memref<32x3x48xf32>, vector<8xf32>
// CHECK-COUNT-3: math.fma {{.+}} : vector<8xf32>
// CHECK: vector.load %[[W3]]
// CHECK-COUNT-3: math.fma {{.+}} : vector<8xf32>
// CHECK: vector.load %[[W3]]
// CHECK-COUNT-3: math.fma {{.+}} : vector<8xf32>
// CHECK: vector.load %[[W3]]
// CHECK-COUNT-3: math.fma {{.+}} : vector<8xf32>
// CHECK-NEXT: scf.yield
// CHECK: scf.for {{.+}} -> ([[S12]])
// A position's 4 channels are contiguous in y: their accumulators are
// reduced together (each halved to 4 lanes, then neighbours merged twice)
// into one vector, the scalar tails added, and stored as one.
// CHECK: %[[T0:.+]] = vector.insert %[[W:.+]]#12, %{{.+}} [0] : f32 into vector<4xf32>
// CHECK: %[[T1:.+]] = vector.insert %[[W]]#13, %[[T0]] [1]
// CHECK: %[[T2:.+]] = vector.insert %[[W]]#14, %[[T1]] [2]
// CHECK: %[[TAILS:.+]] = vector.insert %[[W]]#15, %[[T2]] [3]
// CHECK: %[[LO:.+]] = vector.shuffle %[[W]]#0, %[[W]]#0 [0, 1, 2, 3] : vector<8xf32>, vector<8xf32>
// CHECK: %[[HI:.+]] = vector.shuffle %[[W]]#0, %[[W]]#0 [4, 5, 6, 7]
// CHECK: %[[H0:.+]] = arith.addf %[[LO]], %[[HI]] : vector<4xf32>
// CHECK: vector.shuffle %[[W]]#1, %[[W]]#1 [0, 1, 2, 3]
// CHECK: %[[H1:.+]] = arith.addf
// CHECK: vector.shuffle %[[W]]#2, %[[W]]#2 [0, 1, 2, 3]
// CHECK: %[[H2:.+]] = arith.addf
// CHECK: vector.shuffle %[[W]]#3, %[[W]]#3 [0, 1, 2, 3]
// CHECK: %[[H3:.+]] = arith.addf
// CHECK: %[[E01:.+]] = vector.shuffle %[[H0]], %[[H1]] [0, 2, 4, 6] : vector<4xf32>, vector<4xf32>
// CHECK: %[[O01:.+]] = vector.shuffle %[[H0]], %[[H1]] [1, 3, 5, 7]
// CHECK: %[[M01:.+]] = arith.addf %[[E01]], %[[O01]]
// CHECK: %[[E23:.+]] = vector.shuffle %[[H2]], %[[H3]] [0, 2, 4, 6]
// CHECK: %[[O23:.+]] = vector.shuffle %[[H2]], %[[H3]] [1, 3, 5, 7]
// CHECK: %[[M23:.+]] = arith.addf %[[E23]], %[[O23]]
// CHECK: %[[E:.+]] = vector.shuffle %[[M01]], %[[M23]] [0, 2, 4, 6]
// CHECK: %[[O:.+]] = vector.shuffle %[[M01]], %[[M23]] [1, 3, 5, 7]
// CHECK: %[[SUMS:.+]] = arith.addf %[[E]], %[[O]] : vector<4xf32>
// CHECK: %[[OUT:.+]] = arith.addf %[[SUMS]], %[[TAILS]] : vector<4xf32>
// CHECK: vector.store %[[OUT]], %{{.+}}[%{{.+}}, %{{.+}}, %[[OW0]], %[[O0]]] : memref<1x6x6x32xf32>, vector<4xf32>
// CHECK-NOT: vector.reduction
// CHECK: vector.insert %[[W]]#16, %{{.+}} [0]
// CHECK-NOT: vector.reduction
// CHECK: vector.store %{{.+}} : memref<1x6x6x32xf32>, vector<4xf32>
// CHECK-NOT: vector.reduction
// CHECK: vector.insert %[[W]]#20, %{{.+}} [0]
// CHECK-NOT: vector.reduction
// CHECK: vector.store %{{.+}} : memref<1x6x6x32xf32>, vector<4xf32>
func.func @conv_nhwc_spans(%x: tensor<1x8x8x16xf32>, %w: tensor<32x3x3x16xf32>) -> tensor<1x6x6x32xf32> {
  %0 = nf.conv2d %x, %w {layout = #nf.layout<nhwc>} : tensor<1x8x8x16xf32>, tensor<32x3x3x16xf32> -> tensor<1x6x6x32xf32>
  return %0 : tensor<1x6x6x32xf32>
}

// -----

// Dilated along w: a window row kh is 3 spans of 16 channels, one per kw,
// at input element (ow + 2 * kw) * 16 and filter element kw * 16; the 4
// positions take a tile of 3 and a single one.
// CHECK-LABEL: func.func @conv_nhwc_dilated
// CHECK: scf.for %[[OW0:.+]] = {{.+}} step %c3
// CHECK: scf.for %[[KH:.+]] = {{.+}} iter_args(
// CHECK: scf.for %[[KW:.+]] = %c0{{.*}} to %c3{{.*}} step %c1{{.*}} iter_args(
// CHECK: %[[OFF:.+]] = arith.muli %[[KW]], %c2
// CHECK: %[[IW:.+]] = arith.addi %{{.+}}, %[[OFF]]
// CHECK: arith.muli %[[IW]], %c16
// CHECK: %[[WAT:.+]] = arith.muli %[[KW]], %c16
// CHECK: scf.for %[[J:.+]] = {{.+}} to %c16{{.*}} step %c8
// CHECK: %[[WJ:.+]] = arith.addi %[[WAT]], %[[J]]
// CHECK: vector.load %{{.+}}[%{{.+}}, %[[KH]], %[[WJ]]] : memref<32x3x48xf32>, vector<8xf32>
// CHECK: scf.for %{{.+}} = {{.+}} to %c4{{.*}} step %c1
// CHECK-SAME: {
func.func @conv_nhwc_dilated(%x: tensor<1x8x8x16xf32>, %w: tensor<32x3x3x16xf32>) -> tensor<1x4x4x32xf32> {
  %0 = nf.conv2d %x, %w {layout = #nf.layout<nhwc>, dilations = array<i64: 2, 2>} : tensor<1x8x8x16xf32>, tensor<32x3x3x16xf32> -> tensor<1x4x4x32xf32>
  return %0 : tensor<1x4x4x32xf32>
}

// -----

// A dynamic batch comes from the input's buffer.
// CHECK-LABEL: func.func @conv_dynamic_batch
// CHECK: %[[X:.+]] = bufferization.to_memref {{.+}} : memref<?x3x8x8xf32>
// CHECK: %[[N:.+]] = memref.dim %[[X]], %c0
// CHECK: memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x4x6x6xf32>
// CHECK: %[[NO:.+]] = arith.muli %[[N]], %c4
// CHECK: %[[ROWS:.+]] = arith.muli %[[NO]], %c6
// CHECK: scf.parallel (%{{.+}}) = ({{.+}}) to (%[[ROWS]])
func.func @conv_dynamic_batch(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32> {
  %0 = nf.conv2d %x, %w : tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<?x4x6x6xf32>
  return %0 : tensor<?x4x6x6xf32>
}

// -----

// dx gathers into rows (n, c, ih): a filter row kh contributes only where
// ih + pad - kh is a multiple of the stride (then oh is the quotient), and
// dy's span is added to every second element of the dx row.
// CHECK-LABEL: func.func @backprop_input_nchw_stride2
// CHECK: %[[DY:.+]] = bufferization.to_memref {{.+}} : memref<1x4x8x8xf32>
// CHECK: %[[DX:.+]] = memref.alloc() {{.+}} : memref<1x3x16x16xf32>
// CHECK: scf.parallel (%{{.+}}) = ({{.+}}) to (%c48)
// CHECK: scf.for %[[KH:.+]] =
// CHECK: %[[T:.+]] = arith.subi %{{.+}}, %[[KH]]
// CHECK: %[[REM:.+]] = arith.remui %[[T]], %c2
// CHECK: %[[DIV:.+]] = arith.cmpi eq, %[[REM]], %c0
// CHECK: scf.if %[[DIV]] {
// CHECK: %[[OH:.+]] = arith.divui %[[T]], %c2
// CHECK: scf.for %[[O:.+]] = {{.+}} to %c4
// CHECK: scf.for %[[KW:.+]] = {{.+}} to %c3
// CHECK: memref.load %{{.+}}[%[[O]], %{{.+}}, %[[KH]], %[[KW]]] : memref<4x3x3x3xf32>
// CHECK: scf.for %[[OW:.+]] = {{.+}} step %c1
// CHECK: %[[S:.+]] = arith.muli %[[OW]], %c2
// CHECK: %[[IW:.+]] = arith.addi %[[S]],
// CHECK: %[[G:.+]] = memref.load %[[DY]][%{{.+}}, %[[O]], %[[OH]], %[[OW]]] : memref<1x4x8x8xf32>
// CHECK: %[[ACC:.+]] = memref.load %[[DX]][%{{.+}}, %{{.+}}, %{{.+}}, %[[IW]]] : memref<1x3x16x16xf32>
// CHECK: %[[SUM:.+]] = math.fma %{{.+}}, %[[G]], %[[ACC]] : f32
// CHECK: memref.store %[[SUM]], %[[DX]][%{{.+}}, %{{.+}}, %{{.+}}, %[[IW]]]
func.func @backprop_input_nchw_stride2(%dy: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x16x16xf32> {
  %0 = nf.conv2d_backprop_input %dy, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>} : tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x16x16xf32>
  return %0 : tensor<1x3x16x16xf32>
}

// -----

// NHWC dx: rows (n, ih, iw) of channels; each tap (kh, kw) and output
// channel o adds dy[n, oh, ow, o] times a filter row of channels.
// CHECK-LABEL: func.func @backprop_input_nhwc
// CHECK: %[[DY:.+]] = bufferization.to_memref {{.+}} : memref<1x6x6x8xbf16>
// CHECK: %[[W:.+]] = bufferization.to_memref {{.+}} : memref<8x3x3x16xbf16>
// CHECK: %[[S:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x1024xf32>
// CHECK: scf.for {{.+}} step %c1024
// CHECK: memref.store %{{.+}}, %[[S]]
// CHECK: scf.for %[[KH:.+]] =
// CHECK-NOT: scf.if
// CHECK: scf.for %[[KW:.+]] =
// CHECK: scf.for %[[O:.+]] = {{.+}} to %c8
// CHECK: %[[G:.+]] = memref.load %[[DY]][%{{.+}}, %{{.+}}, %{{.+}}, %[[O]]] : memref<1x6x6x8xbf16>
// CHECK: %[[GF:.+]] = arith.extf %[[G]] : bf16 to f32
// CHECK: %[[WV:.+]] = vector.load %[[W]][%[[O]], %[[KH]], %[[KW]], %{{.+}}] : memref<8x3x3x16xbf16>, vector<8xbf16>
// CHECK: %[[WF:.+]] = arith.extf %[[WV]] : vector<8xbf16> to vector<8xf32>
// CHECK: %[[GS:.+]] = vector.broadcast %[[GF]] : f32 to vector<8xf32>
// CHECK: math.fma %[[GS]], %[[WF]], %{{.+}} : vector<8xf32>
// CHECK: arith.bitcast {{.+}} : vector<8xi16> to vector<8xbf16>
func.func @backprop_input_nhwc(%dy: tensor<1x6x6x8xbf16>, %w: tensor<8x3x3x16xbf16>) -> tensor<1x8x8x16xbf16> {
  %0 = nf.conv2d_backprop_input %dy, %w {layout = #nf.layout<nhwc>} : tensor<1x6x6x8xbf16>, tensor<8x3x3x16xbf16> -> tensor<1x8x8x16xbf16>
  return %0 : tensor<1x8x8x16xbf16>
}

// -----

// NCHW dW: rows (o, c, kh); each element kw is a sum over n and the oh
// whose input row exists of dot products along ow (stride 1: vectors).
// CHECK-LABEL: func.func @backprop_filter_nchw
// CHECK: %[[X:.+]] = bufferization.to_memref {{.+}} : memref<2x3x16x16xf32>
// CHECK: %[[DY:.+]] = bufferization.to_memref {{.+}} : memref<2x4x16x16xf32>
// CHECK: %[[DW:.+]] = memref.alloc() {{.+}} : memref<4x3x3x3xf32>
// CHECK: scf.parallel (%{{.+}}) = ({{.+}}) to (%c36)
// CHECK: scf.for %[[KW:.+]] = {{.+}} to %c3
// CHECK: %[[SUM:.+]] = scf.for %[[N:.+]] = {{.+}} to %c2 {{.+}} iter_args({{.+}}) -> (f32)
// CHECK: scf.for %[[OH:.+]] = {{.+}} iter_args({{.+}}) -> (f32)
// CHECK: vector.load %[[DY]][%[[N]], %{{.+}}, %[[OH]], %{{.+}}] : memref<2x4x16x16xf32>, vector<8xf32>
// CHECK: vector.load %[[X]][%[[N]], %{{.+}}, %{{.+}}, %{{.+}}] : memref<2x3x16x16xf32>, vector<8xf32>
// CHECK: memref.store %[[SUM]], %[[DW]][%{{.+}}, %{{.+}}, %{{.+}}, %[[KW]]] : memref<4x3x3x3xf32>
func.func @backprop_filter_nchw(%x: tensor<2x3x16x16xf32>, %dy: tensor<2x4x16x16xf32>) -> tensor<4x3x3x3xf32> {
  %0 = nf.conv2d_backprop_filter %x, %dy {padding = array<i64: 1, 1, 1, 1>} : tensor<2x3x16x16xf32>, tensor<2x4x16x16xf32> -> tensor<4x3x3x3xf32>
  return %0 : tensor<4x3x3x3xf32>
}

// -----

// NHWC dW with f16 data and an f32 result: rows (o, kh, kw) of channels
// accumulate in place; each (n, oh, ow) adds dy[n, oh, ow, o] times an
// input row of channels.
// CHECK-LABEL: func.func @backprop_filter_nhwc
// CHECK: %[[X:.+]] = bufferization.to_memref {{.+}} : memref<2x8x8x16xf16>
// CHECK: %[[DY:.+]] = bufferization.to_memref {{.+}} : memref<2x6x6x8xf16>
// CHECK: %[[DW:.+]] = memref.alloc() {{.+}} : memref<8x3x3x16xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%{{.+}}) = ({{.+}}) to (%c72)
// CHECK: scf.for %[[N:.+]] = {{.+}} to %c2
// CHECK: scf.for %[[OH:.+]] =
// CHECK: scf.for %[[OW:.+]] =
// CHECK: %[[G:.+]] = memref.load %[[DY]][%[[N]], %[[OH]], %[[OW]], %{{.+}}] : memref<2x6x6x8xf16>
// CHECK: vector.load %[[X]][%[[N]], %{{.+}}, %{{.+}}, %{{.+}}] : memref<2x8x8x16xf16>, vector<8xf16>
// CHECK: %[[ACC:.+]] = vector.load %[[DW]]{{.+}} : memref<8x3x3x16xf32>, vector<8xf32>
// CHECK: %[[SUM:.+]] = math.fma %{{.+}}, %{{.+}}, %[[ACC]] : vector<8xf32>
// CHECK: vector.store %[[SUM]], %[[DW]]
func.func @backprop_filter_nhwc(%x: tensor<2x8x8x16xf16>, %dy: tensor<2x6x6x8xf16>) -> tensor<8x3x3x16xf32> {
  %0 = nf.conv2d_backprop_filter %x, %dy {layout = #nf.layout<nhwc>} : tensor<2x8x8x16xf16>, tensor<2x6x6x8xf16> -> tensor<8x3x3x16xf32>
  return %0 : tensor<8x3x3x16xf32>
}
