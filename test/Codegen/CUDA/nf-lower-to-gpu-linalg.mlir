// What TOSA's lowering leaves that is not an nf op runs on the GPU from the
// same linalg IR as on the CPU: chains of elementwise ops fuse into one
// kernel, operands are read through their indexing maps (broadcasts and
// transposes cost no kernel), splat constants are immediates, f16 bodies
// compute in f32 and round each op's result, reductions combine in a fixed
// order. Anything else is an error naming the op and the reason.
// RUN: nf-opt %s --nf-lower-to-gpu --split-input-file --verify-diagnostics | FileCheck %s

// One kernel for the whole chain, four lanes a thread (16-byte accesses)
// at the flat index; the constant is an immediate, not a buffer.
// CHECK-LABEL: func.func @chain
// CHECK: gpu.launch_func @nf_kernels::@chain_generic
// CHECK-NOT: gpu.launch_func
// CHECK: return
// CHECK: gpu.func @chain_generic(%arg0: memref<?xf32>, %arg1: memref<?xf32>)
// CHECK-SAME: nf.schedule = "grid-stride block=256 vector=4 min-blocks-per-sm=4"
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %c32 step
// CHECK: %[[X:.+]] = vector.load %arg0[%[[I]]] : memref<?xf32>, vector<4xf32>
// CHECK: %[[X0:.+]] = vector.extract %[[X]][0]
// CHECK: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[M:.+]] = arith.mulf %[[X0]], %[[HALF]] : f32
// CHECK: %[[T:.+]] = math.tanh %[[M]]
// CHECK: arith.addf %[[T]], %[[X0]]
// CHECK: vector.store %{{.+}}, %arg1[%[[I]]] : memref<?xf32>, vector<4xf32>
func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = "tosa.const"() <{value = dense<0.5> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %m = tosa.mul %x, %half {shift = 0 : i8} : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
  %t = tosa.tanh %m : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tosa.add %t, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A row vector (one per column) is read with the row's vector at column
// i % 8; a column vector (one per row) once for the vector, at row i / 8.
// CHECK-LABEL: gpu.func @broadcasts_generic
// CHECK-SAME: nf.schedule = "grid-stride block=256 vector=4 min-blocks-per-sm=4"
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %c32 step
// CHECK: vector.load %arg0[%[[I]]] : memref<?xf32>, vector<4xf32>
// CHECK: %[[C8:.+]] = arith.constant 8 : index
// CHECK: %[[COL:.+]] = arith.remui %[[I]], %[[C8]] : index
// CHECK: vector.load %arg1[%[[COL]]] : memref<?xf32>, vector<4xf32>
// CHECK: %[[ROW:.+]] = arith.divui %[[I]], %{{.+}} : index
// CHECK: %[[R:.+]] = memref.load %arg2[%[[ROW]]] : memref<?xf32>
// CHECK: %[[S:.+]] = arith.addf
// CHECK: arith.subf %[[S]], %[[R]] : f32
func.func @broadcasts(%x: tensor<4x8xf32>, %col: tensor<1x8xf32>, %row: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %a = tosa.add %x, %col : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %b = tosa.sub %a, %row : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// -----

// A transpose reads across: one lane a thread, the result written in its
// own order; element (r, c) of the 5x3 result is element (c, r) of the
// input, at c * 5 + r.
// CHECK-LABEL: gpu.func @transpose_generic
// CHECK-SAME: nf.schedule = "grid-stride block=256 vector=1 min-blocks-per-sm=4"
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %c15 step
// CHECK: %[[C:.+]] = arith.remui %[[I]], %c3 : index
// CHECK: %[[C5:.+]] = arith.muli %[[C]], %c5 : index
// CHECK: %[[R:.+]] = arith.divui %[[I]], %{{.+}} : index
// CHECK: %[[AT:.+]] = arith.addi %[[C5]], %[[R]] : index
// CHECK: %[[V:.+]] = memref.load %arg0[%[[AT]]] : memref<?xf32>
// CHECK: memref.store %[[V]], %arg1[%[[I]]] : memref<?xf32>
func.func @transpose(%x: tensor<3x5xf32>) -> tensor<5x3xf32> {
  %p = "tosa.const"() <{value = dense<[1, 0]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %y = tosa.transpose %x, %p : (tensor<3x5xf32>, tensor<2xi32>) -> tensor<5x3xf32>
  return %y : tensor<5x3xf32>
}

// -----

// f16 data: eight lanes (16 bytes), loads widen to f32, each op's result
// is rounded to f16 as the CPU rounds it, and x, read twice by the chain,
// is one buffer loaded once.
// CHECK-LABEL: gpu.func @half_generic(%arg0: memref<?xf16>, %arg1: memref<?xf16>, %arg2: memref<?xf16>)
// CHECK-SAME: vector=8
// CHECK: %[[X:.+]] = vector.load %arg0[%[[I:.+]]] : memref<?xf16>, vector<8xf16>
// CHECK: %[[X0:.+]] = vector.extract %[[X]][0]
// CHECK: %[[XW:.+]] = arith.extf %[[X0]] : f16 to f32
// CHECK: %[[Y:.+]] = vector.load %arg1[%[[I]]] : memref<?xf16>, vector<8xf16>
// CHECK-NOT: vector.load
// CHECK: %[[S:.+]] = arith.addf %[[XW]], %{{.+}} : f32
// CHECK: %[[SR:.+]] = arith.truncf %[[S]] : f32 to f16
// CHECK: %[[SW:.+]] = arith.extf %[[SR]] : f16 to f32
// CHECK: arith.mulf %[[SW]], %[[XW]] : f32
func.func @half(%x: tensor<2x8xf16>, %y: tensor<2x8xf16>) -> tensor<2x8xf16> {
  %s = tosa.add %x, %y : (tensor<2x8xf16>, tensor<2x8xf16>) -> tensor<2x8xf16>
  %p = tosa.mul %s, %x {shift = 0 : i8} : (tensor<2x8xf16>, tensor<2x8xf16>) -> tensor<2x8xf16>
  return %p : tensor<2x8xf16>
}

// -----

// A sum over the innermost dimension: a warp per result (8 results a
// block), each lane loading every 32nd vector of 4 elements (16 bytes: the
// row of 100 is 25 whole vectors) and adding its elements in order in f64,
// a butterfly of shuffles, and the first lane storing the sum plus the
// initial value (an immediate: the linalg.fill needs no kernel).
// CHECK-LABEL: func.func @row_sums
// CHECK: gpu.launch_func @nf_kernels::@row_sums_reduce blocks in (%c1,
// CHECK-NOT: gpu.launch_func
// CHECK-LABEL: gpu.func @row_sums_reduce(%arg0: memref<?xf32>, %arg1: memref<?xf32>)
// CHECK-SAME: nf.schedule = "warp-per-result block=256 elements=100 vector=4"
// CHECK: %[[LANE:.+]] = arith.remui %thread_id_x, %c32
// CHECK: scf.for %[[R:.+]] = {{.+}} to %c4 step
// CHECK: %[[BASE:.+]] = arith.muli %[[R]], %c100{{(_[0-9]+)?}} : index
// CHECK: %[[INIT:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f64
// CHECK: %[[FROM:.+]] = arith.muli %[[LANE]], %c4{{(_[0-9]+)?}} : index
// CHECK: %[[SUM:.+]] = scf.for %[[J:.+]] = %[[FROM]] to %c100 step %c128 iter_args(%[[ACC:.+]] = %[[ZERO]]) -> (f64)
// CHECK: %[[AT:.+]] = arith.addi %[[BASE]], %[[J]] : index
// CHECK: %[[V:.+]] = vector.load %arg0[%[[AT]]] : memref<?xf32>, vector<4xf32>
// CHECK: %[[X0:.+]] = vector.extract %[[V]][0] : f32 from vector<4xf32>
// CHECK: %[[X1:.+]] = vector.extract %[[V]][1] : f32 from vector<4xf32>
// CHECK: %[[X2:.+]] = vector.extract %[[V]][2] : f32 from vector<4xf32>
// CHECK: %[[X3:.+]] = vector.extract %[[V]][3] : f32 from vector<4xf32>
// CHECK: %[[W0:.+]] = arith.extf %[[X0]] : f32 to f64
// CHECK: %[[S0:.+]] = arith.addf %[[ACC]], %[[W0]] : f64
// CHECK: %[[W1:.+]] = arith.extf %[[X1]] : f32 to f64
// CHECK: %[[S1:.+]] = arith.addf %[[S0]], %[[W1]] : f64
// CHECK: %[[W2:.+]] = arith.extf %[[X2]] : f32 to f64
// CHECK: %[[S2:.+]] = arith.addf %[[S1]], %[[W2]] : f64
// CHECK: %[[W3:.+]] = arith.extf %[[X3]] : f32 to f64
// CHECK: %[[NEXT:.+]] = arith.addf %[[S2]], %[[W3]] : f64
// CHECK: scf.yield %[[NEXT]] : f64
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK: scf.if %[[FIRST]]
// CHECK: %[[OUT:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK: memref.store %[[OUT]], %arg1[%[[R]]]
func.func @row_sums(%x: tensor<4x100xf32>) -> tensor<4x1xf32> {
  %s = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x100xf32>) -> tensor<4x1xf32>
  return %s : tensor<4x1xf32>
}

// -----

// A long row (more than 2048 elements): a block per result; each warp's sum
// goes to shared memory, and the first thread adds the eight in warp order.
// CHECK-LABEL: gpu.func @long_rows_reduce
// CHECK-SAME: (%arg0: memref<?xf32>, %arg1: memref<?xf32>) workgroup(%[[SCRATCH:.+]] : memref<8xf64, #gpu.address_space<workgroup>>)
// CHECK-SAME: nf.schedule = "block-per-result block=256 elements=4096 vector=4"
// CHECK: scf.for %[[R:.+]] = %block_id_x to %c3 step %grid_dim_x
// CHECK: %[[FROM:.+]] = arith.muli %thread_id_x, %c4
// CHECK: scf.for %{{.+}} = %[[FROM]] to %{{.+}} step %c1024 iter_args
// CHECK: vector.load %arg0[%{{.+}}] : memref<?xf32>, vector<4xf32>
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %[[SCRATCH]]
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.load %[[SCRATCH]][%c0{{.*}}]
// CHECK-COUNT-7: memref.load %[[SCRATCH]]
// CHECK: memref.store %{{.+}}, %arg1[%[[R]]]
// CHECK: gpu.barrier
func.func @long_rows(%x: tensor<3x4096xf32>) -> tensor<3x1xf32> {
  %s = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<3x4096xf32>) -> tensor<3x1xf32>
  return %s : tensor<3x1xf32>
}

// -----

// One result of 65536 elements would be one block: its elements split in
// 16 parts of 4096 (16 a thread), a block each, whose sums go to a
// temporary of f64, part-minor; then a warp per result adds its parts in
// part order (lane l: parts l, l + 32, ...; then the butterfly) and the
// first lane adds the initial value and stores.
// CHECK-LABEL: func.func @whole_sum
// CHECK: %[[PARTS:.+]] = memref.alloc() : memref<16xf64>
// CHECK: %[[FLAT:.+]] = memref.cast %[[PARTS]]
// CHECK: gpu.launch_func @nf_kernels::@whole_sum_reduce blocks in (%c16,
// CHECK-SAME: %[[FLAT]] : memref<?xf64>)
// CHECK: gpu.launch_func @nf_kernels::@whole_sum_reduce_finish blocks in (%c1
// CHECK-SAME: %[[FLAT]] : memref<?xf64>)
// CHECK-LABEL: gpu.func @whole_sum_reduce(
// CHECK-SAME: nf.schedule = "block-per-result block=256 elements=65536 splits=16 vector=4"
// CHECK: scf.for %[[W:.+]] = %block_id_x to %c16 step %grid_dim_x
// CHECK: %[[R:.+]] = arith.divui %[[W]], %c16
// CHECK: %[[PART:.+]] = arith.remui %[[W]], %c16
// CHECK: %[[LANE4:.+]] = arith.muli %thread_id_x, %c4
// CHECK: %[[BEGIN:.+]] = arith.muli %[[PART]], %c4096
// CHECK: %[[FROM:.+]] = arith.addi %[[BEGIN]], %[[LANE4]]
// CHECK: %[[END:.+]] = arith.addi %[[BEGIN]], %c4096
// CHECK: %[[TO:.+]] = arith.minui %[[END]], %c65536
// CHECK: scf.for %{{.+}} = %[[FROM]] to %[[TO]] step %c1024 iter_args(%{{.+}}) -> (f64)
// CHECK: %[[AT:.+]] = arith.muli %[[R]], %c16
// CHECK: %[[SLOT:.+]] = arith.addi %[[AT]], %[[PART]]
// CHECK: memref.store %{{.+}}, %arg2[%[[SLOT]]] : memref<?xf64>
// CHECK-LABEL: gpu.func @whole_sum_reduce_finish(
// CHECK-SAME: nf.schedule = "split-finish splits=16"
// CHECK: %[[LANE:.+]] = arith.remui %thread_id_x, %c32
// CHECK: scf.for %[[R2:.+]] = %{{.+}} to %c1 step
// CHECK: scf.for %{{.+}} = %[[LANE]] to %c16 step %c32{{.*}} iter_args
// CHECK: memref.load %arg2
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: scf.if
// CHECK: arith.truncf %{{.+}} : f64 to f32
// CHECK: memref.store %{{.+}}, %arg1[%[[R2]]]
func.func @whole_sum(%x: tensor<1x65536xf32>) -> tensor<1x1xf32> {
  %s = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<1x65536xf32>) -> tensor<1x1xf32>
  return %s : tensor<1x1xf32>
}

