// Norms with per-channel statistics become channel loops: pivots, sums per
// (image, channel), f64 group statistics, a second pass of squared
// deviations, then one normalizing pass, on ranges of images that fit in
// cache. Channels-last sums run vector loops along C over chunks of 64
// positions into scratch rows; channels-first sums are blocked row sums.
// RUN: nf-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(nf-lower-to-loops{vector-width=4}))' | FileCheck %s

// CHECK-LABEL: func.func @group_norm_nhwc
// Per-(image, channel) coefficients and f64 sums, allocated once.
// CHECK-COUNT-4: memref.alloc() {alignment = 64 : i64} : memref<2x6xf32>
// CHECK-COUNT-2: memref.alloc() {alignment = 64 : i64} : memref<2x6xf64>
// Ranges of images: 2^20 / (6 * 35) = 4993 images per range.
// CHECK: scf.for %{{.+}} = %{{.+}} to %c2 step %c4993{{(_[0-9]+)?}} {
// Pivots: each (image, channel)'s first element.
// CHECK: scf.if
// CHECK: memref.load {{.+}} : memref<2x35x6xf32>
// First pass: one scratch row of C partial sums per chunk of positions.
// CHECK: %[[PART:.+]] = memref.alloc(%{{.+}}) {alignment = 64 : i64} : memref<?x1x6xf32>
// CHECK: scf.parallel
// CHECK: vector.load {{.+}} : memref<2x35x6xf32>, vector<4xf32>
// CHECK: arith.subf {{.+}} : vector<4xf32>
// CHECK: vector.load %[[PART]]{{.+}} : memref<?x1x6xf32>, vector<4xf32>
// CHECK: arith.addf {{.+}} : vector<4xf32>
// CHECK: vector.store {{.+}}, %[[PART]]
// The chunks' rows are added in f64.
// CHECK: scf.parallel
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (f64)
// CHECK: arith.extf {{.+}} : f32 to f64
// The group means, in f64.
// CHECK: arith.divf {{.+}} : f64
// Second pass: squared deviations from the group mean.
// CHECK: scf.parallel
// CHECK: arith.subf {{.+}} : vector<4xf32>
// CHECK-NEXT: arith.mulf {{.+}} : vector<4xf32>
// rstd = 1 / sqrt(var + eps), in f64.
// CHECK: math.sqrt {{.+}} : f64
// The normalizing pass: (x - mean) * (rstd * scale) + bias.
// CHECK: scf.parallel
// CHECK: vector.load {{.+}} : memref<2x35x6xf32>, vector<4xf32>
// CHECK: arith.subf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
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
// The pivots' loop over all images comes first, with no range loop around.
// CHECK: scf.for %{{.+}} = %{{.+}} to %c2 step %{{.+}} {
// CHECK-NEXT: scf.for %{{.+}} = %c0 to %c6 step
// After the squared deviations: rstd, then the blend weights and
// var * n / (n - 1).
// CHECK: arith.mulf {{.+}} : vector<4xf32>
// CHECK: %[[N:.+]] = arith.divf %{{.+}}, %[[COUNT:.+]] : f64
// CHECK-NEXT: arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[EPS:.+]] = arith.constant 1.000000e-05 : f64
// CHECK-NEXT: arith.addf %[[N]], %[[EPS]] : f64
// CHECK-NEXT: math.sqrt
// CHECK: arith.constant 7.500000e-01 : f64
// CHECK-NEXT: arith.constant 2.500000e-01 : f64
// CHECK: %[[VN:.+]] = arith.mulf %[[N]], %[[COUNT]] : f64
// CHECK: %[[NM1:.+]] = arith.subf %[[COUNT]], %{{.+}} : f64
// CHECK: arith.divf %[[VN]], %[[NM1]] : f64
func.func @batch_norm_training(%x: tensor<2x6x5x7xf32>, %rm: tensor<6xf32>, %rv: tensor<6xf32>) -> (tensor<2x6x5x7xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x running(%rm, %rv) {momentum = 0.25} : (tensor<2x6x5x7xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<2x6x5x7xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>)
  return %y, %m, %r, %nm, %nv : tensor<2x6x5x7xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
}
