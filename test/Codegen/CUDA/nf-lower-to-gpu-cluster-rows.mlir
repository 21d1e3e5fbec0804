// Rows spread over a thread-block cluster (ClusterRow, forced here on small
// rows: blocks of 32 threads, at least 2 of them). The launch is a cluster
// per row, its blocks consecutive along x; a block's threads are lanes
// rank * 32 + tid of the row. Each block sums its part (shuffles, and
// shared memory across warps), threads 0 to blocks - 1 store the block's
// sum into that block's slots (nf.cluster_store), and after the cluster's
// barrier every thread adds its own block's slots in rank order. A layer
// norm exchanges twice (the mean, then the squared deviations), each in its
// own slots; an RMS norm once; before the first, a relaxed cluster barrier
// (every block has started). Targets without clusters keep a block row.
// RUN: nf-opt %s --nf-lower-to-gpu=row-norm-schedule=cluster-row | FileCheck %s
// RUN: nf-opt %s "--nf-lower-to-gpu=arch=sm_80 row-norm-schedule=cluster-row" | FileCheck %s --check-prefix=SM80

// 256 f32 are 64 vectors: 2 blocks of 32 threads, a vector each.
// CHECK-LABEL: func.func @rms
// CHECK: %[[BLOCKS:.+]] = arith.constant 6 : index
// CHECK: %[[THREADS:.+]] = arith.constant 32 : index
// CHECK: gpu.launch_func @nf_kernels::@rms_rms_norm blocks in (%[[BLOCKS]], %{{.+}}, %{{.+}}) threads in (%[[THREADS]],
// CHECK-LABEL: gpu.func @rms_rms_norm
// CHECK-SAME: workgroup(%[[SLOTS:.+]] : memref<4xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 32, 1, 1>, nf.cluster_blocks = 2 : i64, nf.schedule = "cluster-row threads-per-row=32 rows-per-block=1 vector=4 registers=1 cluster=2"
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[BID:.+]] = gpu.block_id x
// CHECK: %[[RANK:.+]] = arith.remui %[[BID]], %{{.+}}
// CHECK: arith.muli %[[RANK]]
// CHECK: %[[ROW:.+]] = arith.divui %[[BID]], %{{.+}}
// CHECK-NOT: scf.for
// CHECK: vector.load
// Every block has started before any stores into another (the loads in
// flight meanwhile).
// CHECK-NEXT: vector.extract
// CHECK: nf.cluster_barrier relaxed
// CHECK: gpu.shuffle xor
// CHECK: %[[STORING:.+]] = arith.cmpi ult, %[[T:.+]], %{{.+}}
// CHECK: scf.if %[[STORING]] {
// CHECK: %[[AT:.+]] = arith.addi %{{.+}}, %[[RANK]]
// CHECK: nf.cluster_store %{{.+}}, %[[SLOTS]][%[[AT]]] rank %[[T]]
// CHECK: }
// CHECK-NEXT: nf.cluster_barrier
// CHECK-NEXT: %[[S0:.+]] = memref.load %[[SLOTS]][%{{.+}}]
// CHECK: %[[S1:.+]] = memref.load %[[SLOTS]][%{{.+}}]
// CHECK-NEXT: arith.addf %[[S0]], %[[S1]]
// CHECK-NOT: nf.cluster_barrier
// CHECK: vector.store
// CHECK-NEXT: gpu.return
// SM80-LABEL: gpu.func @rms_rms_norm
// SM80-NOT: nf.cluster
// SM80-SAME: nf.schedule = "warp-rows
// SM80-NOT: nf.cluster
func.func @rms(%x: tensor<3x256xf32>) -> tensor<3x256xf32> {
  %y, %r = nf.rms_norm %x {axis = 1 : i64} : (tensor<3x256xf32>) -> (tensor<3x256xf32>, tensor<3x1xf32>)
  return %y : tensor<3x256xf32>
}

// 1000 f32 are 250 vectors: 4 blocks of 32 threads, 2 vectors each; two
// exchanges in slots 0-3 and 4-7; the statistics from lane 0 of rank 0.
// CHECK-LABEL: gpu.func @ln_layer_norm
// CHECK-SAME: workgroup(%[[SLOTS:.+]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: nf.cluster_blocks = 4 : i64, nf.schedule = "cluster-row threads-per-row=32 rows-per-block=1 vector=4 registers=2 cluster=4"
// CHECK: nf.cluster_store
// CHECK: nf.cluster_barrier
// CHECK-COUNT-4: memref.load %[[SLOTS]]
// CHECK: arith.subf
// CHECK: nf.cluster_store
// CHECK: nf.cluster_barrier
// CHECK-COUNT-4: memref.load %[[SLOTS]]
// CHECK-NOT: nf.cluster_barrier
// CHECK: math.sqrt
// CHECK: arith.cmpi eq
// CHECK: memref.store
// CHECK: memref.store
// CHECK: gpu.return
func.func @ln(%x: tensor<2x1000xf32>) -> (tensor<2x1000xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<2x1000xf32>) -> (tensor<2x1000xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %y, %m, %r : tensor<2x1000xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}