// -----

// A maximum over the outer dimension: a thread per result walks its
// column, neighbouring threads reading neighbouring addresses (x[j][r]).
// CHECK-LABEL: gpu.func @column_max_reduce
// CHECK-SAME: nf.schedule = "thread-per-result block=256 elements=6"
// The initial value is TOSA's (the lowest finite f32), the identity -inf.
// CHECK: scf.for %[[R:.+]] = {{.+}} to %c100 step
// CHECK: %[[INIT:.+]] = arith.constant -3.40282347E+38 : f32
// CHECK: %[[NEG:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAX:.+]] = scf.for %[[J:.+]] = %c0 to %c6 step %c1 iter_args(%[[ACC:.+]] = %[[NEG]]) -> (f32)
// CHECK: %[[ROW:.+]] = arith.muli %[[J]], %{{.+}}
// CHECK: %[[AT:.+]] = arith.addi %[[R]], %[[ROW]]
// CHECK: %[[X:.+]] = memref.load %arg0[%[[AT]]]
// CHECK: arith.maximumf %[[ACC]], %[[X]] : f32
// CHECK-NOT: gpu.shuffle
// CHECK: %[[OUT:.+]] = arith.maximumf %[[INIT]], %[[MAX]] : f32
// CHECK: memref.store %[[OUT]], %arg1[%[[R]]]
func.func @column_max(%x: tensor<6x100xf32>) -> tensor<1x100xf32> {
  %m = tosa.reduce_max %x {axis = 0 : i32} : (tensor<6x100xf32>) -> tensor<1x100xf32>
  return %m : tensor<1x100xf32>
}

