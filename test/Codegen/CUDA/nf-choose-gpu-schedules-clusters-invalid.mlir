// Cluster rows written on an op that cannot run them on sm_90 are errors
// at the op, with the reason: a cluster of more than 8 blocks, and a
// gradient whose cluster is not its row's chunks (block r holds chunk r).
// RUN: nf-opt %s --nf-choose-gpu-schedules=arch=sm_90 -split-input-file -verify-diagnostics

func.func @nine_blocks(%x: tensor<4x2304xf32>) -> tensor<4x2304xf32> {
  // expected-error @+1 {{a cluster of 9 blocks (2 to 8)}}
  %y, %r = nf.rms_norm %x {axis = 1 : i64, nf.gpu_schedule = "cluster-row threads-per-row=32 rows-per-block=1 vector=4 registers=2 cluster=9"} : (tensor<4x2304xf32>) -> (tensor<4x2304xf32>, tensor<4x1xf32>)
  return %y : tensor<4x2304xf32>
}

// -----

func.func @grad_cluster_not_its_chunks(%dy: tensor<4x1024xf32>, %x: tensor<4x1024xf32>, %r: tensor<4x1xf32>) -> tensor<4x1024xf32> {
  // expected-error @+1 {{a cluster of 4 blocks for the 2 chunks of 512 elements of a row of 1024}}
  %dx, %ds = nf.rms_norm_grad %dy, %x, %r {axis = 1 : i64, nf.gpu_schedule = "cluster-row threads-per-row=32 rows-per-block=1 vector=4 registers=4 cluster=4 chunk=512 max-blocks=4"} : (tensor<4x1024xf32>, tensor<4x1024xf32>, tensor<4x1xf32>) -> (tensor<4x1024xf32>, tensor<1024xf32>)
  return %dx : tensor<4x1024xf32>
}

// -----

func.func @grad_cluster_in_order(%dy: tensor<4x1024xf32>, %x: tensor<4x1024xf32>, %r: tensor<4x1xf32>) -> tensor<4x1024xf32> {
  // (The same with its 2 chunks runs.)
  %dx, %ds = nf.rms_norm_grad %dy, %x, %r {axis = 1 : i64, nf.gpu_schedule = "cluster-row threads-per-row=32 rows-per-block=1 vector=4 registers=4 cluster=2 chunk=512 max-blocks=4"} : (tensor<4x1024xf32>, tensor<4x1024xf32>, tensor<4x1xf32>) -> (tensor<4x1024xf32>, tensor<1024xf32>)
  return %dx : tensor<4x1024xf32>
}
