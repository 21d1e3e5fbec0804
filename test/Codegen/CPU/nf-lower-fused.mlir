// On the CPU an nf.fused whose body is a forward norm with pointwise ops
// around it, a matmul or NHWC conv2d with pointwise ops after it, or an
// activation gradient summed by bias_add_grad, lowers to the
// producer's one loop nest: the prologue runs on x as it is loaded, the
// epilogue on y before it is stored, and no intermediate tensor gets a
// buffer. Any other body is inlined, its ops lowered one after the other.
// RUN: nf-opt %s -split-input-file --pass-pipeline='builtin.module(nf-lower-to-loops{vector-width=4})' | FileCheck %s

// The store of y comes after the gelu math on the normalized value, in the
// one scf.parallel; the only buffers are y, mean and rstd.
// CHECK-LABEL: func.func @layer_norm_gelu
// CHECK-SAME: (%[[X:.+]]: tensor<3x8xf32>)
// CHECK-NOT: nf.
// CHECK: %[[XB:.+]] = bufferization.to_memref %[[X]] read_only
// CHECK: %[[XV:.+]] = memref.reinterpret_cast %[[XB]]
// CHECK: %[[Y:.+]] = memref.alloc() {alignment = 64 : i64} : memref<3x8xf32>
// CHECK: %[[YV:.+]] = memref.reinterpret_cast %[[Y]]
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<3x1xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<3x1xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: scf.parallel
// CHECK: scf.parallel
// CHECK: math.sqrt
// CHECK: %[[R64:.+]] = arith.divf {{.+}} : f64
// CHECK-NEXT: %[[RSTD:.+]] = arith.truncf %[[R64]] : f64 to f32
// CHECK: scf.for
// CHECK: %[[LOAD:.+]] = vector.load %[[XV]]
// CHECK: %[[D:.+]] = arith.subf %[[LOAD]]
// CHECK: %[[S:.+]] = vector.broadcast %[[RSTD]]
// CHECK: %[[N:.+]] = arith.mulf %[[D]], %[[S]] : vector<4xf32>
// CHECK: %[[N2:.+]] = arith.mulf %[[N]], %[[N]] : vector<4xf32>
// CHECK: %[[P:.+]] = math.fma %[[N2]], %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK: %[[EXPONENT:.+]] = arith.mulf %[[N]], %[[P]] : vector<4xf32>
// CHECK: math.roundeven
// CHECK: %[[DEN:.+]] = arith.addf %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK: %[[GELU:.+]] = arith.divf %[[N]], %[[DEN]] : vector<4xf32>
// CHECK-NEXT: vector.store %[[GELU]], %[[YV]]
// CHECK: math.roundeven {{.+}} : f32
// CHECK: memref.store %{{.+}}, %[[YV]]
// CHECK: scf.reduce
// CHECK-NOT: scf.parallel
// CHECK-NOT: memref.alloc
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[Y]]
// CHECK: return %[[T]]
func.func @layer_norm_gelu(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %0 = nf.fused (%x) : (tensor<3x8xf32>) -> tensor<3x8xf32> {
  ^bb0(%a: tensor<3x8xf32>):
    %1:3 = nf.layer_norm %a {axis = 1 : i64} : (tensor<3x8xf32>) -> (tensor<3x8xf32>, tensor<3x1xf32>, tensor<3x1xf32>)
    %2 = nf.gelu %1#0 {approximate = #nf.approximation<tanh>} : tensor<3x8xf32>
    nf.yield %2 : tensor<3x8xf32>
  }
  return %0 : tensor<3x8xf32>
}

// -----

