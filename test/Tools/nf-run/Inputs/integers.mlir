// Unsigned and bool tensors as the ONNX importer writes them.
func.func @order(%a: tensor<2x4xui8>, %b: tensor<2x4xui8>) -> (tensor<2x4xi1>, tensor<2x4xui8>, tensor<2x1xui8>) {
  %gt = tosa.greater %a, %b : (tensor<2x4xui8>, tensor<2x4xui8>) -> tensor<2x4xi1>
  %max = tosa.maximum %a, %b : (tensor<2x4xui8>, tensor<2x4xui8>) -> tensor<2x4xui8>
  %sum = tosa.reduce_sum %a {axis = 1 : i32} : (tensor<2x4xui8>) -> tensor<2x1xui8>
  return %gt, %max, %sum : tensor<2x4xi1>, tensor<2x4xui8>, tensor<2x1xui8>
}

func.func @mask(%p: tensor<2x4xi1>, %x: tensor<2x4xi64>) -> tensor<2x4xi64> {
  %zero = "tosa.const"() <{value = dense<-1> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %y = tosa.select %p, %x, %zero : (tensor<2x4xi1>, tensor<2x4xi64>, tensor<1x1xi64>) -> tensor<2x4xi64>
  return %y : tensor<2x4xi64>
}