// -----

// A sum over the outer dimension of 1000 elements: a block per 32
// neighbouring results (37: two groups, the second of 5), a lane each
// (neighbouring lanes read neighbouring addresses), its 32 warps each
// taking every 32nd element (f64 sums); the first warp adds the warps'
// sums in warp order. Every thread reaches both barriers.
// CHECK-LABEL: gpu.func @column_sums_reduce
// CHECK-SAME: workgroup(%[[SCRATCH:.+]] : memref<1024xf64, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 1024, 1, 1>
// CHECK-SAME: nf.schedule = "block-columns block=1024 elements=1000"
// CHECK: %[[LANE:.+]] = arith.remui %thread_id_x, %c32
// CHECK: %[[WARP:.+]] = arith.divui %thread_id_x, %c32
// CHECK: scf.for %[[G:.+]] = %block_id_x to %c2 step %grid_dim_x {
// CHECK: %[[R:.+]] = arith.addi %{{.+}}, %[[LANE]]
// CHECK: %[[VALID:.+]] = arith.cmpi ult, %[[R]], %c37
// CHECK: %[[END:.+]] = arith.select %[[VALID]], %c1000, %c0
// CHECK: %[[SUM:.+]] = scf.for %{{.+}} = %[[WARP]] to %[[END]] step %c32{{.*}} iter_args(%{{.+}}) -> (f64)
// CHECK: memref.store %[[SUM]], %[[SCRATCH]][%thread_id_x]
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: memref.load %[[SCRATCH]][%[[LANE]]]
// CHECK-COUNT-31: memref.load %[[SCRATCH]]
// CHECK: arith.truncf %{{.+}} : f64 to f32
// CHECK: memref.store
// CHECK: gpu.barrier
func.func @column_sums(%x: tensor<1000x37xf32>) -> tensor<1x37xf32> {
  %s = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<1000x37xf32>) -> tensor<1x37xf32>
  return %s : tensor<1x37xf32>
}

