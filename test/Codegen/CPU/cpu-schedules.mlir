// The CPU schedule layer's choice for each op (normfuse/Codegen/CPU/
// Schedule.h), as nf-test-cpu-schedule remarks it; the lowerings follow the
// same functions.
// RUN: nf-opt %s -split-input-file --nf-test-cpu-schedule -verify-diagnostics -o /dev/null

// Streaming stores for a returned output of 16 MiB or more whose rows are
// whole vectors: 64 KiB per parallel iteration (16 rows of 4 KiB).
func.func @large_returned_rows(%x: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  // expected-remark @+1 {{cpu schedule: row-norm center=16 sum-block=512 vector=8 streaming=yes rows-per-iteration=16}}
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<4096x1024xf32>) -> (tensor<4096x1024xf32>, tensor<4096x1xf32>, tensor<4096x1xf32>)
  return %y : tensor<4096x1024xf32>
}

// -----

// Below 16 MiB, plain stores.
func.func @small_rows(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  // expected-remark @+1 {{cpu schedule: row-norm center=16 sum-block=512 vector=8 streaming=no}}
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<64x1024xf32>) -> (tensor<64x1024xf32>, tensor<64x1xf32>, tensor<64x1xf32>)
  return %y : tensor<64x1024xf32>
}

// -----

// An intermediate (read by the next kernel from cache) and a row that is not
// whole vectors: plain stores; the returned relu streams.
func.func @intermediate_and_odd_rows(%x: tensor<4096x1024xf32>, %z: tensor<8192x1025xf16>) -> (tensor<4096x1024xf32>, tensor<8192x1025xf16>) {
  // expected-remark @+1 {{cpu schedule: row-norm center=16 sum-block=512 vector=8 streaming=no}}
  %y, %r = nf.rms_norm %x {axis = 1 : i64} : (tensor<4096x1024xf32>) -> (tensor<4096x1024xf32>, tensor<4096x1xf32>)
  // expected-remark @+1 {{cpu schedule: pointwise chunk=16384 vector=8 streaming=yes rows-per-iteration=1}}
  %a = nf.relu %y : tensor<4096x1024xf32>
  // expected-remark @+1 {{cpu schedule: row-norm center=16 sum-block=512 vector=8 streaming=no}}
  %w, %s = nf.rms_norm %z {axis = 1 : i64} : (tensor<8192x1025xf16>) -> (tensor<8192x1025xf16>, tensor<8192x1xf32>)
  return %a, %w : tensor<4096x1024xf32>, tensor<8192x1025xf16>
}

// -----

// A returned 16 MiB elementwise result: chunks of 16384 elements (64 KiB),
// one a parallel iteration.
func.func @large_pointwise(%x: tensor<4194304xf32>) -> tensor<4194304xf32> {
  // expected-remark @+1 {{cpu schedule: pointwise chunk=16384 vector=8 streaming=yes rows-per-iteration=1}}
  %y = nf.gelu %x : tensor<4194304xf32>
  return %y : tensor<4194304xf32>
}

// -----

// Row norm gradients: min(rows, 64, 2^22 / cols) chunks of rows.
func.func @grad_chunks(%dy: tensor<100000x32xf32>, %x: tensor<100000x32xf32>, %r: tensor<100000x1xf32>,
                       %dy2: tensor<3x7xf32>, %x2: tensor<3x7xf32>, %r2: tensor<3x1xf32>,
                       %dy3: tensor<8x1048576xf32>, %x3: tensor<8x1048576xf32>, %r3: tensor<8x1xf32>) {
  // expected-remark @+1 {{cpu schedule: row-norm-grad row-chunks=64 vector=8}}
  %a, %b = nf.rms_norm_grad %dy, %x, %r {axis = 1 : i64} : (tensor<100000x32xf32>, tensor<100000x32xf32>, tensor<100000x1xf32>) -> (tensor<100000x32xf32>, tensor<32xf32>)
  // expected-remark @+1 {{cpu schedule: row-norm-grad row-chunks=3 vector=8}}
  %c, %d = nf.rms_norm_grad %dy2, %x2, %r2 {axis = 1 : i64} : (tensor<3x7xf32>, tensor<3x7xf32>, tensor<3x1xf32>) -> (tensor<3x7xf32>, tensor<7xf32>)
  // expected-remark @+1 {{cpu schedule: row-norm-grad row-chunks=4 vector=8}}
  %e, %f = nf.rms_norm_grad %dy3, %x3, %r3 {axis = 1 : i64} : (tensor<8x1048576xf32>, tensor<8x1048576xf32>, tensor<8x1xf32>) -> (tensor<8x1048576xf32>, tensor<1048576xf32>)
  return
}

