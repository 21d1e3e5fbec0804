//===- FusedKernelsTest.cpp - nf.fused norms as one loop nest --*- C++ -*-===//
//
// Part of normfuse. Every prologue/norm/epilogue combination the CPU back
// end lowers as one loop nest, built twice from the same ops: once inside an
// nf.fused (one kernel) and once as plain ops (one loop nest per op, each
// result stored). Both run on the same random data; their outputs must
// agree. Bodies the fused lowering does not handle (it inlines them; here
// a value squared, nf.mul %v, %v) are checked the same way, and one body
// on a dynamic row count runs with two row counts.
//
// Tolerances (relative L2 between the two modules):
// - f32: 1e-6. Both compute the same f32 operations in the same order; the
//   fused one only skips storing and reloading exact f32 values.
// - f16, no epilogue: 1e-6. The fused prologue rounds its result to f16 as
//   the unfused op stores it, so the norm sees the same input and y is
//   rounded once in both.
// - f16 with an epilogue: 2e-3. The unfused module rounds y and every
//   epilogue result to f16 (unit roundoff u = 2^-11 = 4.9e-4); the fused
//   one rounds only the final value. With at most three skipped roundings
//   through steps whose slope is at most about 1.13 (gelu), an element
//   differs by under 4.5u relative to the values it passes through,
//   about 2.2e-3 at worst; the L2 norm over all elements stays below 2e-3.
// - statistics (mean, rstd): 1e-6 in every dtype (the prologue rounding
//   makes the fused norm's input the unfused one's).
//
//===----------------------------------------------------------------------===//

#include "JITTestUtils.h"
#include "Reference.h"

#include <cctype>
#include <cmath>

using namespace nftest;
using normfuse::getDTypeName;

namespace {

/// The producer; Matmul and MatmulT (transpose_rhs) multiply a (M, 24)
/// input by a weight into the case's (M, N) shape; Conv and ConvNCHW
/// convolve a 5-channel input with a 3x3 filter (padding 1) into the case's
/// shape (N, H, W, O), resp. (N, O, H, W).
enum class Norm {
  Layer,
  RMS,
  Group,
  Instance,
  Matmul,
  MatmulT,
  Conv,
  ConvNCHW
};

struct FusedCase {
  const char *name;
  Norm norm;
  bool channelsLast; // group/instance norm layout
  std::vector<int64_t> shape;
  std::vector<std::string> prologue, epilogue; // ops, in order
  DType dtype = DType::F32;
};

/// gtest prints a failing case by its name.
void PrintTo(const FusedCase &c, std::ostream *os) { *os << c.name; }

std::string join(const std::vector<std::string> &parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i)
    s += (i ? ", " : "") + parts[i];
  return s;
}

int64_t channels(const FusedCase &c) {
  bool last =
      c.channelsLast || (c.norm != Norm::Group && c.norm != Norm::Instance &&
                         c.norm != Norm::ConvNCHW);
  return last ? c.shape.back() : c.shape[1];
}

/// The function's arguments and the body's ops (text with `%A<i>` for
/// argument i), with the values it returns.
struct Body {
  std::vector<std::string> argTypes;
  std::vector<Buffer> args;
  std::vector<std::string> ops;
  std::vector<std::string> results, resultTypes;
};

