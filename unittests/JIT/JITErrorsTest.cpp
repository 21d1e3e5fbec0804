//===- JITErrorsTest.cpp - wrong requests and calls are errors --*- C++ -*-===//
//
// Part of normfuse. Every way to misuse the JIT returns an error naming the
// problem; nothing crashes and a rejected call writes nothing.
//
//===----------------------------------------------------------------------===//

#include "HostKernel.h"
#include "JITTestUtils.h"
#include "Reference.h"
#include "normfuse/Codegen/Passes.h"
#include "normfuse/Dialect/NF/IR/NFDialect.h"
#include "normfuse/Dialect/NF/IR/NFTraits.h"
#include "normfuse/Runtime/CudaSim.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/FormatVariadic.h"

#include <set>

#include <thread>

using namespace nftest;
using normfuse::DType;

namespace {

const char *kRelu = R"mlir(
func.func @relu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nf.relu %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
)mlir";

std::string compileError(const std::string &ir, const std::string &fn) {
  auto kernel = sharedJIT().compile(ir, fn);
  if (kernel)
    return "(compiled)";
  return llvm::toString(kernel.takeError());
}

TEST(JITErrorsTest, UnknownFunctionListsTheFunctionsThere) {
  EXPECT_EQ(compileError(kRelu, "gelu"),
            "no function @gelu in the module (it has @relu)");
}

TEST(JITErrorsTest, IRThatDoesNotVerifyQuotesTheDiagnostic) {
  std::string bad = R"mlir(
func.func @bad(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y, %m, %r = nf.layer_norm %x {axis = 2 : i64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %y : tensor<2x3xf32>
}
)mlir";
  EXPECT_EQ(compileError(bad, "bad"),
            "the IR does not parse or verify:\n<ir>:3:16: 'nf.layer_norm' op "
            "axis 2 is out of range for an input of rank 2 (expected 0 <= axis "
            "< 2)");
}

TEST(JITErrorsTest, TextThatDoesNotParseQuotesTheDiagnostic) {
  EXPECT_EQ(compileError("func.func @f(", "f"),
            "the IR does not parse or verify:\n<ir>:1:13: expected "
            "non-function type");
}

TEST(JITErrorsTest, UnrankedTensorsAreRejected) {
  // Dynamic dimensions compile on call (DynamicShapesTest.cpp); a tensor
  // without a rank is still refused.
  std::string ir = R"mlir(
func.func @unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  return %x : tensor<*xf32>
}
)mlir";
  EXPECT_EQ(compileError(ir, "unranked"),
            "@unranked argument #0 has type tensor<*xf32>; the JIT takes "
            "ranked tensors");
}

TEST(JITErrorsTest, ElementTypesWithoutAHostTypeAreRejected) {
  // Floats, bool and 8- to 64-bit integers are arrays callers hold; a
  // 4-bit integer or a complex number is not.
  std::string ir = R"mlir(
func.func @nibbles(%x: tensor<4xi4>) -> tensor<4xi4> {
  return %x : tensor<4xi4>
}
)mlir";
  EXPECT_EQ(compileError(ir, "nibbles"),
            "@nibbles argument #0 has type tensor<4xi4>; the JIT takes f16, "
            "bf16, f32, f64, i1 (bool) and 8- to 64-bit integer elements");
}

