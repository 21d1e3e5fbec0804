//===- DynamicShapesTest.cpp - functions with dynamic dimensions -*- C++
//-*-===//
//
// Part of normfuse. A function with dynamic dimensions compiles once per set
// of input shapes: its results on several shapes against the float64
// reference and against the kernel of the same function written with static
// shapes (which must agree bit for bit: both compile the same static IR),
// the cache (same shapes: no compile; new shapes: one more kernel), the
// result shapes `specialize` gives, calls from several threads, and every
// wrong call, which returns an error and writes nothing.
//
// Tolerances (relative L2 error against float64, f32 data): outputs 1e-5
// for layer_norm (as in NormsTest), 2e-6 for the pointwise chain (gelu's
// erf is a polynomial, as in PointwiseTest); statistics 1e-5.
//
//===----------------------------------------------------------------------===//

#include "JITTestUtils.h"
#include "Reference.h"

#include <cmath>
#include <thread>

using namespace nftest;
using normfuse::jit::JIT;
using normfuse::jit::Kernel;

namespace {

const char *kLayerNorm = R"mlir(
func.func @ln(%x: tensor<?x?xf32>, %s: tensor<?xf32>, %b: tensor<?xf32>)
    -> (tensor<?x?xf32>, tensor<?x1xf32>, tensor<?x1xf32>) {
  %y, %m, %r = nf.layer_norm %x scale %s bias %b {axis = 1 : i64}
      : (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>)
      -> (tensor<?x?xf32>, tensor<?x1xf32>, tensor<?x1xf32>)
  return %y, %m, %r : tensor<?x?xf32>, tensor<?x1xf32>, tensor<?x1xf32>
}
)mlir";

/// `kLayerNorm` with the static shapes of a rows x cols input.
std::string staticLayerNorm(int64_t rows, int64_t cols) {
  std::string x = tensorType(DType::F32, {rows, cols});
  std::string p = tensorType(DType::F32, {cols});
  std::string st = tensorType(DType::F32, {rows, 1});
  return "func.func @ln(%x: " + x + ", %s: " + p + ", %b: " + p + ") -> (" + x +
         ", " + st + ", " + st +
         ") {\n  %y, %m, %r = nf.layer_norm %x scale %s bias %b {axis = 1 : "
         "i64} : (" +
         x + ", " + p + ", " + p + ") -> (" + x + ", " + st + ", " + st +
         ")\n  return %y, %m, %r : " + x + ", " + st + ", " + st + "\n}\n";
}

/// bias_add along the last dimension, gelu, then a residual add; the last
/// dimension is static.
const char *kBiasGeluAdd = R"mlir(
func.func @epilogue(%x: tensor<?x?x16xf32>, %b: tensor<16xf32>, %r: tensor<?x?x16xf32>)
    -> tensor<?x?x16xf32> {
  %0 = nf.bias_add %x, %b {layout = #nf.layout<nhwc>} : tensor<?x?x16xf32>, tensor<16xf32>
  %1 = nf.gelu %0 : tensor<?x?x16xf32>
  %2 = nf.add %1, %r : tensor<?x?x16xf32>
  return %2 : tensor<?x?x16xf32>
}
)mlir";

const char *kAdd = R"mlir(
func.func @add(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = nf.add %a, %b : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
)mlir";

/// The buffers of one layer_norm call on a rows x cols input, outputs
/// poisoned with NaN.
struct LayerNormCall {
  LayerNormCall(int64_t rows, int64_t cols, unsigned seed = 5)
      : x(DType::F32, {rows, cols}), scale(DType::F32, {cols}),
        bias(DType::F32, {cols}), y(DType::F32, {rows, cols}),
        mean(DType::F32, {rows, 1}), rstd(DType::F32, {rows, 1}) {
    std::mt19937 rng(seed);
    x.fillNormal(rng);
    scale.fillNormal(rng, 1.0, 0.5);
    bias.fillNormal(rng);
    for (Buffer *out : {&y, &mean, &rstd})
      out->fill(std::nan(""));
  }
  llvm::Error run(const Kernel &kernel) {
    return kernel.run({x.ref(), scale.ref(), bias.ref()},
                      {y.ref(), mean.ref(), rstd.ref()});
  }
  Buffer x, scale, bias, y, mean, rstd;
};

