// f16 and bf16 products on sm_80 and newer run on tensor cores
// (LowerTensorCoreProducts.cpp): the operands' 16-byte runs go to shared
// memory by cp.async (nvgpu.device_async_copy, zero-filled past the edges),
// three stages of 32-wide K tiles in flight, one commit group each; the K
// loop waits for the oldest (numGroups = 1), then a barrier; fragments come
// by ldmatrix (.trans for B, whose N is consecutive) and each warp's 32 x 32
// part is 2 x 4 mma.sync m16n8k16 per 16 of K. Before sm_80 the SIMT
// kernel takes them. The simulator's tests run these kernels against
// float64 (ProductsOnSimTest).
// RUN: nf-opt %s --nf-lower-to-gpu | FileCheck %s
// RUN: nf-opt %s --nf-lower-to-gpu=arch=sm_75 | FileCheck %s --check-prefix=SM75
// RUN: nf-translate --nf-to-cuda %s | FileCheck %s --check-prefix=CUDA
// RUN: nf-translate --nf-to-cuda %s | sed -n '/ steady_matmul(/,/NF_SIM_ENTRY(steady_matmul)/p' | FileCheck %s --check-prefix=INT32
// The lowered kernels read back from text give the same CUDA (a group that
// lists no tokens carries nf.commit_pending, which keeps MLIR 19's custom
// form of nvgpu.device_async_create_group parseable).
// RUN: nf-translate --nf-to-cuda %s > %t.direct.cu
// RUN: nf-opt %s --nf-cuda-pipeline | nf-translate --nf-to-cuda > %t.text.cu
// RUN: diff %t.direct.cu %t.text.cu
// RUN: nf-opt %s --nf-cuda-pipeline | FileCheck %s --check-prefix=TEXT
// TEXT: nvgpu.device_async_create_group {nf.commit_pending}

// SM75: nf.schedule = "tiled-product tile=64x64x8 thread=4x4"

// CHECK-LABEL: func.func @matmul_77x136x40
// 2 x 3 tiles of 64 x 64: 6 blocks of four warps.
// CHECK: %[[BLOCKS:.+]] = arith.constant 6 : index
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: %[[THREADS:.+]] = arith.constant 128 : index
// CHECK: gpu.launch_func @nf_kernels::@matmul_77x136x40_matmul blocks in (%[[BLOCKS]], %{{.+}}, %{{.+}}) threads in (%[[THREADS]],
func.func @matmul_77x136x40(%a: tensor<77x40xf16>, %b: tensor<40x136xf16>) -> tensor<77x136xf16> {
  %c = nf.matmul %a, %b : tensor<77x40xf16>, tensor<40x136xf16> -> tensor<77x136xf16>
  return %c : tensor<77x136xf16>
}

// CHECK-LABEL: gpu.func @matmul_77x136x40_matmul
// Three stages of A (64 x 32) tiles, then three of B (32 x 64), in one
// buffer.
// CHECK-SAME: workgroup(%[[S:.+]] : memref<12288xf16, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-SAME: nf.schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3"
// The first two stages, each where the tile has that K tile (K = 40: two
// K tiles): each thread copies two runs of A and two of B.
// CHECK: scf.for
// CHECK: scf.if
// CHECK-COUNT-2: nvgpu.device_async_copy %{{.+}}, %[[S]][%{{.+}}], 8, %{{.+}} {bypassL1}
// CHECK-COUNT-2: nvgpu.device_async_copy %{{.+}}, %[[S]][%{{.+}}], 8, %{{.+}} {bypassL1}
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.if
// CHECK: nvgpu.device_async_create_group
// The K loop carries the accumulators, the newest group and the stage of
// its K tile.
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, !nvgpu.device.async.token, index)
// CHECK-NEXT: nvgpu.device_async_wait %{{.+}} {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.device_async_create_group
// CHECK-COUNT-2: nvgpu.ldmatrix %[[S]][%{{.+}}] {numTiles = 4 : i32, transpose = false} : {{.+}} -> vector<4x2xf16>
// CHECK-COUNT-2: nvgpu.ldmatrix %[[S]][%{{.+}}] {numTiles = 4 : i32, transpose = true} : {{.+}} -> vector<4x2xf16>
// CHECK-COUNT-8: nvgpu.mma.sync({{.+}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: scf.yield
// After K: what is in flight lands, and every warp is done with the stages.
// CHECK: nvgpu.device_async_wait %{{.+}} {numGroups = 0 : i32}
// CHECK-NEXT: gpu.barrier
// N = 136 rows are whole 16-byte chunks: a lane's two columns go to the
// tile in shared memory (4 bytes), then a barrier, then each thread stores
// whole chunks (16 bytes), then a barrier before the next tile's copies.
// CHECK: vector.extract %{{.+}}[0, 0] : f32 from vector<2x2xf32>
// CHECK-NEXT: vector.extract %{{.+}}[0, 1] : f32 from vector<2x2xf32>
// CHECK: scf.if
// CHECK: arith.truncf
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: vector.from_elements
// CHECK-NEXT: vector.store {{.+}}, %[[S]][%{{.+}}] : memref<12288xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: vector.load %[[S]][%{{.+}}] : memref<12288xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: vector.store {{.+}} : memref<?xf16>, vector<8xf16>
// CHECK: gpu.barrier

