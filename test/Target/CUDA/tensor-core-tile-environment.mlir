// NF_CUDA_TENSOR_CORE_TILE (a tuning experiment) sets the tile of large
// tensor-core products: "MxNxK/stages/WMxWN" then, in this order, "/wgmma",
// "/tma", "/ws", "/mc" and "/pp", each word needing the ones it names
// ("/tma" and "/ws" the "/wgmma", "/mc" the "/tma" and "/ws", "/pp" the
// "/ws"). A value that does not parse, or
// that names a tile the target cannot run, is ignored, saying why; the
// schedule layer's tile stands.
// RUN: env NF_CUDA_TENSOR_CORE_TILE=128x128x64/4/4x1/wgmma/tma/ws/pp nf-translate --nf-to-cuda --cuda-arch=sm_90a %s 2>&1 | FileCheck %s --check-prefix=PP
// RUN: env NF_CUDA_TENSOR_CORE_TILE=128x128x64/4/4x1/wgmma/tma/ws/mc/pp nf-translate --nf-to-cuda --cuda-arch=sm_90a %s 2>&1 | FileCheck %s --check-prefix=MCPP
// RUN: env NF_CUDA_TENSOR_CORE_TILE=128x128x64/4/4x1/wgmma/tma/pp/ws nf-translate --nf-to-cuda --cuda-arch=sm_90a %s 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: env NF_CUDA_TENSOR_CORE_TILE=128x128x64/4/4x1/wgmma/ws nf-translate --nf-to-cuda --cuda-arch=sm_90a %s 2>&1 | FileCheck %s --check-prefix=COPIES
// RUN: env NF_CUDA_TENSOR_CORE_TILE=128x128x64/4/4x1/wgmma/ws/mc nf-translate --nf-to-cuda --cuda-arch=sm_90a %s 2>&1 | FileCheck %s --check-prefix=MCNOTMA
// RUN: env NF_CUDA_TENSOR_CORE_TILE=128x128x64/4/4x1/wgmma/pp nf-translate --nf-to-cuda --cuda-arch=sm_90a %s 2>&1 | FileCheck %s --check-prefix=NOWS
// RUN: env NF_CUDA_TENSOR_CORE_TILE=128x256x64/3/8x1/wgmma/tma/ws/pp nf-translate --nf-to-cuda --cuda-arch=sm_90a %s 2>&1 | FileCheck %s --check-prefix=SMEM
// RUN: env NF_CUDA_TENSOR_CORE_TILE=256x128x16/3/16x1/wgmma/tma/ws/pp nf-translate --nf-to-cuda --cuda-arch=sm_90a %s 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: env NF_CUDA_TENSOR_CORE_TILE=128x128x64/4/4x1/wgmma/tma/ws/pp nf-translate --nf-to-cuda --cuda-arch=sm_80 %s 2>&1 | FileCheck %s --check-prefix=SM80

// PP-NOT: ignoring
// PP: // big_matmul: tensor-core-product tile=128x128x64 warps=4x1 stages=4 wgmma tma warp-specialized pingpong{{$}}
// PP-NEXT: __launch_bounds__(384, 1) big_matmul(
// MCPP: // big_matmul: tensor-core-product tile=128x128x64 warps=4x1 stages=4 wgmma tma warp-specialized multicast pingpong{{$}}
// MCPP-NEXT: __cluster_dims__(2, 1, 1) big_matmul(

// COPIES-NOT: ignoring
// COPIES: // big_matmul: tensor-core-product tile=128x128x64 warps=4x1 stages=4 wgmma warp-specialized{{$}}
// COPIES-NEXT: __launch_bounds__(256, 1) big_matmul(
// MCNOTMA: normfuse: ignoring NF_CUDA_TENSOR_CORE_TILE=128x128x64/4/4x1/wgmma/ws/mc (not MxNxK/stages/WMxWN[/wgmma[/tma][/ws[/mc][/pp]]])

// ORDER: normfuse: ignoring NF_CUDA_TENSOR_CORE_TILE=128x128x64/4/4x1/wgmma/tma/pp/ws (not MxNxK/stages/WMxWN[/wgmma[/tma][/ws[/mc][/pp]]])
// ORDER: // big_matmul: tensor-core-product tile=128x128x32 warps=2x2 stages=3{{$}}
// NOWS: normfuse: ignoring NF_CUDA_TENSOR_CORE_TILE=128x128x64/4/4x1/wgmma/pp (not MxNxK/stages/WMxWN[/wgmma[/tma][/ws[/mc][/pp]]])
// SMEM: normfuse: ignoring NF_CUDA_TENSOR_CORE_TILE=128x256x64/3/8x1/wgmma/tma/ws/pp (3 stages of 49168 bytes and a result tile of 65536 bytes a team (a block of h100-sxm has 232448))
// THREADS: normfuse: ignoring NF_CUDA_TENSOR_CORE_TILE=256x128x16/3/16x1/wgmma/tma/ws/pp (blocks of 1152 threads (at most 1024))
// SM80: normfuse: ignoring NF_CUDA_TENSOR_CORE_TILE=128x128x64/4/4x1/wgmma/tma/ws/pp (wgmma needs sm_90a (the target is a100, which compiles for sm_80))
// SM80: // big_matmul: tensor-core-product tile=128x128x32 warps=2x2 stages=3{{$}}
func.func @big(%a: tensor<2048x1024xf16>, %b: tensor<1024x2048xf16>) -> tensor<2048x2048xf16> {
  %p = nf.matmul %a, %b : tensor<2048x1024xf16>, tensor<1024x2048xf16> -> tensor<2048x2048xf16>
  return %p : tensor<2048x2048xf16>
}
