//===- LaunchPlanFromIR.cpp - read a launch plan off host IR ----*- C++ -*-===//
//
// Part of normfuse. See LaunchPlanFromIR.h. Each memref value of the host
// function is traced to the buffer or temporary it views, with its shape;
// index values are evaluated from constants, the buffers' sizes
// (memref.dim) and integer arithmetic; an scf.if runs the branch its
// condition selects. Values computed from an nf.resident_blocks take its
// planned count here, and are kept as plan integers too, for a runtime to
// compute again with the device's count (Residency in LaunchPlan.h).
//
//===----------------------------------------------------------------------===//

#include "normfuse/Target/LaunchPlanFromIR.h"
#include "normfuse/Codegen/CUDA/SharedMemory.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nf;
using normfuse::runtime::Launch;
using normfuse::runtime::LaunchArg;
using normfuse::runtime::LaunchPlan;
using normfuse::runtime::Step;

/// Gives `to` the entry of `from` in `map`, if it has one. The entry is
/// copied before `to` is inserted: an insertion may grow the map and move
/// its entries, so `map[to] = map.find(from)->second` can read freed memory
/// (as it did, where the map's layout follows the values' addresses).
template <typename Map>
static void copyMapEntry(Map &map, Value from, Value to) {
  auto it = map.find(from);
  if (it == map.end())
    return;
  auto entry = it->second;
  map[to] = std::move(entry);
}

namespace {

class PlanReader {
public:
  explicit PlanReader(LaunchPlan &plan) : plan(plan) {}

  LogicalResult readBlock(Block &block);
  /// The buffer, temporary or constant each memref value views, and its
  /// shape.
  llvm::DenseMap<Value, LaunchArg> buffers;
  llvm::DenseMap<Value, SmallVector<int64_t>> shapes;

  /// Drops `temporaryComputed` where no temporary's size is computed.
  void finish() {
    if (llvm::all_of(plan.temporaryComputed, [](int64_t i) { return i < 0; }))
      plan.temporaryComputed.clear();
  }

private:
  LaunchPlan &plan;
  /// The index and integer values evaluated so far.
  llvm::DenseMap<Value, int64_t> ints;
  /// The plan integer of each value computed from a residency.
  llvm::DenseMap<Value, int64_t> computed;
  /// The plan integer of each dynamic size of a temporary computed from a
  /// residency (-1: a size as it is).
  llvm::DenseMap<Value, SmallVector<int64_t>> computedShapes;
  /// The plan integer of each constant made one.
  llvm::DenseMap<int64_t, int64_t> constantIntegers;

  int64_t addInteger(normfuse::runtime::PlanInteger n) {
    plan.integers.push_back(n);
    return int64_t(plan.integers.size()) - 1;
  }
  /// The plan integer `v` is: computed, or its value as a constant.
  int64_t integerOf(Value v) {
    if (auto it = computed.find(v); it != computed.end())
      return it->second;
    int64_t value = ints.count(v) ? ints[v] : *getConstantIntValue(v);
    auto [it, added] = constantIntegers.try_emplace(value, 0);
    if (added) {
      normfuse::runtime::PlanInteger n;
      n.op = normfuse::runtime::PlanInteger::Op::Constant;
      n.operands[0] = value;
      it->second = addInteger(n);
    }
    return it->second;
  }
  /// The plan integer of op(operands) where one of them is computed.
  void compute(Value result, normfuse::runtime::PlanInteger::Op op,
               ValueRange operands) {
    if (llvm::none_of(operands, [&](Value v) { return computed.count(v); }))
      return;
    normfuse::runtime::PlanInteger n;
    n.op = op;
    for (auto [i, v] : llvm::enumerate(operands))
      n.operands[i] = integerOf(v);
    computed[result] = addInteger(n);
  }
  /// Fails on `v` computed from a residency where the plan needs it fixed.
  LogicalResult fixed(Operation *at, Value v, const char *what) {
    if (computed.count(v))
      return at->emitOpError()
             << "has " << what
             << " computed from the blocks a device holds; the launch plan "
                "can compute only grids, integer arguments and temporaries' "
                "sizes from them";
    return success();
  }
  /// The constant each memref.global read so far became.
  llvm::DenseMap<Operation *, LaunchArg> globals;

