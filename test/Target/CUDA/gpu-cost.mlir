// nf-translate --nf-gpu-cost: each launch's predicted cost on a GPU target
// (normfuse/Target/GpuCost.h). A PTX target has no ptxas report, so the
// registers are unknown and blocks/SM count threads, blocks and shared
// memory; the bytes are each buffer a launch takes, once.
// RUN: nf-translate --nf-gpu-cost --cuda-arch=compute_90 %s | FileCheck %s
// RUN: nf-translate --nf-gpu-cost --cuda-arch=t4:arch=compute_75 %s | FileCheck %s --check-prefix=T4
// RUN: not nf-translate --nf-gpu-cost %S/Inputs/gpu-cost-dynamic.mlir 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// RUN: not nf-translate --nf-gpu-cost --cuda-arch=v100 %s 2>&1 | FileCheck %s --check-prefix=TARGET

// CHECK: GPU cost on h100-sxm (compute_90: 132 SMs of 2048 threads, 32 blocks, 65536 registers, 228 KiB shared memory; L2 50 MiB); registers unknown (compute_90 is PTX): blocks/SM count threads, blocks and shared memory only
// T4: GPU cost on t4 (compute_75: 40 SMs of 1024 threads, 16 blocks, 65536 registers, 64 KiB shared memory; L2 4 MiB); registers unknown

// 4096 x 1024 f32 rows: dy and x in, dx out (16.777 MB each), the
// statistics and the scale (0.037 MB), the partial parameter rows out
// (1056 x 2 x 1024 x 4 bytes: 8.651 MB), which the second kernel sums
// into ds and db.
// CHECK-LABEL: @ln_grad: 2 launches, 67.678 MB by the kernels, 50.377 MB in and out
// CHECK-NEXT: kernel grid units block  regs    smem    blocks/SM (limit)   waves         MB  schedule
// CHECK-NEXT: ln_grad_layer_norm_grad 1056 -  256     ?      32          8 (threads)    1.00     59.019  block-row-registers
// CHECK-NEXT: ln_grad_layer_norm_grad_params 32 -  1024     ?    7936          2 (threads)    0.12      8.659  partial-totals
// T4-LABEL: @ln_grad: 2 launches, 52.998 MB by the kernels, 50.377 MB in and out
// T4-NEXT: kernel
// T4-NEXT: ln_grad_layer_norm_grad 160 -  256     ?      32          4 (threads)    1.00     51.679
// T4-NEXT: ln_grad_layer_norm_grad_params 32 -  1024     ?    7936          1 (threads)    0.80
func.func @ln_grad(%dy: tensor<4096x1024xf32>, %x: tensor<4096x1024xf32>, %m: tensor<4096x1xf32>, %r: tensor<4096x1xf32>, %g: tensor<1024xf32>) -> (tensor<4096x1024xf32>, tensor<1024xf32>, tensor<1024xf32>) {
  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r scale %g {axis = 1 : i64} : (tensor<4096x1024xf32>, tensor<4096x1024xf32>, tensor<4096x1xf32>, tensor<4096x1xf32>, tensor<1024xf32>) -> (tensor<4096x1024xf32>, tensor<1024xf32>, tensor<1024xf32>)
  return %dx, %ds, %db : tensor<4096x1024xf32>, tensor<1024xf32>, tensor<1024xf32>
}

// A tensor-core product: 48 KiB of stages a block, 4 blocks an SM by
// shared memory (with 1 KiB reserved each) before registers are counted.
// CHECK-LABEL: @mm: 1 launch, 100.663 MB by the kernels, 100.663 MB in and out
// CHECK: mm_matmul 1024 -  128     ?   49152    4 (shared memory)    1.94    100.663  tensor-core-product tile=128x128x32 warps=2x2 stages=3
func.func @mm(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf16> {
  %c = nf.matmul %a, %b : tensor<4096x4096xf16>, tensor<4096x4096xf16> -> tensor<4096x4096xf16>
  return %c : tensor<4096x4096xf16>
}

// DYNAMIC: error: nf-gpu-cost needs static shapes: argument #0 of @dyn is 'tensor<?x64xf32>'
// TARGET: error: --cuda-arch: unknown GPU target 'v100'

// Nothing to launch costs nothing.
// RUN: echo 'func.func @none() { return }' | nf-translate --nf-gpu-cost | FileCheck %s --check-prefix=NONE
// NONE: registers (no kernels)
// NONE: @none: 0 launches, 0.000 MB by the kernels, 0.000 MB in and out
