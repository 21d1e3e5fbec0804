// What the CUDA printer refuses: an error at the op, and nothing printed.
// RUN: nf-translate --nf-to-cuda %s -split-input-file -verify-diagnostics
// RUN: not nf-translate --nf-to-cuda %s -split-input-file 2>&1 >%t.out | FileCheck %s --check-prefix=NOTHING
// RUN: FileCheck %s --check-prefix=EMPTY --allow-empty < %t.out
// NOTHING: error:
// EMPTY-NOT: {{.}}

module attributes {gpu.container_module} {
  gpu.module @nf_kernels {
    gpu.func @sinh(%x: memref<?xf32>, %i: index) kernel {
      %v = memref.load %x[%i] : memref<?xf32>
      // expected-error @+1 {{'math.sinh' op cannot print as CUDA}}
      %s = math.sinh %v : f32
      memref.store %s, %x[%i] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @nf_kernels {
    gpu.func @two_dimensional_buffer(%x: memref<4x4xf32>, %i: index) kernel {
      // expected-error @+1 {{'memref.load' op cannot print an access to 'memref<4x4xf32>': kernels take flat memrefs of identity layout}}
      %v = memref.load %x[%i, %i] : memref<4x4xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @nf_kernels {
    gpu.func @matrix_vector(%x: memref<?xf32>, %i: index) kernel {
      // expected-error @+1 {{'vector.load' op cannot print type 'vector<2x2xf32>' as CUDA}}
      %v = vector.load %x[%i] : memref<?xf32>, vector<2x2xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @nf_kernels {
    // expected-error @+1 {{'gpu.func' op cannot print a device function as CUDA (only kernels)}}
    gpu.func @helper(%x: f32) {
      gpu.return
    }
  }
}

// -----

// 32-bit indices: an index argument would come from the host as 64 bits,
// and a constant that does not fit in an int is not printed.
module attributes {gpu.container_module} {
  gpu.module @nf_kernels {
    // expected-error @+1 {{'gpu.func' op has nf.index_bits = 32 and index arguments, which the host passes as 64 bits}}
    gpu.func @index_argument(%x: memref<?xf32>, %i: index) kernel attributes {nf.index_bits = 32 : i64} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @nf_kernels {
    gpu.func @wide_constant(%x: memref<?xf32>) kernel attributes {nf.index_bits = 32 : i64} {
      // expected-error @+1 {{'arith.constant' op cannot print constant 4294967296 : index as CUDA}}
      %c = arith.constant 4294967296 : index
      %v = memref.load %x[%c] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @nf_kernels {
    // expected-error @+1 {{'gpu.func' op has nf.index_bits = 16; CUDA kernels take 32 or 64}}
    gpu.func @sixteen(%x: memref<?xf32>) kernel attributes {nf.index_bits = 16 : i64} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @nf_kernels {
    // expected-error @+1 {{cannot print a cluster of 9 blocks as CUDA (1 to 8)}}
    gpu.func @nine_blocks(%x: memref<?xf32>) kernel attributes {nf.cluster_blocks = 9 : i64} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @nf_kernels {
    gpu.func @cluster_store_to_global(%x: memref<?xf32>, %v: f32, %i: index) kernel attributes {nf.cluster_blocks = 2 : i64} {
      // expected-error @+1 {{cannot print as CUDA: a cluster store into memory that is not the workgroup's}}
      nf.cluster_store %v, %x[%i] rank %i : memref<?xf32>
      gpu.return
    }
  }
}
