// An nf.fused row norm with pointwise neighbours is one kernel: the
// residual add runs on x as it is loaded (rounded to f16, as the unfused
// add would store it), bias_add and GELU on y before it is stored; the
// residual and the bias are extra kernel arguments after rows and cols.
// A fused group of another form is inlined, one kernel per op.
// RUN: nf-opt %s --nf-fuse --nf-lower-to-gpu | FileCheck %s

// CHECK-LABEL: func.func @post_ln
// CHECK: gpu.launch_func @nf_kernels::@post_ln_layer_norm
// CHECK-NOT: gpu.launch_func
// CHECK: return
// CHECK-LABEL: gpu.func @post_ln_layer_norm(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?xf16>, %{{[a-z0-9]+}}: memref<?xf16>, %{{[a-z0-9]+}}: memref<?xf16>, %[[Y:[a-z0-9]+]]: memref<?xf16>, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index, %[[RES:[a-z0-9]+]]: memref<?xf16>, %[[BIAS:[a-z0-9]+]]: memref<?xf16>)
// CHECK: vector.load %[[X]]
// CHECK: vector.load %[[RES]]
// CHECK: arith.addf
// CHECK-NEXT: arith.truncf %{{.+}} : f32 to f16
// CHECK-NEXT: arith.extf %{{.+}} : f16 to f32
// CHECK: gpu.shuffle xor
// CHECK: vector.load %[[BIAS]]
// CHECK: math.exp2
// CHECK: vector.store %{{.+}}, %[[Y]]
func.func @post_ln(%x: tensor<8x1024xf16>, %r: tensor<8x1024xf16>, %g: tensor<1024xf16>, %b: tensor<1024xf16>, %bias: tensor<1024xf16>) -> tensor<8x1024xf16> {
  %s = nf.add %x, %r : tensor<8x1024xf16>
  %y, %m, %rs = nf.layer_norm %s scale %g bias %b {axis = 1 : i64} : (tensor<8x1024xf16>, tensor<1024xf16>, tensor<1024xf16>) -> (tensor<8x1024xf16>, tensor<8x1xf32>, tensor<8x1xf32>)
  %t = nf.bias_add %y, %bias {layout = #nf.layout<nhwc>} : tensor<8x1024xf16>, tensor<1024xf16>
  %u = nf.gelu %t {approximate = #nf.approximation<tanh>} : tensor<8x1024xf16>
  return %u : tensor<8x1024xf16>
}
