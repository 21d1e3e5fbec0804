// A schedule written on an op (a norm, a gradient, a reduction, a product,
// an elementwise op, a linalg.generic, a pad) that cannot run it is an
// error at the op, with the reason, from the first step
// (nf-choose-gpu-schedules) and so from nf-lower-to-gpu, which lowers
// nothing then. sm_80: no clusters.
// RUN: nf-opt %s --nf-choose-gpu-schedules=arch=sm_80 -split-input-file -verify-diagnostics
// RUN: not nf-opt %s --nf-lower-to-gpu=arch=sm_80 -split-input-file 2>&1 | FileCheck %s
// CHECK-COUNT-61: error: '{{[a-z]+}}.{{[a-z0-9_]+}}' op cannot run under the schedule

func.func @unknown_kind(%x: tensor<4x1000xf32>) -> tensor<4x1000xf32> {
  // expected-error @+1 {{cannot run under the schedule 'fastest': unknown row-norm schedule kind 'fastest' (warp-rows, block-row-registers, block-row-streaming, split-row, channels-last-groups, cluster-row)}}
  %y, %r = nf.rms_norm %x {axis = 1 : i64, nf.gpu_schedule = "fastest"} : (tensor<4x1000xf32>) -> (tensor<4x1000xf32>, tensor<4x1xf32>)
  return %y : tensor<4x1000xf32>
}

// -----

func.func @unknown_word(%x: tensor<4x1000xf32>) -> tensor<4x1000xf32> {
  // expected-error @+1 {{unknown word 'threads=64' in the schedule}}
  %y, %r = nf.rms_norm %x {axis = 1 : i64, nf.gpu_schedule = "warp-rows threads=64"} : (tensor<4x1000xf32>) -> (tensor<4x1000xf32>, tensor<4x1xf32>)
  return %y : tensor<4x1000xf32>
}

// -----

func.func @vector_across_rows(%x: tensor<4x1001xf32>) -> tensor<4x1001xf32> {
  // expected-error @+1 {{vectors of 4 elements that do not divide the row (1001 elements; peel the rows)}}
  %y, %r = nf.rms_norm %x {axis = 1 : i64, nf.gpu_schedule = "block-row-registers threads-per-row=64 rows-per-block=1 vector=4 registers=4"} : (tensor<4x1001xf32>) -> (tensor<4x1001xf32>, tensor<4x1xf32>)
  return %y : tensor<4x1001xf32>
}

// -----

func.func @row_not_held(%x: tensor<4x4096xf32>) -> tensor<4x4096xf32> {
  // expected-error @+1 {{256 threads of 2 vectors hold 2048 of the row's 4096 elements}}
  %y, %r = nf.rms_norm %x {axis = 1 : i64, nf.gpu_schedule = "block-row-registers threads-per-row=256 rows-per-block=1 vector=4 registers=2"} : (tensor<4x4096xf32>) -> (tensor<4x4096xf32>, tensor<4x1xf32>)
  return %y : tensor<4x4096xf32>
}

// -----

func.func @wide_vector(%x: tensor<4x4096xf64>) -> tensor<4x4096xf64> {
  // expected-error @+1 {{a vector of 4 elements of 8 bytes is not a power of two of at most 16 bytes}}
  %y, %r = nf.rms_norm %x {axis = 1 : i64, nf.gpu_schedule = "split-row threads-per-row=256 rows-per-block=1 vector=4 registers=2 chunk=2048"} : (tensor<4x4096xf64>) -> (tensor<4x4096xf64>, tensor<4x1xf64>)
  return %y : tensor<4x4096xf64>
}

// -----

func.func @cluster_without_clusters(%x: tensor<4x32768xf32>) -> tensor<4x32768xf32> {
  // expected-error @+1 {{a cluster row on sm_80, which has no thread-block clusters}}
  %y, %r = nf.rms_norm %x {axis = 1 : i64, nf.gpu_schedule = "cluster-row threads-per-row=256 rows-per-block=1 vector=4 registers=8 cluster=4"} : (tensor<4x32768xf32>) -> (tensor<4x32768xf32>, tensor<4x1xf32>)
  return %y : tensor<4x32768xf32>
}

// -----

