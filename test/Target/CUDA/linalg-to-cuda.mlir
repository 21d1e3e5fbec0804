// nf-translate --nf-to-cuda on TOSA ops no raising takes: their linalg
// kernels print as CUDA like the nf ones, with what only they need: a
// splat vector constant, f64 rounded once to f16, math the nf ops do not
// use, and a reduction's f64 partial sums shuffled across the warp.
// RUN: nf-translate --nf-to-cuda %s | FileCheck %s

// CHECK-LABEL: // returned_splat_generic: grid-stride block=256 vector=4 min-blocks-per-sm=4
// CHECK: nf_vec<float, 4> [[V:v[0-9]+]] = nf_vec<float, 4>{{[{][{]}}2.5f, 2.5f, 2.5f, 2.5f{{[}][}]}};
// CHECK: nf_stg((nf_vec<float, 4> *)(a0 + i{{[0-9]+}}), [[V]]);
func.func @returned_splat() -> tensor<2x4xf32> {
  %c = "tosa.const"() <{value = dense<2.5> : tensor<2x4xf32>}> : () -> tensor<2x4xf32>
  return %c : tensor<2x4xf32>
}

// CHECK-LABEL: // narrow_generic: grid-stride block=256 vector=2
// CHECK: double [[D:v[0-9]+]] = v{{[0-9]+}}.v[0];
// CHECK: __half v{{[0-9]+}} = __double2half([[D]]);
func.func @narrow(%x: tensor<6xf64>) -> tensor<6xf16> {
  %y = arith.truncf %x : tensor<6xf64> to tensor<6xf16>
  return %y : tensor<6xf16>
}

// CHECK-LABEL: // math_generic: grid-stride block=256 vector=4
// CHECK: float [[P:v[0-9]+]] = powf(v{{[0-9]+}}, v{{[0-9]+}});
// CHECK-NEXT: float v{{[0-9]+}} = sinf([[P]]);
func.func @math(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %p = tosa.pow %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s = tosa.sin %p : (tensor<8xf32>) -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// CHECK-LABEL: // row_sums_reduce: warp-per-result block=256 elements=100 vector=4
// CHECK: double [[ACC:v[0-9]+]] = v{{[0-9]+}};
// CHECK: nf_vec<__half, 4> [[V:v[0-9]+]] = nf_ldg((const nf_vec<__half, 4> *)(a0 + v{{[0-9]+}}));
// CHECK-NEXT: __half [[X:v[0-9]+]] = [[V]].v[0];
// CHECK-NEXT: float [[XF:v[0-9]+]] = __half2float([[X]]);
// CHECK: double [[XD:v[0-9]+]] = (double)[[XF]];
// CHECK-NEXT: double v{{[0-9]+}} = [[ACC]] + [[XD]];
// CHECK: double v{{[0-9]+}} = __shfl_xor_sync(0xffffffffu, v{{[0-9]+}}, v{{[0-9]+}}, v{{[0-9]+}});
// CHECK: __half v{{[0-9]+}} = __double2half(v{{[0-9]+}});
func.func @row_sums(%x: tensor<4x100xf16>) -> tensor<4x1xf16> {
  %s = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x100xf16>) -> tensor<4x1xf16>
  return %s : tensor<4x1xf16>
}