  FailureOr<int64_t> constant(Operation *at, Value v) {
    if (auto it = ints.find(v); it != ints.end())
      return it->second;
    APInt value;
    if (matchPattern(v, m_ConstantInt(&value)))
      return value.getSExtValue();
    return at->emitOpError()
               << "has a size the launch plan cannot read: not computed from "
                  "constants and the sizes of the function's buffers",
           failure();
  }
  /// The shape of memref `v` of `at`, its dynamic sizes from `sizes`.
  FailureOr<SmallVector<int64_t>> shapeOf(Operation *at, MemRefType type,
                                          ValueRange sizes);
  LogicalResult evaluate(Operation *op);
  LogicalResult readResident(ResidentBlocksOp op);
  LogicalResult readAlloc(memref::AllocOp alloc);
  LogicalResult readView(Operation *view);
  /// `result` of `op` (an scf.if) stands for `value`, which the branch
  /// taken yields: the same buffer and sizes, or the same integer.
  LogicalResult alias(Operation *op, Value result, Value value);
  LogicalResult readGlobal(memref::GetGlobalOp get);
  LogicalResult readLaunch(gpu::LaunchFuncOp op);
  LogicalResult readTensorMap(TensorMapOp op);
  /// The tensor map argument each nf.tensor_map read so far became.
  llvm::DenseMap<Value, LaunchArg> tensorMaps;
};

/// The bytes of `shape` of `type`'s elements (a bool takes a byte).
size_t bytesOf(MemRefType type, ArrayRef<int64_t> shape) {
  size_t n = (type.getElementTypeBitWidth() + 7) / 8;
  for (int64_t d : shape)
    n *= size_t(d);
  return n;
}

FailureOr<SmallVector<int64_t>>
PlanReader::shapeOf(Operation *at, MemRefType type, ValueRange sizes) {
  SmallVector<int64_t> shape(type.getShape());
  unsigned next = 0;
  for (int64_t &d : shape) {
    if (!ShapedType::isDynamic(d))
      continue;
    if (next == sizes.size())
      return at->emitOpError() << "has a dynamic size the launch plan cannot "
                                  "read",
             failure();
    FailureOr<int64_t> v = constant(at, sizes[next++]);
    if (failed(v))
      return failure();
    if (*v < 0)
      return at->emitOpError() << "has a negative size " << *v, failure();
    d = *v;
  }
  return shape;
}

/// The plan operation of an arith op the reader evaluates.
static std::optional<normfuse::runtime::PlanInteger::Op>
planOpOf(Operation *op) {
  using P = normfuse::runtime::PlanInteger::Op;
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    using C = arith::CmpIPredicate;
    switch (cmp.getPredicate()) {
    case C::eq:
      return P::Eq;
    case C::ne:
      return P::Ne;
    case C::slt:
      return P::Slt;
    case C::sle:
      return P::Sle;
    case C::sgt:
      return P::Sgt;
    case C::sge:
      return P::Sge;
    case C::ult:
      return P::Ult;
    case C::ule:
      return P::Ule;
    case C::ugt:
      return P::Ugt;
    case C::uge:
      return P::Uge;
    }
    return std::nullopt;
  }
  return llvm::TypeSwitch<Operation *, std::optional<P>>(op)
      .Case([](arith::AddIOp) { return P::Add; })
      .Case([](arith::SubIOp) { return P::Sub; })
      .Case([](arith::MulIOp) { return P::Mul; })
      .Case([](arith::AndIOp) { return P::And; })
      .Case([](arith::OrIOp) { return P::Or; })
      .Case([](arith::MinUIOp) { return P::MinU; })
      .Case([](arith::MaxUIOp) { return P::MaxU; })
      .Case([](arith::MinSIOp) { return P::MinS; })
      .Case([](arith::MaxSIOp) { return P::MaxS; })
      .Case([](arith::DivUIOp) { return P::DivU; })
      .Case([](arith::CeilDivUIOp) { return P::CeilDivU; })
      .Case([](arith::RemUIOp) { return P::RemU; })
      .Case([](arith::DivSIOp) { return P::DivS; })
      .Case([](arith::RemSIOp) { return P::RemS; })
      .Case([](arith::SelectOp) { return P::Select; })
      .Default([](Operation *) { return std::nullopt; });
}

