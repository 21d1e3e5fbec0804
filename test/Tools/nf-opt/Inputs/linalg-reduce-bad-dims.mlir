func.func @f(%x: memref<?xf32>, %y: memref<f32>) {
  linalg.reduce ins(%x : memref<?xf32>) outs(%y : memref<f32>) dimensions = [d0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}
