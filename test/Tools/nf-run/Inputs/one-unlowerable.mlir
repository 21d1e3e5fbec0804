// @custom holds an op no back end lowers; @relu is ordinary.
func.func @custom(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %0 = tosa.custom %x {domain_name = "vendor", operator_name = "frobnicate", implementation_attrs = ""} : (tensor<3x8xf32>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}
func.func @relu(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %0 = nf.relu %x : tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}