func.func @odd_threads(%x: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  // expected-error @+1 {{48 threads a row: a power of two up to 32, or whole warps}}
  %y, %r = nf.rms_norm %x {axis = 1 : i64, nf.gpu_schedule = "block-row-registers threads-per-row=48 rows-per-block=1 vector=4 registers=8"} : (tensor<4x1024xf32>) -> (tensor<4x1024xf32>, tensor<4x1xf32>)
  return %y : tensor<4x1024xf32>
}

// -----

func.func @chunk_not_held(%x: tensor<4x100000xf32>) -> tensor<4x100000xf32> {
  // expected-error @+1 {{chunks of 8192 elements that 512 threads of 2 vectors of 4 do not hold in whole vectors}}
  %y, %r = nf.rms_norm %x {axis = 1 : i64, nf.gpu_schedule = "split-row threads-per-row=512 rows-per-block=1 vector=4 registers=2 chunk=8192"} : (tensor<4x100000xf32>) -> (tensor<4x100000xf32>, tensor<4x1xf32>)
  return %y : tensor<4x100000xf32>
}

// -----

func.func @groups_for_rows(%x: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  // expected-error @+1 {{channels-last-groups is for group and instance norms in NHWC of a known channel count}}
  %y, %r = nf.rms_norm %x {axis = 1 : i64, nf.gpu_schedule = "channels-last-groups threads-per-row=256 rows-per-block=1 vector=4 registers=0 positions-per-part=1 finish-warps=8"} : (tensor<4x1024xf32>) -> (tensor<4x1024xf32>, tensor<4x1xf32>)
  return %y : tensor<4x1024xf32>
}

// -----

func.func @cluster_of_part_warps(%x: tensor<4x32768xf32>) -> tensor<4x32768xf32> {
  // expected-error @+1 {{a cluster of blocks of 16 threads (whole warps)}}
  %y, %r = nf.rms_norm %x {axis = 1 : i64, nf.gpu_schedule = "cluster-row threads-per-row=16 rows-per-block=1 vector=4 registers=8 cluster=8"} : (tensor<4x32768xf32>) -> (tensor<4x32768xf32>, tensor<4x1xf32>)
  return %y : tensor<4x32768xf32>
}

// -----

