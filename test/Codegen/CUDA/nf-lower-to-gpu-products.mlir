// matmul, conv2d and the conv2d gradients become one tiled product kernel
// each (LowerProducts.cpp): tiles of A and B through workgroup memory
// between two barriers, fused multiply-adds into per-thread sums, operand
// elements gathered by index arithmetic (zero in the padding), the result
// stored where it is inside. The schedule (Schedule.cpp) takes 64x64 tiles
// of 4x4 per thread, or 32x32 of 2x2 for small results and f64. This SIMT
// kernel serves f32 and f64, and f16/bf16 before sm_80; f16/bf16 on sm_80
// and newer are in nf-lower-to-gpu-tensor-core.mlir.
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
// the grid (none for no rows) and passes M to the kernel, whose static
// sizes stay constants.
// CHECK-LABEL: func.func @matmul_of_dynamic_rows
// CHECK: %[[M:.+]] = memref.dim %{{.+}}, %c0 : memref<?x64xf32>
// CHECK: memref.alloc(%[[M]]) : memref<?x32xf32>
// CHECK: %[[TILES:.+]] = arith.ceildivui %[[M]], %{{.+}} : index
// CHECK: %[[GRID:.+]] = arith.minui %[[TILES]], %{{.+}} : index
// CHECK: %[[ANY:.+]] = arith.cmpi ne, %[[GRID]]
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
// CHECK-SAME: workgroup(%[[AT:.+]] : memref<1024xf32, #gpu.address_space<workgroup>>, %[[BT:.+]] : memref<1024xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME: nf.schedule = "tiled-product tile=64x64x16 thread=4x4"
// Blocks loop over the tiles, then over K sixteen at a time.
// CHECK: scf.for
// CHECK: scf.for {{.+}} iter_args
// f16 loads widened to f32, zero outside the matrix.
// CHECK: scf.if
// CHECK: memref.load {{.+}} : memref<?xf16>
// CHECK: arith.extf
// CHECK: memref.store {{.+}}, %[[AT]]
// CHECK: gpu.barrier
// 16 sums per thread.
// CHECK-COUNT-16: math.fma
// CHECK: gpu.barrier
// CHECK: arith.truncf
// CHECK: memref.store {{.+}} : memref<?xf16>

// The kernel of the dynamic matmul: M is its last argument; K stays 64.
// CHECK-LABEL: gpu.func @matmul_of_dynamic_rows_matmul
// CHECK-SAME: (%{{.+}}: memref<?xf32>, %{{.+}}: memref<?xf32>, %{{.+}}: memref<?xf32>, %[[KM:[^:]+]]: index)
// CHECK: %[[K:.+]] = arith.constant 64 : index
// CHECK: arith.ceildivui %[[KM]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[K]] step

// CHECK-LABEL: gpu.func @small_f64_matmul_matmul
// CHECK-SAME: memref<512xf64, #gpu.address_space<workgroup>>
// CHECK-SAME: nf.schedule = "tiled-product tile=32x32x16 thread=2x2"
// CHECK-COUNT-4: math.fma {{.+}} : f64

// The padding: input coordinates checked against 0 and the input size.
// CHECK-LABEL: gpu.func @conv_nhwc_stride2_conv2d
// CHECK-SAME: nf.schedule = "tiled-product tile=32x32x16 thread=2x2"
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