/// nf-lower-to-loops names an nf op no pattern lowers ("has no CPU lowering
/// yet"); today every op but nf.fused (inlined) and nf.yield has one.
TEST(CPULoweringTest, EveryNFOpHasALoweringPattern) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<mlir::nf::NFDialect>();
  mlir::RewritePatternSet patterns(&ctx);
  mlir::nf::LoopLoweringOptions options;
  mlir::nf::populateLowerPointwiseToLoopsPatterns(patterns, options);
  mlir::nf::populateLowerNormsToLoopsPatterns(patterns, options);
  mlir::nf::populateLowerChannelNormsToLoopsPatterns(patterns, options);
  mlir::nf::populateLowerNormGradsToLoopsPatterns(patterns, options);
  mlir::nf::populateLowerProducersToLoopsPatterns(patterns, options);
  std::set<std::string> lowered;
  for (const auto &pattern : patterns.getNativePatterns())
    if (auto root = pattern->getRootKind())
      lowered.insert(root->getStringRef().str());
  std::vector<std::string> missing;
  int ops = 0;
  for (mlir::RegisteredOperationName name : ctx.getRegisteredOperations()) {
    // The CUDA lowering's own ops (inside its kernels, or
    // nf.resident_blocks on its host side) are on no tensor.
    if (name.getDialectNamespace() != "nf" ||
        name.hasTrait<mlir::nf::OpTrait::GpuLowering>())
      continue;
    ++ops;
    std::string op = name.getStringRef().str();
    if (op != "nf.fused" && op != "nf.yield" && !lowered.count(op))
      missing.push_back(op);
  }
  EXPECT_EQ(ops, 27);
  EXPECT_EQ(missing, std::vector<std::string>{});
}

// A private declaration was once listed among the functions and then said
// not to exist (issue 17).
TEST(JITErrorsTest, ADeclarationIsNotListedAndSaysItHasNoBody) {
  const char *ir = R"mlir(
func.func private @declared(tensor<2xf32>) -> tensor<2xf32>
func.func @defined(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = nf.relu %x : tensor<2xf32>
  return %y : tensor<2xf32>
}
)mlir";
  EXPECT_EQ(compileError(ir, "declared"),
            "@declared is a declaration without a body: there is nothing to "
            "run");
  EXPECT_EQ(compileError(ir, "missing"),
            "no function @missing in the module (it has @defined)");
}

TEST(JITErrorsTest, MissingFileIsAnError) {
  auto kernel = sharedJIT().compileFile("/nonexistent/x.mlir", "f");
  ASSERT_FALSE(kernel);
  EXPECT_EQ(llvm::toString(kernel.takeError()),
            "cannot read /nonexistent/x.mlir: No such file or directory");
}

TEST(JITErrorsTest, TheCudaTargetWithoutADriverSaysWhyAndOnlyOnce) {
  ::setenv("NF_CUDA_DRIVER", "/nonexistent/normfuse/libcuda.so.1", 1);
  normfuse::jit::Options options;
  options.target = normfuse::jit::Target::CUDA;
  normfuse::jit::JIT jit(options);
  auto kernel = jit.compile(kRelu, "relu");
  ::unsetenv("NF_CUDA_DRIVER");
  ASSERT_FALSE(kernel);
  std::string error = llvm::toString(kernel.takeError());
  EXPECT_EQ(error.rfind("the cuda target cannot run here: no NVIDIA driver: "
                        "/nonexistent/normfuse/libcuda.so.1 could not be "
                        "loaded (",
                        0),
            0u)
      << error;
  // The cause is kept: a second compile says the same without retrying.
  auto again = jit.compile(kRelu, "relu");
  ASSERT_FALSE(again);
  EXPECT_EQ(llvm::toString(again.takeError()), error);
  EXPECT_EQ(jit.getTargetDescription().rfind(
                "CUDA GPU (unavailable: no NVIDIA driver: ", 0),
            0u);
}

/// The error a JIT with `options` gives for compiling kRelu.
std::string optionsError(const normfuse::jit::Options &options) {
  normfuse::jit::JIT jit(options);
  auto kernel = jit.compile(kRelu, "relu");
  if (kernel)
    return "";
  return llvm::toString(kernel.takeError());
}

