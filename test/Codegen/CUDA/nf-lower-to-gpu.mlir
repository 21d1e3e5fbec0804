// nf-lower-to-gpu: each nf op becomes a kernel in gpu.module @nf_kernels
// and its gpu.launch_func from the host function, on flat buffers.
// RUN: nf-opt %s --nf-lower-to-gpu -split-input-file | FileCheck %s

// A block per row, the row in registers: 128-bit loads, sums by xor
// shuffles within warps, then workgroup memory between barriers.
// CHECK-LABEL: func.func @block_row
// CHECK: %[[X:.+]] = memref.collapse_shape %{{.+}} {{\[\[}}0, 1]] : memref<2x2048xf32> into memref<4096xf32>
// CHECK: %[[FLAT:.+]] = memref.cast %[[X]] : memref<4096xf32> to memref<?xf32>
// CHECK: gpu.launch_func @nf_kernels::@block_row_rms_norm blocks in (%{{.+}}, %{{.+}}, %{{.+}}) threads in (%{{.+}}, %{{.+}}, %{{.+}}) args(%[[FLAT]] : memref<?xf32>
// CHECK: gpu.module @nf_kernels
// CHECK: gpu.func @block_row_rms_norm(%{{.+}}: memref<?xf32>, %{{.+}}: memref<?xf32>, %{{.+}}: memref<?xf32>, %{{.+}}: memref<?xf32>, %{{.+}}: index, %{{.+}}: index)
// CHECK-SAME: workgroup(%[[SCRATCH:.+]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: kernel
// CHECK: gpu.thread_id x
// CHECK: gpu.block_id x
// CHECK: vector.load %{{.+}} : memref<?xf32>, vector<4xf32>
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: memref.store %{{.+}}, %[[SCRATCH]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SCRATCH]]
// CHECK: gpu.barrier
// CHECK: math.sqrt
// CHECK: vector.store %{{.+}} : memref<?xf32>, vector<4xf32>
// CHECK: gpu.return
func.func @block_row(%x: tensor<2x2048xf32>, %g: tensor<2048xf32>) -> (tensor<2x2048xf32>, tensor<2x1xf32>) {
  %y, %r = nf.rms_norm %x scale %g {axis = 1 : i64, epsilon = 1.0e-06 : f64} : (tensor<2x2048xf32>, tensor<2048xf32>) -> (tensor<2x2048xf32>, tensor<2x1xf32>)
  return %y, %r : tensor<2x2048xf32>, tensor<2x1xf32>
}

// -----

// Short rows: a warp per row, several rows a block, no barrier. Each
// block loops over groups of 8 rows, from its own by the grid's size. Rows
// past the end of the last group load nothing: each load is guarded by the
// row (32 lanes of 8 cover a row's 256 columns, unguarded).
// CHECK-LABEL: func.func @warp_rows
// CHECK: gpu.launch_func @nf_kernels::@warp_rows_layer_norm blocks in (%c3,
// CHECK-LABEL: gpu.func @warp_rows_layer_norm
// CHECK-SAME: nf.schedule = "warp-rows threads-per-row=32 rows-per-block=8 vector=8 registers=1"
// CHECK: %[[BLOCK:.+]] = gpu.block_id x
// CHECK: %[[GROUPS:.+]] = arith.ceildivui %{{.+}}, %{{.+}} : index
// CHECK: %[[GRID:.+]] = gpu.grid_dim x
// CHECK: scf.for %{{.+}} = %[[BLOCK]] to %[[GROUPS]] step %[[GRID]]
// CHECK: %[[ROWOK:.+]] = arith.cmpi ult, %{{.+}}, %{{.+}} : index
// CHECK-NOT: arith.cmpi
// CHECK: scf.if %[[ROWOK]] -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: vector.load %{{.+}} : memref<?xf16>, vector<8xf16>
// CHECK-COUNT-8: arith.extf
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @warp_rows(%x: tensor<20x256xf16>) -> tensor<20x256xf16> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<20x256xf16>) -> (tensor<20x256xf16>, tensor<20x1xf32>, tensor<20x1xf32>)
  return %y : tensor<20x256xf16>
}

// -----