TEST(DynamicShapesTest, LayerNormMatchesReferenceAndStaticKernel) {
  auto dynamic = compileOrFail(kLayerNorm, "ln");
  ASSERT_TRUE(dynamic);
  EXPECT_EQ(dynamic->getSignature().inputs[0].str(), "tensor<?x?xf32>");
  EXPECT_FALSE(dynamic->getSignature().hasStaticShapes());
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {3, 7}, {17, 1000}, {64, 1537}}) {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
    LayerNormCall call(rows, cols);
    ASSERT_EQ(errorText(call.run(*dynamic)), "");

    std::vector<double> y, mean, rstd;
    std::vector<double> scale = call.scale.toDoubles(),
                        bias = call.bias.toDoubles();
    layerNormReference(call.x.toDoubles(), cols, &scale, &bias, 1e-5, y, mean,
                       rstd);
    EXPECT_LT(relativeError(call.y.toDoubles(), y), 1e-5);
    EXPECT_LT(relativeError(call.mean.toDoubles(), mean), 1e-5);
    EXPECT_LT(relativeError(call.rstd.toDoubles(), rstd), 1e-5);

    auto fixed = compileOrFail(staticLayerNorm(rows, cols), "ln");
    ASSERT_TRUE(fixed);
    LayerNormCall same(rows, cols);
    ASSERT_EQ(errorText(same.run(*fixed)), "");
    EXPECT_EQ(same.y.bytes, call.y.bytes);
    EXPECT_EQ(same.mean.bytes, call.mean.bytes);
    EXPECT_EQ(same.rstd.bytes, call.rstd.bytes);
  }
}

TEST(DynamicShapesTest, BiasGeluAddMatchesReference) {
  auto kernel = compileOrFail(kBiasGeluAdd, "epilogue");
  ASSERT_TRUE(kernel);
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {2, 3}, {5, 1031}, {0, 4}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(m) + "x16");
    std::mt19937 rng(9);
    Buffer x(DType::F32, {n, m, 16}), b(DType::F32, {16}),
        r(DType::F32, {n, m, 16}), out(DType::F32, {n, m, 16});
    x.fillNormal(rng, 0.0, 2.0);
    b.fillNormal(rng);
    r.fillNormal(rng);
    out.fill(std::nan(""));
    ASSERT_EQ(errorText(kernel->run({x.ref(), b.ref(), r.ref()}, {out.ref()})),
              "");
    std::vector<double> ref(x.size());
    for (int64_t i = 0; i < x.size(); ++i) {
      double v = x.get(i) + b.get(i % 16);
      ref[i] = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))) + r.get(i);
    }
    if (x.size() > 0)
      EXPECT_LT(relativeError(out.toDoubles(), ref), 2e-6);
  }
}

TEST(DynamicShapesTest, SameShapesHitTheCacheAndNewShapesCompile) {
  JIT jit;
  auto compiled = jit.compile(kLayerNorm, "ln");
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  std::shared_ptr<Kernel> kernel = *compiled;
  // Nothing is compiled until a call gives the shapes.
  EXPECT_EQ(jit.getCacheSize(), 0u);
  auto again = jit.compile(kLayerNorm, "ln");
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(again->get(), kernel.get());

  LayerNormCall a(4, 8), b(5, 8);
  ASSERT_EQ(errorText(a.run(*kernel)), "");
  EXPECT_EQ(jit.getCacheSize(), 1u);
  ASSERT_EQ(errorText(a.run(*kernel)), "");
  EXPECT_EQ(jit.getCacheSize(), 1u);
  auto specialized = kernel->specialize({{4, 8}, {8}, {8}});
  ASSERT_TRUE(bool(specialized)) << llvm::toString(specialized.takeError());
  EXPECT_EQ(jit.getCacheSize(), 1u);
  ASSERT_EQ(errorText(b.run(*kernel)), "");
  EXPECT_EQ(jit.getCacheSize(), 2u);
  auto specializedAgain = kernel->specialize({{4, 8}, {8}, {8}});
  ASSERT_TRUE(bool(specializedAgain));
  EXPECT_EQ(specializedAgain->get(), specialized->get());
}

TEST(DynamicShapesTest, KernelCompilesAfterItsJITIsGone) {
  std::shared_ptr<Kernel> kernel;
  {
    JIT jit;
    auto compiled = jit.compile(kLayerNorm, "ln");
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    kernel = *compiled;
  }
  LayerNormCall call(2, 9);
  ASSERT_EQ(errorText(call.run(*kernel)), "");
  std::vector<double> y, mean, rstd;
  std::vector<double> scale = call.scale.toDoubles(),
                      bias = call.bias.toDoubles();
  layerNormReference(call.x.toDoubles(), 9, &scale, &bias, 1e-5, y, mean, rstd);
  EXPECT_LT(relativeError(call.y.toDoubles(), y), 1e-5);
}

