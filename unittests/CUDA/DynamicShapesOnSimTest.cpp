//===- DynamicShapesOnSimTest.cpp - shape-generic CUDA kernels -*- C++ -*-===//
//
// Part of normfuse. Functions with dynamic dimensions lowered for CUDA as
// they are (what nf-opt's --nf-cuda-pipeline emits): the kernels take their
// sizes as arguments, and each call's launch plan is read off the one
// lowering for the call's shapes (CUDAOptions::shapeGenericKernels). Every
// op family runs in the simulator on several shapes, each against the CPU
// back end on the same inputs (the CPU's own tests check it against float64
// references), and every shape of a function runs the same CUDA source.
//
//===----------------------------------------------------------------------===//

#include "CudaSimTestUtils.h"

using namespace nftest;
using normfuse::jit::CudaSimKernel;
using normfuse::jit::Kernel;
using normfuse::runtime::Residency;

namespace {

/// The cuda-sim JIT that keeps dynamic dimensions in the kernels.
normfuse::jit::JIT &shapeGenericJIT() {
  static normfuse::jit::JIT jit([] {
    normfuse::jit::Options options;
    options.target = normfuse::jit::Target::CUDASim;
    options.cuda.shapeGenericKernels = true;
    return options;
  }());
  return jit;
}

/// The CPU JIT, fusing as the simulator's does.
normfuse::jit::JIT &cpuJIT() {
  static normfuse::jit::JIT jit{normfuse::jit::Options()};
  return jit;
}

struct DynamicCase {
  const char *name;
  /// A function @f.
  const char *ir;
  /// The input shapes of each call.
  std::vector<std::vector<std::vector<int64_t>>> calls;
  /// Relative error allowed against the CPU, per output.
  double tolerance = 1e-5;
  /// The output shapes of each call, where the inputs leave them open.
  std::vector<std::vector<std::vector<int64_t>>> outputs = {};
};

[[maybe_unused]] void PrintTo(const DynamicCase &c, std::ostream *os) {
  *os << c.name;
}

class DynamicShapesOnSimTest : public testing::TestWithParam<DynamicCase> {};

/// A matmul + GELU of f16 whose tokens and K are known at launch.
const char *kSplitAtLaunchIR = R"mlir(
func.func @f(%a: tensor<?x?xf16>, %b: tensor<?x64xf16>) -> tensor<?x64xf16> {
  %c = nf.matmul %a, %b : tensor<?x?xf16>, tensor<?x64xf16> -> tensor<?x64xf16>
  %d = nf.gelu %c {approximate = #nf.approximation<tanh>} : tensor<?x64xf16>
  return %d : tensor<?x64xf16>
})mlir";

std::shared_ptr<Kernel> compileWith(normfuse::jit::JIT &jit, const char *ir) {
  auto kernel = jit.compile(ir, "f");
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError());
    return nullptr;
  }
  return *kernel;
}