Body makeBody(const FusedCase &c, std::mt19937 &rng) {
  Body b;
  std::string x = tensorType(c.dtype, c.shape);
  std::string f32Param = tensorType(DType::F32, {c.shape.back()});
  std::string bias = tensorType(c.dtype, {channels(c)});
  bool matmul = c.norm == Norm::Matmul || c.norm == Norm::MatmulT;
  bool conv = c.norm == Norm::Conv || c.norm == Norm::ConvNCHW;
  std::string layout =
      channels(c) == c.shape.back() && c.norm != Norm::ConvNCHW &&
              (c.channelsLast ||
               (c.norm != Norm::Group && c.norm != Norm::Instance))
          ? "#nf.layout<nhwc>"
          : "#nf.layout<nchw>";
  auto arg = [&](const std::string &type, DType dtype,
                 std::vector<int64_t> shape) {
    b.argTypes.push_back(type);
    b.args.emplace_back(dtype, shape);
    b.args.back().fillNormal(rng);
    return "%A" + std::to_string(b.args.size() - 1);
  };
  int counter = 0;
  // A pointwise op on `v` (of `shape`), reading a new argument where it
  // needs one.
  std::vector<int64_t> shape = c.shape;
  auto pointwise = [&](const std::string &op, const std::string &v) {
    std::string x = tensorType(c.dtype, shape);
    std::string r = "%v" + std::to_string(counter++);
    if (op == "add" || op == "mul")
      b.ops.push_back(r + " = nf." + op + " " + v + ", " +
                      arg(x, c.dtype, shape) + " : " + x);
    else if (op == "bias_add")
      b.ops.push_back(r + " = nf.bias_add " + v + ", " +
                      arg(bias, c.dtype, {channels(c)}) +
                      " {layout = " + layout + "} : " + x + ", " + bias);
    else if (op == "square")
      b.ops.push_back(r + " = nf.mul " + v + ", " + v + " : " + x);
    else if (op == "gelu_tanh")
      b.ops.push_back(r + " = nf.gelu " + v +
                      " {approximate = #nf.approximation<tanh>} : " + x);
    else
      b.ops.push_back(r + " = nf." + op + " " + v + " : " + x);
    return r;
  };

  const int64_t k = 24, inChannels = 5;
  std::vector<int64_t> inShape =
      matmul ? std::vector<int64_t>{c.shape[0], k} : c.shape;
  if (c.norm == Norm::Conv)
    inShape.back() = inChannels;
  else if (c.norm == Norm::ConvNCHW)
    inShape[1] = inChannels;
  std::string v = arg(tensorType(c.dtype, inShape), c.dtype, inShape);
  shape = inShape;
  for (const std::string &op : c.prologue)
    v = pointwise(op, v);
  shape = c.shape;
  int64_t n = c.shape[0], rank = c.shape.size();
  std::vector<int64_t> statShape;
  std::string norm;
  int numResults = 3;
  std::string groups = std::to_string(channels(c) / 2);
  std::string normLayout =
      c.channelsLast ? "#nf.layout<nhwc>" : "#nf.layout<nchw>";
  switch (c.norm) {
  case Norm::Layer:
  case Norm::RMS: {
    statShape = c.shape;
    statShape.back() = 1;
    bool ln = c.norm == Norm::Layer;
    std::string s = arg(f32Param, DType::F32, {c.shape.back()});
    norm = ln ? "nf.layer_norm " + v + " scale " + s + " bias " +
                    arg(f32Param, DType::F32, {c.shape.back()})
              : "nf.rms_norm " + v + " scale " + s;
    norm += " {axis = " + std::to_string(rank - 1) + " : i64}";
    numResults = ln ? 3 : 2;
    break;
  }
  case Norm::Group:
  case Norm::Instance: {
    std::string p = tensorType(DType::F32, {channels(c)});
    std::string s = arg(p, DType::F32, {channels(c)});
    bool gn = c.norm == Norm::Group;
    statShape = {n, gn ? channels(c) / 2 : channels(c)};
    norm = std::string(gn ? "nf.group_norm " : "nf.instance_norm ") + v +
           " scale " + s + " bias " + arg(p, DType::F32, {channels(c)}) + " {" +
           (gn ? "num_groups = " + groups + " : i64, " : "") +
           "layout = " + normLayout + "}";
    break;
  }
  case Norm::Matmul:
  case Norm::MatmulT: {
    bool t = c.norm == Norm::MatmulT;
    std::vector<int64_t> wShape = t ? std::vector<int64_t>{c.shape[1], k}
                                    : std::vector<int64_t>{k, c.shape[1]};
    std::string w = tensorType(c.dtype, wShape);
    b.ops.push_back("%n:1 = nf.matmul " + v + ", " + arg(w, c.dtype, wShape) +
                    (t ? " {transpose_rhs}" : "") + " : " +
                    tensorType(c.dtype, inShape) + ", " + w + " -> " + x);
    numResults = 1;
    break;
  }
  case Norm::Conv:
  case Norm::ConvNCHW: {
    bool nhwc = c.norm == Norm::Conv;
    int64_t o = channels(c);
    std::vector<int64_t> wShape =
        nhwc ? std::vector<int64_t>{o, 3, 3, inChannels}
             : std::vector<int64_t>{o, inChannels, 3, 3};
    std::string w = tensorType(c.dtype, wShape);
    b.ops.push_back("%n:1 = nf.conv2d " + v + ", " + arg(w, c.dtype, wShape) +
                    " {layout = " + layout +
                    ", padding = array<i64: 1, 1, 1, 1>} : " +
                    tensorType(c.dtype, inShape) + ", " + w + " -> " + x);
    numResults = 1;
    break;
  }
  }
  std::string st = tensorType(DType::F32, statShape);
  std::vector<std::string> normTypes{x}, operandTypes;
  for (int i = 1; i < numResults; ++i)
    normTypes.push_back(st);
  // The norm's operands: its input and the parameters just added.
  operandTypes.push_back(x);
  for (size_t i = b.argTypes.size() - (numResults == 2 ? 1 : 2);
       i < b.argTypes.size(); ++i)
    operandTypes.push_back(b.argTypes[i]);
  if (!matmul && !conv)
    b.ops.push_back("%n:" + std::to_string(numResults) + " = " + norm + " : (" +
                    join(operandTypes) + ") -> (" + join(normTypes) + ")");
  v = "%n#0";
  for (const std::string &op : c.epilogue)
    v = pointwise(op, v);
  b.results.push_back(v);
  b.resultTypes.push_back(x);
  for (int i = 1; i < numResults; ++i) {
    b.results.push_back("%n#" + std::to_string(i));
    b.resultTypes.push_back(st);
  }
  return b;
}

