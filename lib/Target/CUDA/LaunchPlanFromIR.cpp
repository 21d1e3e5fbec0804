//===- LaunchPlanFromIR.cpp - read a launch plan off host IR ----*- C++ -*-===//
//
// Part of normfuse. See LaunchPlanFromIR.h. Each memref value of the host
// function is traced to the buffer or temporary it views; index values
// must be constants (static shapes); an scf.if on a constant runs the
// branch it selects.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Target/LaunchPlanFromIR.h"

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
  llvm::DenseMap<Value, LaunchArg> buffers;

private:
  LaunchPlan &plan;

  FailureOr<int64_t> constant(Operation *at, Value v) {
    APInt value;
    if (matchPattern(v, m_ConstantInt(&value)))
      return value.getSExtValue();
    return at->emitOpError()
               << "has a size the launch plan cannot read: not a constant "
                  "(the plan needs static shapes)",
           failure();
  }
  LogicalResult readLaunch(gpu::LaunchFuncOp op);
};

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
            .Case([&](memref::AllocOp alloc) -> LogicalResult {
              MemRefType type = alloc.getType();
              if (!type.hasStaticShape())
                return alloc.emitOpError()
                       << "allocates a temporary of dynamic shape: the launch "
                          "plan needs static shapes";
              LaunchArg a;
              a.kind = LaunchArg::Kind::Temporary;
              a.index = int64_t(plan.temporaryBytes.size());
              plan.temporaryBytes.push_back(
                  size_t(type.getNumElements()) *
                  size_t(type.getElementTypeBitWidth() / 8));
              buffers[alloc] = a;
              return success();
            })
            .Case<memref::CollapseShapeOp, memref::ExpandShapeOp,
                  memref::CastOp>([&](Operation *view) -> LogicalResult {
              auto it = buffers.find(view->getOperand(0));
              if (it == buffers.end())
                return view->emitOpError()
                       << "views a buffer the launch plan cannot trace";
              buffers[view->getResult(0)] = it->second;
              return success();
            })
            .Case([&](memref::DeallocOp) { return success(); })
            .Case([&](memref::CopyOp copy) -> LogicalResult {
              auto from = buffers.find(copy.getSource());
              auto to = buffers.find(copy.getTarget());
              auto type = cast<MemRefType>(copy.getSource().getType());
              if (from == buffers.end() || to == buffers.end() ||
                  !type.hasStaticShape())
                return copy.emitOpError()
                       << "copies a buffer the launch plan cannot trace";
              normfuse::runtime::Step step;
              step.kind = normfuse::runtime::Step::Kind::Copy;
              step.copy.from = from->second;
              step.copy.to = to->second;
              step.copy.bytes = size_t(type.getNumElements()) *
                                size_t(type.getElementTypeBitWidth() / 8);
              plan.steps.push_back(step);
              return success();
            })
            .Case([&](gpu::LaunchFuncOp launch) { return readLaunch(launch); })
            .Case([&](scf::IfOp ifOp) -> LogicalResult {
              APInt cond;
              if (!matchPattern(ifOp.getCondition(), m_ConstantInt(&cond)))
                return ifOp.emitOpError()
                       << "branches on a value the launch plan cannot read";
              Region &taken = cond.getBoolValue() ? ifOp.getThenRegion()
                                                  : ifOp.getElseRegion();
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

FailureOr<LaunchPlan> nf::readLaunchPlan(func::FuncOp host,
                                         unsigned numOutputs) {
  LaunchPlan plan;
  if (host.getNumResults() != 0)
    return host.emitOpError() << "returns values: the launch plan needs a "
                                 "function whose results are out-parameters",
           failure();
  PlanReader reader(plan);
  for (BlockArgument arg : host.getArguments()) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type || !type.hasStaticShape())
      return host.emitOpError() << "has argument " << arg.getArgNumber()
                                << " of type " << arg.getType()
                                << ": the launch plan needs buffers of "
                                   "static shape",
             failure();
    LaunchArg a;
    a.kind = LaunchArg::Kind::Buffer;
    a.index = arg.getArgNumber();
    reader.buffers[arg] = a;
    plan.bufferBytes.push_back(size_t(type.getNumElements()) *
                               size_t(type.getElementTypeBitWidth() / 8));
  }
  if (numOutputs > host.getNumArguments())
    return host.emitOpError() << "has fewer arguments than outputs", failure();
  plan.numInputs = host.getNumArguments() - numOutputs;
  if (failed(reader.readBlock(host.getBody().front())))
    return failure();
  return plan;
}
