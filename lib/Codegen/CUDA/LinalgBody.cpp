//===- LinalgBody.cpp - a linalg.generic's body in a GPU kernel -*- C++ -*-===//
//
// Part of normfuse. See LinalgBody.h.
//
//===----------------------------------------------------------------------===//

#include "LinalgBody.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Support/DebugStringHelper.h"

#include <functional>

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::cuda;

Type cuda::computeType(Type type) {
  if (type.isF16() || type.isBF16())
    return Float32Type::get(type.getContext());
  return type;
}

std::optional<DimTerm> cuda::asDimTerm(AffineExpr e) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return DimTerm{-1, 0, c.getValue()};
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return DimTerm{int64_t(d.getPosition()), 1, 0};
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  std::optional<DimTerm> l = asDimTerm(bin.getLHS()),
                         r = asDimTerm(bin.getRHS());
  if (!l || !r)
    return std::nullopt;
  if (e.getKind() == AffineExprKind::Add) {
    if (l->dim >= 0 && r->dim >= 0)
      return std::nullopt;
    DimTerm t = l->dim >= 0 ? *l : *r;
    t.offset = l->offset + r->offset;
    return t;
  }
  if (e.getKind() == AffineExprKind::Mul && r->dim < 0) {
    DimTerm t = *l;
    t.scale *= r->offset;
    t.offset *= r->offset;
    return t;
  }
  return std::nullopt;
}

std::optional<LinearForm> cuda::asLinearForm(AffineExpr e) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return LinearForm{{}, c.getValue()};
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return LinearForm{{DimTerm{int64_t(d.getPosition()), 1, 0}}, 0};
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  std::optional<LinearForm> l = asLinearForm(bin.getLHS()),
                            r = asLinearForm(bin.getRHS());
  if (!l || !r)
    return std::nullopt;
  if (e.getKind() == AffineExprKind::Add) {
    l->terms.append(r->terms);
    l->offset += r->offset;
    return l;
  }
  if (e.getKind() != AffineExprKind::Mul)
    return std::nullopt;
  // A product with a constant (affine maps keep it on the right).
  if (!r->terms.empty())
    std::swap(l, r);
  if (!r->terms.empty())
    return std::nullopt;
  for (DimTerm &t : l->terms)
    t.scale *= r->offset;
  l->offset *= r->offset;
  return l;
}

/// Whether `v`, from outside the body of `generic`, is a scalar the kernel
/// can compute itself: a constant, or a pure op without regions on such
/// scalars (the window sizes TOSA's average pooling computes from
/// constants).
static bool isRecomputable(Value v) {
  if (isa<ShapedType>(v.getType()))
    return matchPattern(v, m_Constant());
  Operation *op = v.getDefiningOp();
  if (!op || op->getNumRegions() != 0 || !isMemoryEffectFree(op) ||
      llvm::any_of(op->getResultTypes(), llvm::IsaPred<ShapedType>))
    return false;
  return llvm::all_of(op->getOperands(), isRecomputable);
}

std::string cuda::whyNotKernelGeneric(linalg::GenericOp generic) {
  if (!generic.hasPureTensorSemantics())
    return "works on buffers";
  for (Value v : generic->getOperands()) {
    // A scalar operand (linalg.fill's value) that is a constant is an
    // immediate.
    if (!isa<ShapedType>(v.getType()) && matchPattern(v, m_Constant()))
      continue;
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return "has an operand of type " + debugString(v.getType()) +
             " that is not a constant";
    Type element = type.getElementType();
    auto integer = dyn_cast<IntegerType>(element);
    if (!isa<FloatType>(element) &&
        !(integer &&
          llvm::is_contained({1u, 8u, 16u, 32u, 64u}, integer.getWidth())))
      return "has " + debugString(element) +
             " elements (the CUDA target takes float, bool and 8- to 64-bit "
             "integer tensors)";
  }
  for (OpOperand &in : generic->getOpOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(&in);
    for (AffineExpr e : map.getResults())
      if (!asLinearForm(e))
        return "reads an operand through an indexing map that is not a sum "
               "of d * s + c terms";
  }
  Block *body = generic.getBody();
  for (Operation &op : *body) {
    if (op.getNumRegions() != 0)
      return "has an op with regions in its body";
    for (OpOperand &use : op.getOpOperands()) {
      Value v = use.get();
      if (v.getParentBlock() == body || isRecomputable(v))
        continue;
      // A tensor read at computed positions (a gather): a buffer of its
      // own in the kernel.
      auto extract = dyn_cast<tensor::ExtractOp>(op);
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (extract && use.getOperandNumber() == 0 && type &&
          type.hasStaticShape())
        continue;
      return "uses a value from outside its body that is not a constant";
    }
  }
  return "";
}

