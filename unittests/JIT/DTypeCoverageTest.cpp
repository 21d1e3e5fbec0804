//===- DTypeCoverageTest.cpp - every op, every dtype, every target -*- C++ -*-//
//
// Part of normfuse. The promise of the verifiers: every element type an nf
// op accepts compiles and runs, op by op and fused, or the verifier refuses
// it. One case per op (some ops have two) is a small function with a
// pointwise neighbour where the op has a fusable result, so that the fused
// compile builds an nf.fused group. For f16, bf16, f32 and f64 each case is
// compiled and run on the CPU and as CUDA kernels in the simulator, op by
// op and fused (its results finite and close to the f64 CPU run on the
// same values); i32, f8E4M3FN and complex<f32> must be refused by the
// verifier. With NF_TEST_GPU set, the same cases also run on the machine's
// GPU (DTypeCoverageOnGPUTest: the cuda target, NVRTC and the driver). Every op
// the nf dialect registers must have a case, so a new op without one fails
// here.
//
//===----------------------------------------------------------------------===//

#include "JITTestUtils.h"
#include "Reference.h"
#include "normfuse/Dialect/NF/IR/NFDialect.h"
#include "normfuse/Dialect/NF/IR/NFTraits.h"

#include "mlir/IR/MLIRContext.h"

#include <cmath>
#include <cstdlib>
#include <set>

using namespace nftest;
using normfuse::jit::Target;

