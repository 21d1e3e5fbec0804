//===- NFFoldTest.cpp - folds of nf ops through the C++ API -----*- C++ -*-===//
//
// Part of normfuse. OpBuilder::createOrFold applies an op's folder as it is
// built: these tests check which nf ops fold away and which stay.
//
//===----------------------------------------------------------------------===//

#include "NFTestBase.h"

using namespace mlir;
using namespace mlir::nf;
using nftest::NFDialectTest;

namespace {

TEST_F(NFDialectTest, ReluOfReluFoldsToTheInnerRelu) {
  auto args = arguments({tensor({4, 8})});
  Location loc = builder.getUnknownLoc();
  auto inner = builder.create<ReluOp>(loc, args[0]);
  Value outer = builder.createOrFold<ReluOp>(loc, inner.getResult());
  EXPECT_EQ(outer, inner.getResult());
}

TEST_F(NFDialectTest, ReluOfAnArgumentDoesNotFold) {
  auto args = arguments({tensor({4, 8})});
  Value relu = builder.createOrFold<ReluOp>(builder.getUnknownLoc(), args[0]);
  EXPECT_NE(relu, args[0]);
  EXPECT_TRUE(relu.getDefiningOp<ReluOp>());
}

TEST_F(NFDialectTest, BiasAddOfAZeroConstantFoldsToItsInput) {
  auto args = arguments({tensor({4, 8})});
  Location loc = builder.getUnknownLoc();
  auto zero = builder.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(tensor({8}), builder.getF32FloatAttr(0.0f)));
  Value y = builder.createOrFold<BiasAddOp>(
      loc, args[0], zero, LayoutAttr::get(&context, Layout::NCHW));
  EXPECT_EQ(y, args[0]);
}

TEST_F(NFDialectTest, BiasAddOfANonZeroConstantStays) {
  auto args = arguments({tensor({4, 8})});
  Location loc = builder.getUnknownLoc();
  auto half = builder.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(tensor({8}), builder.getF32FloatAttr(0.5f)));
  Value y = builder.createOrFold<BiasAddOp>(
      loc, args[0], half, LayoutAttr::get(&context, Layout::NCHW));
  EXPECT_TRUE(y.getDefiningOp<BiasAddOp>());
}

TEST_F(NFDialectTest, MulByOneOnEitherSideFoldsToTheOtherOperand) {
  auto args = arguments({tensor({3})});
  Location loc = builder.getUnknownLoc();
  auto one = builder.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(tensor({3}), builder.getF32FloatAttr(1.0f)));
  EXPECT_EQ(builder.createOrFold<MulOp>(loc, one, args[0]), args[0]);
  EXPECT_EQ(builder.createOrFold<MulOp>(loc, args[0], one), args[0]);
}

} // namespace
