// Norms with per-channel statistics become channel loops: moments per
// (image, channel) by the corrected two-pass algorithm on data in cache,
// f64 group statistics, then one normalizing pass, on ranges of images that
// fit in cache. Channels-last moments run vector loops along C over chunks
// of 64 positions into scratch rows; channels-first ones are blocked row
// sums.
// RUN: nf-opt %s -split-input-file --pass-pipeline='builtin.module(nf-lower-to-loops{vector-width=4})' | FileCheck %s

// CHECK-LABEL: func.func @group_norm_nhwc
// Per-(image, channel) coefficients and f64 moments, allocated once.
// CHECK-COUNT-3: memref.alloc() {alignment = 64 : i64} : memref<2x6xf32>
// CHECK-COUNT-2: memref.alloc() {alignment = 64 : i64} : memref<2x6xf64>
// Ranges of images: 2^20 / (6 * 35) = 4993 images per range.
// CHECK: scf.for %{{.+}} = %{{.+}} to %c2 step %c4993{{(_[0-9]+)?}} {
// Per chunk of positions, scratch rows of C values: the chunk's means, the
// sums of d and of d^2.
// CHECK: %[[SX:.+]] = memref.alloc(%{{.+}}) {alignment = 64 : i64} : memref<?x1x6xf32>
// CHECK: %[[SD:.+]] = memref.alloc(%{{.+}}) {alignment = 64 : i64} : memref<?x1x6xf32>
// CHECK: %[[SD2:.+]] = memref.alloc(%{{.+}}) {alignment = 64 : i64} : memref<?x1x6xf32>
// CHECK: scf.parallel
// Per chunk, 4 vectors of channels at a time over all its positions, in
// registers: first the sums of x, the chunk's means by one reciprocal, then
// (from cache) the sums of d = x - mean and of d^2, each stored once.
// CHECK: %[[INV:.+]] = arith.divf %{{.+}}, %{{.+}} : f32
// CHECK: scf.for %[[C:.+]] = %{{.+}} to %{{.+}} step %c16
// CHECK: %[[SUM:.+]] = scf.for {{.+}} iter_args(%[[AX:.+]] = %{{.+}}) -> (vector<16xf32>)
// CHECK-NEXT: %[[X0:.+]] = vector.load %[[X:.+]][%{{.+}}, %{{.+}}, %[[C]]] : memref<2x35x6xf32>, vector<16xf32>
// CHECK-NEXT: %[[NX:.+]] = arith.addf %[[AX]], %[[X0]] : vector<16xf32>
// CHECK-NEXT: scf.yield %[[NX]]
// CHECK: %[[INVS:.+]] = vector.broadcast %[[INV]] : f32 to vector<16xf32>
// CHECK: %[[MEAN:.+]] = arith.mulf %[[SUM]], %[[INVS]] : vector<16xf32>
// CHECK: %[[SUMS:.+]]:2 = scf.for {{.+}} iter_args(%[[AD:.+]] = %{{.+}}, %[[AD2:.+]] = %{{.+}}) -> (vector<16xf32>, vector<16xf32>)
// CHECK-NEXT: %[[XV:.+]] = vector.load %[[X]]{{.+}}, %[[C]]] : memref<2x35x6xf32>, vector<16xf32>
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[XV]], %[[MEAN]] : vector<16xf32>
// CHECK-NEXT: %[[ND:.+]] = arith.addf %[[AD]], %[[D]] : vector<16xf32>
// CHECK-NEXT: %[[ND2:.+]] = math.fma %[[D]], %[[D]], %[[AD2]] : vector<16xf32>
// CHECK-NEXT: scf.yield %[[ND]], %[[ND2]]
// CHECK: vector.store %[[MEAN]], %[[SX]]
// CHECK-NEXT: vector.store %[[SUMS]]#0, %[[SD]]
// CHECK-NEXT: vector.store %[[SUMS]]#1, %[[SD2]]
// Chan's combination of the chunks, in f64 vectors along C; a chunk's
// weights are scalars, the same for every channel.
// CHECK: scf.parallel
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (f64, vector<4xf64>, vector<4xf64>)
// CHECK: %[[N:.+]] = arith.addf %{{.+}}, %{{.+}} : f64
// CHECK: %[[WEIGHT:.+]] = arith.divf %{{.+}}, %[[N]] : f64
// CHECK: vector.load %[[SX]]{{.+}} : memref<?x1x6xf32>, vector<4xf32>
// CHECK: arith.extf {{.+}} : vector<4xf32> to vector<4xf64>
// CHECK: vector.broadcast %[[WEIGHT]] : f64 to vector<4xf64>
// CHECK: vector.store {{.+}} : memref<2x6xf64>, vector<4xf64>
// The channels past the last whole vector, one by one.
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (f64, f64, f64)
// CHECK: memref.load %[[SX]]{{.+}} : memref<?x1x6xf32>
// CHECK: arith.extf {{.+}} : f32 to f64
// Group moments from the channels': sum of M2s plus S * sum of squared
// deviations of the channel means; rstd = 1 / sqrt(var + eps), in f64.
// CHECK: math.sqrt {{.+}} : f64
// The normalizing pass: fma(x - mean, rstd * scale, bias).
// CHECK: scf.parallel
// CHECK: vector.load %[[X]]{{.+}} : memref<2x35x6xf32>, vector<4xf32>
// CHECK: arith.subf
// CHECK-NEXT: math.fma
// CHECK-NEXT: vector.store {{.+}} : memref<2x35x6xf32>, vector<4xf32>
func.func @group_norm_nhwc(%x: tensor<2x5x7x6xf32>, %s: tensor<6xf32>, %b: tensor<6xf32>) -> (tensor<2x5x7x6xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %y, %m, %r = nf.group_norm %x scale %s bias %b {layout = #nf.layout<nhwc>, num_groups = 3 : i64} : (tensor<2x5x7x6xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<2x5x7x6xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  return %y, %m, %r : tensor<2x5x7x6xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Channels-first: rows of H*W elements, one blocked sum per (image,
// channel) in parallel; no scratch rows.
// CHECK-LABEL: func.func @instance_norm_nchw
// CHECK: memref.reinterpret_cast {{.+}} to offset: [0], sizes: [2, 6, 35]
// CHECK-NOT: memref<?x
// CHECK: scf.parallel (%[[M:.+]], %[[C:.+]]) =
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (f64)
// CHECK: vector.load {{.+}}[%[[M]], %[[C]], {{.+}}] : memref<2x6x35xbf16>, vector<4xbf16>
// CHECK: memref.store {{.+}}[%[[M]], %[[C]]] : memref<2x6xf64>
func.func @instance_norm_nchw(%x: tensor<2x6x5x7xbf16>) -> (tensor<2x6x5x7xbf16>, tensor<2x6xf32>, tensor<2x6xf32>) {
  %y, %m, %r = nf.instance_norm %x : (tensor<2x6x5x7xbf16>) -> (tensor<2x6x5x7xbf16>, tensor<2x6xf32>, tensor<2x6xf32>)
  return %y, %m, %r : tensor<2x6x5x7xbf16>, tensor<2x6xf32>, tensor<2x6xf32>
}

// -----

// BatchNorm's statistics span every image: one range, and the running
// statistics blend in the batch mean and the unbiased variance (n = 70).
// CHECK-LABEL: func.func @batch_norm_training
// The moments of every (image, channel) come first, with no loop over
// ranges of images around them.
// CHECK-NOT: scf.for
// CHECK: scf.parallel (%{{.+}}, %{{.+}}) = (%{{.+}}, %{{.+}}) to (%c2, %c6)
// rstd = 1 / sqrt(var + eps), then the blend weights and var * n / (n - 1).
// CHECK: %[[EPS:.+]] = arith.constant 1.000000e-05 : f64
// CHECK-NEXT: %[[VE:.+]] = arith.addf %[[VAR:.+]], %[[EPS]] : f64
// CHECK-NEXT: math.sqrt %[[VE]] : f64
// CHECK: arith.constant 7.500000e-01 : f64
// CHECK-NEXT: arith.constant 2.500000e-01 : f64
// CHECK-NEXT: %[[VN:.+]] = arith.mulf %[[VAR]], %[[COUNT:.+]] : f64
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[NM1:.+]] = arith.subf %[[COUNT]], %[[ONE]] : f64
// CHECK-NEXT: arith.divf %[[VN]], %[[NM1]] : f64
func.func @batch_norm_training(%x: tensor<2x6x5x7xf32>, %rm: tensor<6xf32>, %rv: tensor<6xf32>) -> (tensor<2x6x5x7xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x running(%rm, %rv) {momentum = 0.25} : (tensor<2x6x5x7xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<2x6x5x7xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>)
  return %y, %m, %r, %nm, %nv : tensor<2x6x5x7xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
}

// -----

// From 8 images on (channels-last), each thread takes a slice of
// consecutive images, pipelined: min(omp_get_max_threads(), 8) slices of
// a parallel loop, the images [s * 8 / slices, (s + 1) * 8 / slices) of
// slice s, two slots of chunk moments per slice. The pass declares the
// runtime function in the module.
// CHECK: func.func private @omp_get_max_threads() -> i32
// CHECK-LABEL: func.func @group_norm_nhwc_8_images
// CHECK: %[[T:.+]] = call @omp_get_max_threads() : () -> i32
// CHECK: %[[TI:.+]] = arith.index_cast %[[T]] : i32 to index
// CHECK: %[[T1:.+]] = arith.maxsi %[[TI]], %[[ONE:c1(_[0-9]+)?]] : index
// CHECK: %[[SLICES:.+]] = arith.minui %[[T1]], %c8 : index
// CHECK: scf.parallel (%[[S:.+]]) = (%{{.+}}) to (%[[SLICES]]) step (%{{.+}}) {
// CHECK-NEXT: %[[LO0:.+]] = arith.muli %[[S]], %c8
// CHECK-NEXT: %[[LO:.+]] = arith.divui %[[LO0]], %[[SLICES]]
// CHECK-NEXT: %[[S1:.+]] = arith.addi %[[S]], %[[ONE]]
// CHECK-NEXT: %[[HI0:.+]] = arith.muli %[[S1]], %c8
// CHECK-NEXT: %[[HI:.+]] = arith.divui %[[HI0]], %[[SLICES]]
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<2x1x8xf32>
// CHECK-NOT: scf.parallel
// The moments of the slice's first image, into slot 0, chunks in order:
// chunk 0 by two passes; a later chunk by one pass around the previous
// chunk's mean (its center + sum(d) / n), kept if 2 sum(d)^2 <= n sum(d^2)
// in every lane, else by two passes.
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[CHUNK:.+]], %c0{{.*}} : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK: vector.load %[[X:.+]][%[[LO]], %{{.+}}, %{{.+}}] : memref<8x35x8xf32>, vector<16xf32>
// CHECK: } else {
// CHECK: %[[PREV:.+]] = arith.subi %[[CHUNK]], %{{.+}} : index
// CHECK: %[[PSUM:.+]] = vector.load %[[SD:.+]][%c0{{.*}}, %[[PREV]], %{{.+}}] : memref<2x1x8xf32>, vector<16xf32>
// CHECK-NEXT: %[[PINV:.+]] = vector.broadcast
// CHECK-NEXT: %[[PCENTER:.+]] = vector.load %[[SX:.+]][%c0{{.*}}, %[[PREV]], %{{.+}}] : memref<2x1x8xf32>, vector<16xf32>
// CHECK-NEXT: %[[CENTER:.+]] = math.fma %[[PSUM]], %[[PINV]], %[[PCENTER]] : vector<16xf32>
// CHECK: %[[SUMS:.+]]:2 = scf.for
// CHECK-NEXT: vector.load %[[X]][%[[LO]], %{{.+}}, %{{.+}}]
// CHECK-NEXT: arith.subf %{{.+}}, %[[CENTER]] : vector<16xf32>
// CHECK: %[[SQ:.+]] = arith.mulf %[[SUMS]]#0, %[[SUMS]]#0 : vector<16xf32>
// CHECK-NEXT: %[[TWO:.+]] = arith.constant dense<2.000000e+00> : vector<16xf32>
// CHECK-NEXT: %[[TWICE:.+]] = arith.mulf %[[SQ]], %[[TWO]] : vector<16xf32>
// CHECK-NEXT: %[[N:.+]] = vector.broadcast
// CHECK-NEXT: %[[BOUND:.+]] = arith.mulf %[[SUMS]]#1, %[[N]] : vector<16xf32>
// CHECK-NEXT: %[[OK:.+]] = arith.cmpf ole, %[[TWICE]], %[[BOUND]] : vector<16xf32>
// CHECK-NEXT: %[[ALL:.+]] = vector.reduction <and>, %[[OK]] : vector<16xi1> into i1
// CHECK-NEXT: scf.if %[[ALL]] {
// CHECK-NEXT: vector.store %[[CENTER]], %[[SX]]
// CHECK-NEXT: vector.store %[[SUMS]]#0, %[[SD]]
// CHECK: } else {
// CHECK-NEXT: arith.constant
// CHECK-NEXT: scf.for
// CHECK-NEXT: vector.load %[[X]]
// CHECK-NEXT: arith.addf
// Then per image m of the slice: its chunks' moments (slot (m - lo) & 1)
// combined, its group statistics, ...
// CHECK: scf.for %[[M:.+]] = %[[LO]] to %[[HI]] step
// CHECK-NEXT: %[[REL:.+]] = arith.subi %[[M]], %[[LO]] : index
// CHECK-NEXT: %[[SLOT:.+]] = arith.andi %[[REL]], %[[ONE]] : index
// CHECK-NEXT: %[[NEXT:.+]] = arith.addi %[[M]], %[[ONE]] : index
// CHECK-NOT: scf.parallel
// CHECK: math.sqrt {{.+}} : f64
// ... then its normalizing map, which prefetches position p of image m + 1
// (m itself for the slice's last image), one line (16 f32) at a time, ...
// CHECK: %[[OTHER:.+]] = arith.xori %[[SLOT]], %[[ONE]] : index
// CHECK-NEXT: %[[HAS:.+]] = arith.cmpi ult, %[[NEXT]], %[[HI]] : index
// CHECK-NEXT: %[[PF:.+]] = arith.select %[[HAS]], %[[NEXT]], %[[M]] : index
// CHECK-NOT: scf.parallel
// CHECK: scf.for %[[C:.+]] = %{{.+}} to %c8{{(_[0-9]+)?}} step %c16
// CHECK-NEXT: memref.prefetch %[[X]][%[[PF]], %{{.+}}, %[[C]]], read, locality<3>, data : memref<8x35x8xf32>
// CHECK: math.fma
// CHECK-NEXT: vector.store {{.+}} : memref<8x35x8xf32>, vector<4xf32>
// ... and after each chunk of positions, the moments of the same chunks of
// image m + 1 into the other slot, if the slice has it.
// CHECK: scf.if %[[HAS]] {
// CHECK: vector.load %[[X]][%[[NEXT]], %{{.+}}, %{{.+}}] : memref<8x35x8xf32>, vector<4xf32>
// CHECK: vector.store %{{.+}}, %{{.+}}[%[[OTHER]], %{{.+}}, %{{.+}}] : memref<2x1x8xf32>, vector<4xf32>
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @group_norm_nhwc_8_images(%x: tensor<8x5x7x8xf32>) -> (tensor<8x5x7x8xf32>, tensor<8x2xf32>, tensor<8x2xf32>) {
  %y, %m, %r = nf.group_norm %x {layout = #nf.layout<nhwc>, num_groups = 2 : i64} : (tensor<8x5x7x8xf32>) -> (tensor<8x5x7x8xf32>, tensor<8x2xf32>, tensor<8x2xf32>)
  return %y, %m, %r : tensor<8x5x7x8xf32>, tensor<8x2xf32>, tensor<8x2xf32>
}

// -----

// With 7 images, ranges of images one after the other, each pass a
// parallel loop; nothing calls omp_get_max_threads, and the pass leaves
// no declaration of it.
// CHECK-NOT: omp_get_max_threads
// CHECK-LABEL: func.func @group_norm_nhwc_7_images
// CHECK: scf.for %{{.+}} = %{{.+}} to %c7{{(_[0-9]+)?}} step
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK-NOT: memref.prefetch
// CHECK-NOT: omp_get_max_threads
// CHECK: return
func.func @group_norm_nhwc_7_images(%x: tensor<7x5x7x8xf32>) -> (tensor<7x5x7x8xf32>, tensor<7x2xf32>, tensor<7x2xf32>) {
  %y, %m, %r = nf.group_norm %x {layout = #nf.layout<nhwc>, num_groups = 2 : i64} : (tensor<7x5x7x8xf32>) -> (tensor<7x5x7x8xf32>, tensor<7x2xf32>, tensor<7x2xf32>)
  return %y, %m, %r : tensor<7x5x7x8xf32>, tensor<7x2xf32>, tensor<7x2xf32>
}
