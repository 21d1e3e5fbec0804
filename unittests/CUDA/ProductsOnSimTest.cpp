//===- ProductsOnSimTest.cpp - matrix products vs float64
//------------------===//
//
// Part of normfuse. f16 and bf16 matmuls and convolutions take the
// tensor-core schedule (mma.sync m16n8k16, ldmatrix, a cp.async pipeline
// for operands in 16-byte runs; LowerTensorCoreProducts.cpp).
// Each case runs fused, with its epilogue, in the CUDA simulator (which
// runs those instructions by the PTX ISA's fragment layouts) and is checked
// against float64 computed here from the same rounded inputs. The shapes
// reach every path: tiles cut by M and N, K of one partial tile and of
// many pipeline stages, batches, shared and transposed operands, both tile
// sizes, a split K, convolutions in both layouts and both their gradients
// with strides, padding and dilation, odd channel counts, every epilogue.
//
//===----------------------------------------------------------------------===//

#include "CudaSimTestUtils.h"
#include "ProducerReference.h"
#include "Reference.h"
#include "normfuse/Codegen/CUDA/Schedule.h"

#include <cmath>

using namespace nftest;
using mlir::nf::cuda::GpuTarget;
using mlir::nf::cuda::parseTensorCoreTile;
using mlir::nf::cuda::TiledProductSchedule;
using normfuse::runtime::SimOrder;

