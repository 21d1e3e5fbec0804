//===- ExpandForPrinter.cpp - kernel ops the CUDA printer takes -*- C++ -*-===//
//
// Part of normfuse. A linalg body copied into a kernel can hold ops the
// CUDA printer does not print: the index dialect's arithmetic (what TOSA's
// rfft2d computes its angles with) and arith's signed floor and ceiling
// divisions (tosa.resize's source positions). They become the plain arith
// ops the printer takes: each index op its arith twin on index values (64
// bits in the kernel, as on the CPU), each floor or ceiling division
// upstream's expansion into a division and a correction.
//
//===----------------------------------------------------------------------===//

#include "LowerToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Index/IR/IndexOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nf;

namespace {

/// Any index dialect op as its arith form (index.sizeof is left: the
/// printer then names it).
struct IndexToArith : RewritePattern {
  explicit IndexToArith(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), 1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa_and_nonnull<index::IndexDialect>(op->getDialect()))
      return failure();
    Location loc = op->getLoc();
    auto binary = [&](auto tag) -> Value {
      using ArithOp = decltype(tag);
      return rewriter.create<ArithOp>(loc, op->getOperand(0),
                                      op->getOperand(1));
    };
    Value v =
        llvm::TypeSwitch<Operation *, Value>(op)
            .Case([&](index::AddOp) { return binary(arith::AddIOp()); })
            .Case([&](index::SubOp) { return binary(arith::SubIOp()); })
            .Case([&](index::MulOp) { return binary(arith::MulIOp()); })
            .Case([&](index::DivSOp) { return binary(arith::DivSIOp()); })
            .Case([&](index::DivUOp) { return binary(arith::DivUIOp()); })
            .Case(
                [&](index::CeilDivSOp) { return binary(arith::CeilDivSIOp()); })
            .Case(
                [&](index::CeilDivUOp) { return binary(arith::CeilDivUIOp()); })
            .Case([&](index::FloorDivSOp) {
              return binary(arith::FloorDivSIOp());
            })
            .Case([&](index::RemSOp) { return binary(arith::RemSIOp()); })
            .Case([&](index::RemUOp) { return binary(arith::RemUIOp()); })
            .Case([&](index::MaxSOp) { return binary(arith::MaxSIOp()); })
            .Case([&](index::MaxUOp) { return binary(arith::MaxUIOp()); })
            .Case([&](index::MinSOp) { return binary(arith::MinSIOp()); })
            .Case([&](index::MinUOp) { return binary(arith::MinUIOp()); })
            .Case([&](index::ShlOp) { return binary(arith::ShLIOp()); })
            .Case([&](index::ShrSOp) { return binary(arith::ShRSIOp()); })
            .Case([&](index::ShrUOp) { return binary(arith::ShRUIOp()); })
            .Case([&](index::AndOp) { return binary(arith::AndIOp()); })
            .Case([&](index::OrOp) { return binary(arith::OrIOp()); })
            .Case([&](index::XOrOp) { return binary(arith::XOrIOp()); })
            .Case([&](index::CastSOp c) -> Value {
              return rewriter.create<arith::IndexCastOp>(loc, c.getType(),
                                                         c.getInput());
            })
            .Case([&](index::CastUOp c) -> Value {
              return rewriter.create<arith::IndexCastUIOp>(loc, c.getType(),
                                                           c.getInput());
            })
            .Case([&](index::CmpOp c) -> Value {
              // The two enums list the same predicates in the same order.
              auto predicate = static_cast<arith::CmpIPredicate>(c.getPred());
              return rewriter.create<arith::CmpIOp>(loc, predicate, c.getLhs(),
                                                    c.getRhs());
            })
            .Case([&](index::ConstantOp c) -> Value {
              return rewriter.create<arith::ConstantIndexOp>(
                  loc, c.getValue().getSExtValue());
            })
            .Case([&](index::BoolConstantOp c) -> Value {
              return rewriter.create<arith::ConstantIntOp>(loc, c.getValue(),
                                                           1);
            })
            .Default([](Operation *) { return Value(); });
    if (!v)
      return failure();
    rewriter.replaceOp(op, v);
    return success();
  }
};

} // namespace

void nf::cuda::expandOpsForPrinter(gpu::GPUModuleOp kernels) {
  SmallVector<Operation *> ops;
  kernels.walk([&](Operation *op) {
    if (isa_and_nonnull<index::IndexDialect>(op->getDialect()) ||
        isa<arith::FloorDivSIOp, arith::CeilDivSIOp>(op))
      ops.push_back(op);
  });
  if (ops.empty())
    return;
  RewritePatternSet patterns(kernels.getContext());
  patterns.add<IndexToArith>(kernels.getContext());
  arith::populateCeilFloorDivExpandOpsPatterns(patterns);
  GreedyRewriteConfig config;
  config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
  (void)applyOpPatternsAndFold(ops, std::move(patterns), config);
}