TEST(DynamicShapesTest, SpecializeGivesTheResultShapes) {
  auto kernel = compileOrFail(kLayerNorm, "ln");
  ASSERT_TRUE(kernel);
  auto specialized = kernel->specialize({{3, 5}, {5}, {5}});
  ASSERT_TRUE(bool(specialized)) << llvm::toString(specialized.takeError());
  const normfuse::jit::Signature &sig = (*specialized)->getSignature();
  ASSERT_EQ(sig.outputs.size(), 3u);
  EXPECT_EQ(sig.inputs[0].str(), "tensor<3x5xf32>");
  EXPECT_EQ(sig.outputs[0].str(), "tensor<3x5xf32>");
  EXPECT_EQ(sig.outputs[1].str(), "tensor<3x1xf32>");
  EXPECT_EQ(sig.outputs[2].str(), "tensor<3x1xf32>");
  EXPECT_TRUE(sig.hasStaticShapes());
}

TEST(DynamicShapesTest, StaticKernelSpecializesToItself) {
  const char *ir = R"mlir(
func.func @relu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nf.relu %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
)mlir";
  auto kernel = compileOrFail(ir, "relu");
  ASSERT_TRUE(kernel);
  auto same = kernel->specialize({{2, 3}});
  ASSERT_TRUE(bool(same));
  EXPECT_EQ(same->get(), kernel.get());
  auto other = kernel->specialize({{2, 4}});
  ASSERT_FALSE(bool(other));
  EXPECT_EQ(llvm::toString(other.takeError()),
            "input #0 of @relu has shape [2, 4]; expected [2, 3] "
            "(tensor<2x3xf32>)");
}

TEST(DynamicShapesTest, ConcurrentCallsOnDifferentShapesAgree) {
  auto kernel = compileOrFail(kAdd, "add");
  ASSERT_TRUE(kernel);
  std::vector<std::thread> threads;
  std::vector<std::string> errors(6);
  std::vector<bool> correct(6, false);
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      // Threads 0-2 and 3-5 share their shapes.
      int64_t rows = 2 + t % 3, cols = 33;
      Buffer a(DType::F32, {rows, cols}), b(DType::F32, {rows, cols}),
          out(DType::F32, {rows, cols});
      a.fill(t);
      b.fill(1.0);
      out.fill(std::nan(""));
      errors[t] = errorText(kernel->run({a.ref(), b.ref()}, {out.ref()}, 1));
      correct[t] = true;
      for (int64_t i = 0; i < out.size(); ++i)
        correct[t] = correct[t] && out.get(i) == t + 1.0;
    });
  for (auto &th : threads)
    th.join();
  for (int t = 0; t < 6; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    EXPECT_TRUE(correct[t]) << "thread " << t;
  }
}

//===----------------------------------------------------------------------===//
// Wrong calls
//===----------------------------------------------------------------------===//

/// A wrong call must leave its outputs as they were.
void expectUntouched(const Buffer &out, double poison) {
  for (int64_t i = 0; i < out.size(); ++i)
    ASSERT_EQ(out.get(i), poison) << "element " << i;
}

TEST(DynamicShapesErrorsTest, InconsistentInputShapes) {
  auto ln = compileOrFail(kLayerNorm, "ln");
  ASSERT_TRUE(ln);
  LayerNormCall call(4, 8);
  Buffer scale(DType::F32, {7});
  call.y.fill(-7.0);
  EXPECT_EQ(
      errorText(ln->run({call.x.ref(), scale.ref(), call.bias.ref()},
                        {call.y.ref(), call.mean.ref(), call.rstd.ref()})),
      "@ln cannot take inputs of shapes [4, 8], [7], [8]:\n"
      "<ir>:4:16: 'nf.layer_norm' op scale has shape [7]; expected [8] "
      "(input.shape[axis:])");
  expectUntouched(call.y, -7.0);

  auto add = compileOrFail(kAdd, "add");
  ASSERT_TRUE(add);
  Buffer a(DType::F32, {2, 3}), b(DType::F32, {2, 4}), out(DType::F32, {2, 3});
  out.fill(-7.0);
  EXPECT_EQ(errorText(add->run({a.ref(), b.ref()}, {out.ref()})),
            "@add cannot take inputs of shapes [2, 3], [2, 4]:\n"
            "<ir>:3:8: 'nf.add' op all non-scalar operands/results must have "
            "the same shape and base type");
  expectUntouched(out, -7.0);
}

