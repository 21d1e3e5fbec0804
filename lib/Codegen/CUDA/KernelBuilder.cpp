//===- KernelBuilder.cpp - building blocks of nf's GPU kernels --*- C++ -*-===//
//
// Part of normfuse. See KernelBuilder.h.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "normfuse/Codegen/CUDA/SharedMemory.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

Value cuda::indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

Value IndexMath::c(int64_t v) { return indexConstant(b, loc, v); }
Value IndexMath::add(Value x, Value y) {
  return b.create<arith::AddIOp>(loc, x, y);
}
Value IndexMath::sub(Value x, Value y) {
  return b.create<arith::SubIOp>(loc, x, y);
}
Value IndexMath::mul(Value x, int64_t y) {
  return y == 1 ? x : b.create<arith::MulIOp>(loc, x, c(y));
}
Value IndexMath::div(Value x, int64_t y) {
  return y == 1 ? x : b.create<arith::DivUIOp>(loc, x, c(y));
}
Value IndexMath::rem(Value x, int64_t y) {
  return y == 1 ? c(0) : b.create<arith::RemUIOp>(loc, x, c(y));
}
Value IndexMath::madd(Value x, int64_t scale, Value y) {
  return add(mul(x, scale), y);
}
Value IndexMath::both(Value x, Value y) {
  if (!x || !y)
    return x ? x : y;
  return b.create<arith::AndIOp>(loc, x, y);
}
Value IndexMath::inRange(Value x, int64_t bound) {
  Value ge = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, x, c(0));
  Value lt =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, c(bound));
  return both(ge, lt);
}
int64_t cuda::constantOr(Value v) {
  std::optional<int64_t> c = getConstantIntValue(v);
  return c ? *c : ShapedType::kDynamic;
}

Value IndexMath::mul(Value x, Value y) {
  if (auto k = getConstantIntValue(y))
    return mul(x, *k);
  return b.create<arith::MulIOp>(loc, x, y);
}
Value IndexMath::div(Value x, Value y) {
  if (auto k = getConstantIntValue(y))
    return div(x, *k);
  return b.create<arith::DivUIOp>(loc, x, y);
}
Value IndexMath::ceilDiv(Value x, int64_t y) {
  if (std::optional<int64_t> cx = getConstantIntValue(x))
    return c(llvm::divideCeil(*cx, y));
  return y == 1 ? x : b.create<arith::CeilDivUIOp>(loc, x, c(y));
}
Value IndexMath::ceilDiv(Value x, Value y) {
  std::optional<int64_t> cx = getConstantIntValue(x),
                         cy = getConstantIntValue(y);
  if (cx && cy && *cy > 0)
    return c(llvm::divideCeil(*cx, *cy));
  if (cy == 1)
    return x;
  return b.create<arith::CeilDivUIOp>(loc, x, y);
}
Value IndexMath::rem(Value x, Value y) {
  if (auto k = getConstantIntValue(y))
    return rem(x, *k);
  return b.create<arith::RemUIOp>(loc, x, y);
}
Value IndexMath::madd(Value x, Value scale, Value y) {
  return add(mul(x, scale), y);
}
Value IndexMath::inRange(Value x, Value bound) {
  if (auto k = getConstantIntValue(bound))
    return inRange(x, *k);
  Value ge = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, x, c(0));
  Value lt = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, bound);
  return both(ge, lt);
}
Value IndexMath::below(Value x, Value bound) {
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, x, bound);
}
Value IndexMath::product(Value x, Value y) {
  std::optional<int64_t> cx = getConstantIntValue(x),
                         cy = getConstantIntValue(y);
  if (cx == 1 || cy == 1)
    return cx == 1 ? y : x;
  if (cx && cy)
    return c(*cx * *cy);
  return b.create<arith::MulIOp>(loc, x, y);
}

Value IndexMath::multipleOf(Value x, int64_t stride) {
  if (stride == 1)
    return Value();
  Value r = b.create<arith::RemSIOp>(loc, x, c(stride));
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, r, c(0));
}

std::string cuda::kernelBaseName(Operation *op, llvm::StringRef what) {
  auto function = op->getParentOfType<FunctionOpInterface>();
  if (!function)
    return what.str();
  return (function.getName() + "_" + what).str();
}