std::string replaceAll(std::string s, const std::string &from,
                       const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::string signature(const Body &b) {
  std::string s = "(";
  for (size_t i = 0; i < b.argTypes.size(); ++i)
    s += (i ? ", %a" : "%a") + std::to_string(i) + ": " + b.argTypes[i];
  return s + ") -> (" + join(b.resultTypes) + ")";
}

/// The plain ops, one after another.
std::string unfusedFunc(const Body &b) {
  std::string s = "func.func @unfused" + signature(b) + " {\n";
  for (const std::string &op : b.ops)
    s += "  " + replaceAll(op, "%A", "%a") + "\n";
  return s + "  return " + join(b.results) + " : " + join(b.resultTypes) +
         "\n}\n";
}

/// The same ops in an nf.fused.
std::string fusedFunc(const Body &b) {
  std::vector<std::string> args, blockArgs, rs;
  for (size_t i = 0; i < b.argTypes.size(); ++i) {
    args.push_back("%a" + std::to_string(i));
    blockArgs.push_back("%b" + std::to_string(i) + ": " + b.argTypes[i]);
  }
  for (size_t i = 0; i < b.results.size(); ++i)
    rs.push_back("%f#" + std::to_string(i));
  std::string s = "func.func @fused" + signature(b) +
                  " {\n  %f:" + std::to_string(b.results.size()) +
                  " = nf.fused (" + join(args) + ") : (" + join(b.argTypes) +
                  ") -> (" + join(b.resultTypes) + ") {\n  ^bb0(" +
                  join(blockArgs) + "):\n";
  for (const std::string &op : b.ops)
    s += "    " + replaceAll(op, "%A", "%b") + "\n";
  std::string yielded;
  for (const std::string &r : b.results)
    yielded += (yielded.empty() ? "" : ", ") + replaceAll(r, "%A", "%b");
  s += "    nf.yield " + yielded + " : " + join(b.resultTypes) + "\n  }\n";
  return s + "  return " + join(rs) + " : " + join(b.resultTypes) + "\n}\n";
}

std::vector<Buffer> run(const std::string &ir, const std::string &fn, Body &b) {
  std::vector<Buffer> outs;
  auto kernel = compileOrFail(ir, fn);
  if (!kernel)
    return outs;
  std::vector<normfuse::TensorRef> ins, refs;
  for (Buffer &a : b.args)
    ins.push_back(a.ref());
  auto shapeOf = [](const std::string &type) {
    std::vector<int64_t> shape;
    size_t at = type.find('<') + 1;
    while (type.find('x', at) != std::string::npos && std::isdigit(type[at])) {
      size_t end = type.find('x', at);
      shape.push_back(std::stoll(type.substr(at, end - at)));
      at = end + 1;
    }
    return shape;
  };
  for (size_t i = 0; i < b.resultTypes.size(); ++i)
    outs.emplace_back(i == 0 ? b.args[0].dtype : DType::F32,
                      shapeOf(b.resultTypes[i]));
  for (Buffer &o : outs) {
    o.fill(std::nan(""));
    refs.push_back(o.ref());
  }
  EXPECT_EQ(errorText(kernel->run(ins, refs)), "") << ir;
  return outs;
}

class FusedNormTest
    : public testing::TestWithParam<std::tuple<FusedCase, DType>> {};

TEST_P(FusedNormTest, MatchesUnfusedOps) {
  FusedCase c = std::get<0>(GetParam());
  c.dtype = std::get<1>(GetParam());
  if (c.dtype == DType::F16)
    for (int64_t &d : c.shape)
      d |= 1; // odd sizes: every vector loop has a scalar tail
  if (c.dtype == DType::F16 && c.norm == Norm::Group)
    c.shape[c.channelsLast ? c.shape.size() - 1 : 1] += 1; // two per group
  std::mt19937 rng(7);
  Body b = makeBody(c, rng);
  std::string fused = fusedFunc(b), unfused = unfusedFunc(b);
  std::vector<Buffer> got = run(fused, "fused", b);
  std::vector<Buffer> want = run(unfused, "unfused", b);
  ASSERT_EQ(got.size(), want.size());
  ASSERT_FALSE(got.empty());
  double tolerance = c.dtype == DType::F16 && !c.epilogue.empty() ? 2e-3 : 1e-6;
  EXPECT_LE(relativeError(got[0].toDoubles(), want[0].toDoubles()), tolerance)
      << fused;
  for (size_t i = 1; i < got.size(); ++i)
    EXPECT_LE(relativeError(got[i].toDoubles(), want[i].toDoubles()), 1e-6)
        << "statistic " << i << "\n"
        << fused;
}

std::string fusedCaseName(
    const testing::TestParamInfo<std::tuple<FusedCase, DType>> &info) {
  return std::string(std::get<0>(info.param).name) + "_" +
         getDTypeName(std::get<1>(info.param));
}

const FusedCase kCases[] = {
    // Row norms: layer_norm and rms_norm over the last axis.
    {"LayerNormGeluTanh", Norm::Layer, false, {4, 40}, {}, {"gelu_tanh"}},
    {"LayerNormGeluErf", Norm::Layer, false, {4, 40}, {}, {"gelu"}},
    {"LayerNormBiasRelu",
     Norm::Layer,
     false,
     {4, 40},
     {},
     {"bias_add", "relu"}},
    {"LayerNormSilu", Norm::Layer, false, {2, 3, 24}, {}, {"silu"}},
    {"LayerNormBiasGeluResidual",
     Norm::Layer,
     false,
     {4, 40},
     {},
     {"bias_add", "gelu_tanh", "add"}},
    {"LayerNormMul", Norm::Layer, false, {4, 40}, {}, {"mul"}},
    {"ResidualLayerNorm", Norm::Layer, false, {4, 40}, {"add"}, {}},
    {"ScaledLayerNormGelu", Norm::Layer, false, {4, 40}, {"mul"}, {"gelu"}},
    {"BiasRMSNormSilu", Norm::RMS, false, {4, 40}, {"bias_add"}, {"silu"}},
    {"ResidualRMSNormMul", Norm::RMS, false, {4, 40}, {"add"}, {"mul"}},
    {"RMSNormBiasRelu", Norm::RMS, false, {4, 40}, {}, {"bias_add", "relu"}},
    // Channel norms.
    {"GroupNormNHWCSilu", Norm::Group, true, {2, 5, 7, 6}, {}, {"silu"}},
    {"GroupNormNHWCBiasSilu",
     Norm::Group,
     true,
     {2, 5, 7, 16},
     {},
     {"bias_add", "silu"}},
    {"ResidualGroupNormNHWCSilu",
     Norm::Group,
     true,
     {2, 5, 7, 6},
     {"add"},
     {"silu", "add"}},
    {"GroupNormNCHWSilu", Norm::Group, false, {2, 6, 5, 7}, {}, {"silu"}},
    // 9 images: one thread per image.
    {"ResidualGroupNormNHWCSilu9Images",
     Norm::Group,
     true,
     {9, 5, 7, 6},
     {"add"},
     {"silu", "add"}},
    {"GroupNormNCHWSilu8Images",
     Norm::Group,
     false,
     {8, 6, 5, 7},
     {},
     {"silu"}},
    {"BiasGroupNormNCHWRelu",
     Norm::Group,
     false,
     {2, 6, 5, 7},
     {"bias_add"},
     {"bias_add", "relu"}},
    {"InstanceNormNCHWGeluTanh",
     Norm::Instance,
     false,
     {2, 5, 3, 7},
     {},
     {"gelu_tanh"}},
    {"InstanceNormNHWCMulRelu",
     Norm::Instance,
     true,
     {2, 3, 7, 5},
     {"mul"},
     {"relu"}},
    // matmul epilogues (no prologue: a matmul reads its operands as such).
    {"MatmulBiasGelu",
     Norm::Matmul,
     false,
     {6, 40},
     {},
     {"bias_add", "gelu_tanh"}},
    {"MatmulBiasReluResidual",
     Norm::Matmul,
     false,
     {6, 40},
     {},
     {"bias_add", "relu", "add"}},
    {"MatmulTransposedSilu", Norm::MatmulT, false, {6, 40}, {}, {"silu"}},
    // NHWC conv epilogues (the UNet's conv + bias + residual).
    {"ConvNHWCBiasSilu",
     Norm::Conv,
     true,
     {2, 6, 5, 8},
     {},
     {"bias_add", "silu"}},
    {"ConvNHWCBiasResidual",
     Norm::Conv,
     true,
     {2, 6, 5, 8},
     {},
     {"bias_add", "add"}},
    // Bodies the fused lowering leaves to inlining: they must still work.
    {"InlinedLayerNormSquare", Norm::Layer, false, {4, 40}, {}, {"square"}},
    {"InlinedAddMatmulGelu", Norm::Matmul, false, {6, 40}, {"add"}, {"gelu"}},
    {"InlinedConvNCHWBiasRelu",
     Norm::ConvNCHW,
     false,
     {2, 8, 6, 5},
     {},
     {"bias_add", "relu"}},
    {"InlinedSquareGroupNorm",
     Norm::Group,
     true,
     {2, 5, 7, 6},
     {"square"},
     {"silu"}},
};

INSTANTIATE_TEST_SUITE_P(Combinations, FusedNormTest,
                         testing::Combine(testing::ValuesIn(kCases),
                                          testing::Values(DType::F32,
                                                          DType::F16)),
                         fusedCaseName);

/// A fused body on a tensor with a dynamic row count: residual add, then
/// layer_norm, bias, gelu; the same kernel runs two row counts.
TEST(FusedDynamicShapeTest, ResidualLayerNormBiasGeluMatchesUnfused) {
  const std::string x = "tensor<?x40xf16>", c = "tensor<40xf16>",
                    st = "tensor<?x1xf32>";
  const std::string body =
      "    %h = nf.add %A0, %A1 : " + x +
      "\n    %n:3 = nf.layer_norm %h {axis = 1 : i64} : (" + x + ") -> (" + x +
      ", " + st + ", " + st + ")\n    %b = nf.bias_add %n#0, %A2 {layout = " +
      "#nf.layout<nhwc>} : " + x + ", " + c + "\n    %g = nf.gelu %b : " + x +
      "\n";
  const std::string sig = "(%a0: " + x + ", %a1: " + x + ", %a2: " + c +
                          ") -> (" + x + ", " + st + ")";
  std::string unfused = "func.func @unfused" + sig + " {\n" +
                        replaceAll(body, "%A", "%a") +
                        "    return %g, %n#2 : " + x + ", " + st + "\n}\n";
  std::string fused =
      "func.func @fused" + sig + " {\n  %f:2 = nf.fused (%a0, " +
      "%a1, %a2) : (" + x + ", " + x + ", " + c + ") -> (" + x + ", " + st +
      ") {\n  ^bb0(%b0: " + x + ", %b1: " + x + ", %b2: " + c + "):\n" +
      replaceAll(body, "%A", "%b") + "    nf.yield %g, %n#2 : " + x + ", " +
      st + "\n  }\n  return %f#0, %f#1 : " + x + ", " + st + "\n}\n";
  auto fusedKernel = compileOrFail(fused, "fused");
  auto unfusedKernel = compileOrFail(unfused, "unfused");
  ASSERT_TRUE(fusedKernel && unfusedKernel);
  std::mt19937 rng(3);
  for (int64_t rows : {5, 17}) {
    Buffer a(DType::F16, {rows, 40}), r(DType::F16, {rows, 40}),
        bias(DType::F16, {40});
    for (Buffer *buffer : {&a, &r, &bias})
      buffer->fillNormal(rng);
    std::vector<Buffer> outs;
    for (auto *kernel : {&fusedKernel, &unfusedKernel}) {
      outs.emplace_back(DType::F16, std::vector<int64_t>{rows, 40});
      outs.emplace_back(DType::F32, std::vector<int64_t>{rows, 1});
      Buffer &y = outs[outs.size() - 2], &rstd = outs.back();
      y.fill(std::nan(""));
      rstd.fill(std::nan(""));
      ASSERT_EQ(errorText((*kernel)->run({a.ref(), r.ref(), bias.ref()},
                                         {y.ref(), rstd.ref()})),
                "");
    }
    // f16 with an epilogue (bias, gelu): 2e-3, as above.
    EXPECT_LE(relativeError(outs[0].toDoubles(), outs[2].toDoubles()), 2e-3);
    EXPECT_LE(relativeError(outs[1].toDoubles(), outs[3].toDoubles()), 1e-6);
  }
}
} // namespace

