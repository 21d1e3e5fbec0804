//===- NFOpsVerifierTest.cpp - nf ops built from C++ ------------*- C++ -*-===//
//
// Part of normfuse. Builds nf ops with the C++ API and checks what the
// verifier says about them, word for word.
//
//===----------------------------------------------------------------------===//

#include "NFTestBase.h"

using namespace mlir;
using namespace mlir::nf;
using nftest::NFDialectTest;

namespace {

TEST_F(NFDialectTest, LayerNormWithMatchingShapesVerifies) {
  auto args = arguments({tensor({2, 3, 8}), tensor({8}), tensor({8})});
  auto op = builder.create<LayerNormOp>(
      builder.getUnknownLoc(), tensor({2, 3, 8}), tensor({2, 3, 1}),
      tensor({2, 3, 1}), args[0], args[1], args[2],
      builder.getI64IntegerAttr(2), builder.getF64FloatAttr(1e-5));
  EXPECT_EQ(verifyAndDescribe(op), "");
}

TEST_F(NFDialectTest, LayerNormRejectsAxisPastTheRank) {
  auto args = arguments({tensor({2, 3, 8})});
  auto op = builder.create<LayerNormOp>(
      builder.getUnknownLoc(), tensor({2, 3, 8}), tensor({2, 3, 1}),
      tensor({2, 3, 1}), args[0], Value(), Value(),
      builder.getI64IntegerAttr(3), builder.getF64FloatAttr(1e-5));
  EXPECT_EQ(verifyAndDescribe(op),
            "'nf.layer_norm' op axis 3 is out of range for an input of rank 3 "
            "(expected 0 <= axis < 3)");
}

TEST_F(NFDialectTest, LayerNormWithoutScaleOrBiasHasNoSuchOperands) {
  auto args = arguments({tensor({4, 16})});
  auto op = builder.create<LayerNormOp>(
      builder.getUnknownLoc(), tensor({4, 16}), tensor({4, 1}), tensor({4, 1}),
      args[0], Value(), Value(), builder.getI64IntegerAttr(1),
      builder.getF64FloatAttr(1e-5));
  EXPECT_EQ(verifyAndDescribe(op), "");
  EXPECT_FALSE(op.getScale());
  EXPECT_FALSE(op.getBias());
  EXPECT_EQ(op->getNumOperands(), 1u);
}

TEST_F(NFDialectTest, GroupNormRejectsGroupsThatDoNotDivideTheChannels) {
  auto args = arguments({tensor({2, 8, 8, 64})});
  auto op = builder.create<GroupNormOp>(
      builder.getUnknownLoc(), tensor({2, 8, 8, 64}), tensor({2, 3}),
      tensor({2, 3}), args[0], Value(), Value(), builder.getI64IntegerAttr(3),
      builder.getF64FloatAttr(1e-5), LayoutAttr::get(&context, Layout::NHWC));
  EXPECT_EQ(verifyAndDescribe(op),
            "'nf.group_norm' op num_groups 3 does not divide the 64 channels");
}

TEST_F(NFDialectTest, GroupNormNHWCTakesTheChannelsFromTheLastDimension) {
  auto args = arguments({tensor({2, 8, 8, 64}), tensor({64})});
  auto op = builder.create<GroupNormOp>(
      builder.getUnknownLoc(), tensor({2, 8, 8, 64}), tensor({2, 32}),
      tensor({2, 32}), args[0], args[1], args[1], builder.getI64IntegerAttr(32),
      builder.getF64FloatAttr(1e-5), LayoutAttr::get(&context, Layout::NHWC));
  EXPECT_EQ(verifyAndDescribe(op), "");
  EXPECT_EQ(getChannelAxis(op.getLayout(), 4), 3);
}

TEST_F(NFDialectTest, StatisticsOfHalfInputsAreFloat32) {
  Type f16 = builder.getF16Type();
  auto args = arguments({tensor({4, 16}, f16)});
  auto op = builder.create<RMSNormOp>(
      builder.getUnknownLoc(), tensor({4, 16}, f16), tensor({4, 1}, f16),
      args[0], Value(), builder.getI64IntegerAttr(1),
      builder.getF64FloatAttr(1e-6));
  // The ODS type constraint (stats are f32 or f64) rejects f16 first.
  EXPECT_EQ(verifyAndDescribe(op),
            "'nf.rms_norm' op result #1 must be ranked tensor of 32-bit float "
            "or 64-bit float values, but got 'tensor<4x1xf16>'");
  EXPECT_EQ(getAccumulationType(f16), builder.getF32Type());
  EXPECT_EQ(getAccumulationType(builder.getF64Type()), builder.getF64Type());
}

TEST_F(NFDialectTest, Conv2DNHWCOutputShapeFollowsStridePaddingAndDilation) {
  // 17x17 input, 3x3 filter dilated by 2 (extent 5), padding 1 each side,
  // stride 2: (17 + 2 - 5) / 2 + 1 = 8.
  auto args = arguments({tensor({1, 17, 17, 4}), tensor({6, 3, 3, 4})});
  auto build = [&](ArrayRef<int64_t> resultShape) {
    return builder.create<Conv2DOp>(builder.getUnknownLoc(),
                                    tensor(resultShape), args[0], args[1],
                                    builder.getDenseI64ArrayAttr({2, 2}),
                                    builder.getDenseI64ArrayAttr({1, 1, 1, 1}),
                                    builder.getDenseI64ArrayAttr({2, 2}),
                                    LayoutAttr::get(&context, Layout::NHWC));
  };
  EXPECT_EQ(verifyAndDescribe(build({1, 8, 8, 6})), "");
  EXPECT_EQ(verifyAndDescribe(build({1, 9, 9, 6})),
            "'nf.conv2d' op result has shape [1, 9, 9, 6]; expected "
            "[1, 8, 8, 6] (the conv2d output shape)");
}

TEST_F(NFDialectTest, MatmulSharesARank2WeightAcrossTheBatch) {
  auto args = arguments({tensor({8, 128, 768}), tensor({3072, 768})});
  auto op = builder.create<MatmulOp>(builder.getUnknownLoc(),
                                     tensor({8, 128, 3072}), args[0], args[1],
                                     /*transpose_lhs=*/false,
                                     /*transpose_rhs=*/true);
  EXPECT_EQ(verifyAndDescribe(op), "");
}

TEST_F(NFDialectTest, FusedOpNamesItsOneProducer) {
  auto args = arguments({tensor({4, 8}), tensor({8, 16}), tensor({16})});
  Location loc = builder.getUnknownLoc();
  auto fused = builder.create<FusedOp>(loc, TypeRange{tensor({4, 16})}, args);
  Block *body = builder.createBlock(&fused.getBody());
  for (Value a : args)
    body->addArgument(a.getType(), loc);
  auto matmul =
      builder.create<MatmulOp>(loc, tensor({4, 16}), body->getArgument(0),
                               body->getArgument(1), false, false);
  auto bias =
      builder.create<BiasAddOp>(loc, matmul.getResult(), body->getArgument(2),
                                LayoutAttr::get(&context, Layout::NCHW));
  auto relu = builder.create<ReluOp>(loc, bias.getResult());
  builder.create<YieldOp>(loc, ValueRange{relu.getResult()});

  EXPECT_EQ(verifyAndDescribe(fused), "");
  EXPECT_EQ(fused.getProducer(), matmul.getOperation());
  EXPECT_TRUE(isPointwiseOp(bias));
  EXPECT_FALSE(isPointwiseOp(matmul));
}

} // namespace
