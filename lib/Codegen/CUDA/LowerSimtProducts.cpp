//===- LowerSimtProducts.cpp - products on the FMA units ---------*- C++
//-*-===//
//
// Part of normfuse. The SIMT body of a product kernel (Products.h): every
// product the tensor cores do not take (f32 and f64; f16/bf16 before
// sm_80), in the classic SGEMM design:
//
// - 256 threads own a tileM x tileN tile (128 x 128 for products of a
//   wave of such tiles) as a 16 x 16 grid, each keeping threadM x threadN
//   sums in registers: groups of v consecutive rows (and columns), tileM /
//   groups apart, v the elements of 16 bytes of the accumulation type (4
//   f32, 2 f64) or fewer. A thread reads its operands from shared memory
//   as v-wide vectors (LDS.128), neighbouring threads read neighbouring
//   vectors, and neighbouring threads store neighbouring columns.
// - K goes tileK at a time through two shared-memory stages; both operands
//   are stored K-major ([k][m] and [k][n]) in the accumulation type. Each
//   thread loads its chunks of the next K tile into registers (one vector
//   load a chunk where the operand's elements are consecutive in whole
//   chunks, else element by element, zeros outside the product and in a
//   convolution's padding), computes on the current stage, then stores the
//   chunks into the other stage: one barrier a K tile.
// - With a split K (schedule.splitK > 1), a block's work is a tile over one
//   range of whole K tiles, and its sums go, as they are, to that range's
//   slice of the f32 partial sums in pk.c ([splits][batch][M][N]), which a
//   second kernel adds in order (LowerProducts.cpp, emitSplitSum).
//
//===----------------------------------------------------------------------===//

#include "Products.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

namespace {

/// The element at `access` of `buffer` extended to `acc`, or zero where it
/// does not exist (no load happens there): outside `inBounds` or
/// `access.valid` (null: true).
Value loadOrZero(OpBuilder &b, Location loc, Value buffer, Access access,
                 Value inBounds, Type acc) {
  IndexMath im{b, loc};
  Value valid = im.both(inBounds, access.valid);
  auto load = [&](OpBuilder &lb, Location ll) {
    Value v = lb.create<memref::LoadOp>(ll, buffer, access.offset);
    return v.getType() == acc ? v : lb.create<arith::ExtFOp>(ll, acc, v);
  };
  if (!valid)
    return load(b, loc);
  auto branch = b.create<scf::IfOp>(
      loc, valid,
      [&](OpBuilder &tb, Location tl) {
        tb.create<scf::YieldOp>(tl, load(tb, tl));
      },
      [&](OpBuilder &eb, Location el) {
        Value zero =
            eb.create<arith::ConstantOp>(el, eb.getZeroAttr(acc)).getResult();
        eb.create<scf::YieldOp>(el, zero);
      });
  return branch.getResult(0);
}

/// One operand's tile in shared memory: `outer` (tileM for A, tileN for B)
/// x tileK, K-major, two stages; loaded in chunks of `chunk` elements along
/// the outer dimension or along K.
struct SimtOperand {
  bool isA;
  /// The chunks run along the outer dimension (M or N), else along K.
  bool alongOuter;
  /// Each chunk is one vector load: the operand's elements are consecutive
  /// in runs of a multiple of `chunk` along the chunk's dimension.
  bool whole;
  int64_t outer, tileK, chunk;
  Value smem;

  int64_t stageElements() const { return outer * tileK; }
  int64_t chunks() const { return stageElements() / chunk; }
  /// The (outer, k) of chunk `c`'s first element in the tile.
  std::pair<Value, Value> origin(IndexMath &im, Value c) const {
    if (alongOuter) {
      int64_t row = outer / chunk;
      return {im.mul(im.rem(c, row), chunk), im.div(c, row)};
    }
    int64_t row = tileK / chunk;
    return {im.div(c, row), im.mul(im.rem(c, row), chunk)};
  }
};

/// Zeros of `type`, `n` of them.
SmallVector<Value> zeros(OpBuilder &b, Location loc, Type type, int64_t n) {
  Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(type));
  return SmallVector<Value>(n, zero);
}

