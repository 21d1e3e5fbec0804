//===- LowerPadsAndConcats.cpp - pads and concatenations as kernels ------===//
//
// Part of normfuse. What TOSA's lowering makes of tosa.concat (a chain of
// tensor.insert_slice into a tensor.empty), any other chain of static
// insert_slices (into an argument, say: that tensor is then the first
// window, the whole result) and tosa.pad (tensor.pad with a constant, or
// a value read from a tensor) becomes one kernel each: a grid-stride loop
// over the result's elements, each element taken from the source whose
// window holds it (the last one written, as the chain writes them), or
// the pad value outside every window. No element is written twice and
// none is left unwritten (a chain into a tensor.empty that leaves a gap
// fills it with zeros, where the CPU leaves the tensor.empty's contents).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "LowerToGPU.h"
#include "normfuse/Codegen/Common/BufferBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <functional>

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

/// A source placed in the result: result[offset + i] = source[i] for i in
/// the source's shape.
struct Window {
  Value source;
  SmallVector<int64_t> offsets;
};

/// What fills the result outside every window: a constant, or an element
/// of a tensor known only at run time (a pad value the program takes as
/// an argument), at a constant flat offset.
struct Fill {
  TypedAttr constant;
  Value tensor;
  int64_t offset = 0;
};

/// The kernel of `result` (static shape) made of `windows` (the later one
/// wins where two overlap) and `fill` elsewhere, under schedule `s`.
Value emitWindowKernel(OpBuilder &b, Location loc, Operation *at,
                       RankedTensorType result, ArrayRef<Window> windows,
                       const Fill &fill, const PointwiseSchedule &s) {
  auto module = at->getParentOfType<ModuleOp>();
  int64_t rank = result.getRank(), total = result.getNumElements();
  SmallVector<Value> args;
  for (const Window &w : windows)
    args.push_back(flatten(b, loc, getBuffer(b, loc, w.source)));
  unsigned fillArg = args.size();
  if (fill.tensor)
    args.push_back(flatten(b, loc, getBuffer(b, loc, fill.tensor)));
  Value out = allocBuffer(b, loc, result, Value());
  args.push_back(flatten(b, loc, out));
  Kernel k = createKernel(module, loc, kernelBaseName(at, "window"),
                          ValueRange(args).getTypes(), s.blockSize,
                          "window-copy " + s.str() +
                              " sources=" + std::to_string(windows.size()));
  k.func->setAttr(kMinBlocksAttr,
                  b.getI64IntegerAttr(s.minBlocksPerMultiprocessor));
  {
    OpBuilder &kb = k.body;
    IndexMath m{kb, loc};
    Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    Value bid = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
    Value grid = kb.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
    Value start = m.madd(bid, s.blockSize, tid);
    Value step = m.mul(grid, s.blockSize);
    kb.create<scf::ForOp>(
        loc, start, m.c(total), step, ValueRange{},
        [&](OpBuilder &fb, Location fl, Value i, ValueRange) {
          IndexMath f{fb, fl};
          SmallVector<Value> index(rank);
          int64_t stride = 1;
          for (int64_t d = rank - 1; d >= 0; --d) {
            Value v = f.div(i, stride);
            index[d] = d > 0 ? f.rem(v, result.getDimSize(d)) : v;
            stride *= result.getDimSize(d);
          }
          // The value from window `w` onwards (the later windows first),
          // else the fill.
          std::function<Value(OpBuilder &, Location, int64_t)> valueFrom =
              [&](OpBuilder &vb, Location vl, int64_t w) -> Value {
            if (w < 0 && fill.tensor)
              return vb.create<memref::LoadOp>(
                  vl, k.arg(fillArg), IndexMath{vb, vl}.c(fill.offset));
            if (w < 0)
              return vb.create<arith::ConstantOp>(vl, fill.constant);
            IndexMath v{vb, vl};
            auto type = cast<RankedTensorType>(windows[w].source.getType());
            Value inside, offset = v.c(0);
            for (int64_t d = 0; d < rank; ++d) {
              int64_t size = type.getDimSize(d), at = windows[w].offsets[d];
              Value rel = at ? v.sub(index[d], v.c(at)) : index[d];
              if (at != 0 || size != result.getDimSize(d))
                inside = v.both(inside, v.inRange(rel, size));
              offset = d ? v.madd(offset, size, rel) : rel;
            }
            auto load = [&, w](OpBuilder &lb, Location ll) -> Value {
              return lb.create<memref::LoadOp>(ll, k.arg(w), offset);
            };
            if (!inside)
              return load(vb, vl);
            return vb
                .create<scf::IfOp>(
                    vl, inside,
                    [&](OpBuilder &tb, Location tl) {
                      tb.create<scf::YieldOp>(tl, load(tb, tl));
                    },
                    [&](OpBuilder &eb, Location el) {
                      eb.create<scf::YieldOp>(el, valueFrom(eb, el, w - 1));
                    })
                .getResult(0);
          };
          Value v = valueFrom(fb, fl, int64_t(windows.size()) - 1);
          fb.create<memref::StoreOp>(fl, v, k.arg(args.size() - 1), i);
          fb.create<scf::YieldOp>(fl);
        });
  }
  Value blocks = indexConstant(
      b, loc,
      std::min<int64_t>(llvm::divideCeil(total, s.blockSize), s.maxBlocks));
  launch(b, loc, k, blocks, s.blockSize, args);
  return toTensor(b, loc, out);
}

