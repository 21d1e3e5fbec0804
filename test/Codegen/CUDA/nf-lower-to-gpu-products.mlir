// matmul, conv2d and the conv2d gradients become one tiled product kernel
// each (LowerProducts.cpp; the SIMT body in LowerSimtProducts.cpp): K
// tiles of A and B through two workgroup stages (the next one loaded into
// registers while the current one runs), fused multiply-adds into
// per-thread sums read 16 bytes at a time, operand elements gathered by
// index arithmetic (zero in the padding), the result stored where it is
// inside. The schedule (Schedule.cpp) takes 128x128 tiles of 8x8 per thread
// where they make a wave, 64x64 of 4x4, or 32x32 of 2x2 for small results.
// This SIMT kernel serves f32 and f64, and f16/bf16 before sm_80; f16/bf16
// on sm_80 and newer are in nf-lower-to-gpu-tensor-core.mlir.
// RUN: nf-opt %s --nf-lower-to-gpu=arch=sm_75 | FileCheck %s
// RUN: nf-opt %s --nf-fuse-pipeline --nf-lower-to-gpu | FileCheck %s --check-prefix=FUSED

// CHECK-LABEL: func.func @matmul_256x300x128
// 4 x 2 tiles of 64 x 64: 8 blocks of 256 threads.
// CHECK: %[[BLOCKS:.+]] = arith.constant 8 : index
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: %[[THREADS:.+]] = arith.constant 256 : index
// CHECK: gpu.launch_func @nf_kernels::@matmul_256x300x128_matmul blocks in (%[[BLOCKS]], %{{.+}}, %{{.+}}) threads in (%[[THREADS]],
func.func @matmul_256x300x128(%a: tensor<256x300xf16>, %b: tensor<300x128xf16>) -> tensor<256x128xf16> {
  %c = nf.matmul %a, %b : tensor<256x300xf16>, tensor<300x128xf16> -> tensor<256x128xf16>
  return %c : tensor<256x128xf16>
}

// Dynamic sizes stay dynamic: the host reads M off the buffer, computes
// the grid (none for no tiles) and passes M to the kernel, whose static
// sizes stay constants.
// CHECK-LABEL: func.func @matmul_of_dynamic_rows
// CHECK: %[[M:.+]] = memref.dim %{{.+}}, %c0 : memref<?x64xf32>
// CHECK: memref.alloc(%[[M]]) : memref<?x32xf32>
// CHECK: %[[TILES:.+]] = arith.ceildivui %[[M]], %{{.+}} : index
// CHECK: %[[GRID:.+]] = arith.minui %[[TILES]], %{{.+}} : index
// CHECK: %[[ANY:.+]] = arith.cmpi ne, %[[TILES]]
// CHECK: scf.if %[[ANY]] {
// CHECK: gpu.launch_func @nf_kernels::@matmul_of_dynamic_rows_matmul blocks in (%[[GRID]], {{.+}} args({{.+}}, %[[M]] : index)
func.func @matmul_of_dynamic_rows(%a: tensor<?x64xf32>, %b: tensor<64x32xf32>) -> tensor<?x32xf32> {
  %c = nf.matmul %a, %b : tensor<?x64xf32>, tensor<64x32xf32> -> tensor<?x32xf32>
  return %c : tensor<?x32xf32>
}

// CHECK-LABEL: func.func @small_f64_matmul
// CHECK: gpu.launch_func @nf_kernels::@small_f64_matmul_matmul
func.func @small_f64_matmul(%a: tensor<7x33xf64>, %b: tensor<33x45xf64>) -> tensor<7x45xf64> {
  %c = nf.matmul %a, %b : tensor<7x33xf64>, tensor<33x45xf64> -> tensor<7x45xf64>
  return %c : tensor<7x45xf64>
}

// CHECK-LABEL: func.func @conv_nhwc_stride2
// CHECK: gpu.launch_func @nf_kernels::@conv_nhwc_stride2_conv2d
func.func @conv_nhwc_stride2(%x: tensor<2x9x7x5xf32>, %w: tensor<6x3x3x5xf32>) -> tensor<2x5x4x6xf32> {
  %y = nf.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 2>, layout = #nf.layout<nhwc>} : tensor<2x9x7x5xf32>, tensor<6x3x3x5xf32> -> tensor<2x5x4x6xf32>
  return %y : tensor<2x5x4x6xf32>
}

// CHECK-LABEL: func.func @conv_grads
// CHECK: gpu.launch_func @nf_kernels::@conv_grads_conv2d_backprop_input
// CHECK: gpu.launch_func @nf_kernels::@conv_grads_conv2d_backprop_filter
func.func @conv_grads(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %dy: tensor<1x4x6x6xf32>) -> (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) {
  %dx = nf.conv2d_backprop_input %dy, %w : tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
  %dw = nf.conv2d_backprop_filter %x, %dy : tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32> -> tensor<4x3x3x3xf32>
  return %dx, %dw : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
}

