//===- FusePipelineTest.cpp - fused and unfused give the same numbers -===//
//
// Part of normfuse. Every function of the raising patterns' lit tests
// (test/Dialect/NF/Transforms/raise-*.mlir and nf-fuse.mlir: each
// spelling a pattern accepts, and the ones it must leave alone) runs
// twice on the CPU back end on the same random inputs: as written (TOSA
// chains run op by op through linalg), and through nf-fuse-pipeline
// (raised to nf ops, fused into nf.fused kernels). Their outputs must
// agree, as relative L2 error, to 1e-5 where every tensor is f32 or f64,
// 4e-3 where one is f16 and 3e-2 where one is bf16 (the unfused module
// rounds every intermediate to the storage type; the fused kernel
// computes in f32 and rounds once).
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include "normfuse/JIT/JIT.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <regex>

using namespace nftest;
using normfuse::jit::JIT;
using normfuse::jit::Options;

namespace {

JIT &jitFor(bool fuse) {
  static JIT unfused([] {
    Options o;
    o.fuse = false;
    return o;
  }());
  static JIT fused([] {
    Options o;
    o.fuse = true;
    return o;
  }());
  return fuse ? fused : unfused;
}

double tolerance(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return 4e-3;
  case DType::BF16:
    return 3e-2;
  default:
    return 1e-5;
  }
}

struct Case {
  std::string file;     // relative to the source tree
  std::string function; // the function to run
  std::string module;   // its split of the file
};

std::string readSource(const std::string &relative) {
  auto buffer =
      llvm::MemoryBuffer::getFile(std::string(NF_SOURCE_DIR) + "/" + relative);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

/// One case per function of each split of the lit test files, and of the
/// shipped examples (the transformer and UNet blocks, as nf ops and as
/// TOSA).
std::vector<Case> collectCases() {
  static const std::string lit = "test/Dialect/NF/Transforms/";
  static const std::string files[] = {
      lit + "raise-bias-add.mlir",
      lit + "raise-gelu-erf.mlir",
      lit + "raise-gelu-tanh.mlir",
      lit + "raise-group-norm.mlir",
      lit + "raise-layer-norm.mlir",
      lit + "raise-norm-families.mlir",
      lit + "raise-producers.mlir",
      lit + "raise-relu.mlir",
      lit + "raise-residual-add.mlir",
      lit + "raise-rms-norm.mlir",
      lit + "raise-silu.mlir",
      lit + "nf-raise.mlir",
      lit + "nf-fuse.mlir",
      "examples/transformer_block.mlir",
      "examples/transformer_block_tosa.mlir",
      "examples/unet_block.mlir",
      "examples/unet_block_tosa.mlir",
  };
  std::vector<Case> cases;
  const std::regex name(R"(func\.func @([A-Za-z0-9_]+))");
  for (const std::string &file : files) {
    std::string text = readSource(file);
    size_t start = 0;
    while (start <= text.size()) {
      size_t split = text.find("\n// -----", start);
      std::string module =
          text.substr(start, split == std::string::npos ? std::string::npos
                                                        : split - start);
      for (std::sregex_iterator it(module.begin(), module.end(), name), end;
           it != end; ++it)
        cases.push_back({file, (*it)[1], module});
      if (split == std::string::npos)
        break;
      start = split + 9;
    }
  }
  return cases;
}

/// Functions the CPU back end cannot run as written (not a fusion
/// question; compiling them returns a clear error): integer TOSA ops,
/// dynamic shapes in TOSA ops, and a convolution upstream's tosa-to-linalg
/// rejects (a result shape that is not the convolution's), which the
/// raising must leave alone. (An f16 conv with an f32 result runs: its
/// operands are widened first.)
bool runsOnCPU(const Case &c) {
  static const char *notLowerable[] = {
      "conv_with_a_wrong_result_shape_is_left_alone"};
  for (const char *name : notLowerable)
    if (c.function == name)
      return false;
  static const std::regex integerTensor("[0-9]xi[0-9]");
  return !std::regex_search(c.module, integerTensor) &&
         c.module.find("tensor<?") == std::string::npos &&
         c.module.find("?x") == std::string::npos;
}

void PrintTo(const Case &c, std::ostream *os) {
  *os << "@" << c.function << " of " << c.file;
}

class SameNumbersTest : public testing::TestWithParam<Case> {};

TEST_P(SameNumbersTest, FusedModuleMatchesUnfused) {
  const Case &c = GetParam();
  ASSERT_FALSE(c.module.empty()) << "cannot read " << c.file;
  auto unfused = jitFor(false).compile(c.module, c.function);
  ASSERT_TRUE(bool(unfused)) << llvm::toString(unfused.takeError());
  auto fused = jitFor(true).compile(c.module, c.function);
  ASSERT_TRUE(bool(fused)) << llvm::toString(fused.takeError());

  const auto &signature = (*unfused)->getSignature();
  std::mt19937 rng(7);
  std::vector<Buffer> inputs;
  std::vector<normfuse::TensorRef> inRefs;
  for (const auto &type : signature.inputs) {
    inputs.emplace_back(type.dtype, type.shape);
    inputs.back().fillNormal(rng);
  }
  for (Buffer &b : inputs)
    inRefs.push_back(b.ref());

  auto run = [&](normfuse::jit::Kernel &kernel) {
    std::vector<Buffer> outputs;
    std::vector<normfuse::TensorRef> outRefs;
    for (const auto &type : signature.outputs) {
      outputs.emplace_back(type.dtype, type.shape);
      outputs.back().fill(std::nan(""));
    }
    for (Buffer &b : outputs)
      outRefs.push_back(b.ref());
    llvm::Error error = kernel.run(inRefs, outRefs);
    EXPECT_FALSE(bool(error)) << llvm::toString(std::move(error));
    return outputs;
  };
  // The least precise storage type of the function decides: an f32
  // statistic of an f16 LayerNorm differs by the f16 roundings the fused
  // kernel skips in front of it.
  double bound = 0;
  for (const auto *types : {&signature.inputs, &signature.outputs})
    for (const auto &type : *types)
      bound = std::max(bound, tolerance(type.dtype));
  std::vector<Buffer> expected = run(**unfused), actual = run(**fused);
  for (size_t i = 0; i < expected.size(); ++i) {
    double error =
        relativeError(actual[i].toDoubles(), expected[i].toDoubles());
    EXPECT_LE(error, bound)
        << "result #" << i << " of @" << c.function << " (" << c.file << ")";
  }
}

std::vector<Case> runnableCases() {
  std::vector<Case> cases;
  for (Case &c : collectCases())
    if (runsOnCPU(c))
      cases.push_back(std::move(c));
  return cases;
}

INSTANTIATE_TEST_SUITE_P(LitFunctions, SameNumbersTest,
                         testing::ValuesIn(runnableCases()),
                         [](const testing::TestParamInfo<Case> &info) {
                           std::string file = info.param.file.substr(
                               info.param.file.rfind('/') + 1,
                               info.param.file.find('.') -
                                   info.param.file.rfind('/') - 1);
                           for (char &ch : file)
                             if (ch == '-')
                               ch = '_';
                           return file + "_" + info.param.function;
                         });

TEST(SameNumbersTest, EveryLitFileHasFunctions) {
  EXPECT_GE(collectCases().size(), 100u);
}

} // namespace