Kernel cuda::createKernel(ModuleOp module, Location loc,
                          llvm::StringRef baseName, TypeRange argTypes,
                          int64_t blockSize, llvm::StringRef schedule) {
  MLIRContext *ctx = module.getContext();
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(ctx));
  auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
  if (!gpuModule) {
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    gpuModule = mb.create<gpu::GPUModuleOp>(loc, kKernelModuleName);
  }
  // A unique name: the base, then _1, _2, ...
  SymbolTable symbols(gpuModule);
  std::string name = baseName.str();
  for (int i = 1; symbols.lookup(name); ++i)
    name = (baseName + "_" + llvm::Twine(i)).str();

  OpBuilder mb = OpBuilder::atBlockBegin(gpuModule.getBody());
  mb.setInsertionPoint(gpuModule.getBody()->getTerminator());
  auto func = mb.create<gpu::GPUFuncOp>(loc, name,
                                        FunctionType::get(ctx, argTypes, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  func.setKnownBlockSizeAttr(
      DenseI32ArrayAttr::get(ctx, {static_cast<int32_t>(blockSize), 1, 1}));
  func->setAttr(kScheduleAttr, StringAttr::get(ctx, schedule));
  Block &entry = func.getBody().front();
  OpBuilder body = OpBuilder::atBlockEnd(&entry);
  auto ret = body.create<gpu::ReturnOp>(loc);
  body.setInsertionPoint(ret);
  return {func, body, {}, {}};
}

Value cuda::flatten(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  Value flat = buffer;
  if (type.getRank() == 0) {
    // A scalar: a view of one element.
    flat = b.create<memref::ExpandShapeOp>(
        loc, MemRefType::get({1}, type.getElementType()), buffer,
        ArrayRef<ReassociationIndices>{},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  } else if (type.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t i = 0; i < type.getRank(); ++i)
      all[0].push_back(i);
    flat = b.create<memref::CollapseShapeOp>(loc, buffer, all);
  }
  auto dynamicType =
      MemRefType::get({ShapedType::kDynamic}, type.getElementType());
  if (flat.getType() != dynamicType)
    flat = b.create<memref::CastOp>(loc, dynamicType, flat);
  return flat;
}

Value cuda::indexToFloat(OpBuilder &b, Location loc, Value v, Type type) {
  return b.create<arith::UIToFPOp>(
      loc, type, b.create<arith::IndexCastUIOp>(loc, b.getI64Type(), v));
}

Value cuda::allocTemporary(OpBuilder &b, Location loc, Value count,
                           Type element) {
  if (std::optional<int64_t> n = getConstantIntValue(count))
    return flatten(
        b, loc,
        b.create<memref::AllocOp>(
            loc, MemRefType::get({std::max<int64_t>(*n, 1)}, element)));
  Value atLeastOne =
      b.create<arith::MaxUIOp>(loc, count, indexConstant(b, loc, 1));
  return b.create<memref::AllocOp>(
      loc, MemRefType::get({ShapedType::kDynamic}, element),
      ValueRange{atLeastOne});
}

Value Kernel::size(OpBuilder &b, Location loc, Value host) {
  if (std::optional<int64_t> c = getConstantIntValue(host))
    return indexConstant(b, loc, *c);
  for (auto [h, param] : llvm::zip(sizeArguments, sizeParameters))
    if (h == host)
      return param;
  unsigned at = func.getNumArguments();
  func.insertArgument(at, b.getIndexType(), DictionaryAttr(), loc);
  sizeArguments.push_back(host);
  sizeParameters.push_back(func.getArgument(at));
  return sizeParameters.back();
}

void cuda::launch(OpBuilder &b, Location loc, const Kernel &kernel,
                  Value gridSize, int64_t blockSize, ValueRange args) {
  SmallVector<Value> all(args);
  llvm::append_range(all, kernel.sizeArguments);
  launch(b, loc, kernel.func, gridSize, blockSize, all);
}

void cuda::launchUnlessEmpty(OpBuilder &b, Location loc, const Kernel &kernel,
                             Value gridSize, int64_t blockSize, ValueRange args,
                             Value work) {
  if (!work)
    work = gridSize;
  if (std::optional<int64_t> n = getConstantIntValue(gridSize))
    gridSize = indexConstant(b, loc, *n);
  if (std::optional<int64_t> n = getConstantIntValue(work)) {
    if (*n > 0)
      launch(b, loc, kernel, gridSize, blockSize, args);
    return;
  }
  Value any = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, work,
                                      indexConstant(b, loc, 0));
  b.create<scf::IfOp>(loc, any, [&](OpBuilder &tb, Location tl) {
    launch(tb, tl, kernel, gridSize, blockSize, args);
    tb.create<scf::YieldOp>(tl);
  });
}