// A yielded statistic is still written; the bias is loaded by column.
// CHECK-LABEL: func.func @layer_norm_bias_relu
// CHECK-SAME: (%[[X:.+]]: tensor<3x8xf32>, %[[C:.+]]: tensor<8xf32>)
// CHECK: %[[Y:.+]] = memref.alloc() {alignment = 64 : i64} : memref<3x8xf32>
// CHECK: %[[CB:.+]] = bufferization.to_memref %[[C]] read_only
// CHECK: %[[MEAN:.+]] = memref.alloc() {alignment = 64 : i64} : memref<3x1xf32>
// CHECK: %[[MEANV:.+]] = memref.reinterpret_cast %[[MEAN]]
// CHECK: scf.parallel (%[[ROW:.+]]) =
// CHECK: memref.store %{{.+}}, %[[MEANV]][%[[ROW]]]
// CHECK: scf.for %[[J:.+]] =
// CHECK: %[[BIAS:.+]] = vector.load %[[CB]][%[[J]]] : memref<8xf32>, vector<4xf32>
// CHECK: %[[B:.+]] = arith.addf %{{.+}}, %[[BIAS]] : vector<4xf32>
// CHECK: %[[R:.+]] = arith.maximumf %[[B]], %{{.+}} : vector<4xf32>
// CHECK: vector.store %[[R]]
// CHECK-NOT: scf.parallel
// CHECK: %[[YT:.+]] = bufferization.to_tensor %[[Y]]
// CHECK: %[[MT:.+]] = bufferization.to_tensor %[[MEAN]]
// CHECK: return %[[YT]], %[[MT]]
func.func @layer_norm_bias_relu(%x: tensor<3x8xf32>, %c: tensor<8xf32>) -> (tensor<3x8xf32>, tensor<3x1xf32>) {
  %0:2 = nf.fused (%x, %c) : (tensor<3x8xf32>, tensor<8xf32>) -> (tensor<3x8xf32>, tensor<3x1xf32>) {
  ^bb0(%a: tensor<3x8xf32>, %bias: tensor<8xf32>):
    %1:3 = nf.layer_norm %a {axis = 1 : i64} : (tensor<3x8xf32>) -> (tensor<3x8xf32>, tensor<3x1xf32>, tensor<3x1xf32>)
    %2 = nf.bias_add %1#0, %bias {layout = #nf.layout<nhwc>} : tensor<3x8xf32>, tensor<8xf32>
    %3 = nf.relu %2 : tensor<3x8xf32>
    nf.yield %3, %1#1 : tensor<3x8xf32>, tensor<3x1xf32>
  }
  return %0#0, %0#1 : tensor<3x8xf32>, tensor<3x1xf32>
}

// -----

// The residual add runs where the norm loads x, rounded to f16 as the
// unfused add would store it; x + r gets no buffer.
// CHECK-LABEL: func.func @residual_layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<3x8xf16>, %[[R:.+]]: tensor<3x8xf16>)
// CHECK: %[[XB:.+]] = bufferization.to_memref %[[X]] read_only
// CHECK: %[[XV:.+]] = memref.reinterpret_cast %[[XB]]
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<3x8xf16>
// CHECK: %[[RB:.+]] = bufferization.to_memref %[[R]] read_only
// CHECK: %[[RV:.+]] = memref.reinterpret_cast %[[RB]]
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<3x1xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<3x1xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%[[ROW:.+]]) =
// CHECK: %[[XL:.+]] = vector.load %[[XV]][%[[ROW]], %[[J:.+]]] : memref<3x8xf16>, vector<4xf16>
// CHECK: %[[XE:.+]] = arith.extf %[[XL]]
// CHECK: %[[RL:.+]] = vector.load %[[RV]][%[[ROW]], %[[J]]] : memref<3x8xf16>, vector<4xf16>
// CHECK: %[[RE:.+]] = arith.extf %[[RL]]
// CHECK: %[[SUM:.+]] = arith.addf %[[XE]], %[[RE]] : vector<4xf32>
// CHECK: %[[H:.+]] = arith.truncf %[[SUM]] : vector<4xf32> to vector<4xf16>
// CHECK: %[[HE:.+]] = arith.extf %[[H]] : vector<4xf16> to vector<4xf32>
// CHECK: arith.subf %[[HE]], %{{.+}} : vector<4xf32>
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @residual_layer_norm(%x: tensor<3x8xf16>, %r: tensor<3x8xf16>) -> tensor<3x8xf16> {
  %0 = nf.fused (%x, %r) : (tensor<3x8xf16>, tensor<3x8xf16>) -> tensor<3x8xf16> {
  ^bb0(%a: tensor<3x8xf16>, %b: tensor<3x8xf16>):
    %h = nf.add %a, %b : tensor<3x8xf16>
    %1:3 = nf.layer_norm %h {axis = 1 : i64} : (tensor<3x8xf16>) -> (tensor<3x8xf16>, tensor<3x1xf32>, tensor<3x1xf32>)
    nf.yield %1#0 : tensor<3x8xf16>
  }
  return %0 : tensor<3x8xf16>
}

// -----

