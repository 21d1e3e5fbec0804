// nf-align-streaming-stores gives each non-temporal store of a vector of a
// multiple of 16 bytes the 16-byte alignment the nf loops guarantee for
// them, in the functions marked nf.streaming_stores; other stores, and
// unmarked functions, keep the alignment they had.
// RUN: nf-opt %s --nf-align-streaming-stores | FileCheck %s

// CHECK-LABEL: llvm.func @stores
llvm.func @stores(%p: !llvm.ptr, %v8: vector<8xf32>, %h8: vector<8xf16>,
                  %h4: vector<4xf16>, %s: f32) attributes {nf.streaming_stores} {
  // CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64, nontemporal} : vector<8xf32>, !llvm.ptr
  llvm.store %v8, %p {alignment = 4 : i64, nontemporal} : vector<8xf32>, !llvm.ptr
  // CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64, nontemporal} : vector<8xf16>, !llvm.ptr
  llvm.store %h8, %p {alignment = 2 : i64, nontemporal} : vector<8xf16>, !llvm.ptr
  // 8 bytes: not a multiple of 16.
  // CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 2 : i64, nontemporal} : vector<4xf16>, !llvm.ptr
  llvm.store %h4, %p {alignment = 2 : i64, nontemporal} : vector<4xf16>, !llvm.ptr
  // Plain vector stores and scalar non-temporal stores are left alone.
  // CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
  llvm.store %v8, %p {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
  // CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 4 : i64, nontemporal} : f32, !llvm.ptr
  llvm.store %s, %p {alignment = 4 : i64, nontemporal} : f32, !llvm.ptr
  llvm.return
}

// A function the nf loops did not mark: its non-temporal stores keep their
// alignment.
// CHECK-LABEL: llvm.func @unmarked
llvm.func @unmarked(%p: !llvm.ptr, %v8: vector<8xf32>) {
  // CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 4 : i64, nontemporal} : vector<8xf32>, !llvm.ptr
  llvm.store %v8, %p {alignment = 4 : i64, nontemporal} : vector<8xf32>, !llvm.ptr
  llvm.return
}