ResidentBlocksOp cuda::residentBlocks(OpBuilder &b, Location loc,
                                      int64_t blockSize, int64_t planned) {
  return b.create<ResidentBlocksOp>(
      loc, b.getIndexType(), SymbolRefAttr::get(b.getContext(), "unbound"),
      blockSize, /*shared=*/0, std::max<int64_t>(1, planned));
}

bool cuda::residencyMatters(int64_t plannedBlocks,
                            const normfuse::runtime::GpuTarget &target) {
  return ShapedType::isDynamic(plannedBlocks) ||
         plannedBlocks > target.multiprocessors;
}

void cuda::bindResidentBlocks(ResidentBlocksOp op, gpu::GPUFuncOp kernel,
                              const normfuse::runtime::GpuTarget &target) {
  auto module = kernel->getParentOfType<gpu::GPUModuleOp>();
  op.setKernelAttr(SymbolRefAttr::get(
      module.getNameAttr(), {SymbolRefAttr::get(kernel.getNameAttr())}));
  SharedMemoryLayout smem = sharedMemoryLayout(kernel);
  op.setShared(smem.dynamic() ? smem.bytes : 0);
  int64_t fits = target.multiprocessors *
                 target.occupancy(op.getBlock(), 0, smem.bytes).blocks;
  int64_t planned =
      std::max<int64_t>(1, std::min<int64_t>(op.getPlanned(), fits));
  // A kernel in clusters: whole clusters of it (Residency::clusterBlocks).
  if (auto cluster = kernel->getAttrOfType<IntegerAttr>(kClusterBlocksAttr);
      cluster && cluster.getInt() > 1)
    planned = std::max(cluster.getInt(),
                       planned / cluster.getInt() * cluster.getInt());
  op.setPlanned(planned);
}

SharedMemoryLayout cuda::sharedMemoryLayout(gpu::GPUFuncOp kernel) {
  SharedMemoryLayout layout;
  for (BlockArgument buffer : kernel.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(buffer.getType());
    layout.offsets.push_back(layout.bytes);
    if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
      continue;
    int64_t bytes = type.getNumElements() *
                    std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    layout.bytes += (bytes + 15) / 16 * 16;
  }
  return layout;
}

void cuda::launch(OpBuilder &b, Location loc, gpu::GPUFuncOp kernel,
                  Value gridSize, int64_t blockSize, ValueRange args) {
  Value one = indexConstant(b, loc, 1);
  // A kernel's shared memory past what it may declare statically is
  // dynamic: the launch gives its size.
  Value dynamicBytes;
  if (SharedMemoryLayout smem = sharedMemoryLayout(kernel); smem.dynamic())
    dynamicBytes = b.create<arith::ConstantIntOp>(loc, smem.bytes, 32);
  b.create<gpu::LaunchFuncOp>(
      loc, kernel, gpu::KernelDim3{gridSize, one, one},
      gpu::KernelDim3{indexConstant(b, loc, blockSize), one, one}, dynamicBytes,
      args);
}

/// Elements of `element` in the widest access up to 16 bytes that divides
/// `width`.
static int64_t chunkLanes(Type element, int64_t width) {
  int64_t bytes = std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
  int64_t lanes = width;
  while (lanes > 1 && lanes * bytes > 16)
    lanes /= 2;
  return lanes;
}

/// `op`, a streaming store where `evictFirst`.
template <typename OpT> static OpT streaming(OpT op, bool evictFirst) {
  if (evictFirst)
    op->setAttr(kEvictFirstAttr, UnitAttr::get(op->getContext()));
  return op;
}