TEST_P(DynamicShapesOnSimTest, MatchesCPUWithOneLoweringForEveryShape) {
  const DynamicCase &c = GetParam();
  auto sim = compileWith(shapeGenericJIT(), c.ir);
  auto cpu = compileWith(cpuJIT(), c.ir);
  ASSERT_TRUE(sim && cpu);
  ASSERT_FALSE(sim->getSignature().hasStaticShapes());
  std::string source;
  for (size_t call = 0; call < c.calls.size(); ++call) {
    const auto &shapes = c.calls[call];
    std::vector<std::vector<int64_t>> outputShapes;
    if (!c.outputs.empty())
      outputShapes = c.outputs[call];
    std::string trace;
    for (const auto &s : shapes)
      trace += tensorType(DType::F32, s) + " ";
    SCOPED_TRACE(trace);
    auto simCall = sim->specialize(shapes, outputShapes);
    auto cpuCall = cpu->specialize(shapes, outputShapes);
    ASSERT_TRUE(bool(simCall)) << llvm::toString(simCall.takeError());
    ASSERT_TRUE(bool(cpuCall)) << llvm::toString(cpuCall.takeError());
    const std::string &callSource =
        std::static_pointer_cast<CudaSimKernel>(*simCall)->getSource();
    if (source.empty())
      source = callSource;
    EXPECT_EQ(callSource, source) << "the CUDA was lowered again";

    std::mt19937 rng(7);
    const auto &sig = (*cpuCall)->getSignature();
    std::vector<Buffer> inputs, simOut, cpuOut;
    for (size_t i = 0; i < sig.inputs.size(); ++i) {
      inputs.emplace_back(sig.inputs[i].dtype, sig.inputs[i].shape);
      inputs.back().fillNormal(rng, 0.5, 1.5);
    }
    for (const auto &t : sig.outputs) {
      simOut.emplace_back(t.dtype, t.shape);
      simOut.back().fill(std::nan(""));
      cpuOut.emplace_back(t.dtype, t.shape);
    }
    std::vector<normfuse::TensorRef> in, simRefs, cpuRefs;
    for (Buffer &b : inputs)
      in.push_back(b.ref());
    for (Buffer &b : simOut)
      simRefs.push_back(b.ref());
    for (Buffer &b : cpuOut)
      cpuRefs.push_back(b.ref());
    ASSERT_EQ(errorText(sim->run(in, simRefs)), "");
    ASSERT_EQ(errorText(cpu->run(in, cpuRefs)), "");
    for (size_t o = 0; o < simOut.size(); ++o)
      EXPECT_LE(relativeError(simOut[o].toDoubles(), cpuOut[o].toDoubles()),
                c.tolerance)
          << "output #" << o;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ops, DynamicShapesOnSimTest,
    testing::Values(
        DynamicCase{"layer_norm_rows_and_columns",
                    R"mlir(
func.func @f(%x: tensor<?x?xf32>, %s: tensor<?xf32>, %b: tensor<?xf32>)
    -> (tensor<?x?xf32>, tensor<?x1xf32>, tensor<?x1xf32>) {
  %y, %m, %r = nf.layer_norm %x scale %s bias %b {axis = 1 : i64}
      : (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>)
      -> (tensor<?x?xf32>, tensor<?x1xf32>, tensor<?x1xf32>)
  return %y, %m, %r : tensor<?x?xf32>, tensor<?x1xf32>, tensor<?x1xf32>
})mlir",
                    {{{3, 37}, {37}, {37}},
                     {{1, 1}, {1}, {1}},
                     {{2, 5000}, {5000}, {5000}}}},
        DynamicCase{"rms_norm_f16_rows",
                    R"mlir(
func.func @f(%x: tensor<?x64xf16>, %s: tensor<64xf16>) -> tensor<?x64xf16> {
  %y, %r = nf.rms_norm %x scale %s {axis = 1 : i64}
      : (tensor<?x64xf16>, tensor<64xf16>) -> (tensor<?x64xf16>, tensor<?x1xf32>)
  return %y : tensor<?x64xf16>
})mlir",
                    {{{5, 64}, {64}}, {{1, 64}, {64}}, {{33, 64}, {64}}},
                    1e-3},
        DynamicCase{"layer_norm_grad",
                    R"mlir(
func.func @f(%dy: tensor<?x?xf32>, %x: tensor<?x?xf32>, %m: tensor<?x1xf32>,
             %r: tensor<?x1xf32>, %s: tensor<?xf32>)
    -> (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %dx, %ds, %db = nf.layer_norm_grad %dy, %x, %m, %r scale %s {axis = 1 : i64}
      : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x1xf32>, tensor<?x1xf32>,
         tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>)
  return %dx, %ds, %db : tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>
})mlir",
                    {{{4, 9}, {4, 9}, {4, 1}, {4, 1}, {9}},
                     {{70, 300}, {70, 300}, {70, 1}, {70, 1}, {300}},
                     // Peeled chunks whose heads move from row to row.
                     {{37, 4099}, {37, 4099}, {37, 1}, {37, 1}, {4099}}}},
        DynamicCase{"bias_gelu_nhwc",
                    R"mlir(
func.func @f(%x: tensor<?x?x?x16xf32>, %b: tensor<16xf32>)
    -> tensor<?x?x?x16xf32> {
  %0 = nf.bias_add %x, %b {layout = #nf.layout<nhwc>}
      : tensor<?x?x?x16xf32>, tensor<16xf32>
  %1 = nf.gelu %0 : tensor<?x?x?x16xf32>
  return %1 : tensor<?x?x?x16xf32>
})mlir",
                    {{{1, 3, 5, 16}, {16}}, {{2, 4, 4, 16}, {16}}}},
        DynamicCase{"group_norm_nhwc_batch_and_spatial",
                    R"mlir(
func.func @f(%x: tensor<?x?x?x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>)
    -> (tensor<?x?x?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %y, %m, %r = nf.group_norm %x scale %s bias %b {layout = #nf.layout<nhwc>, num_groups = 32 : i64}
      : (tensor<?x?x?x64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> (tensor<?x?x?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>)
  return %y, %m, %r : tensor<?x?x?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>
})mlir",
                    {{{1, 8, 8, 64}, {64}, {64}},
                     {{2, 3, 5, 64}, {64}, {64}},
                     {{0, 3, 5, 64}, {64}, {64}}}},
        DynamicCase{"group_norm_nchw_every_size",
                    R"mlir(
func.func @f(%x: tensor<?x?x?x?xf32>, %s: tensor<?xf32>, %b: tensor<?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %y, %m, %r = nf.group_norm %x scale %s bias %b {num_groups = 4 : i64}
      : (tensor<?x?x?x?xf32>, tensor<?xf32>, tensor<?xf32>)
      -> (tensor<?x?x?x?xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
  return %y, %m, %r : tensor<?x?x?x?xf32>, tensor<?x4xf32>, tensor<?x4xf32>
})mlir",
                    {{{2, 8, 5, 5}, {8}, {8}},
                     {{1, 12, 3, 7}, {12}, {12}},
                     {{1, 4, 70, 80}, {4}, {4}}}},
        DynamicCase{"instance_norm_nhwc_f16_channels",
                    R"mlir(
func.func @f(%x: tensor<?x?x?x?xf16>) -> tensor<?x?x?x?xf16> {
  %y, %m, %r = nf.instance_norm %x {layout = #nf.layout<nhwc>}
      : (tensor<?x?x?x?xf16>) -> (tensor<?x?x?x?xf16>, tensor<?x?xf32>, tensor<?x?xf32>)
  return %y : tensor<?x?x?x?xf16>
})mlir",
                    {{{2, 4, 4, 16}}, {{1, 3, 3, 8}}, {{3, 1, 1, 5}}},
                    1e-3},
        DynamicCase{"group_norm_silu_fused_f16",
                    R"mlir(
func.func @f(%x: tensor<?x8x8x64xf16>, %s: tensor<64xf16>, %b: tensor<64xf16>)
    -> tensor<?x8x8x64xf16> {
  %y, %m, %r = nf.group_norm %x scale %s bias %b {layout = #nf.layout<nhwc>, num_groups = 32 : i64}
      : (tensor<?x8x8x64xf16>, tensor<64xf16>, tensor<64xf16>)
      -> (tensor<?x8x8x64xf16>, tensor<?x32xf32>, tensor<?x32xf32>)
  %a = nf.silu %y : tensor<?x8x8x64xf16>
  return %a : tensor<?x8x8x64xf16>
})mlir",
                    {{{1, 8, 8, 64}, {64}, {64}}, {{3, 8, 8, 64}, {64}, {64}}},
                    1e-3},
        DynamicCase{"group_norm_grad_nhwc_batch_and_spatial",
                    R"mlir(
func.func @f(%dy: tensor<?x?x?x16xf32>, %x: tensor<?x?x?x16xf32>, %m: tensor<?x4xf32>,
             %r: tensor<?x4xf32>, %s: tensor<16xf32>)
    -> (tensor<?x?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %dx, %ds, %db = nf.group_norm_grad %dy, %x, %m, %r scale %s {layout = #nf.layout<nhwc>, num_groups = 4 : i64}
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<16xf32>)
      -> (tensor<?x?x?x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %dx, %ds, %db : tensor<?x?x?x16xf32>, tensor<16xf32>, tensor<16xf32>
})mlir",
                    {{{2, 4, 3, 16}, {2, 4, 3, 16}, {2, 4}, {2, 4}, {16}},
                     {{1, 50, 41, 16}, {1, 50, 41, 16}, {1, 4}, {1, 4}, {16}}}},
        DynamicCase{"instance_norm_grad_nchw_every_size",
                    R"mlir(
func.func @f(%dy: tensor<?x?x?x?xf32>, %x: tensor<?x?x?x?xf32>, %m: tensor<?x?xf32>,
             %r: tensor<?x?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %dx, %ds, %db = nf.instance_norm_grad %dy, %x, %m, %r
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
      -> (tensor<?x?x?x?xf32>, tensor<?xf32>, tensor<?xf32>)
  return %dx, %ds, %db : tensor<?x?x?x?xf32>, tensor<?xf32>, tensor<?xf32>
})mlir",
                    {{{2, 5, 3, 7}, {2, 5, 3, 7}, {2, 5}, {2, 5}},
                     {{1, 3, 1, 1}, {1, 3, 1, 1}, {1, 3}, {1, 3}}}},
        DynamicCase{"group_norm_grad_nhwc_f16_channels",
                    R"mlir(
func.func @f(%dy: tensor<?x?x?x?xf16>, %x: tensor<?x?x?x?xf16>, %m: tensor<?x2xf32>,
             %r: tensor<?x2xf32>)
    -> (tensor<?x?x?x?xf16>, tensor<?xf32>, tensor<?xf32>) {
  %dx, %ds, %db = nf.group_norm_grad %dy, %x, %m, %r {layout = #nf.layout<nhwc>, num_groups = 2 : i64}
      : (tensor<?x?x?x?xf16>, tensor<?x?x?x?xf16>, tensor<?x2xf32>, tensor<?x2xf32>)
      -> (tensor<?x?x?x?xf16>, tensor<?xf32>, tensor<?xf32>)
  return %dx, %ds, %db : tensor<?x?x?x?xf16>, tensor<?xf32>, tensor<?xf32>
})mlir",
                    {{{2, 3, 3, 6}, {2, 3, 3, 6}, {2, 2}, {2, 2}},
                     {{1, 4, 5, 10}, {1, 4, 5, 10}, {1, 2}, {1, 2}}},
                    1e-3},
        DynamicCase{
            "batch_norm_training_nhwc_and_nchw",
            R"mlir(
func.func @f(%x: tensor<?x?x?x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>,
             %rm: tensor<8xf32>, %rv: tensor<8xf32>, %x2: tensor<?x?x?x?xf16>,
             %rm2: tensor<?xf32>, %rv2: tensor<?xf32>)
    -> (tensor<?x?x?x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<?x?x?x?xf16>, tensor<?xf32>, tensor<?xf32>) {
  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x scale %s bias %b running(%rm, %rv) {layout = #nf.layout<nhwc>}
      : (tensor<?x?x?x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
      -> (tensor<?x?x?x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  %y2, %m2, %r2, %nm2, %nv2 = nf.batch_norm_training %x2 running(%rm2, %rv2) {layout = #nf.layout<nchw>}
      : (tensor<?x?x?x?xf16>, tensor<?xf32>, tensor<?xf32>)
      -> (tensor<?x?x?x?xf16>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>)
  return %y, %m, %r, %nm, %nv, %y2, %nm2, %nv2 : tensor<?x?x?x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
      tensor<?x?x?x?xf16>, tensor<?xf32>, tensor<?xf32>
})mlir",
            {{{2, 3, 5, 8}, {8}, {8}, {8}, {8}, {2, 3, 4, 5}, {3}, {3}},
             {{4, 30, 31, 8}, {8}, {8}, {8}, {8}, {3, 5, 70, 9}, {5}, {5}}},
            1e-3},
        DynamicCase{"batch_norm_grad_and_bias_add_grad",
                    R"mlir(
func.func @f(%dy: tensor<?x?x?x?xf32>, %x: tensor<?x?x?x?xf32>, %m: tensor<?xf32>,
             %r: tensor<?xf32>, %s: tensor<?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %dx, %ds, %db = nf.batch_norm_grad %dy, %x, %m, %r scale %s {layout = #nf.layout<nhwc>}
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>)
      -> (tensor<?x?x?x?xf32>, tensor<?xf32>, tensor<?xf32>)
  %g = nf.bias_add_grad %dy {layout = #nf.layout<nchw>} : tensor<?x?x?x?xf32> -> tensor<?xf32>
  return %dx, %ds, %db, %g : tensor<?x?x?x?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
})mlir",
                    {{{2, 3, 5, 6}, {2, 3, 5, 6}, {6}, {6}, {6}},
                     {{3, 9, 11, 5}, {3, 9, 11, 5}, {5}, {5}, {5}}}},
        DynamicCase{"matmul_every_size",
                    R"mlir(
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = nf.matmul %a, %b : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %c : tensor<?x?xf32>
})mlir",
                    {{{5, 7}, {7, 3}}, {{70, 33}, {33, 65}}, {{1, 1}, {1, 1}}}},
        DynamicCase{"batched_matmul_transposed_f16",
                    R"mlir(
func.func @f(%a: tensor<?x?x16xf16>, %b: tensor<24x16xf16>) -> tensor<?x?x24xf16> {
  %c = nf.matmul %a, %b {transpose_rhs} : tensor<?x?x16xf16>, tensor<24x16xf16> -> tensor<?x?x24xf16>
  return %c : tensor<?x?x24xf16>
})mlir",
                    {{{2, 5, 16}, {24, 16}}, {{3, 40, 16}, {24, 16}}},
                    1e-3},
        DynamicCase{"conv2d_nhwc_batch_and_spatial_with_bias_relu",
                    R"mlir(
func.func @f(%x: tensor<?x?x?x5xf32>, %w: tensor<6x3x3x5xf32>, %b: tensor<6xf32>)
    -> tensor<?x?x?x6xf32> {
  %y = nf.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 2>, layout = #nf.layout<nhwc>} : tensor<?x?x?x5xf32>, tensor<6x3x3x5xf32> -> tensor<?x?x?x6xf32>
  %z = nf.bias_add %y, %b {layout = #nf.layout<nhwc>} : tensor<?x?x?x6xf32>, tensor<6xf32>
  %r = nf.relu %z : tensor<?x?x?x6xf32>
  return %r : tensor<?x?x?x6xf32>
})mlir",
                    {{{2, 9, 7, 5}, {6, 3, 3, 5}, {6}},
                     {{1, 4, 11, 5}, {6, 3, 3, 5}, {6}}}},
        // 16 input channels: the input and filter copied channels-last by
        // kernels that take the batch and spatial sizes at run time.
        DynamicCase{"conv2d_nchw_f16_channels_last_copies",
                    R"mlir(
func.func @f(%x: tensor<?x16x?x?xf16>, %w: tensor<24x16x3x3xf16>)
    -> tensor<?x24x?x?xf16> {
  %y = nf.conv2d %x, %w {padding = array<i64: 1, 1, 0, 2>} : tensor<?x16x?x?xf16>, tensor<24x16x3x3xf16> -> tensor<?x24x?x?xf16>
  return %y : tensor<?x24x?x?xf16>
})mlir",
                    {{{2, 16, 9, 7}, {24, 16, 3, 3}},
                     {{1, 16, 33, 40}, {24, 16, 3, 3}}},
                    1e-3,
                    {{{2, 24, 9, 7}}, {{1, 24, 33, 40}}}},
        DynamicCase{
            "conv2d_nchw_grads",
            R"mlir(
func.func @f(%x: tensor<?x3x?x?xf32>, %w: tensor<4x3x3x3xf32>, %dy: tensor<?x4x?x?xf32>)
    -> (tensor<?x3x?x?xf32>, tensor<4x3x3x3xf32>) {
  %dx = nf.conv2d_backprop_input %dy, %w : tensor<?x4x?x?xf32>, tensor<4x3x3x3xf32> -> tensor<?x3x?x?xf32>
  %dw = nf.conv2d_backprop_filter %x, %dy : tensor<?x3x?x?xf32>, tensor<?x4x?x?xf32> -> tensor<4x3x3x3xf32>
  return %dx, %dw : tensor<?x3x?x?xf32>, tensor<4x3x3x3xf32>
})mlir",
            {{{1, 3, 8, 8}, {4, 3, 3, 3}, {1, 4, 6, 6}},
             {{2, 3, 5, 9}, {4, 3, 3, 3}, {2, 4, 3, 7}}},
            1e-5,
            {{{1, 3, 8, 8}, {4, 3, 3, 3}}, {{2, 3, 5, 9}, {4, 3, 3, 3}}}},
        // Ops that are not nf ops, through TOSA's linalg: elementwise
        // kernels over flat tensors of any size (16-byte vectors and a
        // tail), including TOSA's broadcast of a dimension of 1 at run
        // time, which reads its operand through a broadcast map.
        DynamicCase{"tosa_elementwise_rows_and_broadcast",
                    R"mlir(
func.func @f(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = tosa.add %a, %b : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = tosa.exp %0 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
})mlir",
                    {{{3, 8}, {3, 8}},
                     {{1, 8}, {1, 8}},
                     {{1, 8}, {5, 8}},
                     {{1001, 8}, {1001, 8}}},
                    1e-5,
                    {{{3, 8}}, {{1, 8}}, {{5, 8}}, {{1001, 8}}}},
        // Every size unknown: a transpose (one lane a thread, strides from
        // the sizes), a cast to f16 and a per-column scale read across the
        // rows.
        DynamicCase{"tosa_transpose_cast_scale_every_size",
                    R"mlir(
func.func @f(%x: tensor<?x?xf32>, %s: tensor<1x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf16>) {
  %perms = "tosa.const"() {value = dense<[1, 0]> : tensor<2xi32>} : () -> tensor<2xi32>
  %t = tosa.transpose %x, %perms : (tensor<?x?xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  %m = tosa.mul %x, %s {shift = 0 : i8} : (tensor<?x?xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  %h = tosa.cast %m : (tensor<?x?xf32>) -> tensor<?x?xf16>
  return %t, %h : tensor<?x?xf32>, tensor<?x?xf16>
})mlir",
                    {{{3, 5}, {1, 5}}, {{1, 1}, {1, 1}}, {{17, 33}, {1, 33}}},
                    1e-3,
                    {{{5, 3}, {3, 5}}, {{1, 1}, {1, 1}}, {{33, 17}, {17, 33}}}},
        // Reductions of unknown sizes: over the rows' contiguous elements
        // (a warp per result) and over the rows (block columns), and a
        // softmax as exported, op by op (a max, then a sum, each over the
        // row).
        DynamicCase{"tosa_reductions_every_size",
                    R"mlir(
func.func @f(%x: tensor<?x?xf32>) -> (tensor<?x1xf32>, tensor<1x?xf32>, tensor<?x?xf32>) {
  %rows = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<?x?xf32>) -> tensor<?x1xf32>
  %cols = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<?x?xf32>) -> tensor<1x?xf32>
  %m = tosa.reduce_max %x {axis = 1 : i32} : (tensor<?x?xf32>) -> tensor<?x1xf32>
  %d = tosa.sub %x, %m : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %e = tosa.exp %d : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<?x?xf32>) -> tensor<?x1xf32>
  %r = tosa.reciprocal %s : (tensor<?x1xf32>) -> tensor<?x1xf32>
  %p = tosa.mul %e, %r {shift = 0 : i8} : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  return %rows, %cols, %p : tensor<?x1xf32>, tensor<1x?xf32>, tensor<?x?xf32>
})mlir",
                    {{{3, 5}}, {{1, 1}}, {{37, 200}}, {{2, 3000}}},
                    1e-5,
                    {{{3, 1}, {1, 5}, {3, 5}},
                     {{1, 1}, {1, 1}, {1, 1}},
                     {{37, 1}, {1, 200}, {37, 200}},
                     {{2, 1}, {1, 3000}, {2, 3000}}}},
        // One result of unknown length (a whole-tensor sum): a block per
        // result, split into about a wave of parts, each a run-time share
        // of the elements (empty ones where there are few).
        DynamicCase{"tosa_whole_sum_split",
                    R"mlir(
func.func @f(%x: tensor<?xf32>) -> tensor<1xf32> {
  %s = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<?xf32>) -> tensor<1xf32>
  return %s : tensor<1xf32>
})mlir",
                    {{{1}}, {{37}}, {{100003}}}},
        // Tokens and K known at launch: K split then where the tiles are
        // too few (SplitKAtLaunchOnSimTest counts the launches): 2 and 8
        // ranges, and none (K of 2 tiles), the GELU in the finish or in
        // the product's own store.
        DynamicCase{"matmul_f16_gelu_split_k_at_launch",
                    kSplitAtLaunchIR,
                    {{{8, 600}, {600, 64}},
                     {{3, 2100}, {2100, 64}},
                     {{40, 40}, {40, 64}}},
                    2e-3}),
    [](const auto &info) { return std::string(info.param.name); });

