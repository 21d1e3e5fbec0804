//===- Products.h - matrix products as the GPU kernels see them -*- C++ -*-===//
//
// Part of normfuse. What the two product kernels share (LowerProducts.cpp,
// the SIMT kernel; LowerTensorCoreProducts.cpp, mma.sync): a product
// C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] described by its sizes and by
// where each operand and result element lives in its flat buffer, and the
// store of a result element through a fused epilogue.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_LIB_CODEGEN_CUDA_PRODUCTS_H
#define NORMFUSE_LIB_CODEGEN_CUDA_PRODUCTS_H

#include "KernelBuilder.h"
#include "normfuse/Codegen/CUDA/Schedule.h"
#include "normfuse/Codegen/Common/FusedGroups.h"

#include <functional>
#include <memory>
#include <optional>
#include <utility>

namespace mlir::nf::cuda {

/// Where an operand element lives in its flat buffer, and whether it exists
/// (null: always, within the product's bounds); built in the kernel.
struct Access {
  Value offset, valid;
};

/// Builds the access of element (batch, row, col) of an operand or the
/// result, from the product's sizes in the kernel (ProductSizes::kernel).
using AccessFn = std::function<Access(OpBuilder &, Location, ArrayRef<Value>,
                                      Value batch, Value row, Value col)>;

/// A product's sizes on the host (constants where static). The kernel's
/// start with the batch, M, N and K; a convolution's ConvSizes follow.
struct ProductSizes {
  SmallVector<Value> kernel;
  /// Each dimension of the result.
  SmallVector<Value> result;
};
enum ProductSize : unsigned { kBatch, kM, kN, kK, kConvSizes };

/// The sizes of a product of the buffers of its operands a and b.
using SizesFn =
    std::function<ProductSizes(OpBuilder &, Location, Value a, Value b)>;

/// Along which of its two product dimensions an operand's elements are
/// consecutive in memory, in runs of `run` elements (static, or kDynamic):
/// A's rows are M and its columns K; B's rows are K and its columns N. A
/// gathered operand whose runs are not worth copying whole (an NCHW
/// convolution's input) says run = 1 along the dimension its neighbouring
/// elements mostly run.
struct OperandLayout {
  enum class Runs { None, Rows, Columns };
  Runs along = Runs::None;
  int64_t run = ShapedType::kDynamic;
  /// Which of ProductSizes::kernel is the run's length.
  unsigned runSize = kK;
};

struct Product;

/// An NCHW convolution read another way: its input and filter copied
/// channels-last first (NHWC and OHWI, by emitChannelsLastCopy), so that
/// the tensor-core kernel stages both 16 bytes at a time rather than
/// gathering the input element by element. What differs from the product
/// read in place: the operands' accesses and layouts, and the copies.
struct ChannelsLastOperands {
  AccessFn loadA, loadB;
  OperandLayout layoutA, layoutB;
  std::function<Value(OpBuilder &, Location, ArrayRef<Value>)> kStrideA,
      kStrideB;
  /// Emits the copies of the operand buffers `a` and `b` (host buffers,
  /// the product's sizes `sizes` on the host) before the product; returns
  /// the copies (flat).
  std::function<std::pair<Value, Value>(OpBuilder &, Location, Operation *,
                                        Value a, Value b, ArrayRef<Value> sizes,
                                        const GpuTarget &)>
      copy;
  /// Where set, the result's store for the copies' order of N (an NCHW
  /// filter gradient's N runs over the taps and then the channels, as x's
  /// NHWC copy has them, while dw stays OIHW): its columns are then not
  /// consecutive.
  AccessFn store;
};

/// An operand that is a dense row-major matrix of static sizes, `batches`
/// of them one after another (1 where every batch entry shares it): a
/// matmul's, which TMA can load (TiledProductSchedule::tma).
struct DenseMatrix {
  int64_t batches = 1, rows = 0, cols = 0;
  bool batched = false;
};

/// A product as the kernels see it: its sizes, the operands' and the
/// result's accesses, and the operands' layouts.
struct Product {
  SizesFn sizes;
  Value a, b;
  RankedTensorType resultType;
  AccessFn loadA, loadB, store;
  OperandLayout layoutA, layoutB;
  /// Where an operand's offset is affine in K (a matmul's), the offset
  /// between elements one K apart, from the kernel's sizes: the
  /// tensor-core kernel then advances its copies' sources by a constant per
  /// K tile. Null for gathered operands (a convolution's).
  using StrideFn = std::function<Value(OpBuilder &, Location, ArrayRef<Value>)>;
  StrideFn kStrideA, kStrideB;
  /// Where every size is static, a bound on the magnitude of any offset
  /// the kernel computes into an operand or the result, the overshoot of
  /// a partial tile and a convolution's padding included (-1: unknown).
  /// Under 2^31 the kernel's index arithmetic is 32-bit (kIndexBitsAttr).
  int64_t offsetBound = -1;
  /// Whether the result's columns (N) are consecutive in memory (a
  /// matmul's, an NHWC convolution's), so that neighbouring columns are
  /// one access; not an NCHW convolution's channels.
  bool consecutiveColumns = true;
  /// Where the result's rows (M) are consecutive in memory in runs of this
  /// many elements, each run starting at a multiple of it (an NCHW
  /// convolution's output positions, a plane of them; static), else 0:
  /// the tensor-core kernel then stores a column's rows 16 bytes at a time.
  int64_t resultRowRun = 0;
  /// Where set, operand A (M x K, or K x M where its runs are along M) and
  /// B (K x N, or N x K) as dense matrices.
  std::optional<DenseMatrix> matrixA, matrixB;
  /// Where set, the tensor-core kernel reads the operands this way.
  std::shared_ptr<ChannelsLastOperands> channelsLast;
};

/// A product kernel being built: its operand and result buffers, its sizes
/// and the epilogue's operands, inside the kernel.
struct ProductKernel {
  const Product &product;
  Kernel &kernel;
  Value a, b, c;
  /// ProductSizes::kernel, inside the kernel.
  SmallVector<Value> sizes;
  ArrayRef<PointwiseStep> epilogue;
  /// Each step's operand buffer, or null.
  SmallVector<Value> stepArgs;
  /// The accumulation type.
  Type acc;
  /// Where K is split at launch (TiledProductSchedule::splitKMax): the f32
  /// partial sums and the count of ranges, inside the kernel (pk.c is then
  /// the result, which the kernel stores where the count is 1).
  Value partials, splits;
  /// Where the operands are staged by TMA: their tensor maps (tmaMaps).
  Value mapA, mapB;