// -----

// An argmax (a reduction of two results, the index and the value) is a
// maximum of 64-bit keys, a warp per row: the value's order-preserving
// bits (NaN 0) above the complement of its index, so the first of equal
// values wins (a lane's vector of 4 in order, index j, j + 1, ...); the
// first lane unpacks the total, keeps the initial value and index unless
// the value passes it (ogt), and stores both.
// CHECK-LABEL: gpu.func @argmax_reduce
// CHECK-SAME: nf.schedule = "warp-per-result block=256 elements=8 vector=4"
// CHECK: %[[KEYS:.+]] = scf.for {{.+}} -> (i64)
// CHECK: %[[V:.+]] = vector.load %arg0[%{{.+}}] : memref<?xf32>, vector<4xf32>
// CHECK: %[[X:.+]] = vector.extract %[[V]][0]
// CHECK: arith.cmpf uno, %[[X]], %[[X]]
// CHECK: %[[KEY:.+]] = arith.extui {{.+}} : i32 to i64
// CHECK: %[[J:.+]] = arith.index_castui %arg4 : index to i64
// CHECK: %[[NOTJ:.+]] = arith.subi %c4294967295_i64, %[[J]]
// CHECK: %[[HIGH:.+]] = arith.shli %[[KEY]], %c32_i64
// CHECK: %[[PACKED:.+]] = arith.ori %[[HIGH]], %[[NOTJ]]
// CHECK: arith.maxui %arg5, %[[PACKED]] : i64
// CHECK: %[[J1:.+]] = arith.addi %arg4, %c1 : index
// CHECK: arith.index_castui %[[J1]] : index to i64
// CHECK: gpu.shuffle xor %[[KEYS]], %c16_i32, %c32_i32 : i64
// CHECK: gpu.shuffle xor {{.+}}, %c1_i32, %c32_i32{{.*}} : i64
// CHECK: %[[TOTAL:.+]] = arith.maxui {{.+}} : i64
// CHECK: scf.if
// CHECK: arith.shrui %[[TOTAL]], %c32_i64
// CHECK: %[[VALUE:.+]] = arith.bitcast {{.+}} : i32 to f32
// CHECK: %[[INDEX:.+]] = arith.trunci {{.+}} : i64 to i32
// CHECK: %[[PASSES:.+]] = arith.cmpf ogt, %[[VALUE]], %[[INIT:.+]] : f32
// CHECK: %[[TAKE:.+]] = arith.andi {{.+}}, %[[PASSES]] : i1
// CHECK: %[[V:.+]] = arith.select %[[TAKE]], %[[VALUE]], %[[INIT]] : f32
// CHECK: %[[I:.+]] = arith.select %[[TAKE]], %[[INDEX]], %c0_i32 : i32
// CHECK: memref.store %[[I]], %arg1
// CHECK: memref.store %[[V]], %arg2
func.func @argmax(%x: tensor<4x8xf32>) -> tensor<4xi32> {
  %i = tosa.argmax %x {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4xi32>
  return %i : tensor<4xi32>
}

// -----

// A pooling window (the input read at d1 * 2 + d3): a thread per result;
// the result's rows start 2 * 24 elements apart, the window's rows are 24
// apart and its columns 4 (the channels).
// CHECK-LABEL: gpu.func @max_pool_reduce
// CHECK-SAME: nf.schedule = "thread-per-result block=256 elements=4"
// CHECK: arith.muli %{{.+}}, %c48
// CHECK: scf.for
// CHECK: arith.muli %{{.+}}, %c24
// CHECK: arith.muli %{{.+}}, %c4
// CHECK: memref.load %arg0
// CHECK: arith.maximumf
func.func @max_pool(%x: tensor<1x6x6x4xf32>) -> tensor<1x3x3x4xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x6x6x4xf32>) -> tensor<1x3x3x4xf32>
  return %y : tensor<1x3x3x4xf32>
}