LogicalResult PlanReader::evaluate(Operation *op) {
  SmallVector<int64_t> in;
  for (Value operand : op->getOperands()) {
    FailureOr<int64_t> v = constant(op, operand);
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  Value result = op->getResult(0);
  // Casts between index and integers keep the value.
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op)) {
    ints[result] = in[0];
    copyMapEntry(computed, op->getOperand(0), result);
    return success();
  }
  std::optional<normfuse::runtime::PlanInteger::Op> planOp = planOpOf(op);
  if (!planOp)
    return failure();
  std::string why;
  int64_t value = 0;
  if (!normfuse::runtime::evaluatePlanOp(*planOp, in.data(), value, why))
    return op->emitOpError() << why << " in the launch plan";
  ints[result] = value;
  compute(result, *planOp, op->getOperands());
  return success();
}

LogicalResult PlanReader::readResident(ResidentBlocksOp op) {
  auto kernel =
      SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(op, op.getKernel());
  if (!kernel)
    return op.emitOpError() << "names " << op.getKernel()
                            << ", which is not a kernel of the module";
  normfuse::runtime::Residency r;
  r.kernel = kernel.getName().str();
  r.block = unsigned(op.getBlock());
  r.sharedMemoryBytes = size_t(op.getShared());
  r.planned = op.getPlanned();
  if (auto cluster = kernel->getAttrOfType<IntegerAttr>(kClusterBlocksAttr))
    r.clusterBlocks = std::max<int64_t>(1, cluster.getInt());
  plan.residencies.push_back(r);
  normfuse::runtime::PlanInteger n;
  n.op = normfuse::runtime::PlanInteger::Op::Resident;
  n.operands[0] = int64_t(plan.residencies.size()) - 1;
  ints[op] = r.planned;
  computed[op] = addInteger(n);
  return success();
}

LogicalResult PlanReader::readAlloc(memref::AllocOp alloc) {
  FailureOr<SmallVector<int64_t>> shape =
      shapeOf(alloc, alloc.getType(), alloc.getDynamicSizes());
  if (failed(shape))
    return failure();
  LaunchArg a;
  a.kind = LaunchArg::Kind::Temporary;
  a.index = int64_t(plan.temporaryBytes.size());
  plan.temporaryBytes.push_back(bytesOf(alloc.getType(), *shape));
  plan.temporaryComputed.push_back(-1);
  if (alloc->hasAttr(kZeroedAttr))
    plan.zeroedTemporaries.push_back(a.index);
  buffers[alloc] = a;
  shapes[alloc] = *shape;
  // A size computed from a residency: the bytes too, the element's bytes
  // times each size in turn.
  if (llvm::none_of(alloc.getDynamicSizes(),
                    [&](Value v) { return computed.count(v); }))
    return success();
  SmallVector<int64_t> dims;
  unsigned next = 0;
  using P = normfuse::runtime::PlanInteger;
  P bytes;
  bytes.op = P::Op::Constant;
  bytes.operands[0] = int64_t(bytesOf(alloc.getType(), {}));
  int64_t total = addInteger(bytes);
  for (int64_t d : alloc.getType().getShape()) {
    int64_t factor;
    if (ShapedType::isDynamic(d)) {
      Value size = alloc.getDynamicSizes()[next++];
      factor = integerOf(size);
      dims.push_back(computed.count(size) ? factor : -1);
    } else {
      P c;
      c.op = P::Op::Constant;
      c.operands[0] = d;
      factor = addInteger(c);
      dims.push_back(-1);
    }
    P mul;
    mul.op = P::Op::Mul;
    mul.operands[0] = total;
    mul.operands[1] = factor;
    total = addInteger(mul);
  }
  plan.temporaryComputed.back() = total;
  computedShapes[alloc] = dims;
  return success();
}

