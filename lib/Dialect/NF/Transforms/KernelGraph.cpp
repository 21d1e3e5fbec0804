//===- KernelGraph.cpp - kernel counts and DOT graphs -----------*- C++ -*-===//
//
// Part of normfuse. See KernelGraph.h; the nf-kernel-graph pass prints the
// counts and writes the DOT file.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Dialect/NF/Transforms/KernelGraph.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/Dialect/NF/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFKERNELGRAPHPASS
#include "normfuse/Dialect/NF/Transforms/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;

namespace {

bool isView(Operation *op) {
  return isa<tosa::ReshapeOp, tosa::IdentityOp, tensor::ReshapeOp,
             tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(
      op);
}

std::string typeLabel(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    for (int64_t dim : tensor.getShape())
      os << (ShapedType::isDynamic(dim) ? std::string("?")
                                        : std::to_string(dim))
         << "x";
    os << tensor.getElementType();
  } else {
    os << type;
  }
  return text;
}

/// "matmul + bias_add + gelu" for a fused op, the op name otherwise.
std::string kernelLabel(Operation *op) {
  auto fused = dyn_cast<FusedOp>(op);
  if (!fused)
    return op->getName().getStringRef().str();
  SmallVector<std::string> names;
  for (Operation &inner : fused.getBody().front().without_terminator())
    names.push_back(inner.getName().stripDialect().str());
  return "nf.fused\\n" + llvm::join(names, " + ");
}

} // namespace

bool nf::isKernelOp(Operation *op) {
  return !op->hasTrait<mlir::OpTrait::IsTerminator>() &&
         !op->hasTrait<mlir::OpTrait::ConstantLike>() && !isView(op);
}

unsigned nf::countKernels(func::FuncOp function) {
  unsigned count = 0;
  for (Block &block : function.getBody())
    for (Operation &op : block)
      count += isKernelOp(&op);
  return count;
}

void nf::printKernelGraph(func::FuncOp function, llvm::raw_ostream &os) {
  std::string prefix = function.getSymName().str() + "_";
  os << "  subgraph \"cluster_" << function.getSymName() << "\" {\n"
     << "    label=\"@" << function.getSymName() << ": "
     << countKernels(function) << " kernels\";\n";
  llvm::DenseMap<Value, std::string> source;
  for (BlockArgument arg : function.getArguments()) {
    std::string node = prefix + "arg" + std::to_string(arg.getArgNumber());
    os << "    \"" << node << "\" [shape=ellipse, label=\"arg "
       << arg.getArgNumber() << "\"];\n";
    source[arg] = node;
  }
  unsigned index = 0;
  for (Operation &op : function.getBody().front()) {
    // Constants are operands, not steps: left out to keep graphs readable.
    if (op.hasTrait<mlir::OpTrait::ConstantLike>())
      continue;
    std::string node = prefix + "op" + std::to_string(index++);
    if (op.hasTrait<mlir::OpTrait::IsTerminator>())
      os << "    \"" << node << "\" [shape=ellipse, label=\"results\"];\n";
    else if (isView(&op))
      os << "    \"" << node << "\" [shape=box, style=dashed, label=\""
         << op.getName() << "\"];\n";
    else
      os << "    \"" << node << "\" [shape=box, style=filled, fillcolor=\""
         << (isa<FusedOp>(op) ? "#b6d7a8" : "#cfe2f3") << "\", label=\""
         << kernelLabel(&op) << "\"];\n";
    for (Value operand : op.getOperands()) {
      auto it = source.find(operand);
      if (it != source.end())
        os << "    \"" << it->second << "\" -> \"" << node << "\" [label=\""
           << typeLabel(operand.getType()) << "\"];\n";
    }
    for (Value result : op.getResults())
      source[result] = node;
  }
  os << "  }\n";
}

void nf::printKernelGraphs(ModuleOp module, llvm::raw_ostream &os) {
  os << "digraph kernels {\n  rankdir=TB;\n"
     << "  node [fontname=\"Helvetica\"];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  for (auto function : module.getOps<func::FuncOp>())
    if (!function.isExternal())
      printKernelGraph(function, os);
  os << "}\n";
}

namespace {

struct NFKernelGraphPass : nf::impl::NFKernelGraphPassBase<NFKernelGraphPass> {
  using NFKernelGraphPassBase::NFKernelGraphPassBase;

  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>())
      if (!function.isExternal())
        llvm::errs() << "nf-kernel-graph: @" << function.getSymName() << ": "
                     << countKernels(function) << " kernels\n";
    std::string graph;
    llvm::raw_string_ostream os(graph);
    printKernelGraphs(getOperation(), os);
    if (dotFile.empty())
      return;
    std::string error = writeGraph(graph);
    if (!error.empty()) {
      // At the module's location, without printing the module.
      mlir::emitError(getOperation().getLoc())
          << "nf-kernel-graph: cannot write '" << dotFile << "': " << error;
      signalPassFailure();
    }
  }

  /// Writes `graph` to dotFile; the reason it could not, or "". A regular
  /// file is written through a temporary and renamed (never a partial
  /// file); a device or pipe is written directly, and a failed write (a
  /// full device) is reported too.
  std::string writeGraph(const std::string &graph) {
    if (!llvm::sys::fs::exists(dotFile) ||
        llvm::sys::fs::is_regular_file(dotFile)) {
      llvm::Error error = llvm::writeToOutput(
          dotFile, [&](llvm::raw_ostream &out) -> llvm::Error {
            out << graph;
            return llvm::Error::success();
          });
      return error ? llvm::toString(std::move(error)) : "";
    }
    std::error_code ec;
    llvm::raw_fd_ostream out(dotFile, ec);
    if (ec)
      return ec.message();
    out << graph;
    out.close();
    if (out.has_error()) {
      std::string message = out.error().message();
      out.clear_error();
      return message;
    }
    return "";
  }
};

} // namespace
