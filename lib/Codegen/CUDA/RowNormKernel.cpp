//===- RowNormKernel.cpp - what the row-norm kernels share ----------------===//
//
// Part of normfuse. See RowNormKernel.h.
//
//===----------------------------------------------------------------------===//

#include "RowNormKernel.h"
#include "normfuse/Codegen/Common/ActivationMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::nf::cuda {

std::pair<Value, Value> emitAddress(OpBuilder &b, Location loc,
                                    const RowNormKernel &spec, Value row,
                                    Value rowBase, Value col) {
  using Layout = RowNormKernel::Layout;
  if (spec.layout == Layout::Rows)
    return {b.create<arith::AddIOp>(loc, rowBase, col), col};
  using S = RowNormKernel;
  auto size = [&](S::GroupSize which) { return spec.size(b, loc, which); };
  Value group = b.create<arith::RemUIOp>(loc, row, size(S::kGroups));
  Value firstChannel =
      b.create<arith::MulIOp>(loc, group, size(S::kChannelsPerGroup));
  if (spec.layout == Layout::GroupsNCHW)
    return {b.create<arith::AddIOp>(loc, rowBase, col),
            b.create<arith::AddIOp>(
                loc, firstChannel,
                b.create<arith::DivUIOp>(loc, col, size(S::kSpatial)))};
  // NHWC: image n = row / G, position p = col / cpg, channel c = col % cpg:
  // (n * spatial + p) * C + g * cpg + c.
  Value image = b.create<arith::DivUIOp>(loc, row, size(S::kGroups));
  Value position =
      b.create<arith::DivUIOp>(loc, col, size(S::kChannelsPerGroup));
  Value inGroup =
      b.create<arith::RemUIOp>(loc, col, size(S::kChannelsPerGroup));
  Value channel = b.create<arith::AddIOp>(loc, firstChannel, inGroup);
  Value pixel = b.create<arith::AddIOp>(
      loc, b.create<arith::MulIOp>(loc, image, size(S::kSpatial)), position);
  return {b.create<arith::AddIOp>(
              loc, b.create<arith::MulIOp>(loc, pixel, size(S::kChannels)),
              channel),
          channel};
}

SmallVector<Value> loadPerChannel(OpBuilder &b, Location loc,
                                  const RowNormKernel &spec, Value buffer,
                                  Value channel, int64_t width) {
  if (spec.lanesShareChannel()) {
    Value v = loadLanes(b, loc, buffer, channel, 1, spec.acc)[0];
    return SmallVector<Value>(width, v);
  }
  if (!spec.schedule.peeled || width == 1)
    return loadLanes(b, loc, buffer, channel, width, spec.acc);
  IndexMath ix{b, loc};
  SmallVector<Value> lanes;
  for (int64_t l = 0; l < width; ++l)
    lanes.push_back(
        loadLanes(b, loc, buffer, ix.add(channel, ix.c(l)), 1, spec.acc)[0]);
  return lanes;
}

void bindStepArgs(Kernel &k, ArrayRef<PointwiseStep> steps, unsigned &i,
                  SmallVector<Value> &out) {
  for (const PointwiseStep &step : steps)
    out.push_back(step.operand ? k.arg(i++) : Value());
}

SmallVector<Value> applySteps(OpBuilder &b, Location loc,
                              const RowNormKernel &spec,
                              ArrayRef<PointwiseStep> steps,
                              ArrayRef<Value> stepArgs,
                              SmallVector<Value> lanes, Value offset, Value col,
                              Type acc, Type roundTo) {
  int64_t vw = lanes.size();
  for (auto [step, arg] : llvm::zip(steps, stepArgs)) {
    SmallVector<Value> operand;
    if (arg && step.kind == PointwiseStepKind::BiasAdd)
      operand = loadPerChannel(b, loc, spec, arg, col, vw);
    else if (arg)
      operand = loadLanes(b, loc, arg, offset, vw, acc);
    for (int64_t l = 0; l < vw; ++l) {
      Value v =
          applyPointwiseStep(b, loc, step, lanes[l], arg ? operand[l] : Value(),
                             1, Exp2Form::MathOp);
      if (roundTo && roundTo != acc) {
        Value rounded = b.create<arith::TruncFOp>(loc, roundTo, v);
        v = b.create<arith::ExtFOp>(loc, acc, rounded);
      }
      lanes[l] = v;
    }
  }
  return lanes;
}

SmallVector<Value> loadX(OpBuilder &b, Location loc, const RowNormKernel &spec,
                         Value x, ArrayRef<Value> prologueArgs, Value offset,
                         Value col, int64_t width) {
  SmallVector<Value> lanes = loadLanes(
      b, loc, x, offset, width ? width : spec.schedule.vectorWidth, spec.acc);
  if (spec.prologue.empty())
    return lanes;
  return applySteps(b, loc, spec, spec.prologue, prologueArgs, lanes, offset,
                    col, spec.acc, spec.storage);
}

RowNormArgs bindArgs(Kernel &k, const RowNormKernel &spec) {
  RowNormArgs a;
  unsigned i = 0;
  a.x = k.arg(i++);
  if (spec.hasScale)
    a.scale = k.arg(i++);
  if (spec.hasBias)
    a.bias = k.arg(i++);
  a.y = k.arg(i++);
  if (spec.writeMean)
    a.mean = k.arg(i++);
  if (spec.writeRstd)
    a.rstd = k.arg(i++);
  a.rows = k.arg(i++);
  a.cols = k.arg(i++);
  bindStepArgs(k, spec.prologue, i, a.prologue);
  bindStepArgs(k, spec.epilogue, i, a.epilogue);
  return a;
}

void storeY(OpBuilder &b, Location loc, const RowNormKernel &spec,
            const RowNormArgs &a, ArrayRef<Value> lanes, Value offset,
            Value col) {
  SmallVector<Value> out(lanes.begin(), lanes.end());
  if (!spec.epilogue.empty())
    out = applySteps(b, loc, spec, spec.epilogue, a.epilogue, out, offset, col,
                     spec.acc, Type());
  storeLanes(b, loc, out, a.y, offset, spec.schedule.streaming);
}

Value addScratch(Kernel &k, Location loc, int64_t threads, Type acc) {
  if (threads <= 32)
    return Value();
  return addWorkgroupBuffer(k, loc, threads / 32, acc);
}

Value sumOf(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  Value s = values.front();
  for (Value v : values.drop_front())
    s = b.create<arith::AddFOp>(loc, s, v);
  return s;
}

} // namespace mlir::nf::cuda