/// The bytes of a constant as kernels read it: its elements in order, a
/// bool one byte each (MLIR packs i1 elements in bits), a splat repeated.
static std::optional<std::vector<uint8_t>> constantBytes(DenseElementsAttr v) {
  auto type = cast<ShapedType>(v.getType());
  Type element = type.getElementType();
  int64_t n = type.getNumElements();
  std::vector<uint8_t> bytes;
  if (element.isInteger(1)) {
    for (bool b : v.getValues<bool>())
      bytes.push_back(b ? 1 : 0);
    return bytes;
  }
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8)
    return std::nullopt;
  size_t size = element.getIntOrFloatBitWidth() / 8;
  ArrayRef<char> raw = v.getRawData();
  if (v.isSplat()) {
    bytes.reserve(size_t(n) * size);
    for (int64_t i = 0; i < n; ++i)
      bytes.insert(bytes.end(), raw.begin(), raw.begin() + size);
    return bytes;
  }
  bytes.assign(raw.begin(), raw.end());
  return bytes;
}

LogicalResult PlanReader::readGlobal(memref::GetGlobalOp get) {
  auto module = get->getParentOfType<ModuleOp>();
  auto global = module ? module.lookupSymbol<memref::GlobalOp>(get.getName())
                       : memref::GlobalOp();
  auto value =
      global ? dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr())
             : DenseElementsAttr();
  if (!global || !global.getConstant() || !value)
    return get.emitOpError()
           << "reads a global that is not a constant with dense elements; "
              "the launch plan uploads constants only";
  auto it = globals.find(global);
  if (it == globals.end()) {
    std::optional<std::vector<uint8_t>> bytes = constantBytes(value);
    if (!bytes)
      return get.emitOpError() << "reads a constant of " << value.getType()
                               << ", whose elements have no bytes of their own";
    LaunchArg a;
    a.kind = LaunchArg::Kind::Constant;
    a.index = int64_t(plan.constants.size());
    plan.constants.push_back(
        std::make_shared<const std::vector<uint8_t>>(std::move(*bytes)));
    it = globals.try_emplace(global, a).first;
  }
  buffers[get] = it->second;
  shapes[get] = SmallVector<int64_t>(get.getType().getShape());
  return success();
}

LogicalResult PlanReader::alias(Operation *op, Value result, Value value) {
  auto copyEntry = [&](auto &map) { copyMapEntry(map, value, result); };
  if (isa<MemRefType>(result.getType())) {
    if (!buffers.count(value))
      return op->emitOpError()
             << "yields a buffer the launch plan cannot trace";
    copyEntry(buffers);
    copyEntry(shapes);
    copyEntry(computedShapes);
    return success();
  }
  if (!ints.count(value))
    return op->emitOpError() << "yields a value the launch plan cannot trace";
  copyEntry(ints);
  copyEntry(computed);
  return success();
}

LogicalResult PlanReader::readView(Operation *view) {
  auto it = buffers.find(view->getOperand(0));
  if (it == buffers.end())
    return view->emitOpError() << "views a buffer the launch plan cannot trace";
  if (auto c = computedShapes.find(view->getOperand(0));
      c != computedShapes.end()) {
    if (!isa<memref::CastOp>(view))
      return view->emitOpError()
             << "reshapes a temporary whose size is computed from the blocks "
                "a device holds";
    copyMapEntry(computedShapes, view->getOperand(0), view->getResult(0));
  }
  copyMapEntry(buffers, view->getOperand(0), view->getResult(0));
  SmallVector<int64_t> source = shapes.lookup(view->getOperand(0));
  SmallVector<int64_t> shape;
  if (auto collapse = dyn_cast<memref::CollapseShapeOp>(view)) {
    for (const ReassociationIndices &group :
         collapse.getReassociationIndices()) {
      int64_t n = 1;
      for (int64_t d : group)
        n *= source[d];
      shape.push_back(n);
    }
  } else if (auto expand = dyn_cast<memref::ExpandShapeOp>(view)) {
    SmallVector<int64_t> staticShape(expand.getStaticOutputShape());
    FailureOr<SmallVector<int64_t>> s = shapeOf(
        view, MemRefType::get(staticShape, expand.getType().getElementType()),
        expand.getOutputShape());
    if (failed(s))
      return failure();
    shape = *s;
  } else {
    shape.assign(source.begin(), source.end()); // a cast
  }
  shapes[view->getResult(0)] = shape;
  return success();
}