func.func @streamed_groups(%x: tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32> {
  // expected-error @+1 {{a streamed row for a group norm (only layer and RMS norms)}}
  %y, %m, %r = nf.group_norm %x {layout = #nf.layout<nhwc>, num_groups = 2 : i64, nf.gpu_schedule = "block-row-streaming threads-per-row=32 rows-per-block=1 vector=2 registers=0"} : (tensor<1x2x2x4xf32>) -> (tensor<1x2x2x4xf32>, tensor<1x2xf32>, tensor<1x2xf32>)
  return %y : tensor<1x2x2x4xf32>
}

// -----

func.func @one_kernel_on_rows(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{parts-from-residency, finish-warps and resident-blocks belong to channels-last-groups}}
  %y, %r = nf.rms_norm %x {axis = 1 : i64, nf.gpu_schedule = "warp-rows threads-per-row=16 rows-per-block=16 vector=4 registers=1 resident-blocks=2"} : (tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x1xf32>)
  return %y : tensor<4x64xf32>
}

// -----

func.func @one_kernel_too_many_vectors(%x: tensor<1x8x8x64xf32>) -> tensor<1x8x8x64xf32> {
  // expected-error @+1 {{a one-kernel thread of 16 vectors of 4 (1 to 32 elements)}}
  %y, %m, %r = nf.group_norm %x {layout = #nf.layout<nhwc>, num_groups = 32 : i64, nf.gpu_schedule = "channels-last-groups threads-per-row=16 rows-per-block=16 vector=4 registers=16 positions-per-part=16 resident-blocks=2"} : (tensor<1x8x8x64xf32>) -> (tensor<1x8x8x64xf32>, tensor<1x32xf32>, tensor<1x32xf32>)
  return %y : tensor<1x8x8x64xf32>
}

// -----

func.func @one_kernel_too_many_blocks(%x: tensor<1x8x8x64xf32>) -> tensor<1x8x8x64xf32> {
  // expected-error @+1 {{9 resident blocks of 256 threads on an SM of 2048}}
  %y, %m, %r = nf.group_norm %x {layout = #nf.layout<nhwc>, num_groups = 32 : i64, nf.gpu_schedule = "channels-last-groups threads-per-row=16 rows-per-block=16 vector=4 registers=2 positions-per-part=16 resident-blocks=9"} : (tensor<1x8x8x64xf32>) -> (tensor<1x8x8x64xf32>, tensor<1x32xf32>, tensor<1x32xf32>)
  return %y : tensor<1x8x8x64xf32>
}

// -----

func.func @grad_cluster(%dy: tensor<4x64xf32>, %x: tensor<4x64xf32>, %r: tensor<4x1xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{a cluster row on sm_80, which has no thread-block clusters}}
  %dx, %ds = nf.rms_norm_grad %dy, %x, %r {axis = 1 : i64, nf.gpu_schedule = "cluster-row threads-per-row=32 rows-per-block=1 vector=4 registers=1 cluster=2 chunk=128 max-blocks=4"} : (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x1xf32>) -> (tensor<4x64xf32>, tensor<64xf32>)
  return %dx : tensor<4x64xf32>
}

// -----

func.func @grad_chunk(%dy: tensor<4x64xf32>, %x: tensor<4x64xf32>, %r: tensor<4x1xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{chunks of 100 elements, not the 128 of the threads' vectors}}
  %dx, %ds = nf.rms_norm_grad %dy, %x, %r {axis = 1 : i64, nf.gpu_schedule = "split-row threads-per-row=32 rows-per-block=1 vector=4 registers=1 chunk=100 max-blocks=4"} : (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x1xf32>) -> (tensor<4x64xf32>, tensor<64xf32>)
  return %dx : tensor<4x64xf32>
}

// -----

func.func @grad_no_blocks(%dy: tensor<4x64xf32>, %x: tensor<4x64xf32>, %r: tensor<4x1xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{no max-blocks in the gradient's schedule}}
  %dx, %ds = nf.rms_norm_grad %dy, %x, %r {axis = 1 : i64, nf.gpu_schedule = "warp-rows threads-per-row=16 rows-per-block=16 vector=4 registers=1 chunk=64"} : (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x1xf32>) -> (tensor<4x64xf32>, tensor<64xf32>)
  return %dx : tensor<4x64xf32>
}

// -----

func.func @channels_first_for_last(%dy: tensor<16x64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{channels-first for channels last}}
  %db = nf.bias_add_grad %dy {layout = #nf.layout<nhwc>, nf.gpu_schedule = "channels-first threads-per-row=256 rows-per-block=1 vector=4 registers=1 max-blocks=8"} : tensor<16x64xf32> -> tensor<64xf32>
  return %db : tensor<64xf32>
}

// -----

func.func @channels_not_covered(%dy: tensor<16x64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{8 threads of 1 vectors of 4 cover fewer than the 64 channels}}
  %db = nf.bias_add_grad %dy {layout = #nf.layout<nhwc>, nf.gpu_schedule = "channels-last threads-per-row=8 rows-per-block=32 vector=4 registers=1 max-blocks=8"} : tensor<16x64xf32> -> tensor<64xf32>
  return %db : tensor<64xf32>
}

// -----

// How the partial sums are added: 1 to 32 warps, 1 to 16 parts in flight
// a lane; the same for a norm gradient's parameter totals.
func.func @totals_of_no_warps(%dy: tensor<16x64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{totals: 0 warps (1 to 32)}}
  %db = nf.bias_add_grad %dy {layout = #nf.layout<nhwc>, nf.gpu_schedule = "channels-last threads-per-row=16 rows-per-block=16 vector=4 registers=1 max-blocks=8 totals-warps=0 totals-unroll=4"} : tensor<16x64xf32> -> tensor<64xf32>
  return %db : tensor<64xf32>
}

// -----

func.func @totals_of_too_many_slots(%dy: tensor<16x64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{totals: 17 parts in flight a lane (1 to 16)}}
  %db = nf.bias_add_grad %dy {layout = #nf.layout<nhwc>, nf.gpu_schedule = "channels-last threads-per-row=16 rows-per-block=16 vector=4 registers=1 max-blocks=8 totals-warps=8 totals-unroll=17"} : tensor<16x64xf32> -> tensor<64xf32>
  return %db : tensor<64xf32>
}

// -----

func.func @parameter_totals_past_a_block(%dy: tensor<4x64xf32>, %x: tensor<4x64xf32>, %r: tensor<4x1xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{parameter totals: 33 warps (1 to 32)}}
  %dx, %ds = nf.rms_norm_grad %dy, %x, %r {axis = 1 : i64, nf.gpu_schedule = "warp-rows threads-per-row=16 rows-per-block=16 vector=4 registers=1 chunk=64 max-blocks=4 params-warps=33 params-unroll=4"} : (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x1xf32>) -> (tensor<4x64xf32>, tensor<64xf32>)
  return %dx : tensor<4x64xf32>
}

// -----

func.func @channels_first_part_warps(%dy: tensor<2x8x7x7xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{48 threads a block: a power of two up to 32, or whole warps}}
  %db = nf.bias_add_grad %dy {layout = #nf.layout<nchw>, nf.gpu_schedule = "channels-first threads-per-row=48 rows-per-block=1 vector=1 registers=1 max-blocks=8"} : tensor<2x8x7x7xf32> -> tensor<8xf32>
  return %db : tensor<8xf32>
}

// -----

func.func @group_grad_dx_vector(%dy: tensor<2x4x4x6xf32>, %m: tensor<2x3xf32>) -> tensor<2x4x4x6xf32> {
  // expected-error @+1 {{dx vectors of 4 elements for runs of 6 (a power of two of at most 16 bytes dividing them)}}
  %dx, %ds, %db = nf.group_norm_grad %dy, %dy, %m, %m {layout = #nf.layout<nhwc>, num_groups = 3 : i64, nf.gpu_schedule = "channels-last threads-per-row=4 rows-per-block=64 vector=2 registers=1 max-blocks=8 dx-block=256 dx-vector=4 dx-min-blocks-per-sm=4 finish-block=256"} : (tensor<2x4x4x6xf32>, tensor<2x4x4x6xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x4x4x6xf32>, tensor<6xf32>, tensor<6xf32>)
  return %dx : tensor<2x4x4x6xf32>
}

// -----

func.func @group_grad_big_dx_blocks(%dy: tensor<2x4x4x6xf32>, %m: tensor<2x3xf32>) -> tensor<2x4x4x6xf32> {
  // expected-error @+1 {{dx blocks of 1024 threads, 4 an SM}}
  %dx, %ds, %db = nf.group_norm_grad %dy, %dy, %m, %m {layout = #nf.layout<nhwc>, num_groups = 3 : i64, nf.gpu_schedule = "channels-last threads-per-row=4 rows-per-block=64 vector=2 registers=1 max-blocks=8 dx-block=1024 dx-vector=2 dx-min-blocks-per-sm=4 finish-block=256"} : (tensor<2x4x4x6xf32>, tensor<2x4x4x6xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x4x4x6xf32>, tensor<6xf32>, tensor<6xf32>)
  return %dx : tensor<2x4x4x6xf32>
}

// -----

func.func @group_grad_one_kernel_short_rows(%dy: tensor<2x4x4x6xf32>, %m: tensor<2x3xf32>) -> tensor<2x4x4x6xf32> {
  // expected-error @+1 {{one-kernel rows of 2 vectors of 2 elements for 6 channels (vectors of a power of two of at most 16 bytes, covering the channels)}}
  %dx, %ds, %db = nf.group_norm_grad %dy, %dy, %m, %m {layout = #nf.layout<nhwc>, num_groups = 3 : i64, nf.gpu_schedule = "channels-last threads-per-row=4 rows-per-block=64 vector=2 registers=1 max-blocks=8 dx-block=256 dx-vector=2 dx-min-blocks-per-sm=4 finish-block=256 one-kernel-threads-per-row=2 one-kernel-rows=16 one-kernel-vector=2 one-kernel-min-part=2"} : (tensor<2x4x4x6xf32>, tensor<2x4x4x6xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x4x4x6xf32>, tensor<6xf32>, tensor<6xf32>)
  return %dx : tensor<2x4x4x6xf32>
}

// -----

func.func @group_grad_one_kernel_part_warp(%dy: tensor<2x4x4x6xf32>, %m: tensor<2x3xf32>) -> tensor<2x4x4x6xf32> {
  // expected-error @+1 {{one-kernel blocks of 3 x 5 threads (whole warps, at most 1024)}}
  %dx, %ds, %db = nf.group_norm_grad %dy, %dy, %m, %m {layout = #nf.layout<nhwc>, num_groups = 3 : i64, nf.gpu_schedule = "channels-last threads-per-row=4 rows-per-block=64 vector=2 registers=1 max-blocks=8 dx-block=256 dx-vector=2 dx-min-blocks-per-sm=4 finish-block=256 one-kernel-threads-per-row=3 one-kernel-rows=5 one-kernel-vector=2 one-kernel-min-part=2"} : (tensor<2x4x4x6xf32>, tensor<2x4x4x6xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x4x4x6xf32>, tensor<6xf32>, tensor<6xf32>)
  return %dx : tensor<2x4x4x6xf32>
}

// -----

func.func @group_grad_one_kernel_empty_parts(%dy: tensor<2x4x4x6xf32>, %m: tensor<2x3xf32>) -> tensor<2x4x4x6xf32> {
  // expected-error @+1 {{one-kernel parts of at least 0 positions (at least 1)}}
  %dx, %ds, %db = nf.group_norm_grad %dy, %dy, %m, %m {layout = #nf.layout<nhwc>, num_groups = 3 : i64, nf.gpu_schedule = "channels-last threads-per-row=4 rows-per-block=64 vector=2 registers=1 max-blocks=8 dx-block=256 dx-vector=2 dx-min-blocks-per-sm=4 finish-block=256 one-kernel-threads-per-row=3 one-kernel-rows=32 one-kernel-vector=2 one-kernel-min-part=0"} : (tensor<2x4x4x6xf32>, tensor<2x4x4x6xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x4x4x6xf32>, tensor<6xf32>, tensor<6xf32>)
  return %dx : tensor<2x4x4x6xf32>
}

// -----

func.func @tensor_cores_for_f64(%a: tensor<64x64xf64>) -> tensor<64x64xf64> {
  // expected-error @+1 {{the tensor-core kernel cannot stage these operands (both of one type, consecutive along one of their dimensions, summed in f32)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3"} : tensor<64x64xf64>, tensor<64x64xf64> -> tensor<64x64xf64>
  return %c : tensor<64x64xf64>
}

// -----

func.func @tensor_cores_for_f32(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{f32 operands on tensor cores only as tf32}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3"} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// -----

func.func @tf32_for_f16(%a: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{tf32 for operands that are not f32}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3 tf32"} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  return %c : tensor<64x64xf16>
}

// -----

func.func @wgmma_on_sm_80(%a: tensor<256x256xf16>) -> tensor<256x256xf16> {
  // expected-error @+1 {{wgmma needs sm_90a (the target is}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma"} : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  return %c : tensor<256x256xf16>
}

// -----

func.func @partial_warp_fragments(%a: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{warps of 32x8 outputs (whole 16x16 fragments each)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=64x64x32 warps=2x8 stages=3"} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  return %c : tensor<64x64xf16>
}

// -----

func.func @stages_over_shared_memory(%a: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  // expected-error @+1 {{8 stages of 131072 bytes (a block of a100 has}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=256x256x128 warps=4x4 stages=8"} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
  return %c : tensor<64x64xbf16>
}

// -----

func.func @finish_vector_across_rows(%a: tensor<70x1000xf16>, %b: tensor<1000x20xf16>) -> tensor<70x20xf16> {
  // expected-error @+1 {{a split K's finish vector of 8 results (a power of two of at most 16 bytes dividing consecutive rows of 20)}}
  %c = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3 split-k=4 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"} : tensor<70x1000xf16>, tensor<1000x20xf16> -> tensor<70x20xf16>
  return %c : tensor<70x20xf16>
}

// -----

// A product's blocks loop over its tiles past max-blocks: at least one, at
// most a grid's 65535.
func.func @product_max_blocks_zero(%a: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{max-blocks=0 (1 to 65535)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=64x64x32 warps=2x2 stages=3 max-blocks=0"} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  return %c : tensor<64x64xf16>
}

// -----

// A second tile is for sizes met at launch: only with K split then.
func.func @small_tile_without_split_at_launch(%a: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{a small tile (small-tile=MxNxK/stages/WMxWN, used below small-tile-below tiles) only with a split of K at launch (split-k-max), and both words}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=128x128x32 warps=2x2 stages=3 small-tile=64x64x32/3/2x2 small-tile-below=108"} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  return %c : tensor<64x64xf16>
}

// -----

func.func @small_tile_of_partial_fragments(%a: tensor<?x64xf16>, %b: tensor<64x64xf16>) -> tensor<?x64xf16> {
  // expected-error @+1 {{small-tile=64x64x32/3/2x8: warps of 32x8 outputs (whole 16x16 fragments each)}}
  %c = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x64x32 warps=2x2 stages=3 split-k-max=16 split-k-blocks=216 split-k-min-tiles=8 small-tile=64x64x32/3/2x8 small-tile-below=108 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"} : tensor<?x64xf16>, tensor<64x64xf16> -> tensor<?x64xf16>
  return %c : tensor<?x64xf16>
}

// -----

func.func @small_tile_text(%a: tensor<?x64xf16>, %b: tensor<64x64xf16>) -> tensor<?x64xf16> {
  // expected-error @+1 {{'small-tile=64x64x32/2x2' is not a tile MxNxK/stages/WMxWN}}
  %c = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=128x64x32 warps=2x2 stages=3 split-k-max=16 split-k-blocks=216 split-k-min-tiles=8 small-tile=64x64x32/2x2 small-tile-below=108 finish-block=256 finish-vector=8 finish-min-blocks-per-sm=4"} : tensor<?x64xf16>, tensor<64x64xf16> -> tensor<?x64xf16>
  return %c : tensor<?x64xf16>
}

// -----

// The SIMT kernel splits K of f32 sums only (the finish reads f32).
func.func @simt_split_k_f64(%a: tensor<64x64xf64>) -> tensor<64x64xf64> {
  // expected-error @+1 {{split-k=2 (at least 1; the SIMT kernel splits K of f32 sums only)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tiled-product tile=64x64x8 thread=4x4 split-k=2 finish-block=256 finish-vector=2 finish-min-blocks-per-sm=4"} : tensor<64x64xf64>, tensor<64x64xf64> -> tensor<64x64xf64>
  return %c : tensor<64x64xf64>
}

// -----

func.func @simt_threads_across_tile(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{threads of 3x4 sums (powers of two dividing the tile)}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tiled-product tile=64x64x8 thread=3x4"} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// -----

func.func @simt_sums_over_registers(%x: tensor<2x9x7x16xf32>, %w: tensor<24x3x3x16xf32>) -> tensor<2x9x7x24xf32> {
  // expected-error @+1 {{16x8 sums of 4 bytes a thread (more than 64 registers)}}
  %y = nf.conv2d %x, %w {layout = #nf.layout<nhwc>, padding = array<i64: 1, 1, 1, 1>, nf.gpu_schedule = "tiled-product tile=128x128x8 thread=16x8"} : tensor<2x9x7x16xf32>, tensor<24x3x3x16xf32> -> tensor<2x9x7x24xf32>
  return %y : tensor<2x9x7x24xf32>
}

// -----

func.func @no_warps(%a: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{a tensor-core-product schedule has tile=MxNxK and warps=AxB}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tensor-core-product tile=64x64x32"} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  return %c : tensor<64x64xf16>
}

// -----

func.func @tile_of_two(%a: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{'tile=64x64' is not a tile MxNxK}}
  %c = nf.matmul %a, %a {nf.gpu_schedule = "tiled-product tile=64x64 thread=4x4"} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  return %c : tensor<64x64xf16>
}

// -----

func.func @elementwise_vector_unpeeled(%x: tensor<33x777xf32>) -> tensor<33x777xf32> {
  // expected-error @+1 {{vectors of 4 elements that do not divide 25641 elements (peel them)}}
  %y = nf.gelu %x {nf.gpu_schedule = "grid-stride block=256 vector=4 min-blocks-per-sm=4"} : tensor<33x777xf32>
  return %y : tensor<33x777xf32>
}

// -----

func.func @elementwise_vector_over_16_bytes(%x: tensor<8x1024xf32>) -> tensor<8x1024xf32> {
  // expected-error @+1 {{vectors of 8 elements of 4 bytes (a power of two of at most 16 bytes)}}
  %y = nf.relu %x {nf.gpu_schedule = "grid-stride block=256 vector=8 min-blocks-per-sm=4"} : tensor<8x1024xf32>
  return %y : tensor<8x1024xf32>
}

// -----

func.func @elementwise_blocks_over_an_sm(%x: tensor<8x1024xf32>) -> tensor<8x1024xf32> {
  // expected-error @+1 {{blocks of 1024 threads, 4 an SM}}
  %y = nf.silu %x {nf.gpu_schedule = "grid-stride block=1024 vector=4 min-blocks-per-sm=4"} : tensor<8x1024xf32>
  return %y : tensor<8x1024xf32>
}

// -----

func.func @elementwise_kind(%x: tensor<8x1024xf32>) -> tensor<8x1024xf32> {
  // expected-error @+1 {{an elementwise op's schedule starts with grid-stride}}
  %y = nf.relu %x {nf.gpu_schedule = "warp-rows threads-per-row=32"} : tensor<8x1024xf32>
  return %y : tensor<8x1024xf32>
}

// -----

func.func @batch_norm_without_its_pass(%x: tensor<2x8x7x7xf32>, %rm: tensor<8xf32>) -> tensor<2x8x7x7xf32> {
  // expected-error @+1 {{no elementwise pass (elementwise-*)}}
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x running(%rm, %rm) {layout = #nf.layout<nchw>, nf.gpu_schedule = "channels-first threads-per-row=64 rows-per-block=1 vector=1 registers=1 max-blocks=8"} : (tensor<2x8x7x7xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x7x7xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %y : tensor<2x8x7x7xf32>
}

// -----

func.func @batch_norm_pass_across_the_end(%x: tensor<3x5x7x7xf32>, %rm: tensor<5xf32>) -> tensor<3x5x7x7xf32> {
  // expected-error @+1 {{elementwise pass: vectors of 4 elements that do not divide 735 elements (peel them)}}
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x running(%rm, %rm) {layout = #nf.layout<nchw>, nf.gpu_schedule = "channels-first threads-per-row=64 rows-per-block=1 vector=1 registers=1 max-blocks=8 elementwise-block=256 elementwise-vector=4 elementwise-min-blocks-per-sm=4"} : (tensor<3x5x7x7xf32>, tensor<5xf32>, tensor<5xf32>) -> (tensor<3x5x7x7xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>)
  return %y : tensor<3x5x7x7xf32>
}

// -----

func.func @bias_add_grad_with_a_pass(%dy: tensor<2x8x7x7xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{an elementwise pass for an op without one}}
  %db = nf.bias_add_grad %dy {layout = #nf.layout<nchw>, nf.gpu_schedule = "channels-first threads-per-row=64 rows-per-block=1 vector=1 registers=1 max-blocks=8 elementwise-block=256 elementwise-vector=4 elementwise-min-blocks-per-sm=4"} : tensor<2x8x7x7xf32> -> tensor<8xf32>
  return %db : tensor<8xf32>
}

// -----

// The batch norms' one kernel (NCHW) normalizes itself, is theirs alone,
// takes its moments in whole warps, at most 16 vectors a thread at
// once.
func.func @batch_norm_one_kernel_with_a_pass(%x: tensor<2x8x7x7xf32>, %rm: tensor<8xf32>) -> tensor<2x8x7x7xf32> {
  // expected-error @+1 {{an elementwise pass in one kernel (it normalizes itself)}}
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x running(%rm, %rm) {layout = #nf.layout<nchw>, nf.gpu_schedule = "channels-first-one-kernel threads-per-row=256 rows-per-block=1 vector=1 registers=8 max-blocks=864 elementwise-block=256 elementwise-vector=1 elementwise-min-blocks-per-sm=4"} : (tensor<2x8x7x7xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x7x7xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %y : tensor<2x8x7x7xf32>
}

// -----

func.func @bias_add_grad_in_one_kernel(%dy: tensor<2x8x7x7xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{channels-first-one-kernel for an op other than batch_norm_training and batch_norm_grad}}
  %db = nf.bias_add_grad %dy {layout = #nf.layout<nchw>, nf.gpu_schedule = "channels-first-one-kernel threads-per-row=256 rows-per-block=1 vector=1 registers=8 max-blocks=864"} : tensor<2x8x7x7xf32> -> tensor<8xf32>
  return %db : tensor<8xf32>
}

// -----

func.func @batch_norm_one_kernel_of_part_warps(%x: tensor<2x8x7x7xf32>, %rm: tensor<8xf32>) -> tensor<2x8x7x7xf32> {
  // expected-error @+1 {{48 threads a block: whole warps}}
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x running(%rm, %rm) {layout = #nf.layout<nchw>, nf.gpu_schedule = "channels-first-one-kernel threads-per-row=48 rows-per-block=1 vector=1 registers=8 max-blocks=864"} : (tensor<2x8x7x7xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x7x7xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %y : tensor<2x8x7x7xf32>
}

// -----

func.func @batch_norm_one_kernel_of_many_vectors(%x: tensor<2x8x7x7xf32>, %rm: tensor<8xf32>) -> tensor<2x8x7x7xf32> {
  // expected-error @+1 {{17 vectors in flight a thread (1 to 16)}}
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x running(%rm, %rm) {layout = #nf.layout<nchw>, nf.gpu_schedule = "channels-first-one-kernel threads-per-row=256 rows-per-block=1 vector=1 registers=17 max-blocks=864"} : (tensor<2x8x7x7xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x7x7xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %y : tensor<2x8x7x7xf32>
}

// -----

// A linalg.generic that reads an operand across (a transpose) takes one
// element at a time.
func.func @vectors_of_a_transpose(%x: tensor<8x4xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{vectors of 4 elements of an operand read across (one element at a time)}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) attrs = {nf.gpu_schedule = "grid-stride block=256 vector=4 min-blocks-per-sm=4"} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// One with a broadcast operand: its vectors lie within rows, no tail.
func.func @peeled_rows(%x: tensor<3x7xf32>, %r: tensor<1x7xf32>) -> tensor<3x7xf32> {
  %e = tensor.empty() : tensor<3x7xf32>
  // expected-error @+1 {{a peel of vectors within rows (the operands are not all laid out as the result)}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %r : tensor<3x7xf32>, tensor<1x7xf32>) outs(%e : tensor<3x7xf32>) attrs = {nf.gpu_schedule = "grid-stride block=256 vector=4 peeled min-blocks-per-sm=4"} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<3x7xf32>
  return %y : tensor<3x7xf32>
}

// -----

// A pad is copied one element at a time.
func.func @vectors_of_a_pad(%x: tensor<2x3xf32>) -> tensor<3x6xf32> {
  %cst = arith.constant 0.0 : f32
  // expected-error @+1 {{vectors of 2 elements in a window copy (one element at a time)}}
  %p = tensor.pad %x low[0, 1] high[1, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } {nf.gpu_schedule = "grid-stride block=256 vector=2 min-blocks-per-sm=4"} : tensor<2x3xf32> to tensor<3x6xf32>
  return %p : tensor<3x6xf32>
}

// -----

// A linalg reduction whose body must run in order (out * 0.5 + x: no
// combiner) takes a thread a result.
func.func @ordered_body_on_warps(%x: tensor<4x64xf32>, %i: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a body that must run in order on more than a thread per result (thread-per-result, in one part)}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%i : tensor<4xf32>) attrs = {nf.gpu_schedule = "warp-per-result block=256"} {
  ^bb0(%a: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %m = arith.mulf %o, %half : f32
    %s = arith.addf %m, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Vectors on columns: only warp and block rows load them.
func.func @vectors_on_columns(%x: tensor<64x4xf32>, %i: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{vectors of 4 elements on a reduction other than warp or block rows}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x4xf32>) outs(%i : tensor<4xf32>) attrs = {nf.gpu_schedule = "block-columns block=256 vector=4"} {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Rows of 6 do not start on whole vectors of 4.
func.func @vectors_across_rows(%x: tensor<4x6xf32>, %i: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{vectors of 4 elements that do not divide rows of 6}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x6xf32>) outs(%i : tensor<4xf32>) attrs = {nf.gpu_schedule = "warp-per-result block=256 vector=4"} {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Parts of each result need a known count of results.
func.func @parts_of_unknown_results(%x: tensor<?x64xf32>, %i: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{parts of an unknown count of results}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x64xf32>) outs(%i : tensor<?xf32>) attrs = {nf.gpu_schedule = "block-per-result block=256 splits=4"} {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
