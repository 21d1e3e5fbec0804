// A tensor-core product of too few 64 x 64 tiles to fill the device over a
// long K splits K (Schedule.cpp, selectTiledProductSchedule): about two
// blocks a multiprocessor, each range at least 8 K tiles of 32. The first
// kernel writes each range's f32 partial sums to a slice of a temporary;
// the second adds the slices in order (the same bits on every run),
// applies the epilogue and stores 16 bytes a thread. The simulator runs
// such products against float64 (TensorCoreProductsOnSimTest, splitK_*).
// RUN: nf-opt %s --nf-fuse-pipeline --nf-lower-to-gpu | FileCheck %s
// RUN: nf-opt %s --nf-fuse-pipeline --nf-lower-to-gpu=arch=sm_80 | FileCheck %s --check-prefix=SM80

// 512 x 960 is 8 x 15 = 120 tiles; K = 768 is 24 K tiles. sm_90 (132
// multiprocessors) wants 264 blocks: 3 ranges of 8 K tiles, 360 blocks.
// sm_80 (108) wants 216: 2 ranges of 12.
// CHECK-LABEL: func.func @few_tiles
// CHECK: %[[PARTIALS:.+]] = memref.alloc() : memref<1474560xf32>
// CHECK: %[[UNITS:.+]] = arith.constant 360 : index
// CHECK: gpu.launch_func @nf_kernels::@few_tiles_matmul_epilogue blocks in (%[[UNITS]], {{.+}} args({{.+}} : memref<?xf16>, {{.+}} : memref<?xf16>, {{.+}} : memref<?xf32>)
// CHECK: gpu.launch_func @nf_kernels::@few_tiles_matmul_epilogue_split_sum {{.+}} args({{.+}} : memref<?xf32>, {{.+}} : memref<?xf16>, {{.+}} : memref<?xf16>)
// SM80-LABEL: func.func @few_tiles
// SM80: memref.alloc() : memref<983040xf32>
// SM80: arith.constant 240 : index
func.func @few_tiles(%a: tensor<512x768xf16>, %b: tensor<768x960xf16>, %c: tensor<960xf16>) -> tensor<512x960xf16> {
  %p = nf.matmul %a, %b : tensor<512x768xf16>, tensor<768x960xf16> -> tensor<512x960xf16>
  %q = nf.bias_add %p, %c {layout = #nf.layout<nhwc>} : tensor<512x960xf16>, tensor<960xf16>
  return %q : tensor<512x960xf16>
}

// K = 256 is 8 K tiles, too few to split: one kernel.
// CHECK-LABEL: func.func @short_k
// CHECK-NOT: memref<{{[0-9]+}}xf32>
// CHECK: gpu.launch_func @nf_kernels::@short_k_matmul
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @short_k(%a: tensor<512x256xf16>, %b: tensor<256x960xf16>) -> tensor<512x960xf16> {
  %p = nf.matmul %a, %b : tensor<512x256xf16>, tensor<256x960xf16> -> tensor<512x960xf16>
  return %p : tensor<512x960xf16>
}

// The partial sums: a lane's two columns as one 8-byte store into slice
// (range) of [ranges][M][N].
// CHECK-LABEL: gpu.func @few_tiles_matmul_epilogue(
// CHECK-SAME: nf.schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3 split-k=3 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"
// CHECK: nvgpu.mma.sync
// CHECK: vector.store {{.+}} : memref<?xf32>, vector<2xf32>
// CHECK-NOT: arith.truncf
// CHECK: gpu.return
// SM80: nf.schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3 split-k=2 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"

// The sum: 8 columns a thread (two 16-byte loads from each slice), the
// three slices 491520 elements apart added in order, then the bias (16
// bytes), then one 16-byte store.
// CHECK-LABEL: gpu.func @few_tiles_matmul_epilogue_split_sum(
// CHECK-SAME: nf.schedule = "split-k-sum splits=3 grid-stride block=256 vector=8
// CHECK: %[[SLICE:.+]] = arith.constant 491520 : index
// CHECK: scf.for
// CHECK-COUNT-2: vector.load {{.+}} : memref<?xf32>, vector<4xf32>
// CHECK: arith.addi %[[SLICE]]
// CHECK-COUNT-2: vector.load {{.+}} : memref<?xf32>, vector<4xf32>
// CHECK-COUNT-8: arith.addf
// CHECK: arith.muli %[[SLICE]], %c2
// CHECK-COUNT-2: vector.load {{.+}} : memref<?xf32>, vector<4xf32>
// CHECK-COUNT-8: arith.addf
// CHECK: vector.load {{.+}} : memref<?xf16>, vector<8xf16>
// CHECK-COUNT-8: arith.addf
// CHECK: vector.store {{.+}} : memref<?xf16>, vector<8xf16>