LogicalResult PlanReader::readTensorMap(TensorMapOp op) {
  auto it = buffers.find(op.getBuffer());
  if (it == buffers.end())
    return op.emitOpError() << "maps a buffer the launch plan cannot trace to "
                               "a function argument or a temporary";
  if (computedShapes.count(op.getBuffer()))
    return op.emitOpError() << "maps a temporary whose size is computed from "
                               "the blocks a device holds";
  using Spec = normfuse::runtime::TensorMapSpec;
  LaunchArg a;
  a.kind = LaunchArg::Kind::TensorMap;
  a.mapOf = it->second.kind;
  a.index = it->second.index;
  Type element = op.getBuffer().getType().getElementType();
  a.map.element = element.isF16()    ? Spec::Element::F16
                  : element.isBF16() ? Spec::Element::BF16
                                     : Spec::Element::F32;
  a.map.rank = int(op.getDims().size());
  for (int d = 0; d < a.map.rank; ++d) {
    a.map.dims[d] = uint64_t(op.getDims()[d]);
    a.map.box[d] = uint32_t(op.getBox()[d]);
    if (d)
      a.map.strides[d - 1] = uint64_t(op.getStrides()[d - 1]);
  }
  a.map.swizzle = int(op.getSwizzle());
  std::string why;
  if (!a.map.check(0, bytesOf(plan, a), why))
    return op.emitOpError() << "is " << why;
  tensorMaps[op] = a;
  return success();
}

LogicalResult PlanReader::readLaunch(gpu::LaunchFuncOp op) {
  Launch launch;
  launch.kernel = op.getKernelName().str();
  gpu::KernelDim3 grid = op.getGridSizeOperandValues();
  gpu::KernelDim3 block = op.getBlockSizeOperandValues();
  Value dims[6] = {grid.x, grid.y, grid.z, block.x, block.y, block.z};
  // A grid of no blocks known when the plan is read (a split K's finish
  // where the sizes of the call make one range) is no launch.
  for (int i = 0; i < 3; ++i)
    if (!computed.count(dims[i]))
      if (FailureOr<int64_t> d = constant(op, dims[i]); succeeded(d) && !*d)
        return success();
  for (int i = 0; i < 6; ++i) {
    FailureOr<int64_t> d = constant(op, dims[i]);
    if (failed(d))
      return failure();
    // A computed grid may be 0 blocks (as planned): the launch is then
    // left out when the plan is resolved (resolveResidencies).
    bool mayBeEmpty = i < 3 && computed.count(dims[i]);
    if (*d < (mayBeEmpty ? 0 : 1) || *d > int64_t(UINT32_MAX))
      return op.emitOpError() << "launches a grid or block dimension of " << *d;
    (i < 3 ? launch.grid[i] : launch.block[i - 3]) = unsigned(*d);
    if (i < 3 && computed.count(dims[i]))
      launch.gridComputed[i] = computed[dims[i]];
    else if (i >= 3 && failed(fixed(op, dims[i], "a block size")))
      return failure();
  }
  if (Value smem = op.getDynamicSharedMemorySize()) {
    if (failed(fixed(op, smem, "a shared memory size")))
      return failure();
    FailureOr<int64_t> bytes = constant(op, smem);
    if (failed(bytes))
      return failure();
    launch.sharedMemoryBytes = size_t(*bytes);
  }
  // A kernel printed with dynamic shared memory needs at least its size.
  if (auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          op, op.getKernel())) {
    launch.cooperative =
        kernel.walk([](GridBarrierOp) { return WalkResult::interrupt(); })
            .wasInterrupted();
    // A kernel whose warpgroups raise their registers (setmaxnreg) says
    // the registers a thread it counts on, which a runtime checks.
    bool raises = kernel
                      .walk([](SetMaxRegistersOp r) {
                        return r.getIncrease() ? WalkResult::interrupt()
                                               : WalkResult::advance();
                      })
                      .wasInterrupted();
    auto registers = kernel->getAttrOfType<IntegerAttr>(kLaunchRegistersAttr);
    if (raises && !registers)
      return op.emitOpError()
             << "launches " << launch.kernel
             << ", which raises its registers (nf.set_max_registers) "
                "without saying the registers a thread it counts on ("
             << kLaunchRegistersAttr << ")";
    if (registers) {
      int64_t n = registers.getInt();
      if (n < 8 || n > 255 || n % 8)
        return op.emitOpError()
               << "launches " << launch.kernel << " with " << n
               << " registers a thread (" << kLaunchRegistersAttr
               << "): not a multiple of 8 from 8 to 255";
      launch.launchRegisters = n;
    }
    cuda::SharedMemoryLayout smem = cuda::sharedMemoryLayout(kernel);
    if (smem.dynamic() && launch.sharedMemoryBytes < size_t(smem.bytes))
      return op.emitOpError()
             << "launches " << launch.kernel << " with "
             << launch.sharedMemoryBytes
             << " bytes of dynamic shared memory; its buffers take "
             << smem.bytes;
  }
  for (Value arg : op.getKernelOperands()) {
    if (isa<TensorMapType>(arg.getType())) {
      auto it = tensorMaps.find(arg);
      if (it == tensorMaps.end())
        return op.emitOpError()
               << "passes a tensor map the launch plan cannot trace to an "
                  "nf.tensor_map";
      launch.args.push_back(it->second);
      continue;
    }
    if (isa<MemRefType>(arg.getType())) {
      auto it = buffers.find(arg);
      if (it == buffers.end())
        return op.emitOpError()
               << "passes a buffer the launch plan cannot trace to a "
                  "function argument or a temporary";
      launch.args.push_back(it->second);
      continue;
    }
    FailureOr<int64_t> v = constant(op, arg);
    if (failed(v))
      return failure();
    LaunchArg a;
    a.kind = LaunchArg::Kind::Integer;
    a.value = *v;
    if (auto it = computed.find(arg); it != computed.end())
      a.computed = it->second;
    launch.args.push_back(a);
  }
  normfuse::runtime::Step step;
  step.kind = normfuse::runtime::Step::Kind::Launch;
  step.launch = std::move(launch);
  plan.steps.push_back(std::move(step));
  return success();
}

