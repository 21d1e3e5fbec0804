//===- LowerPointwise.cpp - pointwise nf ops as GPU kernels -----*- C++ -*-===//
//
// Part of normfuse. relu, gelu, silu, their gradients, add, mul, bias_add
// and batch_norm_inference become one elementwise kernel each: a grid-stride
// loop over the flattened tensor, a vector of lanes per thread and step,
// arithmetic in f32 (f64 for f64 data) with the activation math shared with the
// CPU (Codegen/Common/ActivationMath.h) in its CUDA form.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "LowerToGPU.h"
#include "normfuse/Codegen/Common/ActivationMath.h"
#include "normfuse/Codegen/Common/BufferBuilders.h"
#include "normfuse/Codegen/Common/NormMath.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

/// bias_add's view of its input: (outer, channels, inner).
struct ChannelView {
  Value channels, inner;
};

} // namespace

/// The elements of `type` (kDynamic if unknown) and the widest element
/// type of it and `operands`: every operand must allow the vector.
static std::pair<int64_t, Type> elementwiseShape(RankedTensorType type,
                                                 ValueRange operands) {
  int64_t n =
      type.hasStaticShape() ? type.getNumElements() : ShapedType::kDynamic;
  Type widest = type.getElementType();
  for (Value v : operands) {
    Type t = getElementTypeOrSelf(v.getType());
    if (t.getIntOrFloatBitWidth() > widest.getIntOrFloatBitWidth())
      widest = t;
  }
  return {n, widest};
}

std::optional<std::pair<int64_t, Type>>
cuda::elementwisePassShapeOf(Operation *op) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (auto bn = dyn_cast<BatchNormTrainingOp>(op))
    return elementwiseShape(type, bn.getInput());
  if (auto bn = dyn_cast<BatchNormGradOp>(op))
    return elementwiseShape(type,
                            ValueRange{bn.getGradOutput(), bn.getInput()});
  return std::nullopt;
}

std::optional<std::pair<int64_t, Type>>
cuda::elementwiseShapeOf(Operation *op) {
  if (!isa<ReluOp, GeluOp, SiluOp, AddOp, MulOp, ReluGradOp, GeluGradOp,
           SiluGradOp, BiasAddOp, BatchNormInferenceOp>(op))
    return std::nullopt;
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  // bias_add's and batch_norm_inference's other operands are per channel.
  ValueRange operands = isa<BiasAddOp, BatchNormInferenceOp>(op)
                            ? op->getOperands().take_front()
                            : op->getOperands();
  return elementwiseShape(type, operands);
}