TEST(JITOptionsTest, AnOptionOfAnotherTargetIsRefused) {
  normfuse::jit::Options sim;
  sim.target = normfuse::jit::Target::CUDASim;
  sim.cpu.vectorWidth = 8;
  EXPECT_EQ(optionsError(sim), "the cpu options (vector width, parallel "
                               "rows, buffer cache) do not apply to the "
                               "cuda-sim target");
  sim.cpu = {};
  sim.cpu.parallel = false;
  EXPECT_NE(optionsError(sim), "");
  normfuse::jit::Options cpu;
  cpu.cuda.arch = "sm_80";
  EXPECT_EQ(optionsError(cpu),
            "the CUDA options (architecture, row-norm schedule, shape-generic "
            "kernels, tf32) do not apply to the cpu target");
  cpu.cuda = {};
  cpu.cuda.rowNormSchedule = "split-row";
  EXPECT_NE(optionsError(cpu), "");
  cpu.cuda = {};
  cpu.cuda.shapeGenericKernels = true;
  EXPECT_NE(optionsError(cpu), "");
  cpu.cuda = {};
  cpu.cuda.allowTf32 = true;
  EXPECT_NE(optionsError(cpu), "");
}

TEST(JITOptionsTest, ValuesOutOfRangeAreRefused) {
  normfuse::jit::Options cpu;
  cpu.cpu.vectorWidth = 12;
  EXPECT_EQ(optionsError(cpu), "the vector width must be 0 (the host's) or "
                               "a power of two up to 64, got 12");
  cpu.cpu.vectorWidth = 128;
  EXPECT_NE(optionsError(cpu), "");
  normfuse::jit::Options sim;
  sim.target = normfuse::jit::Target::CUDASim;
  sim.cuda.arch = "sm_70";
  EXPECT_EQ(optionsError(sim), "GPU target 'sm_70': architectures before "
                               "sm_75 are not supported");
  sim.cuda.arch = "h100-pcie:sms=0";
  EXPECT_EQ(optionsError(sim),
            "GPU target 'h100-pcie:sms=0': sms=0 is not in [1, 4096]");
  sim.cuda.arch = "h100-pcie:sms=114";
  EXPECT_EQ(optionsError(sim), "");
  sim.cuda.arch = "sm_90";
  sim.cuda.rowNormSchedule = "fastest";
  EXPECT_EQ(optionsError(sim),
            "unknown row-norm schedule 'fastest' (auto, warp-rows, "
            "block-row-registers, block-row-streaming, split-row, "
            "channels-last-groups, channels-last-one-kernel, cluster-row, "
            "each optionally with ':full')");
}

TEST(JITOptionsTest, EachTargetTakesItsOwnOptions) {
  normfuse::jit::Options cpu;
  cpu.cpu.vectorWidth = 4;
  cpu.cpu.parallel = false;
  cpu.cpu.cacheBuffers = false;
  EXPECT_EQ(optionsError(cpu), "");
  normfuse::jit::Options sim;
  sim.target = normfuse::jit::Target::CUDASim;
  sim.cuda.arch = "sm_80";
  sim.cuda.rowNormSchedule = "warp-rows";
  EXPECT_EQ(optionsError(sim), "");
}

// The warm-up that builds ORC's statics (JIT.cpp) is the CPU's: a cuda-sim
// JIT compiles a simulated module for each function and none for itself
// (it compiled one, a third of a small program's time in the simulator).
TEST(JITConstructionTest,
     ACudaSimJITCompilesOneModuleAFunctionAndNoneForItself) {
  using normfuse::runtime::SimModule;
  normfuse::jit::Options sim;
  sim.target = normfuse::jit::Target::CUDASim;
  uint64_t before = SimModule::compileStats().modules;
  normfuse::jit::JIT jit(sim);
  EXPECT_EQ(SimModule::compileStats().modules, before);
  auto kernel = jit.compile(kRelu, "relu");
  ASSERT_TRUE(bool(kernel)) << llvm::toString(kernel.takeError());
  EXPECT_EQ(SimModule::compileStats().modules, before + 1);
}