LogicalResult PlanReader::readBlock(Block &block) {
  for (Operation &op : block) {
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(&op)
            .Case([&](arith::ConstantOp) { return success(); })
            .Case([&](memref::GetGlobalOp get) { return readGlobal(get); })
            .Case([&](memref::AllocOp alloc) { return readAlloc(alloc); })
            .Case([&](ResidentBlocksOp r) { return readResident(r); })
            .Case([&](TensorMapOp m) { return readTensorMap(m); })
            .Case<memref::CollapseShapeOp, memref::ExpandShapeOp,
                  memref::CastOp>(
                [&](Operation *view) { return readView(view); })
            .Case([&](memref::DimOp dim) -> LogicalResult {
              auto it = shapes.find(dim.getSource());
              FailureOr<int64_t> index = constant(dim, dim.getIndex());
              if (it == shapes.end() || failed(index) || *index < 0 ||
                  *index >= int64_t(it->second.size()))
                return dim.emitOpError()
                       << "reads a size the launch plan cannot trace";
              ints[dim] = it->second[*index];
              if (auto c = computedShapes.find(dim.getSource());
                  c != computedShapes.end() && c->second[*index] >= 0)
                computed[dim] = c->second[*index];
              return success();
            })
            .Case<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::AndIOp,
                  arith::OrIOp, arith::MinUIOp, arith::MaxUIOp, arith::MinSIOp,
                  arith::MaxSIOp, arith::DivUIOp, arith::CeilDivUIOp,
                  arith::RemUIOp, arith::DivSIOp, arith::RemSIOp, arith::CmpIOp,
                  arith::SelectOp, arith::IndexCastOp, arith::IndexCastUIOp>(
                [&](Operation *arith) { return evaluate(arith); })
            .Case([&](memref::DeallocOp) { return success(); })
            .Case([&](memref::CopyOp copy) -> LogicalResult {
              auto from = buffers.find(copy.getSource());
              auto to = buffers.find(copy.getTarget());
              if (from == buffers.end() || to == buffers.end())
                return copy.emitOpError()
                       << "copies a buffer the launch plan cannot trace";
              if (computedShapes.count(copy.getSource()) ||
                  computedShapes.count(copy.getTarget()))
                return copy.emitOpError()
                       << "copies a temporary whose size is computed from "
                          "the blocks a device holds";
              if (shapes[copy.getSource()] != shapes[copy.getTarget()])
                return copy.emitOpError()
                       << "copies between buffers of different shapes";
              normfuse::runtime::Step step;
              step.kind = normfuse::runtime::Step::Kind::Copy;
              step.copy.from = from->second;
              step.copy.to = to->second;
              step.copy.bytes =
                  bytesOf(cast<MemRefType>(copy.getSource().getType()),
                          shapes[copy.getSource()]);
              plan.steps.push_back(step);
              return success();
            })
            .Case([&](gpu::LaunchFuncOp launch) { return readLaunch(launch); })
            .Case([&](scf::IfOp ifOp) -> LogicalResult {
              if (failed(fixed(ifOp, ifOp.getCondition(), "a condition")))
                return failure();
              FailureOr<int64_t> cond = constant(ifOp, ifOp.getCondition());
              if (failed(cond))
                return failure();
              Region &taken =
                  *cond ? ifOp.getThenRegion() : ifOp.getElseRegion();
              if (taken.empty())
                return success();
              if (failed(readBlock(taken.front())))
                return failure();
              // The results are what the taken branch yields (TOSA's
              // broadcast of a dimension of 1 yields a new buffer or its
              // operand): the same buffers and sizes.
              auto yield = cast<scf::YieldOp>(taken.front().getTerminator());
              for (auto [result, value] :
                   llvm::zip_equal(ifOp.getResults(), yield.getOperands()))
                if (failed(alias(ifOp, result, value)))
                  return failure();
              return success();
            })
            .Case<scf::YieldOp, func::ReturnOp>(
                [&](Operation *) { return success(); })
            .Default([&](Operation *other) {
              return other->emitOpError()
                     << "cannot be part of a launch plan (the host side of a "
                        "CUDA function holds allocations, views and "
                        "launches)";
            });
    if (failed(result))
      return failure();
  }
  return success();
}

} // namespace

