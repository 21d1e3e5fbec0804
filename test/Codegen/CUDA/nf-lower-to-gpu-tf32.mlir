// f32 products run on tensor cores as tf32 only when asked (allow-tf32;
// PyTorch's allow_tf32), on sm_80 and newer: the tensor-core kernel of f16
// and bf16 (nf-lower-to-gpu-tensor-core.mlir) with 16-byte chunks of 4
// elements and mma.sync m16n8k8 .tf32, 8 of K a step. A, whose K is
// consecutive, comes by ldmatrix (32-bit elements, no .trans); B, whose N
// is consecutive (K-major), element by element, as ldmatrix .trans
// transposes 16-bit elements only. The prelude rounds each operand element
// to tf32 (cvt.rna) in the mma. By default, and before sm_80, f32 stays on
// the SIMT kernel. The simulator's tests run these kernels against float64
// of tf32-rounded operands (ProductsOnSimTest, Tf32ProductOnSimTest).
// RUN: nf-opt %s --nf-lower-to-gpu=allow-tf32=true | FileCheck %s
// RUN: nf-opt %s --nf-lower-to-gpu | FileCheck %s --check-prefix=OFF
// RUN: nf-opt %s --nf-lower-to-gpu="allow-tf32=true arch=sm_75" | FileCheck %s --check-prefix=OFF
// RUN: nf-translate --nf-to-cuda --allow-tf32 %s | FileCheck %s --check-prefix=CUDA
// RUN: nf-translate --nf-gpu-cost --allow-tf32 --cuda-arch=a100 %s | FileCheck %s --check-prefix=COST
// A block of 80 KiB holds two stages of the large tile (64 KiB), not three.
// RUN: nf-opt %s --nf-lower-to-gpu="allow-tf32=true arch=sm_86:smem-block=80KiB" | FileCheck %s --check-prefix=SMEM80

// OFF: nf.schedule = "tiled-product tile=64x64x8 thread=4x4"

// CHECK-LABEL: gpu.func @matmul_77x136x40_matmul
// Three stages of A (64 x 32) and of B (32 x 64) tiles of f32: 48 KiB.
// CHECK-SAME: workgroup(%[[S:.+]] : memref<12288xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: nf.schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3 tf32"
// Copies of 16 bytes: 4 elements.
// CHECK: nvgpu.device_async_copy %{{.+}}, %[[S]][%{{.+}}], 4, %{{.+}} {bypassL1}
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait %{{.+}} {numGroups = 1 : i32}
// Per 8 of K: A's two fragments by ldmatrix .x4, B's two pairs of n8
// fragments four elements each.
// CHECK: nvgpu.ldmatrix %[[S]][%{{.+}}] {numTiles = 4 : i32, transpose = false} : {{.+}} -> vector<4x1xf32>
// CHECK: nvgpu.ldmatrix %[[S]][%{{.+}}] {numTiles = 4 : i32, transpose = false} : {{.+}} -> vector<4x1xf32>
// CHECK-COUNT-4: memref.load %[[S]][%{{.+}}]
// CHECK-NEXT: vector.from_elements %{{.+}} : vector<4x1xf32>
// CHECK-COUNT-4: memref.load %[[S]][%{{.+}}]
// CHECK-NEXT: vector.from_elements %{{.+}} : vector<4x1xf32>
// CHECK-COUNT-8: nvgpu.mma.sync({{.+}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
func.func @matmul_77x136x40(%a: tensor<77x40xf32>, %b: tensor<40x136xf32>) -> tensor<77x136xf32> {
  %c = nf.matmul %a, %b : tensor<77x40xf32>, tensor<40x136xf32> -> tensor<77x136xf32>
  return %c : tensor<77x136xf32>
}

// A wave of 128 x 128 tiles: three stages of 128 x 32 f32 tiles of A and B,
// 96 KiB of dynamic shared memory, within the 163 KiB an A100's block may
// have.
// CHECK-LABEL: gpu.func @matmul_large_matmul
// CHECK-SAME: nf.schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3 tf32"
// CUDA: nf_vec<float, 4> [[A:v[0-9]+]] = nf_ldmatrix<4, false>(
// CUDA: nf_mma_m16n8k8_tf32([[A]],
// SMEM80: nf.schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=2 tf32"
// COST: matmul_large_matmul {{.+}} 98304 {{.+}} tensor-core-product tile=128x128x32 warps=2x2 stages=3 tf32
func.func @matmul_large(%a: tensor<2048x512xf32>, %b: tensor<2048x512xf32>) -> tensor<2048x2048xf32> {
  %c = nf.matmul %a, %b {transpose_rhs} : tensor<2048x512xf32>, tensor<2048x512xf32> -> tensor<2048x2048xf32>
  return %c : tensor<2048x2048xf32>
}