TEST(DynamicShapesErrorsTest, WrongOutputShapeCompilesNothing) {
  JIT jit;
  auto kernel = jit.compile(kAdd, "add");
  ASSERT_TRUE(bool(kernel)) << llvm::toString(kernel.takeError());
  Buffer a(DType::F32, {2, 3}), b(DType::F32, {2, 3}), out(DType::F32, {3, 2});
  out.fill(-7.0);
  EXPECT_EQ(errorText((*kernel)->run({a.ref(), b.ref()}, {out.ref()})),
            "output #0 of @add has shape [3, 2]; expected [2, 3] "
            "(tensor<2x3xf32> for inputs of shapes [2, 3], [2, 3])");
  expectUntouched(out, -7.0);
  EXPECT_EQ(jit.getCacheSize(), 0u);
}

TEST(DynamicShapesErrorsTest, WrongRank) {
  auto kernel = compileOrFail(kAdd, "add");
  ASSERT_TRUE(kernel);
  Buffer a(DType::F32, {6}), b(DType::F32, {2, 3}), out(DType::F32, {2, 3});
  out.fill(-7.0);
  EXPECT_EQ(errorText(kernel->run({a.ref(), b.ref()}, {out.ref()})),
            "input #0 of @add has shape [6]; expected [?, ?] "
            "(tensor<?x?xf32>)");
  expectUntouched(out, -7.0);
  Buffer flat(DType::F32, {6});
  EXPECT_EQ(errorText(kernel->run({b.ref(), b.ref()}, {flat.ref()})),
            "output #0 of @add has shape [6]; expected [?, ?] "
            "(tensor<?x?xf32>)");
}

TEST(DynamicShapesErrorsTest, StaticDimensionMismatch) {
  auto kernel = compileOrFail(kBiasGeluAdd, "epilogue");
  ASSERT_TRUE(kernel);
  Buffer x(DType::F32, {2, 3, 15}), b(DType::F32, {16}),
      out(DType::F32, {2, 3, 15});
  out.fill(-7.0);
  EXPECT_EQ(errorText(kernel->run({x.ref(), b.ref(), x.ref()}, {out.ref()})),
            "input #0 of @epilogue has shape [2, 3, 15]; expected [?, ?, 16] "
            "(tensor<?x?x16xf32>)");
  expectUntouched(out, -7.0);
}

TEST(DynamicShapesErrorsTest, NegativeDimension) {
  auto kernel = compileOrFail(kAdd, "add");
  ASSERT_TRUE(kernel);
  Buffer a(DType::F32, {2, 3}), out(DType::F32, {2, 3});
  out.fill(-7.0);
  normfuse::TensorRef bad = a.ref();
  bad.shape = {-1, 3};
  EXPECT_EQ(errorText(kernel->run({bad, a.ref()}, {out.ref()})),
            "input #0 of @add has shape [-1, 3]; expected [?, ?] "
            "(tensor<?x?xf32>)");
  expectUntouched(out, -7.0);
  auto specialized = kernel->specialize({{2, -3}, {2, 3}});
  ASSERT_FALSE(bool(specialized));
  EXPECT_EQ(llvm::toString(specialized.takeError()),
            "input #0 of @add has shape [2, -3]; expected [?, ?] "
            "(tensor<?x?xf32>)");
}

TEST(DynamicShapesErrorsTest, WrongDTypeAndCount) {
  auto kernel = compileOrFail(kAdd, "add");
  ASSERT_TRUE(kernel);
  Buffer a(DType::F32, {2, 3}), half(DType::F16, {2, 3}),
      out(DType::F32, {2, 3});
  out.fill(-7.0);
  EXPECT_EQ(errorText(kernel->run({a.ref(), half.ref()}, {out.ref()})),
            "input #1 of @add has dtype f16; expected f32 (tensor<?x?xf32>)");
  EXPECT_EQ(errorText(kernel->run({a.ref()}, {out.ref()})),
            "@add takes 2 inputs, got 1");
  EXPECT_EQ(errorText(kernel->run({a.ref(), a.ref()}, {out.ref()}, -1)),
            "threads must be 0 (the default) or positive, got -1");
  expectUntouched(out, -7.0);
}