namespace {

/// A function @f of one op; `T` in a type (`xT>`) is the element type under
/// test, `S` the accumulation type (f32, f64 for f64 data).
struct OpCase {
  const char *name; // the test's name
  const char *op;   // the nf op it covers
  const char *ir;
};

const std::vector<OpCase> &opCases() {
  static const std::vector<OpCase> cases = {
      {"layer_norm_silu", "layer_norm", R"(
func.func @f(%x: tensor<3x10xT>, %g: tensor<10xS>, %b: tensor<10xS>) -> (tensor<3x10xT>, tensor<3x1xS>, tensor<3x1xS>) {
  %y, %m, %r = nf.layer_norm %x scale %g bias %b {axis = 1 : i64} : (tensor<3x10xT>, tensor<10xS>, tensor<10xS>) -> (tensor<3x10xT>, tensor<3x1xS>, tensor<3x1xS>)
  %z = nf.silu %y : tensor<3x10xT>
  return %z, %m, %r : tensor<3x10xT>, tensor<3x1xS>, tensor<3x1xS>
})"},
      {"add_layer_norm", "layer_norm", R"(
func.func @f(%x: tensor<3x10xT>, %h: tensor<3x10xT>) -> tensor<3x10xT> {
  %s = nf.add %x, %h : tensor<3x10xT>
  %y, %m, %r = nf.layer_norm %s {axis = 1 : i64} : (tensor<3x10xT>) -> (tensor<3x10xT>, tensor<3x1xS>, tensor<3x1xS>)
  return %y : tensor<3x10xT>
})"},
      {"rms_norm_gelu", "rms_norm", R"(
func.func @f(%x: tensor<3x10xT>, %g: tensor<10xS>) -> (tensor<3x10xT>, tensor<3x1xS>) {
  %y, %r = nf.rms_norm %x scale %g {axis = 1 : i64} : (tensor<3x10xT>, tensor<10xS>) -> (tensor<3x10xT>, tensor<3x1xS>)
  %z = nf.gelu %y : tensor<3x10xT>
  return %z, %r : tensor<3x10xT>, tensor<3x1xS>
})"},
      {"group_norm_silu", "group_norm", R"(
func.func @f(%x: tensor<2x4x3x3xT>, %g: tensor<4xS>, %b: tensor<4xS>) -> (tensor<2x4x3x3xT>, tensor<2x2xS>, tensor<2x2xS>) {
  %y, %m, %r = nf.group_norm %x scale %g bias %b {num_groups = 2 : i64} : (tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>) -> (tensor<2x4x3x3xT>, tensor<2x2xS>, tensor<2x2xS>)
  %z = nf.silu %y : tensor<2x4x3x3xT>
  return %z, %m, %r : tensor<2x4x3x3xT>, tensor<2x2xS>, tensor<2x2xS>
})"},
      {"group_norm_nhwc_silu", "group_norm", R"(
func.func @f(%x: tensor<2x3x3x4xT>) -> tensor<2x3x3x4xT> {
  %y, %m, %r = nf.group_norm %x {layout = #nf.layout<nhwc>, num_groups = 2 : i64} : (tensor<2x3x3x4xT>) -> (tensor<2x3x3x4xT>, tensor<2x2xS>, tensor<2x2xS>)
  %z = nf.silu %y : tensor<2x3x3x4xT>
  return %z : tensor<2x3x3x4xT>
})"},
      {"instance_norm_relu", "instance_norm", R"(
func.func @f(%x: tensor<2x4x3x3xT>) -> (tensor<2x4x3x3xT>, tensor<2x4xS>, tensor<2x4xS>) {
  %y, %m, %r = nf.instance_norm %x : (tensor<2x4x3x3xT>) -> (tensor<2x4x3x3xT>, tensor<2x4xS>, tensor<2x4xS>)
  %z = nf.relu %y : tensor<2x4x3x3xT>
  return %z, %m, %r : tensor<2x4x3x3xT>, tensor<2x4xS>, tensor<2x4xS>
})"},
      {"batch_norm_training_relu", "batch_norm_training", R"(
func.func @f(%x: tensor<2x4x3x3xT>, %rm: tensor<4xS>, %rv: tensor<4xS>) -> (tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>, tensor<4xS>, tensor<4xS>) {
  %y, %bm, %br, %nm, %nv = nf.batch_norm_training %x running(%rm, %rv) : (tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>) -> (tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>, tensor<4xS>, tensor<4xS>)
  %z = nf.relu %y : tensor<2x4x3x3xT>
  return %z, %bm, %br, %nm, %nv : tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>, tensor<4xS>, tensor<4xS>
})"},
      {"batch_norm_inference_gelu", "batch_norm_inference", R"(
func.func @f(%x: tensor<2x4x3x3xT>, %rm: tensor<4xS>, %rv: tensor<4xS>) -> tensor<2x4x3x3xT> {
  %y = nf.batch_norm_inference %x running(%rm, %rv) : (tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>) -> tensor<2x4x3x3xT>
  %z = nf.gelu %y : tensor<2x4x3x3xT>
  return %z : tensor<2x4x3x3xT>
})"},
      {"layer_norm_grad", "layer_norm_grad", R"(
func.func @f(%dy: tensor<3x10xT>, %x: tensor<3x10xT>, %m: tensor<3x1xS>, %r: tensor<3x1xS>, %g: tensor<10xS>) -> (tensor<3x10xT>, tensor<10xS>, tensor<10xS>) {
  %dx, %dg, %db = nf.layer_norm_grad %dy, %x, %m, %r scale %g {axis = 1 : i64} : (tensor<3x10xT>, tensor<3x10xT>, tensor<3x1xS>, tensor<3x1xS>, tensor<10xS>) -> (tensor<3x10xT>, tensor<10xS>, tensor<10xS>)
  return %dx, %dg, %db : tensor<3x10xT>, tensor<10xS>, tensor<10xS>
})"},
      {"rms_norm_grad", "rms_norm_grad", R"(
func.func @f(%dy: tensor<3x10xT>, %x: tensor<3x10xT>, %r: tensor<3x1xS>) -> (tensor<3x10xT>, tensor<10xS>) {
  %dx, %ds = nf.rms_norm_grad %dy, %x, %r {axis = 1 : i64} : (tensor<3x10xT>, tensor<3x10xT>, tensor<3x1xS>) -> (tensor<3x10xT>, tensor<10xS>)
  return %dx, %ds : tensor<3x10xT>, tensor<10xS>
})"},
      {"group_norm_grad", "group_norm_grad", R"(
func.func @f(%dy: tensor<2x4x3x3xT>, %x: tensor<2x4x3x3xT>, %m: tensor<2x2xS>, %r: tensor<2x2xS>) -> (tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>) {
  %dx, %ds, %db = nf.group_norm_grad %dy, %x, %m, %r {num_groups = 2 : i64} : (tensor<2x4x3x3xT>, tensor<2x4x3x3xT>, tensor<2x2xS>, tensor<2x2xS>) -> (tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>)
  return %dx, %ds, %db : tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>
})"},
      {"instance_norm_grad", "instance_norm_grad", R"(
func.func @f(%dy: tensor<2x4x3x3xT>, %x: tensor<2x4x3x3xT>, %m: tensor<2x4xS>, %r: tensor<2x4xS>) -> (tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>) {
  %dx, %ds, %db = nf.instance_norm_grad %dy, %x, %m, %r : (tensor<2x4x3x3xT>, tensor<2x4x3x3xT>, tensor<2x4xS>, tensor<2x4xS>) -> (tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>)
  return %dx, %ds, %db : tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>
})"},
      {"batch_norm_grad", "batch_norm_grad", R"(
func.func @f(%dy: tensor<2x4x3x3xT>, %x: tensor<2x4x3x3xT>, %m: tensor<4xS>, %r: tensor<4xS>, %g: tensor<4xS>) -> (tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>) {
  %dx, %ds, %db = nf.batch_norm_grad %dy, %x, %m, %r scale %g : (tensor<2x4x3x3xT>, tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>, tensor<4xS>) -> (tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>)
  return %dx, %ds, %db : tensor<2x4x3x3xT>, tensor<4xS>, tensor<4xS>
})"},
      {"relu_add", "relu", R"(
func.func @f(%x: tensor<3x10xT>) -> tensor<3x10xT> {
  %y = nf.relu %x : tensor<3x10xT>
  %z = nf.add %y, %x : tensor<3x10xT>
  return %z : tensor<3x10xT>
})"},
      {"gelu_mul", "gelu", R"(
func.func @f(%x: tensor<3x10xT>) -> tensor<3x10xT> {
  %y = nf.gelu %x : tensor<3x10xT>
  %z = nf.mul %y, %x : tensor<3x10xT>
  return %z : tensor<3x10xT>
})"},
      {"gelu_tanh", "gelu", R"(
func.func @f(%x: tensor<3x10xT>) -> tensor<3x10xT> {
  %y = nf.gelu %x {approximate = #nf.approximation<tanh>} : tensor<3x10xT>
  return %y : tensor<3x10xT>
})"},
      {"silu", "silu", R"(
func.func @f(%x: tensor<3x10xT>) -> tensor<3x10xT> {
  %y = nf.silu %x : tensor<3x10xT>
  return %y : tensor<3x10xT>
})"},
      {"add_mul", "add", R"(
func.func @f(%a: tensor<3x10xT>, %b: tensor<3x10xT>) -> tensor<3x10xT> {
  %s = nf.add %a, %b : tensor<3x10xT>
  %p = nf.mul %s, %b : tensor<3x10xT>
  return %p : tensor<3x10xT>
})"},
      {"mul", "mul", R"(
func.func @f(%a: tensor<3x10xT>, %b: tensor<3x10xT>) -> tensor<3x10xT> {
  %p = nf.mul %a, %b : tensor<3x10xT>
  return %p : tensor<3x10xT>
})"},
      {"bias_add_relu", "bias_add", R"(
func.func @f(%x: tensor<2x4x3x3xT>, %b: tensor<4xT>) -> tensor<2x4x3x3xT> {
  %y = nf.bias_add %x, %b {layout = #nf.layout<nchw>} : tensor<2x4x3x3xT>, tensor<4xT>
  %z = nf.relu %y : tensor<2x4x3x3xT>
  return %z : tensor<2x4x3x3xT>
})"},
      {"bias_add_nhwc", "bias_add", R"(
func.func @f(%x: tensor<2x3x3x4xT>, %b: tensor<4xT>) -> tensor<2x3x3x4xT> {
  %y = nf.bias_add %x, %b {layout = #nf.layout<nhwc>} : tensor<2x3x3x4xT>, tensor<4xT>
  return %y : tensor<2x3x3x4xT>
})"},
      {"relu_grad", "relu_grad", R"(
func.func @f(%dy: tensor<3x10xT>, %y: tensor<3x10xT>) -> tensor<3x10xT> {
  %dx = nf.relu_grad %dy, %y : tensor<3x10xT>
  return %dx : tensor<3x10xT>
})"},
      {"gelu_grad", "gelu_grad", R"(
func.func @f(%dy: tensor<3x10xT>, %x: tensor<3x10xT>) -> tensor<3x10xT> {
  %dx = nf.gelu_grad %dy, %x : tensor<3x10xT>
  return %dx : tensor<3x10xT>
})"},
      {"gelu_tanh_grad", "gelu_grad", R"(
func.func @f(%dy: tensor<3x10xT>, %x: tensor<3x10xT>) -> tensor<3x10xT> {
  %dx = nf.gelu_grad %dy, %x {approximate = #nf.approximation<tanh>} : tensor<3x10xT>
  return %dx : tensor<3x10xT>
})"},
      {"silu_grad", "silu_grad", R"(
func.func @f(%dy: tensor<3x10xT>, %x: tensor<3x10xT>) -> tensor<3x10xT> {
  %dx = nf.silu_grad %dy, %x : tensor<3x10xT>
  return %dx : tensor<3x10xT>
})"},
      {"gelu_grad_bias_add_grad", "bias_add_grad", R"(
func.func @f(%dy: tensor<6x8xT>, %x: tensor<6x8xT>) -> (tensor<6x8xT>, tensor<8xT>) {
  %dg = nf.gelu_grad %dy, %x : tensor<6x8xT>
  %db = nf.bias_add_grad %dg {layout = #nf.layout<nhwc>} : tensor<6x8xT> -> tensor<8xT>
  return %dg, %db : tensor<6x8xT>, tensor<8xT>
})"},
      {"matmul_bias_gelu", "matmul", R"(
func.func @f(%a: tensor<3x10xT>, %b: tensor<10x5xT>, %c: tensor<5xT>) -> tensor<3x5xT> {
  %p = nf.matmul %a, %b : tensor<3x10xT>, tensor<10x5xT> -> tensor<3x5xT>
  %q = nf.bias_add %p, %c {layout = #nf.layout<nhwc>} : tensor<3x5xT>, tensor<5xT>
  %z = nf.gelu %q : tensor<3x5xT>
  return %z : tensor<3x5xT>
})"},
      {"conv2d_relu", "conv2d", R"(
func.func @f(%x: tensor<1x3x5x5xT>, %w: tensor<4x3x3x3xT>) -> tensor<1x4x5x5xT> {
  %y = nf.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x3x5x5xT>, tensor<4x3x3x3xT> -> tensor<1x4x5x5xT>
  %z = nf.relu %y : tensor<1x4x5x5xT>
  return %z : tensor<1x4x5x5xT>
})"},
      {"conv2d_backprop_input", "conv2d_backprop_input", R"(
func.func @f(%dy: tensor<1x4x6x6xT>, %w: tensor<4x3x3x3xT>) -> tensor<1x3x8x8xT> {
  %dx = nf.conv2d_backprop_input %dy, %w : tensor<1x4x6x6xT>, tensor<4x3x3x3xT> -> tensor<1x3x8x8xT>
  return %dx : tensor<1x3x8x8xT>
})"},
      {"conv2d_backprop_filter", "conv2d_backprop_filter", R"(
func.func @f(%x: tensor<1x3x8x8xT>, %dy: tensor<1x4x6x6xT>) -> tensor<4x3x3x3xT> {
  %dw = nf.conv2d_backprop_filter %x, %dy : tensor<1x3x8x8xT>, tensor<1x4x6x6xT> -> tensor<4x3x3x3xT>
  return %dw : tensor<4x3x3x3xT>
})"},
  };
  return cases;
}

/// `c`'s IR for element type `t` (the MLIR spelling).
std::string instantiate(const OpCase &c, const std::string &t) {
  std::string s = t == "f64" ? "f64" : "f32";
  std::string ir = c.ir;
  for (auto [from, to] :
       {std::pair<std::string, std::string>{"xT>", "x" + t + ">"},
        {"xS>", "x" + s + ">"}}) {
    for (size_t at = ir.find(from); at != std::string::npos;
         at = ir.find(from, at + to.size()))
      ir.replace(at, from.size(), to);
  }
  return ir;
}

/// The MLIR spelling of `dtype`'s element type.
const char *mlirName(DType dtype) { return normfuse::getDTypeName(dtype); }

/// A JIT for the CPU, op by op or fused.
normfuse::jit::JIT &cpuJIT(bool fuse) {
  if (!fuse)
    return sharedJIT();
  static normfuse::jit::JIT fused;
  return fused;
}

/// Options of a JIT for `target`, op by op or fused.
normfuse::jit::Options jitOptions(normfuse::jit::Target target, bool fuse) {
  normfuse::jit::Options options;
  options.target = target;
  options.fuse = fuse;
  return options;
}

/// A JIT for the CUDA kernels in the simulator, op by op or fused.
normfuse::jit::JIT &simJIT(bool fuse) {
  static normfuse::jit::JIT opByOp(jitOptions(Target::CUDASim, false)),
      fused(jitOptions(Target::CUDASim, true));
  return fuse ? fused : opByOp;
}

/// A JIT for the machine's GPU (the cuda target), op by op or fused.
normfuse::jit::JIT &gpuJIT(bool fuse) {
  static normfuse::jit::JIT opByOp(jitOptions(Target::CUDA, false)),
      fused(jitOptions(Target::CUDA, true));
  return fuse ? fused : opByOp;
}

/// Relative L2 error allowed against the f64 run of the same values.
double tolerance(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return 2e-2;
  case DType::BF16:
    return 1e-1;
  case DType::F32:
    return 1e-4;
  case DType::F64:
    return 1e-12;
  }
  return 0;
}

using CoverageParam = std::tuple<int, DType, bool, Backend>;

/// Compiles case `index` for `dtype` with `jit`, runs it on positive
/// values and compares every result with the f64 CPU run of the same values.
void checkCloseToFloat64(int index, DType dtype, normfuse::jit::JIT &jit) {
  const OpCase &c = opCases()[index];
  std::string ir = instantiate(c, mlirName(dtype));
  auto compiled = jit.compile(ir, "f");
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError()) << ir;
  auto kernel = *compiled;
  auto reference = compileOrFail(instantiate(c, "f64"), "f");
  ASSERT_TRUE(reference);

  // Positive values: variances, rstd and running variances must be.
  std::mt19937 rng(7);
  const auto &sig = kernel->getSignature();
  std::vector<Buffer> in, in64, out, out64;
  for (const auto &t : sig.inputs) {
    in.emplace_back(t.dtype, t.shape);
    in64.emplace_back(DType::F64, t.shape);
    in.back().fillNormal(rng);
    for (int64_t i = 0; i < in.back().size(); ++i) {
      in.back().set(i, std::fabs(in.back().get(i)) + 0.25);
      in64.back().set(i, in.back().get(i));
    }
  }
  for (const auto &t : sig.outputs) {
    out.emplace_back(t.dtype, t.shape);
    out.back().fill(std::nan(""));
    out64.emplace_back(DType::F64, t.shape);
  }
  auto refs = [](std::vector<Buffer> &buffers) {
    std::vector<normfuse::TensorRef> r;
    for (Buffer &b : buffers)
      r.push_back(b.ref());
    return r;
  };
  ASSERT_EQ(errorText(kernel->run(refs(in), refs(out))), "");
  ASSERT_EQ(errorText(reference->run(refs(in64), refs(out64))), "");
  for (size_t i = 0; i < out.size(); ++i) {
    double error = relativeError(out[i].toDoubles(), out64[i].toDoubles());
    EXPECT_LE(error, tolerance(dtype)) << "result " << i << " of\n" << ir;
  }
}

class DTypeCoverageTest : public testing::TestWithParam<CoverageParam> {};

TEST_P(DTypeCoverageTest, CompilesAndRunsCloseToFloat64) {
  auto [index, dtype, fuse, backend] = GetParam();
  checkCloseToFloat64(index, dtype,
                      backend == Backend::CPU ? cpuJIT(fuse) : simJIT(fuse));
}

std::string coverageName(const testing::TestParamInfo<CoverageParam> &info) {
  auto [index, dtype, fuse, backend] = info.param;
  return std::string(opCases()[index].name) + "_" + mlirName(dtype) +
         (fuse ? "_fused" : "_op_by_op") + backendSuffix(backend);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, DTypeCoverageTest,
    testing::Combine(testing::Range(0, int(opCases().size())),
                     testing::Values(DType::F16, DType::BF16, DType::F32,
                                     DType::F64),
                     testing::Bool(),
                     testing::Values(Backend::CPU, Backend::CUDASim)),
    coverageName);

/// The same cases on the machine's GPU: instantiated only where
/// NF_TEST_GPU is set (bench/gpu/run.sh sets it on the GPU machine), so
/// that machines without one list none of them.
using GPUCoverageParam = std::tuple<int, DType, bool>;
class DTypeCoverageOnGPUTest : public testing::TestWithParam<GPUCoverageParam> {
};

TEST_P(DTypeCoverageOnGPUTest, CompilesAndRunsCloseToFloat64) {
  auto [index, dtype, fuse] = GetParam();
  checkCloseToFloat64(index, dtype, gpuJIT(fuse));
}

std::vector<GPUCoverageParam> gpuCoverageParams() {
  std::vector<GPUCoverageParam> params;
  const char *enabled = std::getenv("NF_TEST_GPU");
  if (!enabled || !*enabled)
    return params;
  for (int index = 0; index < int(opCases().size()); ++index)
    for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::F64})
      for (bool fuse : {false, true})
        params.emplace_back(index, dtype, fuse);
  return params;
}

std::string
gpuCoverageName(const testing::TestParamInfo<GPUCoverageParam> &info) {
  auto [index, dtype, fuse] = info.param;
  return std::string(opCases()[index].name) + "_" + mlirName(dtype) +
         (fuse ? "_fused" : "_op_by_op") + "_cuda";
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DTypeCoverageOnGPUTest);
INSTANTIATE_TEST_SUITE_P(Ops, DTypeCoverageOnGPUTest,
                         testing::ValuesIn(gpuCoverageParams()),
                         gpuCoverageName);

TEST(DTypeCoverageTest,
     ElementTypesOutsideF16BF16F32F64AreRefusedByTheVerifier) {
  for (const OpCase &c : opCases())
    for (const char *t : {"i32", "f8E4M3FN", "complex<f32>"}) {
      auto kernel = sharedJIT().compile(instantiate(c, t), "f");
      ASSERT_FALSE(bool(kernel)) << c.name << " " << t;
      std::string message = llvm::toString(kernel.takeError());
      EXPECT_EQ(message.rfind("the IR does not parse or verify", 0), 0u)
          << c.name << " " << t << ": " << message;
    }
}

TEST(DTypeCoverageTest, EveryOpOfTheDialectHasACase) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::nf::NFDialect>();
  std::set<std::string> covered;
  for (const OpCase &c : opCases())
    covered.insert(std::string("nf.") + c.op);
  // nf.fused and nf.yield are what the fused compiles build; the CUDA
  // lowering's own ops (inside its kernels, or nf.resident_blocks on its
  // host side) are on no tensor.
  covered.insert("nf.fused");
  covered.insert("nf.yield");
  for (mlir::RegisteredOperationName name : context.getRegisteredOperations())
    if (name.getDialectNamespace() == "nf" &&
        !name.hasTrait<mlir::nf::OpTrait::GpuLowering>())
      EXPECT_TRUE(covered.count(name.getStringRef().str()))
          << name.getStringRef().str() << " has no case in DTypeCoverageTest";
}

} // namespace
