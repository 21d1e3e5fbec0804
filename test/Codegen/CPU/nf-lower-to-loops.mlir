// nf ops become loops over buffers: parallel rows, vector bodies with a
// scalar tail, blocked sums with f64 block totals, a variance pass around a
// center checked against the row's spread.
// RUN: nf-opt %s -split-input-file --pass-pipeline='builtin.module(nf-lower-to-loops{vector-width=8})' -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @layer_norm_rows
// CHECK-SAME: (%[[X:.+]]: tensor<4x1000xf32>)
// CHECK: %[[XB:.+]] = bufferization.to_memref %[[X]] read_only : memref<4x1000xf32>
// CHECK: %[[Y:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4x1000xf32>
// CHECK: %[[MEAN:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4x1xf32>
// CHECK: %[[RSTD:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4x1xf32>
// CHECK: scf.parallel (%[[ROW:.+]]) =
// The center K: the mean of the row's first 16 elements.
// CHECK: %[[FIRST:.+]] = arith.minui %c1000, %c16 : index
// CHECK: %[[FSUM:.+]] = scf.for %{{.+}} = %{{.+}} to %[[FIRST]] step %{{.+}} iter_args(%{{.+}}) -> (f32)
// CHECK: %[[K:.+]] = arith.divf %[[FSUM]], %{{.+}} : f32
// One pass: the sums of d = x - K and of d^2 (d * d may contract into an
// fma). Blocks of 512 elements, each summed by four independent vector
// accumulators per sum (32 elements a step), block sums added in f64; then
// the groups and single vectors left, then a scalar tail.
// CHECK: scf.for {{.+}} step %[[C512:.+]] iter_args({{.+}}) -> (f64, f64)
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-NEXT: %[[XV:.+]] = vector.load {{.+}} : memref<4x1000xf32>, vector<8xf32>
// CHECK-NEXT: %[[KV:.+]] = vector.broadcast %[[K]] : f32 to vector<8xf32>
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[XV]], %[[KV]] : vector<8xf32>
// CHECK-NEXT: %[[D2:.+]] = arith.mulf %[[D]], %[[D]] fastmath<contract> : vector<8xf32>
// CHECK-NEXT: arith.addf %{{.+}}, %[[D]] fastmath<contract> : vector<8xf32>
// CHECK-NEXT: arith.addf %{{.+}}, %[[D2]] fastmath<contract> : vector<8xf32>
// CHECK: vector.reduction <add>, {{.+}} : vector<8xf32> into f32
// CHECK: arith.extf {{.+}} : f32 to f64
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>)
// CHECK: %[[SUMS:.+]]:2 = scf.for {{.+}} to %c1000 step %{{.+}} iter_args({{.+}}) -> (f64, f64)
// mean = K + sum(d) / n, in f64. The one pass is kept if
// 2 sum(d)^2 <= n sum(d^2): var = (sum(d^2) - sum(d) * sum(d) / n) / n.
// CHECK: %[[N:.+]] = arith.uitofp %{{.+}} : i64 to f64
// CHECK-NEXT: %[[MD:.+]] = arith.divf %[[SUMS]]#0, %[[N]] : f64
// CHECK-NEXT: %[[KD:.+]] = arith.extf %[[K]] : f32 to f64
// CHECK-NEXT: %[[M64:.+]] = arith.addf %[[KD]], %[[MD]] : f64
// CHECK-NEXT: %[[M:.+]] = arith.truncf %[[M64]] : f64 to f32
// CHECK-NEXT: %[[SQ:.+]] = arith.mulf %[[SUMS]]#0, %[[SUMS]]#0 : f64
// CHECK-NEXT: %[[TWO:.+]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT: %[[TWICE:.+]] = arith.mulf %[[SQ]], %[[TWO]] : f64
// CHECK-NEXT: %[[BOUND:.+]] = arith.mulf %[[N]], %[[SUMS]]#1 : f64
// CHECK-NEXT: %[[KEPT:.+]] = arith.cmpf ole, %[[TWICE]], %[[BOUND]] : f64
// And only if both sums are finite (v - v is 0).
// CHECK-NEXT: %[[D0:.+]] = arith.subf %[[SUMS]]#0, %[[SUMS]]#0 : f64
// CHECK-NEXT: %[[Z0:.+]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[F0:.+]] = arith.cmpf oeq, %[[D0]], %[[Z0]] : f64
// CHECK-NEXT: %[[D1:.+]] = arith.subf %[[SUMS]]#1, %[[SUMS]]#1 : f64
// CHECK-NEXT: %[[Z1:.+]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[F1:.+]] = arith.cmpf oeq, %[[D1]], %[[Z1]] : f64
// CHECK-NEXT: %[[FINITE:.+]] = arith.andi %[[F0]], %[[F1]] : i1
// CHECK-NEXT: %[[ONE:.+]] = arith.andi %[[FINITE]], %[[KEPT]] : i1
// CHECK-NEXT: %{{.+}}:2 = scf.if %[[ONE]] -> (f32, f64) {
// CHECK-NEXT: %[[CORR:.+]] = arith.mulf %[[SUMS]]#0, %[[MD]] : f64
// CHECK-NEXT: %[[M2:.+]] = arith.subf %[[SUMS]]#1, %[[CORR]] : f64
// CHECK-NEXT: %[[V64:.+]] = arith.divf %[[M2]], %[[N]] : f64
// CHECK-NEXT: scf.yield %[[M]], %[[V64]] : f32, f64
// Otherwise, when the sums are finite, a second pass: squared deviations
// from the mean, the same way; when they are not, both moments again,
// element by element in f64.
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.if %[[FINITE]] -> (f32, f64) {
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-NEXT: vector.load
// CHECK-NEXT: %[[MV:.+]] = vector.broadcast %[[M]] : f32 to vector<8xf32>
// CHECK-NEXT: arith.subf %{{.+}}, %[[MV]]
// CHECK-NEXT: arith.mulf
// CHECK: math.sqrt
// CHECK: memref.store {{.+}} : memref<4xf32>
// CHECK: memref.store {{.+}} : memref<4xf32>
// The normalizing pass fetches the next row into cache (the last row
// itself), one prefetch per 16 elements, while it loads this row.
// CHECK: %[[AFTER:.+]] = arith.addi %[[ROW]], %c1
// CHECK: %[[LASTROW:.+]] = arith.subi %c4, %c1
// CHECK: %[[NEXT:.+]] = arith.minui %[[AFTER]], %[[LASTROW]] : index
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %c16
// CHECK-NEXT: memref.prefetch %[[XR:.+]][%[[NEXT]], %[[J]]], read, locality<3>, data : memref<4x1000xf32>
// CHECK-NEXT: vector.load %[[XR]][%[[ROW]], %[[J]]] : memref<4x1000xf32>, vector<16xf32>
// CHECK: vector.store {{.+}} : memref<4x1000xf32>, vector<16xf32>
// CHECK: vector.store {{.+}} : memref<4x1000xf32>, vector<8xf32>
// CHECK: bufferization.to_tensor %[[Y]] restrict writable
// CHECK: bufferization.to_tensor %[[MEAN]] restrict writable
// CHECK: bufferization.to_tensor %[[RSTD]] restrict writable
// CHECK-NOT: nf.layer_norm
func.func @layer_norm_rows(%x: tensor<4x1000xf32>) -> (tensor<4x1000xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4x1000xf32>) -> (tensor<4x1000xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y, %m, %r : tensor<4x1000xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}

// -----

// f16 data is widened to f32 on load and narrowed on store; an f32 scale
// is read as is.
// CHECK-LABEL: func.func @rms_norm_f16
// CHECK: scf.parallel
// CHECK: vector.load {{.+}} : memref<16x4096xf16>, vector<8xf16>
// CHECK: arith.extf {{.+}} : vector<8xf16> to vector<8xf32>
// CHECK: vector.load {{.+}} : memref<4096xf32>, vector<8xf32>
// CHECK: arith.truncf {{.+}} : vector<8xf32> to vector<8xf16>
// CHECK: vector.store {{.+}} : memref<16x4096xf16>, vector<8xf16>
func.func @rms_norm_f16(%x: tensor<16x4096xf16>, %s: tensor<4096xf32>) -> tensor<16x4096xf16> {
  %y, %r = nf.rms_norm %x scale %s {axis = 1 : i64} : (tensor<16x4096xf16>, tensor<4096xf32>) -> (tensor<16x4096xf16>, tensor<16x1xf32>)
  return %y : tensor<16x4096xf16>
}

// -----

// Pointwise ops run over the flattened tensor in parallel chunks. GELU's
// tanh form is, in f32, x / (1 + 2^t) with t = x (k0 + k1 x^2): 2^t is
// 2^n, n = round(t) made in the exponent bits, times a degree-7
// polynomial of t - n, t clamped to [-126, 128] first (a NaN to 128).
// CHECK-LABEL: func.func @gelu_tanh
// CHECK: memref.reinterpret_cast {{.+}} to offset: [0], sizes: [1000], strides: [1]
// CHECK: scf.parallel
// CHECK: %[[X:.+]] = vector.load {{.+}} : memref<1000xf32>, vector<8xf32>
// CHECK: %[[X2:.+]] = arith.mulf %[[X]], %[[X]] : vector<8xf32>
// CHECK: %[[K1:.+]] = arith.constant dense<-0.102943242> : vector<8xf32>
// CHECK: %[[K0:.+]] = arith.constant dense<-2.30220819> : vector<8xf32>
// CHECK: %[[P:.+]] = math.fma %[[X2]], %[[K1]], %[[K0]] : vector<8xf32>
// CHECK: %[[T:.+]] = arith.mulf %[[X]], %[[P]] : vector<8xf32>
// CHECK: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : vector<8xf32>
// CHECK: %[[HI:.+]] = arith.constant dense<1.280000e+02> : vector<8xf32>
// CHECK: %[[BELOW:.+]] = arith.cmpf olt, %[[T]], %[[HI]] : vector<8xf32>
// CHECK: %[[T1:.+]] = arith.select %[[BELOW]], %[[T]], %[[HI]]
// CHECK: %[[LO:.+]] = arith.constant dense<-1.260000e+02> : vector<8xf32>
// CHECK: %[[ABOVE:.+]] = arith.cmpf ogt, %[[T1]], %[[LO]] : vector<8xf32>
// CHECK: %[[T2:.+]] = arith.select %[[ABOVE]], %[[T1]], %[[LO]]
// CHECK: %[[N:.+]] = math.roundeven %[[T2]] : vector<8xf32>
// CHECK: %[[F:.+]] = arith.subf %[[T2]], %[[N]] : vector<8xf32>
// CHECK: arith.constant dense<1.52527336E-5> : vector<8xf32>
// CHECK-COUNT-6: math.fma %{{.+}}, %[[F]], %{{.+}} : vector<8xf32>
// CHECK: %[[C0:.+]] = arith.constant dense<1.000000e+00> : vector<8xf32>
// CHECK: %[[PF:.+]] = math.fma %{{.+}}, %[[F]], %[[C0]] : vector<8xf32>
// CHECK: %[[NI:.+]] = arith.fptosi %[[N]] : vector<8xf32> to vector<8xi32>
// CHECK: %[[BIAS:.+]] = arith.constant dense<127> : vector<8xi32>
// CHECK: %[[BIASED:.+]] = arith.addi %[[NI]], %[[BIAS]] : vector<8xi32>
// CHECK: %[[SHIFT:.+]] = arith.constant dense<23> : vector<8xi32>
// CHECK: %[[BITS:.+]] = arith.shli %[[BIASED]], %[[SHIFT]] : vector<8xi32>
// CHECK: %[[SCALE:.+]] = arith.bitcast %[[BITS]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[E:.+]] = arith.mulf %[[PF]], %[[SCALE]] : vector<8xf32>
// CHECK: %[[DEN:.+]] = arith.addf %[[ONE]], %[[E]] : vector<8xf32>
// CHECK: %[[Y:.+]] = arith.divf %[[X]], %[[DEN]] : vector<8xf32>
// CHECK: vector.store %[[Y]]
// CHECK: math.roundeven {{.+}} : f32
func.func @gelu_tanh(%x: tensor<10x100xf32>) -> tensor<10x100xf32> {
  %0 = nf.gelu %x {approximate = #nf.approximation<tanh>} : tensor<10x100xf32>
  return %0 : tensor<10x100xf32>
}

// -----

// GELU's erf form keeps math.erf; SiLU is x / (1 + 2^(-x log2(e))).
// CHECK-LABEL: func.func @gelu_exact_and_silu
// CHECK: math.erf {{.+}} : vector<8xf32>
// CHECK: math.roundeven {{.+}} : vector<8xf32>
func.func @gelu_exact_and_silu(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = nf.gelu %x : tensor<64xf32>
  %1 = nf.silu %0 : tensor<64xf32>
  return %1 : tensor<64xf32>
}

// -----

// Channels-first bias_add: rows of H*W elements share one bias value.
// CHECK-LABEL: func.func @bias_add_nchw
// CHECK: memref.reinterpret_cast {{.+}} sizes: [6, 25]
// CHECK: scf.parallel (%[[R:.+]]) =
// CHECK: %[[C:.+]] = arith.remui %[[R]]
// CHECK: %[[B:.+]] = memref.load {{.+}}[%[[C]]] : memref<3xf32>
// CHECK: vector.broadcast %[[B]] : f32 to vector<8xf32>
func.func @bias_add_nchw(%x: tensor<2x3x5x5xf32>, %b: tensor<3xf32>) -> tensor<2x3x5x5xf32> {
  %0 = nf.bias_add %x, %b {layout = #nf.layout<nchw>} : tensor<2x3x5x5xf32>, tensor<3xf32>
  return %0 : tensor<2x3x5x5xf32>
}

// -----

// Channels-last bias_add: a vector of biases along each row of C.
// CHECK-LABEL: func.func @bias_add_nhwc
// CHECK: memref.reinterpret_cast {{.+}} sizes: [50, 64]
// CHECK: vector.load {{.+}} : memref<64xbf16>, vector<8xbf16>
func.func @bias_add_nhwc(%x: tensor<2x5x5x64xbf16>, %b: tensor<64xbf16>) -> tensor<2x5x5x64xbf16> {
  %0 = nf.bias_add %x, %b {layout = #nf.layout<nhwc>} : tensor<2x5x5x64xbf16>, tensor<64xbf16>
  return %0 : tensor<2x5x5x64xbf16>
}

// -----

// bf16 results round to nearest even in integer arithmetic. A NaN becomes
// the quiet NaN on the f32 bits, before rounding: no select of bf16 values
// (which LLVM scalarizes on x86 without AVX512-BF16).
// CHECK-LABEL: func.func @relu_bf16_rounding
// CHECK: scf.for
// CHECK: %[[Y:.+]] = arith.maximumf {{.+}} : vector<8xf32>
// CHECK: %[[NAN:.+]] = arith.cmpf uno, %[[Y]], %[[Y]] : vector<8xf32>
// CHECK: %[[QNAN:.+]] = arith.constant dense<2143289344> : vector<8xi32>
// CHECK: %[[BITS:.+]] = arith.bitcast %[[Y]] : vector<8xf32> to vector<8xi32>
// CHECK: %[[SEL:.+]] = arith.select %[[NAN]], %[[QNAN]], %[[BITS]] : vector<8xi1>, vector<8xi32>
// Adding 0x7FFF plus the lowest kept bit (bit 16), as 0x8000 less one
// where that bit is clear.
// CHECK: %[[BIT16:.+]] = arith.constant dense<65536> : vector<8xi32>
// CHECK: %[[KEPT:.+]] = arith.andi %[[SEL]], %[[BIT16]]
// CHECK: %[[ZERO:.+]] = arith.constant dense<0> : vector<8xi32>
// CHECK: %[[CLEAR:.+]] = arith.cmpi eq, %[[KEPT]], %[[ZERO]] : vector<8xi32>
// CHECK: %[[MINUS:.+]] = arith.extsi %[[CLEAR]] : vector<8xi1> to vector<8xi32>
// CHECK: %[[C8000:.+]] = arith.constant dense<32768> : vector<8xi32>
// CHECK: %[[HALF:.+]] = arith.addi %[[SEL]], %[[C8000]]
// CHECK: %[[SUM:.+]] = arith.addi %[[HALF]], %[[MINUS]]
// CHECK: %[[HIGH:.+]] = arith.shrui %[[SUM]], %{{.+}} : vector<8xi32>
// CHECK: %[[NARROW:.+]] = arith.trunci %[[HIGH]] : vector<8xi32> to vector<8xi16>
// CHECK: %[[R:.+]] = arith.bitcast %[[NARROW]] : vector<8xi16> to vector<8xbf16>
// CHECK-NOT: arith.select
// CHECK: vector.store %[[R]]
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @relu_bf16_rounding(%x: tensor<64xbf16>) -> tensor<64xbf16> {
  %0 = nf.relu %x : tensor<64xbf16>
  return %0 : tensor<64xbf16>
}