class RunErrorsTest : public testing::Test {
protected:
  void SetUp() override {
    kernel = compileOrFail(kRelu, "relu");
    ASSERT_TRUE(kernel);
    out.fill(-7.0);
  }
  /// The output must still hold its poison after a rejected call.
  void expectOutputUntouched() {
    for (int64_t i = 0; i < out.size(); ++i)
      EXPECT_EQ(out.get(i), -7.0);
  }
  std::shared_ptr<normfuse::jit::Kernel> kernel;
  Buffer in{DType::F32, {2, 3}}, out{DType::F32, {2, 3}};
};

TEST_F(RunErrorsTest, WrongNumberOfInputs) {
  EXPECT_EQ(errorText(kernel->run({in.ref(), in.ref()}, {out.ref()})),
            "@relu takes 1 input, got 2");
  expectOutputUntouched();
}

TEST_F(RunErrorsTest, WrongNumberOfOutputs) {
  EXPECT_EQ(errorText(kernel->run({in.ref()}, {})),
            "@relu takes 1 output, got 0");
}

TEST_F(RunErrorsTest, WrongDType) {
  Buffer half(DType::F16, {2, 3});
  EXPECT_EQ(errorText(kernel->run({half.ref()}, {out.ref()})),
            "input #0 of @relu has dtype f16; expected f32 (tensor<2x3xf32>)");
  expectOutputUntouched();
}

TEST_F(RunErrorsTest, WrongShape) {
  Buffer wide(DType::F32, {2, 4});
  EXPECT_EQ(errorText(kernel->run({in.ref()}, {wide.ref()})),
            "output #0 of @relu has shape [2, 4]; expected [2, 3] "
            "(tensor<2x3xf32>)");
}

TEST_F(RunErrorsTest, NonContiguousBuffer) {
  normfuse::TensorRef transposed = in.ref();
  transposed.strides = {1, 2};
  EXPECT_EQ(errorText(kernel->run({transposed}, {out.ref()})),
            "input #0 of @relu is not contiguous (strides [1, 2] for shape "
            "[2, 3]); the CPU kernels need row-major buffers");
  expectOutputUntouched();
}

TEST_F(RunErrorsTest, ExplicitRowMajorStridesAreContiguous) {
  normfuse::TensorRef strided = in.ref();
  strided.strides = {3, 1};
  EXPECT_EQ(errorText(kernel->run({strided}, {out.ref()})), "");
}

TEST(TensorRefTest, AnEmptyTensorIsContiguousWhateverItsStrides) {
  normfuse::TensorRef empty;
  empty.shape = {2, 0, 4};
  empty.strides = {4, 4, 1}; // NumPy's strides for np.empty((2, 0, 4))
  EXPECT_TRUE(empty.isContiguous());
  empty.shape = {2, 3, 4}; // the same strides with elements: a gap
  EXPECT_FALSE(empty.isContiguous());
}

TEST_F(RunErrorsTest, NullData) {
  normfuse::TensorRef null = out.ref();
  null.data = nullptr;
  EXPECT_EQ(errorText(kernel->run({in.ref()}, {null})),
            "output #0 of @relu has no data (a null pointer)");
}

TEST_F(RunErrorsTest, NegativeThreadCount) {
  EXPECT_EQ(errorText(kernel->run({in.ref()}, {out.ref()}, -1)),
            "threads must be 0 (the default) or positive, got -1");
  expectOutputUntouched();
}

TEST_F(RunErrorsTest, DeviceMemoryIsRefusedOffTheCudaTarget) {
  normfuse::TensorRef device = in.ref();
  device.space = normfuse::MemorySpace::CUDADevice;
  EXPECT_EQ(errorText(kernel->run({device}, {out.ref()})),
            "input #0 of @relu is CUDA device memory; only the cuda target "
            "takes device buffers");
  expectOutputUntouched();
}

TEST_F(RunErrorsTest, ACudaStreamIsRefusedOffTheCudaTarget) {
  normfuse::jit::RunOptions options;
  int stream = 0;
  options.cudaStream = &stream;
  EXPECT_EQ(errorText(kernel->run({in.ref()}, {out.ref()}, options)),
            "@relu: the cpu target takes no CUDA stream");
  expectOutputUntouched();
}

