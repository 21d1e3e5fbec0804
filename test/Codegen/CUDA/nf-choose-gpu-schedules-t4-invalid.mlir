// A product schedule on tensor cores for a target without them (a T4,
// sm_75) is an error at the op, with the reason.
// RUN: nf-opt %s --nf-choose-gpu-schedules=arch=t4 -verify-diagnostics

func.func @tensor_cores_before_sm_80(%a: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{tensor cores need sm_80 or newer (the target is t4)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3"} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  return %c : tensor<64x64xf16>
}