// -----

// tosa.matmul runs on the nf product kernel, not as a linalg reduction.
// CHECK-LABEL: func.func @matmul
// CHECK: gpu.launch_func @nf_kernels::@matmul_matmul
// CHECK-LABEL: gpu.func @matmul_matmul
// CHECK-SAME: nf.schedule = "tiled-product
func.func @matmul(%a: tensor<1x8x16xf32>, %b: tensor<1x16x4xf32>) -> tensor<1x8x4xf32> {
  %0 = tosa.matmul %a, %b : (tensor<1x8x16xf32>, tensor<1x16x4xf32>) -> tensor<1x8x4xf32>
  return %0 : tensor<1x8x4xf32>
}

// -----

// A constant tensor that is not a splat is a buffer the kernel reads (which
// bufferization makes a memref.global, and the launch plan a constant it
// uploads once).
// CHECK-LABEL: func.func @constant_tensor
// CHECK: %[[C:.+]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK: %[[M:.+]] = bufferization.to_memref %[[C]] read_only
// CHECK: %[[F:.+]] = memref.cast %[[M]]
// CHECK: gpu.launch_func @nf_kernels::@constant_tensor_generic {{.+}} args(%{{.+}} : memref<?xf32>, %[[F]] : memref<?xf32>,
func.func @constant_tensor(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = "tosa.const"() <{value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>}> : () -> tensor<4xf32>
  %y = tosa.add %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A splat returned as it is (or read by an nf op) is written by a kernel.
// CHECK-LABEL: func.func @returned_splat
// CHECK: gpu.launch_func @nf_kernels::@returned_splat_generic
// CHECK: gpu.func @returned_splat_generic(%arg0: memref<?xf32>)
// CHECK: %[[V:.+]] = arith.constant 2.500000e+00 : f32
// CHECK: vector.from_elements %[[V]], %[[V]], %[[V]], %[[V]] : vector<4xf32>
func.func @returned_splat() -> tensor<2x4xf32> {
  %c = "tosa.const"() <{value = dense<2.5> : tensor<2x4xf32>}> : () -> tensor<2x4xf32>
  return %c : tensor<2x4xf32>
}

// -----

// A slice is a copy that reads the source at d * stride + offset: rows 1
// and 2 of a 4x8 tensor in vectors from element 8; columns 1 to 3 one at a
// time (a vector would start off a 16-byte boundary); 4 of 6 columns two
// at a time (rows of 6 start on whole vectors of 2, not of 4).
// CHECK-LABEL: gpu.func @slices_generic
// CHECK-SAME: vector=4
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %c16 step
// CHECK: %[[AT:.+]] = arith.addi %{{.+}}, %c8{{.*}} : index
// CHECK: vector.load %arg0[%[[AT]]] : memref<?xf32>, vector<4xf32>
// CHECK: vector.store %{{.+}}, %arg1[%[[I]]]
// CHECK-LABEL: gpu.func @slices_generic_1
// CHECK-SAME: vector=1
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %c12 step
// CHECK: %[[AT:.+]] = arith.addi %{{.+}}, %c1{{.*}} : index
// CHECK: memref.load %arg0[%[[AT]]] : memref<?xf32>
// CHECK-LABEL: gpu.func @slices_generic_2
// CHECK-SAME: vector=2
// CHECK: vector.load %arg0[%{{.+}}] : memref<?xf32>, vector<2xf32>
func.func @slices(%x: tensor<4x8xf32>, %z: tensor<2x6xf32>) -> (tensor<2x8xf32>, tensor<4x3xf32>, tensor<2x4xf32>) {
  %y = tosa.slice %x {start = array<i64: 1, 0>, size = array<i64: 2, 8>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  %c = tosa.slice %x {start = array<i64: 0, 1>, size = array<i64: 4, 3>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
  %w = tosa.slice %z {start = array<i64: 0, 0>, size = array<i64: 2, 4>} : (tensor<2x6xf32>) -> tensor<2x4xf32>
  return %y, %c, %w : tensor<2x8xf32>, tensor<4x3xf32>, tensor<2x4xf32>
}

// -----

// A concatenation (a chain of insert_slice into an empty tensor) is one
// kernel that takes each element from the input whose window holds it; no
// insert_slice is left.
// CHECK-LABEL: func.func @concat
// CHECK-NOT: tensor.insert_slice
// CHECK: gpu.launch_func @nf_kernels::@concat_window
// CHECK-SAME: args(%{{.+}} : memref<?xf32>, %{{.+}} : memref<?xf32>, %{{.+}} : memref<?xf32>, %{{.+}} : memref<?xf32>)
// CHECK-NOT: tensor.insert_slice
// CHECK: gpu.func @concat_window
// CHECK-SAME: nf.schedule = "window-copy grid-stride block=256 vector=1 min-blocks-per-sm=4 sources=3"
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %c: tensor<2x4xf32>) -> tensor<2x8xf32> {
  %y = tosa.concat %a, %b, %c {axis = 1 : i32} : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// A pad of constant sizes and value is one kernel too: the value outside
// the input's window, an immediate.
// CHECK-LABEL: func.func @pad
// CHECK-NOT: tensor.pad
// CHECK: gpu.launch_func @nf_kernels::@pad_window
// CHECK: gpu.func @pad_window
// CHECK: arith.constant -7.000000e+00 : f32
func.func @pad(%x: tensor<2x3xf32>) -> tensor<3x6xf32> {
  %p = "tosa.const"() <{value = dense<[[0, 1], [1, 2]]> : tensor<2x2xi32>}> : () -> tensor<2x2xi32>
  %v = "tosa.const"() <{value = dense<-7.0> : tensor<f32>}> : () -> tensor<f32>
  %y = tosa.pad %x, %p, %v : (tensor<2x3xf32>, tensor<2x2xi32>, tensor<f32>) -> tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}

// -----

// A pad whose value is an argument: the kernel takes the value's tensor as
// a buffer and loads it outside the input's window (no host extract).
// CHECK-LABEL: func.func @pad_value_argument
// CHECK-NOT: tensor.extract
// CHECK: gpu.launch_func @nf_kernels::@pad_value_argument_window
// CHECK-SAME: args(%{{.+}} : memref<?xf32>, %{{.+}} : memref<?xf32>, %{{.+}} : memref<?xf32>)
// CHECK: gpu.func @pad_value_argument_window
// CHECK: scf.if
// CHECK: memref.load %arg0
// CHECK: else
// CHECK: memref.load %arg1[%c0{{.*}}] : memref<?xf32>
func.func @pad_value_argument(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<3x6xf32> {
  %p = "tosa.const"() <{value = dense<[[0, 1], [1, 2]]> : tensor<2x2xi32>}> : () -> tensor<2x2xi32>
  %y = tosa.pad %x, %p, %v : (tensor<2x3xf32>, tensor<2x2xi32>, tensor<f32>) -> tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}

// -----

// Sizes known only at run time are kernel arguments: a flat kernel over
// the result's elements (16-byte vectors to the last whole one, then the
// tail one element a thread), its grid and the emptiness test computed on
// the host.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: %[[TOTAL:.+]] = arith.muli %{{.+}}, %c8 : index
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %[[TOTAL]], %c1024 : index
// CHECK: %[[GRID:.+]] = arith.minui %[[BLOCKS]], %c65535 : index
// CHECK: %[[ANY:.+]] = arith.cmpi ne, %[[TOTAL]], %{{.+}} : index
// CHECK: scf.if %[[ANY]]
// CHECK: gpu.launch_func @nf_kernels::@dynamic_rows_generic blocks in (%[[GRID]], {{.+}} args({{.+}}, %[[TOTAL]] : index)
// CHECK-LABEL: gpu.func @dynamic_rows_generic
// CHECK-SAME: %[[KTOTAL:[a-z0-9]+]]: index) kernel
// CHECK-SAME: nf.schedule = "grid-stride block=256 vector=4 peeled
// CHECK: %[[TAIL:.+]] = arith.remui %[[KTOTAL]], %c4
// CHECK: %[[END:.+]] = arith.subi %[[KTOTAL]], %[[TAIL]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[END]] step
// CHECK: vector.load %{{.+}} : memref<?xf32>, vector<4xf32>
// CHECK: arith.cmpi ult, %{{.+}}, %[[KTOTAL]]
func.func @dynamic_rows(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// A transpose of unknown sizes: one element a thread, its loop indices and
// the operand's row stride from the sizes the kernel takes.
// CHECK-LABEL: gpu.func @dynamic_transpose_generic
// CHECK-SAME: (%{{.+}}: memref<?xf32>, %{{.+}}: memref<?xf32>, %{{.+}}: index, %[[COLS:[a-z0-9]+]]: index, %[[TOTAL:[a-z0-9]+]]: index, %[[STRIDE:[a-z0-9]+]]: index)
// CHECK-SAME: nf.schedule = "grid-stride block=256 vector=1
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %[[TOTAL]] step
// CHECK: %[[C:.+]] = arith.remui %[[I]], %[[COLS]] : index
// CHECK: %[[CS:.+]] = arith.muli %[[C]], %[[STRIDE]] : index
// CHECK: %[[R:.+]] = arith.divui %[[I]], %[[COLS]] : index
// CHECK: %[[AT:.+]] = arith.addi %[[CS]], %[[R]] : index
// CHECK: memref.load %{{.+}}[%[[AT]]] : memref<?xf32>
func.func @dynamic_transpose(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// A reduction of unknown sizes: the schedule that serves any size (block
// columns over the rows: 32 neighbouring results a block, its 8 warps
// taking every 8th row), not split; its blocks loop over the groups of 32
// results the sizes give.
// CHECK-LABEL: func.func @dynamic_column_sums
// CHECK: %[[GROUPS:.+]] = arith.ceildivui %{{.+}}, %c32 : index
// CHECK: %[[GRID:.+]] = arith.minui %[[GROUPS]], %c65535 : index
// CHECK: gpu.launch_func @nf_kernels::@dynamic_column_sums_reduce blocks in (%[[GRID]],
// CHECK-LABEL: gpu.func @dynamic_column_sums_reduce
// CHECK-SAME: nf.schedule = "block-columns block=256 elements=?"
// CHECK: %[[KGROUPS:.+]] = arith.ceildivui %{{.+}}, %c32{{(_[0-9]+)?}} : index
// CHECK: scf.for %{{.+}} = %block_id_x to %[[KGROUPS]] step %grid_dim_x
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c8 iter_args(%{{.+}} = %{{.+}}) -> (f64)
func.func @dynamic_column_sums(%x: tensor<?x?xf32>) -> tensor<1x?xf32> {
  %y = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<?x?xf32>) -> tensor<1x?xf32>
  return %y : tensor<1x?xf32>
}

// -----

// One result of unknown length: a block per result, split into about a
// wave of parts (1024 at most), each ceil(n / 1024) elements rounded up to
// the block's 256 threads, computed on the host; a second kernel combines
// the parts in order.
// CHECK-LABEL: func.func @dynamic_whole_sum
// CHECK: %[[N:.+]] = tensor.dim
// CHECK: %[[SHARE:.+]] = arith.ceildivui %[[N]], %c1024 : index
// CHECK: %[[THREADS:.+]] = arith.ceildivui %[[SHARE]], %c256 : index
// CHECK: %[[CHUNK:.+]] = arith.muli %[[THREADS]], %c256{{(_[0-9]+)?}} : index
// CHECK: gpu.launch_func @nf_kernels::@dynamic_whole_sum_reduce blocks in (%c1024{{(_[0-9]+)?}}, {{.+}} args({{.+}}, %[[N]] : index, %[[CHUNK]] : index)
// CHECK: gpu.launch_func @nf_kernels::@dynamic_whole_sum_reduce_finish
// CHECK-LABEL: gpu.func @dynamic_whole_sum_reduce
// CHECK-SAME: nf.schedule = "block-per-result block=256 elements=? splits=1024"
func.func @dynamic_whole_sum(%x: tensor<?xf32>) -> tensor<1xf32> {
  %s = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<?xf32>) -> tensor<1xf32>
  return %s : tensor<1xf32>
}
