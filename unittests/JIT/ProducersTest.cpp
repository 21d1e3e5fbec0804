//===- ProducersTest.cpp - matmul and conv2d ops on the CPU -----*- C++ -*-===//
//
// Part of normfuse. Runs the JIT-compiled nf.matmul, nf.conv2d,
// nf.conv2d_backprop_input and nf.conv2d_backprop_filter against the float64
// references of ProducerReference.h (on the inputs as rounded to their
// dtype), and checks the conv identities on the JIT's own outputs:
//
// - dx is a convolution of dy, spread by the stride and padded, with the
//   flipped filter whose in/out channels are swapped;
// - dW is a convolution of x (batch and channels swapped, padded) with dy
//   (batch and channels swapped), strides and dilations exchanged;
// - adjointness: <conv(x, w), dy> == <x, dx(dy, w)> == <w, dW(x, dy)>.
//
// Sizes are odd (1, 3, 7, 33, 45, ...) so that the vector loops, their
// four-vector blocks and the scalar tails all run; rows longer than the
// 1024-element accumulation tile cover the tiled path. Every conv geometry
// runs in f32 in both layouts, four of them in f16 and bf16, one in f64.
// Outputs are poisoned with NaN first, so an element left unwritten fails.
//
// Tolerances (relative L2 error against float64 on the rounded inputs),
// with the largest error measured here (clang 19, AVX2, 8 lanes):
// f32 1e-5 (measured 1.1e-6: a filter gradient summing 3090 products in
// f32; matmul 4.5e-7), f16 outputs 1e-3 (2.4e-4, the output rounding),
// bf16 outputs 8e-3 (2.6e-3), f64 1e-12 (1.1e-15), f16/bf16 operands with
// f32 results 1e-5 (9.7e-8). The identities on f32 outputs: 1e-5 relative
// L2 (3.0e-7); the adjoint products: 1e-6 of their Cauchy-Schwarz bound in
// f32 (1.5e-8), 1e-13 in f64 (1.4e-16). Each test records its measured
// error as a property (--gtest_output=json shows it).
//
//===----------------------------------------------------------------------===//

#include "JITTestUtils.h"
#include "ProducerReference.h"
#include "Reference.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

using namespace nftest;

namespace {

double tolerance(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return 1e-3;
  case DType::BF16:
    return 8e-3;
  case DType::F64:
    return 1e-12;
  default:
    return 1e-5;
  }
}

std::string dtypeName(DType dtype) { return normfuse::getDTypeName(dtype); }