Value cuda::emitElementwise(OpBuilder &b, Operation *op, RankedTensorType type,
                            ValueRange operands, ValueRange perChannel,
                            int64_t channelAxis, const PointwiseSchedule &s,
                            llvm::StringRef name, ElementFn fn) {
  Location loc = op->getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  Type acc = getAccumulationType(type.getElementType());
  int64_t vw = s.vectorWidth;

  SmallVector<Value> buffers, args;
  for (Value v : operands) {
    buffers.push_back(getBuffer(b, loc, v));
    args.push_back(flatten(b, loc, buffers.back()));
  }
  Value result = allocBuffer(b, loc, type, buffers.front());
  args.push_back(flatten(b, loc, result));
  Value total = getNumElements(b, loc, buffers.front(), 0, type.getRank());
  ChannelView view;
  for (Value v : perChannel)
    args.push_back(flatten(b, loc, getBuffer(b, loc, v)));
  if (!perChannel.empty()) {
    view.channels =
        getNumElements(b, loc, buffers.front(), channelAxis, channelAxis + 1);
    view.inner = getNumElements(b, loc, buffers.front(), channelAxis + 1,
                                type.getRank());
    args.push_back(view.channels);
    args.push_back(view.inner);
  }
  args.push_back(total);

  TypeRange argTypes = ValueRange(args).getTypes();
  Kernel k = createKernel(module, loc, kernelBaseName(op, name), argTypes,
                          s.blockSize, s.str());
  k.func->setAttr(kMinBlocksAttr,
                  b.getI64IntegerAttr(s.minBlocksPerMultiprocessor));
  {
    OpBuilder &kb = k.body;
    unsigned numIn = operands.size();
    Value out = k.arg(numIn);
    SmallVector<Value> kPerChannel;
    Value kChannels, kInner;
    unsigned next = numIn + 1;
    for (size_t i = 0; i < perChannel.size(); ++i)
      kPerChannel.push_back(k.arg(next++));
    if (!perChannel.empty()) {
      kChannels = k.arg(next++);
      kInner = k.arg(next++);
    }
    Value kTotal = k.arg(next);
    IndexMath m{kb, loc};
    Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    Value bid = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
    Value grid = kb.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
    Value thread = m.madd(bid, s.blockSize, tid);
    // `width` elements from element i.
    auto elements = [&](OpBuilder &fb, Location fl, Value i, int64_t width) {
      SmallVector<SmallVector<Value>> lanes;
      for (unsigned o = 0; o < numIn; ++o)
        lanes.push_back(loadLanes(fb, fl, k.arg(o), i, width, acc));
      SmallVector<Value> results;
      for (int64_t l = 0; l < width; ++l) {
        SmallVector<Value> in;
        for (auto &v : lanes)
          in.push_back(v[l]);
        if (!kPerChannel.empty()) {
          Value e = fb.create<arith::AddIOp>(fl, i, indexConstant(fb, fl, l));
          Value ch = fb.create<arith::RemUIOp>(
              fl, fb.create<arith::DivUIOp>(fl, e, kInner), kChannels);
          for (Value param : kPerChannel)
            in.push_back(loadLanes(fb, fl, param, ch, 1, acc)[0]);
        }
        results.push_back(fn(fb, fl, in));
      }
      storeLanes(fb, fl, results, out, i);
    };
    // The vectors; with a peel, the tail's elements one per thread.
    Value vectorEnd = s.peeled ? m.sub(kTotal, m.rem(kTotal, vw)) : kTotal;
    kb.create<scf::ForOp>(loc, m.mul(thread, vw), vectorEnd,
                          m.mul(grid, s.blockSize * vw), ValueRange{},
                          [&](OpBuilder &fb, Location fl, Value i, ValueRange) {
                            elements(fb, fl, i, vw);
                            fb.create<scf::YieldOp>(fl);
                          });
    if (s.peeled) {
      Value e = m.add(vectorEnd, thread);
      Value inTail = m.below(e, kTotal);
      kb.create<scf::IfOp>(loc, inTail, [&](OpBuilder &tb, Location tl) {
        elements(tb, tl, e, 1);
        tb.create<scf::YieldOp>(tl);
      });
    }
  }

  // The grid: enough blocks for one vector per thread, at most maxBlocks;
  // none for an empty tensor.
  Value perBlock = indexConstant(b, loc, s.blockSize * vw);
  Value blocks = b.create<arith::MinUIOp>(
      loc, b.create<arith::CeilDivUIOp>(loc, total, perBlock),
      indexConstant(b, loc, s.maxBlocks));
  Value any = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, total,
                                      indexConstant(b, loc, 0));
  b.create<scf::IfOp>(loc, any, [&](OpBuilder &tb, Location tl) {
    launch(tb, tl, k.func, blocks, s.blockSize, args);
    tb.create<scf::YieldOp>(tl);
  });
  return toTensor(b, loc, result);
}

namespace {

/// Replaces `op` by the elementwise kernel of emitElementwise, under the
/// schedule written on it first (chooseGpuSchedules).
LogicalResult lowerElementwise(RewriterBase &rewriter, Operation *op,
                               ValueRange operands, ValueRange perChannel,
                               int64_t channelAxis, llvm::StringRef name,
                               ElementFn fn) {
  FailureOr<PointwiseSchedule> s = readPointwiseSchedule(op);
  if (failed(s))
    return failure();
  rewriter.setInsertionPoint(op);
  rewriter.replaceOp(
      op, emitElementwise(rewriter, op,
                          cast<RankedTensorType>(op->getResult(0).getType()),
                          operands, perChannel, channelAxis, *s, name, fn));
  return success();
}

} // namespace

