// A kernel of a thread-block cluster prints with __cluster_dims__ (its
// blocks launched in clusters along x), the prelude's nf_cluster_st (mapa
// and st.shared::cluster) for nf.cluster_store and nf_cluster_sync (the
// cluster's barrier) for nf.cluster_barrier, and registers with the
// simulator as a cluster kernel. sm_80 has no clusters: a block row.
// RUN: nf-translate --nf-to-cuda %s | FileCheck %s
// RUN: nf-translate --nf-to-cuda --cuda-arch=sm_80 %s | FileCheck %s --check-prefix=SM80

// CHECK-LABEL: // rows_rms_norm: cluster-row threads-per-row=256 rows-per-block=1 vector=8 registers=4 cluster=2
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(256) __cluster_dims__(2, 1, 1) rows_rms_norm(
// CHECK: NF_SHARED(float, [[SLOTS:s[0-9]+]], 4);
// CHECK: nf_cluster_sync_relaxed();
// CHECK: nf_cluster_st(([[SLOTS]] + v{{[0-9]+}}), (unsigned)v{{[0-9]+}}, v{{[0-9]+}});
// CHECK-NEXT: }
// CHECK-NEXT: nf_cluster_sync();
// CHECK-NEXT: float [[S0:v[0-9]+]] = *([[SLOTS]] + v{{[0-9]+}});
// CHECK-NEXT: float [[S1:v[0-9]+]] = *([[SLOTS]] + v{{[0-9]+}});
// CHECK-NEXT: float v{{[0-9]+}} = [[S0]] + [[S1]];
// CHECK-NOT: nf_cluster_sync
// CHECK: NF_SIM_CLUSTER_ENTRY(rows_rms_norm, 2)
// SM80: // rows_rms_norm: block-row-registers threads-per-row=512
// SM80-NOT: cluster_
// SM80: NF_SIM_ENTRY(rows_rms_norm)
func.func @rows(%x: tensor<4x16384xbf16>) -> tensor<4x16384xbf16> {
  %y, %r = nf.rms_norm %x {axis = 1 : i64} : (tensor<4x16384xbf16>) -> (tensor<4x16384xbf16>, tensor<4x1xf32>)
  return %y : tensor<4x16384xbf16>
}