// Rows too long for registers, even a cluster's: split into chunks, a
// block each. The first kernel loads its chunk once into registers (8
// vectors a thread, each where it lies in the chunk) and writes the chunk's
// mean and the M2 around it, both from the registers; the second combines
// a row's chunks with Chan's formula
// in a loop every thread runs alike, then normalizes its chunk. The
// partial moments are a temporary of rows x chunks x 2 (2 x 32 x 2).
// CHECK-LABEL: func.func @long_rows
// CHECK: memref.alloc() : memref<128xf32>
// CHECK: gpu.launch_func @nf_kernels::@long_rows_layer_norm_partial
// CHECK: gpu.launch_func @nf_kernels::@long_rows_layer_norm_normalize
// CHECK-LABEL: gpu.func @long_rows_layer_norm_partial
// CHECK-SAME: nf.schedule = "split-row threads-per-row=512 rows-per-block=1 vector=4 registers=8 chunk=16384"
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK-NOT: scf.for
// CHECK-COUNT-8: vector.load
// CHECK-NOT: vector.load
// CHECK: gpu.barrier
// CHECK: arith.subf
// CHECK: gpu.barrier
// CHECK-NOT: scf.for
// CHECK: memref.store
// CHECK: memref.store
// CHECK-LABEL: gpu.func @long_rows_layer_norm_normalize
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (f32, f32, f32)
// CHECK: memref.load
// CHECK: memref.load
// CHECK: math.fma
// CHECK: scf.yield
// CHECK: math.sqrt
// CHECK: scf.for
// CHECK: vector.store
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @long_rows(%x: tensor<2x524288xf32>) -> tensor<2x524288xf32> {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<2x524288xf32>) -> (tensor<2x524288xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %y : tensor<2x524288xf32>
}

// -----

