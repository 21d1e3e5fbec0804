func.func @f(%x: memref<8xf32>, %y: memref<4x8xf32>) {
  linalg.broadcast ins(%x : memref<8xf32>) outs(%y : memref<4x8xf32>) dimensions = 0
  return
}