/// A zero of `type`.
TypedAttr zeroOf(OpBuilder &b, Type type) {
  if (isa<FloatType>(type))
    return b.getFloatAttr(type, 0.0);
  return b.getIntegerAttr(type, 0);
}

/// The scalar constant `v` is, through index casts and extracts of
/// constant tensors at constant positions (how TOSA's pad reads its
/// padding and value), or null.
TypedAttr constantScalar(Value v) {
  Attribute attr;
  if (matchPattern(v, m_Constant(&attr)))
    return dyn_cast<TypedAttr>(attr);
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>()) {
    auto i = dyn_cast_or_null<IntegerAttr>(constantScalar(cast.getIn()));
    return i ? IntegerAttr::get(cast.getType(), i.getValue().getSExtValue())
             : TypedAttr();
  }
  auto extract = v.getDefiningOp<tensor::ExtractOp>();
  DenseElementsAttr dense;
  if (!extract || !matchPattern(extract.getTensor(), m_Constant(&dense)))
    return {};
  SmallVector<uint64_t> index;
  for (Value i : extract.getIndices()) {
    auto c = dyn_cast_or_null<IntegerAttr>(constantScalar(i));
    if (!c)
      return {};
    index.push_back(c.getValue().getZExtValue());
  }
  return dyn_cast<TypedAttr>(dense.getValues<Attribute>()[index]);
}

/// The fill of a pad whose value is `v`: a constant, or an extract at
/// constant indices of a tensor of the result's element type; none
/// otherwise.
std::optional<Fill> fillOf(Value v, Type element) {
  if (TypedAttr c = constantScalar(v))
    return Fill{c, Value(), 0};
  auto extract = v.getDefiningOp<tensor::ExtractOp>();
  if (!extract || extract.getType() != element)
    return std::nullopt;
  auto type = cast<RankedTensorType>(extract.getTensor().getType());
  if (!type.hasStaticShape())
    return std::nullopt;
  int64_t offset = 0;
  for (auto [i, index] : llvm::enumerate(extract.getIndices())) {
    auto c = dyn_cast_or_null<IntegerAttr>(constantScalar(index));
    if (!c)
      return std::nullopt;
    offset = offset * type.getDimSize(i) + c.getInt();
  }
  return Fill{TypedAttr(), extract.getTensor(), offset};
}

/// The sizes `mixed` holds, where each is a constant.
std::optional<SmallVector<int64_t>>
constantSizes(ArrayRef<OpFoldResult> mixed) {
  SmallVector<int64_t> sizes;
  for (OpFoldResult r : mixed) {
    if (auto attr = dyn_cast<Attribute>(r)) {
      sizes.push_back(cast<IntegerAttr>(attr).getInt());
      continue;
    }
    auto c = dyn_cast_or_null<IntegerAttr>(constantScalar(cast<Value>(r)));
    if (!c)
      return std::nullopt;
    sizes.push_back(c.getInt());
  }
  return sizes;
}

bool hasStaticSlice(tensor::InsertSliceOp op) {
  return op.getSourceType().hasStaticShape() &&
         op.getResultType().hasStaticShape() &&
         !ShapedType::isDynamicShape(op.getStaticOffsets()) &&
         llvm::all_of(op.getStaticStrides(),
                      [](int64_t s) { return s == 1; }) &&
         op.getSourceType().getRank() == op.getResultType().getRank();
}

/// A pad the copy kernel takes: of static sizes and non-negative low
/// padding, with a constant value or one read from a tensor (a pad value
/// the program takes as an argument).
struct PadCopy {
  Window window;
  Fill fill;
};

std::optional<PadCopy> padCopyOf(tensor::PadOp pad) {
  auto source = cast<RankedTensorType>(pad.getSourceType());
  RankedTensorType result = pad.getResultType();
  Value value = pad.getConstantPaddingValue();
  std::optional<Fill> fill =
      value ? fillOf(value, result.getElementType()) : std::nullopt;
  std::optional<SmallVector<int64_t>> low = constantSizes(pad.getMixedLowPad());
  if (!source.hasStaticShape() || !result.hasStaticShape() || !fill || !low ||
      llvm::any_of(*low, [](int64_t l) { return l < 0; }))
    return std::nullopt;
  return PadCopy{Window{pad.getSource(), *low}, *fill};
}