// -----

// GroupNorm: whole images per thread from 8 images; fewer (or an unknown
// count) run each pass in parallel.
func.func @per_image(%a: tensor<8x32x16x16xf32>, %b: tensor<2x16x16x32xf32>, %c: tensor<?x32x16x16xf32>) {
  // expected-remark @+1 {{cpu schedule: per-image-norm whole-images-per-thread chunk-positions=64 vector=8}}
  %y, %m, %r = nf.group_norm %a {num_groups = 8 : i64} : (tensor<8x32x16x16xf32>) -> (tensor<8x32x16x16xf32>, tensor<8x8xf32>, tensor<8x8xf32>)
  // expected-remark @+1 {{cpu schedule: per-image-norm passes-in-parallel chunk-positions=64 vector=8}}
  %y2, %m2, %r2 = nf.instance_norm %b {layout = #nf.layout<nhwc>} : (tensor<2x16x16x32xf32>) -> (tensor<2x16x16x32xf32>, tensor<2x32xf32>, tensor<2x32xf32>)
  // expected-remark @+1 {{cpu schedule: per-image-norm passes-in-parallel chunk-positions=64 vector=8}}
  %y3, %m3, %r3 = nf.group_norm %c {num_groups = 8 : i64} : (tensor<?x32x16x16xf32>) -> (tensor<?x32x16x16xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
  return
}

// -----

// matmul: rhs packed into panels from 4 rows, read in place below, decided
// at run time when M is unknown; f64 shares each rhs vector with one row.
func.func @matmuls(%a: tensor<3x64xf32>, %b: tensor<64x32xf32>, %c: tensor<128x64xf32>, %d: tensor<?x64xf32>, %e: tensor<128x64xf64>, %f: tensor<64x32xf64>) {
  // expected-remark @+1 {{cpu schedule: matmul rhs=in-place row-group=3 column-vectors=4 row-chunk=96 depth-block=128 vector=8}}
  %0 = nf.matmul %a, %b : tensor<3x64xf32>, tensor<64x32xf32> -> tensor<3x32xf32>
  // expected-remark @+1 {{cpu schedule: matmul rhs=packed row-group=3 column-vectors=4 row-chunk=96 depth-block=128 vector=8}}
  %1 = nf.matmul %c, %b : tensor<128x64xf32>, tensor<64x32xf32> -> tensor<128x32xf32>
  // expected-remark @+1 {{cpu schedule: matmul rhs=by-rows row-group=3 column-vectors=4 row-chunk=96 depth-block=128 vector=8}}
  %2 = nf.matmul %d, %b : tensor<?x64xf32>, tensor<64x32xf32> -> tensor<?x32xf32>
  // expected-remark @+1 {{cpu schedule: matmul rhs=packed row-group=1 column-vectors=4 row-chunk=96 depth-block=128 vector=8}}
  %3 = nf.matmul %e, %f : tensor<128x64xf64>, tensor<64x32xf64> -> tensor<128x32xf64>
  return
}

// -----

// conv2d: NHWC in register tiles of 3 positions by 4 channels, chunks of 32
// output channels; NCHW as spans of rows.
func.func @convs(%x: tensor<1x8x8x16xf32>, %w: tensor<32x3x3x16xf32>, %xc: tensor<1x16x8x8xf32>, %wc: tensor<32x16x3x3xf32>) {
  // expected-remark @+1 {{cpu schedule: conv2d nhwc register-tiles=3x4 channel-chunk=32 vector=8}}
  %y = nf.conv2d %x, %w {layout = #nf.layout<nhwc>} : tensor<1x8x8x16xf32>, tensor<32x3x3x16xf32> -> tensor<1x6x6x32xf32>
  // expected-remark @+1 {{cpu schedule: conv2d nchw row-spans vector=8}}
  %z = nf.conv2d %xc, %wc : tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32> -> tensor<1x32x6x6xf32>
  return
}