/// The values of chunk `c` of operand `t`'s tile at (o0, k0), in the
/// accumulation type; zeros at K `kSize` and beyond (the end of K, or of a
/// split K's range).
SmallVector<Value> loadChunk(OpBuilder &b, Location loc, ProductKernel &pk,
                             const SimtOperand &t, Value c, Value batch,
                             Value o0, Value k0, Value kSize) {
  IndexMath im{b, loc};
  const Product &p = pk.product;
  Value buffer = t.isA ? pk.a : pk.b;
  Value outerSize = pk.sizes[t.isA ? kM : kN];
  auto [o, k] = t.origin(im, c);
  auto access = [&](OpBuilder &ab, Location al, Value outer, Value kk) {
    return t.isA ? p.loadA(ab, al, pk.sizes, batch, outer, kk)
                 : p.loadB(ab, al, pk.sizes, batch, kk, outer);
  };
  if (t.whole) {
    // The chunk is all inside or all outside: its length divides the
    // length of its dimension, and a convolution's runs stay in one tap.
    Value outer = im.add(o0, o), kk = im.add(k0, k);
    Access at = access(b, loc, outer, kk);
    Value valid = im.both(im.both(lessThan(b, loc, outer, outerSize),
                                  lessThan(b, loc, kk, kSize)),
                          at.valid);
    auto branch = b.create<scf::IfOp>(
        loc, valid,
        [&](OpBuilder &tb, Location tl) {
          tb.create<scf::YieldOp>(
              tl, loadLanes(tb, tl, buffer, at.offset, t.chunk, pk.acc));
        },
        [&](OpBuilder &eb, Location el) {
          eb.create<scf::YieldOp>(el, zeros(eb, el, pk.acc, t.chunk));
        });
    return SmallVector<Value>(branch.getResults());
  }
  SmallVector<Value> values;
  for (int64_t l = 0; l < t.chunk; ++l) {
    Value outer = im.add(o0, t.alongOuter ? im.add(o, im.c(l)) : o);
    Value kk = im.add(k0, t.alongOuter ? k : im.add(k, im.c(l)));
    Value inBounds = im.both(lessThan(b, loc, outer, outerSize),
                             lessThan(b, loc, kk, kSize));
    // The access is built where it exists: a gather's index arithmetic
    // of an element past the edge is never needed.
    auto branch = b.create<scf::IfOp>(
        loc, inBounds,
        [&](OpBuilder &tb, Location tl) {
          tb.create<scf::YieldOp>(tl, loadOrZero(tb, tl, buffer,
                                                 access(tb, tl, outer, kk),
                                                 Value(), pk.acc));
        },
        [&](OpBuilder &eb, Location el) {
          eb.create<scf::YieldOp>(el, zeros(eb, el, pk.acc, 1));
        });
    values.push_back(branch.getResult(0));
  }
  return values;
}

/// Stores chunk `c`'s `values` into stage `stage` of `t`'s shared tile.
void storeChunk(OpBuilder &b, Location loc, const SimtOperand &t, Value c,
                Value stage, ArrayRef<Value> values) {
  IndexMath im{b, loc};
  auto [o, k] = t.origin(im, c);
  Value at = im.add(im.mul(stage, t.stageElements()), im.madd(k, t.outer, o));
  if (t.alongOuter) {
    storeLanes(b, loc, values, t.smem, at);
    return;
  }
  for (int64_t l = 0; l < t.chunk; ++l)
    b.create<memref::StoreOp>(loc, values[l], t.smem,
                              im.add(at, im.c(l * t.outer)));
}

} // namespace

