//===- MemoryBoundsTest.cpp - the memory a function's tensors need --------===//
//
// Part of normfuse. The JIT refuses a function whose tensors, live at once,
// need more than the machine's memory (lib/JIT/MemoryBounds.h). These tests
// pin down the liveness: a tensor lives from its op to its last use, a use
// inside a nested region counts at its top-level op, results live to the
// return, and sizes saturate instead of wrapping.
//
//===----------------------------------------------------------------------===//

#include "MemoryBounds.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace {

class MemoryBoundsTest : public ::testing::Test {
protected:
  MemoryBoundsTest() {
    context.loadDialect<mlir::func::FuncDialect>();
    context.allowUnregisteredDialects();
  }

  mlir::func::FuncOp parse(const char *text) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(module);
    return module ? *module->getOps<mlir::func::FuncOp>().begin() : nullptr;
  }

  std::string typeName(mlir::Type type) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << type;
    return s;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST_F(MemoryBoundsTest, ATensorLivesFromItsOpToItsLastUse) {
  // Live bytes after each op: 400, 4400, 440 (b is dead), 4440, 16.
  auto fn = parse(R"(
    func.func @f(%x: tensor<8xf32>) -> tensor<4xf32> {
      %a = "t.op"(%x) : (tensor<8xf32>) -> tensor<100xf32>
      %b = "t.op"(%a) : (tensor<100xf32>) -> tensor<1000xf32>
      %c = "t.op"(%b) : (tensor<1000xf32>) -> tensor<10xf32>
      %d = "t.op"(%a, %c) : (tensor<100xf32>, tensor<10xf32>) -> tensor<2000xf16>
      %e = "t.op"(%d) : (tensor<2000xf16>) -> tensor<4xf32>
      return %e : tensor<4xf32>
    })");
  mlir::Type largest;
  EXPECT_EQ(normfuse::jit::peakTensorBytes(fn, largest), 4440u);
  EXPECT_EQ(typeName(largest), "tensor<1000xf32>");
}

TEST_F(MemoryBoundsTest, AUseInANestedRegionKeepsTheTensorAlive) {
  // %a is used inside the region of the last op: it lives to the end.
  auto fn = parse(R"(
    func.func @f(%x: tensor<8xf32>) -> tensor<4xf32> {
      %a = "t.op"(%x) : (tensor<8xf32>) -> tensor<1000xf32>
      %b = "t.op"(%x) : (tensor<8xf32>) -> tensor<500xf32>
      %c = "t.wrap"(%b) ({
        "t.use"(%a) : (tensor<1000xf32>) -> ()
      }) : (tensor<500xf32>) -> tensor<4xf32>
      return %c : tensor<4xf32>
    })");
  mlir::Type largest;
  EXPECT_EQ(normfuse::jit::peakTensorBytes(fn, largest), 4000u + 2000u + 16u);
}

TEST_F(MemoryBoundsTest, ResultsLiveUntilTheReturnAndArgumentsCountNothing) {
  auto fn = parse(R"(
    func.func @f(%x: tensor<1000000xf32>) -> (tensor<10xf64>, tensor<10xf64>) {
      %a = "t.op"(%x) : (tensor<1000000xf32>) -> tensor<10xf64>
      %b = "t.op"(%x) : (tensor<1000000xf32>) -> tensor<10xf64>
      return %a, %b : tensor<10xf64>, tensor<10xf64>
    })");
  mlir::Type largest;
  EXPECT_EQ(normfuse::jit::peakTensorBytes(fn, largest), 160u);
}

TEST_F(MemoryBoundsTest, DynamicShapesCountNothingAndHugeShapesSaturate) {
  auto fn = parse(R"(
    func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
      %a = "t.op"(%x) : (tensor<?xf32>) -> tensor<?xf32>
      %b = "t.op"(%x) : (tensor<?xf32>) -> tensor<4294967296x4294967296xf32>
      %c = "t.op"(%b) : (tensor<4294967296x4294967296xf32>) -> tensor<?xf32>
      return %c : tensor<?xf32>
    })");
  mlir::Type largest;
  EXPECT_EQ(normfuse::jit::peakTensorBytes(fn, largest),
            std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(typeName(largest), "tensor<4294967296x4294967296xf32>");
  llvm::Error err = normfuse::jit::checkTensorMemory(fn, 1u << 30);
  EXPECT_EQ(llvm::toString(std::move(err)),
            "@f computes tensors that take more than 2^64 bytes at once (the "
            "largest: tensor<4294967296x4294967296xf32>), more than this "
            "machine's 1073741824 bytes of memory");
}

TEST_F(MemoryBoundsTest, AFunctionThatFitsIsAccepted) {
  auto fn = parse(R"(
    func.func @f(%x: tensor<8xf32>) -> tensor<256xf32> {
      %a = "t.op"(%x) : (tensor<8xf32>) -> tensor<256xf32>
      return %a : tensor<256xf32>
    })");
  EXPECT_FALSE(bool(normfuse::jit::checkTensorMemory(fn, 1024)));
  llvm::Error err = normfuse::jit::checkTensorMemory(fn, 1023);
  EXPECT_EQ(llvm::toString(std::move(err)),
            "@f computes tensors that take 1024 bytes at once (the largest: "
            "tensor<256xf32>), more than this machine's 1023 bytes of memory");
}

} // namespace