// The printed kernel: the prelude's wrappers of the PTX instructions.
// CUDA: // matmul_77x136x40_matmul: tensor-core-product tile=64x64x32 warps=2x2 stages=3
// CUDA: extern "C" __global__ void __launch_bounds__(128, 1) matmul_77x136x40_matmul(
// CUDA: NF_SHARED(__half, s0, 12288);
// CUDA: nf_cp_async<16>((s0 + {{.+}}), (a0 + {{.+}}), (int){{.+}} * 2);
// CUDA: nf_cp_async_commit();
// CUDA: nf_cp_async_wait<1>();
// CUDA: nf_vec<__half, 8> {{.+}} = nf_ldmatrix<4, false>(s0 + {{.+}});
// CUDA: nf_vec<__half, 8> [[B4:.+]] = nf_ldmatrix<4, true, 6144>(s0 + {{.+}});
// CUDA: nf_vec<__half, 4> {{.+}} = nf_vec<__half, 4>{{[{][{]}}[[B4]].v[0], [[B4]].v[1], [[B4]].v[2], [[B4]].v[3]}};
// CUDA: nf_vec<float, 4> {{.+}} = nf_mma_m16n8k16(
// CUDA: nf_cp_async_wait<0>();
// CUDA: nf_stg((nf_vec<__half, 8> *)

// K a multiple of the K tile, runs of whole chunks: each copy's source
// advances by a constant per K tile (no test of K in the loop), and the
// fragments and chunks a constant apart in shared memory share an address
// register, the constant printed as the instruction's immediate offset
// (ldmatrix's in elements, cp.async's in bytes): a thread's second chunk
// of A 128 chunks (2048 bytes) after its first, B's chunks after A's
// three stages (3 x 64 x 32 elements, 12288 bytes); A's fragments 16 rows
// (16 x 32 elements) apart, B's second K step 16 rows (16 x 64 elements)
// after its first.
// CUDA-LABEL: // steady_matmul: tensor-core-product tile=64x64x32
// CUDA: nf_cp_async<16>((s0 + [[DA:v[0-9]+]]), (a0 +
// CUDA: nf_cp_async<16, 2048>((s0 + [[DA]]), (a0 +
// CUDA: nf_cp_async<16, 12288>((s0 + [[DB:v[0-9]+]]), (a1 +
// CUDA: nf_cp_async<16, 14336>((s0 + [[DB]]), (a1 +
// CUDA: nf_cp_async_commit();
// CUDA: nf_cp_async_wait<1>();
// CUDA: nf_vec<__half, 8> {{.+}} = nf_ldmatrix<4, false>(s0 + [[A0:v[0-9]+]]);
// CUDA: nf_vec<__half, 8> {{.+}} = nf_ldmatrix<4, false, 512>(s0 + [[A0]]);
// CUDA: nf_ldmatrix<4, true, 6144>(s0 +
// CUDA: nf_ldmatrix<4, false>(s0 +
// CUDA: nf_ldmatrix<4, true, 7168>(s0 +
// Every offset this kernel computes fits in 32 bits (the sizes are
// static and small), so its index arithmetic is 32-bit: `int`, no `long
// long`, from the kernel's first line to its last.
// CHECK-LABEL: gpu.func @steady_matmul
// CHECK-SAME: nf.index_bits = 32 : i64
// INT32: void __launch_bounds__(128, 1) steady_matmul(
// INT32-NOT: long long
// INT32: for (int i{{[0-9]+}} =
// INT32-NOT: long long
// INT32: NF_SIM_ENTRY(steady_matmul)
func.func @steady(%a: tensor<96x64xf16>, %b: tensor<64x64xf16>) -> tensor<96x64xf16> {
  %c = nf.matmul %a, %b : tensor<96x64xf16>, tensor<64x64xf16> -> tensor<96x64xf16>
  return %c : tensor<96x64xf16>
}

// bf16, both operands transposed: A staged K-major (ldmatrix .trans), B
// N-major (no .trans).
// CHECK-LABEL: gpu.func @transposed_bf16_matmul
// CHECK-SAME: nf.schedule = "tensor-core-product
// CHECK: nvgpu.ldmatrix {{.+}} {numTiles = 4 : i32, transpose = true} : {{.+}} -> vector<4x2xbf16>
// CHECK: nvgpu.ldmatrix {{.+}} {numTiles = 4 : i32, transpose = false} : {{.+}} -> vector<4x2xbf16>
// CHECK: nvgpu.mma.sync({{.+}}) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
func.func @transposed_bf16(%a: tensor<64x96xbf16>, %b: tensor<48x64xbf16>) -> tensor<96x48xbf16> {
  %c = nf.matmul %a, %b {transpose_lhs, transpose_rhs} : tensor<64x96xbf16>, tensor<48x64xbf16> -> tensor<96x48xbf16>
  return %c : tensor<96x48xbf16>
}

