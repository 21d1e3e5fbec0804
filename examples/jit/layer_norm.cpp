//===- layer_norm.cpp - calling the normfuse JIT from C++ -----------------===//
//
// Part of normfuse's examples. Compiles a LayerNorm + GELU written in the nf
// dialect, runs it on host buffers, and shows what a wrong call returns.
// Built with the project (build/examples/jit/nf-example-layer-norm) and run
// by the test suite.
//
//===----------------------------------------------------------------------===//

#include "normfuse/JIT/JIT.h"

#include <cmath>
#include <cstdio>
#include <vector>

static const char *kIR = R"mlir(
func.func @block(%x: tensor<2x5xf32>, %g: tensor<5xf32>, %b: tensor<5xf32>)
    -> (tensor<2x5xf32>, tensor<2x1xf32>) {
  %y, %mean, %rstd = nf.layer_norm %x scale %g bias %b {axis = 1 : i64}
      : (tensor<2x5xf32>, tensor<5xf32>, tensor<5xf32>)
      -> (tensor<2x5xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %h = nf.gelu %y : tensor<2x5xf32>
  return %h, %mean : tensor<2x5xf32>, tensor<2x1xf32>
}
)mlir";

int main() {
  normfuse::jit::JIT jit; // one per process is enough; it caches kernels
  auto kernel = jit.compile(kIR, "block");
  if (!kernel) {
    std::fprintf(stderr, "compile failed: %s\n",
                 llvm::toString(kernel.takeError()).c_str());
    return 1;
  }

  std::vector<float> x = {1, 2, 3, 4, 5, -1, 0, 1, 0, -1};
  std::vector<float> gamma(5, 1.0f), beta(5, 0.0f);
  std::vector<float> h(10), mean(2);
  using normfuse::DType;
  normfuse::TensorRef xr{x.data(), DType::F32, {2, 5}, {}};
  normfuse::TensorRef gr{gamma.data(), DType::F32, {5}, {}};
  normfuse::TensorRef br{beta.data(), DType::F32, {5}, {}};
  normfuse::TensorRef hr{h.data(), DType::F32, {2, 5}, {}};
  normfuse::TensorRef mr{mean.data(), DType::F32, {2, 1}, {}};

  if (llvm::Error err = (*kernel)->run({xr, gr, br}, {hr, mr})) {
    std::fprintf(stderr, "run failed: %s\n",
                 llvm::toString(std::move(err)).c_str());
    return 1;
  }
  std::printf("mean: %.4f %.4f\n", mean[0], mean[1]);
  std::printf("row 0: %.4f %.4f %.4f %.4f %.4f\n", h[0], h[1], h[2], h[3],
              h[4]);

  // A wrong call is an error, not a crash: here the input has 4 columns.
  normfuse::TensorRef narrow{x.data(), DType::F32, {2, 4}, {}};
  llvm::Error err = (*kernel)->run({narrow, gr, br}, {hr, mr});
  std::printf("wrong shape: %s\n", llvm::toString(std::move(err)).c_str());
  return 0;
}
