func.func @dyn(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %y = nf.gelu %x : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
