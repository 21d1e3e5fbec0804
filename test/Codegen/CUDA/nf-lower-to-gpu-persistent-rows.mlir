// Row norms in registers run on persistent blocks: at most as many blocks
// as the device holds at once (nf.resident_blocks, resolved when the
// kernel is loaded; planned here from the target's threads), each looping
// over row groups from its own index by the grid's size. A layer or RMS
// norm whose lanes keep at most 16 elements of a row keeps the scale and
// bias of its columns in registers too, loaded once per block before the
// loop; with more, they are loaded per row after the reductions. Where x
// (so y) is larger than the target's L2, y goes out through streaming
// stores (nf.evict_first: st.global.cs).
// RUN: nf-opt %s --nf-lower-to-gpu -split-input-file | FileCheck %s
// RUN: nf-opt %s --nf-lower-to-gpu=arch=a100 -split-input-file | FileCheck %s --check-prefix=A100
// RUN: nf-translate --nf-to-cuda %s -split-input-file | FileCheck %s --check-prefix=CUDA

// 16384 rows of 4096 f32: 16 elements a lane (4 vectors of 4); eight
// 16-byte loads of the scale and bias before the loop, four of x in it;
// 268 MB of x, beyond a 50 MiB L2: four streaming 16-byte stores of y.
// CHECK-LABEL: func.func @rows_of_4096_f32
// CHECK: %[[RESIDENT:.+]] = nf.resident_blocks @nf_kernels::@rows_of_4096_f32_layer_norm block 256 shared 0 planned 1056
// CHECK: %[[GRID:.+]] = arith.minui %[[RESIDENT]], %c16384
// CHECK: gpu.launch_func @nf_kernels::@rows_of_4096_f32_layer_norm blocks in (%[[GRID]],
// CHECK-LABEL: gpu.func @rows_of_4096_f32_layer_norm
// CHECK-SAME: nf.schedule = "block-row-registers threads-per-row=256 rows-per-block=1 vector=4 registers=4 params-in-registers streaming"
// CHECK: %[[BLOCK:.+]] = gpu.block_id x
// CHECK-COUNT-8: vector.load
// CHECK: %[[STEP:.+]] = gpu.grid_dim x
// CHECK-NEXT: scf.for %{{.+}} = %[[BLOCK]] to %{{.+}} step %[[STEP]]
// CHECK-COUNT-4: vector.load
// CHECK-NOT: vector.load
// CHECK-COUNT-4: vector.store %{{.+}} {nf.evict_first} : memref<?xf32>, vector<4xf32>
// CHECK-NOT: vector.store
// CHECK: gpu.return
// A100-LABEL: func.func @rows_of_4096_f32
// A100: nf.resident_blocks @nf_kernels::@rows_of_4096_f32_layer_norm block 256 shared 0 planned 864
// CUDA-LABEL: // rows_of_4096_f32_layer_norm: block-row-registers
// CUDA-COUNT-4: nf_stcs((nf_vec<float, 4> *)(a3 + v{{[0-9]+}}), v{{[0-9]+}});
// CUDA-NOT: nf_stcs
// CUDA: NF_SIM_ENTRY(rows_of_4096_f32_layer_norm)
func.func @rows_of_4096_f32(%x: tensor<16384x4096xf32>, %s: tensor<4096xf32>, %b: tensor<4096xf32>) -> tensor<16384x4096xf32> {
  %y, %m, %r = nf.layer_norm %x scale %s bias %b {axis = 1 : i64} : (tensor<16384x4096xf32>, tensor<4096xf32>, tensor<4096xf32>) -> (tensor<16384x4096xf32>, tensor<16384x1xf32>, tensor<16384x1xf32>)
  return %y : tensor<16384x4096xf32>
}

// -----

// 32 elements a lane: the scale and bias are loaded per row, after the
// reductions. 64 rows fit on the device: a block a row, no
// nf.resident_blocks. 2 MB fit in L2: y is stored as usual.
// CUDA-LABEL: // rows_of_8192_f32_layer_norm:
// CUDA-NOT: nf_stcs
// CUDA: NF_SIM_ENTRY(rows_of_8192_f32_layer_norm)
// CHECK-LABEL: func.func @rows_of_8192_f32
// CHECK-NOT: nf.resident_blocks
// CHECK: gpu.launch_func @nf_kernels::@rows_of_8192_f32_layer_norm blocks in (%c64{{(_[0-9]+)?}},
// CHECK-LABEL: gpu.func @rows_of_8192_f32_layer_norm
// CHECK-SAME: nf.schedule = "block-row-registers threads-per-row=256 rows-per-block=1 vector=4 registers=8"
// CHECK: scf.for
// CHECK-COUNT-8: vector.load
// CHECK: math.sqrt
// CHECK: vector.load
func.func @rows_of_8192_f32(%x: tensor<64x8192xf32>, %s: tensor<8192xf32>, %b: tensor<8192xf32>) -> tensor<64x8192xf32> {
  %y, %m, %r = nf.layer_norm %x scale %s bias %b {axis = 1 : i64} : (tensor<64x8192xf32>, tensor<8192xf32>, tensor<8192xf32>) -> (tensor<64x8192xf32>, tensor<64x1xf32>, tensor<64x1xf32>)
  return %y : tensor<64x8192xf32>
}

// -----

// A peeled row (1001 is odd): a lane's columns depend on where each row
// starts, so the scale and bias are loaded per row.
// CHECK-LABEL: gpu.func @rows_of_1001_f32_rms_norm
// CHECK-SAME: nf.schedule = "warp-rows threads-per-row=32 rows-per-block=8 vector=4 registers=8 peeled"
func.func @rows_of_1001_f32(%x: tensor<4096x1001xf32>, %s: tensor<1001xf32>) -> tensor<4096x1001xf32> {
  %y, %r = nf.rms_norm %x scale %s {axis = 1 : i64} : (tensor<4096x1001xf32>, tensor<1001xf32>) -> (tensor<4096x1001xf32>, tensor<4096x1xf32>)
  return %y : tensor<4096x1001xf32>
}