SmallVector<Value> cuda::capturedTensors(linalg::GenericOp generic) {
  SmallVector<Value> tensors;
  Block *body = generic.getBody();
  for (Operation &op : *body)
    if (auto extract = dyn_cast<tensor::ExtractOp>(op))
      if (extract.getTensor().getParentBlock() != body &&
          !llvm::is_contained(tensors, extract.getTensor()))
        tensors.push_back(extract.getTensor());
  return tensors;
}

TypedAttr cuda::splatOf(Value v) {
  if (!isa<ShapedType>(v.getType())) {
    Attribute scalar;
    return matchPattern(v, m_Constant(&scalar)) ? dyn_cast<TypedAttr>(scalar)
                                                : TypedAttr();
  }
  DenseElementsAttr dense;
  if (!matchPattern(v, m_Constant(&dense)) || !dense.isSplat())
    return {};
  return dyn_cast<TypedAttr>(dense.getSplatValue<Attribute>());
}

TypedAttr cuda::toComputeType(OpBuilder &b, TypedAttr value) {
  auto f = dyn_cast<FloatAttr>(value);
  Type to = computeType(value.getType());
  if (!f || to == value.getType())
    return value;
  return b.getFloatAttr(to, f.getValueAsDouble());
}

/// Emits the body of `generic` (but `skip`) into `map`, and returns
/// `results` (the yielded values where empty) in the compute types.
static SmallVector<Value> emitBodyValues(
    OpBuilder &b, Location loc, linalg::GenericOp generic, ArrayRef<Value> args,
    llvm::function_ref<Value(int64_t)> loopIndex, ArrayRef<Operation *> skip,
    ValueRange results, const llvm::DenseMap<Value, Value> *captured) {
  IRMapping map;
  Block *body = generic.getBody();
  for (auto [arg, v] : llvm::zip(body->getArguments(), args))
    if (v)
      map.map(arg, v);
  auto round = [&](Value v, Type narrow) -> Value {
    if (computeType(narrow) == narrow)
      return v;
    Value r = b.create<arith::TruncFOp>(loc, narrow, v);
    return b.create<arith::ExtFOp>(loc, computeType(narrow), r);
  };
  // `op` cloned on the mapped operands, its results in the compute types
  // (rounded to their own where narrower).
  auto cloneComputing = [&](Operation &op) {
    Operation *clone = b.clone(op, map);
    for (auto [result, cloned] :
         llvm::zip(op.getResults(), clone->getResults())) {
      Type narrow = result.getType();
      cloned.setType(computeType(narrow));
      map.map(result, round(cloned, narrow));
    }
  };
  // A constant the body captures from outside becomes the kernel's own; a
  // scalar computed from constants is computed again in the kernel.
  std::function<void(Value)> capture = [&](Value v) {
    if (map.contains(v) || v.getParentBlock() == body)
      return;
    Attribute value;
    if (matchPattern(v, m_Constant(&value))) {
      map.map(v, b.create<arith::ConstantOp>(
                     loc, toComputeType(b, cast<TypedAttr>(value))));
      return;
    }
    Operation *op = v.getDefiningOp();
    for (Value operand : op->getOperands())
      capture(operand);
    cloneComputing(*op);
  };
  for (Operation &op : body->without_terminator()) {
    if (llvm::is_contained(skip, &op))
      continue;
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      TypedAttr value = toComputeType(b, c.getValue());
      map.map(c.getResult(), b.create<arith::ConstantOp>(loc, value));
      continue;
    }
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      map.map(index.getResult(), loopIndex(index.getDim()));
      continue;
    }
    // An element of a captured tensor: a load from its buffer at the
    // row-major offset of the indices.
    if (auto extract = dyn_cast<tensor::ExtractOp>(op);
        extract && captured && captured->count(extract.getTensor())) {
      auto type = cast<RankedTensorType>(extract.getTensor().getType());
      Value offset;
      int64_t stride = 1;
      for (int64_t d = type.getRank() - 1; d >= 0; --d) {
        Value i = map.lookup(extract.getIndices()[d]);
        Value term =
            stride == 1
                ? i
                : b.create<arith::MulIOp>(
                      loc, i, b.create<arith::ConstantIndexOp>(loc, stride));
        offset = offset ? b.create<arith::AddIOp>(loc, offset, term) : term;
        stride *= type.getDimSize(d);
      }
      if (!offset)
        offset = b.create<arith::ConstantIndexOp>(loc, 0);
      Value v = b.create<memref::LoadOp>(
          loc, captured->lookup(extract.getTensor()), offset);
      Type to = computeType(v.getType());
      map.map(extract.getResult(),
              to == v.getType() ? v : b.create<arith::ExtFOp>(loc, to, v));
      continue;
    }
    if (auto ext = dyn_cast<arith::ExtFOp>(op)) {
      Value in = map.lookup(ext.getIn());
      Type to = computeType(ext.getType());
      map.map(ext.getResult(),
              in.getType() == to ? in : b.create<arith::ExtFOp>(loc, to, in));
      continue;
    }
    if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
      Value in = map.lookup(trunc.getIn());
      Value r = b.create<arith::TruncFOp>(loc, trunc.getType(), in);
      Type to = computeType(trunc.getType());
      map.map(trunc.getResult(),
              to == trunc.getType() ? r : b.create<arith::ExtFOp>(loc, to, r));
      continue;
    }
    // A bitcast needs its operand's own bits.
    if (auto cast = dyn_cast<arith::BitcastOp>(op)) {
      Value in = map.lookup(cast.getIn());
      if (in.getType() != cast.getIn().getType())
        in = b.create<arith::TruncFOp>(loc, cast.getIn().getType(), in);
      Value r = b.create<arith::BitcastOp>(loc, cast.getType(), in);
      Type to = computeType(cast.getType());
      map.map(cast.getResult(),
              to == cast.getType() ? r : b.create<arith::ExtFOp>(loc, to, r));
      continue;
    }
    for (Value v : op.getOperands())
      capture(v);
    cloneComputing(op);
  }
  if (results.empty())
    results = body->getTerminator()->getOperands();
  SmallVector<Value> values;
  for (Value v : results) {
    capture(v);
    values.push_back(map.lookup(v));
  }
  return values;
}

