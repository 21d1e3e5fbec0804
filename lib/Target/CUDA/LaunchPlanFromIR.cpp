//===- LaunchPlanFromIR.cpp - read a launch plan off host IR ----*- C++ -*-===//
//
// Part of normfuse. See LaunchPlanFromIR.h. Each memref value of the host
// function is traced to the buffer or temporary it views, with its shape;
// index values are evaluated from constants, the buffers' sizes
// (memref.dim) and integer arithmetic; an scf.if runs the branch its
// condition selects.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Target/LaunchPlanFromIR.h"
#include "normfuse/Codegen/CUDA/SharedMemory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nf;
using normfuse::runtime::Launch;
using normfuse::runtime::LaunchArg;
using normfuse::runtime::LaunchPlan;
using normfuse::runtime::Step;

namespace {

class PlanReader {
public:
  explicit PlanReader(LaunchPlan &plan) : plan(plan) {}

  LogicalResult readBlock(Block &block);
  /// The buffer, temporary or constant each memref value views, and its
  /// shape.
  llvm::DenseMap<Value, LaunchArg> buffers;
  llvm::DenseMap<Value, SmallVector<int64_t>> shapes;

private:
  LaunchPlan &plan;
  /// The index and integer values evaluated so far.
  llvm::DenseMap<Value, int64_t> ints;
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
  LogicalResult readView(Operation *view);
  LogicalResult readGlobal(memref::GetGlobalOp get);
  LogicalResult readLaunch(gpu::LaunchFuncOp op);
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

LogicalResult PlanReader::evaluate(Operation *op) {
  SmallVector<int64_t> in;
  for (Value operand : op->getOperands()) {
    FailureOr<int64_t> v = constant(op, operand);
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  auto nonZero = [&](int64_t d) -> LogicalResult {
    if (d == 0)
      return op->emitOpError() << "divides by zero in the launch plan";
    return success();
  };
  auto u = [](int64_t v) { return uint64_t(v); };
  FailureOr<int64_t> result =
      llvm::TypeSwitch<Operation *, FailureOr<int64_t>>(op)
          // Two's complement wrapping, as the ops define it (no C++
          // overflow).
          .Case([&](arith::AddIOp) { return int64_t(u(in[0]) + u(in[1])); })
          .Case([&](arith::SubIOp) { return int64_t(u(in[0]) - u(in[1])); })
          .Case([&](arith::MulIOp) { return int64_t(u(in[0]) * u(in[1])); })
          .Case([&](arith::AndIOp) { return in[0] & in[1]; })
          .Case([&](arith::OrIOp) { return in[0] | in[1]; })
          .Case([&](arith::MinUIOp) {
            return int64_t(std::min(u(in[0]), u(in[1])));
          })
          .Case([&](arith::MaxUIOp) {
            return int64_t(std::max(u(in[0]), u(in[1])));
          })
          .Case([&](arith::MinSIOp) { return std::min(in[0], in[1]); })
          .Case([&](arith::MaxSIOp) { return std::max(in[0], in[1]); })
          .Case<arith::DivUIOp, arith::CeilDivUIOp, arith::RemUIOp,
                arith::DivSIOp, arith::RemSIOp>(
              [&](Operation *div) -> FailureOr<int64_t> {
                if (failed(nonZero(in[1])))
                  return failure();
                if (isa<arith::DivUIOp>(div))
                  return int64_t(u(in[0]) / u(in[1]));
                if (isa<arith::CeilDivUIOp>(div))
                  return int64_t(u(in[0]) / u(in[1]) +
                                 (u(in[0]) % u(in[1]) != 0));
                if (isa<arith::RemUIOp>(div))
                  return int64_t(u(in[0]) % u(in[1]));
                if (in[0] == INT64_MIN && in[1] == -1)
                  return div->emitOpError() << "overflows in the launch plan",
                         failure();
                if (isa<arith::DivSIOp>(div))
                  return in[0] / in[1];
                return in[0] % in[1];
              })
          .Case([&](arith::CmpIOp cmp) -> FailureOr<int64_t> {
            using P = arith::CmpIPredicate;
            int64_t a = in[0], b = in[1];
            switch (cmp.getPredicate()) {
            case P::eq:
              return a == b;
            case P::ne:
              return a != b;
            case P::slt:
              return a < b;
            case P::sle:
              return a <= b;
            case P::sgt:
              return a > b;
            case P::sge:
              return a >= b;
            case P::ult:
              return u(a) < u(b);
            case P::ule:
              return u(a) <= u(b);
            case P::ugt:
              return u(a) > u(b);
            case P::uge:
              return u(a) >= u(b);
            }
            return failure();
          })
          .Case([&](arith::SelectOp) { return in[0] ? in[1] : in[2]; })
          .Case<arith::IndexCastOp, arith::IndexCastUIOp>(
              [&](Operation *) { return in[0]; })
          .Default([](Operation *) { return failure(); });
  if (failed(result))
    return failure();
  ints[op->getResult(0)] = *result;
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

LogicalResult PlanReader::readView(Operation *view) {
  auto it = buffers.find(view->getOperand(0));
  if (it == buffers.end())
    return view->emitOpError() << "views a buffer the launch plan cannot trace";
  buffers[view->getResult(0)] = it->second;
  ArrayRef<int64_t> source = shapes[view->getOperand(0)];
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

LogicalResult PlanReader::readLaunch(gpu::LaunchFuncOp op) {
  Launch launch;
  launch.kernel = op.getKernelName().str();
  gpu::KernelDim3 grid = op.getGridSizeOperandValues();
  gpu::KernelDim3 block = op.getBlockSizeOperandValues();
  Value dims[6] = {grid.x, grid.y, grid.z, block.x, block.y, block.z};
  for (int i = 0; i < 6; ++i) {
    FailureOr<int64_t> d = constant(op, dims[i]);
    if (failed(d))
      return failure();
    if (*d < 1 || *d > int64_t(UINT32_MAX))
      return op.emitOpError() << "launches a grid or block dimension of " << *d;
    (i < 3 ? launch.grid[i] : launch.block[i - 3]) = unsigned(*d);
  }
  if (Value smem = op.getDynamicSharedMemorySize()) {
    FailureOr<int64_t> bytes = constant(op, smem);
    if (failed(bytes))
      return failure();
    launch.sharedMemoryBytes = size_t(*bytes);
  }
  // A kernel printed with dynamic shared memory needs at least its size.
  if (auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          op, op.getKernel())) {
    cuda::SharedMemoryLayout smem = cuda::sharedMemoryLayout(kernel);
    if (smem.dynamic() && launch.sharedMemoryBytes < size_t(smem.bytes))
      return op.emitOpError()
             << "launches " << launch.kernel << " with "
             << launch.sharedMemoryBytes
             << " bytes of dynamic shared memory; its buffers take "
             << smem.bytes;
  }
  for (Value arg : op.getKernelOperands()) {
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
            .Case([&](memref::AllocOp alloc) -> LogicalResult {
              FailureOr<SmallVector<int64_t>> shape =
                  shapeOf(alloc, alloc.getType(), alloc.getDynamicSizes());
              if (failed(shape))
                return failure();
              LaunchArg a;
              a.kind = LaunchArg::Kind::Temporary;
              a.index = int64_t(plan.temporaryBytes.size());
              plan.temporaryBytes.push_back(bytesOf(alloc.getType(), *shape));
              buffers[alloc] = a;
              shapes[alloc] = *shape;
              return success();
            })
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
              FailureOr<int64_t> cond = constant(ifOp, ifOp.getCondition());
              if (failed(cond))
                return failure();
              Region &taken =
                  *cond ? ifOp.getThenRegion() : ifOp.getElseRegion();
              return taken.empty() ? success() : readBlock(taken.front());
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
  return plan;
}