// The kernels, in the order they were created.
// CHECK-LABEL: gpu.func @matmul_256x300x128_matmul
// Two stages of A (8 x 64) and of B (8 x 64) in f32.
// CHECK-SAME: workgroup(%[[AT:.+]] : memref<1024xf32, #gpu.address_space<workgroup>>, %[[BT:.+]] : memref<1024xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME: nf.schedule = "tiled-product tile=64x64x8 thread=4x4"
// Blocks loop over the tiles. K tile 0: A's rows (K = 300 consecutive) and
// B's rows (N = 128) in chunks of 4 f16, each one 8-byte load widened to
// f32; A's chunks run along K, so they go to the K-major stage an element
// at a time, B's as one 16-byte store.
// CHECK: scf.for
// CHECK: vector.load %{{.+}} : memref<?xf16>, vector<4xf16>
// CHECK-COUNT-4: arith.extf
// CHECK-COUNT-4: memref.store {{.+}}, %[[AT]]
// CHECK: vector.load %{{.+}} : memref<?xf16>, vector<4xf16>
// CHECK: vector.store {{.+}}, %[[BT]][%{{.+}}] : memref<1024xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: gpu.barrier
// The K loop, 38 tiles of 8: the next tile's chunks are loaded first; then
// per K step a 16-byte read of A and of B and 16 fused multiply-adds; then
// the chunks go to the other stage, and one barrier.
// CHECK: scf.for {{.+}} to %c38 step {{.+}} iter_args
// CHECK: vector.load {{.+}} : memref<?xf16>, vector<4xf16>
// CHECK: vector.load {{.+}} : memref<?xf16>, vector<4xf16>
// CHECK: scf.for {{.+}} iter_args
// CHECK: vector.load %[[AT]][%{{.+}}] : memref<1024xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: vector.load %[[BT]][%{{.+}}] : memref<1024xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-16: math.fma {{.+}} : f32
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-4: memref.store {{.+}}, %[[AT]]
// CHECK: vector.store {{.+}}, %[[BT]]
// CHECK: gpu.barrier
// A thread's four consecutive columns of a row, narrowed, as one store.
// CHECK-COUNT-4: arith.truncf
// CHECK: vector.store {{.+}} : memref<?xf16>, vector<4xf16>

// The kernel of the dynamic matmul: M is its last argument; K stays 64,
// 8 K tiles.
// CHECK-LABEL: gpu.func @matmul_of_dynamic_rows_matmul
// CHECK-SAME: (%{{.+}}: memref<?xf32>, %{{.+}}: memref<?xf32>, %{{.+}}: memref<?xf32>, %[[KM:[^:]+]]: index)
// CHECK: arith.ceildivui %[[KM]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %c8 step %{{.+}} iter_args

// CHECK-LABEL: gpu.func @small_f64_matmul_matmul
// CHECK-SAME: memref<512xf64, #gpu.address_space<workgroup>>
// CHECK-SAME: nf.schedule = "tiled-product tile=32x32x8 thread=2x2"
// CHECK-COUNT-4: math.fma {{.+}} : f64

// The padding: input coordinates checked against 0 and the input size.
// CHECK-LABEL: gpu.func @conv_nhwc_stride2_conv2d
// CHECK-SAME: nf.schedule = "tiled-product tile=32x32x8 thread=2x2"
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
// CHECK: scf.if

// The transposed taps: only those that fall on a stride.
// CHECK-LABEL: gpu.func @conv_grads_conv2d_backprop_input
// CHECK-LABEL: gpu.func @conv_grads_conv2d_backprop_filter

// Fused: the bias and GELU applied to each sum, one launch for the group.
// FUSED-LABEL: func.func @matmul_bias_gelu
// FUSED: gpu.launch_func @nf_kernels::@matmul_bias_gelu_matmul_epilogue
// FUSED-NOT: gpu.launch_func
// FUSED: return
// FUSED-LABEL: gpu.func @matmul_bias_gelu_matmul_epilogue
// FUSED: math.fma
// FUSED: gpu.barrier
// FUSED: arith.addf
// FUSED: math.exp2
// FUSED: memref.store
func.func @matmul_bias_gelu(%a: tensor<37x45xf32>, %b: tensor<45x70xf32>, %c: tensor<70xf32>) -> tensor<37x70xf32> {
  %p = nf.matmul %a, %b : tensor<37x45xf32>, tensor<45x70xf32> -> tensor<37x70xf32>
  %q = nf.bias_add %p, %c {layout = #nf.layout<nhwc>} : tensor<37x70xf32>, tensor<70xf32>
  %z = nf.gelu %q {approximate = #nf.approximation<tanh>} : tensor<37x70xf32>
  return %z : tensor<37x70xf32>
}
