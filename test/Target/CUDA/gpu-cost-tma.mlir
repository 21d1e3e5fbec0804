// nf-translate --nf-gpu-cost on a product whose operands TMA loads stage:
// the bytes count each buffer once, a tensor map's as its buffer's (A
// 200 x 72 and B 72 x 136 f16 in, 200 x 136 out: 0.103 MB), not twice.
// RUN: nf-translate --nf-gpu-cost --cuda-arch=compute_90a %s | FileCheck %s

// CHECK-LABEL: @mlp: 1 launch, 0.103 MB by the kernels, 0.103 MB in and out
// CHECK: mlp_matmul {{.*}} 0.103  tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma
func.func @mlp(%a: tensor<200x72xf16>, %b: tensor<72x136xf16>) -> tensor<200x136xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma tma"} : tensor<200x72xf16>, tensor<72x136xf16> -> tensor<200x136xf16>
  return %p : tensor<200x136xf16>
}