/// Runs `kernel` and fails the test on an error.
void runOrFail(normfuse::jit::Kernel &kernel,
               std::vector<normfuse::TensorRef> inputs,
               std::vector<normfuse::TensorRef> outputs) {
  ASSERT_EQ(errorText(kernel.run(inputs, outputs)), "");
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

struct MatmulCase {
  std::string name;
  MatmulShape shape;
};

std::vector<MatmulCase> matmulCases() {
  // M = 7, K = 33, N = 45: columns in a block of four vectors, one vector
  // and a scalar tail; k in a group of four vectors and a scalar tail.
  return {
      {"plain", {{7, 33}, {33, 45}}},
      {"transposeLhs", {{33, 7}, {33, 45}, true, false}},
      {"transposeRhs", {{7, 33}, {45, 33}, false, true}},
      {"transposeBoth", {{33, 7}, {45, 33}, true, true}},
      {"ones", {{1, 1}, {1, 1}}},
      {"m1k3n7", {{1, 3}, {3, 7}}},
      {"m3k7n1TransposeRhs", {{3, 7}, {1, 7}, false, true}},
      // K = 600: four full k blocks of 128 and one of 88.
      {"longKTransposeRhs", {{5, 600}, {19, 600}, false, true}},
      {"longK", {{5, 600}, {600, 19}}},
      {"batched", {{2, 3, 5, 9}, {2, 3, 9, 11}}},
      {"batchedTransposeBoth", {{2, 3, 9, 5}, {2, 3, 11, 9}, true, true}},
      {"sharedRhs", {{4, 6, 33}, {33, 17}}},
      {"sharedRhsTransposed", {{4, 6, 33}, {17, 33}, false, true}},
      {"sharedLhs", {{6, 33}, {3, 33, 10}}},
      {"sharedLhsTransposed", {{33, 6}, {3, 33, 10}, true, false}},
      // M = 101: a parallel chunk of 96 rows in groups of 3, then one of 5
      // rows (a group and two single rows); N = 79: two blocks of 32
      // columns, then one vector and 7 scalar columns; the rhs is shared by
      // the batch.
      {"rowGroupsAndColumnBlocks", {{2, 101, 9}, {9, 79}}},
      {"rowGroupsTransposeLhs", {{2, 9, 101}, {9, 79}, true, false}},
      // K = 300: packed panels of 128, 128 and 44 values of k, the sums
      // carried between them; M = 200: chunks of 96, 96 and 8 rows; N = 70:
      // two blocks of 32 columns and 6 scalar columns.
      {"depthBlocks", {{200, 300}, {300, 70}}},
      {"depthBlocksTransposeLhs", {{300, 200}, {300, 70}, true, false}},
      {"depthBlocksTransposeRhs", {{200, 300}, {70, 300}, false, true}},
      {"depthBlocksTransposeBoth", {{300, 200}, {70, 300}, true, true}},
      // M below 4: rhs is read in place (no panel), over k blocks; with
      // transpose_rhs each element is a dot product of two rows.
      {"fewRowsDepthBlocks", {{3, 300}, {300, 70}}},
      {"fewRowsTransposeLhs", {{300, 2}, {300, 70}, true, false}},
      {"fewRowsTransposeRhs", {{2, 300}, {70, 300}, false, true}},
      // K = 0: every sum is zero, and still stored.
      {"emptyK", {{5, 0}, {0, 7}}},
  };
}

std::string matmulIR(const MatmulShape &s, DType in, DType out) {
  std::string a = tensorType(in, s.lhs), b = tensorType(in, s.rhs);
  std::string r = tensorType(out, s.result());
  std::string attrs;
  if (s.transposeLhs || s.transposeRhs) {
    attrs = " {";
    if (s.transposeLhs)
      attrs += "transpose_lhs";
    if (s.transposeLhs && s.transposeRhs)
      attrs += ", ";
    if (s.transposeRhs)
      attrs += "transpose_rhs";
    attrs += "}";
  }
  return "func.func @mm(%a: " + a + ", %b: " + b + ") -> " + r +
         " {\n  %0 = nf.matmul %a, %b" + attrs + " : " + a + ", " + b + " -> " +
         r + "\n  return %0 : " + r + "\n}\n";
}

/// Runs the matmul with operands of `in` and a result of `out`; returns
/// the relative error against float64.
double matmulError(const MatmulShape &s, DType in, DType out,
                   Backend backend = Backend::CPU) {
  std::string ir = matmulIR(s, in, out);
  auto kernel = compileFor(backend, ir, "mm");
  if (!kernel)
    return INFINITY;
  std::mt19937 rng(17);
  Buffer a(in, s.lhs), b(in, s.rhs), r(out, s.result());
  a.fillNormal(rng);
  b.fillNormal(rng);
  r.fill(std::nan(""));
  runOrFail(*kernel, {a.ref(), b.ref()}, {r.ref()});
  return relativeError(r.toDoubles(),
                       matmulReference(s, a.toDoubles(), b.toDoubles()));
}

using MatmulParam = std::tuple<int, DType, Backend>;
class MatmulTest : public testing::TestWithParam<MatmulParam> {};

TEST_P(MatmulTest, MatchesFloat64Reference) {
  auto [index, dtype, backend] = GetParam();
  MatmulCase c = matmulCases()[index];
  double error = matmulError(c.shape, dtype, dtype, backend);
  recordError("relative_error", error);
  EXPECT_LE(error, tolerance(dtype)) << matmulIR(c.shape, dtype, dtype);
}

std::string matmulName(const testing::TestParamInfo<MatmulParam> &info) {
  auto [index, dtype, backend] = info.param;
  return matmulCases()[index].name + "_" + dtypeName(dtype) +
         backendSuffix(backend);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MatmulTest,
    testing::Combine(testing::Range(0, static_cast<int>(matmulCases().size())),
                     testing::Values(DType::F32, DType::F16, DType::BF16),
                     testing::Values(Backend::CPU)),
    matmulName);

// The CUDA kernel (one tiled product) in the simulator: every case in f32
// (tiles cut by every edge: M, N and K of 1, 3, 7, 33, 45, 101 and 600,
// batches, shared operands, transposes, K = 0), and the 16-bit and f64
// loads and stores on a few.
INSTANTIATE_TEST_SUITE_P(
    CudaSim, MatmulTest,
    testing::Combine(testing::Range(0, static_cast<int>(matmulCases().size())),
                     testing::Values(DType::F32),
                     testing::Values(Backend::CUDASim)),
    matmulName);
INSTANTIATE_TEST_SUITE_P(
    CudaSimNarrowAndWide, MatmulTest,
    testing::Combine(testing::Values(0, 3, 10, 13, 15),
                     testing::Values(DType::F16, DType::BF16, DType::F64),
                     testing::Values(Backend::CUDASim)),
    matmulName);

// A 16-bit matmul may return f32: then only the f32 accumulation is left.
TEST(MatmulWideningTest, SixteenBitOperandsGiveF32Results) {
  for (DType in : {DType::F16, DType::BF16})
    for (int index : {0, 3, 10, 13, 17, 18, 19, 20, 21, 23}) {
      MatmulCase c = matmulCases()[index];
      double error = matmulError(c.shape, in, DType::F32);
      recordError((c.name + "_" + dtypeName(in)).c_str(), error);
      EXPECT_LE(error, 1e-5) << matmulIR(c.shape, in, DType::F32);
    }
}

TEST(MatmulWideningTest, SixteenBitOperandsGiveF32ResultsOnCudaSim) {
  for (DType in : {DType::F16, DType::BF16})
    for (int index : {3, 13}) {
      MatmulCase c = matmulCases()[index];
      double error = matmulError(c.shape, in, DType::F32, Backend::CUDASim);
      recordError((c.name + "_" + dtypeName(in)).c_str(), error);
      EXPECT_LE(error, 1e-5) << matmulIR(c.shape, in, DType::F32);
    }
}

TEST(MatmulF64Test, AccumulatesInF64) {
  for (int index : {0, 3, 7, 11, 17, 19, 21}) {
    MatmulCase c = matmulCases()[index];
    double error = matmulError(c.shape, DType::F64, DType::F64);
    recordError(c.name.c_str(), error);
    EXPECT_LE(error, tolerance(DType::F64))
        << matmulIR(c.shape, DType::F64, DType::F64);
  }
}

//===----------------------------------------------------------------------===//
// conv2d and its gradients
//===----------------------------------------------------------------------===//

struct ConvCase {
  std::string name;
  ConvGeometry g; // n, c, o, h, w, kh, kw, {nhwc, strides, padding, dilations}
};

std::vector<ConvCase> convCases() {
  return {
      {"k3Pad1", {2, 3, 5, 9, 11, 3, 3, {false, {1, 1}, {1, 1, 1, 1}, {1, 1}}}},
      {"stride2AsymmetricPadding",
       {2, 4, 3, 10, 9, 3, 3, {false, {2, 2}, {0, 1, 2, 1}, {1, 1}}}},
      {"dilation2",
       {1, 3, 4, 11, 13, 3, 3, {false, {1, 1}, {2, 2, 1, 3}, {2, 2}}}},
      {"mixedStrideDilation",
       {2, 3, 2, 12, 11, 3, 2, {false, {2, 3}, {1, 0, 0, 2}, {2, 1}}}},
      {"filter1x1",
       {2, 7, 9, 5, 6, 1, 1, {false, {1, 1}, {0, 0, 0, 0}, {1, 1}}}},
      {"filter1x1Stride2",
       {1, 5, 3, 7, 7, 1, 1, {false, {2, 2}, {0, 0, 0, 0}, {1, 1}}}},
      // Windows clipped on both sides of a 2x1 input.
      {"filterLargerThanInput",
       {1, 2, 3, 2, 1, 3, 3, {false, {1, 1}, {1, 1, 1, 1}, {1, 1}}}},
      // Rows of 1030 elements: two accumulation tiles (NCHW rows of W).
      {"wideRows",
       {1, 2, 3, 3, 1030, 3, 3, {false, {1, 1}, {1, 1, 1, 1}, {1, 1}}}},
      // Rows of 1030 channels: two accumulation tiles (NHWC rows of C).
      {"wideChannels",
       {1, 1030, 2, 3, 3, 2, 2, {false, {1, 1}, {0, 1, 1, 0}, {1, 1}}}},
      // NHWC register tiles: 19 whole windows per row (six tiles of 3
      // positions and one single), 11 output channels (two tiles of 4 and
      // three single channels), windows of 3 * 13 = 39 elements (four
      // vectors and a tail of 7).
      {"registerTileLeftovers",
       {2, 13, 11, 6, 21, 3, 3, {false, {1, 1}, {1, 1, 1, 1}, {1, 1}}}},
      // Dilated along w: 12 whole windows, each three spans of 5 channels
      // (scalar tails only), 6 channels (a tile of 4 and two singles).
      {"dilatedRegisterTiles",
       {1, 5, 6, 7, 16, 3, 3, {false, {1, 1}, {2, 2, 2, 2}, {2, 2}}}},
  };
}

ConvGeometry withLayout(ConvGeometry g, bool nhwc) {
  g.attrs.nhwc = nhwc;
  return g;
}

/// One conv op as a function of two operands.
std::string convIR(const std::string &op, DType dtype,
                   const std::vector<int64_t> &a, const std::vector<int64_t> &b,
                   const std::vector<int64_t> &result, const ConvAttrs &attrs) {
  std::string ta = tensorType(dtype, a), tb = tensorType(dtype, b);
  std::string tr = tensorType(dtype, result);
  return "func.func @f(%a: " + ta + ", %b: " + tb + ") -> " + tr +
         " {\n  %0 = nf." + op + " %a, %b " + attrs.toMLIR() + " : " + ta +
         ", " + tb + " -> " + tr + "\n  return %0 : " + tr + "\n}\n";
}

/// Runs a conv op on `a` and `b`; returns its result in float64 (empty
/// when the op did not compile or run).
std::vector<double> runConvOp(const std::string &op, const Buffer &a,
                              const Buffer &b,
                              const std::vector<int64_t> &resultShape,
                              const ConvAttrs &attrs,
                              Backend backend = Backend::CPU) {
  auto kernel = compileFor(
      backend, convIR(op, a.dtype, a.shape, b.shape, resultShape, attrs), "f");
  if (!kernel)
    return {};
  Buffer ca = a, cb = b, result(a.dtype, resultShape);
  result.fill(std::nan(""));
  runOrFail(*kernel, {ca.ref(), cb.ref()}, {result.ref()});
  return result.toDoubles();
}

std::vector<double> runConv2D(const ConvGeometry &g, const Buffer &x,
                              const Buffer &w, Backend backend = Backend::CPU) {
  return runConvOp("conv2d", x, w, g.outputShape(), g.attrs, backend);
}
std::vector<double> runBackpropInput(const ConvGeometry &g, const Buffer &dy,
                                     const Buffer &w,
                                     Backend backend = Backend::CPU) {
  return runConvOp("conv2d_backprop_input", dy, w, g.inputShape(), g.attrs,
                   backend);
}
std::vector<double> runBackpropFilter(const ConvGeometry &g, const Buffer &x,
                                      const Buffer &dy,
                                      Backend backend = Backend::CPU) {
  return runConvOp("conv2d_backprop_filter", x, dy, g.filterShape(), g.attrs,
                   backend);
}

/// Random x, w and dy of a conv in `dtype`.
struct ConvOperands {
  ConvOperands(const ConvGeometry &g, DType dtype, unsigned seed)
      : x(dtype, g.inputShape()), w(dtype, g.filterShape()),
        dy(dtype, g.outputShape()) {
    std::mt19937 rng(seed);
    x.fillNormal(rng);
    w.fillNormal(rng);
    dy.fillNormal(rng);
  }
  Buffer x, w, dy;
};

using ConvParam = std::tuple<int, bool, DType, Backend>;
class ConvTest : public testing::TestWithParam<ConvParam> {
protected:
  ConvGeometry geometry() const {
    return withLayout(convCases()[std::get<0>(GetParam())].g,
                      std::get<1>(GetParam()));
  }
  DType dtype() const { return std::get<2>(GetParam()); }
  Backend backend() const { return std::get<3>(GetParam()); }
};

TEST_P(ConvTest, ForwardMatchesFloat64Reference) {
  ConvGeometry g = geometry();
  ConvOperands in(g, dtype(), 3);
  double error =
      relativeError(runConv2D(g, in.x, in.w, backend()),
                    conv2dReference(g, in.x.toDoubles(), in.w.toDoubles()));
  recordError("relative_error", error);
  EXPECT_LE(error, tolerance(dtype())) << g.attrs.toMLIR();
}

TEST_P(ConvTest, BackpropInputMatchesFloat64Reference) {
  ConvGeometry g = geometry();
  ConvOperands in(g, dtype(), 4);
  double error = relativeError(
      runBackpropInput(g, in.dy, in.w, backend()),
      conv2dBackpropInputReference(g, in.dy.toDoubles(), in.w.toDoubles()));
  recordError("relative_error", error);
  EXPECT_LE(error, tolerance(dtype())) << g.attrs.toMLIR();
}

TEST_P(ConvTest, BackpropFilterMatchesFloat64Reference) {
  ConvGeometry g = geometry();
  ConvOperands in(g, dtype(), 5);
  double error = relativeError(
      runBackpropFilter(g, in.x, in.dy, backend()),
      conv2dBackpropFilterReference(g, in.x.toDoubles(), in.dy.toDoubles()));
  recordError("relative_error", error);
  EXPECT_LE(error, tolerance(dtype())) << g.attrs.toMLIR();
}

std::string convName(const testing::TestParamInfo<ConvParam> &info) {
  auto [index, nhwc, dtype, backend] = info.param;
  return convCases()[index].name + (nhwc ? "_nhwc_" : "_nchw_") +
         dtypeName(dtype) + backendSuffix(backend);
}

// Every geometry in f32, in both layouts.
INSTANTIATE_TEST_SUITE_P(
    F32, ConvTest,
    testing::Combine(testing::Range(0, static_cast<int>(convCases().size())),
                     testing::Bool(), testing::Values(DType::F32),
                     testing::Values(Backend::CPU)),
    convName);

// The CUDA kernels (implicit GEMMs) in the simulator: every geometry in f32
// in both layouts; 16-bit and f64 data on two.
INSTANTIATE_TEST_SUITE_P(
    CudaSim, ConvTest,
    testing::Combine(testing::Range(0, static_cast<int>(convCases().size())),
                     testing::Bool(), testing::Values(DType::F32),
                     testing::Values(Backend::CUDASim)),
    convName);
INSTANTIATE_TEST_SUITE_P(
    CudaSimNarrowAndWide, ConvTest,
    testing::Combine(testing::Values(1, 9), testing::Bool(),
                     testing::Values(DType::F16, DType::BF16, DType::F64),
                     testing::Values(Backend::CUDASim)),
    convName);

// 16-bit data takes the same index paths; what differs is widening on load,
// the f32 scratch and the narrowing store, including rows of two tiles.
INSTANTIATE_TEST_SUITE_P(
    SixteenBit, ConvTest,
    testing::Combine(testing::Values(0, 1, 7, 8, 9), testing::Bool(),
                     testing::Values(DType::F16, DType::BF16),
                     testing::Values(Backend::CPU)),
    convName);

// f64 also through the register tiles (vectors of f64 lanes reduced
// together).
INSTANTIATE_TEST_SUITE_P(F64, ConvTest,
                         testing::Combine(testing::Values(3, 9),
                                          testing::Bool(),
                                          testing::Values(DType::F64),
                                          testing::Values(Backend::CPU)),
                         convName);

// The NHWC register tiles at every vector width: the 4 channel sums of a
// position are reduced together when the vectors have at least 4 lanes
// (4: merges only; 8 and 16: halved first), one by one below that.
class ConvVectorWidthTest : public testing::TestWithParam<int64_t> {};

TEST_P(ConvVectorWidthTest, RegisterTilesMatchFloat64Reference) {
  normfuse::jit::Options options;
  options.cpu.vectorWidth = GetParam();
  normfuse::jit::JIT jit(options);
  ConvGeometry g = withLayout(convCases()[9].g, /*nhwc=*/true);
  ConvOperands in(g, DType::F32, 3);
  auto kernel = jit.compile(convIR("conv2d", DType::F32, g.inputShape(),
                                   g.filterShape(), g.outputShape(), g.attrs),
                            "f");
  ASSERT_TRUE(bool(kernel)) << llvm::toString(kernel.takeError());
  Buffer result(DType::F32, g.outputShape());
  result.fill(std::nan(""));
  runOrFail(**kernel, {in.x.ref(), in.w.ref()}, {result.ref()});
  EXPECT_LE(
      relativeError(result.toDoubles(),
                    conv2dReference(g, in.x.toDoubles(), in.w.toDoubles())),
      tolerance(DType::F32));
}

INSTANTIATE_TEST_SUITE_P(Widths, ConvVectorWidthTest,
                         testing::Values(1, 2, 4, 8, 16),
                         [](const testing::TestParamInfo<int64_t> &info) {
                           return "width" + std::to_string(info.param);
                         });

/// Copies float64 values into a new buffer of `dtype` and `shape`.
Buffer makeBuffer(DType dtype, std::vector<int64_t> shape,
                  const std::vector<double> &values) {
  Buffer b(dtype, std::move(shape));
  for (int64_t i = 0; i < b.size(); ++i)
    b.set(i, values[i]);
  return b;
}

std::array<int64_t, 4> shape4(const std::vector<int64_t> &s) {
  return {s[0], s[1], s[2], s[3]};
}

/// Cases of the identity and adjoint tests: padded, strided, dilated.
class ConvIdentityTest : public testing::TestWithParam<int> {
protected:
  ConvGeometry geometry() const { return convCases()[GetParam()].g; }
};

// dx[n, c, ih, iw] = sum dy[n, o, oh, ow] w[o, c, kh, kw] over
// oh * s - pad + kh * d = ih: with kh' = KH - 1 - kh, that is a stride-1
// convolution (dilation d) of dy spread onto a canvas, dy[oh] at
// oh * s + d * (KH - 1) - pad, with the flipped filter w'[c, o] = w[o, c].
TEST_P(ConvIdentityTest, BackpropInputIsConvOfSpreadDyWithFlippedFilter) {
  ConvGeometry g = geometry();
  const ConvAttrs &a = g.attrs;
  ConvOperands in(g, DType::F32, 6);
  std::vector<double> dx = runBackpropInput(g, in.dy, in.w);

  int64_t canvasH = g.h + a.dilations[0] * (g.kh - 1);
  int64_t canvasW = g.w + a.dilations[1] * (g.kw - 1);
  std::vector<double> canvas =
      spreadSpatial(in.dy.toDoubles(), shape4(g.outputShape()), canvasH,
                    canvasW, a.dilations[0] * (g.kh - 1) - a.padding[0],
                    a.dilations[1] * (g.kw - 1) - a.padding[2], a.strides);
  std::vector<double> flipped =
      swapLeadingDims(flipSpatial(in.w.toDoubles(), shape4(g.filterShape())),
                      shape4(g.filterShape()));
  ConvGeometry h{
      g.n,     g.o,  g.c,  canvasH,
      canvasW, g.kh, g.kw, ConvAttrs{false, {1, 1}, {0, 0, 0, 0}, a.dilations}};
  ASSERT_EQ(h.outputShape(), g.inputShape());
  std::vector<double> viaConv =
      runConv2D(h, makeBuffer(DType::F32, h.inputShape(), canvas),
                makeBuffer(DType::F32, h.filterShape(), flipped));
  double error = relativeError(dx, viaConv);
  recordError("relative_error", error);
  EXPECT_LE(error, 1e-5) << a.toMLIR();
}

// dw[o, c, kh, kw] = sum dy[n, o, oh, ow] x[n, c, oh * s - pad + kh * d]:
// a convolution of x' = x with batch and channels swapped, on a canvas
// shifted by the padding, with the filter dy' = dy with batch and channels
// swapped, stride d and dilation s (strides and dilations exchanged).
TEST_P(ConvIdentityTest, BackpropFilterIsConvOfXWithDy) {
  ConvGeometry g = geometry();
  const ConvAttrs &a = g.attrs;
  ConvOperands in(g, DType::F32, 7);
  std::vector<double> dw = runBackpropFilter(g, in.x, in.dy);

  int64_t oh = g.outH(), ow = g.outW();
  int64_t canvasH = a.dilations[0] * (g.kh - 1) + a.strides[0] * (oh - 1) + 1;
  int64_t canvasW = a.dilations[1] * (g.kw - 1) + a.strides[1] * (ow - 1) + 1;
  std::array<int64_t, 4> xs = shape4(g.inputShape());
  std::vector<double> canvas = spreadSpatial(
      swapLeadingDims(in.x.toDoubles(), xs), {xs[1], xs[0], xs[2], xs[3]},
      canvasH, canvasW, a.padding[0], a.padding[2], {1, 1});
  std::vector<double> dyT =
      swapLeadingDims(in.dy.toDoubles(), shape4(g.outputShape()));
  ConvGeometry h{
      g.c,     g.n,
      g.o,     canvasH,
      canvasW, oh,
      ow,      ConvAttrs{false, a.dilations, {0, 0, 0, 0}, a.strides}};
  ASSERT_EQ(h.outputShape(), (std::vector<int64_t>{g.c, g.o, g.kh, g.kw}));
  std::vector<double> viaConv =
      runConv2D(h, makeBuffer(DType::F32, h.inputShape(), canvas),
                makeBuffer(DType::F32, h.filterShape(), dyT));
  double error =
      relativeError(dw, swapLeadingDims(viaConv, {g.c, g.o, g.kh, g.kw}));
  recordError("relative_error", error);
  EXPECT_LE(error, 1e-5) << a.toMLIR();
}

double norm(const std::vector<double> &v) { return std::sqrt(dot(v, v)); }

// <conv(x, w), dy> = <x, dx(dy, w)> = <w, dW(x, dy)>: the three ops are
// one bilinear form, so the gradients are the adjoints of the forward op.
// Checked in both layouts, in f32 and f64, on the JIT's outputs.
void expectAdjoint(const ConvGeometry &g, DType dtype, double tol) {
  ConvOperands in(g, dtype, 8);
  std::vector<double> x = in.x.toDoubles(), w = in.w.toDoubles(),
                      dy = in.dy.toDoubles();
  std::vector<double> y = runConv2D(g, in.x, in.w);
  std::vector<double> dx = runBackpropInput(g, in.dy, in.w);
  std::vector<double> dw = runBackpropFilter(g, in.x, in.dy);
  ASSERT_FALSE(y.empty() || dx.empty() || dw.empty());
  double viaY = dot(y, dy), viaX = dot(x, dx), viaW = dot(w, dw);
  double bound =
      std::max({norm(y) * norm(dy), norm(x) * norm(dx), norm(w) * norm(dw)});
  recordError((dtypeName(dtype) + "_x_vs_y").c_str(),
              std::abs(viaX - viaY) / bound);
  recordError((dtypeName(dtype) + "_w_vs_y").c_str(),
              std::abs(viaW - viaY) / bound);
  EXPECT_LE(std::abs(viaX - viaY), tol * bound) << viaX << " " << viaY;
  EXPECT_LE(std::abs(viaW - viaY), tol * bound) << viaW << " " << viaY;
}

TEST_P(ConvIdentityTest, GradientsAreAdjointsNCHW) {
  expectAdjoint(geometry(), DType::F32, 1e-6);
  expectAdjoint(geometry(), DType::F64, 1e-13);
}

TEST_P(ConvIdentityTest, GradientsAreAdjointsNHWC) {
  expectAdjoint(withLayout(geometry(), true), DType::F32, 1e-6);
  expectAdjoint(withLayout(geometry(), true), DType::F64, 1e-13);
}

// k3Pad1, stride2AsymmetricPadding, dilation2, mixedStrideDilation,
// filter1x1Stride2, filterLargerThanInput.
INSTANTIATE_TEST_SUITE_P(Cases, ConvIdentityTest,
                         testing::Values(0, 1, 2, 3, 5, 6),
                         [](const testing::TestParamInfo<int> &info) {
                           return convCases()[info.param].name;
                         });

// A result that is not in the accumulation type accumulates in a heap
// scratch with one slot per parallel chunk of rows. Run sequentially (the
// lowering of scf.parallel to plain loops) over many rows: a stack tile per
// row would not be released per iteration and would overflow the stack.
TEST(ConvSequentialTest, ManyF16RowsWithoutThreads) {
  normfuse::jit::Options options;
  options.cpu.parallel = false;
  normfuse::jit::JIT jit(options);
  ConvGeometry g{1, 2, 2, 8192,
                 5, 1, 3, ConvAttrs{false, {1, 1}, {0, 0, 1, 1}, {1, 1}}};
  ConvOperands in(g, DType::F16, 9);
  std::string ir = convIR("conv2d", DType::F16, g.inputShape(), g.filterShape(),
                          g.outputShape(), g.attrs);
  auto kernel = jit.compile(ir, "f");
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  Buffer y(DType::F16, g.outputShape());
  y.fill(std::nan(""));
  ASSERT_EQ(errorText((*kernel)->run({in.x.ref(), in.w.ref()}, {y.ref()})), "");
  double error = relativeError(
      y.toDoubles(), conv2dReference(g, in.x.toDoubles(), in.w.toDoubles()));
  recordError("relative_error", error);
  EXPECT_LE(error, tolerance(DType::F16));
}

} // namespace