void cuda::buildSimtProduct(ProductKernel &pk, const TiledProductSchedule &s,
                            Location loc) {
  const Product &p = pk.product;
  Kernel &k = pk.kernel;
  OpBuilder &kb = k.body;
  IndexMath im{kb, loc};
  Type acc = pk.acc;
  int64_t threads = s.blockSize();
  int64_t colThreads = s.tileN / s.threadN;
  // A thread's rows and columns in groups of v consecutive ones: one
  // 16-byte shared-memory read each (4 f32, 2 f64).
  int64_t accBytes = acc.getIntOrFloatBitWidth() / 8;
  int64_t v =
      std::min({GpuTarget::kMaxAccessBytes / accBytes, s.threadM, s.threadN});
  int64_t groupsM = s.threadM / v, groupsN = s.threadN / v;
  int64_t spacingM = s.tileM / groupsM, spacingN = s.tileN / groupsN;

  // Chunks of 16 bytes of the operand (at most 4 elements): one vector
  // load where the operand's runs are whole chunks along one dimension.
  Type element = getElementTypeOrSelf(pk.a.getType());
  int64_t chunk = std::clamp<int64_t>(
      GpuTarget::kMaxAccessBytes / (element.getIntOrFloatBitWidth() / 8), 1, 4);
  using Runs = OperandLayout::Runs;
  auto operand = [&](bool isA) {
    const OperandLayout &l = isA ? p.layoutA : p.layoutB;
    // A's rows are M, B's columns are N: the outer dimension.
    bool alongOuter = l.along == (isA ? Runs::Rows : Runs::Columns);
    bool whole = l.along != Runs::None && l.run != ShapedType::kDynamic &&
                 l.run % chunk == 0;
    SimtOperand t{isA,     alongOuter, whole,  isA ? s.tileM : s.tileN,
                  s.tileK, chunk,      Value()};
    t.smem = addWorkgroupBuffer(k, loc, 2 * t.stageElements(), acc);
    return t;
  };
  SimtOperand a = operand(true), b = operand(false);

  Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value grid = kb.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
  Value tRow = im.div(tid, colThreads), tCol = im.rem(tid, colThreads);
  Value tilesM = im.ceilDiv(pk.sizes[kM], s.tileM);
  Value tilesN = im.ceilDiv(pk.sizes[kN], s.tileN);
  Value tiles = im.product(pk.sizes[kBatch], im.product(tilesM, tilesN));
  Value kTiles = im.ceilDiv(pk.sizes[kK], s.tileK);
  auto vecType = VectorType::get({v}, acc);
  // With a split K, work unit u is tile u % tiles over K range u / tiles
  // (perSplit K tiles; none empty, as the schedule chose the count).
  bool split = s.splitK > 1;
  Value units = split ? im.mul(tiles, im.c(s.splitK)) : tiles;
  Value perSplit = im.ceilDiv(kTiles, im.c(s.splitK));

  // Blocks loop over the work units (a block-uniform loop: every thread
  // reaches the barriers inside).
  kb.create<scf::ForOp>(
      loc, bid, units, grid, ValueRange{},
      [&](OpBuilder &tb, Location tl, Value u, ValueRange) {
        IndexMath tm{tb, tl};
        Value t = split ? tm.rem(u, tiles) : u;
        Value range = split ? tm.div(u, tiles) : Value();
        Value kBegin = split ? tm.mul(range, perSplit) : tm.c(0);
        Value kEnd = split ? tb.createOrFold<arith::MinUIOp>(
                                 tl, tm.add(kBegin, perSplit), kTiles)
                           : kTiles;
        // Loads stop at the range's end (a K tile past it is zeros).
        Value kSize = split ? tb.createOrFold<arith::MinUIOp>(
                                  tl, tm.mul(kEnd, s.tileK), pk.sizes[kK])
                            : pk.sizes[kK];
        TileOrigin origin = tileOrigin(tm, t, tilesM, tilesN, s);
        Value batch = origin.batch, m0 = origin.m0, n0 = origin.n0;

        // Each thread's chunks of K tile kt of both operands, in
        // registers; and their stores into a stage.
        struct Chunks {
          SmallVector<Value> ids;
          SmallVector<SmallVector<Value>> values;
        };
        auto load = [&](OpBuilder &lb, Location ll, const SimtOperand &op,
                        Value kt) {
          IndexMath lm{lb, ll};
          Chunks out;
          Value k0 = lm.mul(kt, s.tileK);
          Value o0 = op.isA ? m0 : n0;
          for (int64_t i = 0; i * threads < op.chunks(); ++i) {
            Value c = lm.add(tid, lm.c(i * threads));
            out.ids.push_back(c);
            if ((i + 1) * threads <= op.chunks()) {
              out.values.push_back(
                  loadChunk(lb, ll, pk, op, c, batch, o0, k0, kSize));
              continue;
            }
            // The last round: fewer chunks than threads.
            auto some = lb.create<scf::IfOp>(
                ll, lessThan(lb, ll, c, lm.c(op.chunks())),
                [&](OpBuilder &ib, Location il) {
                  ib.create<scf::YieldOp>(
                      il, loadChunk(ib, il, pk, op, c, batch, o0, k0, kSize));
                },
                [&](OpBuilder &eb, Location el) {
                  eb.create<scf::YieldOp>(el, zeros(eb, el, acc, op.chunk));
                });
            out.values.push_back(SmallVector<Value>(some.getResults()));
          }
          return out;
        };
        auto store = [&](OpBuilder &sb, Location sl, const SimtOperand &op,
                         const Chunks &chunks, Value stage) {
          IndexMath sm{sb, sl};
          for (size_t i = 0; i < chunks.ids.size(); ++i) {
            Value c = chunks.ids[i];
            if ((int64_t(i) + 1) * threads <= op.chunks()) {
              storeChunk(sb, sl, op, c, stage, chunks.values[i]);
              continue;
            }
            sb.create<scf::IfOp>(sl, lessThan(sb, sl, c, sm.c(op.chunks())),
                                 [&](OpBuilder &ib, Location il) {
                                   storeChunk(ib, il, op, c, stage,
                                              chunks.values[i]);
                                   ib.create<scf::YieldOp>(il);
                                 });
          }
        };

        // The first K tile into stage 0.
        store(tb, tl, a, load(tb, tl, a, kBegin), tm.c(0));
        store(tb, tl, b, load(tb, tl, b, kBegin), tm.c(0));
        tb.create<gpu::BarrierOp>(tl);

        SmallVector<Value> initial = zeros(tb, tl, acc, s.threadM * s.threadN);
        auto kLoop = tb.create<scf::ForOp>(
            tl, kBegin, kEnd, tm.c(1), initial,
            [&](OpBuilder &lb, Location ll, Value kt, ValueRange sums) {
              IndexMath lm{lb, ll};
              // The next K tile's loads are in flight while this one's
              // products run (past K they are zeros, stored where nothing
              // reads them).
              Value next = lm.add(kt, lm.c(1));
              Chunks nextA = load(lb, ll, a, next);
              Chunks nextB = load(lb, ll, b, next);
              Value stage = lm.rem(lm.sub(kt, kBegin), 2);
              Value aBase = lm.mul(stage, a.stageElements());
              Value bBase = lm.mul(stage, b.stageElements());
              auto inner = lb.create<scf::ForOp>(
                  ll, lm.c(0), lm.c(s.tileK), lm.c(1), sums,
                  [&](OpBuilder &ib, Location il, Value kk,
                      ValueRange partial) {
                    IndexMath in{ib, il};
                    auto read = [&](const SimtOperand &op, Value base,
                                    int64_t groups, int64_t spacing,
                                    Value tIndex) {
                      SmallVector<Value> out;
                      for (int64_t g = 0; g < groups; ++g) {
                        Value at =
                            in.add(base, in.madd(kk, op.outer,
                                                 in.add(in.mul(tIndex, v),
                                                        in.c(g * spacing))));
                        Value vec = ib.create<vector::LoadOp>(
                            il, vecType, op.smem, ValueRange{at});
                        for (int64_t l = 0; l < v; ++l)
                          out.push_back(ib.create<vector::ExtractOp>(
                              il, vec, ArrayRef<int64_t>{l}));
                      }
                      return out;
                    };
                    SmallVector<Value> as =
                        read(a, aBase, groupsM, spacingM, tRow);
                    SmallVector<Value> bs =
                        read(b, bBase, groupsN, spacingN, tCol);
                    SmallVector<Value> out;
                    for (int64_t i = 0; i < s.threadM; ++i)
                      for (int64_t j = 0; j < s.threadN; ++j)
                        out.push_back(ib.create<math::FmaOp>(
                            il, as[i], bs[j], partial[i * s.threadN + j]));
                    ib.create<scf::YieldOp>(il, out);
                  });
              // The other stage was last read before the previous
              // barrier.
              Value other = lm.sub(lm.c(1), stage);
              store(lb, ll, a, nextA, other);
              store(lb, ll, b, nextB, other);
              lb.create<gpu::BarrierOp>(ll);
              lb.create<scf::YieldOp>(ll, inner.getResults());
            });

        // Each thread's sums, the epilogue applied, narrowed and stored:
        // a group's v columns as one access where the result's rows are
        // whole groups of consecutive elements. A split K's partial sums go
        // as they are to the range's slice, whose rows are consecutive.
        int64_t n = constantOr(pk.sizes[kN]);
        bool together = (split || p.consecutiveColumns) &&
                        n != ShapedType::kDynamic && n % v == 0;
        Value resultElements =
            split ? tm.product(pk.sizes[kBatch],
                               tm.product(pk.sizes[kM], pk.sizes[kN]))
                  : Value();
        auto storePartial = [&](Value row, Value col, ArrayRef<Value> values) {
          Value inside = tm.both(lessThan(tb, tl, row, pk.sizes[kM]),
                                 lessThan(tb, tl, col, pk.sizes[kN]));
          tb.create<scf::IfOp>(tl, inside, [&](OpBuilder &sb, Location sl) {
            IndexMath sm{sb, sl};
            Value dense =
                sm.madd(sm.madd(batch, pk.sizes[kM], row), pk.sizes[kN], col);
            storeLanes(sb, sl, values, pk.c,
                       sm.madd(range, resultElements, dense));
            sb.create<scf::YieldOp>(sl);
          });
        };
        for (int64_t i = 0; i < s.threadM; ++i) {
          Value row = tm.add(
              m0, tm.add(tm.mul(tRow, v), tm.c((i / v) * spacingM + i % v)));
          for (int64_t g = 0; g < groupsN; ++g)
            for (int64_t l = 0; l < v; l += together ? v : 1) {
              Value col =
                  tm.add(n0, tm.add(tm.mul(tCol, v), tm.c(g * spacingN + l)));
              SmallVector<Value> values;
              for (int64_t e = l; e < (together ? v : l + 1); ++e)
                values.push_back(kLoop.getResult(i * s.threadN + g * v + e));
              if (split)
                storePartial(row, col, values);
              else
                pk.store(tb, tl, batch, row, col, values);
            }
        }
        tb.create<scf::YieldOp>(tl);
      });
}
