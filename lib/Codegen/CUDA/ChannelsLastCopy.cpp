//===- ChannelsLastCopy.cpp - [n][c][plane] to [n][plane][c] ---*- C++ -*-===//
//
// Part of normfuse. See emitChannelsLastCopy in Products.h: the copy that
// lets an NCHW convolution's tensor-core kernel stage its input and filter
// 16 bytes at a time, as cuDNN transposes NCHW data to NHWC for its tensor
// core kernels. A block moves a tile of 32 channels by 32 positions of one
// image: it reads 32 rows of positions (consecutive in the source), keeps
// them in shared memory (a row of 33, so that neither the writes nor the
// transposed reads of a warp fall on one bank), and writes 32 rows of
// channels (consecutive in the copy). Blocks loop over the tiles.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "Products.h"
#include "normfuse/Codegen/Common/BufferBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

/// The side of a tile, and the rows of it one pass of the block takes.
static constexpr int64_t kTile = kChannelsLastCopyTile;
static constexpr int64_t kRowsPerPass = kChannelsLastCopyRowsPerPass;

Value cuda::emitChannelsLastCopy(OpBuilder &b, Location loc, Operation *op,
                                 llvm::StringRef what, Value source,
                                 Value outer, Value channels, Value plane,
                                 const GpuTarget &target) {
  auto module = op->getParentOfType<ModuleOp>();
  Type element = cast<MemRefType>(source.getType()).getElementType();
  IndexMath hm{b, loc};
  Value count = hm.product(outer, hm.product(channels, plane));
  Value copy = allocTemporary(b, loc, count, element);
  const int64_t threads = kTile * kRowsPerPass;
  SmallVector<Value> args{source, copy};
  Kernel k = createKernel(module, loc, kernelBaseName(op, what),
                          ValueRange(args).getTypes(), threads,
                          "channels-last-copy tile=32x32 block=256");
  Value tileC = hm.ceilDiv(channels, kTile), tileP = hm.ceilDiv(plane, kTile);
  Value tiles = hm.product(outer, hm.product(tileC, tileP));
  {
    OpBuilder &kb = k.body;
    IndexMath m{kb, loc};
    Value c = k.size(kb, loc, channels);
    Value p = k.size(kb, loc, plane);
    Value tc = k.size(kb, loc, tileC), tp = k.size(kb, loc, tileP);
    Value total = k.size(kb, loc, tiles);
    Value tile = addWorkgroupBuffer(k, loc, kTile * (kTile + 1), element);
    Value tid = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    Value bid = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
    Value grid = kb.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
    Value lane = m.rem(tid, kTile), row = m.div(tid, kTile);
    kb.create<scf::ForOp>(
        loc, bid, total, grid, ValueRange{},
        [&](OpBuilder &fb, Location fl, Value t, ValueRange) {
          IndexMath f{fb, fl};
          Value perImage = f.product(tc, tp);
          Value image = f.div(t, perImage), inImage = f.rem(t, perImage);
          Value c0 = f.mul(f.div(inImage, tp), kTile);
          Value p0 = f.mul(f.rem(inImage, tp), kTile);
          // Rows of positions in: source[image][c0 + r][p0 + lane].
          for (int64_t pass = 0; pass < kTile / kRowsPerPass; ++pass) {
            Value r = f.add(row, f.c(pass * kRowsPerPass));
            Value ch = f.add(c0, r), pos = f.add(p0, lane);
            Value inside = f.both(f.below(ch, c), f.below(pos, p));
            fb.create<scf::IfOp>(fl, inside, [&](OpBuilder &ib, Location il) {
              IndexMath g{ib, il};
              Value at = g.madd(g.madd(image, c, ch), p, pos);
              Value v = ib.create<memref::LoadOp>(il, k.arg(0), at);
              ib.create<memref::StoreOp>(il, v, tile,
                                         g.madd(r, kTile + 1, lane));
              ib.create<scf::YieldOp>(il);
            });
          }
          fb.create<gpu::BarrierOp>(fl);
          // Rows of channels out: copy[image][p0 + r][c0 + lane].
          for (int64_t pass = 0; pass < kTile / kRowsPerPass; ++pass) {
            Value r = f.add(row, f.c(pass * kRowsPerPass));
            Value pos = f.add(p0, r), ch = f.add(c0, lane);
            Value inside = f.both(f.below(ch, c), f.below(pos, p));
            fb.create<scf::IfOp>(fl, inside, [&](OpBuilder &ib, Location il) {
              IndexMath g{ib, il};
              Value v = ib.create<memref::LoadOp>(il, tile,
                                                  g.madd(lane, kTile + 1, r));
              Value at = g.madd(g.madd(image, p, pos), c, ch);
              ib.create<memref::StoreOp>(il, v, k.arg(1), at);
              ib.create<scf::YieldOp>(il);
            });
          }
          // The tile is written again only once every thread has read it.
          fb.create<gpu::BarrierOp>(fl);
          fb.create<scf::YieldOp>(fl);
        });
  }
  // Every offset stays below the copy's size: 32-bit indices where it is
  // static and small, and the kernel takes no sizes.
  if (int64_t elements = constantOr(count); elements != ShapedType::kDynamic &&
                                            elements < (int64_t(1) << 31) &&
                                            k.sizeParameters.empty())
    k.func->setAttr(kIndexBitsAttr,
                    IntegerAttr::get(IntegerType::get(b.getContext(), 64), 32));
  // A grid-stride loop over the tiles on the blocks the device holds at
  // once.
  int64_t planned =
      target.multiprocessors * target.blocksPerMultiprocessor(threads);
  Value blocks = b.createOrFold<arith::MinUIOp>(loc, tiles, hm.c(planned));
  if (residencyMatters(constantOr(blocks), target)) {
    ResidentBlocksOp resident = residentBlocks(b, loc, threads, planned);
    bindResidentBlocks(resident, k.func, target);
    blocks = b.createOrFold<arith::MinUIOp>(loc, tiles, resident);
  }
  launchUnlessEmpty(b, loc, k, blocks, threads, args, tiles);
  return copy;
}