  /// Stores `sums` as result elements (batch, row, col), (batch, row, col +
  /// 1), ... after the epilogue, where (row, col) exists: several columns
  /// are one access, so the caller knows that they all exist, that they are
  /// consecutive in the result and the epilogue's operands, and aligned to
  /// the access.
  void store(OpBuilder &b, Location loc, Value batch, Value row, Value col,
             ValueRange sums) const;
  /// The epilogue applied to `sums`, the result elements at `offset`,
  /// `offset` + 1, ... in columns `col`, `col` + 1, ... (as `store` takes
  /// them; the elements must exist).
  SmallVector<Value> applyEpilogue(OpBuilder &b, Location loc, Value offset,
                                   Value col, ValueRange sums) const;
};

/// Where schedule `s` stages `p`'s operands by TMA (TiledProductSchedule::
/// tma): the tensor maps of the flat operand buffers `a` and `b`, made on
/// the host at `builder`, for the kernel to take as arguments. None where
/// the operands or the schedule do not allow it (the kernel then copies
/// by cp.async).
std::optional<std::pair<Value, Value>> tmaMaps(OpBuilder &builder, Location loc,
                                               const Product &p,
                                               const TiledProductSchedule &s,
                                               Value a, Value b);

/// The body of the tensor-core kernel of `pk` (schedule `s`, of kind
/// TensorCore), before the kernel's gpu.return.
void buildTensorCoreProduct(ProductKernel &pk, const TiledProductSchedule &s,
                            Location loc);
/// The body of the SIMT kernel of `pk` (schedule `s`, of kind Simt), before
/// the kernel's gpu.return.
void buildSimtProduct(ProductKernel &pk, const TiledProductSchedule &s,
                      Location loc);

/// The batch entry and first row and column of output tile `t` of
/// `tilesM` x `tilesN` tiles per batch entry of schedule `s`: groups of
/// s.tileGroupRows rows of tiles, each walked column by column, so that
/// consecutive tiles share the operands' panels in L2.
struct TileOrigin {
  Value batch, m0, n0;
};
TileOrigin tileOrigin(IndexMath &im, Value t, Value tilesM, Value tilesN,
                      const TiledProductSchedule &s);

/// A copy of the flat buffer `source`, [outer][channels][plane] elements
/// (sizes on the host), as [outer][plane][channels] in a new flat temporary,
/// by one kernel named after `op` and `what`.
Value emitChannelsLastCopy(OpBuilder &b, Location loc, Operation *op,
                           llvm::StringRef what, Value source, Value outer,
                           Value channels, Value plane,
                           const GpuTarget &target);

/// `x < bound` (unsigned), with a constant bound folded in.
Value lessThan(OpBuilder &b, Location loc, Value x, Value bound);

} // namespace mlir::nf::cuda

#endif // NORMFUSE_LIB_CODEGEN_CUDA_PRODUCTS_H
