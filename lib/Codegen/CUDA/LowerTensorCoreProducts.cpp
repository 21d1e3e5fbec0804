//===- LowerTensorCoreProducts.cpp - products on tensor cores ---*- C++ -*-===//
//
// Part of normfuse. The tensor-core body of a product kernel (Products.h)
// for f16/bf16 operands on sm_80 and newer, in upstream's nvgpu ops, which
// the printer turns into the prelude's mma.sync, ldmatrix and cp.async:
//
// - A block owns a tileM x tileN tile of one batch entry's result (and loops
//   over tiles while there are more than blocks); warpsM x warpsN warps each
//   own a (tileM / warpsM) x (tileN / warpsN) part of it as m16n8 f32
//   accumulators in registers. M, N and K may have any size. With a split
//   K (schedule.splitK > 1) a block's work is a tile over one range of K
//   tiles, and its f32 sums go to that range's slice of a temporary, which
//   a second kernel (LowerProducts.cpp, emitSplitSum) adds up.
// - Each operand is staged in shared memory as it lies in global memory:
//   rows along its outer dimension (M or N) with K consecutive, or rows
//   along K with M or N consecutive ("K-major"). Every thread copies 16-byte
//   runs (8 elements) with cp.async, zero-filled outside the product and in
//   a convolution's padding; `stages` K tiles are in flight, one commit
//   group each, and the K loop waits for the oldest; past the unit's last
//   K tile a thread commits an empty group. Where the runs are not whole
//   16-byte chunks (their length is not a multiple of 8, or not known),
//   the threads load the chunks element by element instead. Where an
//   operand is affine in K (a matmul's, a convolution's filter) in whole
//   chunks and K is a multiple of tileK, each copy's source is set once
//   per work unit and advances by a constant per K tile (SteadyCopies).
// - Addresses in shared memory a constant apart (a thread's chunks, a
//   warp's fragments 8 rows or more apart) are one register plus the
//   constant, which the printer makes ldmatrix's and cp.async's immediate
//   offset: the K loop holds about 2.5 instructions per mma.sync (4096^3
//   f16 on sm_90, from 5.3).
// - Stages of more than 48 KiB make the shared buffer dynamic (printed as
//   NF_DYNAMIC_SMEM, its size on the launch; SharedMemory.h).
// - Inside a row, 16-byte chunk c of row r sits at chunk c ^ f(r): the eight
//   rows that one ldmatrix phase reads fall in eight different bank groups.
// - Fragments come from shared memory by ldmatrix (.trans for a K-major
//   operand), and each warp runs (warpM / 16) x (warpN / 8) mma.sync per 16
//   of K.
// - The accumulators go through the fused epilogue to the result: through
//   shared memory and out in 16-byte stores where the result's rows are
//   whole 16-byte chunks, else a lane's column pair (or element) at a time.
//
// - wgmma (sm_90a): warpgroups multiply from the stages, laid out as its
//   canonical layouts; with `tma`, one thread stages each K tile by TMA
//   loads completing on a stage's mbarrier; warp specialized, a producer
//   warpgroup past the consumers issues them (or, without tensor maps,
//   copies the stages by cp.async and arrives on their mbarriers once its
//   copies have landed), stages are released on empty mbarriers, and the
//   consumers stage their result apart and meet
//   at a named barrier; in two teams (`pingpong`), each a whole tile of
//   every other unit, one team's K loop runs while the other stores
//   (docs/CUDA.md).
//
// The PTX ISA's fragment layouts this relies on are pinned by the
// simulator's tests (lib/Runtime/Sim/test/tensorcore.cu).
//
//===----------------------------------------------------------------------===//

#include "Products.h"

#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

/// Elements per 16-byte chunk: 8 of f16/bf16, 4 of f32 (tf32).
int64_t chunkElements(Type element) {
  return 16 / (element.getIntOrFloatBitWidth() / 8);
}

/// One operand's tiles in shared memory: `outer` (tileM for A, tileN for B)
/// by tileK, `stages` of them.
struct StagedOperand {
  bool isA;
  /// Rows of the shared tile run along K (the operand's consecutive
  /// elements run along M or N); else along the outer dimension.
  bool kMajor;
  int64_t outer, tileK;
  Type element;
  /// The block's shared memory, and where this operand's stages start.
  Value smem;
  int64_t base = 0;
  /// Elements per 16-byte chunk.
  int64_t chunk = chunkElements(element);
  /// Laid out for wgmma: a K-major operand's rows (along M or N) are
  /// blocks of 64 elements, `tileK` rows of 128 bytes each (wgmma's
  /// MN-major layout with the 128-byte swizzle); the other layout is
  /// already wgmma's K-major one (rows of tileK, one swizzle wide).
  bool wgmma = false;

  int64_t rowChunks() const { return (kMajor ? outer : tileK) / chunk; }
  int64_t rowElements() const { return rowChunks() * chunk; }
  /// Elements from one row of the stage to the next.
  int64_t rowStride() const { return wgmma && kMajor ? 64 : rowElements(); }
  int64_t stageElements() const { return outer * tileK; }

  /// The element offset, inside a stage, of chunk `logical` of row `row`,
  /// swizzled: the eight rows one ldmatrix phase reads hit eight
  /// different 16-byte bank groups of a 128-byte line. (It is the
  /// hardware's swizzle of the address, bits 4-6 XOR bits 7-9, where the
  /// stage is 1024-byte aligned: rows of 128 bytes take row % 8, of 64
  /// bytes (row / 2) % 4, of 32 bytes (row / 4) % 2.)
  Value chunkOffset(IndexMath &im, Value row, Value logical) const {
    if (wgmma && kMajor) {
      Value block = im.div(logical, 8);
      Value physical = im.b.create<arith::XOrIOp>(im.loc, im.rem(logical, 8),
                                                  im.rem(row, 8));
      return im.add(im.mul(block, 64 * tileK),
                    im.madd(row, 64, im.mul(physical, chunk)));
    }
    int64_t r = rowChunks();
    int64_t mask = std::min<int64_t>(r, 8) - 1;
    int64_t rowsPerLine = std::max<int64_t>(1, 8 / r);
    Value bits = im.rem(im.div(row, rowsPerLine), mask + 1);
    Value physical = im.b.create<arith::XOrIOp>(im.loc, logical, bits);
    return im.madd(row, r * chunk, im.mul(physical, chunk));
  }
};

/// Zero of `type`.
Value zeroOf(OpBuilder &b, Location loc, Type type) {
  return b.create<arith::ConstantOp>(loc, b.getZeroAttr(type)).getResult();
}

/// Where one chunk of an operand's tile comes from and goes to.
struct Chunk {
  /// The chunk's first element: its row and column in the tile's rows.
  Value row, first;
  /// Its element offset in shared memory: dst + disp (inside a stage, as
  /// threadChunks gives it; in the block's shared memory for loadStage).
  Value dst;
  int64_t disp = 0;
};

/// `base` + `x` + `disp`, with the constant last: the printer makes it the
/// immediate offset of ldmatrix and cp.async.
Value displace(IndexMath &im, Value base, Value x, int64_t disp) {
  Value sum = im.add(base, x);
  return disp ? im.add(sum, im.c(disp)) : sum;
}

/// Copies a whole 16-byte run by cp.async, zero-filled where it lies
/// outside the product (or at or past `kLimit`, the end of the block's
/// range of K) or in a convolution's padding.
void copyRun(OpBuilder &b, Location loc, ProductKernel &pk,
             const StagedOperand &t, const Chunk &c, Value batch, Value o0,
             Value k0, Value kLimit) {
  IndexMath im{b, loc};
  const Product &p = pk.product;
  Value outer = im.add(o0, t.kMajor ? c.first : c.row);
  Value k = im.add(k0, t.kMajor ? c.row : c.first);
  Access at = t.isA ? p.loadA(b, loc, pk.sizes, batch, outer, k)
                    : p.loadB(b, loc, pk.sizes, batch, k, outer);
  // A run is all inside or all outside: its length divides the length of
  // the consecutive dimension (and kLimit, K or a multiple of tileK), and a
  // convolution's runs stay in one tap.
  Value valid =
      im.both(im.both(lessThan(b, loc, outer, pk.sizes[t.isA ? kM : kN]),
                      lessThan(b, loc, k, kLimit)),
              at.valid);
  Value src = b.create<arith::SelectOp>(loc, valid, at.offset, im.c(0));
  Value elements =
      b.create<arith::SelectOp>(loc, valid, im.c(t.chunk), im.c(0));
  b.create<nvgpu::DeviceAsyncCopyOp>(
      loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), t.smem,
      ValueRange{c.dst}, t.isA ? pk.a : pk.b, ValueRange{src},
      b.getIndexAttr(t.chunk), elements, b.getUnitAttr());
}

