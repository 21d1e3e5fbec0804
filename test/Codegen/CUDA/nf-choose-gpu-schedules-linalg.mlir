// What TOSA leaves in linalg and tensor ops gets its schedule first too
// (inside nf-lower-to-gpu: after TOSA is lowered to linalg, the
// elementwise ops fused and named ops generalized). Each all-parallel
// linalg.generic gets the elementwise kernels' schedule, its vectors
// narrowed to what its operands allow; each pad and each chain of
// insert_slices (a concat: the schedule is on its last op) a copy of one
// element at a time. A schedule written on a generic is kept and followed.
// (The rows of an operand a slice reads contiguously narrow the vectors
// too: nf-lower-to-gpu-linalg.mlir's slices.)
// RUN: nf-opt %s --nf-choose-gpu-schedules -split-input-file | FileCheck %s
// RUN: nf-opt %s --nf-lower-to-gpu -split-input-file | FileCheck %s --check-prefix=LOWERED

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (0, d1)>

// Every operand laid out as the result: 16-byte vectors over the flat
// tensor (4 of f32; f16 inputs are not the widest).
// CHECK-LABEL: func.func @generics
// CHECK: linalg.generic {{.+}} attrs = {nf.gpu_schedule = "grid-stride block=256 vector=4 min-blocks-per-sm=4"}
// A transposed operand is read across: one element at a time.
// CHECK: linalg.generic {{.+}} attrs = {nf.gpu_schedule = "grid-stride block=256 vector=1 min-blocks-per-sm=4"}
// A broadcast row: vectors within the rows of 1000 bf16 (8 divide them).
// CHECK: linalg.generic {{.+}} attrs = {nf.gpu_schedule = "grid-stride block=256 vector=8 min-blocks-per-sm=4"}
// The one written by hand is kept, and the lowering follows it.
// CHECK: linalg.generic {{.+}} attrs = {nf.gpu_schedule = "grid-stride block=128 vector=2 min-blocks-per-sm=2"}
// LOWERED-LABEL: gpu.func @generics_generic_3(
// LOWERED-SAME: known_block_size = array<i32: 128, 1, 1>
// LOWERED-SAME: nf.min_blocks_per_sm = 2
// LOWERED-SAME: nf.schedule = "grid-stride block=128 vector=2 min-blocks-per-sm=2"
// LOWERED: vector.load %{{.+}} : memref<?xf32>, vector<2xf32>
func.func @generics(%a: tensor<4x1024xf16>, %b: tensor<1024x4xf32>, %c: tensor<4x1000xbf16>, %r: tensor<1x1000xbf16>, %d: tensor<4x1024xf32>) -> (tensor<4x1024xf32>, tensor<4x1024xf32>, tensor<4x1000xbf16>, tensor<4x1024xf32>) {
  %e = tensor.empty() : tensor<4x1024xf32>
  %flat = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x1024xf16>) outs(%e : tensor<4x1024xf32>) {
  ^bb0(%x: f16, %o: f32):
    %w = arith.extf %x : f16 to f32
    linalg.yield %w : f32
  } -> tensor<4x1024xf32>
  %across = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<1024x4xf32>) outs(%e : tensor<4x1024xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x1024xf32>
  %eb = tensor.empty() : tensor<4x1000xbf16>
  %rows = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %r : tensor<4x1000xbf16>, tensor<1x1000xbf16>) outs(%eb : tensor<4x1000xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %o: bf16):
    %z = arith.addf %x, %y : bf16
    linalg.yield %z : bf16
  } -> tensor<4x1000xbf16>
  %own = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%d : tensor<4x1024xf32>) outs(%e : tensor<4x1024xf32>) attrs = {nf.gpu_schedule = "grid-stride block=128 vector=2 min-blocks-per-sm=2"} {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<4x1024xf32>
  return %flat, %across, %rows, %own : tensor<4x1024xf32>, tensor<4x1024xf32>, tensor<4x1000xbf16>, tensor<4x1024xf32>
}

// -----

// A pad, and a chain of insert_slices (its last op carries the schedule):
// an element at a time, whatever the size.
// CHECK-LABEL: func.func @copies
// CHECK: tensor.pad
// CHECK: } {nf.gpu_schedule = "grid-stride block=256 vector=1 min-blocks-per-sm=4"} : tensor<2x3xf32> to tensor<3x6xf32>
// CHECK: %[[FIRST:.+]] = tensor.insert_slice
// CHECK-NOT: nf.gpu_schedule
// CHECK-SAME: tensor<2x3xf32> into tensor<2x8xf32>
// CHECK: tensor.insert_slice %{{.+}} into %[[FIRST]]{{.+}} {nf.gpu_schedule = "grid-stride block=256 vector=1 min-blocks-per-sm=4"}
// LOWERED-LABEL: gpu.func @copies_window(
// LOWERED-SAME: nf.schedule = "window-copy grid-stride block=256 vector=1 min-blocks-per-sm=4 sources=1"
// LOWERED-LABEL: gpu.func @copies_window_1(
// LOWERED-SAME: nf.schedule = "window-copy grid-stride block=256 vector=1 min-blocks-per-sm=4 sources=2"
func.func @copies(%x: tensor<2x3xf32>, %a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> (tensor<3x6xf32>, tensor<2x8xf32>) {
  %cst = arith.constant -7.0 : f32
  %p = tensor.pad %x low[0, 1] high[1, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<2x3xf32> to tensor<3x6xf32>
  %e = tensor.empty() : tensor<2x8xf32>
  %0 = tensor.insert_slice %a into %e[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
  %1 = tensor.insert_slice %b into %0[0, 3] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<2x8xf32>
  return %p, %1 : tensor<3x6xf32>, tensor<2x8xf32>
}

// -----

// Linalg reductions: a warp a row of 1024 contiguous f32 in vectors of 4;
// columns of 1024 shared by the 32 warps of a block of 1024 threads, cut
// in two parts so that more blocks run; a body that must run in order (not
// a combiner: out * 0.5 + x) a thread a result. The one written by hand
// (a block a row of 128 threads) is kept and followed.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1, d0)>
#res = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @reductions
// CHECK: linalg.generic {{.+}} attrs = {nf.gpu_schedule = "warp-per-result block=256 vector=4"}
// CHECK: linalg.generic {{.+}} attrs = {nf.gpu_schedule = "block-columns block=1024 splits=2"}
// CHECK: linalg.generic {{.+}} attrs = {nf.gpu_schedule = "thread-per-result block=256"}
// CHECK: linalg.generic {{.+}} attrs = {nf.gpu_schedule = "block-per-result block=128 vector=2"}
// LOWERED-LABEL: gpu.func @reductions_reduce_3(
// LOWERED-SAME: known_block_size = array<i32: 128, 1, 1>
// LOWERED-SAME: nf.schedule = "block-per-result block=128 elements=1024 vector=2"
// LOWERED: vector.load %{{.+}} : memref<?xf32>, vector<2xf32>
func.func @reductions(%x: tensor<64x1024xf32>, %y: tensor<1024x64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#rows, #res], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x1024xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#cols, #res], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<1024x64xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %ordered = linalg.generic {indexing_maps = [#rows, #res], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x1024xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %m = arith.mulf %o, %half : f32
    %s = arith.addf %m, %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %own = linalg.generic {indexing_maps = [#rows, #res], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x1024xf32>) outs(%init : tensor<64xf32>) attrs = {nf.gpu_schedule = "block-per-result block=128 vector=2"} {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r, %c, %ordered, %own : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}
