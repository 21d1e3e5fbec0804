// Dynamic sizes stay dynamic on the GPU: the host function reads them off
// its buffers (memref.dim), computes what follows from them (rows, parts,
// trips, grids) and passes them to the kernels as index arguments; sizes
// that are static stay constants in the kernels. A launch whose grid may
// be empty runs under an scf.if. (DynamicShapesOnSimTest runs every family
// this way in the simulator.)
// RUN: nf-opt %s --nf-lower-to-gpu | FileCheck %s

// A group norm: (image, group) rows of the group's channels at every
// position, split into chunks; the rows (N * 8), their length (8 * H * W)
// and the spatial size are the kernels' arguments.
// CHECK-LABEL: func.func @group_norm_of_dynamic_shape
// CHECK-DAG: %[[H:.+]] = memref.dim %[[X:.+]], %c2 : memref<?x64x?x?xf32>
// CHECK-DAG: %[[W:.+]] = memref.dim %[[X]], %c3 : memref<?x64x?x?xf32>
// CHECK: %[[HW:.+]] = arith.muli %[[H]], %[[W]] : index
// CHECK: %[[N:.+]] = memref.dim %[[X]], %c0
// CHECK: %[[ROWS:.+]] = arith.muli %[[N]], %{{.+}} : index
// CHECK: %[[COLS:.+]] = arith.muli %{{.+}}, %[[HW]] : index
// CHECK: %[[CHUNKS:.+]] = arith.ceildivui %[[COLS]], %{{.+}} : index
// CHECK: %[[BLOCKS:.+]] = arith.muli %[[ROWS]], %[[CHUNKS]] : index
// CHECK: scf.if
// CHECK: gpu.launch_func @nf_kernels::@group_norm_of_dynamic_shape_group_norm_partial blocks in (%[[BLOCKS]],
// CHECK-SAME: %[[ROWS]] : index, %[[COLS]] : index, %[[CHUNKS]] : index, %[[HW]] : index)
// CHECK: gpu.launch_func @nf_kernels::@group_norm_of_dynamic_shape_group_norm_normalize blocks in (%[[BLOCKS]],
// CHECK-SAME: %[[CHUNKS]] : index, %[[HW]] : index)
func.func @group_norm_of_dynamic_shape(%x: tensor<?x64x?x?xf32>) -> tensor<?x64x?x?xf32> {
  %y, %m, %r = nf.group_norm %x {num_groups = 8 : i64} : (tensor<?x64x?x?xf32>) -> (tensor<?x64x?x?xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
  return %y : tensor<?x64x?x?xf32>
}

// BatchNorm's moments over a dynamic batch: the parts (at most one block
// per 128 positions, at most as many blocks as the device holds, 1056 on
// sm_90), none for an empty batch, and the trips over the positions, all
// from N * 16 positions.
// CHECK-LABEL: func.func @batch_norm_training_of_dynamic_batch
// CHECK: %[[N:.+]] = memref.dim %{{.+}}, %c0 : memref<?x4x4x16xf16>
// CHECK: %[[P4:.+]] = arith.muli %[[N]], %c4
// CHECK: %[[POSITIONS:.+]] = arith.muli %[[P4]], %c4
// CHECK: %[[RESIDENT:.+]] = nf.resident_blocks @nf_kernels::@batch_norm_training_of_dynamic_batch_batch_norm_training_moments_sums block 256 shared 0 planned 1056
// CHECK: %[[BYPOS:.+]] = arith.ceildivui %[[POSITIONS]], %c128 : index
// CHECK: %[[BYGRID:.+]] = arith.maxui %[[RESIDENT]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[SLOTS:.+]] = arith.minui %[[BYPOS]], %[[BYGRID]] : index
// CHECK: %[[PARTS:.+]] = arith.select %{{.+}}, %{{.+}}, %[[SLOTS]] : index
// CHECK: %[[TRIPS:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : index
// The launch where there are positions (the parts follow the device).
// CHECK: %[[ANY:.+]] = arith.cmpi ne, %[[POSITIONS]], %{{.+}} : index
// CHECK: scf.if %[[ANY]] {
// CHECK: gpu.launch_func @nf_kernels::@batch_norm_training_of_dynamic_batch_batch_norm_training_moments_sums blocks in (%[[PARTS]],
// CHECK-SAME: %[[PARTS]] : index, %[[POSITIONS]] : index, %[[TRIPS]] : index)
// 16 channels: one finishing block.
// CHECK: gpu.launch_func @nf_kernels::@batch_norm_training_of_dynamic_batch_batch_norm_training_moments_finish blocks in (%c1
func.func @batch_norm_training_of_dynamic_batch(%x: tensor<?x4x4x16xf16>, %rm: tensor<16xf32>, %rv: tensor<16xf32>) -> tensor<?x4x4x16xf16> {
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x running(%rm, %rv) {layout = #nf.layout<nhwc>} : (tensor<?x4x4x16xf16>, tensor<16xf32>, tensor<16xf32>) -> (tensor<?x4x4x16xf16>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %y : tensor<?x4x4x16xf16>
}

// The kernels: the sizes are their trailing index arguments.
// CHECK-LABEL: gpu.func @group_norm_of_dynamic_shape_group_norm_partial
// CHECK-SAME: (%{{.+}}: memref<?xf32>, %{{.+}}: memref<?xf32>, %{{.+}}: index, %[[KCOLS:[^:]+]]: index, %[[KCHUNKS:[^:]+]]: index, %{{.+}}: index)
// CHECK: arith.divui %{{.+}}, %[[KCHUNKS]] : index
// CHECK-LABEL: gpu.func @group_norm_of_dynamic_shape_group_norm_normalize
// CHECK-LABEL: gpu.func @batch_norm_training_of_dynamic_batch_batch_norm_training_moments_sums
// CHECK-SAME: (%{{.+}}: memref<?xf16>, %{{.+}}: memref<?xf32>, %[[KSLOTS:[^:]+]]: index, %[[KPOS:[^:]+]]: index, %[[KTRIPS:[^:]+]]: index)
// CHECK: arith.divui %{{.+}}, %[[KSLOTS]] : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[KTRIPS]] step
// CHECK: arith.cmpi ult, %{{.+}}, %[[KPOS]] : index
