// A tensor-core product of too few 64 x 64 tiles to fill the device over a
// long K splits K (Schedule.cpp, selectTiledProductSchedule): about two
// blocks a multiprocessor, each range at least 8 K tiles of 32. The first
// kernel writes each range's f32 partial sums to a slice of a temporary;
// the second adds the slices in order (the same bits on every run),
// applies the epilogue and stores 16 bytes a thread. The simulator runs
// such products against float64 (TensorCoreProductsOnSimTest, splitK_*).
// RUN: nf-opt %s --nf-fuse-pipeline --nf-lower-to-gpu | FileCheck %s
// RUN: nf-opt %s --nf-fuse-pipeline --nf-lower-to-gpu=arch=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: nf-opt %s --nf-fuse-pipeline --nf-lower-to-gpu | FileCheck %s --check-prefix=DYN

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

// f32 on the SIMT kernel splits K the same way, each range at least 256
// of K (32 K tiles of 8): 256 x 1024 is 64 tiles of 64 x 64, K = 8192 is
// 1024 K tiles; 264 blocks wanted: 5 ranges of 205 K tiles, 320 blocks.
// Each block loops over its range (the last one to the end of K), and its
// thread's sums go, as they are, to the range's slice, 16 bytes at a time;
// the ReLU is the finish's.
// CHECK-LABEL: func.func @few_tiles_f32
// CHECK: memref.alloc() : memref<1310720xf32>
// CHECK: gpu.launch_func @nf_kernels::@few_tiles_f32_matmul_epilogue blocks in (%c320,
// CHECK: gpu.launch_func @nf_kernels::@few_tiles_f32_matmul_epilogue_split_sum
func.func @few_tiles_f32(%a: tensor<256x8192xf32>, %b: tensor<8192x1024xf32>) -> tensor<256x1024xf32> {
  %p = nf.matmul %a, %b : tensor<256x8192xf32>, tensor<8192x1024xf32> -> tensor<256x1024xf32>
  %q = nf.relu %p : tensor<256x1024xf32>
  return %q : tensor<256x1024xf32>
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

// The f32 product kernel and its finish.
// CHECK-LABEL: gpu.func @few_tiles_f32_matmul_epilogue(
// CHECK-SAME: nf.schedule = "tiled-product tile=64x64x8 thread=4x4 split-k=5 finish-block=256 finish-vector=4 finish-min-blocks-per-sm=4"
// CHECK: %[[PER:.+]] = arith.constant 205 : index
// CHECK: scf.for %[[U:.+]] = %block_id_x to %{{.+}} step %grid_dim_x
// CHECK: %[[RANGE:.+]] = arith.divui %[[U]]
// CHECK: %[[BEGIN:.+]] = arith.muli %[[RANGE]], %[[PER]]
// CHECK: %[[END:.+]] = arith.minui %{{.+}}, %c1024
// CHECK: scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step
// CHECK-NOT: arith.maximumf
// CHECK: vector.store {{.+}} : memref<?xf32>, vector<4xf32>
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @few_tiles_f32_matmul_epilogue_split_sum(
// CHECK-SAME: nf.schedule = "split-k-sum splits=5 grid-stride block=256 vector=4 min-blocks-per-sm=4"
// CHECK: arith.maximumf

// Tokens and K known only at launch: two product kernels, on 128 x 64
// tiles and on 64 x 64, and the one that runs is chosen then: the large
// tiles where they are at least one a multiprocessor (at least as many as
// the device holds of their kernel at once, at most 132), as the schedule
// chooses where the sizes are known. For each, the host computes the
// ranges by the same rule (ceil(blocks / tiles) for the blocks the device
// holds of that kernel, at most 264; K tiles / 8, at most 16, then as many
// as whole ranges of one length make); the partial sums hold the ranges of
// the kernel that runs, none where there is one range; each product kernel
// branches on its count (partial sums, or the result through the GELU
// itself); the other kernel and the finish, where there is one range, get
// a grid of no blocks (a grid, not a branch: the choice follows the
// device).
// DYN-LABEL: func.func @tokens_at_launch(
// DYN: %[[TILES_M:.+]] = arith.ceildivui %{{.+}}, %c128
// DYN: %[[SMALL_M:.+]] = arith.ceildivui %{{.+}}, %c64
// DYN: %[[SMS:.+]] = nf.resident_blocks @nf_kernels::@tokens_at_launch_matmul_epilogue block 128 shared 0 planned 132
// DYN: %[[LARGE:.+]] = arith.cmpi uge, %[[TILES_M]], %[[SMS]]
// DYN: %[[SMALL:.+]] = arith.cmpi ult, %[[TILES_M]], %[[SMS]]
// DYN: %[[KTILES:.+]] = arith.ceildivui %{{.+}}, %c32
// DYN: %[[RESIDENT:.+]] = nf.resident_blocks @nf_kernels::@tokens_at_launch_matmul_epilogue block 128 shared 0 planned 264
// DYN: %[[TILES:.+]] = arith.maxui %[[TILES_M]], %c1
// DYN: %[[WANTED:.+]] = arith.ceildivui %[[RESIDENT]], %[[TILES]]
// DYN: %[[LONG:.+]] = arith.divui %[[KTILES]], %c8
// DYN: arith.minui %[[WANTED]], %[[LONG]]
// DYN: arith.minui %{{.+}}, %c16
// DYN: arith.ceildivui %[[KTILES]]
// DYN: arith.ceildivui %[[KTILES]]
// DYN: %[[RANGES_L:.+]] = arith.maxui %{{.+}}, %c1
// DYN: nf.resident_blocks @nf_kernels::@tokens_at_launch_matmul_epilogue_small_tiles block 128 shared 0 planned 264
// DYN: arith.maxui %[[SMALL_M]]
// DYN: %[[RANGES:.+]] = arith.select %[[LARGE]], %[[RANGES_L]], %[[RANGES_S:.+]] : index
// DYN: %[[MANY:.+]] = arith.cmpi ugt, %[[RANGES]], %c1
// DYN: %[[SLICES:.+]] = arith.select %[[MANY]], %[[RANGES]], %c0
// DYN: arith.muli %{{.+}}, %[[SLICES]]
// DYN: %[[UNITS_L:.+]] = arith.muli %[[TILES_M]], %[[RANGES_L]]
// DYN: %[[BLOCKS_L:.+]] = arith.minui %[[UNITS_L]], %c65535
// DYN: %[[GRID_L:.+]] = arith.select %[[LARGE]], %[[BLOCKS_L]], %c0
// DYN: arith.cmpi ne, %[[TILES_M]], %c0
// DYN-NEXT: scf.if
// DYN: gpu.launch_func @nf_kernels::@tokens_at_launch_matmul_epilogue blocks in (%[[GRID_L]], {{.+}}, %[[RANGES_L]] : index)
// DYN: %[[UNITS_S:.+]] = arith.muli %[[SMALL_M]], %[[RANGES_S]]
// DYN: %[[BLOCKS_S:.+]] = arith.minui %[[UNITS_S]], %c65535
// DYN: %[[GRID_S:.+]] = arith.select %[[SMALL]], %[[BLOCKS_S]], %c0
// DYN: arith.cmpi ne, %[[SMALL_M]], %c0
// DYN-NEXT: scf.if
// DYN: gpu.launch_func @nf_kernels::@tokens_at_launch_matmul_epilogue_small_tiles blocks in (%[[GRID_S]], {{.+}}, %[[RANGES_S]] : index)
// DYN: %[[MORE:.+]] = arith.cmpi ugt, %[[RANGES]], %c1
// DYN: %[[GRID:.+]] = arith.select %[[MORE]], %{{.+}}, %c0
// DYN-NEXT: arith.constant
// DYN-NEXT: arith.constant
// DYN-NEXT: gpu.launch_func @nf_kernels::@tokens_at_launch_matmul_epilogue_split_sum blocks in (%[[GRID]],
// DYN-LABEL: gpu.func @tokens_at_launch_matmul_epilogue(
// DYN-SAME: nf.schedule = "tensor-core-product tile=128x64x32 warps=2x2 stages=3 split-k-max=16 split-k-blocks=264 split-k-min-tiles=8 small-tile=64x64x32/3/2x2 small-tile-below=132 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"
// DYN: nvgpu.mma.sync
// DYN: arith.cmpi ugt
// DYN-NEXT: scf.if
// DYN: vector.store {{.+}} : memref<?xf32>, vector<2xf32>
// DYN: } else {
// DYN: gpu.barrier
// DYN: vector.store {{.+}} : memref<?xf16>, vector<8xf16>
// DYN-LABEL: gpu.func @tokens_at_launch_matmul_epilogue_small_tiles(
// DYN-SAME: nf.schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3 split-k-max=16 split-k-blocks=264 split-k-min-tiles=8 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"
// DYN: nvgpu.mma.sync
// DYN-LABEL: gpu.func @tokens_at_launch_matmul_epilogue_split_sum(
// DYN-SAME: nf.schedule = "split-k-sum splits=at-launch grid-stride block=256 vector=8
func.func @tokens_at_launch(%a: tensor<?x?xf16>, %b: tensor<?x64xf16>) -> tensor<?x64xf16> {
  %c = nf.matmul %a, %b : tensor<?x?xf16>, tensor<?x64xf16> -> tensor<?x64xf16>
  %d = nf.gelu %c {approximate = #nf.approximation<tanh>} : tensor<?x64xf16>
  return %d : tensor<?x64xf16>
}
