// An op with no CUDA kernel yet (the host reading an element of a tensor,
// here to offset a slice): the CPU runs it, the CUDA back end refuses it
// at the op.
func.func @row_at(%x: tensor<2x3xf32>, %i: tensor<i32>) -> tensor<1x3xf32> {
  %e = tensor.extract %i[] : tensor<i32>
  %k = arith.index_cast %e : i32 to index
  %y = tensor.extract_slice %x[%k, 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}
// An insert_slice into an argument: that tensor is the window kernel's
// first window.
func.func @into_an_argument(%x: tensor<2x3xf32>, %d: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y = tensor.insert_slice %x into %d[1, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
// A pad whose value is an argument: the kernel reads the value itself.
func.func @pad_value(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<2x5xf32> {
  %p = "tosa.const"() <{value = dense<[[0, 0], [1, 1]]> : tensor<2x2xi32>}> : () -> tensor<2x2xi32>
  %y = tosa.pad %x, %p, %v : (tensor<2x3xf32>, tensor<2x2xi32>, tensor<f32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}
// An argmax (a reduction of two results, the index and the value) runs on
// a thread per result.
func.func @argmax(%x: tensor<2x3xf32>) -> tensor<2xi32> {
  %y = tosa.argmax %x {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2xi32>
  return %y : tensor<2xi32>
}
// tosa.sin, tosa.reduce_max and tosa.slice, which nothing raises, run as
// linalg kernels on the GPU.
func.func @sine(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = tosa.sin %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @row_max(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %y = tosa.reduce_max %x {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %y : tensor<2x1xf32>
}
func.func @slice(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %y = tosa.slice %x {start = array<i64: 0, 1>, size = array<i64: 2, 2>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