FailureOr<LaunchPlan>
nf::readLaunchPlan(func::FuncOp host, unsigned numOutputs,
                   ArrayRef<ArrayRef<int64_t>> bufferShapes) {
  LaunchPlan plan;
  if (host.getNumResults() != 0)
    return host.emitOpError() << "returns values: the launch plan needs a "
                                 "function whose results are out-parameters",
           failure();
  if (!bufferShapes.empty() && bufferShapes.size() != host.getNumArguments())
    return host.emitOpError() << "has " << host.getNumArguments()
                              << " buffers; the launch plan was given "
                              << bufferShapes.size() << " shapes",
           failure();
  PlanReader reader(plan);
  for (BlockArgument arg : host.getArguments()) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    unsigned i = arg.getArgNumber();
    if (!type || (bufferShapes.empty() && !type.hasStaticShape()))
      return host.emitOpError()
                 << "has argument " << i << " of type " << arg.getType()
                 << ": the launch plan needs buffers of "
                    "static shape, or their shapes",
             failure();
    SmallVector<int64_t> shape(type.getShape());
    if (!bufferShapes.empty()) {
      bool fits = bufferShapes[i].size() == shape.size();
      for (size_t d = 0; fits && d < shape.size(); ++d)
        fits = bufferShapes[i][d] >= 0 && (ShapedType::isDynamic(shape[d]) ||
                                           shape[d] == bufferShapes[i][d]);
      if (!fits)
        return host.emitOpError()
                   << "has argument " << i << " of type " << arg.getType()
                   << ", which a buffer of the given shape "
                      "does not fit",
               failure();
      shape.assign(bufferShapes[i].begin(), bufferShapes[i].end());
    }
    LaunchArg a;
    a.kind = LaunchArg::Kind::Buffer;
    a.index = i;
    reader.buffers[arg] = a;
    reader.shapes[arg] = shape;
    plan.bufferBytes.push_back(bytesOf(type, shape));
  }
  if (numOutputs > host.getNumArguments())
    return host.emitOpError() << "has fewer arguments than outputs", failure();
  plan.numInputs = host.getNumArguments() - numOutputs;
  if (failed(reader.readBlock(host.getBody().front())))
    return failure();
  reader.finish();
  return plan;
}