TEST_F(RunErrorsTest, ASimulatorThreadOrderIsRefusedOffTheCudaSimTarget) {
  normfuse::jit::RunOptions options;
  options.simOrder = normfuse::jit::SimThreadOrder::Reverse;
  EXPECT_EQ(errorText(kernel->run({in.ref()}, {out.ref()}, options)),
            "@relu: the cpu target runs no simulator, so no thread order "
            "(that is the cuda-sim target's)");
  expectOutputUntouched();
}

// The orders nf-run's --sim-order and Python's sim_order take, and what
// each sets; anything else is refused, saying what is accepted.
TEST(JITErrorsTest, SimThreadOrdersParseToTheOrderAndSeed) {
  using normfuse::jit::SimThreadOrder;
  struct Case {
    const char *text;
    SimThreadOrder order;
    unsigned seed;
  };
  for (const Case &c : {Case{"forward", SimThreadOrder::Forward, 1},
                        Case{"reverse", SimThreadOrder::Reverse, 1},
                        Case{"shuffle", SimThreadOrder::Shuffle, 1},
                        Case{"shuffle:9", SimThreadOrder::Shuffle, 9},
                        Case{"stagger", SimThreadOrder::Stagger, 1}}) {
    normfuse::jit::RunOptions options;
    options.simSeed = 77;
    std::string error;
    ASSERT_TRUE(normfuse::jit::parseSimThreadOrder(c.text, options, error))
        << c.text << ": " << error;
    EXPECT_EQ(options.simOrder, c.order) << c.text;
    EXPECT_EQ(options.simSeed, c.seed) << c.text;
  }
  for (const char *bad :
       {"", "sideways", "Forward", "reverse:3", "shuffle:", "shuffle:-1"}) {
    normfuse::jit::RunOptions options;
    std::string error;
    EXPECT_FALSE(normfuse::jit::parseSimThreadOrder(bad, options, error))
        << bad;
    EXPECT_EQ(error, "unknown thread order '" + std::string(bad) +
                         "' (forward, reverse, shuffle, shuffle:SEED with "
                         "SEED an unsigned integer, or stagger)");
    EXPECT_EQ(options.simOrder, normfuse::jit::SimThreadOrder::Forward);
  }
}

// The simulator, and a function with dynamic dimensions (checked before it
// compiles), refuse them too.
TEST(JITErrorsTest, TheSimulatorAndDynamicShapesRefuseStreamsAndDeviceMemory) {
  const char *dynamic = R"mlir(
func.func @relu(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = nf.relu %x : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
)mlir";
  normfuse::jit::Options simOptions;
  simOptions.target = normfuse::jit::Target::CUDASim;
  normfuse::jit::JIT sim(simOptions);
  Buffer in{DType::F32, {2, 3}}, out{DType::F32, {2, 3}};
  normfuse::TensorRef device = in.ref();
  device.space = normfuse::MemorySpace::CUDADevice;
  normfuse::jit::RunOptions withStream;
  int stream = 0;
  withStream.cudaStream = &stream;
  for (const char *ir : {kRelu, dynamic}) {
    auto kernel = sim.compile(ir, "relu");
    ASSERT_TRUE(bool(kernel)) << llvm::toString(kernel.takeError());
    EXPECT_EQ(errorText((*kernel)->run({in.ref()}, {out.ref()}, withStream)),
              "@relu: the cuda-sim target takes no CUDA stream");
    EXPECT_EQ(errorText((*kernel)->run({device}, {out.ref()})),
              "input #0 of @relu is CUDA device memory; only the cuda target "
              "takes device buffers");
  }
  auto cpu = compileOrFail(dynamic, "relu");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(errorText(cpu->run({device}, {out.ref()})),
            "input #0 of @relu is CUDA device memory; only the cuda target "
            "takes device buffers");
}

