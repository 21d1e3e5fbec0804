// Outputs of at least 16 MiB whose rows are whole vectors are written with
// non-temporal vector stores when their base pointer is 16-byte aligned at
// run time (an scf.if picks that version or the plain one); each parallel
// iteration of the streaming version writes about 64 KiB and ends with a
// fence. Smaller outputs, and rows that end in a partial vector, keep
// plain stores only.
// RUN: nf-opt %s -split-input-file --pass-pipeline='builtin.module(nf-lower-to-loops{vector-width=8})' | FileCheck %s

// 4096 rows of 1024 f32: 16 MiB, 16 rows (64 KiB) per parallel iteration.
// The function is marked for nf-align-streaming-stores.
// CHECK-LABEL: func.func @layer_norm_16_mib
// CHECK-SAME: attributes {nf.streaming_stores}
// CHECK: %[[Y:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4096x1024xf32>
// CHECK: %[[YV:.+]] = memref.reinterpret_cast %[[Y]]
// The address of the first element: base pointer + offset * 4 bytes.
// CHECK: %[[PTR:.+]] = memref.extract_aligned_pointer_as_index %[[YV]]
// CHECK: %{{.+}}, %[[OFF:.+]], %{{.+}}, %{{.+}} = memref.extract_strided_metadata %[[YV]]
// CHECK: %[[C4:.+]] = arith.constant 4 : index
// CHECK: %[[BYTES:.+]] = arith.muli %[[OFF]], %[[C4]] : index
// CHECK: %[[FIRST:.+]] = arith.addi %[[PTR]], %[[BYTES]] : index
// CHECK: %[[C16:.+]] = arith.constant 16 : index
// CHECK: %[[REM:.+]] = arith.remui %[[FIRST]], %[[C16]] : index
// CHECK: %[[OK:.+]] = arith.cmpi eq, %[[REM]], %{{.+}} : index
// CHECK: scf.if %[[OK]] {
// CHECK: %[[BLOCK:.+]] = arith.constant 16 : index
// CHECK: scf.parallel (%[[R0:.+]]) = (%{{.+}}) to (%{{.+}}) step (%[[BLOCK]])
// CHECK: scf.for %[[ROW:.+]] = %[[R0]] to
// CHECK: vector.store %{{.+}}, %[[YV]][%[[ROW]], %{{.+}}] {nontemporal = true} : memref<4096x1024xf32>, vector<8xf32>
// The scalar tail of a row (empty here) stores plainly.
// CHECK: memref.store %{{.+}}, %[[YV]][%[[ROW]], %{{.+}}] : memref<4096x1024xf32>
// CHECK: llvm.fence seq_cst
// CHECK: scf.reduce
// CHECK: } else {
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%{{.+}}) step (%{{.+}})
// CHECK-NOT: nontemporal
// CHECK-NOT: llvm.fence
// CHECK: return
func.func @layer_norm_16_mib(%x: tensor<4096x1024xf32>)
    -> (tensor<4096x1024xf32>, tensor<4096x1xf32>, tensor<4096x1xf32>) {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64}
      : (tensor<4096x1024xf32>) -> (tensor<4096x1024xf32>, tensor<4096x1xf32>, tensor<4096x1xf32>)
  return %y, %m, %r : tensor<4096x1024xf32>, tensor<4096x1xf32>, tensor<4096x1xf32>
}

// -----

// One row fewer: just under 16 MiB.
// CHECK-LABEL: func.func @layer_norm_under_16_mib
// CHECK-NOT: nf.streaming_stores
// CHECK-NOT: extract_aligned_pointer
// CHECK-NOT: nontemporal
// CHECK: return
func.func @layer_norm_under_16_mib(%x: tensor<4095x1024xf32>)
    -> (tensor<4095x1024xf32>, tensor<4095x1xf32>, tensor<4095x1xf32>) {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64}
      : (tensor<4095x1024xf32>) -> (tensor<4095x1024xf32>, tensor<4095x1xf32>, tensor<4095x1xf32>)
  return %y, %m, %r : tensor<4095x1024xf32>, tensor<4095x1xf32>, tensor<4095x1xf32>
}

// -----

// Rows of 1028 f32 (not whole vectors of 8): the vector stores of a row
// after the first would not be aligned.
// CHECK-LABEL: func.func @rms_norm_rows_of_partial_vectors
// CHECK-NOT: nontemporal
// CHECK: return
func.func @rms_norm_rows_of_partial_vectors(%x: tensor<4096x1028xf32>)
    -> (tensor<4096x1028xf32>, tensor<4096x1xf32>) {
  %y, %r = nf.rms_norm %x {axis = 1 : i64}
      : (tensor<4096x1028xf32>) -> (tensor<4096x1028xf32>, tensor<4096x1xf32>)
  return %y, %r : tensor<4096x1028xf32>, tensor<4096x1xf32>
}

// -----