Value cuda::emitBody(OpBuilder &b, Location loc, linalg::GenericOp generic,
                     ArrayRef<Value> args,
                     llvm::function_ref<Value(int64_t)> loopIndex,
                     Operation *skip, Value result,
                     const llvm::DenseMap<Value, Value> *captured) {
  if (!result)
    result =
        cast<linalg::YieldOp>(generic.getBody()->getTerminator()).getOperand(0);
  return emitBodyValues(b, loc, generic, args, loopIndex,
                        skip ? ArrayRef(skip) : ArrayRef<Operation *>(), result,
                        captured)[0];
}

Value cuda::emitBodyValue(OpBuilder &b, Location loc, linalg::GenericOp generic,
                          ArrayRef<Value> args,
                          llvm::function_ref<Value(int64_t)> loopIndex,
                          ArrayRef<Operation *> skip, Value result,
                          const llvm::DenseMap<Value, Value> *captured) {
  return emitBodyValues(b, loc, generic, args, loopIndex, skip, result,
                        captured)[0];
}

SmallVector<Value>
cuda::emitBodyYields(OpBuilder &b, Location loc, linalg::GenericOp generic,
                     ArrayRef<Value> args,
                     llvm::function_ref<Value(int64_t)> loopIndex,
                     const llvm::DenseMap<Value, Value> *captured) {
  return emitBodyValues(b, loc, generic, args, loopIndex, {}, ValueRange(),
                        captured);
}