/// Loads a chunk element by element through registers, zeros outside the
/// product (the stores are done before the barrier that precedes any
/// read): for runs that are not whole 16-byte chunks.
void copyElements(OpBuilder &b, Location loc, ProductKernel &pk,
                  const StagedOperand &t, const Chunk &c, Value batch, Value o0,
                  Value k0, Value kLimit) {
  IndexMath im{b, loc};
  const Product &p = pk.product;
  Value buffer = t.isA ? pk.a : pk.b;
  for (int64_t l = 0; l < t.chunk; ++l) {
    Value along = im.add(c.first, im.c(l));
    Value outer = im.add(o0, t.kMajor ? along : c.row);
    Value k = im.add(k0, t.kMajor ? c.row : along);
    Value inside = im.both(lessThan(b, loc, outer, pk.sizes[t.isA ? kM : kN]),
                           lessThan(b, loc, k, kLimit));
    auto branch = b.create<scf::IfOp>(
        loc, inside,
        [&](OpBuilder &ib, Location il) {
          Access at = t.isA ? p.loadA(ib, il, pk.sizes, batch, outer, k)
                            : p.loadB(ib, il, pk.sizes, batch, k, outer);
          auto load = [&](OpBuilder &lb, Location ll) {
            lb.create<scf::YieldOp>(
                ll,
                lb.create<memref::LoadOp>(ll, buffer, at.offset).getResult());
          };
          if (!at.valid) {
            load(ib, il);
            return;
          }
          auto padded = ib.create<scf::IfOp>(
              il, at.valid, load, [&](OpBuilder &zb, Location zl) {
                zb.create<scf::YieldOp>(zl, zeroOf(zb, zl, t.element));
              });
          ib.create<scf::YieldOp>(il, padded.getResult(0));
        },
        [&](OpBuilder &zb, Location zl) {
          zb.create<scf::YieldOp>(zl, zeroOf(zb, zl, t.element));
        });
    b.create<memref::StoreOp>(loc, branch.getResult(0), t.smem,
                              im.add(c.dst, im.c(l)));
  }
}

/// The chunks of one operand's stage that thread `tid` copies: chunks tid,
/// tid + threads, ... (their shared-memory offsets inside a stage). Where
/// `threads` chunks are whole groups of 8 rows (which the swizzle repeats
/// every), chunk tid + i threads is i * threads chunks after chunk tid.
SmallVector<Chunk> threadChunks(IndexMath &im, const StagedOperand &t,
                                int64_t threads, Value tid) {
  int64_t r = t.rowChunks();
  bool repeats = threads % (8 * r) == 0;
  SmallVector<Chunk> chunks;
  for (int64_t i = 0; i < t.stageElements() / t.chunk / threads; ++i) {
    Chunk c;
    if (repeats && i > 0) {
      c = chunks.front();
      c.row = im.add(c.row, im.c(i * threads / r));
      c.disp = i * threads / r * t.rowStride();
      chunks.push_back(c);
      continue;
    }
    Value e = im.add(tid, im.c(i * threads));
    c.row = im.div(e, r);
    Value chunk = im.rem(e, r);
    c.first = im.mul(chunk, t.chunk);
    c.dst = t.chunkOffset(im, c.row, chunk);
    chunks.push_back(c);
  }
  return chunks;
}

/// A thread's copies of one operand whose source offset is affine in K, in
/// whole 16-byte runs, with K a multiple of tileK (a matmul's operands at
/// transformer sizes): every copied tile lies inside K, so each chunk's
/// source only advances by `step` per K tile from `src` (the work unit's
/// first K tile), and whether it exists (`elements`: 8, or 0 outside M or
/// N, where the source stays a row that exists) is set once per unit.
struct SteadyCopies {
  SmallVector<Value> src, elements;
  Value step;
};

/// Whether operand `t`'s copies can be steady (SteadyCopies).
bool canCopySteadily(const ProductKernel &pk, const StagedOperand &t) {
  const Product &p = pk.product;
  const OperandLayout &layout = t.isA ? p.layoutA : p.layoutB;
  int64_t k = constantOr(pk.sizes[kK]);
  return (t.isA ? p.kStrideA : p.kStrideB) &&
         layout.run != ShapedType::kDynamic && layout.run % t.chunk == 0 &&
         k != ShapedType::kDynamic && k % t.tileK == 0;
}

SteadyCopies steadyCopies(OpBuilder &b, Location loc, ProductKernel &pk,
                          const StagedOperand &t, ArrayRef<Chunk> chunks,
                          Value batch, Value o0, Value kFirst) {
  IndexMath im{b, loc};
  const Product &p = pk.product;
  SteadyCopies sc;
  sc.step =
      im.mul((t.isA ? p.kStrideA : p.kStrideB)(b, loc, pk.sizes), t.tileK);
  for (const Chunk &c : chunks) {
    Value outer = im.add(o0, t.kMajor ? c.first : c.row);
    Value k = im.add(kFirst, t.kMajor ? c.row : c.first);
    Value exists = lessThan(b, loc, outer, pk.sizes[t.isA ? kM : kN]);
    Value row = b.create<arith::SelectOp>(loc, exists, outer, im.c(0));
    Access at = t.isA ? p.loadA(b, loc, pk.sizes, batch, row, k)
                      : p.loadB(b, loc, pk.sizes, batch, k, row);
    sc.src.push_back(at.offset);
    sc.elements.push_back(
        b.create<arith::SelectOp>(loc, exists, im.c(t.chunk), im.c(0)));
  }
  return sc;
}

/// Stages K tile `tile` (of the work unit) by `sc`'s copies into stage
/// `slot`.
void loadStageSteadily(OpBuilder &b, Location loc, ProductKernel &pk,
                       const StagedOperand &t, ArrayRef<Chunk> chunks,
                       const SteadyCopies &sc, Value slot, Value tile) {
  IndexMath im{b, loc};
  Value base = im.mul(slot, t.stageElements());
  Value advance = im.mul(tile, sc.step);
  for (auto [i, c] : llvm::enumerate(chunks))
    b.create<nvgpu::DeviceAsyncCopyOp>(
        loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), t.smem,
        ValueRange{displace(im, base, c.dst, t.base + c.disp)},
        t.isA ? pk.a : pk.b, ValueRange{im.add(sc.src[i], advance)},
        b.getIndexAttr(t.chunk), sc.elements[i], b.getUnitAttr());
}

/// Stages one operand's tile at (o0, k0) into stage `slot`, zeros from
/// K index `kLimit` on: each thread takes its `chunks`. Runs of a length
/// known only on the host take cp.async where it turns out a multiple of 8.
void loadStage(OpBuilder &b, Location loc, ProductKernel &pk,
               const StagedOperand &t, ArrayRef<Chunk> chunks, Value slot,
               Value batch, Value o0, Value k0, Value kLimit) {
  IndexMath im{b, loc};
  Value base = im.mul(slot, t.stageElements());
  const OperandLayout &layout = t.isA ? pk.product.layoutA : pk.product.layoutB;
  Value wholeRuns;
  if (layout.run == ShapedType::kDynamic)
    wholeRuns = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::eq,
        im.rem(pk.sizes[layout.runSize], t.chunk), im.c(0));
  for (Chunk c : chunks) {
    c.dst = displace(im, base, c.dst, t.base + c.disp);
    c.disp = 0;
    if (!wholeRuns) {
      (layout.run % t.chunk == 0 ? copyRun : copyElements)(
          b, loc, pk, t, c, batch, o0, k0, kLimit);
      continue;
    }
    b.create<scf::IfOp>(
        loc, wholeRuns,
        [&](OpBuilder &rb, Location rl) {
          copyRun(rb, rl, pk, t, c, batch, o0, k0, kLimit);
          rb.create<scf::YieldOp>(rl);
        },
        [&](OpBuilder &eb, Location el) {
          copyElements(eb, el, pk, t, c, batch, o0, k0, kLimit);
          eb.create<scf::YieldOp>(el);
        });
  }
}

/// The shared-memory offset (inside a stage) of the row that lane `lane`
/// gives ldmatrix .x4 for the 16 x 16 (f16/bf16; 16 x 8 of f32) fragment
/// block (outerBase, kBase): of its four matrices of 8 rows of a 16-byte
/// chunk (c = the chunk's elements), A's go (outer 0-7, k 0 to c-1), (8-15,
/// 0 to c-1), (0-7, c to 2c-1), (8-15, c to 2c-1) as the A fragment's
/// registers; B's go (k 0 to c-1, n 0-7), (c to 2c-1, 0-7), (0 to c-1,
/// 8-15), (c to 2c-1, 8-15), two n8 tiles' B fragments. (.trans, for a
/// K-major operand, transposes 16-bit elements only.)
Value fragmentRow(IndexMath &im, const StagedOperand &t, Value lane,
                  Value outerBase, Value kBase) {
  Value matrix = im.div(lane, 8), r = im.rem(lane, 8);
  Value low = im.rem(matrix, 2), high = im.div(matrix, 2);
  Value outerHalf = t.isA ? low : high, kHalf = t.isA ? high : low;
  if (t.kMajor) {
    Value row = im.add(kBase, im.madd(kHalf, 8, r));
    Value chunk = im.add(im.div(outerBase, t.chunk), outerHalf);
    return t.chunkOffset(im, row, chunk);
  }
  Value row = im.add(outerBase, im.madd(outerHalf, 8, r));
  Value chunk = im.add(im.div(kBase, t.chunk), kHalf);
  return t.chunkOffset(im, row, chunk);
}