namespace {

enum class Epilogue { None, BiasGeluTanh, BiasRelu, SiluAdd, GeluErf };
enum class Op { Matmul, Conv, ConvGradInput, ConvGradFilter };

struct TensorCoreCase {
  const char *name;
  DType dtype;
  /// A matmul, or (when `op` is not Matmul) an NHWC convolution or one of
  /// its gradients.
  MatmulShape matmul;
  Op op = Op::Matmul;
  ConvGeometry geometry{};
  Epilogue epilogue = Epilogue::None;
  /// The tile the schedule layer picks ("64x64x32", "128x128x32").
  const char *tile = "64x64x32";
  /// The K ranges it splits K into (1: not split; else a second kernel
  /// adds the ranges' partial sums).
  int splitK = 1;
  /// NF_CUDA_TENSOR_CORE_TILE while the case compiles (`tile` is then the
  /// whole schedule after "tile=").
  const char *tileEnvironment = nullptr;
  /// An NCHW convolution read from channels-last copies of its operands:
  /// copy kernels before the product (two; one, of x, for a filter
  /// gradient).
  bool channelsLast = false;
  /// The GPU target the kernels are made for, where not the default.
  const char *gpu = nullptr;
  /// f32 compiled with tf32 allowed (JIT option cuda.allowTf32).
  bool tf32 = false;
  /// A schedule written on the product op by hand (nf.gpu_schedule),
  /// which the kernel must follow.
  const char *written = nullptr;
  /// The product kernel stages its operands by TMA loads (a written
  /// `wgmma tma` where the operands allow it), not by cp.async.
  bool tma = false;
  /// The product kernel that runs (the plan's first launch), where not the
  /// op's own: "_small_tiles" (a written small-tile=).
  const char *kernelSuffix = "";
};

ConvAttrs nhwc(std::array<int64_t, 2> strides, std::array<int64_t, 4> padding,
               std::array<int64_t, 2> dilations) {
  ConvAttrs a;
  a.nhwc = true;
  a.strides = strides;
  a.padding = padding;
  a.dilations = dilations;
  return a;
}
ConvAttrs nchw(std::array<int64_t, 2> strides, std::array<int64_t, 4> padding,
               std::array<int64_t, 2> dilations) {
  ConvAttrs a = nhwc(strides, padding, dilations);
  a.nhwc = false;
  return a;
}

std::vector<TensorCoreCase> cases() {
  std::vector<TensorCoreCase> all = {
      // One partial tile of M, N and K; runs of 16 bytes (cp.async) and
      // odd runs (staged element by element).
      {"m1n8k8", DType::F16, {{1, 8}, {8, 8}}},
      {"m1n1k1", DType::F16, {{1, 1}, {1, 1}}},
      {"m7n13k5_bf16", DType::BF16, {{7, 5}, {5, 13}}},
      {"m65n129k33", DType::F16, {{65, 33}, {33, 129}}},
      {"transposeBothOdd", DType::F16, {{2, 9, 35}, {2, 17, 9}, true, true}},
      // Tiles cut by M and N; K of two tiles, the second partial.
      {"m77n136k40", DType::F16, {{77, 40}, {40, 136}}},
      {"m77n136k40_bf16", DType::BF16, {{77, 40}, {40, 136}}},
      // K of many pipeline stages (10 K tiles through 3 stages).
      {"m64n64k320", DType::F16, {{64, 320}, {320, 64}}},
      // K a multiple of the K tile and runs of whole chunks: copies whose
      // sources advance by a constant per K tile, rows past M and N
      // reading row 0 for nothing; batched and transposed (K-major A).
      {"steadyBatchedTransposeBoth",
       DType::F16,
       {{2, 64, 40}, {2, 72, 64}, true, true}},
      // Transposed operands (each staged K-major or N-major), batches and
      // a shared right operand.
      {"transposeLhs", DType::F16, {{2, 48, 72}, {48, 24}, true, false}},
      {"transposeRhs_bf16", DType::BF16, {{3, 70, 56}, {40, 56}, false, true}},
      {"transposeBoth", DType::F16, {{2, 24, 40}, {2, 65, 24}, true, true}},
      // Epilogues on the accumulators.
      {"biasGeluTanh",
       DType::F16,
       {{50, 64}, {64, 72}},
       Op::Matmul,
       {},
       Epilogue::BiasGeluTanh},
      {"geluErf_bf16",
       DType::BF16,
       {{50, 64}, {64, 72}},
       Op::Matmul,
       {},
       Epilogue::GeluErf},
      {"siluResidual",
       DType::F16,
       {{2, 30, 16}, {16, 40}},
       Op::Matmul,
       {},
       Epilogue::SiluAdd},
      // Enough 128 x 128 tiles for a wave: the large tile.
      {"large_m1536n1408k16",
       DType::F16,
       {{1536, 16}, {16, 1408}},
       Op::Matmul,
       {},
       Epilogue::None,
       "128x128x32"},
      // Tiles whose stages take more than 48 KiB of shared memory (the
      // buffer is dynamic, its size given at launch): 128 x 256 tiles of
      // eight warps (72 KiB), K in whole tiles; 128 x 128 x 64 tiles in
      // four stages (128 KiB), K and N cut inside a tile.
      {"dynamicSmem_128x256_m1536n1408k64",
       DType::F16,
       {{1536, 64}, {64, 1408}},
       Op::Matmul,
       {},
       Epilogue::None,
       "128x256x32 warps=2x4 stages=3",
       1,
       "128x256x32/3/2x4"},
      {"dynamicSmem_128x128x64_m1536n1420k72_bf16",
       DType::BF16,
       {{1536, 72}, {72, 1420}},
       Op::Matmul,
       {},
       Epilogue::None,
       "128x128x64 warps=2x2 stages=4",
       1,
       "128x128x64/4/2x2"},
      // Few tiles over a long K: K split into ranges of whole K tiles, the
      // last range shorter and ending in a partial tile; runs of 16 bytes
      // and odd runs (element by element), a vectorized and a scalar
      // finish, batches, transposed operands, epilogues after the sum.
      {"splitK_m70n24k1000_biasGelu",
       DType::F16,
       {{70, 1000}, {1000, 24}},
       Op::Matmul,
       {},
       Epilogue::BiasGeluTanh,
       "64x64x32",
       4},
      {"splitK_steady_m70n24k1024_bf16",
       DType::BF16,
       {{70, 1024}, {1024, 24}},
       Op::Matmul,
       {},
       Epilogue::None,
       "64x64x32",
       4},
      {"splitK_m33n13k777_bf16",
       DType::BF16,
       {{33, 777}, {777, 13}},
       Op::Matmul,
       {},
       Epilogue::None,
       "64x64x32",
       3},
      {"splitK_transposeBoth_siluResidual",
       DType::F16,
       {{2, 520, 40}, {2, 56, 520}, true, true},
       Op::Matmul,
       {},
       Epilogue::SiluAdd,
       "64x64x32",
       2},
  };
  // Convolutions (NHWC, channels a multiple of 8): the input gathered a
  // tap's channels at a time, zeros in the padding.
  TensorCoreCase conv{"convStride2PadBiasRelu", DType::F16, {}, Op::Conv};
  conv.geometry = {2, 16, 24, 9, 7, 3, 3, nhwc({2, 2}, {1, 1, 1, 2}, {1, 1})};
  conv.epilogue = Epilogue::BiasRelu;
  all.push_back(conv);
  // 32 channels: K (3 x 3 x 32) a multiple of the K tile, so the filter's
  // copies advance by a constant per K tile.
  conv.name = "convSteadyFilter";
  conv.geometry = {2, 32, 24, 9, 7, 3, 3, nhwc({1, 1}, {1, 1, 1, 1}, {1, 1})};
  all.push_back(conv);
  conv.epilogue = Epilogue::BiasRelu;
  conv.name = "convThreeChannelsStride2";
  conv.geometry = {1, 3, 16, 12, 12, 3, 3, nhwc({2, 2}, {1, 1, 1, 1}, {1, 1})};
  all.push_back(conv);
  conv.name = "convDilated_bf16";
  conv.dtype = DType::BF16;
  conv.geometry = {1, 8, 40, 10, 11, 3, 2, nhwc({1, 1}, {2, 0, 1, 1}, {2, 3})};
  conv.epilogue = Epilogue::None;
  all.push_back(conv);
  // Both gradients, as implicit GEMMs on the same kernel: dx gathers dy at
  // the taps that fall on a stride; dw runs K over the output positions.
  for (Op op : {Op::ConvGradInput, Op::ConvGradFilter}) {
    bool input = op == Op::ConvGradInput;
    conv.op = op;
    conv.name = input ? "convGradInputStride2" : "convGradFilterStride2";
    conv.dtype = DType::F16;
    conv.geometry = {2, 16, 24, 9, 7, 3, 3, nhwc({2, 2}, {1, 1, 1, 2}, {1, 1})};
    all.push_back(conv);
    conv.name = input ? "convGradInputDilated_bf16" : "convGradFilterOdd_bf16";
    conv.dtype = DType::BF16;
    conv.geometry =
        input ? ConvGeometry{1,  8, 40, 10,
                             11, 3, 2,  nhwc({1, 1}, {2, 0, 1, 1}, {2, 3})}
              : ConvGeometry{1,  3, 5, 12,
                             12, 3, 3, nhwc({2, 2}, {1, 1, 1, 1}, {1, 1})};
    all.push_back(conv);
  }
  // NCHW forward with input channels a multiple of 8: the input and
  // filter copied channels-last (NHWC, OHWI) first, then staged by
  // cp.async; the result's channels a plane apart (single-element stores,
  // a bias along axis 1).
  conv.op = Op::Conv;
  conv.name = "convNCHWStride2PadBiasRelu";
  conv.dtype = DType::F16;
  conv.geometry = {2, 16, 24, 9, 7, 3, 3, nchw({2, 2}, {1, 1, 1, 2}, {1, 1})};
  conv.epilogue = Epilogue::BiasRelu;
  conv.channelsLast = true;
  all.push_back(conv);
  conv.name = "convNCHWDilated_bf16";
  conv.dtype = DType::BF16;
  conv.geometry = {1, 8, 40, 10, 11, 3, 2, nchw({1, 1}, {2, 0, 1, 1}, {2, 3})};
  conv.epilogue = Epilogue::None;
  all.push_back(conv);
  // A 1 x 1 filter over a plane of 49 (no whole runs along M): copied too,
  // with tiles of the copy cut at 40 channels and 49 positions.
  conv.name = "convNCHWPointwiseOddPlane";
  conv.dtype = DType::F16;
  conv.geometry = {3, 40, 24, 7, 7, 1, 1, nchw({1, 1}, {0, 0, 0, 0}, {1, 1})};
  all.push_back(conv);
  // Output planes of whole 16-byte chunks (8 x 8, and 4 x 4 of bf16 with
  // a residual): the tile goes out through shared memory by columns, a
  // channel's 8 positions a store.
  conv.name = "convNCHWPlane64BiasRelu";
  conv.geometry = {2, 16, 24, 8, 8, 3, 3, nchw({1, 1}, {1, 1, 1, 1}, {1, 1})};
  conv.epilogue = Epilogue::BiasRelu;
  all.push_back(conv);
  // Planes of 6 x 6 (36: whole runs of 4, not of 8): 8-byte stores.
  conv.name = "convNCHWPlane36BiasRelu";
  conv.geometry = {3, 16, 24, 6, 6, 3, 3, nchw({1, 1}, {1, 1, 1, 1}, {1, 1})};
  all.push_back(conv);
  // Other channel counts: the input gathered one element at a time.
  conv.channelsLast = false;
  conv.name = "convNCHWPlane16SiluResidual_bf16";
  conv.dtype = DType::BF16;
  conv.geometry = {3, 12, 20, 4, 4, 3, 3, nchw({1, 1}, {1, 1, 1, 1}, {1, 1})};
  conv.epilogue = Epilogue::SiluAdd;
  all.push_back(conv);
  conv.dtype = DType::F16;
  conv.name = "convNCHWTwelveChannelsBiasRelu";
  conv.geometry = {2, 12, 24, 9, 7, 3, 3, nchw({2, 2}, {1, 1, 1, 2}, {1, 1})};
  conv.epilogue = Epilogue::BiasRelu;
  all.push_back(conv);
  // A 1 x 1 filter at stride 1 over planes of 64: the input is A stored
  // K-major, staged in place 16 bytes at a time (steadily: K = 64).
  conv.name = "convNCHWPointwise_bf16";
  conv.dtype = DType::BF16;
  conv.geometry = {2, 64, 24, 8, 8, 1, 1, nchw({1, 1}, {0, 0, 0, 0}, {1, 1})};
  all.push_back(conv);
  conv.epilogue = Epilogue::None;
  conv.op = Op::ConvGradInput;
  // The data gradient: 12 input channels, dy and the filter gathered.
  conv.name = "convGradInputNCHWTwelveChannelsStride2";
  conv.dtype = DType::F16;
  conv.geometry = {2, 12, 24, 9, 7, 3, 3, nchw({2, 2}, {1, 1, 1, 2}, {1, 1})};
  all.push_back(conv);
  // Channels a multiple of 8: dy and the filter copied channels-last (NHWC,
  // OHWI) first, then staged by cp.async, dx stored NCHW; its planes of 8
  // x 8 by columns through shared memory.
  conv.channelsLast = true;
  conv.name = "convGradInputNCHWStride2";
  conv.geometry = {2, 16, 24, 9, 7, 3, 3, nchw({2, 2}, {1, 1, 1, 2}, {1, 1})};
  all.push_back(conv);
  conv.name = "convGradInputNCHWPlane64_bf16";
  conv.dtype = DType::BF16;
  conv.geometry = {2, 16, 24, 8, 8, 3, 3, nchw({1, 1}, {1, 1, 1, 1}, {1, 1})};
  all.push_back(conv);
  conv.dtype = DType::F16;
  conv.channelsLast = false;
  // dw: dy's planes of 20 (element by element) and of 64 (cp.async); x of
  // 12 channels gathered, of 16 and 8 copied to NHWC first (N then runs
  // over the taps and the channels, dw stored OIHW element by element).
  conv.op = Op::ConvGradFilter;
  conv.name = "convGradFilterNCHWTwelveChannelsStride2";
  conv.geometry = {2, 12, 24, 9, 7, 3, 3, nchw({2, 2}, {1, 1, 1, 2}, {1, 1})};
  all.push_back(conv);
  conv.channelsLast = true;
  conv.name = "convGradFilterNCHWStride2";
  conv.geometry = {2, 16, 24, 9, 7, 3, 3, nchw({2, 2}, {1, 1, 1, 2}, {1, 1})};
  all.push_back(conv);
  conv.name = "convGradFilterNCHWPlane64_bf16";
  conv.dtype = DType::BF16;
  conv.geometry = {2, 8, 16, 8, 8, 3, 3, nchw({1, 1}, {1, 1, 1, 1}, {1, 1})};
  all.push_back(conv);
  // Few tiles (16 x 144) over K = 1024 positions: K split in four, the
  // ranges' sum stored OIHW element by element.
  conv.name = "splitK_convGradFilterNCHW";
  conv.dtype = DType::F16;
  conv.geometry = {4, 16, 16, 16, 16, 3, 3, nchw({1, 1}, {1, 1, 1, 1}, {1, 1})};
  conv.splitK = 4;
  all.push_back(conv);
  conv.splitK = 1;
  conv.channelsLast = false;
  // One tile over K = 576: K split in two, the sum's bias along axis 1.
  conv.op = Op::Conv;
  conv.name = "splitK_convNCHWBiasRelu";
  conv.dtype = DType::F16;
  conv.geometry = {1, 64, 16, 6, 6, 3, 3, nchw({1, 1}, {1, 1, 1, 1}, {1, 1})};
  conv.epilogue = Epilogue::BiasRelu;
  conv.splitK = 2;
  conv.channelsLast = true;
  all.push_back(conv);
  // On a GPU of one or two SMs a few tiles make a wave: large products 64
  // or fewer wide take 128 x 64 tiles (64 x 128 for 64 or fewer rows), here
  // with partial tiles in M, N and K.
  TensorCoreCase narrow{
      "narrowN_m600n40k96", DType::F16, {{600, 96}, {96, 40}}};
  narrow.epilogue = Epilogue::BiasGeluTanh;
  narrow.tile = "128x64x32";
  narrow.gpu = "sm_90:sms=2";
  all.push_back(narrow);
  narrow = {"narrowM_m48n300k80_bf16", DType::BF16, {{48, 80}, {80, 300}}};
  narrow.tile = "64x128x32";
  narrow.gpu = "sm_90:sms=2";
  all.push_back(narrow);
  conv.name = "convNCHWNarrowTile";
  conv.splitK = 1;
  conv.tile = "128x64x32";
  conv.gpu = "sm_90:sms=1";
  conv.geometry = {2, 16, 24, 9, 7, 3, 3, nchw({2, 2}, {1, 1, 1, 2}, {1, 1})};
  all.push_back(conv);
  return all;
}

/// The result's channel axis (its columns, which a bias runs along).
size_t channelAxis(const TensorCoreCase &c, size_t rank) {
  return c.op != Op::Matmul && !c.geometry.attrs.nhwc ? 1 : rank - 1;
}

std::string tensor(DType d, const std::vector<int64_t> &shape) {
  return tensorType(d, shape);
}

/// The operands' shapes and the result's of case `c`.
std::vector<int64_t> lhsShape(const TensorCoreCase &c) {
  switch (c.op) {
  case Op::Matmul:
    return c.matmul.lhs;
  case Op::Conv:
  case Op::ConvGradFilter:
    return c.geometry.inputShape();
  case Op::ConvGradInput:
    return c.geometry.outputShape();
  }
  return {};
}
std::vector<int64_t> rhsShape(const TensorCoreCase &c) {
  switch (c.op) {
  case Op::Matmul:
    return c.matmul.rhs;
  case Op::Conv:
  case Op::ConvGradInput:
    return c.geometry.filterShape();
  case Op::ConvGradFilter:
    return c.geometry.outputShape();
  }
  return {};
}
std::vector<int64_t> resultShape(const TensorCoreCase &c) {
  switch (c.op) {
  case Op::Matmul:
    return c.matmul.result();
  case Op::Conv:
    return c.geometry.outputShape();
  case Op::ConvGradInput:
    return c.geometry.inputShape();
  case Op::ConvGradFilter:
    return c.geometry.filterShape();
  }
  return {};
}

/// `x` rounded to tf32 (10 fraction bits), to nearest with ties away from
/// zero, as PTX's cvt.rna.tf32.f32 does.
double roundToTf32(double x) {
  if (x == 0 || !std::isfinite(x))
    return x;
  double ulp = std::ldexp(1.0, std::ilogb(x) - 10);
  return std::copysign(std::floor(std::fabs(x) / ulp + 0.5) * ulp, x);
}

/// The float64 product of case `c` (before its epilogue), of its operands
/// rounded to tf32 first for a tf32 case.
std::vector<double> product(const TensorCoreCase &c, const Buffer &a,
                            const Buffer &b) {
  std::vector<double> x = a.toDoubles(), y = b.toDoubles();
  if (c.tf32) {
    for (double &v : x)
      v = roundToTf32(v);
    for (double &v : y)
      v = roundToTf32(v);
  }
  switch (c.op) {
  case Op::Matmul:
    return matmulReference(c.matmul, x, y);
  case Op::Conv:
    return conv2dReference(c.geometry, x, y);
  case Op::ConvGradInput:
    return conv2dBackpropInputReference(c.geometry, x, y);
  case Op::ConvGradFilter:
    return conv2dBackpropFilterReference(c.geometry, x, y);
  }
  return {};
}

/// The function @f(operands..., [bias | residual]) of case `c`.
std::string caseIR(const TensorCoreCase &c) {
  std::vector<int64_t> aShape = lhsShape(c), bShape = rhsShape(c);
  std::vector<int64_t> out = resultShape(c);
  std::string ta = tensor(c.dtype, aShape), tb = tensor(c.dtype, bShape),
              tr = tensor(c.dtype, out),
              tc = tensor(c.dtype, {out[channelAxis(c, out.size())]});
  std::string args = "%a: " + ta + ", %b: " + tb;
  if (c.epilogue == Epilogue::BiasGeluTanh || c.epilogue == Epilogue::BiasRelu)
    args += ", %c: " + tc;
  if (c.epilogue == Epilogue::SiluAdd)
    args += ", %r: " + tr;
  std::string body;
  std::string written =
      c.written ? std::string(", nf.gpu_schedule = \"") + c.written + "\"" : "";
  if (c.op != Op::Matmul) {
    const char *name = c.op == Op::Conv ? "nf.conv2d"
                       : c.op == Op::ConvGradInput
                           ? "nf.conv2d_backprop_input"
                           : "nf.conv2d_backprop_filter";
    std::string attrs = c.geometry.attrs.toMLIR();
    if (c.written)
      attrs.insert(attrs.size() - 1, written);
    body = std::string("  %p = ") + name + " %a, %b " + attrs + " : " + ta +
           ", " + tb + " -> " + tr + "\n";
  } else {
    std::vector<std::string> words;
    if (c.matmul.transposeLhs)
      words.push_back("transpose_lhs");
    if (c.matmul.transposeRhs)
      words.push_back("transpose_rhs");
    if (c.written)
      words.push_back(written.substr(2));
    std::string attrs;
    for (const std::string &word : words)
      attrs += (attrs.empty() ? "{" : ", ") + word;
    if (!attrs.empty())
      attrs += "} ";
    body = "  %p = nf.matmul %a, %b " + attrs + ": " + ta + ", " + tb + " -> " +
           tr + "\n";
  }
  std::string last = "%p";
  switch (c.epilogue) {
  case Epilogue::None:
    break;
  case Epilogue::BiasGeluTanh:
  case Epilogue::BiasRelu:
    body += std::string("  %q = nf.bias_add %p, %c {layout = #nf.layout<") +
            (channelAxis(c, out.size()) == 1 ? "nchw" : "nhwc") + ">} : " + tr +
            ", " + tc + "\n";
    body += c.epilogue == Epilogue::BiasRelu
                ? "  %z = nf.relu %q : " + tr + "\n"
                : "  %z = nf.gelu %q {approximate = "
                  "#nf.approximation<tanh>} : " +
                      tr + "\n";
    last = "%z";
    break;
  case Epilogue::SiluAdd:
    body += "  %s = nf.silu %p : " + tr + "\n";
    body += "  %z = nf.add %s, %r : " + tr + "\n";
    last = "%z";
    break;
  case Epilogue::GeluErf:
    body += "  %z = nf.gelu %p : " + tr + "\n";
    last = "%z";
    break;
  }
  return "func.func @f(" + args + ") -> " + tr + " {\n" + body + "  return " +
         last + " : " + tr + "\n}\n";
}

double gelu(double x, bool tanhForm) {
  if (tanhForm)
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}

/// Runs case `c` on the simulator, checks that the kernel's schedule is
/// `schedule`, and its result against float64.
void checkAgainstFloat64(const TensorCoreCase &c, const std::string &schedule,
                         unsigned seed) {
  std::string ir = caseIR(c);
  auto sim = compileForSim(ir, "f", "auto", /*fuse=*/true,
                           c.gpu ? c.gpu : normfuse::runtime::kDefaultGpuTarget,
                           c.tf32);
  ASSERT_TRUE(sim);
  // The launches that run (a grid of more than 0 blocks, as the device
  // holds the planned blocks): the copies, the product, the finish.
  std::vector<std::string> runs;
  for (const normfuse::runtime::Step &step : sim->getPlan().steps)
    if (step.kind == normfuse::runtime::Step::Kind::Launch &&
        !step.launch.emptyGrid())
      runs.push_back(step.launch.kernel);
  size_t copies = c.channelsLast ? (c.op == Op::ConvGradFilter ? 1 : 2) : 0;
  ASSERT_EQ(runs.size(), copies + (c.splitK > 1 ? 2u : 1u))
      << sim->getPlan().str();
  EXPECT_EQ(sim->getSource().find("channels-last-copy") != std::string::npos,
            c.channelsLast);
  EXPECT_EQ(llvm::StringRef(runs[copies]).ends_with("_small_tiles"),
            llvm::StringRef(c.kernelSuffix) == "_small_tiles")
      << runs[copies];
  // A split K's finish follows (its words' values are the schedule
  // layer's choice for the result's rows).
  EXPECT_NE(
      sim->getSource().find(
          schedule + (c.splitK > 1 && !c.written ? " finish-block=" : "\n")),
      std::string::npos)
      << schedule << " is not in\n"
      << sim->getSource();
  if (c.tileEnvironment) {
    // Stages over 48 KiB: the kernel's one dynamic buffer, sized at launch
    // (the stages of A and B).
    TiledProductSchedule s;
    int64_t bytes = c.tf32 ? 4 : 2;
    ASSERT_TRUE(parseTensorCoreTile(c.tileEnvironment, GpuTarget(), s, bytes));
    EXPECT_NE(sim->getSource().find("NF_DYNAMIC_SMEM(nf_smem);"),
              std::string::npos);
    EXPECT_EQ(sim->getPlan().steps[0].launch.sharedMemoryBytes,
              size_t(s.stages * (s.tileM + s.tileN) * s.tileK * bytes));
  }

  EXPECT_EQ(sim->getSource().find("nf_tma_load<") != std::string::npos, c.tma);
  if (c.tma)
    EXPECT_EQ(sim->getSource().find("nf_cp_async<"), std::string::npos);
  // Warp specialized: a producer warpgroup past the consumer warps (the
  // block's size, below; its TMA loads, or its cp.async copies where there
  // are no tensor maps), and the consumers' named barrier where they stage
  // the result (not a split K's partial sums, stored from the registers,
  // nor a matmul's rows that are not whole 16-byte chunks).
  bool ws = llvm::StringRef(schedule).contains(" warp-specialized");
  bool staged =
      c.splitK == 1 && (c.op != Op::Matmul || resultShape(c).back() % 8 == 0);
  EXPECT_EQ(sim->getSource().find("nf_named_barrier(1, ") != std::string::npos,
            ws && staged);
  // In clusters of two that share B's tiles (by TMA loads): each block
  // multicasts half.
  bool mc = ws && c.tma && llvm::StringRef(schedule).contains(" multicast");
  EXPECT_EQ(sim->getSource().find("__cluster_dims__(2, 1, 1)") !=
                std::string::npos,
            mc);
  EXPECT_EQ(
      sim->getSource().find("nf_tma_load_multicast<") != std::string::npos, mc);
  // In two teams that take the units in turns: the second team's named
  // barrier.
  bool pp = ws && llvm::StringRef(schedule).contains(" pingpong");
  EXPECT_EQ(sim->getSource().find("nf_named_barrier(2, ") != std::string::npos,
            pp && staged);
  if (llvm::StringRef(schedule).starts_with("tensor-core-product")) {
    std::string why;
    mlir::FailureOr<TiledProductSchedule> parsed =
        mlir::nf::cuda::parseTiledProductSchedule(schedule, why);
    ASSERT_TRUE(succeeded(parsed)) << why;
    const normfuse::runtime::Launch *product = nullptr;
    for (const normfuse::runtime::Step &step : sim->getPlan().steps)
      if (step.kind == normfuse::runtime::Step::Kind::Launch &&
          step.launch.kernel == runs[copies])
        product = &step.launch;
    ASSERT_NE(product, nullptr);
    EXPECT_EQ(product->block[0],
              unsigned(32 * parsed->warpsM * parsed->warpsN * (pp ? 2 : 1) +
                       (ws ? 128 : 0)));
  }

  std::mt19937 rng(seed);
  std::vector<int64_t> out = resultShape(c);
  Buffer a(c.dtype, lhsShape(c));
  Buffer b(c.dtype, rhsShape(c));
  size_t axis = channelAxis(c, out.size());
  Buffer extra(c.dtype, c.epilogue == Epilogue::SiluAdd
                            ? out
                            : std::vector<int64_t>{out[axis]});
  a.fillNormal(rng);
  b.fillNormal(rng);
  extra.fillNormal(rng);
  std::vector<normfuse::TensorRef> refs{a.ref(), b.ref()};
  if (c.epilogue == Epilogue::BiasGeluTanh ||
      c.epilogue == Epilogue::BiasRelu || c.epilogue == Epilogue::SiluAdd)
    refs.push_back(extra.ref());
  Buffer got(c.dtype, out);
  got.fill(std::nan(""));
  ASSERT_EQ(errorText(sim->run(refs, {got.ref()})), "");
  if (mc) {
    // A cluster's blocks again as far apart as they can run (the second
    // only while the first waits): no block may exit while the other
    // still releases stages into it. The same bits.
    Buffer again(c.dtype, out);
    again.fill(std::nan(""));
    ASSERT_EQ(errorText(sim->runInSimulator(refs, {again.ref()},
                                            SimOrder::Stagger, nullptr)),
              "");
    EXPECT_TRUE(again.bytes == got.bytes);
  }
  if (pp) {
    // The block's threads in other orders (the second team first, and
    // shuffled): whichever team reaches a stage first, each waits for its
    // own K tiles and releases only those. The same bits.
    for (SimOrder order : {SimOrder::Reverse, SimOrder::Shuffle}) {
      Buffer again(c.dtype, out);
      again.fill(std::nan(""));
      ASSERT_EQ(
          errorText(sim->runInSimulator(refs, {again.ref()}, order, nullptr)),
          "");
      EXPECT_TRUE(again.bytes == got.bytes) << int(order);
    }
  }

  std::vector<double> want = product(c, a, b);
  std::vector<double> e = extra.toDoubles();
  // The channel of flat result element i.
  int64_t inner = 1;
  for (size_t d = axis + 1; d < out.size(); ++d)
    inner *= out[d];
  auto channel = [&](size_t i) { return (i / inner) % out[axis]; };
  for (size_t i = 0; i < want.size(); ++i) {
    double &v = want[i];
    switch (c.epilogue) {
    case Epilogue::None:
      break;
    case Epilogue::BiasGeluTanh:
      v = gelu(v + e[channel(i)], /*tanhForm=*/true);
      break;
    case Epilogue::BiasRelu:
      v = std::max(v + e[channel(i)], 0.0);
      break;
    case Epilogue::SiluAdd:
      v = v / (1 + std::exp(-v)) + e[i];
      break;
    case Epilogue::GeluErf:
      v = gelu(v, /*tanhForm=*/false);
      break;
    }
  }
  double error = relativeError(got.toDoubles(), want);
  recordError("relative_error", error);
  // The result's rounding: f16 keeps 11 bits, bf16 8; f32 and f64 the
  // sums' own rounding (tf32: of the rounded operands' products, which the
  // reference takes).
  double bound = c.dtype == DType::F16    ? 1e-3
                 : c.dtype == DType::BF16 ? 6e-3
                 : c.dtype == DType::F32  ? 1e-5
                                          : 1e-12;
  EXPECT_LE(error, bound) << ir;
}

class TensorCoreProductOnSimTest : public testing::TestWithParam<int> {};

TEST_P(TensorCoreProductOnSimTest, MatchesFloat64) {
  TensorCoreCase c = cases()[GetParam()];
  std::string schedule = std::string("tensor-core-product tile=") + c.tile;
  if (!c.tileEnvironment)
    schedule += " warps=2x2 stages=3";
  if (c.tf32)
    schedule += " tf32";
  if (c.splitK > 1)
    schedule += " split-k=" + std::to_string(c.splitK);
  if (c.tileEnvironment)
    setenv("NF_CUDA_TENSOR_CORE_TILE", c.tileEnvironment, 1);
  checkAgainstFloat64(c, schedule, 31 + GetParam());
  unsetenv("NF_CUDA_TENSOR_CORE_TILE");
}

INSTANTIATE_TEST_SUITE_P(Shapes, TensorCoreProductOnSimTest,
                         testing::Range(0, int(cases().size())),
                         [](const testing::TestParamInfo<int> &info) {
                           return std::string(cases()[info.param].name);
                         });

/// f32 products with tf32 allowed: the tensor-core kernel on mma.sync
/// m16n8k8, its 16-byte chunks of 4 elements, the fragments of a K-major
/// operand (which ldmatrix .trans cannot give for 32-bit elements) loaded
/// element by element; checked against float64 of the operands rounded to
/// tf32, so a wrong rounding fails as a wrong fragment does.
std::vector<TensorCoreCase> tf32Cases() {
  std::vector<TensorCoreCase> all = {
      // B of [K, N]: K-major, element by element; odd runs copied element
      // by element.
      {"m1n1k1", DType::F32, {{1, 1}, {1, 1}}},
      {"m7n13k5", DType::F32, {{7, 5}, {5, 13}}},
      {"m65n129k33", DType::F32, {{65, 33}, {33, 129}}},
      {"m77n136k40", DType::F32, {{77, 40}, {40, 136}}},
      // Ten K tiles through three stages.
      {"m64n64k320", DType::F32, {{64, 320}, {320, 64}}},
      // Both operands with K consecutive: both by ldmatrix; A K-major;
      // both K-major; batches and a shared operand.
      {"transposeRhs", DType::F32, {{3, 70, 56}, {40, 56}, false, true}},
      {"transposeLhs", DType::F32, {{2, 48, 72}, {48, 24}, true, false}},
      {"transposeBoth", DType::F32, {{2, 24, 40}, {2, 65, 24}, true, true}},
      {"steadyBatchedTransposeBoth",
       DType::F32,
       {{2, 64, 40}, {2, 72, 64}, true, true}},
      {"biasGeluTanh",
       DType::F32,
       {{50, 64}, {64, 72}},
       Op::Matmul,
       {},
       Epilogue::BiasGeluTanh},
      // The large tile: three stages of 128 x 32 f32 tiles of A and B are
      // 96 KiB of dynamic shared memory.
      {"large_m1536n1408k16",
       DType::F32,
       {{1536, 16}, {16, 1408}},
       Op::Matmul,
       {},
       Epilogue::None,
       "128x128x32"},
      {"splitK_m70n24k1000",
       DType::F32,
       {{70, 1000}, {1000, 24}},
       Op::Matmul,
       {},
       Epilogue::None,
       "64x64x32",
       4},
  };
  TensorCoreCase conv{"convStride2PadBiasRelu", DType::F32, {}, Op::Conv};
  conv.geometry = {2, 16, 24, 9, 7, 3, 3, nhwc({2, 2}, {1, 1, 1, 2}, {1, 1})};
  conv.epilogue = Epilogue::BiasRelu;
  all.push_back(conv);
  conv.name = "convThreeChannels";
  conv.geometry = {1, 3, 16, 12, 12, 3, 3, nhwc({2, 2}, {1, 1, 1, 1}, {1, 1})};
  all.push_back(conv);
  conv.epilogue = Epilogue::None;
  for (Op op : {Op::ConvGradInput, Op::ConvGradFilter}) {
    conv.op = op;
    conv.name = op == Op::ConvGradInput ? "convGradInputStride2"
                                        : "convGradFilterStride2";
    conv.geometry = {2, 16, 24, 9, 7, 3, 3, nhwc({2, 2}, {1, 1, 1, 2}, {1, 1})};
    all.push_back(conv);
  }
  conv.op = Op::Conv;
  conv.name = "convNCHWStride2PadBiasRelu";
  conv.geometry = {2, 16, 24, 9, 7, 3, 3, nchw({2, 2}, {1, 1, 1, 2}, {1, 1})};
  conv.epilogue = Epilogue::BiasRelu;
  conv.channelsLast = true;
  all.push_back(conv);
  // Planes of 4 x 4 f32 (16-byte chunks of 4): stored by columns.
  conv.name = "convNCHWPlane16SiluResidual";
  conv.geometry = {3, 16, 20, 4, 4, 3, 3, nchw({1, 1}, {1, 1, 1, 1}, {1, 1})};
  conv.epilogue = Epilogue::SiluAdd;
  all.push_back(conv);
  for (TensorCoreCase &c : all)
    c.tf32 = true;
  return all;
}

class Tf32ProductOnSimTest : public testing::TestWithParam<int> {};

TEST_P(Tf32ProductOnSimTest, MatchesFloat64OfTf32Operands) {
  TensorCoreCase c = tf32Cases()[GetParam()];
  std::string schedule = std::string("tensor-core-product tile=") + c.tile +
                         " warps=2x2 stages=3 tf32";
  if (c.splitK > 1)
    schedule += " split-k=" + std::to_string(c.splitK);
  checkAgainstFloat64(c, schedule, 71 + GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shapes, Tf32ProductOnSimTest,
                         testing::Range(0, int(tf32Cases().size())),
                         [](const testing::TestParamInfo<int> &info) {
                           return std::string(tf32Cases()[info.param].name);
                         });

/// f32 and f64 products on the SIMT kernel (LowerSimtProducts.cpp), whose
/// `tile` is "<tile> thread=<sums a thread>": every tile size, operands in
/// whole 16-byte chunks (one vector load) and not (element by element),
/// tails of M, N and K, transposes, batches, convolutions in both layouts
/// and their gradients, epilogues.
std::vector<TensorCoreCase> simtCases() {
  std::vector<TensorCoreCase> all = {
      {"m1n1k1",
       DType::F32,
       {{1, 1}, {1, 1}},
       Op::Matmul,
       {},
       Epilogue::None,
       "32x32x8 thread=2x2"},
      {"m7n13k5_f64",
       DType::F64,
       {{7, 5}, {5, 13}},
       Op::Matmul,
       {},
       Epilogue::None,
       "32x32x8 thread=2x2"},
      {"m77n136k40",
       DType::F32,
       {{77, 40}, {40, 136}},
       Op::Matmul,
       {},
       Epilogue::None,
       "64x64x8 thread=4x4"},
      {"m65n129k33",
       DType::F32,
       {{65, 33}, {33, 129}},
       Op::Matmul,
       {},
       Epilogue::None,
       "64x64x8 thread=4x4"},
      {"m70n90k30_f64",
       DType::F64,
       {{70, 30}, {30, 90}},
       Op::Matmul,
       {},
       Epilogue::None,
       "64x64x8 thread=4x4"},
      {"large_m1536n1408k12",
       DType::F32,
       {{1536, 12}, {12, 1408}},
       Op::Matmul,
       {},
       Epilogue::None,
       "128x128x8 thread=8x8"},
      {"transposeBothOdd",
       DType::F32,
       {{2, 9, 35}, {2, 17, 9}, true, true},
       Op::Matmul,
       {},
       Epilogue::None,
       "32x32x8 thread=2x2"},
      {"transposeLhs",
       DType::F32,
       {{2, 48, 72}, {48, 40}, true, false},
       Op::Matmul,
       {},
       Epilogue::None,
       "64x64x8 thread=4x4"},
      {"transposeRhs_f64",
       DType::F64,
       {{3, 70, 56}, {40, 56}, false, true},
       Op::Matmul,
       {},
       Epilogue::None,
       "64x64x8 thread=4x4"},
      {"biasGeluTanh",
       DType::F32,
       {{50, 64}, {64, 72}},
       Op::Matmul,
       {},
       Epilogue::BiasGeluTanh,
       "64x64x8 thread=4x4"},
      {"siluResidual",
       DType::F32,
       {{2, 40, 16}, {16, 44}},
       Op::Matmul,
       {},
       Epilogue::SiluAdd,
       "64x64x8 thread=4x4"},
      // Few tiles over a long K: K split into ranges of at least 256 that
      // bring the blocks towards 264 on the default H100 (3 tiles of 32 x
      // 32 over 125 K tiles: 3 ranges; 4 of 64 x 64 over 139 K tiles, the
      // last partial: 4; a batch of 2 tiles of transposed operands over
      // 75: 2), the epilogue in the finish.
      {"splitK_m70n24k1000",
       DType::F32,
       {{70, 1000}, {1000, 24}},
       Op::Matmul,
       {},
       Epilogue::None,
       "32x32x8 thread=2x2 split-k=3",
       3},
      {"splitK_m100n72k1111_biasGelu",
       DType::F32,
       {{100, 1111}, {1111, 72}},
       Op::Matmul,
       {},
       Epilogue::BiasGeluTanh,
       "64x64x8 thread=4x4 split-k=4",
       4},
      {"splitK_transposeBothBatched",
       DType::F32,
       {{2, 600, 20}, {2, 24, 600}, true, true},
       Op::Matmul,
       {},
       Epilogue::None,
       "32x32x8 thread=2x2 split-k=2",
       2},
      // f64 sums are not split (the partial sums would be f64).
      {"noSplitK_m70n24k1000_f64",
       DType::F64,
       {{70, 1000}, {1000, 24}},
       Op::Matmul,
       {},
       Epilogue::None,
       "32x32x8 thread=2x2"},
  };
  TensorCoreCase conv{"convStride2PadBiasRelu", DType::F32, {}, Op::Conv};
  conv.geometry = {2, 16, 40, 9, 7, 3, 3, nhwc({2, 2}, {1, 1, 1, 2}, {1, 1})};
  conv.epilogue = Epilogue::BiasRelu;
  conv.tile = "64x64x8 thread=4x4";
  all.push_back(conv);
  conv.name = "convThreeChannels";
  conv.geometry = {1, 3, 40, 12, 12, 3, 3, nhwc({2, 2}, {1, 1, 1, 1}, {1, 1})};
  all.push_back(conv);
  conv.name = "convNCHWDilated_f64";
  conv.dtype = DType::F64;
  conv.geometry = {1, 8, 40, 10, 11, 3, 2, nchw({1, 1}, {2, 0, 1, 1}, {2, 3})};
  conv.epilogue = Epilogue::None;
  all.push_back(conv);
  conv.dtype = DType::F32;
  for (bool nhwcLayout : {true, false})
    for (Op op : {Op::ConvGradInput, Op::ConvGradFilter}) {
      conv.op = op;
      conv.name = nhwcLayout ? (op == Op::ConvGradInput ? "convGradInputNHWC"
                                                        : "convGradFilterNHWC")
                             : (op == Op::ConvGradInput ? "convGradInputNCHW"
                                                        : "convGradFilterNCHW");
      ConvAttrs attrs = nhwc({2, 2}, {1, 1, 1, 2}, {1, 1});
      attrs.nhwc = nhwcLayout;
      conv.geometry = {2, 16, 40, 9, 7, 3, 3, attrs};
      // dx has 16 columns (the input channels); dw is 40 x 144.
      conv.tile =
          op == Op::ConvGradInput ? "32x32x8 thread=2x2" : "64x64x8 thread=4x4";
      all.push_back(conv);
    }
  // A convolution of 16 positions over K = 3 x 3 x 64 taps (72 K tiles):
  // 2 ranges; NHWC and NCHW (whose result columns, the channels, are not
  // consecutive: the finish adds one result a thread).
  conv.op = Op::Conv;
  conv.epilogue = Epilogue::BiasRelu;
  conv.tile = "32x32x8 thread=2x2 split-k=2";
  conv.splitK = 2;
  for (bool nhwcLayout : {true, false}) {
    conv.name = nhwcLayout ? "splitK_convNHWC" : "splitK_convNCHW";
    ConvAttrs attrs = nhwc({1, 1}, {1, 1, 1, 1}, {1, 1});
    attrs.nhwc = nhwcLayout;
    conv.geometry = {1, 64, 24, 4, 4, 3, 3, attrs};
    all.push_back(conv);
  }
  return all;
}

class SimtProductOnSimTest : public testing::TestWithParam<int> {};

TEST_P(SimtProductOnSimTest, MatchesFloat64) {
  TensorCoreCase c = simtCases()[GetParam()];
  checkAgainstFloat64(c, std::string("tiled-product tile=") + c.tile,
                      53 + GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shapes, SimtProductOnSimTest,
                         testing::Range(0, int(simtCases().size())),
                         [](const testing::TestParamInfo<int> &info) {
                           return std::string(simtCases()[info.param].name);
                         });

/// Products under schedules written on the op by hand, none of them the
/// schedule layer's choice for its shape: each kernel follows the text
/// (its nf.schedule is the text) and computes the product: tensor-core
/// tiles of 2 x 4 warps in 4 stages with 3 rows of tiles walked together,
/// a split K whose finish adds 2 columns a thread in blocks of 128, the
/// SIMT kernel on f16 operands, non-square SIMT tiles, a convolution.
std::vector<TensorCoreCase> writtenCases() {
  std::vector<TensorCoreCase> all = {
      {"tensorCore64x128Warps2x4Stages4",
       DType::F16,
       {{400, 300}, {300, 200}},
       Op::Matmul,
       {},
       Epilogue::BiasGeluTanh},
      {"splitKFinish2", DType::BF16, {{70, 1000}, {1000, 24}}},
      {"simtOnF16", DType::F16, {{65, 40}, {40, 129}}},
      {"simt64x128x16", DType::F32, {{77, 40}, {40, 136}}},
  };
  all[0].written = "tensor-core-product tile=64x128x32 warps=2x4 stages=4 "
                   "tile-group-rows=3";
  all[1].written = "tensor-core-product tile=64x64x32 warps=2x2 stages=3 "
                   "split-k=3 finish-block=128 finish-vector=2 "
                   "finish-min-blocks-per-sm=4";
  all[1].splitK = 3;
  all[2].written = "tiled-product tile=64x64x8 thread=4x4";
  all[3].written = "tiled-product tile=64x128x16 thread=4x8";
  // K split at launch on static sizes: the ranges fold to constants, 1
  // (two K tiles) and 4 (32 K tiles over one tile).
  TensorCoreCase atLaunch{
      "splitAtLaunchOneRange", DType::F16, {{64, 64}, {64, 72}}};
  atLaunch.written =
      "tensor-core-product tile=64x64x32 warps=2x2 stages=3 split-k-max=16 "
      "split-k-blocks=264 split-k-min-tiles=8 finish-block=256 "
      "finish-vector=8 finish-min-blocks-per-sm=4";
  all.push_back(atLaunch);
  atLaunch.name = "splitAtLaunchFourRanges";
  atLaunch.matmul = {{40, 1024}, {1024, 24}};
  atLaunch.splitK = 4;
  all.push_back(atLaunch);
  // Two kernels, the tiles chosen at launch: one 128 x 128 tile is under
  // 132 (the small tiles run, in 4 ranges), and not under 1 (the large
  // tiles run, with 2 stages of 64-wide K tiles: 16 K tiles, 2 ranges).
  atLaunch.name = "smallTilesChosenAtLaunch";
  atLaunch.written =
      "tensor-core-product tile=128x128x64 warps=2x2 stages=2 split-k-max=16 "
      "split-k-blocks=264 split-k-min-tiles=8 small-tile=64x64x32/3/2x2 "
      "small-tile-below=132 finish-block=256 finish-vector=8 "
      "finish-min-blocks-per-sm=4";
  atLaunch.kernelSuffix = "_small_tiles";
  all.push_back(atLaunch);
  atLaunch.kernelSuffix = "";
  atLaunch.name = "largeTilesChosenAtLaunch";
  atLaunch.written =
      "tensor-core-product tile=128x128x64 warps=2x2 stages=2 split-k-max=16 "
      "split-k-blocks=264 split-k-min-tiles=8 small-tile=64x64x32/3/2x2 "
      "small-tile-below=1 finish-block=256 finish-vector=8 "
      "finish-min-blocks-per-sm=4";
  atLaunch.splitK = 2;
  all.push_back(atLaunch);
  TensorCoreCase conv{"simtConvStride2", DType::F32, {}, Op::Conv};
  conv.geometry = {2, 16, 24, 9, 7, 3, 3, nhwc({2, 2}, {1, 1, 1, 2}, {1, 1})};
  conv.epilogue = Epilogue::BiasRelu;
  conv.written = "tiled-product tile=32x64x8 thread=2x4 tile-group-rows=2";
  all.push_back(conv);
  // wgmma (sm_90a), K of many stages (the stages reused while a group is
  // in flight): M, N and K past whole tiles, A K-major and B MN-major
  // (a matmul's own layouts) in 128-byte swizzles, one warpgroup of two
  // m64n128 slabs, the bias and tanh GELU on its accumulators.
  TensorCoreCase wg{"wgmma128x128x64OneWarpgroup",
                    DType::F16,
                    {{300, 520}, {520, 260}},
                    Op::Matmul,
                    {},
                    Epilogue::BiasGeluTanh};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=128x128x64 warps=4x1 stages=4 wgmma";
  all.push_back(wg);
  // Both operands transposed (A MN-major, B K-major, 64-byte swizzles),
  // two warpgroups along M of m64n256 each, bf16.
  wg = {"wgmmaTransposedTwoWarpgroupsN256",
        DType::BF16,
        {{232, 130}, {300, 232}, true, true}};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=128x256x32 warps=8x1 stages=3 wgmma";
  all.push_back(wg);
  // K of 101 (staged element by element: plain stores before the proxy
  // fence), 32-byte swizzles, two warpgroups along N of two m64n64 slabs.
  wg = {"wgmmaOddKTwoWarpgroupsAlongN", DType::F16, {{70, 101}, {101, 150}}};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=128x128x16 warps=4x2 stages=3 wgmma";
  all.push_back(wg);
  // A convolution (stride 2, padding), its input gathered by cp.async.
  TensorCoreCase wgConv{"wgmmaConvStride2BiasRelu", DType::F16, {}, Op::Conv};
  wgConv.geometry = {2,  16, 72, 9,
                     11, 3,  3,  nhwc({2, 2}, {1, 1, 1, 1}, {1, 1})};
  wgConv.epilogue = Epilogue::BiasRelu;
  wgConv.gpu = "sm_90a";
  wgConv.written =
      "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma";
  all.push_back(wgConv);
  // TMA loads staging wgmma's operands: M, N and K past whole tiles (the
  // boxes' zeros), A's one box of 64-wide K rows (128-byte swizzle), B's
  // two 64-column boxes a stage, four stages each an mbarrier's phases.
  wg = {"wgmmaTmaBoxesPastMNK",
        DType::F16,
        {{300, 520}, {520, 264}},
        Op::Matmul,
        {},
        Epilogue::BiasGeluTanh};
  wg.gpu = "sm_90a";
  wg.written =
      "tensor-core-product tile=128x128x64 warps=4x1 stages=4 wgmma tma";
  wg.tma = true;
  all.push_back(wg);
  // Both transposed (A's boxes of 64 columns of M, B's one box of 32-wide
  // K rows, 64-byte swizzle), bf16, two warpgroups of m64n256.
  wg = {"wgmmaTmaTransposedN256",
        DType::BF16,
        {{232, 136}, {304, 232}, true, true}};
  wg.gpu = "sm_90a";
  wg.written =
      "tensor-core-product tile=128x256x32 warps=8x1 stages=3 wgmma tma";
  wg.tma = true;
  all.push_back(wg);
  // A batch of 3 A's (a 3-d tensor map) times one shared B (2-d), K of
  // one 32-byte swizzled tile.
  wg = {"wgmmaTmaBatchedSharedB", DType::F16, {{3, 72, 16}, {16, 136}}};
  wg.gpu = "sm_90a";
  wg.written =
      "tensor-core-product tile=128x128x16 warps=4x2 stages=3 wgmma tma";
  wg.tma = true;
  all.push_back(wg);
  // Two blocks (max-blocks=2) for 3 x 3 tiles: each block runs four or
  // five units of 5 K tiles on three stages, so the mbarriers' parities
  // carry from one unit into the next mid-cycle (a parity reset per unit
  // waits for a phase that never completes: a deadlock).
  wg = {"wgmmaTmaUnitsCarryPhases", DType::BF16, {{300, 80}, {80, 264}}};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=128x128x16 warps=4x2 stages=3 wgmma "
               "tma max-blocks=2";
  wg.tma = true;
  all.push_back(wg);
  // Rows of 101 elements are not whole 16-byte chunks, which TMA needs:
  // the kernel stages by cp.async instead.
  wg = {"wgmmaTmaOddKUsesCpAsync", DType::F16, {{70, 101}, {101, 150}}};
  wg.gpu = "sm_90a";
  wg.written =
      "tensor-core-product tile=128x128x16 warps=4x2 stages=3 wgmma tma";
  all.push_back(wg);
  // Warp specialized: a producer warpgroup's TMA loads, consumers that
  // release each stage on its empty mbarrier and stage the result tile
  // apart from the stages. M, N and K past whole tiles (9 K tiles through
  // 3 stages), the bias and tanh GELU.
  wg = {"warpSpecializedPastMNK",
        DType::F16,
        {{300, 520}, {520, 264}},
        Op::Matmul,
        {},
        Epilogue::BiasGeluTanh};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=128x128x64 warps=4x1 stages=3 wgmma "
               "tma warp-specialized";
  wg.tma = true;
  all.push_back(wg);
  // Two consumer warpgroups of m64n256, both operands transposed, bf16.
  wg = {"warpSpecializedTransposedN256",
        DType::BF16,
        {{232, 136}, {304, 232}, true, true}};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=128x256x32 warps=8x1 stages=3 wgmma "
               "tma warp-specialized";
  wg.tma = true;
  all.push_back(wg);
  // Two blocks for 9 tiles of 5 K tiles on 3 stages: the producer runs
  // into a block's next unit while its consumers store the last (the
  // stages' phases carry over), and the units' K tiles do not divide
  // the stages. A batch of 3 A's beside a shared B.
  wg = {"warpSpecializedUnitsOverlap", DType::BF16, {{3, 100, 80}, {80, 264}}};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=128x128x16 warps=4x2 stages=3 wgmma "
               "tma warp-specialized max-blocks=2";
  wg.tma = true;
  all.push_back(wg);
  // In clusters of two sharing B's tiles (multicast): M of 3 tiles, so the
  // second pair's second block is past M (it loads its half of B for the
  // first, and stores nothing); 5 K tiles through 3 stages; B's two
  // 64-column boxes, one from each block.
  wg = {"multicastPairsAlongM",
        DType::F16,
        {{300, 264}, {264, 256}},
        Op::Matmul,
        {},
        Epilogue::BiasGeluTanh};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=128x128x64 warps=4x1 stages=3 wgmma "
               "tma warp-specialized multicast";
  wg.tma = true;
  all.push_back(wg);
  // Both transposed, bf16: B's tile is one box of K rows, 128 of them from
  // each block, two consumer warpgroups of m64n256.
  wg = {"multicastTransposedN256",
        DType::BF16,
        {{232, 136}, {304, 232}, true, true}};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=128x256x32 warps=8x1 stages=3 wgmma "
               "tma warp-specialized multicast";
  wg.tma = true;
  all.push_back(wg);
  // A batch of 3 A's of one tile along M beside a shared B: every pair's
  // second block is past M.
  wg = {
      "multicastBatchedOneTileAlongM", DType::BF16, {{3, 100, 80}, {80, 264}}};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=128x128x16 warps=4x2 stages=3 wgmma "
               "tma warp-specialized multicast";
  wg.tma = true;
  all.push_back(wg);
  // One cluster loops over every pair (max-blocks=3 is whole clusters: 2
  // blocks): 4 pairs of 128 x 128 tiles, 5 K tiles through 3 stages, the
  // stages' phases carried from pair to pair; run staggered too, where the
  // second block lags the first by up to a stage in every pair.
  wg = {"multicastOneClusterLoopsOverPairs",
        DType::F16,
        {{300, 136}, {136, 256}},
        Op::Matmul,
        {},
        Epilogue::BiasGeluTanh};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma "
               "tma warp-specialized multicast max-blocks=3";
  wg.tma = true;
  all.push_back(wg);
  // Two teams taking turns (pingpong), one block: 15 units of 64 x 128
  // (M and N past whole tiles), so the first team takes 8 and the second
  // 7, each unit 4 K tiles (the last partial) through 3 stages, which the
  // teams' K tiles share in turns; the bias and tanh GELU.
  wg = {"pingpongTeamsTakeTurns",
        DType::F16,
        {{300, 104}, {104, 264}},
        Op::Matmul,
        {},
        Epilogue::BiasGeluTanh};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=64x128x32 warps=4x1 stages=3 wgmma "
               "tma warp-specialized pingpong max-blocks=1";
  wg.tma = true;
  all.push_back(wg);
  // Units of one K tile (fewer than the stages), 4 of them in one block:
  // a team's K loop is short, so the teams store their tiles at once, each
  // through its own staging buffer; both transposed, bf16, two m64 slabs
  // a team.
  wg = {"pingpongShortUnits", DType::BF16, {{48, 200}, {128, 48}, true, true}};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=128x64x64 warps=4x1 stages=3 wgmma "
               "tma warp-specialized pingpong max-blocks=1";
  wg.tma = true;
  all.push_back(wg);
  // In clusters of two sharing B's tiles, teams in each block: one cluster
  // over 4 pairs of tiles (the teams two each), 5 K tiles through 3
  // stages; run staggered too.
  wg = {"pingpongMulticastOneCluster",
        DType::F16,
        {{300, 136}, {136, 256}},
        Op::Matmul,
        {},
        Epilogue::BiasGeluTanh};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma "
               "tma warp-specialized multicast pingpong max-blocks=2";
  wg.tma = true;
  all.push_back(wg);
  // K split into 3 ranges (6, 6 and 5 of 17 K tiles), each loaded by TMA:
  // the partial sums, then the finish with the bias and GELU. By one
  // thread of the block; by a producer warpgroup on a persistent grid of
  // 2 blocks over the 12 units (4 tiles, 3 ranges); and by two teams in
  // one block, where a team's units alternate with the other's of another
  // length (units 7 and 8: 6 K tiles, then 5).
  for (auto [name, written] : {
           std::pair{"tmaSplitK",
                     "tensor-core-product tile=128x128x32 warps=4x1 stages=3 "
                     "wgmma tma split-k=3 finish-block=256 finish-vector=8 "
                     "finish-min-blocks-per-sm=4"},
           std::pair{"warpSpecializedSplitK",
                     "tensor-core-product tile=128x128x32 warps=4x1 stages=3 "
                     "wgmma tma warp-specialized split-k=3 finish-block=256 "
                     "finish-vector=8 finish-min-blocks-per-sm=4 max-blocks=2"},
           std::pair{"pingpongSplitK",
                     "tensor-core-product tile=128x128x32 warps=4x1 stages=3 "
                     "wgmma tma warp-specialized pingpong split-k=3 "
                     "finish-block=256 finish-vector=8 "
                     "finish-min-blocks-per-sm=4 max-blocks=1"},
       }) {
    wg = {name,       DType::F16, {{200, 520}, {520, 136}},
          Op::Matmul, {},         Epilogue::BiasGeluTanh};
    wg.gpu = "sm_90a";
    wg.written = written;
    wg.splitK = 3;
    wg.tma = true;
    all.push_back(wg);
  }
  // No tensor maps for rows of 101 elements: the producer warpgroup stages
  // them by cp.async, element by element where runs are not whole 16-byte
  // chunks, and arrives on a stage's full mbarrier once they have landed.
  wg = {
      "warpSpecializedOddKStagesByCopies", DType::F16, {{70, 101}, {101, 150}}};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=128x128x16 warps=4x2 stages=3 wgmma "
               "tma warp-specialized";
  all.push_back(wg);
  // The same by cp.async in whole chunks (no `tma` asked), K split in 3
  // ranges of 11, 11 and 10 K tiles over 2 blocks; bf16.
  wg = {"warpSpecializedCopiesSplitK", DType::BF16, {{70, 1024}, {1024, 24}}};
  wg.gpu = "sm_90a";
  wg.written = "tensor-core-product tile=64x64x32 warps=4x1 stages=3 wgmma "
               "warp-specialized split-k=3 finish-block=256 finish-vector=8 "
               "finish-min-blocks-per-sm=4 max-blocks=2";
  wg.splitK = 3;
  all.push_back(wg);
  // Convolutions, whose input the producer gathers by cp.async (zeros in
  // the padding): NHWC stride 2 with the bias and ReLU, warp specialized
  // on a persistent grid of 2 blocks; the input gradient in two teams.
  TensorCoreCase wsConv{
      "warpSpecializedConvStride2BiasRelu", DType::F16, {}, Op::Conv};
  wsConv.geometry = {2, 16, 24, 9, 7, 3, 3, nhwc({2, 2}, {1, 1, 1, 2}, {1, 1})};
  wsConv.epilogue = Epilogue::BiasRelu;
  wsConv.gpu = "sm_90a";
  wsConv.written = "tensor-core-product tile=128x64x32 warps=4x1 stages=3 "
                   "wgmma warp-specialized max-blocks=2";
  all.push_back(wsConv);
  wsConv.name = "pingpongConvGradInputStride2";
  wsConv.op = Op::ConvGradInput;
  wsConv.epilogue = Epilogue::None;
  wsConv.written = "tensor-core-product tile=64x64x32 warps=4x1 stages=3 "
                   "wgmma warp-specialized pingpong max-blocks=1";
  all.push_back(wsConv);
  return all;
}

class WrittenScheduleProductOnSimTest : public testing::TestWithParam<int> {};

TEST_P(WrittenScheduleProductOnSimTest, FollowsItAndMatchesFloat64) {
  TensorCoreCase c = writtenCases()[GetParam()];
  checkAgainstFloat64(c, c.written, 91 + GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shapes, WrittenScheduleProductOnSimTest,
                         testing::Range(0, int(writtenCases().size())),
                         [](const testing::TestParamInfo<int> &info) {
                           return std::string(writtenCases()[info.param].name);
                         });

} // namespace
