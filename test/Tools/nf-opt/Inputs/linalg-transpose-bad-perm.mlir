func.func @f(%x: memref<4x8xf32>, %t: memref<8x4xf32>) {
  linalg.transpose ins(%x : memref<4x8xf32>) outs(%t : memref<8x4xf32>) permutation = [1, x]
  return
}
