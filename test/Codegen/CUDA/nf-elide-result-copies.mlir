// nf-elide-result-copies: a result of dynamic shape that bufferization left
// in an allocation copied into its out-parameter at the end is written
// straight into the out-parameter; where the allocation is used after the
// copy, the out-parameter is used elsewhere, or the types differ, the copy
// stays.
// RUN: nf-opt %s --nf-elide-result-copies --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @elided
// CHECK-SAME: (%[[IN:.+]]: memref<?xf32>, %[[OUT:.+]]: memref<?xf32>)
// CHECK-NOT: memref.alloc
// CHECK: memref.copy %[[IN]], %[[OUT]]
// CHECK-NOT: memref.copy
// CHECK: return
func.func @elided(%in: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %in, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  memref.copy %in, %a : memref<?xf32> to memref<?xf32>
  memref.copy %a, %out : memref<?xf32> to memref<?xf32>
  return
}

// -----

// CHECK-LABEL: func.func @used_after_the_copy
// CHECK: %[[A:.+]] = memref.alloc
// CHECK: memref.copy %[[A]], %arg1
// CHECK: memref.load %[[A]]
func.func @used_after_the_copy(%in: memref<?xf32>, %out: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %n = memref.dim %in, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  memref.copy %in, %a : memref<?xf32> to memref<?xf32>
  memref.copy %a, %out : memref<?xf32> to memref<?xf32>
  %v = memref.load %a[%c0] : memref<?xf32>
  return %v : f32
}

// -----

// CHECK-LABEL: func.func @out_parameter_used_elsewhere
// CHECK: %[[A:.+]] = memref.alloc
// CHECK: memref.copy %[[A]], %arg1
func.func @out_parameter_used_elsewhere(%in: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %in, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  memref.copy %in, %a : memref<?xf32> to memref<?xf32>
  %z = arith.constant 0.0 : f32
  memref.store %z, %out[%c0] : memref<?xf32>
  memref.copy %a, %out : memref<?xf32> to memref<?xf32>
  return
}

// -----

// CHECK-LABEL: func.func @types_differ
// CHECK: %[[A:.+]] = memref.alloc
// CHECK: memref.copy %[[A]], %arg1
func.func @types_differ(%in: memref<4xf32>, %out: memref<?xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %in, %a : memref<4xf32> to memref<4xf32>
  memref.copy %a, %out : memref<4xf32> to memref<?xf32>
  return
}