LogicalResult cuda::lowerPointwiseToGPU(RewriterBase &rewriter, Operation *op,
                                        const GPULoweringOptions &) {
  // CUDA's exp2f is one instruction: the logistic forms use it.
  const Exp2Form exp2 = Exp2Form::MathOp;
  auto unary = [&](Value input, llvm::StringRef name, ElementFn fn) {
    return lowerElementwise(rewriter, op, input, ValueRange(), -1, name, fn);
  };
  if (auto relu = dyn_cast<ReluOp>(op))
    return unary(relu.getInput(), "relu",
                 [](OpBuilder &b, Location l, ArrayRef<Value> v) {
                   return emitRelu(b, l, v[0], 1);
                 });
  if (auto gelu = dyn_cast<GeluOp>(op)) {
    GeluApproximation approx = gelu.getApproximate();
    return unary(gelu.getInput(), "gelu",
                 [&](OpBuilder &b, Location l, ArrayRef<Value> v) {
                   return emitGelu(b, l, v[0], 1, approx, exp2);
                 });
  }
  if (auto silu = dyn_cast<SiluOp>(op))
    return unary(silu.getInput(), "silu",
                 [&](OpBuilder &b, Location l, ArrayRef<Value> v) {
                   return emitSilu(b, l, v[0], 1, exp2);
                 });
  auto binary = [&](Value lhs, Value rhs, llvm::StringRef name, ElementFn fn) {
    return lowerElementwise(rewriter, op, ValueRange{lhs, rhs}, ValueRange(),
                            -1, name, fn);
  };
  if (auto add = dyn_cast<AddOp>(op))
    return binary(add.getLhs(), add.getRhs(), "add",
                  [](OpBuilder &b, Location l, ArrayRef<Value> v) -> Value {
                    return b.create<arith::AddFOp>(l, v[0], v[1]);
                  });
  if (auto mul = dyn_cast<MulOp>(op))
    return binary(mul.getLhs(), mul.getRhs(), "mul",
                  [](OpBuilder &b, Location l, ArrayRef<Value> v) -> Value {
                    return b.create<arith::MulFOp>(l, v[0], v[1]);
                  });
  if (isa<ReluGradOp, GeluGradOp, SiluGradOp>(op)) {
    Value forward = isa<ReluGradOp>(op)   ? cast<ReluGradOp>(op).getResult()
                    : isa<GeluGradOp>(op) ? cast<GeluGradOp>(op).getInput()
                                          : cast<SiluGradOp>(op).getInput();
    Value dy = op->getOperand(0);
    return binary(dy, forward, op->getName().stripDialect(),
                  [&](OpBuilder &b, Location l, ArrayRef<Value> v) {
                    return emitActivationGrad(b, l, op, v[0], v[1], 1);
                  });
  }
  if (auto biasAdd = dyn_cast<BiasAddOp>(op)) {
    int64_t rank = biasAdd.getType().getRank();
    int64_t axis = getChannelAxis(biasAdd.getLayout(), rank);
    return lowerElementwise(
        rewriter, op, biasAdd.getInput(), ValueRange{biasAdd.getBias()}, axis,
        "bias_add", [](OpBuilder &b, Location l, ArrayRef<Value> v) -> Value {
          return b.create<arith::AddFOp>(l, v[0], v[1]);
        });
  }
  if (auto bn = dyn_cast<BatchNormInferenceOp>(op)) {
    // (x - running_mean) * rstd(running_var) * scale + bias, per channel.
    int64_t rank = bn.getType().getRank();
    int64_t axis = getChannelAxis(bn.getLayout(), rank);
    SmallVector<Value> params{bn.getRunningMean(), bn.getRunningVar()};
    bool hasScale = bool(bn.getScale()), hasBias = bool(bn.getBias());
    if (hasScale)
      params.push_back(bn.getScale());
    if (hasBias)
      params.push_back(bn.getBias());
    double eps = bn.getEpsilon().convertToDouble();
    return lowerElementwise(
        rewriter, op, bn.getInput(), params, axis, "batch_norm_inference",
        [&](OpBuilder &b, Location l, ArrayRef<Value> v) -> Value {
          Value rstd = emitRstd(b, l, v[2], eps);
          return emitNormalize(b, l, v[0], v[1], rstd,
                               hasScale ? v[3] : Value(),
                               hasBias ? v[hasScale ? 4 : 3] : Value());
        });
  }
  return failure();
}