// GroupNorm NHWC + SiLU: the SiLU runs in the normalizing pass over
// channels; the only full-size buffer is the result.
// CHECK-LABEL: func.func @group_norm_nhwc_silu
// CHECK: %[[Y:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2x3x5x8xf32>
// CHECK: %[[YV:.+]] = memref.reinterpret_cast %[[Y]] {{.+}} to memref<2x15x8xf32>
// CHECK-NOT: memref.alloc() {{.+}} : memref<2x3x5x8xf32>
// CHECK: math.roundeven
// CHECK: %[[E:.+]] = arith.mulf %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK: %[[DEN:.+]] = arith.addf %{{.+}}, %[[E]] : vector<4xf32>
// CHECK: %[[SILU:.+]] = arith.divf %{{.+}}, %[[DEN]] : vector<4xf32>
// CHECK-NEXT: vector.store %[[SILU]], %[[YV]]
// CHECK-NOT: memref.alloc() {{.+}} : memref<2x3x5x8xf32>
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[Y]]
// CHECK: return %[[T]]
func.func @group_norm_nhwc_silu(%x: tensor<2x3x5x8xf32>) -> tensor<2x3x5x8xf32> {
  %0 = nf.fused (%x) : (tensor<2x3x5x8xf32>) -> tensor<2x3x5x8xf32> {
  ^bb0(%a: tensor<2x3x5x8xf32>):
    %1:3 = nf.group_norm %a {num_groups = 2 : i64, layout = #nf.layout<nhwc>} : (tensor<2x3x5x8xf32>) -> (tensor<2x3x5x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
    %2 = nf.silu %1#0 : tensor<2x3x5x8xf32>
    nf.yield %2 : tensor<2x3x5x8xf32>
  }
  return %0 : tensor<2x3x5x8xf32>
}

// -----

// matmul + bias + relu: applied to the sums after the k loop.
// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK-SAME: %[[C:[^:]+]]: tensor<8xf32>)
// CHECK: %[[Y:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
// CHECK-NOT: memref.alloc
// CHECK: %[[CB:.+]] = bufferization.to_memref %[[C]] read_only
// CHECK: scf.parallel
// CHECK: %[[SUMS:.+]]:4 = scf.for
// CHECK: math.fma
// CHECK: %[[BIAS:.+]] = vector.load %[[CB]]
// CHECK: %[[B:.+]] = arith.addf %[[SUMS]]#0, %[[BIAS]] : vector<4xf32>
// CHECK: %[[R:.+]] = arith.maximumf %[[B]]
// CHECK: vector.store %[[R]]
// CHECK-NOT: scf.parallel
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[Y]]
// CHECK: return %[[T]]
func.func @matmul_bias_relu(%x: tensor<4x6xf32>, %w: tensor<6x8xf32>, %c: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = nf.fused (%x, %w, %c) : (tensor<4x6xf32>, tensor<6x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x6xf32>, %k: tensor<6x8xf32>, %bias: tensor<8xf32>):
    %1 = nf.matmul %a, %k : tensor<4x6xf32>, tensor<6x8xf32> -> tensor<4x8xf32>
    %2 = nf.bias_add %1, %bias {layout = #nf.layout<nhwc>} : tensor<4x8xf32>, tensor<8xf32>
    %3 = nf.relu %2 : tensor<4x8xf32>
    nf.yield %3 : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// -----

// Not a chain (y is used twice): the body is inlined and its ops run one
// after the other, the second reading the first's buffer.
// CHECK-LABEL: func.func @layer_norm_squared_inlined
// CHECK-NOT: nf.
// CHECK: scf.parallel
// CHECK: %[[LN:.+]] = bufferization.to_tensor
// CHECK: %[[LNB:.+]] = bufferization.to_memref %[[LN]] read_only
// CHECK: scf.parallel
// CHECK: %[[SQ:.+]] = bufferization.to_tensor
// CHECK: return %[[SQ]]
func.func @layer_norm_squared_inlined(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %0 = nf.fused (%x) : (tensor<3x8xf32>) -> tensor<3x8xf32> {
  ^bb0(%a: tensor<3x8xf32>):
    %1:3 = nf.layer_norm %a {axis = 1 : i64} : (tensor<3x8xf32>) -> (tensor<3x8xf32>, tensor<3x1xf32>, tensor<3x1xf32>)
    %2 = nf.mul %1#0, %1#0 : tensor<3x8xf32>
    nf.yield %2 : tensor<3x8xf32>
  }
  return %0 : tensor<3x8xf32>
}

// -----

// A bias along a dimension the norm's loops do not index (the layer_norm
// normalizes two axes): inlined.
// CHECK-LABEL: func.func @bias_not_on_the_columns_inlined
// CHECK: scf.parallel
// CHECK: %[[LN:.+]] = bufferization.to_tensor
// CHECK: bufferization.to_memref %[[LN]] read_only
// CHECK: scf.parallel
func.func @bias_not_on_the_columns_inlined(%x: tensor<2x3x8xf32>, %c: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %0 = nf.fused (%x, %c) : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32> {
  ^bb0(%a: tensor<2x3x8xf32>, %bias: tensor<8xf32>):
    %1:3 = nf.layer_norm %a {axis = 1 : i64} : (tensor<2x3x8xf32>) -> (tensor<2x3x8xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
    %2 = nf.bias_add %1#0, %bias {layout = #nf.layout<nhwc>} : tensor<2x3x8xf32>, tensor<8xf32>
    nf.yield %2 : tensor<2x3x8xf32>
  }
  return %0 : tensor<2x3x8xf32>
}

// -----

// NHWC conv2d + bias + relu: applied to each output after its window's dot
// product; the only buffer is the result.
// CHECK-LABEL: func.func @conv_nhwc_bias_relu
// CHECK-SAME: %[[C:[^:]+]]: tensor<8xf32>)
// CHECK: %[[Y:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x4x4x8xf32>
// CHECK-NOT: memref.alloc
// CHECK: %[[CB:.+]] = bufferization.to_memref %[[C]] read_only
// CHECK: scf.parallel
// CHECK: %[[SUM:.+]] = scf.for
// CHECK: %[[BIAS:.+]] = memref.load %[[CB]][%[[O:.+]]] : memref<8xf32>
// CHECK-NEXT: %[[B:.+]] = arith.addf %[[SUM]], %[[BIAS]] : f32
// CHECK: %[[R:.+]] = arith.maximumf %[[B]]
// CHECK-NEXT: memref.store %[[R]], %[[Y]][%{{.+}}, %{{.+}}, %{{.+}}, %[[O]]]
// CHECK-NOT: scf.parallel
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[Y]]
// CHECK: return %[[T]]
func.func @conv_nhwc_bias_relu(%x: tensor<1x4x4x3xf32>, %w: tensor<8x3x3x3xf32>, %c: tensor<8xf32>) -> tensor<1x4x4x8xf32> {
  %0 = nf.fused (%x, %w, %c) : (tensor<1x4x4x3xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32> {
  ^bb0(%a: tensor<1x4x4x3xf32>, %k: tensor<8x3x3x3xf32>, %bias: tensor<8xf32>):
    %1 = nf.conv2d %a, %k {layout = #nf.layout<nhwc>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x3xf32>, tensor<8x3x3x3xf32> -> tensor<1x4x4x8xf32>
    %2 = nf.bias_add %1, %bias {layout = #nf.layout<nhwc>} : tensor<1x4x4x8xf32>, tensor<8xf32>
    %3 = nf.relu %2 : tensor<1x4x4x8xf32>
    nf.yield %3 : tensor<1x4x4x8xf32>
  }
  return %0 : tensor<1x4x4x8xf32>
}

// -----

// Backward: the GELU gradient is computed once per element, stored to its
// result and added into the bias gradient's partial sums in the same loop;
// dy is not read a second time.
// CHECK-LABEL: func.func @gelu_grad_with_bias_grad
// CHECK: %[[DG:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4x6xf32>
// CHECK: %[[DGV:.+]] = memref.reinterpret_cast %[[DG]]
// CHECK: %[[PART:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x1x6xf32>
// CHECK: scf.parallel
// CHECK: math.erf
// CHECK: vector.store %[[G:.+]], %[[DGV]]
// CHECK-NEXT: %[[P:.+]] = vector.load %[[PART]]
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[P]], %[[G]] : vector<4xf32>
// CHECK-NEXT: vector.store %[[S]], %[[PART]]
// CHECK: %[[DB:.+]] = memref.alloc() {alignment = 64 : i64} : memref<6xf32>
// CHECK: %[[DBT:.+]] = bufferization.to_tensor %[[DB]]
// CHECK: %[[DGT:.+]] = bufferization.to_tensor %[[DG]]
// CHECK: return %[[DGT]], %[[DBT]]
func.func @gelu_grad_with_bias_grad(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<6xf32>) {
  %0:2 = nf.fused (%dy, %x) : (tensor<4x6xf32>, tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<6xf32>) {
  ^bb0(%a: tensor<4x6xf32>, %b: tensor<4x6xf32>):
    %dg = nf.gelu_grad %a, %b : tensor<4x6xf32>
    %db = nf.bias_add_grad %dg {layout = #nf.layout<nhwc>} : tensor<4x6xf32> -> tensor<6xf32>
    nf.yield %dg, %db : tensor<4x6xf32>, tensor<6xf32>
  }
  return %0#0, %0#1 : tensor<4x6xf32>, tensor<6xf32>
}