// Pointwise ops: a grid-stride loop, a vector a thread and step; the
// logistic form of GELU (tanh) with math.exp2 (CUDA's exp2f).
// CHECK-LABEL: gpu.func @pointwise_gelu
// CHECK-SAME: nf.min_blocks_per_sm = 4 : i64, nf.schedule = "grid-stride block=256 vector=8 min-blocks-per-sm=4"
// CHECK: gpu.grid_dim x
// CHECK: scf.for
// CHECK: vector.load %{{.+}} : memref<?xbf16>, vector<8xbf16>
// CHECK: math.exp2
// CHECK: vector.store %{{.+}} : memref<?xbf16>, vector<8xbf16>
// CHECK-LABEL: gpu.func @pointwise_bias_add
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: memref.load
func.func @pointwise(%x: tensor<4x1024xbf16>, %b: tensor<1024xbf16>) -> tensor<4x1024xbf16> {
  %0 = nf.gelu %x {approximate = #nf.approximation<tanh>} : tensor<4x1024xbf16>
  %1 = nf.bias_add %0, %b {layout = #nf.layout<nhwc>} : tensor<4x1024xbf16>, tensor<1024xbf16>
  return %1 : tensor<4x1024xbf16>
}

// -----

// GroupNorm NHWC (C=64 in 32 groups of 2 channels) across the channels
// (channels-last-groups): each block's threads take a 16-byte vector of a
// position's 64 channels (16 threads) at 16 positions. Its 65536 elements
// fit in the registers of 8 blocks of 256 threads (8 vectors a thread:
// parts of 128 positions), which an H100 holds at once: one kernel does it
// all (`_one_kernel`, compiled for 3 blocks an SM): each block's part's
// moments per group (the lanes' sums meet in shared memory, a thread per
// group adds its channels), the grid's barrier on a zeroed counter, then a
// warp per group combines the image's parts by shuffles, and the registers
// are normalized. Its fallback, three kernels, takes over where the device
// holds fewer than 8 blocks of it (decided when the kernels are loaded:
// each grid is 0 blocks unless chosen): a block per part computes its
// moments; a block per (image, group) combines them; the normalize kernel
// reads x again. Their parts: the 1024 positions over the blocks the
// device holds of the first and third kernels (planned 1056 on an H100: 64
// parts of 16), in whole sweeps of 16 positions. More in
// nf-lower-to-gpu-group-norm-nhwc.mlir.
// CHECK: %[[R1:.+]] = nf.resident_blocks @nf_kernels::@unet_group_norm_partial block 256 shared 0 planned 1056
// CHECK: %[[R3:.+]] = nf.resident_blocks @nf_kernels::@unet_group_norm_normalize block 256 shared 0 planned 1056
// CHECK: %[[R:.+]] = arith.minui %[[R1]], %[[R3]]
// CHECK: arith.ceildivui %c1024, %[[R]]
// CHECK: %[[SWEEPS:.+]] = arith.ceildivui %{{.+}}, %c16
// CHECK: %[[CHUNK:.+]] = arith.muli %[[SWEEPS]], %c16
// CHECK: %[[PARTS:.+]] = arith.ceildivui %c1024, %[[CHUNK]]
// CHECK: %[[COUNTER:.+]] = memref.alloc() {nf.zeroed} : memref<1xi32>
// CHECK: %[[RONE:.+]] = nf.resident_blocks @nf_kernels::@unet_group_norm_one_kernel block 256 shared 0 planned 1056
// CHECK: %[[FITS:.+]] = arith.cmpi ule, %c8, %[[RONE]]
// CHECK: %[[ONEGRID:.+]] = arith.select %[[FITS]], %c8, %c0
// CHECK: %[[THREE:.+]] = arith.select %[[FITS]], %c0{{.*}}, %c1
// CHECK: gpu.launch_func @nf_kernels::@unet_group_norm_one_kernel blocks in (%[[ONEGRID]], %{{.+}}) threads in (%c256{{.*}}) args({{.+}}, %[[COUNTER]] : memref<1xi32>)
// CHECK: %[[G1:.+]] = arith.muli %[[PARTS]], %[[THREE]]
// CHECK: gpu.launch_func @nf_kernels::@unet_group_norm_partial blocks in (%[[G1]], %{{.+}}) threads in (%c256{{.*}}) args({{.+}}, %[[CHUNK]] : index, %[[PARTS]] : index)
// CHECK: %[[G2:.+]] = arith.muli %c32{{.*}}, %[[THREE]]
// CHECK: gpu.launch_func @nf_kernels::@unet_group_norm_finish blocks in (%[[G2]], %{{.+}}) threads in (%c256
// CHECK: %[[G3:.+]] = arith.muli %[[PARTS]], %[[THREE]]
// CHECK: gpu.launch_func @nf_kernels::@unet_group_norm_normalize blocks in (%[[G3]], %{{.+}}) threads in (%c256{{.*}}) args({{.+}}, %[[CHUNK]] : index, %[[PARTS]] : index)
// CHECK-LABEL: gpu.func @unet_group_norm_partial
// CHECK-SAME: workgroup(%{{.+}} : memref<1024xf32, #gpu.address_space<workgroup>>, %{{.+}} : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: nf.schedule = "channels-last-groups threads-per-row=16 rows-per-block=16 vector=4 registers=8 positions-per-part=16 finish-warps=8 resident-blocks=3 parts-from-residency"
// CHECK: vector.load %{{.+}} : memref<?xf32>, vector<4xf32>
// CHECK: gpu.barrier
// CHECK-LABEL: gpu.func @unet_group_norm_finish
// CHECK: gpu.shuffle  xor %{{.+}}, %c16_i32
// CHECK: gpu.shuffle  xor %{{.+}}, %c1_i32
// CHECK-LABEL: gpu.func @unet_group_norm_normalize
// CHECK-NOT: gpu.barrier
// CHECK: vector.load %{{.+}} : memref<?xf32>, vector<4xf32>
// CHECK: vector.store %{{.+}} : memref<?xf32>, vector<4xf32>
// CHECK-LABEL: gpu.func @unet_group_norm_one_kernel
// CHECK-SAME: nf.min_blocks_per_sm = 3
// CHECK-COUNT-8: vector.load %{{.+}} : memref<?xf32>, vector<4xf32>
// CHECK: memref.store %{{.+}}, %arg6[%{{.+}}] : memref<?xf32>
// CHECK: nf.grid_barrier %arg7 : memref<1xi32>
// CHECK: gpu.shuffle  xor %{{.+}}, %c16_i32
// CHECK-COUNT-8: vector.store %{{.+}} : memref<?xf32>, vector<4xf32>
func.func @unet(%x: tensor<1x32x32x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<1x32x32x64xf32> {
  %y, %m, %r = nf.group_norm %x scale %s bias %b {layout = #nf.layout<nhwc>, num_groups = 32 : i64} : (tensor<1x32x32x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<1x32x32x64xf32>, tensor<1x32xf32>, tensor<1x32xf32>)
  return %y : tensor<1x32x32x64xf32>
}