/// The backward group nf-fuse forms (an activation gradient summed by
/// bias_add_grad, the gradient also yielded) is one pass over dy and x on
/// the CPU; both results match the same ops unfused. In f16 the activation
/// gradient is rounded as the unfused op stores it; the bias gradient sums
/// the unrounded values (relative error bound 2e-3).
using BiasGradParam = std::tuple<std::string, DType, bool>;

class FusedBiasGradTest : public testing::TestWithParam<BiasGradParam> {};

TEST_P(FusedBiasGradTest, MatchesUnfusedOps) {
  // Named copies, not structured bindings: the lambda below captures them
  // (capturing a binding is C++20).
  const auto &param = GetParam();
  const auto activation = std::get<0>(param);
  const DType dtype = std::get<1>(param);
  const bool channelsLast = std::get<2>(param);
  std::vector<int64_t> shape = channelsLast ? std::vector<int64_t>{2, 5, 7, 6}
                                            : std::vector<int64_t>{2, 6, 5, 7};
  std::string x = tensorType(dtype, shape), c = tensorType(dtype, {6});
  std::string layout = channelsLast ? "nhwc" : "nchw";
  std::string op =
      activation == "gelu_tanh" ? "nf.gelu_grad" : "nf." + activation;
  std::string attrs = activation == "gelu_tanh"
                          ? " {approximate = #nf.approximation<tanh>}"
                          : "";
  std::string ops = "    %dg = " + op + " %a, %b" + attrs + " : " + x +
                    "\n    %db = nf.bias_add_grad %dg {layout = #nf.layout<" +
                    layout + ">} : " + x + " -> " + c + "\n";
  std::string sig = "(%a: " + x + ", %b: " + x + ") -> (" + x + ", " + c + ")";
  std::string unfused = "func.func @f" + sig + " {\n" + ops +
                        "    return %dg, %db : " + x + ", " + c + "\n}\n";
  std::string fused = "func.func @f(%p: " + x + ", %q: " + x + ") -> (" + x +
                      ", " + c + ") {\n  %r:2 = nf.fused (%p, %q) : (" + x +
                      ", " + x + ") -> (" + x + ", " + c +
                      ") {\n  ^bb0(%a: " + x + ", %b: " + x + "):\n" + ops +
                      "    nf.yield %dg, %db : " + x + ", " + c +
                      "\n  }\n  return %r#0, %r#1 : " + x + ", " + c + "\n}\n";
  std::mt19937 rng(11);
  Buffer dy(dtype, shape), in(dtype, shape);
  dy.fillNormal(rng);
  in.fillNormal(rng);
  auto run = [&](const std::string &ir) {
    std::vector<Buffer> outs{Buffer(dtype, shape), Buffer(dtype, {6})};
    auto kernel = compileOrFail(ir, "f");
    if (!kernel)
      return outs;
    for (Buffer &o : outs)
      o.fill(std::nan(""));
    EXPECT_EQ(errorText(kernel->run({dy.ref(), in.ref()},
                                    {outs[0].ref(), outs[1].ref()})),
              "");
    return outs;
  };
  std::vector<Buffer> expected = run(unfused), actual = run(fused);
  double bound = dtype == DType::F16 ? 2e-3 : 1e-6;
  EXPECT_LE(relativeError(actual[0].toDoubles(), expected[0].toDoubles()),
            dtype == DType::F16 ? 1e-3 : 1e-6);
  EXPECT_LE(relativeError(actual[1].toDoubles(), expected[1].toDoubles()),
            bound);
}

INSTANTIATE_TEST_SUITE_P(
    Activations, FusedBiasGradTest,
    testing::Combine(testing::Values("relu_grad", "gelu_grad", "gelu_tanh",
                                     "silu_grad"),
                     testing::Values(DType::F32, DType::F16), testing::Bool()),
    [](const testing::TestParamInfo<BiasGradParam> &info) {
      return std::get<0>(info.param) + "_" +
             normfuse::getDTypeName(std::get<1>(info.param)) +
             (std::get<2>(info.param) ? "_nhwc" : "_nchw");
    });
