// The LayerNorm of the README's tour: rows of 768 (any number of them),
// with a scale and a bias; returns y, and the mean and rstd of each row for
// the backward pass.
func.func @layer_norm(%x: tensor<?x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>)
    -> (tensor<?x768xf32>, tensor<?x1xf32>, tensor<?x1xf32>) {
  %y, %m, %r = nf.layer_norm %x scale %g bias %b {axis = 1 : i64, epsilon = 1.0e-5}
      : (tensor<?x768xf32>, tensor<768xf32>, tensor<768xf32>)
      -> (tensor<?x768xf32>, tensor<?x1xf32>, tensor<?x1xf32>)
  return %y, %m, %r : tensor<?x768xf32>, tensor<?x1xf32>, tensor<?x1xf32>
}
