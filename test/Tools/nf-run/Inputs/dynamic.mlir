func.func @ln(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x1xf32>, tensor<?x1xf32>) {
  %y, %m, %r = nf.layer_norm %x {axis = 1 : i64} : (tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x1xf32>, tensor<?x1xf32>)
  return %y, %m, %r : tensor<?x?xf32>, tensor<?x1xf32>, tensor<?x1xf32>
}

func.func @add(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = nf.add %a, %b : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

func.func @relu_rows8(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = nf.relu %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
