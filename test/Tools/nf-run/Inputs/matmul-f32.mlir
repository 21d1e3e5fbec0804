func.func @mm(%a: tensor<40x72xf32>, %b: tensor<72x24xf32>) -> tensor<40x24xf32> {
  %c = nf.matmul %a, %b : tensor<40x72xf32>, tensor<72x24xf32> -> tensor<40x24xf32>
  return %c : tensor<40x24xf32>
}
