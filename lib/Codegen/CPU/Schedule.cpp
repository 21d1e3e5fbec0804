//===- Schedule.cpp - how each nf kernel runs on the CPU ------------------===//
//
// Part of normfuse. See normfuse/Codegen/CPU/Schedule.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/CPU/Schedule.h"

#include "LoopUtils.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cpu;

StreamingChoice cpu::selectStreamingStores(const StreamingQuery &q) {
  StreamingChoice choice;
  bool qualifies = q.returned && q.staticShapes && q.vectorsAligned &&
                   q.width > 1 && q.rowElements > 0 &&
                   q.rowElements % q.width == 0;
  if (!qualifies || q.totalBytes < kStreamingStoreBytes)
    return choice;
  choice.enabled = true;
  choice.rowsPerIteration =
      std::max<int64_t>(1, llvm::divideCeil(kStreamingIterationBytes,
                                            std::max<int64_t>(1, q.rowBytes)));
  return choice;
}

bool cpu::wholeImagesPerThread(std::optional<int64_t> images) {
  return images && *images >= kParallelImagesMin;
}

int64_t cpu::rowGradChunks(int64_t rows, int64_t cols) {
  int64_t byScratch = kMaxScratchElements / std::max<int64_t>(cols, 1);
  return std::max<int64_t>(1,
                           std::min(rows, std::min(byScratch, kMaxRowChunks)));
}

MatmulRhs cpu::selectMatmulRhs(std::optional<int64_t> rows) {
  if (!rows)
    return MatmulRhs::ByRows;
  return *rows < kPackMinRows ? MatmulRhs::InPlace : MatmulRhs::Packed;
}

int64_t cpu::matmulRowGroup(Type acc) {
  return acc.getIntOrFloatBitWidth() > 32 ? 1 : kRowGroup;
}

namespace {

std::optional<int64_t> staticSize(int64_t d) {
  if (ShapedType::isDynamic(d))
    return std::nullopt;
  return d;
}

/// The product of dimensions [from, to) of `type`, none if one is dynamic.
std::optional<int64_t> product(RankedTensorType type, int64_t from,
                               int64_t to) {
  int64_t n = 1;
  for (int64_t d = from; d < to; ++d) {
    if (type.isDynamicDim(d))
      return std::nullopt;
    n *= type.getDimSize(d);
  }
  return n;
}

/// "streaming=no", or "streaming=yes rows-per-iteration=N", for the one
/// output `result` written in rows of `rowElements` elements.
std::string streamingWords(Value result, std::optional<int64_t> rowElements,
                           int64_t width) {
  auto type = cast<RankedTensorType>(result.getType());
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  StreamingQuery q;
  q.returned = isFunctionResult(result);
  q.staticShapes = type.hasStaticShape() && rowElements.has_value();
  q.width = width;
  if (q.staticShapes) {
    q.totalBytes = type.getNumElements() * elementBytes;
    q.rowElements = *rowElements;
    q.rowBytes = *rowElements * elementBytes;
  }
  q.vectorsAligned =
      elementBytes > 0 && (width * elementBytes) % kStreamingAlignment == 0;
  StreamingChoice choice = selectStreamingStores(q);
  if (!choice.enabled)
    return "streaming=no";
  return "streaming=yes rows-per-iteration=" +
         std::to_string(choice.rowsPerIteration);
}

std::string sizeWords(std::optional<int64_t> n) {
  return n ? std::to_string(*n) : std::string("dynamic");
}

} // namespace

std::string cpu::describeCPUSchedule(Operation *op, int64_t width) {
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  std::string w = " vector=" + std::to_string(width);
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case<LayerNormOp, RMSNormOp>([&](auto norm) {
        RankedTensorType t = typeOf(norm.getInput());
        int64_t axis = norm.getAxis();
        return "row-norm center=" + std::to_string(kCenterElements) +
               " sum-block=" + std::to_string(kSumBlockElements) + w + " " +
               streamingWords(norm->getResult(0), product(t, axis, t.getRank()),
                              width);
      })
      .Case<LayerNormGradOp, RMSNormGradOp>([&](auto grad) {
        RankedTensorType t = typeOf(grad.getInput());
        int64_t axis = grad.getAxis();
        std::optional<int64_t> rows = product(t, 0, axis),
                               cols = product(t, axis, t.getRank());
        std::optional<int64_t> chunks;
        if (rows && cols)
          chunks = rowGradChunks(*rows, *cols);
        return "row-norm-grad row-chunks=" + sizeWords(chunks) + w;
      })
      .Case<GroupNormOp, InstanceNormOp>([&](auto norm) {
        RankedTensorType t = typeOf(norm.getInput());
        bool whole = wholeImagesPerThread(staticSize(t.getDimSize(0)));
        return std::string("per-image-norm ") +
               (whole ? "whole-images-per-thread" : "passes-in-parallel") +
               " chunk-positions=" + std::to_string(kChunkPositions) + w;
      })
      .Case<BatchNormTrainingOp, BatchNormGradOp, BiasAddGradOp,
            GroupNormGradOp, InstanceNormGradOp>([&](Operation *) {
        return "channel-sums chunk-positions=" +
               std::to_string(kChunkPositions) +
               " range-elements=" + std::to_string(kRangeElements) +
               " combine-channels=" + std::to_string(kCombineChannels) + w;
      })
      .Case<ReluOp, GeluOp, SiluOp, AddOp, MulOp, ReluGradOp, GeluGradOp,
            SiluGradOp>([&](Operation *pointwise) {
        return "pointwise chunk=" + std::to_string(kPointwiseChunkElements) +
               w + " " +
               streamingWords(pointwise->getResult(0), kPointwiseChunkElements,
                              width);
      })
      .Case([&](MatmulOp mm) {
        RankedTensorType t = typeOf(mm.getResult());
        MatmulRhs rhs =
            selectMatmulRhs(staticSize(t.getDimSize(t.getRank() - 2)));
        std::string how = rhs == MatmulRhs::Packed    ? "packed"
                          : rhs == MatmulRhs::InPlace ? "in-place"
                                                      : "by-rows";
        Type acc = getAccumulationType(t.getElementType());
        return "matmul rhs=" + how +
               " row-group=" + std::to_string(matmulRowGroup(acc)) +
               " column-vectors=" + std::to_string(kColumnVectors) +
               " row-chunk=" + std::to_string(kRowChunk) +
               " depth-block=" + std::to_string(kDepthBlock) + w;
      })
      .Case([&](Conv2DOp conv) {
        if (conv.getLayout() == Layout::NHWC)
          return "conv2d nhwc register-tiles=" +
                 std::to_string(kConvTilePositions) + "x" +
                 std::to_string(kConvTileChannels) +
                 " channel-chunk=" + std::to_string(kConvChannelChunk) + w;
        return "conv2d nchw row-spans" + w;
      })
      .Default([](Operation *) { return std::string(); });
}
