// Valid: the guards let well-formed integer lists through, also in comments
// such as this one: linalg.reduce ... dimensions = [{{.+}}].
func.func @ok(%x: memref<4x8xf32>, %y: memref<4xf32>, %t: memref<8x4xf32>) {
  linalg.reduce ins(%x : memref<4x8xf32>) outs(%y : memref<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  linalg.transpose ins(%x : memref<4x8xf32>) outs(%t : memref<8x4xf32>) permutation = [1, 0]
  return
}