SmallVector<Value> cuda::loadLanes(OpBuilder &b, Location loc, Value buffer,
                                   Value offset, int64_t width, Type acc) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  auto extend = [&](Value v) -> Value {
    if (v.getType() == acc)
      return v;
    return b.create<arith::ExtFOp>(loc, acc, v);
  };
  if (width == 1)
    return {extend(b.create<memref::LoadOp>(loc, buffer, offset))};
  // An f32 scale beside f16 data: 8 lanes are two 16-byte loads.
  int64_t chunk = chunkLanes(element, width);
  SmallVector<Value> lanes;
  for (int64_t first = 0; first < width; first += chunk) {
    Value at = first == 0 ? offset
                          : b.create<arith::AddIOp>(
                                loc, offset, indexConstant(b, loc, first));
    if (chunk == 1) {
      lanes.push_back(extend(b.create<memref::LoadOp>(loc, buffer, at)));
      continue;
    }
    Value vec = b.create<vector::LoadOp>(loc, VectorType::get({chunk}, element),
                                         buffer, at);
    for (int64_t i = 0; i < chunk; ++i)
      lanes.push_back(extend(b.create<vector::ExtractOp>(loc, vec, i)));
  }
  return lanes;
}

void cuda::storeLanes(OpBuilder &b, Location loc, ArrayRef<Value> values,
                      Value buffer, Value offset, bool evictFirst) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  SmallVector<Value> narrow;
  for (Value v : values)
    narrow.push_back(v.getType() == element
                         ? v
                         : b.create<arith::TruncFOp>(loc, element, v));
  int64_t width = narrow.size();
  int64_t chunk = chunkLanes(element, width);
  for (int64_t first = 0; first < width; first += chunk) {
    Value at = first == 0 ? offset
                          : b.create<arith::AddIOp>(
                                loc, offset, indexConstant(b, loc, first));
    if (chunk == 1) {
      streaming(b.create<memref::StoreOp>(loc, narrow[first], buffer, at),
                evictFirst);
      continue;
    }
    auto type = VectorType::get({chunk}, element);
    Value vec = b.create<vector::FromElementsOp>(
        loc, type, ArrayRef<Value>(narrow).slice(first, chunk));
    streaming(b.create<vector::StoreOp>(loc, vec, buffer, at), evictFirst);
  }
}

Value cuda::emitWarpReduce(
    OpBuilder &b, Location loc, Value v, int64_t width,
    llvm::function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  // A butterfly: after the step with offset o, each lane holds the
  // combination of its aligned group of 2o lanes.
  // A shuffle moves 32 or 64 bits: a narrower integer (a bool, i8, i16)
  // travels in an i32 and is truncated back, bits unchanged.
  auto narrow = dyn_cast<IntegerType>(v.getType());
  if (narrow && narrow.getWidth() >= 32)
    narrow = nullptr;
  for (int64_t offset = width / 2; offset >= 1; offset /= 2) {
    Value sent = narrow ? b.create<arith::ExtUIOp>(loc, b.getI32Type(), v) : v;
    Value got = b.create<gpu::ShuffleOp>(loc, sent, offset, width,
                                         gpu::ShuffleMode::XOR)
                    .getShuffleResult();
    if (narrow)
      got = b.create<arith::TruncIOp>(loc, narrow, got);
    v = combine(b, loc, v, got);
  }
  return v;
}

Value cuda::emitWarpSum(OpBuilder &b, Location loc, Value v, int64_t width) {
  return emitWarpReduce(b, loc, v, width,
                        [](OpBuilder &b, Location loc, Value x, Value y) {
                          return b.create<arith::AddFOp>(loc, x, y).getResult();
                        });
}