// Dynamic shapes: the size is unknown at compile time.
// CHECK-LABEL: func.func @layer_norm_dynamic_rows
// CHECK-NOT: nontemporal
// CHECK: return
func.func @layer_norm_dynamic_rows(%x: tensor<?x1024xf32>)
    -> (tensor<?x1024xf32>, tensor<?x1xf32>, tensor<?x1xf32>) {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64}
      : (tensor<?x1024xf32>) -> (tensor<?x1024xf32>, tensor<?x1xf32>, tensor<?x1xf32>)
  return %y, %m, %r : tensor<?x1024xf32>, tensor<?x1xf32>, tensor<?x1xf32>
}

// -----

// GroupNorm NHWC on 8 x 64 x 64 x 256 f16 (16 MiB), slices of images per
// thread, pipelined: each image's map pass writes chunks of 128 positions
// (64 KiB) around the cache, each followed by the next image's moments of
// those positions and then a fence, so the stores drain while the moments
// are computed.
// CHECK-LABEL: func.func @group_norm_nhwc_16_mib
// CHECK: scf.parallel
// CHECK: %[[HAS:.+]] = arith.cmpi ult
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: scf.if
// CHECK: %[[CHUNK:.+]] = arith.constant 128 : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[CHUNKS:.+]] step
// CHECK: vector.store {{.+}} {nontemporal = true} : memref<8x4096x256xf16>, vector<8xf16>
// CHECK: scf.if %[[HAS]] {
// CHECK: math.fma
// CHECK: llvm.fence seq_cst
// CHECK: } else {
// CHECK-NOT: nontemporal
// CHECK: return
func.func @group_norm_nhwc_16_mib(%x: tensor<8x64x64x256xf16>)
    -> (tensor<8x64x64x256xf16>, tensor<8x32xf32>, tensor<8x32xf32>) {
  %y, %m, %r = nf.group_norm %x {num_groups = 32 : i64, layout = #nf.layout<nhwc>}
      : (tensor<8x64x64x256xf16>) -> (tensor<8x64x64x256xf16>, tensor<8x32xf32>, tensor<8x32xf32>)
  return %y, %m, %r : tensor<8x64x64x256xf16>, tensor<8x32xf32>, tensor<8x32xf32>
}

// -----

// Pointwise ops: chunks of 16384 elements (64 KiB of f32) start at
// multiples of 16384, so every chunk's vector stores are aligned; a result
// of 16 MiB or more is written around the cache, a fence closing each chunk.
// CHECK-LABEL: func.func @gelu_16_mib
// CHECK: %[[Y:.+]] = memref.reinterpret_cast %alloc
// CHECK: %[[CHUNK:.+]] = arith.constant 16384 : index
// CHECK: memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK: scf.if
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%{{.+}}) step (%[[CHUNK]])
// CHECK: vector.store %{{.+}}, %[[Y]][%{{.+}}] {nontemporal = true} : memref<4194304xf32>, vector<8xf32>
// CHECK: llvm.fence seq_cst
// CHECK: } else {
// CHECK-NOT: nontemporal
// CHECK: return
func.func @gelu_16_mib(%x: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  %y = nf.gelu %x {approximate = #nf.approximation<tanh>} : tensor<4096x1024xf32>
  return %y : tensor<4096x1024xf32>
}

// -----

// An odd element count: the vector stores are aligned all the same, the
// last element is stored plainly.
// CHECK-LABEL: func.func @relu_odd_16_mib
// CHECK: vector.store {{.+}} {nontemporal = true} : memref<4194307xf32>, vector<8xf32>
// CHECK: memref.store {{.+}} : memref<4194307xf32>
// CHECK: llvm.fence seq_cst
func.func @relu_odd_16_mib(%x: tensor<4194307xf32>) -> tensor<4194307xf32> {
  %y = nf.relu %x : tensor<4194307xf32>
  return %y : tensor<4194307xf32>
}

// -----

// 8 MiB: plain stores.
// CHECK-LABEL: func.func @silu_8_mib
// CHECK-NOT: nontemporal
// CHECK: return
func.func @silu_8_mib(%x: tensor<2048x1024xf32>) -> tensor<2048x1024xf32> {
  %y = nf.silu %x : tensor<2048x1024xf32>
  return %y : tensor<2048x1024xf32>
}

// -----

// Only what the function returns is streamed: the relu's result is read
// back right away by the gelu (and its buffer, freshly allocated, is in
// cache from being zeroed), so its stores stay plain.
// CHECK-LABEL: func.func @intermediate_stays_cached
// CHECK: arith.maximumf
// CHECK-NOT: nontemporal
// CHECK: math.roundeven
// CHECK: vector.store {{.+}} {nontemporal = true}
func.func @intermediate_stays_cached(%x: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  %r = nf.relu %x : tensor<4096x1024xf32>
  %y = nf.gelu %r {approximate = #nf.approximation<tanh>} : tensor<4096x1024xf32>
  return %y : tensor<4096x1024xf32>
}