// The cuda target takes device buffers in place; its kernels load and
// store 16 bytes at a time, so a buffer that does not start on a 16-byte
// boundary (a view at an offset into another allocation) is refused before
// any launch (a misaligned access would poison the CUDA context).
TEST(JITErrorsTest, DeviceBuffersMustBe16ByteAlignedOnTheCudaTarget) {
  alignas(64) static float storage[16];
  std::vector<normfuse::jit::TensorType> types{{DType::F32, {2}}};
  normfuse::TensorRef device{
      storage, DType::F32, {2}, {}, normfuse::MemorySpace::CUDADevice};
  EXPECT_EQ(errorText(normfuse::jit::checkBuffers("f", {device}, types, "input",
                                                  true)),
            "");
  for (int offset : {1, 2, 3}) {
    device.data = storage + offset;
    std::string address =
        llvm::formatv("{0:x}", reinterpret_cast<uintptr_t>(storage + offset));
    EXPECT_EQ(errorText(normfuse::jit::checkBuffers("f", {device}, types,
                                                    "input", true)),
              "input #0 of @f is device memory at " + address +
                  ", not 16-byte aligned; the CUDA kernels access it 16 "
                  "bytes at a time (copy it into a fresh allocation, such as "
                  "PyTorch's .clone())");
  }
  // Host buffers are copied into aligned device memory: any address does.
  normfuse::TensorRef host{
      storage + 1, DType::F32, {2}, {}, normfuse::MemorySpace::Host};
  EXPECT_EQ(
      errorText(normfuse::jit::checkBuffers("f", {host}, types, "input", true)),
      "");
}

// Dynamic dimensions come from the caller: a shape whose bytes do not fit
// in 63 bits is refused before anything is specialized or read.
TEST(JITErrorsTest, ShapesOfMoreThan2To63BytesAreRefused) {
  const char *ir = R"mlir(
func.func @add(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = nf.add %a, %b : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
)mlir";
  auto kernel = compileOrFail(ir, "add");
  ASSERT_TRUE(kernel);
  std::vector<int64_t> huge = {int64_t(1) << 62, 4};
  auto specialized = kernel->specialize({huge, huge});
  ASSERT_FALSE(specialized);
  EXPECT_EQ(llvm::toString(specialized.takeError()),
            "input #0 of @add has shape [4611686018427387904, 4], more than "
            "2^63 bytes");
  float data[4] = {};
  normfuse::TensorRef ref{data, DType::F32, huge, {}};
  EXPECT_EQ(errorText(kernel->run({ref, ref}, {ref})),
            "input #0 of @add has shape [4611686018427387904, 4], more than "
            "2^63 bytes");
}

TEST(JITCacheTest, SameRequestReturnsTheSameKernel) {
  auto first = compileOrFail(kRelu, "relu");
  size_t cached = sharedJIT().getCacheSize();
  auto second = compileOrFail(kRelu, "relu");
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(sharedJIT().getCacheSize(), cached);
}

TEST(JITCacheTest, ConcurrentCompilesAndRunsAgree) {
  std::string ir = R"mlir(
func.func @silu(%x: tensor<64x257xf32>) -> tensor<64x257xf32> {
  %0 = nf.silu %x : tensor<64x257xf32>
  return %0 : tensor<64x257xf32>
}
)mlir";
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  std::vector<double> firstValue(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      auto kernel = sharedJIT().compile(ir, "silu");
      if (!kernel) {
        errors[t] = llvm::toString(kernel.takeError());
        return;
      }
      Buffer x(DType::F32, {64, 257}), y(DType::F32, {64, 257});
      x.fill(1.0);
      errors[t] = errorText((*kernel)->run({x.ref()}, {y.ref()}, 2));
      firstValue[t] = y.get(0);
    });
  for (auto &th : threads)
    th.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(errors[t], "");
    EXPECT_NEAR(firstValue[t], 1.0 / (1.0 + std::exp(-1.0)), 1e-6);
  }
}

} // namespace