Value cuda::emitBlockSum(OpBuilder &b, Location loc, Value v, Value scratch,
                         int64_t blockSize) {
  const int64_t warpSize = GpuTarget::kWarpSize;
  int64_t warps = blockSize / warpSize;
  v = emitWarpSum(b, loc, v, warpSize);
  if (warps == 1)
    return v;
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value lane = b.create<arith::RemUIOp>(loc, tid, indexConstant(b, loc, 32));
  Value warp = b.create<arith::DivUIOp>(loc, tid, indexConstant(b, loc, 32));
  Value first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, lane,
                                        indexConstant(b, loc, 0));
  b.create<scf::IfOp>(loc, first, [&](OpBuilder &tb, Location tl) {
    tb.create<memref::StoreOp>(tl, v, scratch, warp);
    tb.create<scf::YieldOp>(tl);
  });
  b.create<gpu::BarrierOp>(loc);
  // Every thread adds the warps' sums in the same order: all agree.
  Value total =
      b.create<memref::LoadOp>(loc, scratch, indexConstant(b, loc, 0));
  for (int64_t w = 1; w < warps; ++w)
    total = b.create<arith::AddFOp>(
        loc, total,
        b.create<memref::LoadOp>(loc, scratch, indexConstant(b, loc, w)));
  b.create<gpu::BarrierOp>(loc);
  return total;
}

Value cuda::emitClusterSum(OpBuilder &b, Location loc, Value blockSum,
                           Value slots, int64_t exchange, Value rank,
                           int64_t blocks) {
  return emitClusterSums(b, loc, {blockSum}, slots,
                         indexConstant(b, loc, exchange * blocks), rank,
                         blocks)[0];
}

SmallVector<Value> cuda::emitClusterSums(OpBuilder &b, Location loc,
                                         ArrayRef<Value> blockSums, Value slots,
                                         Value first, Value rank,
                                         int64_t blocks) {
  IndexMath im{b, loc};
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  // Slot `first` + k: a constant where `first` is one.
  auto slot = [&](IndexMath &m, int64_t k) {
    if (std::optional<int64_t> f = getConstantIntValue(first))
      return m.c(*f + k);
    return k ? m.add(first, m.c(k)) : first;
  };
  // Slot of sum j of block r at [j][r] (before the barrier, so that the
  // loads follow it at once).
  SmallVector<SmallVector<Value>> at(blockSums.size());
  for (auto [j, sumSlots] : llvm::enumerate(at))
    for (int64_t r = 0; r < blocks; ++r)
      sumSlots.push_back(slot(im, int64_t(j) * blocks + r));
  Value storing = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, tid,
                                          im.c(blocks));
  b.create<scf::IfOp>(loc, storing, [&](OpBuilder &tb, Location tl) {
    IndexMath tm{tb, tl};
    for (auto [j, sum] : llvm::enumerate(blockSums))
      tb.create<ClusterStoreOp>(tl, sum, slots, tm.add(at[j][0], rank), tid);
    tb.create<scf::YieldOp>(tl);
  });
  b.create<ClusterBarrierOp>(loc);
  SmallVector<Value> totals;
  for (ArrayRef<Value> sumSlots : at) {
    Value total = b.create<memref::LoadOp>(loc, slots, sumSlots[0]);
    for (int64_t r = 1; r < blocks; ++r)
      total = b.create<arith::AddFOp>(
          loc, total, b.create<memref::LoadOp>(loc, slots, sumSlots[r]));
    totals.push_back(total);
  }
  return totals;
}

PeeledRange cuda::emitPeeledRange(OpBuilder &b, Location loc, int64_t vw,
                                  Value rowBase, Value begin, Value end) {
  IndexMath ix{b, loc};
  Value head = ix.rem(ix.sub(ix.c(vw), ix.rem(ix.add(rowBase, begin), vw)), vw);
  PeeledRange r;
  r.begin = begin;
  r.end = end;
  r.alignedBegin = b.create<arith::MinUIOp>(loc, ix.add(begin, head), end);
  r.alignedEnd = ix.add(r.alignedBegin,
                        ix.mul(ix.div(ix.sub(end, r.alignedBegin), vw), vw));
  return r;
}

SmallVector<std::pair<Value, Value>> cuda::peeledElements(OpBuilder &b,
                                                          Location loc,
                                                          const PeeledRange &r,
                                                          Value lane) {
  IndexMath ix{b, loc};
  Value head = ix.add(r.begin, lane), tail = ix.add(r.alignedEnd, lane);
  return {{head, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, head,
                                         r.alignedBegin)},
          {tail, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, tail,
                                         r.end)}};
}