/// The launches of `plan` that run (a grid of more than 0 blocks).
size_t launchesRun(const normfuse::runtime::LaunchPlan &plan) {
  return size_t(llvm::count_if(plan.steps, [](const auto &step) {
    return step.kind == normfuse::runtime::Step::Kind::Launch &&
           !step.launch.emptyGrid();
  }));
}

// A product whose sizes come at launch splits K then, into the ranges that
// fill the device (264 blocks on the default H100's 132 SMs, at least 8 K
// tiles of 32 a range, at most 16): its kernel and the finish where there
// are several ranges, the kernel alone (storing the result itself) where
// there is one. One lowering serves every call.
TEST(SplitKAtLaunchOnSimTest, SplitsFewTilesOverALongKAndNothingElse) {
  auto sim = compileWith(shapeGenericJIT(), kSplitAtLaunchIR);
  ASSERT_TRUE(sim);
  struct Call {
    int64_t m, k;
    size_t launches;
  };
  // 19 K tiles: 2 ranges; 66: 8; 2: 1; 400 tokens over K = 2048 (64 K
  // tiles): 7 tiles of 64 x 64 (4 of 128 x 64 are too few), 8 ranges.
  for (Call c : {Call{8, 600, 2}, Call{3, 2100, 2}, Call{40, 40, 1},
                 Call{400, 2048, 2}}) {
    auto call = sim->specialize({{c.m, c.k}, {c.k, 64}}, {});
    ASSERT_TRUE(bool(call)) << llvm::toString(call.takeError());
    auto kernel = std::static_pointer_cast<CudaSimKernel>(*call);
    EXPECT_EQ(launchesRun(kernel->getPlan()), c.launches)
        << c.m << "x" << c.k << "\n"
        << kernel->getPlan().str();
    EXPECT_NE(kernel->getSource().find("split-k-max=16 split-k-blocks=264 "
                                       "split-k-min-tiles=8"),
              std::string::npos);
  }
}