/// The shared-memory offsets (inside a stage) of the four f32 elements lane
/// `lane` (g = lane / 4, t = lane % 4) holds of the tf32 fragment block at
/// (outerBase, kBase) of a K-major operand, which ldmatrix cannot give:
/// A's m16n8k8 fragment, element i at (outer g + 8 (i % 2), k t + 4 (i /
/// 2)); B's fragments of two n8 tiles, element r at (outer 8 (r / 2) + g,
/// k t + 4 (r % 2)) (the PTX ISA's m16n8k8 .tf32 layouts).
SmallVector<Value, 4> scalarFragment(IndexMath &im, const StagedOperand &t,
                                     Value lane, Value outerBase, Value kBase) {
  Value g = im.div(lane, 4), q = im.rem(lane, 4);
  SmallVector<Value, 4> at;
  for (int64_t e = 0; e < 4; ++e) {
    int64_t outerStep = t.isA ? 8 * (e % 2) : 8 * (e / 2);
    int64_t kStep = t.isA ? 4 * (e / 2) : 4 * (e % 2);
    Value outer = im.add(outerBase, im.add(g, im.c(outerStep)));
    Value k = im.add(kBase, im.add(q, im.c(kStep)));
    at.push_back(im.add(t.chunkOffset(im, k, im.div(outer, t.chunk)),
                        im.rem(outer, t.chunk)));
  }
  return at;
}

/// One K tile of a warpgroup's part of the tile (groupM x groupN at
/// (groupRow, groupCol)) by wgmma: a wgmma.fence, for each 16 of K each
/// m64 slab's accumulators += its rows of A times the group's columns of B
/// from the stages at aBase and bBase (descriptors of the layouts
/// StagedOperand gives), one commit, and a wait that leaves this group in
/// flight (the one before is done: its stage is the next to be written).
void warpgroupTile(OpBuilder &b, Location loc, const StagedOperand &a,
                   const StagedOperand &bt, Value aBase, Value bBase,
                   Value groupRow, Value groupCol, int64_t groupN,
                   SmallVectorImpl<Value> &acc) {
  IndexMath im{b, loc};
  int64_t elementBytes = a.element.getIntOrFloatBitWidth() / 8;
  // The element offset of operand t's rows [outer0, +64 or +groupN) at K
  // step q, and its descriptor's swizzle and byte offsets.
  struct Desc {
    Value at;
    int64_t swizzle, leading, stride;
  };
  auto describe = [&](const StagedOperand &t, Value base, Value outer0,
                      int64_t q) {
    Desc d;
    if (t.kMajor) {
      // MN-major: blocks of 64 along M or N, tileK rows of 128 bytes.
      d.at = im.add(base, im.add(im.mul(im.div(outer0, 64), 64 * t.tileK),
                                 im.c(16 * 64 * q + t.base)));
      d.swizzle = 128;
      d.leading = 64 * t.tileK * elementBytes;
      d.stride = 8 * 128;
    } else {
      // K-major: rows of tileK (one swizzle wide), 8 of them a stride.
      d.at =
          im.add(base, im.add(im.mul(outer0, t.tileK), im.c(16 * q + t.base)));
      d.swizzle = t.tileK * elementBytes;
      d.leading = 16;
      d.stride = 8 * t.tileK * elementBytes;
    }
    return d;
  };
  b.create<nf::WarpgroupFenceOp>(loc);
  for (int64_t q = 0; q < a.tileK / 16; ++q) {
    Desc db = describe(bt, bBase, groupCol, q);
    for (auto [i, c] : llvm::enumerate(acc)) {
      Desc da = describe(a, aBase, im.add(groupRow, im.c(64 * int64_t(i))), q);
      c = b.create<nf::WarpgroupMmaOp>(loc, c.getType(), c, a.smem, da.at,
                                       db.at, groupN, a.kMajor, bt.kMajor,
                                       da.swizzle, da.leading, da.stride,
                                       db.swizzle, db.leading, db.stride);
    }
  }
  b.create<nf::WarpgroupCommitOp>(loc);
  b.create<nf::WarpgroupWaitOp>(loc, 1);
}

/// How TMA loads stage one operand: boxes of the operand's matrix (its
/// elements along its rows first) that land as StagedOperand lays the
/// stage out for wgmma. An operand whose rows run along K (not kMajor) is
/// one box of tileK x outer, each row of the stage one swizzle wide; one
/// whose rows run along M or N (kMajor) is outer / 64 boxes of 64 x tileK,
/// blocks of 64 rows of 128 bytes (the 128-byte swizzle).
struct TmaBoxes {
  int64_t boxCols, boxRows, count, swizzle;
};

TmaBoxes tmaBoxes(bool kMajor, int64_t outer, int64_t tileK,
                  int64_t elementBytes) {
  if (kMajor)
    return {64, tileK, outer / 64, 128};
  return {tileK, outer, 1, tileK * elementBytes};
}

/// Stages the K tile at `k0` of the unit at (batch, o0) of operand `t` into
/// the stage at element `stage` by TMA loads through `map`, completing on
/// mbarrier `slot` of `bars`. With `parts` > 1, only part `part` of the
/// tile's outer dimension (its boxes, or its box of outer / parts rows),
/// multicast to the cluster's blocks in `mask`.
void tmaStage(OpBuilder &b, Location loc, const StagedOperand &t, Value map,
              Value bars, Value slot, Value stage, Value batch, Value o0,
              Value k0, bool batched, int64_t parts = 1, Value part = Value(),
              Value mask = Value()) {
  IndexMath im{b, loc};
  int64_t elementBytes = t.element.getIntOrFloatBitWidth() / 8;
  TmaBoxes boxes = tmaBoxes(t.kMajor, t.outer / parts, t.tileK, elementBytes);
  int64_t boxElements = boxes.boxCols * boxes.boxRows;
  if (parts > 1) {
    // The part's boxes follow the parts before it, in the stage and along
    // the outer dimension.
    stage = im.add(stage, im.mul(part, boxes.count * boxElements));
    o0 = im.add(o0, im.mul(part, t.outer / parts));
  }
  for (int64_t j = 0; j < boxes.count; ++j) {
    Value dst = im.add(stage, im.c(t.base + j * boxElements));
    SmallVector<Value, 3> coords;
    if (t.kMajor)
      coords = {im.add(o0, im.c(64 * j)), k0};
    else
      coords = {k0, o0};
    if (batched)
      coords.push_back(batch);
    b.create<nf::TmaLoadOp>(loc, map, coords, t.smem, dst, bars, slot, mask);
  }
}

} // namespace

std::optional<std::pair<Value, Value>>
cuda::tmaMaps(OpBuilder &builder, Location loc, const Product &p,
              const TiledProductSchedule &s, Value a, Value b) {
  // (A split of K at launch has two kernels or more, and clusters no
  // split at all; a split into splitK ranges loads each range so.)
  if (!s.wgmma || !s.tma || s.splitKMax > 0 || (s.splitK > 1 && s.multicast) ||
      !p.matrixA || !p.matrixB)
    return std::nullopt;
  Type element = getElementTypeOrSelf(a.getType());
  int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
  using Runs = OperandLayout::Runs;
  auto map = [&](const DenseMatrix &m, bool kMajor, int64_t outer,
                 Value buffer) -> Value {
    TmaBoxes boxes = tmaBoxes(kMajor, outer, s.tileK, elementBytes);
    SmallVector<int64_t> dims{m.cols, m.rows}, strides{m.cols * elementBytes},
        box{boxes.boxCols, boxes.boxRows};
    if (m.batched && m.batches > 1) {
      dims.push_back(m.batches);
      strides.push_back(m.rows * m.cols * elementBytes);
      box.push_back(1);
    }
    return builder.create<nf::TensorMapOp>(loc, buffer, dims, strides, box,
                                           boxes.swizzle);
  };
  // TMA reads rows that start 16 bytes apart at least, of a tensor that
  // has elements (an empty product is cp.async's: no copy at all).
  for (const DenseMatrix *m : {&*p.matrixA, &*p.matrixB})
    if ((m->cols * elementBytes) % 16 || m->rows < 1 || m->cols < 1 ||
        m->batches < 1)
      return std::nullopt;
  return std::make_pair(
      map(*p.matrixA, p.layoutA.along == Runs::Rows, s.tileM, a),
      map(*p.matrixB, p.layoutB.along == Runs::Columns,
          s.multicast ? s.tileN / 2 : s.tileN, b));
}

