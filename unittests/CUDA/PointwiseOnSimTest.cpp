//===- PointwiseOnSimTest.cpp - CUDA pointwise kernels in the simulator -*- C++
//-*-===//
//
// Part of normfuse. Every pointwise nf op's CUDA kernel, run by the CUDA
// simulator, against the same op on the CPU back end (whose own tests
// compare it with float64): on a shape whose size no vector divides
// (scalar accesses) and one of whole 16-byte vectors, in f32 and bf16.
// The two back ends share the activation math but compute 2^t differently
// (a polynomial on the CPU, exp2f on the GPU), so f32 agrees to 1e-6
// (relative L2); bf16 outputs to 8e-3, one rounding step.
//
//===----------------------------------------------------------------------===//

#include "CudaSimTestUtils.h"
#include "Reference.h"

#include <cmath>

using namespace nftest;

namespace {

struct PointwiseCase {
  std::string name;
  /// The op, with %a (and %b) as operands of type T and result type T;
  /// "BIAS" stands for a (C) operand %c of the bias_add.
  std::string op;
  int operands; // 1 or 2 tensors of the result's type, plus the bias
  bool bias = false;
  const char *layout = "nhwc";
};

struct ShapeCase {
  DType dtype;
  std::vector<int64_t> shape;
};

// gtest prints parameters with these instead of their bytes.
[[maybe_unused]] void PrintTo(const PointwiseCase &p, std::ostream *os) {
  *os << p.name;
}
[[maybe_unused]] void PrintTo(const ShapeCase &s, std::ostream *os) {
  *os << normfuse::getDTypeName(s.dtype) << " "
      << normfuse::formatShape(s.shape);
}

class PointwiseOnSimTest
    : public testing::TestWithParam<std::tuple<PointwiseCase, ShapeCase>> {};

TEST_P(PointwiseOnSimTest, AgreesWithTheCPUBackEnd) {
  const auto &[p, s] = GetParam();
  std::string t = tensorType(s.dtype, s.shape);
  int64_t channelAxis =
      std::string(p.layout) == "nhwc" ? int64_t(s.shape.size()) - 1 : 1;
  int64_t channels = s.shape[channelAxis];
  std::string c = tensorType(s.dtype, {channels});
  std::string args = "%a: " + t + (p.operands == 2 ? ", %b: " + t : "") +
                     (p.bias ? ", %c: " + c : "");
  std::string ir = "func.func @f(" + args + ") -> " + t + " {\n  %0 = " + p.op +
                   " : " + t + (p.bias ? ", " + c : "") +
                   "\n  return %0 : " + t + "\n}\n";
  auto sim = compileForSim(ir, "f");
  ASSERT_TRUE(sim);
  auto cpu = sharedJIT().compile(ir, "f");
  ASSERT_TRUE(bool(cpu)) << llvm::toString(cpu.takeError());

  std::mt19937 rng(11);
  std::vector<Buffer> in;
  for (int i = 0; i < p.operands; ++i) {
    in.emplace_back(s.dtype, s.shape);
    in.back().fillNormal(rng, 0.0, 3.0);
  }
  if (p.bias) {
    in.emplace_back(s.dtype, std::vector<int64_t>{channels});
    in.back().fillNormal(rng);
  }
  std::vector<normfuse::TensorRef> refs;
  for (Buffer &b : in)
    refs.push_back(b.ref());
  Buffer fromSim(s.dtype, s.shape), fromCPU(s.dtype, s.shape);
  fromSim.fill(std::nan(""));
  fromCPU.fill(std::nan(""));
  ASSERT_EQ(errorText(sim->run(refs, {fromSim.ref()})), "");
  ASSERT_EQ(errorText((*cpu)->run(refs, {fromCPU.ref()})), "");
  double error = relativeError(fromSim.toDoubles(), fromCPU.toDoubles());
  EXPECT_LE(error, s.dtype == DType::F32 ? 1e-6 : 8e-3) << ir;
}

std::vector<PointwiseCase> ops() {
  return {
      {"relu", "nf.relu %a", 1},
      {"gelu", "nf.gelu %a", 1},
      {"gelu_tanh", "nf.gelu %a {approximate = #nf.approximation<tanh>}", 1},
      {"silu", "nf.silu %a", 1},
      {"add", "nf.add %a, %b", 2},
      {"mul", "nf.mul %a, %b", 2},
      {"relu_grad", "nf.relu_grad %a, %b", 2},
      {"gelu_grad", "nf.gelu_grad %a, %b", 2},
      {"gelu_grad_tanh",
       "nf.gelu_grad %a, %b {approximate = #nf.approximation<tanh>}", 2},
      {"silu_grad", "nf.silu_grad %a, %b", 2},
      {"bias_add_nhwc", "nf.bias_add %a, %c {layout = #nf.layout<nhwc>}", 1,
       true, "nhwc"},
      {"bias_add_nchw", "nf.bias_add %a, %c {layout = #nf.layout<nchw>}", 1,
       true, "nchw"},
  };
}

INSTANTIATE_TEST_SUITE_P(
    Ops, PointwiseOnSimTest,
    testing::Combine(testing::ValuesIn(ops()),
                     testing::Values(ShapeCase{DType::F32, {3, 5, 7}},
                                     ShapeCase{DType::BF16, {2, 3, 256}})),
    [](const auto &info) {
      const PointwiseCase &p = std::get<0>(info.param);
      const ShapeCase &s = std::get<1>(info.param);
      return p.name + "_" + normfuse::getDTypeName(s.dtype);
    });

// batch_norm_inference (per-channel running statistics, scale and bias) in
// both layouts, against the CPU back end.
// Schedules written on the ops by hand (none the schedule layer's choice):
// each kernel follows its text and agrees with the CPU back end: blocks of
// 64 threads of 2-element vectors with a tail of one element (33 x 777 is
// odd), 32 threads of single elements over a bias along NCHW's channels.
TEST(WrittenPointwiseScheduleOnSimTest, FollowsItAndAgreesWithTheCPUBackEnd) {
  struct Case {
    std::string op, schedule;
    DType dtype;
    std::vector<int64_t> shape;
  };
  for (const Case &c : {Case{"nf.gelu %a",
                             "grid-stride block=64 vector=2 peeled "
                             "min-blocks-per-sm=8",
                             DType::F32,
                             {33, 777}},
                        Case{"nf.bias_add %a, %c {layout = #nf.layout<nchw>",
                             "grid-stride "
                             "block=32 vector=1 min-blocks-per-sm=4",
                             DType::BF16,
                             {2, 3, 5, 7}}}) {
    std::string t = tensorType(c.dtype, c.shape);
    bool bias = c.op.find("bias_add") != std::string::npos;
    std::string ct = tensorType(c.dtype, {c.shape[1]});
    std::string attrs = (bias ? ", " : " {") +
                        std::string("nf.gpu_schedule = \"") + c.schedule +
                        "\"}";
    std::string ir = "func.func @f(%a: " + t + (bias ? ", %c: " + ct : "") +
                     ") -> " + t + " {\n  %0 = " + c.op + attrs + " : " + t +
                     (bias ? ", " + ct : "") + "\n  return %0 : " + t + "\n}\n";
    auto sim = compileForSim(ir, "f");
    ASSERT_TRUE(sim) << ir;
    EXPECT_NE(sim->getSource().find(c.schedule + "\n"), std::string::npos)
        << sim->getSource();
    auto cpu = sharedJIT().compile(ir, "f");
    ASSERT_TRUE(bool(cpu)) << llvm::toString(cpu.takeError());
    std::mt19937 rng(13);
    Buffer a(c.dtype, c.shape), bv(c.dtype, std::vector<int64_t>{c.shape[1]});
    a.fillNormal(rng, 0.0, 3.0);
    bv.fillNormal(rng);
    std::vector<normfuse::TensorRef> refs{a.ref()};
    if (bias)
      refs.push_back(bv.ref());
    Buffer fromSim(c.dtype, c.shape), fromCPU(c.dtype, c.shape);
    fromSim.fill(std::nan(""));
    fromCPU.fill(std::nan(""));
    ASSERT_EQ(errorText(sim->run(refs, {fromSim.ref()})), "");
    ASSERT_EQ(errorText((*cpu)->run(refs, {fromCPU.ref()})), "");
    EXPECT_LE(relativeError(fromSim.toDoubles(), fromCPU.toDoubles()),
              c.dtype == DType::F32 ? 1e-6 : 8e-3)
        << ir;
  }
}

TEST(BatchNormInferenceOnSimTest, AgreesWithTheCPUBackEnd) {
  for (bool channelsLast : {true, false}) {
    std::vector<int64_t> shape = channelsLast
                                     ? std::vector<int64_t>{2, 3, 5, 24}
                                     : std::vector<int64_t>{2, 24, 3, 5};
    std::string t = tensorType(DType::F16, shape);
    std::string p = tensorType(DType::F16, {24});
    std::string st = tensorType(DType::F32, {24});
    std::string ir = "func.func @bn(%x: " + t + ", %s: " + p + ", %b: " + p +
                     ", %rm: " + st + ", %rv: " + st + ") -> " + t +
                     " {\n  %y = nf.batch_norm_inference %x scale %s bias %b "
                     "running(%rm, %rv) {layout = #nf.layout<" +
                     (channelsLast ? "nhwc" : "nchw") + ">} : (" + t + ", " +
                     p + ", " + p + ", " + st + ", " + st + ") -> " + t +
                     "\n  return %y : " + t + "\n}\n";
    auto sim = compileForSim(ir, "bn");
    ASSERT_TRUE(sim);
    auto cpu = sharedJIT().compile(ir, "bn");
    ASSERT_TRUE(bool(cpu)) << llvm::toString(cpu.takeError());
    std::mt19937 rng(31);
    Buffer x(DType::F16, shape), s(DType::F16, {24}), b(DType::F16, {24}),
        rm(DType::F32, {24}), rv(DType::F32, {24});
    x.fillNormal(rng);
    s.fillNormal(rng, 1.0, 0.5);
    b.fillNormal(rng);
    rm.fillNormal(rng);
    rv.fillNormal(rng, 2.0, 0.3);
    Buffer fromSim(DType::F16, shape), fromCPU(DType::F16, shape);
    std::vector<normfuse::TensorRef> in{x.ref(), s.ref(), b.ref(), rm.ref(),
                                        rv.ref()};
    ASSERT_EQ(errorText(sim->run(in, {fromSim.ref()})), "");
    ASSERT_EQ(errorText((*cpu)->run(in, {fromCPU.ref()})), "");
    // Both compute in f32 and round once to f16: one rounding step apart
    // at most.
    EXPECT_LE(relativeError(fromSim.toDoubles(), fromCPU.toDoubles()), 1e-3)
        << (channelsLast ? "nhwc" : "nchw");
  }
}

// A returned argument, and a value returned twice, each get a buffer of
// their own: the launch plan copies them.
TEST(ReturnedValuesOnSimTest, ArgumentsAndRepeatedResultsAreCopied) {
  std::string t = tensorType(DType::F32, {4, 6});
  std::string ir = "func.func @f(%a: " + t + ") -> (" + t + ", " + t + ", " +
                   t + ") {\n  %0 = nf.relu %a : " + t +
                   "\n  return %a, %0, %0 : " + t + ", " + t + ", " + t +
                   "\n}\n";
  auto sim = compileForSim(ir, "f");
  ASSERT_TRUE(sim);
  std::mt19937 rng(5);
  Buffer a(DType::F32, {4, 6});
  a.fillNormal(rng);
  Buffer same(DType::F32, {4, 6}), relu1(DType::F32, {4, 6}),
      relu2(DType::F32, {4, 6});
  ASSERT_EQ(
      errorText(sim->run({a.ref()}, {same.ref(), relu1.ref(), relu2.ref()})),
      "");
  EXPECT_EQ(same.toDoubles(), a.toDoubles());
  for (int64_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(relu1.get(i), std::max(a.get(i), 0.0));
    EXPECT_EQ(relu2.get(i), std::max(a.get(i), 0.0));
  }
}

} // namespace