/// Whether `op` is the last of a chain of insert_slices (no insert_slice
/// into its result follows).
bool endsChain(tensor::InsertSliceOp op) {
  bool continued =
      op->hasOneUse() && isa<tensor::InsertSliceOp>(*op->getUsers().begin()) &&
      cast<tensor::InsertSliceOp>(*op->getUsers().begin()).getDest() ==
          op.getResult();
  return !continued;
}

/// The chain of static insert_slices that `last` ends, as the copy kernel
/// takes it: its ops (last first) and windows (first first); none where a
/// slice is not static.
struct ChainCopy {
  SmallVector<tensor::InsertSliceOp> chain;
  SmallVector<Window> windows;
};

std::optional<ChainCopy> chainCopyOf(tensor::InsertSliceOp last) {
  ChainCopy c;
  tensor::InsertSliceOp op = last;
  Value dest;
  while (true) {
    if (!hasStaticSlice(op))
      return std::nullopt;
    c.chain.push_back(op);
    c.windows.push_back(
        {op.getSource(), SmallVector<int64_t>(op.getStaticOffsets())});
    dest = op.getDest();
    auto previous = dest.getDefiningOp<tensor::InsertSliceOp>();
    if (!previous || !previous->hasOneUse())
      break;
    op = previous;
  }
  // Into anything but a tensor.empty (an argument, another kernel's
  // result): that tensor is the first window, the whole result.
  if (!dest.getDefiningOp<tensor::EmptyOp>())
    c.windows.push_back(
        {dest, SmallVector<int64_t>(last.getResultType().getRank(), 0)});
  std::reverse(c.windows.begin(), c.windows.end());
  return c;
}

} // namespace

std::optional<std::pair<int64_t, Type>> cuda::windowCopyShapeOf(Operation *op) {
  RankedTensorType result;
  if (auto pad = dyn_cast<tensor::PadOp>(op); pad && padCopyOf(pad))
    result = pad.getResultType();
  if (auto slice = dyn_cast<tensor::InsertSliceOp>(op);
      slice && endsChain(slice) && chainCopyOf(slice))
    result = slice.getResultType();
  if (!result)
    return std::nullopt;
  return std::make_pair(result.getNumElements(), result.getElementType());
}

LogicalResult cuda::lowerPadsAndConcatsToGPU(func::FuncOp function,
                                             RewriterBase &rewriter) {
  SmallVector<tensor::PadOp> pads;
  function.walk([&](tensor::PadOp p) { pads.push_back(p); });
  for (tensor::PadOp pad : pads) {
    std::optional<PadCopy> copy = padCopyOf(pad);
    if (!copy)
      continue;
    // The schedule written on the pad first (chooseGpuSchedules).
    FailureOr<PointwiseSchedule> s = readPointwiseSchedule(pad);
    if (failed(s))
      return failure();
    rewriter.setInsertionPoint(pad);
    Value kernel =
        emitWindowKernel(rewriter, pad.getLoc(), pad, pad.getResultType(),
                         {copy->window}, copy->fill, *s);
    Value value = pad.getConstantPaddingValue();
    rewriter.replaceOp(pad, kernel);
    // The host's extract of a pad value the kernel reads itself.
    if (Operation *extract = value.getDefiningOp<tensor::ExtractOp>())
      if (extract->use_empty())
        rewriter.eraseOp(extract);
  }

  // Chains of insert_slice: the last of each chain.
  SmallVector<tensor::InsertSliceOp> lasts;
  function.walk([&](tensor::InsertSliceOp op) {
    if (endsChain(op))
      lasts.push_back(op);
  });
  for (tensor::InsertSliceOp last : lasts) {
    std::optional<ChainCopy> copy = chainCopyOf(last);
    if (!copy)
      continue;
    FailureOr<PointwiseSchedule> s = readPointwiseSchedule(last);
    if (failed(s))
      return failure();
    rewriter.setInsertionPoint(last);
    RankedTensorType result = last.getResultType();
    Value kernel = emitWindowKernel(
        rewriter, last.getLoc(), last, result, copy->windows,
        Fill{zeroOf(rewriter, result.getElementType()), Value(), 0}, *s);
    rewriter.replaceOp(last, kernel);
    // The rest of the chain, last first: each now unused.
    for (tensor::InsertSliceOp earlier : llvm::drop_begin(copy->chain))
      rewriter.eraseOp(earlier);
  }
  return success();
}