void cuda::buildTensorCoreProduct(ProductKernel &pk,
                                  const TiledProductSchedule &s, Location loc) {
  Kernel &k = pk.kernel;
  OpBuilder &kb = k.body;
  MLIRContext *ctx = kb.getContext();
  IndexMath im{kb, loc};
  Type element = getElementTypeOrSelf(pk.a.getType());
  int64_t warpM = s.tileM / s.warpsM, warpN = s.tileN / s.warpsN;
  int64_t fragsM = warpM / 16, fragsN = warpN / 8;
  // wgmma: warpgroups of 4 warps, (warpsM / 4) x warpsN of them, each
  // owning groupM x groupN of the tile as fragsM m64 accumulators of
  // groupN / 2 f32 a thread (warp w of the group rows 16 w to 16 w + 15 of
  // each: mma.sync's m16n8 fragments side by side, fragsN of them).
  bool wgmma = s.wgmma;
  // TMA loads stage the operands where the host made their tensor maps.
  bool tma = wgmma && pk.mapA && pk.mapB;
  // Warp specialized, a producer warpgroup, the block's last, stages them
  // (by TMA loads, or by cp.async where there are no tensor maps): the
  // first `consumers` threads are the consumers, which run the rest.
  bool ws = wgmma && s.warpSpecialized;
  // ... in clusters of two blocks that share B's tiles (by TMA loads).
  bool mc = ws && tma && s.multicast;
  // ... by two teams of consumers that take the units in turns, each
  // owning a whole tile, its staging buffer and its named barrier.
  bool pp = ws && s.pingpong;
  int64_t teams = pp ? 2 : 1;
  // The consumers (every thread but the producer's), and a team's.
  int64_t consumers =
      s.blockSize() - (ws ? TiledProductSchedule::kProducerThreads : 0);
  int64_t threads = consumers / teams;
  int64_t groupM = wgmma ? s.tileM / (s.warpsM / 4) : 0;
  int64_t groupN = s.tileN / s.warpsN;
  if (wgmma) {
    fragsM = groupM / 64;
    fragsN = groupN / 8;
  }
  // Rows from one accumulator fragment to the next of a warp.
  int64_t fragmentRows = wgmma ? 64 : 16;

  using Runs = OperandLayout::Runs;
  StagedOperand a{true,    pk.product.layoutA.along == Runs::Rows,
                  s.tileM, s.tileK,
                  element, Value()};
  StagedOperand b{false,   pk.product.layoutB.along == Runs::Columns,
                  s.tileN, s.tileK,
                  element, Value()};
  // Elements per 16-byte chunk, and K per mma.sync: m16n8k16 of f16/bf16,
  // m16n8k8 of f32 as tf32 (8 of 16 bytes' chunks of K either way).
  bool tf32 = element.isF32();
  int64_t chunk = a.chunk, kStep = 2 * chunk;
  // K-major tf32 fragments are loaded element by element.
  bool aScalar = tf32 && a.kMajor, bScalar = tf32 && b.kMajor;
  a.wgmma = b.wgmma = wgmma;
  // One shared buffer: A's stages, then B's; the result tile reuses it.
  b.base = s.stages * a.stageElements();
  int64_t smemElements = b.base + s.stages * b.stageElements();
  // Warp specialized, the result tile is staged past the stages, which the
  // producer fills with the next unit's K tiles meanwhile (a team's each).
  int64_t stagingBase = ws ? smemElements : 0;
  if (ws)
    smemElements += teams * s.tileM * s.tileN;
  a.smem = b.smem = addWorkgroupBuffer(k, loc, smemElements, element);
  // With TMA, an mbarrier a stage, which its loads complete on.
  // Warp specialized, then as many that say a stage is empty again, which
  // the consumers arrive on; in teams, then one a team that says its turn
  // at the K loop has come (`order`).
  int64_t order = 2 * s.stages;
  Value bars =
      tma || ws
          ? addWorkgroupBuffer(k, loc, (ws ? 2 : 1) * s.stages + (pp ? 2 : 0),
                               kb.getI64Type())
          : Value();

  Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value grid = kb.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
  // A consumer's team and its thread in the team (the block's thread
  // where one team).
  Value team = pp ? im.div(tid, threads) : im.c(0);
  Value teamTid = pp ? im.rem(tid, threads) : tid;
  Value warp = im.div(teamTid, GpuTarget::kWarpSize);
  Value lane = im.rem(tid, GpuTarget::kWarpSize);
  Value warpRow, warpCol, groupRow, groupCol;
  if (wgmma) {
    Value group = im.div(warp, 4);
    groupRow = im.mul(im.div(group, s.warpsN), groupM);
    groupCol = im.mul(im.rem(group, s.warpsN), groupN);
    warpRow = im.add(groupRow, im.mul(im.rem(warp, 4), 16));
    warpCol = groupCol;
  } else {
    warpRow = im.mul(im.div(warp, s.warpsN), warpM);
    warpCol = im.mul(im.rem(warp, s.warpsN), warpN);
  }
  // Each lane's ldmatrix rows inside a stage, once for the kernel: A's
  // fragment i and B's fragment pair j (fragments j and j + 1) at K step
  // kk / 16. Rows 8 apart have the same swizzle (chunkOffset repeats every
  // 8 rows), so fragments a multiple of 8 rows from the first computed
  // are that many rows on: a constant the compiler folds into ldmatrix's
  // address, which leaves a few registers of offsets live in the K loop.
  int64_t kSteps = s.tileK / kStep;
  using Displaced = std::pair<Value, int64_t>;
  auto fragmentOffsets = [&](const StagedOperand &t, Value outerBase,
                             int64_t count, int64_t step) {
    // [outer fragment][K step]: rows run along K (kMajor) or along the
    // outer dimension, where the steps are constants.
    SmallVector<SmallVector<Displaced>> at(count,
                                           SmallVector<Displaced>(kSteps));
    for (int64_t f = 0; f < count; ++f)
      for (int64_t q = 0; q < kSteps; ++q) {
        if (t.kMajor ? q > 0 : f > 0) {
          int64_t rows = t.kMajor ? kStep * q : step * f;
          Value first = t.kMajor ? at[f][0].first : at[0][q].first;
          at[f][q] = {first, rows * t.rowElements()};
          continue;
        }
        at[f][q] = {fragmentRow(im, t, lane, im.add(outerBase, im.c(step * f)),
                                im.c(kStep * q)),
                    0};
      }
    return at;
  };
  // K-major tf32 fragments: [fragment][K step][element]. The swizzle
  // repeats every 8 chunks along a row (two 16-wide fragments of f32) and
  // every 8 rows, so only the first two fragments' offsets are computed,
  // the rest a constant on.
  using Scalar = SmallVector<SmallVector<SmallVector<Displaced, 4>>>;
  auto scalarOffsets = [&](const StagedOperand &t, Value outerBase,
                           int64_t count) {
    int64_t period = 8 * t.chunk / 16;
    SmallVector<SmallVector<Value, 4>> first;
    for (int64_t f = 0; f < std::min(count, period); ++f)
      first.push_back(scalarFragment(im, t, lane,
                                     im.add(outerBase, im.c(16 * f)), im.c(0)));
    Scalar at(count, SmallVector<SmallVector<Displaced, 4>>(kSteps));
    for (int64_t f = 0; f < count; ++f)
      for (int64_t q = 0; q < kSteps; ++q)
        for (Value v : first[f % period])
          at[f][q].push_back(
              {v, (f / period) * 8 * t.chunk + kStep * q * t.rowElements()});
    return at;
  };
  SmallVector<SmallVector<Displaced>> aAt, bAt;
  Scalar aScalarAt, bScalarAt;
  if (aScalar)
    aScalarAt = scalarOffsets(a, warpRow, fragsM);
  else if (!wgmma)
    aAt = fragmentOffsets(a, warpRow, fragsM, 16);
  if (bScalar)
    bScalarAt = scalarOffsets(b, warpCol, fragsN / 2);
  else if (!wgmma)
    bAt = fragmentOffsets(b, warpCol, fragsN / 2, 16);
  // The chunks each thread copies by cp.async: the producer warpgroup's
  // threads' where warp specialized.
  SmallVector<Chunk> aChunks, bChunks;
  int64_t producers = TiledProductSchedule::kProducerThreads;
  if (!tma) {
    Value copier = ws ? im.sub(tid, im.c(consumers)) : tid;
    aChunks = threadChunks(im, a, ws ? producers : threads, copier);
    bChunks = threadChunks(im, b, ws ? producers : threads, copier);
  }
  bool aSteady = !tma && canCopySteadily(pk, a);
  bool bSteady = !tma && canCopySteadily(pk, b);
  // Thread 0 makes the mbarriers, each for one arrival (its own, with the
  // stage's bytes) a phase, before any thread uses them (staged by
  // cp.async, warp specialized: one of each producer thread, its copies
  // landed); warp specialized, the empty ones for an arrival of each
  // consumer.
  Value leader;
  if (tma || ws) {
    leader =
        kb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid, im.c(0));
    kb.create<scf::IfOp>(loc, leader, [&](OpBuilder &ib, Location il) {
      IndexMath xm{ib, il};
      for (int64_t st = 0; st < s.stages; ++st) {
        ib.create<nf::MbarrierInitOp>(il, bars, xm.c(st), tma ? 1 : producers);
        if (ws)
          ib.create<nf::MbarrierInitOp>(il, bars, xm.c(s.stages + st),
                                        threads * (mc ? 2 : 1));
      }
      for (int64_t w = 0; w < (pp ? 2 : 0); ++w)
        ib.create<nf::MbarrierInitOp>(il, bars, xm.c(order + w), threads);
      ib.create<nf::MbarrierInitFenceOp>(il);
      ib.create<scf::YieldOp>(il);
    });
    kb.create<gpu::BarrierOp>(loc);
    // In clusters, the other block's mbarriers are made too before either
    // block loads into it or arrives on them.
    if (mc)
      kb.create<nf::ClusterBarrierOp>(loc);
  }
  int64_t stageBytes = (a.stageElements() + b.stageElements()) *
                       (element.getIntOrFloatBitWidth() / 8);
  Value tilesM = im.ceilDiv(pk.sizes[kM], s.tileM);
  Value tilesN = im.ceilDiv(pk.sizes[kN], s.tileN);
  Value batchTiles = im.product(tilesM, tilesN);
  Value tiles = im.product(pk.sizes[kBatch], batchTiles);
  Value kTiles = im.ceilDiv(pk.sizes[kK], s.tileK);
  // With a split K, work unit u is tile u % tiles over K range u / tiles
  // (perSplit K tiles), its sums written to slice u / tiles of the f32
  // partial sums, [splits][batch][M][N]: in pk.c for a split of splitK
  // ranges, in pk.partials for one at launch (pk.splits ranges; where that
  // is 1, the sums go to the result in pk.c as unsplit).
  bool split = s.splitsK();
  Value splits = s.splitKMax > 0 ? pk.splits : im.c(s.splitK);
  Value units = split ? im.mul(tiles, splits) : tiles;
  Value perSplit = im.ceilDiv(kTiles, splits);
  Value resultElements =
      im.product(pk.sizes[kBatch], im.product(pk.sizes[kM], pk.sizes[kN]));
  // The blocks' walk over the units: block bid takes units bid, bid +
  // grid, ...; in clusters of two, cluster bid / 2 takes pairs of tiles
  // along M (of the same columns) a grid / 2 apart, the block of rank
  // bid % 2 the pair's second.
  Value unitFirst = bid, unitStep = grid, unitCount = units, rank, peer,
        pairTilesM;
  TiledProductSchedule pairs = s;
  if (mc) {
    rank = im.rem(bid, 2);
    peer = kb.create<arith::XOrIOp>(loc, rank, im.c(1));
    unitFirst = im.div(bid, 2);
    unitStep = im.div(grid, 2);
    pairTilesM = im.ceilDiv(tilesM, 2);
    unitCount = im.product(pk.sizes[kBatch], im.product(pairTilesM, tilesN));
    pairs.tileM = 2 * s.tileM;
    pairs.tileGroupRows = std::max<int64_t>(1, s.tileGroupRows / 2);
  }
  auto unitOrigin = [&](IndexMath &xm, Value u) {
    if (!mc)
      return tileOrigin(xm, u, tilesM, tilesN, s);
    TileOrigin o = tileOrigin(xm, u, pairTilesM, tilesN, pairs);
    o.m0 = xm.add(o.m0, xm.mul(rank, s.tileM));
    return o;
  };
  // Work unit u: its tile's origin, its K tiles [kBegin, kEnd) (`count` of
  // them) and its K indices below kLimit; with a split K, of range
  // u / tiles (none in clusters: they have no split).
  struct UnitWork {
    TileOrigin origin;
    Value range, kBegin, kEnd, kLimit, count;
  };
  auto unitWork = [&](IndexMath &xm, Value u) {
    UnitWork w;
    w.range = split ? xm.div(u, tiles) : Value();
    w.origin = unitOrigin(xm, split ? xm.rem(u, tiles) : u);
    w.kBegin = xm.c(0);
    w.kEnd = kTiles;
    w.kLimit = pk.sizes[kK];
    if (split) {
      w.kBegin = xm.mul(w.range, perSplit);
      w.kEnd = xm.b.create<arith::MaxUIOp>(
          xm.loc, w.kBegin,
          xm.b.create<arith::MinUIOp>(xm.loc, kTiles,
                                      xm.add(w.kBegin, perSplit)));
      w.kLimit = xm.b.create<arith::MinUIOp>(xm.loc, pk.sizes[kK],
                                             xm.mul(w.kEnd, s.tileK));
    }
    w.count = split ? xm.sub(w.kEnd, w.kBegin) : kTiles;
    return w;
  };

  auto accType = wgmma ? VectorType::get({groupN / 2}, kb.getF32Type())
                       : VectorType::get({2, 2}, kb.getF32Type());
  // Four 32-bit registers: ldmatrix .x4's, A's fragment, two B fragments.
  auto aFragType =
      VectorType::get({4, 32 / element.getIntOrFloatBitWidth()}, element);
  Value zero = kb.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(accType, kb.getF32FloatAttr(0.0f)));
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(ctx);

  // Warp specialized, the producer's walk over the block's work units and
  // their K tiles, K tile g of the block (counted over its units) into
  // stage g % stages once the consumers have emptied it (the empty
  // mbarrier's phase (g / stages - 1) % 2; the first pass waits for none):
  // `unit` sets up each unit, `tile` stages K tile i of it (block K tile
  // g) into `slot`. Returns the block's count of K tiles.
  using UnitFn =
      llvm::function_ref<void(OpBuilder &, Location, const UnitWork &)>;
  using TileFn = llvm::function_ref<void(
      OpBuilder &, Location, const UnitWork &, Value, Value, Value)>;
  auto producerWalk = [&](OpBuilder &pb, Location pl, UnitFn unit,
                          TileFn tile) -> Value {
    IndexMath pm{pb, pl};
    auto unitLoop = pb.create<scf::ForOp>(
        pl, unitFirst, unitCount, unitStep, ValueRange{pm.c(0)},
        [&](OpBuilder &ub, Location ul, Value u, ValueRange unitG) {
          IndexMath um{ub, ul};
          UnitWork work = unitWork(um, u);
          unit(ub, ul, work);
          auto kLoop = ub.create<scf::ForOp>(
              ul, um.c(0), work.count, um.c(1), unitG,
              [&](OpBuilder &lb, Location ll, Value i, ValueRange g) {
                IndexMath lm{lb, ll};
                Value slot = lm.rem(g[0], s.stages);
                Value parity = lb.create<arith::XOrIOp>(
                    ll, lm.rem(lm.div(g[0], s.stages), 2), lm.c(1));
                lb.create<nf::MbarrierWaitOp>(
                    ll, bars, lm.add(slot, lm.c(s.stages)), parity);
                tile(lb, ll, work, i, g[0], slot);
                lb.create<scf::YieldOp>(ll, lm.add(g[0], lm.c(1)));
              });
          ub.create<scf::YieldOp>(ul, kLoop.getResults());
        });
    return unitLoop.getResult(0);
  };
  // By TMA: the producer warpgroup's first thread expects each stage's
  // bytes on its full mbarrier and loads its boxes. The rest of the
  // warpgroup exits; the consumers run what follows.
  auto stageByTma = [&](OpBuilder &pb, Location pl) {
    IndexMath pm{pb, pl};
    Value last = producerWalk(
        pb, pl, [](OpBuilder &, Location, const UnitWork &) {},
        [&](OpBuilder &lb, Location ll, const UnitWork &work, Value i,
            Value /*g*/, Value slot) {
          IndexMath lm{lb, ll};
          const TileOrigin &origin = work.origin;
          lb.create<nf::MbarrierArriveExpectTxOp>(ll, bars, slot, stageBytes);
          Value k0 = lm.mul(lm.add(work.kBegin, i), s.tileK);
          const Product &p = pk.product;
          tmaStage(lb, ll, a, pk.mapA, bars, slot,
                   lm.mul(slot, a.stageElements()), origin.batch, origin.m0, k0,
                   p.matrixA->batched && p.matrixA->batches > 1);
          // In clusters, this block's half of B's tile, into both.
          tmaStage(lb, ll, b, pk.mapB, bars, slot,
                   lm.mul(slot, b.stageElements()), origin.batch, origin.n0, k0,
                   p.matrixB->batched && p.matrixB->batches > 1, mc ? 2 : 1,
                   rank, mc ? lm.c(3) : Value());
        });
    // In clusters, the other block's consumers arrive on this block's
    // empty mbarriers until its last tile: the block stays until every
    // stage is empty (as the next K tiles would wait).
    if (mc) {
      pb.create<scf::ForOp>(
          pl, last, pm.add(last, pm.c(s.stages)), pm.c(1), ValueRange{},
          [&](OpBuilder &wb, Location wl, Value g, ValueRange) {
            IndexMath wm{wb, wl};
            Value parity = wb.create<arith::XOrIOp>(
                wl, wm.rem(wm.div(g, s.stages), 2), wm.c(1));
            wb.create<nf::MbarrierWaitOp>(
                wl, bars, wm.add(wm.rem(g, s.stages), wm.c(s.stages)), parity);
            wb.create<scf::YieldOp>(wl);
          });
    }
  };
  // By cp.async (no tensor maps): every producer thread copies its chunks
  // of each K tile, one commit group a K tile; once the group of K tile
  // g - 1 has landed (wait_group 1) it makes its copies visible to wgmma
  // (fence.proxy.async) and arrives on that stage's full mbarrier, and
  // after its last K tile on the last's. (One K tile behind: the
  // consumers release K tile g - stages once they have K tile
  // g - stages + 1, which has arrived by then with 3 stages or more.)
  auto stageByCopies = [&](OpBuilder &pb, Location pl) {
    IndexMath pm{pb, pl};
    auto landed = [&](OpBuilder &xb, Location xl, Value group, int64_t newer,
                      Value g) {
      IndexMath xm{xb, xl};
      xb.create<nvgpu::DeviceAsyncWaitOp>(xl, group,
                                          xb.getI32IntegerAttr(newer));
      xb.create<nf::AsyncProxyFenceOp>(xl);
      xb.create<nf::MbarrierArriveOp>(xl, bars, xm.rem(g, s.stages),
                                      /*rank=*/Value());
    };
    auto commit = [&](OpBuilder &xb, Location xl) {
      auto group = xb.create<nvgpu::DeviceAsyncCreateGroupOp>(xl, tokenType,
                                                              ValueRange{});
      group->setAttr(kCommitPendingAttr, xb.getUnitAttr());
      return group.getResult();
    };
    SteadyCopies aSc, bSc;
    Value total = producerWalk(
        pb, pl,
        [&](OpBuilder &ub, Location ul, const UnitWork &work) {
          const TileOrigin &o = work.origin;
          Value kFirst = IndexMath{ub, ul}.mul(work.kBegin, s.tileK);
          if (aSteady)
            aSc = steadyCopies(ub, ul, pk, a, aChunks, o.batch, o.m0, kFirst);
          if (bSteady)
            bSc = steadyCopies(ub, ul, pk, b, bChunks, o.batch, o.n0, kFirst);
        },
        [&](OpBuilder &lb, Location ll, const UnitWork &work, Value i, Value g,
            Value slot) {
          IndexMath lm{lb, ll};
          const TileOrigin &o = work.origin;
          Value k0 = lm.mul(lm.add(work.kBegin, i), s.tileK);
          if (aSteady)
            loadStageSteadily(lb, ll, pk, a, aChunks, aSc, slot, i);
          else
            loadStage(lb, ll, pk, a, aChunks, slot, o.batch, o.m0, k0,
                      work.kLimit);
          if (bSteady)
            loadStageSteadily(lb, ll, pk, b, bChunks, bSc, slot, i);
          else
            loadStage(lb, ll, pk, b, bChunks, slot, o.batch, o.n0, k0,
                      work.kLimit);
          Value group = commit(lb, ll);
          lb.create<scf::IfOp>(ll,
                               lb.create<arith::CmpIOp>(
                                   ll, arith::CmpIPredicate::ugt, g, lm.c(0)),
                               [&](OpBuilder &rb, Location rl) {
                                 IndexMath rm{rb, rl};
                                 landed(rb, rl, group, 1, rm.sub(g, rm.c(1)));
                                 rb.create<scf::YieldOp>(rl);
                               });
        });
    pb.create<scf::IfOp>(
        pl,
        pb.create<arith::CmpIOp>(pl, arith::CmpIPredicate::ugt, total, pm.c(0)),
        [&](OpBuilder &rb, Location rl) {
          IndexMath rm{rb, rl};
          landed(rb, rl, commit(rb, rl), 0, rm.sub(total, rm.c(1)));
          rb.create<scf::YieldOp>(rl);
        });
  };
  // Warp specialized: the producer warpgroup (past the consumers) stages
  // the K tiles; the consumers run what follows.
  std::optional<OpBuilder::InsertionGuard> consumerGuard;
  if (ws) {
    auto role = kb.create<scf::IfOp>(
        loc,
        kb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, tid,
                                 im.c(consumers)),
        /*withElseRegion=*/true);
    consumerGuard.emplace(kb);
    // Two or more consumer warpgroups: the producer gives back registers
    // it does not need and the consumers take them (setmaxnreg, each
    // role's first act, one branch of this `if` each).
    int64_t raised = s.consumerRegisters();
    if (raised)
      k.func->setAttr(kLaunchRegistersAttr,
                      kb.getI64IntegerAttr(s.launchRegisters()));
    kb.setInsertionPoint(role.thenBlock()->getTerminator());
    if (raised)
      kb.create<nf::SetMaxRegistersOp>(loc, /*increase=*/false,
                                       s.producerRegisters());
    if (tma) {
      kb.create<scf::IfOp>(loc,
                           kb.create<arith::CmpIOp>(loc,
                                                    arith::CmpIPredicate::eq,
                                                    tid, im.c(consumers)),
                           [&](OpBuilder &pb, Location pl) {
                             stageByTma(pb, pl);
                             pb.create<scf::YieldOp>(pl);
                           });
    } else {
      stageByCopies(kb, loc);
    }
    kb.setInsertionPoint(role.elseBlock()->getTerminator());
    if (raised)
      kb.create<nf::SetMaxRegistersOp>(loc, /*increase=*/true, raised);
  }

  // Warp specialized: where `after` > 0 K tiles have been run, this
  // consumer arrives on the empty mbarrier of the stage before `slot`.
  auto releaseBefore = [&](OpBuilder &eb, Location el, Value after,
                           Value slot) {
    eb.create<scf::IfOp>(
        el,
        eb.create<arith::CmpIOp>(el, arith::CmpIPredicate::ugt, after,
                                 IndexMath{eb, el}.c(0)),
        [&](OpBuilder &rb, Location rl) {
          IndexMath rm{rb, rl};
          Value first = rb.create<arith::CmpIOp>(rl, arith::CmpIPredicate::eq,
                                                 slot, rm.c(0));
          Value before =
              rb.create<arith::SelectOp>(rl, first, rm.c(2 * s.stages - 1),
                                         rm.add(slot, rm.c(s.stages - 1)));
          rb.create<nf::MbarrierArriveOp>(rl, bars, before, /*rank=*/Value());
          // In clusters, in the other block too (its producer loaded into
          // this one's stage).
          if (mc)
            rb.create<nf::MbarrierArriveOp>(rl, bars, before, peer);
          rb.create<scf::YieldOp>(rl);
        });
  };

  // Blocks loop over the work units (block-uniform: every thread reaches
  // the barriers and warp operations inside). With TMA they carry the
  // parity each stage's mbarrier waits for next (bit st of `phases`); warp
  // specialized, the count of the block's K tiles before the unit's.
  // In teams, team w takes the block's units w, w + 2, ... (uniform in the
  // team), whose K tiles come after those of the other team's units
  // before them.
  // A team's K loops take turns with the other's (CUTLASS's ordered
  // barrier): a team waits on its `order` mbarrier until the other has
  // waited for every K tile of its last unit, which it says by arriving
  // there after its K loop. So every K tile before a team's first has
  // landed when it waits for that one's stage: a parity wait cannot see
  // a phase two before the one it waits for as done. The first team's
  // first wait is for none (parity 1), the second's for the first team's
  // first K loop; the parity carried flips each unit.
  SmallVector<Value> unitCarried;
  if (tma || ws)
    unitCarried.push_back(
        pp ? im.mul(team, split ? unitWork(im, unitFirst).count : kTiles)
           : im.c(0));
  if (pp)
    unitCarried.push_back(kb.create<arith::SelectOp>(
        loc,
        kb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, team, im.c(0)),
        im.c(1), im.c(0)));
  Value teamFirst = pp ? im.madd(team, unitStep, unitFirst) : unitFirst;
  kb.create<scf::ForOp>(
      loc, teamFirst, unitCount, pp ? im.mul(unitStep, 2) : unitStep,
      unitCarried,
      [&](OpBuilder &tb, Location tl, Value u, ValueRange unitPhases) {
        IndexMath tm{tb, tl};
        UnitWork work = unitWork(tm, u);
        Value range = work.range, kBegin = work.kBegin, kLimit = work.kLimit,
              count = work.count;
        Value batch = work.origin.batch, m0 = work.origin.m0,
              n0 = work.origin.n0;
        Value kFirst = tm.mul(kBegin, s.tileK);
        SteadyCopies aSc, bSc;
        if (aSteady)
          aSc = steadyCopies(tb, tl, pk, a, aChunks, batch, m0, kFirst);
        if (bSteady)
          bSc = steadyCopies(tb, tl, pk, b, bChunks, batch, n0, kFirst);
        // Copies K tile kBegin + `i` into stage `slot`, where the unit has
        // that tile (past the unit's tiles, the stage is never read).
        auto issue = [&](OpBuilder &ib, Location il, Value slot,
                         Value i) -> Value {
          if (tma) {
            // Thread 0 expects the stage's bytes on its mbarrier and loads
            // both operands' boxes; zeros past M, N and K.
            Value has = lessThan(ib, il, i, count);
            ib.create<scf::IfOp>(
                il, ib.create<arith::AndIOp>(il, has, leader),
                [&](OpBuilder &cb, Location cl) {
                  IndexMath cm{cb, cl};
                  Value k0 = cm.mul(split ? cm.add(kBegin, i) : i, s.tileK);
                  cb.create<nf::MbarrierArriveExpectTxOp>(cl, bars, slot,
                                                          stageBytes);
                  const Product &p = pk.product;
                  tmaStage(cb, cl, a, pk.mapA, bars, slot,
                           cm.mul(slot, a.stageElements()), batch, m0, k0,
                           p.matrixA->batched && p.matrixA->batches > 1);
                  tmaStage(cb, cl, b, pk.mapB, bars, slot,
                           cm.mul(slot, b.stageElements()), batch, n0, k0,
                           p.matrixB->batched && p.matrixB->batches > 1);
                  cb.create<scf::YieldOp>(cl);
                });
            return Value();
          }
          ib.create<scf::IfOp>(
              il, lessThan(ib, il, i, count), [&](OpBuilder &cb, Location cl) {
                IndexMath cm{cb, cl};
                Value k0 = cm.mul(split ? cm.add(kBegin, i) : i, s.tileK);
                if (aSteady)
                  loadStageSteadily(cb, cl, pk, a, aChunks, aSc, slot, i);
                else
                  loadStage(cb, cl, pk, a, aChunks, slot, batch, m0, k0,
                            kLimit);
                if (bSteady)
                  loadStageSteadily(cb, cl, pk, b, bChunks, bSc, slot, i);
                else
                  loadStage(cb, cl, pk, b, bChunks, slot, batch, n0, k0,
                            kLimit);
                cb.create<scf::YieldOp>(cl);
              });
          // The group commits every copy this thread issued since the last
          // (none past the unit's tiles).
          auto group = ib.create<nvgpu::DeviceAsyncCreateGroupOp>(il, tokenType,
                                                                  ValueRange{});
          group->setAttr(kCommitPendingAttr, ib.getUnitAttr());
          return group;
        };
        // The first stages - 1 K tiles in flight (past the range they are
        // zeros); stages - 2 with wgmma, whose stage before the current
        // one is still read by the group in flight.
        int64_t ahead = wgmma ? s.stages - 2 : s.stages - 1;
        // (Warp specialized, the producer issues them.)
        Value token;
        for (int64_t st = 0; st < (ws ? 0 : ahead); ++st)
          token = issue(tb, tl, tm.c(st), tm.c(st));
        // With TMA the loop carries the mbarriers' parities instead; warp
        // specialized, the block's K tiles before K tile i.
        if (tma || ws)
          token = unitPhases.front();

        // The accumulators, the newest copies' token, and the stage that
        // K tile i is in (i % stages; warp specialized, K tile g of the
        // block is in stage g % stages).
        SmallVector<Value> initial(wgmma ? fragsM : fragsM * fragsN, zero);
        initial.push_back(token);
        initial.push_back(ws ? tm.rem(token, s.stages) : tm.c(0));
        if (pp)
          tb.create<nf::MbarrierWaitOp>(tl, bars, tm.add(team, tm.c(order)),
                                        unitPhases.back());
        auto kLoop = tb.create<scf::ForOp>(
            tl, tm.c(0), count, tm.c(1), initial,
            [&](OpBuilder &lb, Location ll, Value i, ValueRange carried) {
              IndexMath lm{lb, ll};
              // K tile kBegin + i has landed (for this thread; the barrier
              // makes it so for all), and every warp is done with the one
              // before, whose stage the next copies overwrite.
              Value slot = carried.back();
              if (!tma && !ws)
                lb.create<nvgpu::DeviceAsyncWaitOp>(
                    ll, carried[carried.size() - 2],
                    lb.getI32IntegerAttr(ahead - 1));
              // wgmma reads through the async proxy: this thread's landed
              // copies are made visible to it before the barrier.
              if (wgmma && !tma && !ws)
                lb.create<nf::AsyncProxyFenceOp>(ll);
              // (Warp specialized, the empty mbarriers say so instead.)
              if (!ws)
                lb.create<gpu::BarrierOp>(ll);
              // K tile i + stages - 1 goes to the stage before i's (i +
              // stages - 2 to the one before that, with wgmma: every
              // warpgroup has waited for the group that read it).
              auto cmp = [&](Value x, int64_t y) {
                return lb.create<arith::CmpIOp>(ll, arith::CmpIPredicate::eq, x,
                                                lm.c(y));
              };
              Value writeSlot;
              if (wgmma)
                writeSlot = lb.create<arith::SelectOp>(
                    ll,
                    lb.create<arith::CmpIOp>(ll, arith::CmpIPredicate::ult,
                                             slot, lm.c(2)),
                    lm.add(slot, lm.c(s.stages - 2)), lm.sub(slot, lm.c(2)));
              else
                writeSlot = lb.create<arith::SelectOp>(ll, cmp(slot, 0),
                                                       lm.c(s.stages - 1),
                                                       lm.sub(slot, lm.c(1)));
              Value nextSlot = lb.create<arith::SelectOp>(
                  ll, cmp(slot, s.stages - 1), lm.c(0), lm.add(slot, lm.c(1)));
              Value nextToken =
                  ws ? Value()
                     : issue(lb, ll, writeSlot, lm.add(i, lm.c(ahead)));
              Value aBase = lm.mul(slot, a.stageElements());
              Value bBase = lm.mul(slot, b.stageElements());
              if (ws) {
                // Block K tile g has landed once its stage's full mbarrier
                // completes phase g / stages.
                Value g = carried[carried.size() - 2];
                lb.create<nf::MbarrierWaitOp>(ll, bars, slot,
                                              lm.rem(lm.div(g, s.stages), 2));
                nextToken = lm.add(g, lm.c(1));
              } else if (tma) {
                // K tile i has landed once its stage's mbarrier completes
                // the phase of its parity; the next use waits for the other.
                Value phases = carried[carried.size() - 2];
                Value bit = lb.create<arith::ShLIOp>(ll, lm.c(1), slot);
                Value parity = lb.create<arith::AndIOp>(
                    ll, lb.create<arith::ShRUIOp>(ll, phases, slot), lm.c(1));
                lb.create<nf::MbarrierWaitOp>(ll, bars, slot, parity);
                nextToken = lb.create<arith::XOrIOp>(ll, phases, bit);
              }
              if (wgmma) {
                SmallVector<Value> acc(carried.drop_back(2));
                warpgroupTile(lb, ll, a, b, aBase, bBase, groupRow, groupCol,
                              groupN, acc);
                // Warp specialized: the group of K tile i - 1 has retired
                // (this thread's wait), so its stage is empty for this
                // thread.
                if (ws)
                  releaseBefore(lb, ll, i, slot);
                acc.push_back(nextToken);
                acc.push_back(nextSlot);
                lb.create<scf::YieldOp>(ll, acc);
                return;
              }
              // One address a distinct row offset, the rest immediates.
              DenseMap<Value, Value> rows;
              auto fragmentAt = [&](Value stage, int64_t base,
                                    const Displaced &at) {
                Value &row = rows[at.first];
                if (!row)
                  row = lm.add(stage, at.first);
                return base + at.second ? lm.add(row, lm.c(base + at.second))
                                        : row;
              };
              SmallVector<Value> acc(carried.drop_back(2));
              // Four elements of a K-major tf32 operand, one by one.
              auto gather = [&](Value stage, int64_t base,
                                ArrayRef<Displaced> at) -> Value {
                SmallVector<Value> elements;
                for (const Displaced &d : at)
                  elements.push_back(lb.create<memref::LoadOp>(
                      ll, a.smem, ValueRange{fragmentAt(stage, base, d)}));
                return lb.create<vector::FromElementsOp>(ll, aFragType,
                                                         elements);
              };
              for (int64_t q = 0; q < kSteps; ++q) {
                SmallVector<Value> aFrags, bFrags;
                for (int64_t i = 0; i < fragsM; ++i)
                  aFrags.push_back(
                      aScalar ? gather(aBase, 0, aScalarAt[i][q])
                              : lb.create<nvgpu::LdMatrixOp>(
                                    ll, aFragType, a.smem,
                                    ValueRange{fragmentAt(aBase, 0, aAt[i][q])},
                                    /*transpose=*/a.kMajor, /*numTiles=*/4));
                for (int64_t j = 0; j < fragsN; j += 2) {
                  Value four =
                      bScalar ? gather(bBase, b.base, bScalarAt[j / 2][q])
                              : lb.create<nvgpu::LdMatrixOp>(
                                    ll, aFragType, b.smem,
                                    ValueRange{fragmentAt(bBase, b.base,
                                                          bAt[j / 2][q])},
                                    /*transpose=*/b.kMajor, /*numTiles=*/4);
                  for (int64_t half = 0; half < 2; ++half)
                    bFrags.push_back(lb.create<vector::ExtractStridedSliceOp>(
                        ll, four, ArrayRef<int64_t>{2 * half},
                        ArrayRef<int64_t>{2}, ArrayRef<int64_t>{1}));
                }
                for (int64_t i = 0; i < fragsM; ++i)
                  for (int64_t j = 0; j < fragsN; ++j) {
                    Value &c = acc[i * fragsN + j];
                    c = lb.create<nvgpu::MmaSyncOp>(
                        ll, aFrags[i], bFrags[j], c,
                        ArrayRef<int64_t>{16, 8, kStep}, tf32);
                  }
              }
              acc.push_back(nextToken);
              acc.push_back(nextSlot);
              lb.create<scf::YieldOp>(ll, acc);
            });
        // In teams, the other team's turn at the K loop.
        if (pp)
          tb.create<nf::MbarrierArriveOp>(
              tl, bars, tm.sub(tm.c(order + 1), team), /*rank=*/Value());
        // The copies still in flight (zeros past K) land before the next
        // tile's copies, and every warp is done with the stages. (Every
        // TMA load was waited for: none goes past the unit's tiles.)
        if (!tma && !ws)
          tb.create<nvgpu::DeviceAsyncWaitOp>(tl, kLoop.getResults().end()[-2],
                                              tb.getI32IntegerAttr(0));
        // The last wgmma group's sums are written, and read after this.
        SmallVector<Value> slabs;
        if (wgmma) {
          tb.create<nf::WarpgroupWaitOp>(tl, 0);
          for (int64_t i = 0; i < fragsM; ++i)
            slabs.push_back(
                tb.create<nf::WarpgroupFenceOperandOp>(tl, kLoop.getResult(i)));
        }
        // Warp specialized: the last K tile's stage is empty too (the
        // stages are not the result's); elsewhere the result reuses them.
        // The consumers meet at named barrier 1 where the block would (team
        // w at barrier 1 + w).
        auto blockBarrier = [&](OpBuilder &xb, Location xl) {
          if (!ws) {
            xb.create<gpu::BarrierOp>(xl);
            return;
          }
          if (!pp) {
            xb.create<nf::NamedBarrierOp>(xl, 1, threads);
            return;
          }
          auto which = xb.create<scf::IfOp>(
              xl,
              xb.create<arith::CmpIOp>(xl, arith::CmpIPredicate::eq, team,
                                       IndexMath{xb, xl}.c(0)),
              /*withElseRegion=*/true);
          OpBuilder::InsertionGuard guard(xb);
          xb.setInsertionPoint(which.thenBlock()->getTerminator());
          xb.create<nf::NamedBarrierOp>(xl, 1, threads);
          xb.setInsertionPoint(which.elseBlock()->getTerminator());
          xb.create<nf::NamedBarrierOp>(xl, 2, threads);
        };
        if (ws) {
          releaseBefore(tb, tl, count, kLoop.getResults().back());
        } else {
          tb.create<gpu::BarrierOp>(tl);
        }
        // Element l of accumulator fragment (i, j).
        auto sumAt = [&](int64_t i, int64_t j, int64_t l) -> Value {
          if (wgmma)
            return tb.create<vector::ExtractOp>(tl, slabs[i],
                                                ArrayRef<int64_t>{4 * j + l});
          return tb.create<vector::ExtractOp>(tl,
                                              kLoop.getResult(i * fragsN + j),
                                              ArrayRef<int64_t>{l / 2, l % 2});
        };

        // Accumulator element e of fragment (i, j) of lane (group g, t):
        // row 16 i + g + 8 (e / 2), column 8 j + 2 t + e % 2. Where the
        // result's rows are N consecutive elements (a matmul's, an NHWC
        // convolution's, the partial sums') and N is even, a lane's two
        // columns are one aligned access.
        int64_t n = constantOr(pk.sizes[kN]);
        auto storeSums = [&](bool partial, Value partials) {
          bool consecutive = partial || pk.product.consecutiveColumns;
          int64_t pair =
              consecutive && n != ShapedType::kDynamic && n % 2 == 0 ? 2 : 1;
          Value g = tm.div(lane, 4), t4 = tm.rem(lane, 4);
          // Where the result's rows are whole 16-byte chunks of the operands'
          // type, the tile goes through shared memory (the stages are free
          // now) and out in 16-byte stores: in lines of the tile's rows; or
          // of its columns where the result's rows are consecutive in runs
          // of whole chunks instead (an NCHW convolution's positions, a
          // plane a channel), a column's chunk of rows a store.
          Type storage = getElementTypeOrSelf(pk.c.getType());
          int64_t rowRun = pk.product.resultRowRun;
          bool fits = !partial && storage == element &&
                      s.tileM * s.tileN <= smemElements;
          bool stagedRows = fits && consecutive && n != ShapedType::kDynamic &&
                            n % chunk == 0 && s.tileN >= 64;
          // The store's run: a 16-byte chunk, or the widest part of one
          // that divides the result's runs of rows (a plane of 14 x 14 f16:
          // 4 elements, 8 bytes).
          int64_t run = chunk;
          if (!consecutive)
            while (run > 1 && rowRun % run)
              run /= 2;
          bool stagedColumns =
              fits && !consecutive && rowRun > 0 && run >= 2 && s.tileM >= 64;
          bool staged = stagedRows || stagedColumns;
          int64_t lines = stagedRows ? s.tileM : s.tileN;
          int64_t lineLength = stagedRows ? s.tileN : s.tileM;
          // The element offset in shared memory of chunk `logical` of line
          // `line` of the staged tile: 16-byte chunk c of line l at
          // c ^ (l % 8), so the eight lines a warp's accumulators write hit
          // eight bank groups (past the stages, warp specialized).
          auto lineOffset = [&](IndexMath &xm, Value line, Value logical) {
            Value physical =
                xm.b.create<arith::XOrIOp>(xm.loc, logical, xm.rem(line, 8));
            Value at = xm.madd(line, lineLength, xm.mul(physical, chunk));
            if (!stagingBase)
              return at;
            return xm.add(
                at, pp ? xm.madd(team, s.tileM * s.tileN, xm.c(stagingBase))
                       : xm.c(stagingBase));
          };
          // ... and of element (tileRow, tileCol) of the tile.
          auto stagedAt = [&](IndexMath &xm, Value tileRow, Value tileCol) {
            Value line = stagedRows ? tileRow : tileCol;
            Value along = stagedRows ? tileCol : tileRow;
            return xm.add(lineOffset(xm, line, xm.div(along, chunk)),
                          xm.rem(along, chunk));
          };
          for (int64_t i = 0; i < fragsM; ++i)
            for (int64_t j = 0; j < fragsN; ++j)
              for (int64_t e = 0; e < 4; e += pair) {
                Value tileRow = tm.add(
                    warpRow, tm.add(g, tm.c(fragmentRows * i + 8 * (e / 2))));
                Value tileCol =
                    tm.add(warpCol, tm.madd(t4, 2, tm.c(8 * j + e % 2)));
                Value row = tm.add(m0, tileRow), col = tm.add(n0, tileCol);
                SmallVector<Value> sums;
                for (int64_t l = e; l < e + pair; ++l)
                  sums.push_back(sumAt(i, j, l));
                if (partial) {
                  // The f32 partial sums, dense: a pair is one 8-byte store.
                  Value inside = tm.both(lessThan(tb, tl, row, pk.sizes[kM]),
                                         lessThan(tb, tl, col, pk.sizes[kN]));
                  tb.create<scf::IfOp>(
                      tl, inside, [&](OpBuilder &sb, Location sl) {
                        IndexMath sm{sb, sl};
                        Value dense = sm.madd(sm.madd(batch, pk.sizes[kM], row),
                                              pk.sizes[kN], col);
                        storeLanes(sb, sl, sums, partials,
                                   sm.madd(range, resultElements, dense));
                        sb.create<scf::YieldOp>(sl);
                      });
                  continue;
                }
                if (!staged) {
                  pk.store(tb, tl, batch, row, col, sums);
                  continue;
                }
                Value inside = tm.both(lessThan(tb, tl, row, pk.sizes[kM]),
                                       lessThan(tb, tl, col, pk.sizes[kN]));
                tb.create<scf::IfOp>(
                    tl, inside, [&](OpBuilder &sb, Location sl) {
                      IndexMath sm{sb, sl};
                      Value offset =
                          pk.product.store(sb, sl, pk.sizes, batch, row, col)
                              .offset;
                      storeLanes(sb, sl,
                                 pk.applyEpilogue(sb, sl, offset, col, sums),
                                 a.smem, stagedAt(sm, tileRow, tileCol));
                      sb.create<scf::YieldOp>(sl);
                    });
              }
          if (staged) {
            // Every warp's part is in; each thread stores whole runs (16-byte
            // chunks, or parts of them).
            blockBarrier(tb, tl);
            auto runType = VectorType::get({run}, element);
            int64_t lineRuns = lineLength / run, perChunk = chunk / run;
            for (int64_t q = 0; q < lines * lineRuns / threads; ++q) {
              Value e = tm.add(teamTid, tm.c(q * threads));
              Value line = tm.div(e, lineRuns), piece = tm.rem(e, lineRuns);
              Value first = tm.mul(piece, run);
              Value row = tm.add(m0, stagedRows ? line : first);
              Value col = tm.add(n0, stagedRows ? first : line);
              Value inside = tm.both(lessThan(tb, tl, row, pk.sizes[kM]),
                                     lessThan(tb, tl, col, pk.sizes[kN]));
              tb.create<scf::IfOp>(tl, inside, [&](OpBuilder &sb, Location sl) {
                IndexMath sm{sb, sl};
                Value at = lineOffset(sm, line, sm.div(piece, perChunk));
                if (perChunk > 1)
                  at = sm.madd(sm.rem(piece, perChunk), run, at);
                Value v = sb.create<vector::LoadOp>(sl, runType, a.smem,
                                                    ValueRange{at});
                Value offset =
                    pk.product.store(sb, sl, pk.sizes, batch, row, col).offset;
                sb.create<vector::StoreOp>(sl, v, pk.c, ValueRange{offset});
                sb.create<scf::YieldOp>(sl);
              });
            }
            // The next tile's copies overwrite shared memory (TMA's through
            // the async proxy, after this thread's stores and loads here);
            // warp specialized, the next tile's result does.
            if (tma && !ws)
              tb.create<nf::AsyncProxyFenceOp>(tl);
            blockBarrier(tb, tl);
          }
        };
        if (s.splitKMax == 0) {
          storeSums(split, pk.c);
        } else {
          // The range count is uniform: so is the branch (and the staged
          // store's barriers in it).
          auto many = tb.create<scf::IfOp>(
              tl,
              tb.create<arith::CmpIOp>(tl, arith::CmpIPredicate::ugt, splits,
                                       tm.c(1)),
              /*withElseRegion=*/true);
          OpBuilder::InsertionGuard guard(tb);
          tb.setInsertionPoint(many.thenBlock()->getTerminator());
          storeSums(true, pk.partials);
          tb.setInsertionPoint(many.elseBlock()->getTerminator());
          storeSums(false, Value());
        }
        SmallVector<Value> phases;
        if (tma || ws)
          // In teams, past the other team's unit (u + unitStep) too.
          phases.push_back(
              pp ? tm.add(kLoop.getResults().end()[-2],
                          split ? unitWork(tm, tm.add(u, unitStep)).count
                                : kTiles)
                 : kLoop.getResults().end()[-2]);
        if (pp)
          phases.push_back(
              tb.create<arith::XOrIOp>(tl, unitPhases.back(), tm.c(1)));
        tb.create<scf::YieldOp>(tl, phases);
      });
}