SmallVector<Value> cuda::emitRowGroupSums(OpBuilder &b, Location loc,
                                          ArrayRef<Value> values,
                                          Value handOver, Value group,
                                          Value lane, int64_t groups,
                                          int64_t threadsPerRow, int64_t vw,
                                          const TupleCombineFn &combine) {
  SmallVector<Value> total(values.begin(), values.end());
  if (groups == 1)
    return total;
  auto c = [&](OpBuilder &ib, int64_t v) { return indexConstant(ib, loc, v); };
  int64_t perThread = static_cast<int64_t>(values.size()) / vw;
  int64_t perGroup = perThread * threadsPerRow * vw;
  // Group g's value (kv, l) at (g - 1) * perGroup + (kv * tpr + lane) * vw + l.
  auto slotOf = [&](OpBuilder &ib, Value g, int64_t kv, int64_t l) -> Value {
    Value within = ib.create<arith::AddIOp>(
        loc,
        ib.create<arith::MulIOp>(
            loc, ib.create<arith::AddIOp>(loc, lane, c(ib, kv * threadsPerRow)),
            c(ib, vw)),
        c(ib, l));
    return ib.create<arith::AddIOp>(
        loc,
        ib.create<arith::MulIOp>(
            loc, ib.create<arith::SubIOp>(loc, g, c(ib, 1)), c(ib, perGroup)),
        within);
  };
  Value notFirst =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, group, c(b, 0));
  b.create<scf::IfOp>(loc, notFirst, [&](OpBuilder &tb, Location tl) {
    for (int64_t kv = 0; kv < perThread; ++kv)
      for (int64_t l = 0; l < vw; ++l)
        tb.create<memref::StoreOp>(tl, total[kv * vw + l], handOver,
                                   slotOf(tb, group, kv, l));
    tb.create<scf::YieldOp>(tl);
  });
  b.create<gpu::BarrierOp>(loc);
  // Groups 1.. in order, a loop (not unrolled: a block of 128 row groups
  // would print thousands of lines).
  auto loop = b.create<scf::ForOp>(
      loc, c(b, 1), c(b, groups), c(b, 1), total,
      [&](OpBuilder &lb, Location ll, Value gi, ValueRange sums) {
        SmallVector<Value> theirs;
        for (int64_t kv = 0; kv < perThread; ++kv)
          for (int64_t l = 0; l < vw; ++l)
            theirs.push_back(
                lb.create<memref::LoadOp>(ll, handOver, slotOf(lb, gi, kv, l)));
        SmallVector<Value> next;
        if (combine) {
          next = combine(lb, ll, SmallVector<Value>(sums), theirs);
        } else {
          for (auto [mine, other] : llvm::zip(sums, theirs))
            next.push_back(lb.create<arith::AddFOp>(ll, mine, other));
        }
        lb.create<scf::YieldOp>(ll, next);
      });
  b.create<gpu::BarrierOp>(loc);
  return SmallVector<Value>(loop.getResults());
}

SmallVector<Value> cuda::emitValuesIf(
    OpBuilder &b, Location loc, Value valid, Type acc,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, Location)> values) {
  if (!valid)
    return values(b, loc);
  // The else branch needs the count before the then branch is built.
  size_t count = 0;
  auto ifOp = b.create<scf::IfOp>(
      loc, valid,
      [&](OpBuilder &tb, Location tl) {
        SmallVector<Value> v = values(tb, tl);
        count = v.size();
        tb.create<scf::YieldOp>(tl, v);
      },
      [&](OpBuilder &eb, Location el) {
        eb.create<scf::YieldOp>(
            el, SmallVector<Value>(count, eb.create<arith::ConstantOp>(
                                              el, eb.getFloatAttr(acc, 0.0))));
      });
  return SmallVector<Value>(ifOp.getResults());
}

Value cuda::addWorkgroupBuffer(Kernel &k, Location loc, int64_t count,
                               Type type) {
  MLIRContext *ctx = k.func.getContext();
  auto workgroup = gpu::AddressSpaceAttr::get(
      ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
  return k.func.addWorkgroupAttribution(
      MemRefType::get({count}, type, MemRefLayoutAttrInterface(), workgroup),
      loc);
}