TEST(DynamicShapesErrorsTest, OpWithoutAShapeRuleIsNamed) {
  const char *ir = R"mlir(
func.func @expand(%x: tensor<?xf32>) -> tensor<?x4xf32> {
  %c2 = arith.constant 2 : index
  %y = tensor.expand_shape %x [[0, 1]] output_shape [%c2, 4] : tensor<?xf32> into tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
)mlir";
  auto kernel = compileOrFail(ir, "expand");
  ASSERT_TRUE(kernel);
  auto specialized = kernel->specialize({{8}});
  ASSERT_FALSE(bool(specialized));
  EXPECT_EQ(llvm::toString(specialized.takeError()),
            "@expand cannot take inputs of shapes [8]:\n"
            "<ir>:4:8: 'tensor.expand_shape' op result #0 has type "
            "'tensor<?x4xf32>'; nf-specialize-shapes derives static shapes "
            "for nf ops, tensor.cast and ops that infer their result shapes");
}

// A TOSA op infers its result's shape from its operands: a dynamic TOSA
// program runs on the shapes of each call.
TEST(DynamicShapesTest, TosaOpsTakeTheShapesTheyInfer) {
  const char *ir = R"mlir(
func.func @abs_t(%x: tensor<?x8xf32>) -> tensor<8x?xf32> {
  %0 = tosa.abs %x : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %perms = "tosa.const"() {value = dense<[1, 0]> : tensor<2xi32>} : () -> tensor<2xi32>
  %1 = tosa.transpose %0, %perms : (tensor<?x8xf32>, tensor<2xi32>) -> tensor<8x?xf32>
  return %1 : tensor<8x?xf32>
}
)mlir";
  auto kernel = compileOrFail(ir, "abs_t");
  ASSERT_TRUE(kernel);
  auto specialized = kernel->specialize({{3, 8}});
  ASSERT_TRUE(bool(specialized)) << llvm::toString(specialized.takeError());
  EXPECT_EQ((*specialized)->getSignature().outputs[0].shape,
            (std::vector<int64_t>{8, 3}));
  Buffer x(DType::F32, {3, 8}), y(DType::F32, {8, 3});
  for (int64_t i = 0; i < 24; ++i)
    x.set(i, i % 2 ? i : -i);
  y.fill(std::nan(""));
  ASSERT_EQ(errorText((*specialized)->run({x.ref()}, {y.ref()})), "");
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 8; ++c)
      EXPECT_EQ(y.get(c * 3 + r), double(r * 8 + c)) << r << ", " << c;
}

TEST(DynamicShapesErrorsTest, ConvBackpropInputShapeComesFromTheOutput) {
  const char *ir = R"mlir(
func.func @dx(%dy: tensor<?x4x6x6xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x3x?x?xf32> {
  %0 = nf.conv2d_backprop_input %dy, %w : tensor<?x4x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<?x3x?x?xf32>
  return %0 : tensor<?x3x?x?xf32>
}
)mlir";
  auto kernel = compileOrFail(ir, "dx");
  ASSERT_TRUE(kernel);
  auto noOutputs = kernel->specialize({{2, 4, 6, 6}, {4, 3, 3, 3}});
  ASSERT_FALSE(bool(noOutputs));
  EXPECT_EQ(llvm::toString(noOutputs.takeError()),
            "@dx cannot take inputs of shapes [2, 4, 6, 6], [4, 3, 3, 3]:\n"
            "<ir>:3:8: 'nf.conv2d_backprop_input' op result #0 "
            "('tensor<?x3x?x?xf32>') has dimensions its operands do not "
            "determine ([2, 3, ?, ?]); they come from the shape of function "
            "result #0, which was not given");
  // With the output's shape the function specializes and compiles.
  auto withOutputs =
      kernel->specialize({{2, 4, 6, 6}, {4, 3, 3, 3}}, {{2, 3, 8, 8}});
  ASSERT_TRUE(bool(withOutputs)) << llvm::toString(withOutputs.takeError());
  EXPECT_EQ((*withOutputs)->getSignature().outputs[0].shape,
            (std::vector<int64_t>{2, 3, 8, 8}));
  // An output shape that does not fit the conv2d shape rule fails
  // verification.
  auto wrong = kernel->specialize({{2, 4, 6, 6}, {4, 3, 3, 3}}, {{2, 3, 9, 8}});
  ASSERT_FALSE(bool(wrong));
  EXPECT_EQ(llvm::toString(wrong.takeError()),
            "@dx cannot take inputs of shapes [2, 4, 6, 6], [4, 3, 3, 3]:\n"
            "<ir>:3:8: 'nf.conv2d_backprop_input' op grad_output has shape "
            "[2, 4, 6, 6]; expected [2, 4, 7, 6] (the conv2d output shape for "
            "grad_input and filter)");
}

} // namespace