// Which tiles and how many ranges is the device's to say. Sizes known only
// at launch get both tensor-core kernels: 128 x 64 tiles where they are at
// least one a multiprocessor (as many as the device holds of that kernel
// at once, at most the target's 132), else 64 x 64 (what the schedule
// chooses where it knows the sizes); then ranges that make at most as many
// blocks as the device holds of the kernel that runs (split-k-blocks where
// it holds more). 400 tokens over K = 2048 (64 K tiles) are 4 large tiles
// or 7 small ones: small tiles in 8 ranges where the device holds the
// planned blocks (56 blocks run), small tiles in 2 ranges where it holds
// 8, the 4 large tiles in one range where it holds 4 (the kernel stores
// the result and the finish does not run); each the CPU's result.
TEST(SplitKAtLaunchOnSimTest, TilesAndRangesFollowTheBlocksTheDeviceHolds) {
  auto sim = compileWith(shapeGenericJIT(), kSplitAtLaunchIR);
  auto cpu = compileWith(cpuJIT(), kSplitAtLaunchIR);
  ASSERT_TRUE(sim && cpu);
  std::vector<std::vector<int64_t>> shapes{{400, 2048}, {2048, 64}};
  auto call = sim->specialize(shapes, {});
  auto cpuCall = cpu->specialize(shapes, {});
  ASSERT_TRUE(bool(call)) << llvm::toString(call.takeError());
  ASSERT_TRUE(bool(cpuCall)) << llvm::toString(cpuCall.takeError());
  auto kernel = std::static_pointer_cast<CudaSimKernel>(*call);
  EXPECT_NE(kernel->getSource().find(
                "tensor-core-product tile=128x64x32 warps=2x2 stages=3 "
                "split-k-max=16 split-k-blocks=264 split-k-min-tiles=8 "
                "small-tile=64x64x32/3/2x2 small-tile-below=132 "),
            std::string::npos)
      << kernel->getSource();

  std::mt19937 rng(5);
  Buffer a(DType::F16, shapes[0]), b(DType::F16, shapes[1]);
  a.fillNormal(rng, 0.0, 0.05);
  b.fillNormal(rng, 0.0, 0.05);
  Buffer expected(DType::F16, {400, 64});
  ASSERT_EQ(errorText((*cpuCall)->run({a.ref(), b.ref()}, {expected.ref()})),
            "");

  struct Device {
    int64_t resident;
    const char *product;
    unsigned productBlocks;
    size_t launches;
  };
  for (Device d : {Device{INT64_MAX, "f_matmul_epilogue_small_tiles", 56, 2},
                   Device{8, "f_matmul_epilogue_small_tiles", 14, 2},
                   Device{4, "f_matmul_epilogue", 4, 1}}) {
    SCOPED_TRACE("resident blocks " + std::to_string(d.resident));
    auto device = kernel->withResidency(
        [&](const Residency &r) { return std::min(d.resident, r.planned); });
    ASSERT_TRUE(bool(device)) << llvm::toString(device.takeError());
    const normfuse::runtime::LaunchPlan &plan = (*device)->getPlan();
    EXPECT_EQ(launchesRun(plan), d.launches) << plan.str();
    // The first launch that runs is the product's.
    auto product = llvm::find_if(plan.steps, [](const auto &step) {
      return step.kind == normfuse::runtime::Step::Kind::Launch &&
             !step.launch.emptyGrid();
    });
    ASSERT_NE(product, plan.steps.end());
    EXPECT_EQ(product->launch.kernel, d.product) << plan.str();
    EXPECT_EQ(product->launch.grid[0], d.productBlocks) << plan.str();
    Buffer got(DType::F16, {400, 64});
    got.fill(std::nan(""));
    ASSERT_EQ(errorText((*device)->run({a.ref(), b.ref()}, {got.ref()})), "");
    EXPECT_LE(relativeError(got.toDoubles(), expected.toDoubles()), 2e-3);
  }
}

} // namespace