// Runs that are not 16-byte chunks (K = 5): the same kernel, staged
// element by element; N = 13 is odd, so the stores are single elements
// straight from the accumulators.
// CHECK-LABEL: gpu.func @odd_k_matmul
// CHECK-SAME: nf.schedule = "tensor-core-product
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: memref.load {{.+}} : memref<?xf16>
// CHECK: memref.store {{.+}} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.mma.sync
// CHECK: memref.store {{.+}} : memref<?xf16>
func.func @odd_k(%a: tensor<7x5xf16>, %b: tensor<5x13xf16>) -> tensor<7x13xf16> {
  %c = nf.matmul %a, %b : tensor<7x5xf16>, tensor<5x13xf16> -> tensor<7x13xf16>
  return %c : tensor<7x13xf16>
}

// The NHWC convolution and its two gradients: implicit GEMMs on the same
// kernel, their operands gathered a tap's channels (16 bytes) at a time.
// CHECK-LABEL: gpu.func @conv_nhwc_conv2d
// CHECK-SAME: nf.schedule = "tensor-core-product
// CHECK: nvgpu.device_async_copy
// CHECK-LABEL: gpu.func @conv_nhwc_conv2d_backprop_input
// CHECK-SAME: nf.schedule = "tensor-core-product
// CHECK: nvgpu.device_async_copy
// CHECK-LABEL: gpu.func @conv_nhwc_conv2d_backprop_filter
// CHECK-SAME: nf.schedule = "tensor-core-product
// CHECK: nvgpu.device_async_copy
func.func @conv_nhwc(%x: tensor<2x9x7x16xf16>, %w: tensor<24x3x3x16xf16>, %dy: tensor<2x5x4x24xf16>) -> (tensor<2x5x4x24xf16>, tensor<2x9x7x16xf16>, tensor<24x3x3x16xf16>) {
  %y = nf.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 2>, layout = #nf.layout<nhwc>} : tensor<2x9x7x16xf16>, tensor<24x3x3x16xf16> -> tensor<2x5x4x24xf16>
  %dx = nf.conv2d_backprop_input %dy, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 2>, layout = #nf.layout<nhwc>} : tensor<2x5x4x24xf16>, tensor<24x3x3x16xf16> -> tensor<2x9x7x16xf16>
  %dw = nf.conv2d_backprop_filter %x, %dy {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 2>, layout = #nf.layout<nhwc>} : tensor<2x9x7x16xf16>, tensor<2x5x4x24xf16> -> tensor<24x3x3x16xf16>
  return %y, %dx, %dw : tensor<2x5x4x24xf16>, tensor<2x9x7x16xf16>, tensor<24x3x3x16xf16>
}

// NCHW of 10 channels (no channels-last copy: nf-lower-to-gpu-conv-nchw.mlir):
// the input gathered one element at a time (neighbouring positions along
// M: staged K-major, ldmatrix .trans), the OIHW filter's rows of K = 40 by
// cp.async; the result's channels are a plane apart, so each element is
// stored alone.
// CHECK-LABEL: gpu.func @conv_nchw_conv2d
// CHECK-SAME: nf.schedule = "tensor-core-product
// CHECK: memref.load {{.+}} : memref<?xf16>
// CHECK: memref.store {{.+}} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.ldmatrix {{.+}} {numTiles = 4 : i32, transpose = true}
// CHECK: nvgpu.ldmatrix {{.+}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.mma.sync
// CHECK-NOT: vector.store
// CHECK: memref.store {{.+}} : memref<?xf16>
// CHECK-NOT: vector.store
// CHECK: gpu.return
func.func @conv_nchw(%x: tensor<1x10x8x8xf16>, %w: tensor<8x10x2x2xf16>) -> tensor<1x8x7x7xf16> {
  %y = nf.conv2d %x, %w : tensor<1x10x8x8xf16>, tensor<8x10x2x2xf16> -> tensor<1x8x7x7xf16>
  return %y : tensor<1x8x7x7xf16>
}

// Offsets past 2^31 (A has 2^31 elements) or sizes known only at run time
// (an index argument): 64-bit index arithmetic.
// CHECK-LABEL: gpu.func @huge_matmul
// CHECK-NOT: nf.index_bits
// CHECK-SAME: nf.schedule
// CHECK-LABEL: gpu.func @dynamic_matmul
// CHECK-NOT: nf.index_bits
// CHECK-SAME: nf.schedule
func.func @huge(%a: tensor<65536x32768xf16>, %b: tensor<32768x16xf16>) -> tensor<65536x16xf16> {
  %c = nf.matmul %a, %b : tensor<65536x32768xf16>, tensor<32768x16xf16> -> tensor<65536x16xf16>
  return %c : tensor<65536x16xf16>
}
func.func @dynamic(%a: tensor<?x64xf16>, %b: tensor<64x64xf16>) -> tensor<?x64xf16> {
  %c = nf.matmul %a, %b : tensor<?x64xf16>, tensor<64x64xf16> -> tensor<?x64xf16>
  return %c : tensor<?x64xf16>
}
