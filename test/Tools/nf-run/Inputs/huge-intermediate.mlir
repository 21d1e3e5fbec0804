// One element in, one out, and 4 * 2^50 bytes between them: a tile of the
// input summed back to one element. nf-run refuses to compile it instead of
// letting the kernel's allocation fail.
func.func @tile_and_sum(%x: tensor<1x1xf32>) -> tensor<1x1xf32> {
  %0 = tosa.tile %x {multiples = array<i64: 1048576, 1073741824>} : (tensor<1x1xf32>) -> tensor<1048576x1073741824xf32>
  %1 = tosa.reduce_sum %0 {axis = 1 : i32} : (tensor<1048576x1073741824xf32>) -> tensor<1048576x1xf32>
  %2 = tosa.reduce_sum %1 {axis = 0 : i32} : (tensor<1048576x1xf32>) -> tensor<1x1xf32>
  return %2 : tensor<1x1xf32>
}

// The same through nf ops: a matmul of a column by a row (4 * 2^40 bytes),
// summed per column.
func.func @outer_product_sum(%a: tensor<1048576x1xf32>, %b: tensor<1x1048576xf32>) -> tensor<1048576xf32> {
  %c = nf.matmul %a, %b : tensor<1048576x1xf32>, tensor<1x1048576xf32> -> tensor<1048576x1048576xf32>
  %d = nf.bias_add_grad %c {layout = #nf.layout<nhwc>} : tensor<1048576x1048576xf32> -> tensor<1048576xf32>
  return %d : tensor<1048576xf32>
}
