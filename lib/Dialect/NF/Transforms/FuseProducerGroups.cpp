//===- FuseProducerGroups.cpp - producer + pointwise -> nf.fused -*- C++
//-*-===//
//
// Part of normfuse. See fuseProducerGroups in Patterns.h: the legality rules
// live here, the policy in the control function.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/Dialect/NF/Transforms/Passes.h"
#include "normfuse/Dialect/NF/Transforms/Patterns.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFFUSEPASS
#include "normfuse/Dialect/NF/Transforms/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;

namespace {

bool isForwardNorm(Operation *op) {
  return isa<LayerNormOp, RMSNormOp, GroupNormOp, InstanceNormOp,
             BatchNormTrainingOp, BatchNormInferenceOp>(op);
}

/// Producers whose first result an epilogue may consume.
bool takesEpilogue(Operation *op) {
  return isa<MatmulOp, Conv2DOp>(op) || isForwardNorm(op);
}

/// Producers whose first operand a prologue may compute.
bool takesPrologue(Operation *op) {
  return isForwardNorm(op) || isa<BiasAddGradOp>(op);
}

/// A residual add or multiply: both operands are full tensors.
bool isTensorCombination(Operation *op) { return isa<AddOp, MulOp>(op); }

struct Group {
  Operation *producer = nullptr;
  Operation *prologue = nullptr;
  SmallVector<Operation *> epilogue;

  SmallVector<Operation *> ops() const {
    SmallVector<Operation *> all;
    if (prologue)
      all.push_back(prologue);
    all.push_back(producer);
    all.append(epilogue.begin(), epilogue.end());
    return all;
  }
  /// Where the nf.fused op goes: the group's last op in its block.
  Operation *last() const {
    return epilogue.empty() ? producer : epilogue.back();
  }
};

/// Whether every user outside the group of a value the group defines comes
/// after `last`, where the nf.fused op will define it.
bool outsideUsersComeAfter(ArrayRef<Operation *> ops, Operation *last) {
  llvm::SmallPtrSet<Operation *, 8> inside(ops.begin(), ops.end());
  Block *block = last->getBlock();
  for (Operation *op : ops) {
    for (Operation *user : op->getUsers()) {
      if (inside.contains(user))
        continue;
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor || !last->isBeforeInBlock(ancestor))
        return false;
    }
  }
  return true;
}

/// The pointwise op defining the producer's first operand, if the rules and
/// `control` let it be the prologue.
Operation *findPrologue(Operation *producer,
                        const llvm::SmallPtrSetImpl<Operation *> &claimed,
                        const ControlFusionFn &control) {
  if (!takesPrologue(producer) || producer->getNumOperands() == 0)
    return nullptr;
  OpOperand &use = producer->getOpOperand(0);
  Operation *def = use.get().getDefiningOp();
  if (!def || !isPointwiseOp(def) || claimed.contains(def) ||
      def->getBlock() != producer->getBlock() || !control(use))
    return nullptr;
  return def;
}

/// The chain of pointwise consumers of the producer's first result.
SmallVector<Operation *>
findEpilogue(Operation *producer,
             const llvm::SmallPtrSetImpl<Operation *> &claimed,
             const ControlFusionFn &control) {
  SmallVector<Operation *> chain;
  if (!takesEpilogue(producer))
    return chain;
  Value tail = producer->getResult(0);
  while (tail.hasOneUse()) {
    OpOperand &use = *tail.use_begin();
    Operation *user = use.getOwner();
    if (!isPointwiseOp(user) || claimed.contains(user) ||
        user->getBlock() != producer->getBlock())
      break;
    // The group's value must be the data a pointwise op maps, not the
    // per-channel vector of a bias_add.
    if (isa<BiasAddOp>(user) && use.getOperandNumber() != 0)
      break;
    if (!control(use))
      break;
    chain.push_back(user);
    tail = user->getResult(0);
  }
  return chain;
}

/// Replaces the group's ops by one nf.fused op placed at its last op.
void materialize(const Group &group, RewriterBase &rewriter) {
  SmallVector<Operation *> ops = group.ops();
  llvm::SmallPtrSet<Operation *, 8> inside(ops.begin(), ops.end());

  llvm::SetVector<Value> inputs;
  SmallVector<Value> results;
  for (Operation *op : ops) {
    for (Value operand : op->getOperands())
      if (!inside.contains(operand.getDefiningOp()))
        inputs.insert(operand);
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *u) { return !inside.contains(u); }))
        results.push_back(result);
  }

  rewriter.setInsertionPointAfter(group.last());
  auto fused = rewriter.create<FusedOp>(group.producer->getLoc(),
                                        ValueRange(results).getTypes(),
                                        inputs.getArrayRef());
  Block *body = rewriter.createBlock(&fused.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  for (Operation *op : ops)
    rewriter.clone(*op, mapping);
  SmallVector<Value> yielded;
  for (Value result : results)
    yielded.push_back(mapping.lookup(result));
  rewriter.create<YieldOp>(group.producer->getLoc(), yielded);

  for (auto [result, replacement] : llvm::zip(results, fused.getResults()))
    rewriter.replaceUsesWithIf(result, replacement, [&](OpOperand &use) {
      return !inside.contains(use.getOwner());
    });
  for (Operation *op : llvm::reverse(ops))
    rewriter.eraseOp(op);
}

struct NFFusePass : nf::impl::NFFusePassBase<NFFusePass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    fuseProducerGroups(getOperation(), rewriter, getDefaultControlFusionFn());
  }
};

} // namespace

ControlFusionFn nf::getDefaultControlFusionFn() {
  return [](OpOperand &use) {
    Operation *owner = use.getOwner();
    if (isProducerOp(owner)) {
      // A prologue candidate: use.get() is its result.
      if (isa<BiasAddGradOp>(owner))
        return true;
      return use.get().hasOneUse();
    }
    // An epilogue candidate. A residual combination feeding only a norm
    // is better spent as that norm's prologue.
    if (isTensorCombination(owner)) {
      Value result = owner->getResult(0);
      if (result.hasOneUse() && isForwardNorm(*result.user_begin()))
        return false;
    }
    return true;
  };
}

unsigned nf::fuseProducerGroups(Operation *root, RewriterBase &rewriter,
                                const ControlFusionFn &control) {
  SmallVector<Operation *> producers;
  // Pre-order, so that skipping an nf.fused skips its body: a post-order
  // walk visits the body first, and a second run of the pipeline then
  // wrapped each group in another nf.fused.
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<FusedOp>(op))
      return WalkResult::skip();
    if (isProducerOp(op))
      producers.push_back(op);
    return WalkResult::advance();
  });

  llvm::SmallPtrSet<Operation *, 32> claimed;
  SmallVector<Group> groups;
  for (Operation *producer : producers) {
    Group group;
    group.producer = producer;
    group.prologue = findPrologue(producer, claimed, control);
    group.epilogue = findEpilogue(producer, claimed, control);
    while (!group.epilogue.empty() &&
           !outsideUsersComeAfter(group.ops(), group.last()))
      group.epilogue.pop_back();
    if (group.prologue && !outsideUsersComeAfter(group.ops(), group.last()))
      group.prologue = nullptr;
    if (!group.prologue && group.epilogue.empty())
      continue;
    for (Operation *op : group.ops())
      claimed.insert(op);
    groups.push_back(std::move(group));
  }
  for (const Group &group : groups)
    materialize(group, rewriter);
  return groups.size();
}
