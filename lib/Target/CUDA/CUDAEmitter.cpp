//===- CUDAEmitter.cpp - print nf kernel IR as CUDA C++ ---------*- C++ -*-===//
//
// Part of normfuse. See CUDAEmitter.h. Every SSA value becomes a local
// variable declared where it is defined (vN); scf.for and scf.if results
// are declared before their loop or branch and assigned by their yields.
// Index values are `long long` (NVRTC has no <stdint.h>), unsigned
// arithmetic casts to `unsigned long long`; in a kernel marked
// nf.index_bits = 32 (its lowering proved every index value fits) they are
// `int` and `unsigned`.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Target/CUDAEmitter.h"
#include "normfuse/Codegen/CUDA/SharedMemory.h"
#include "normfuse/Codegen/Pipelines.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/InitDialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::nf;

/// The fixed prelude (Prelude.cuh, embedded at build time): the toolkit's
/// half types under CUDA, and the few types and wrappers the printed
/// kernels use. Under NF_CUDA_SIM the simulator's header (force-included)
/// defines its first part instead.
static constexpr llvm::StringLiteral kPrelude =
#include "PreludeText.inc"
    ;

namespace {

class CUDAEmitter {
public:
  CUDAEmitter(llvm::raw_ostream &os) : os(os) {}

  LogicalResult emitKernel(gpu::GPUFuncOp func);

private:
  llvm::raw_ostream &os;
  llvm::DenseMap<Value, std::string> names;
  unsigned nextValue = 0;
  unsigned indent = 1;

  llvm::raw_ostream &line() { return os.indent(2 * indent); }
  std::string fresh(Value v, llvm::StringRef prefix = "v") {
    std::string n = (prefix + llvm::Twine(nextValue++)).str();
    names[v] = n;
    return n;
  }
  std::string name(Value v) {
    auto it = names.find(v);
    return it == names.end() ? std::string("<unnamed>") : it->second;
  }
  FailureOr<std::string> typeName(Type type, Operation *at);
  /// Whether the kernel being printed has 32-bit index values.
  bool index32 = false;
  std::string indexName() const { return index32 ? "int" : "long long"; }
  /// The unsigned type of the same width as an integer type's C name.
  std::string unsignedOf(Type t) const;
  /// The unsigned type integer arithmetic of type `t` wraps in: C++ makes a
  /// signed overflow undefined, and promotes 8- and 16-bit operands to int.
  std::string wrappingTypeOf(Type t) const;
  std::optional<std::string> scalarLiteral(Attribute value) const;
  /// `type v = expr;` for the op's single result.
  LogicalResult define(Operation *op, const std::string &expr);

  LogicalResult emitBlock(Block &block);
  LogicalResult emitOp(Operation &op);
  LogicalResult emitFor(scf::ForOp op);
  LogicalResult emitIf(scf::IfOp op);
  LogicalResult emitConstant(arith::ConstantOp op);
  LogicalResult emitCmpF(arith::CmpFOp op);
  LogicalResult emitCmpI(arith::CmpIOp op);
  LogicalResult emitCast(Operation *op);
  LogicalResult emitMath(Operation *op);
  /// The address of element `index` of `memref` (a flat global buffer or
  /// a workgroup array).
  FailureOr<std::string> address(Operation *at, Value memref, ValueRange index);
  /// A flat shared-memory index `x + c` (c a constant) as x and c, which
  /// ldmatrix and cp.async take as an immediate offset; else the index
  /// and 0.
  std::pair<SmallVector<Value, 1>, int64_t> displaced(ValueRange index);
  bool isWorkgroup(Value memref) {
    return gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(
        cast<MemRefType>(memref.getType()));
  }
  /// The prelude's global store: streaming (st.global.cs) where the
  /// lowering marked it `nf.evict_first`.
  static std::string storeFn(Operation &op) {
    return op.hasAttr("nf.evict_first") ? "nf_stcs" : "nf_stg";
  }
};

FailureOr<std::string> CUDAEmitter::typeName(Type type, Operation *at) {
  if (type.isF32())
    return std::string("float");
  if (type.isF64())
    return std::string("double");
  if (type.isF16())
    return std::string("__half");
  if (type.isBF16())
    return std::string("__nv_bfloat16");
  if (type.isIndex())
    return indexName();
  if (type.isInteger(64))
    return std::string("long long");
  if (type.isInteger(32))
    return std::string("int");
  if (type.isInteger(16))
    return std::string("short");
  if (type.isInteger(8))
    return std::string("signed char");
  if (type.isInteger(1))
    return std::string("bool");
  // A vector of one or two dimensions (the tensor cores' fragments, as
  // vector<4x2xf16>) is its elements in row-major order.
  if (auto vec = dyn_cast<VectorType>(type)) {
    if (vec.getRank() <= 2 && !vec.isScalable()) {
      FailureOr<std::string> element = typeName(vec.getElementType(), at);
      if (failed(element))
        return failure();
      return llvm::formatv("nf_vec<{0}, {1}>", *element, vec.getNumElements())
          .str();
    }
  }
  // cp.async's tokens order nothing in the printed code (the copies are
  // ordered by their commits and waits); they print as an unused int.
  if (isa<nvgpu::DeviceAsyncTokenType>(type))
    return std::string("[[maybe_unused]] int");
  return at->emitOpError() << "cannot print type " << type << " as CUDA",
         failure();
}

LogicalResult CUDAEmitter::define(Operation *op, const std::string &expr) {
  Value result = op->getResult(0);
  FailureOr<std::string> type = typeName(result.getType(), op);
  if (failed(type))
    return failure();
  std::string n = fresh(result);
  line() << *type << " " << n << " = " << expr << ";\n";
  return success();
}

FailureOr<std::string> CUDAEmitter::address(Operation *at, Value memref,
                                            ValueRange index) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() != 1 || !type.getLayout().isIdentity() ||
      index.size() != 1)
    return at->emitOpError()
               << "cannot print an access to " << type
               << ": kernels take flat memrefs of identity layout",
           failure();
  return "(" + name(memref) + " + " + name(index[0]) + ")";
}

std::pair<SmallVector<Value, 1>, int64_t>
CUDAEmitter::displaced(ValueRange index) {
  SmallVector<Value, 1> plain(index);
  if (index.size() != 1)
    return {plain, 0};
  auto add = index[0].getDefiningOp<arith::AddIOp>();
  std::optional<int64_t> c =
      add ? getConstantIntValue(add.getRhs()) : std::nullopt;
  // Positive (PTX writes [r+imm]) and well inside the immediate's range in
  // bytes.
  if (!c || *c <= 0 || *c >= (int64_t(1) << 20))
    return {plain, 0};
  return {SmallVector<Value, 1>{add.getLhs()}, *c};
}

/// A float literal that reads back as exactly `v` in `type` (f32 or f64).
static std::string floatLiteral(double v, bool isF32) {
  if (std::isnan(v))
    return isF32 ? "__int_as_float(0x7fc00000)"
                 : "__longlong_as_double(0x7ff8000000000000LL)";
  if (std::isinf(v)) {
    if (isF32)
      return v > 0 ? "__int_as_float(0x7f800000)"
                   : "__int_as_float((int)0xff800000u)";
    return v > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                 : "__longlong_as_double((long long)0xfff0000000000000ULL)";
  }
  // Shortest decimal that reads back exactly, else a hex literal.
  for (int digits = 6; digits <= 17; ++digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.*g", digits, v);
    std::string s = buffer;
    double back = isF32 ? double(std::strtof(s.c_str(), nullptr))
                        : std::strtod(s.c_str(), nullptr);
    if (back == v) {
      if (s.find_first_of(".eEn") == std::string::npos)
        s += ".0";
      return isF32 ? s + "f" : s;
    }
  }
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%a", v);
  std::string hex = buffer;
  return isF32 ? hex + "f" : hex;
}

/// The CUDA expression of a scalar constant, or none.
std::optional<std::string> CUDAEmitter::scalarLiteral(Attribute value) const {
  if (auto f = dyn_cast<FloatAttr>(value)) {
    Type t = f.getType();
    double v = f.getValueAsDouble();
    if (t.isF32() || t.isF64())
      return floatLiteral(v, t.isF32());
    if (t.isF16())
      return "__float2half_rn(" + floatLiteral(v, true) + ")";
    if (t.isBF16())
      return "__float2bfloat16_rn(" + floatLiteral(v, true) + ")";
  }
  if (auto i = dyn_cast<IntegerAttr>(value)) {
    Type t = i.getType();
    if (t.isInteger(1))
      return std::string(i.getValue().getBoolValue() ? "true" : "false");
    int64_t v = i.getValue().getSExtValue();
    // 32-bit indices: the lowering proved they fit, and a literal out of
    // int's range is not printed (the kernel is refused).
    if (t.isIndex() && index32)
      return v >= INT32_MIN && v <= INT32_MAX
                 ? std::optional<std::string>(
                       v == INT32_MIN ? "(int)0x80000000u" : std::to_string(v))
                 : std::nullopt;
    // The most negative value has no literal of its type in C++.
    if (t.isIndex() || t.isInteger(64))
      return v == INT64_MIN ? std::string("(long long)0x8000000000000000ULL")
                            : std::to_string(v) + "LL";
    if (t.isInteger(32))
      return v == INT32_MIN ? std::string("(int)0x80000000u")
                            : std::to_string(v);
    if (t.isInteger(16))
      return "(short)" + std::to_string(v);
    if (t.isInteger(8))
      return "(signed char)" + std::to_string(v);
  }
  return std::nullopt;
}

LogicalResult CUDAEmitter::emitConstant(arith::ConstantOp op) {
  Attribute value = op.getValue();
  if (std::optional<std::string> scalar = scalarLiteral(value))
    return define(op, *scalar);
  // A vector of one value (what canonicalization makes of a
  // vector.from_elements of equal constants).
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (dense && dense.isSplat() && isa<VectorType>(dense.getType())) {
    std::optional<std::string> scalar =
        scalarLiteral(dense.getSplatValue<Attribute>());
    FailureOr<std::string> type = typeName(dense.getType(), op);
    if (scalar && succeeded(type)) {
      std::string elems;
      for (int64_t i = 0; i < dense.getNumElements(); ++i)
        elems += (i ? ", " : "") + *scalar;
      return define(op, *type + "{{" + elems + "}}");
    }
  }
  return op.emitOpError() << "cannot print constant " << value << " as CUDA";
}

LogicalResult CUDAEmitter::emitCmpF(arith::CmpFOp op) {
  std::string a = name(op.getLhs()), b = name(op.getRhs());
  using P = arith::CmpFPredicate;
  auto both = [&](const char *o) { return a + " " + o + " " + b; };
  std::string e;
  switch (op.getPredicate()) {
  case P::AlwaysFalse:
    e = "false";
    break;
  case P::AlwaysTrue:
    e = "true";
    break;
  case P::OEQ:
    e = both("==");
    break;
  case P::OGT:
    e = both(">");
    break;
  case P::OGE:
    e = both(">=");
    break;
  case P::OLT:
    e = both("<");
    break;
  case P::OLE:
    e = both("<=");
    break;
  case P::ONE:
    e = "(" + both("<") + " || " + both(">") + ")";
    break;
  case P::ORD:
    e = "(" + a + " == " + a + " && " + b + " == " + b + ")";
    break;
  case P::UEQ:
    e = "!(" + both("<") + " || " + both(">") + ")";
    break;
  case P::UGT:
    e = "!(" + both("<=") + ")";
    break;
  case P::UGE:
    e = "!(" + both("<") + ")";
    break;
  case P::ULT:
    e = "!(" + both(">=") + ")";
    break;
  case P::ULE:
    e = "!(" + both(">") + ")";
    break;
  case P::UNE:
    e = both("!=");
    break;
  case P::UNO:
    e = "(" + a + " != " + a + " || " + b + " != " + b + ")";
    break;
  }
  return define(op, e);
}

std::string CUDAEmitter::unsignedOf(Type t) const {
  if (t.isInteger(32) || (t.isIndex() && index32))
    return "unsigned";
  if (t.isInteger(16))
    return "unsigned short";
  if (t.isInteger(8))
    return "unsigned char";
  if (t.isInteger(1))
    return "bool";
  return "unsigned long long";
}

/// The expression `e` of `v` read as a signed value: -1 for an i1's true.
static std::string signedValue(Value v, const std::string &e) {
  return v.getType().isInteger(1) ? "(-(int)" + e + ")" : e;
}

std::string CUDAEmitter::wrappingTypeOf(Type t) const {
  return (t.isIndex() && !index32) || t.isInteger(64) ? "unsigned long long"
                                                      : "unsigned";
}

LogicalResult CUDAEmitter::emitCmpI(arith::CmpIOp op) {
  std::string a = name(op.getLhs()), b = name(op.getRhs());
  std::string u = unsignedOf(op.getLhs().getType());
  // As a signed value, an i1's true is -1.
  std::string sa = signedValue(op.getLhs(), a),
              sb = signedValue(op.getRhs(), b);
  auto s = [&](const char *o) { return sa + " " + o + " " + sb; };
  auto us = [&](const char *o) {
    return "(" + u + ")" + a + " " + o + " (" + u + ")" + b;
  };
  using P = arith::CmpIPredicate;
  std::string e;
  switch (op.getPredicate()) {
  case P::eq:
    e = s("==");
    break;
  case P::ne:
    e = s("!=");
    break;
  case P::slt:
    e = s("<");
    break;
  case P::sle:
    e = s("<=");
    break;
  case P::sgt:
    e = s(">");
    break;
  case P::sge:
    e = s(">=");
    break;
  case P::ult:
    e = us("<");
    break;
  case P::ule:
    e = us("<=");
    break;
  case P::ugt:
    e = us(">");
    break;
  case P::uge:
    e = us(">=");
    break;
  }
  return define(op, e);
}

LogicalResult CUDAEmitter::emitCast(Operation *op) {
  Value in = op->getOperand(0);
  Type from = in.getType(), to = op->getResult(0).getType();
  std::string x = name(in);
  if (isa<arith::ExtFOp>(op)) {
    if (from.isF16() && to.isF32())
      return define(op, "__half2float(" + x + ")");
    if (from.isBF16() && to.isF32())
      return define(op, "__bfloat162float(" + x + ")");
    if (from.isF32() && to.isF64())
      return define(op, "(double)" + x);
    if (from.isF16() && to.isF64())
      return define(op, "(double)__half2float(" + x + ")");
    if (from.isBF16() && to.isF64())
      return define(op, "(double)__bfloat162float(" + x + ")");
  }
  if (isa<arith::TruncFOp>(op)) {
    if (from.isF32() && to.isF16())
      return define(op, "__float2half_rn(" + x + ")");
    if (from.isF32() && to.isBF16())
      return define(op, "__float2bfloat16_rn(" + x + ")");
    if (from.isF64() && to.isF32())
      return define(op, "(float)" + x);
    // One rounding (through f32 could round twice).
    if (from.isF64() && to.isF16())
      return define(op, "__double2half(" + x + ")");
    if (from.isF64() && to.isBF16())
      return define(op, "__double2bfloat16(" + x + ")");
  }
  FailureOr<std::string> toName = typeName(to, op);
  if (failed(toName))
    return failure();
  // i1 is one bit: truncation keeps the low bit, and as a signed value
  // true is -1.
  if (isa<arith::TruncIOp>(op) && to.isInteger(1))
    return define(op, "(bool)(" + x + " & 1)");
  if (isa<arith::ExtSIOp, arith::SIToFPOp>(op) && from.isInteger(1))
    return define(op, "(" + *toName + ")(" + x + " ? -1 : 0)");
  if (isa<arith::IndexCastOp, arith::SIToFPOp, arith::FPToSIOp, arith::ExtSIOp,
          arith::TruncIOp>(op))
    return define(op, "(" + *toName + ")" + x);
  if (isa<arith::IndexCastUIOp, arith::UIToFPOp, arith::ExtUIOp>(op))
    return define(op, "(" + *toName + ")(" + unsignedOf(from) + ")" + x);
  if (isa<arith::FPToUIOp>(op))
    return define(op, "(" + *toName + ")(" + unsignedOf(to) + ")" + x);
  if (isa<arith::BitcastOp>(op)) {
    if (from.isF32() && to.isInteger(32))
      return define(op, "__float_as_int(" + x + ")");
    if (from.isInteger(32) && to.isF32())
      return define(op, "__int_as_float(" + x + ")");
  }
  return op->emitOpError() << "cannot print the conversion from " << from
                           << " to " << to << " as CUDA";
}

LogicalResult CUDAEmitter::emitMath(Operation *op) {
  Type t = op->getResult(0).getType();
  if (!t.isF32() && !t.isF64())
    return op->emitOpError()
           << "cannot print math on " << t << " as CUDA (only f32 and f64)";
  bool f = t.isF32();
  auto call = [&](llvm::StringRef base) {
    std::string fn = base.str() + (f ? "f" : "");
    std::string args;
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      args += (i ? ", " : "") + name(v);
    return define(op, fn + "(" + args + ")");
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](math::SqrtOp) { return call("sqrt"); })
      .Case([&](math::RsqrtOp) { return call("rsqrt"); })
      .Case([&](math::ExpOp) { return call("exp"); })
      .Case([&](math::Exp2Op) { return call("exp2"); })
      .Case([&](math::LogOp) { return call("log"); })
      .Case([&](math::TanhOp) { return call("tanh"); })
      .Case([&](math::ErfOp) { return call("erf"); })
      .Case([&](math::FmaOp) { return call("fma"); })
      .Case([&](math::AbsFOp) { return call("fabs"); })
      .Case([&](math::RoundEvenOp) { return call("rint"); })
      .Case([&](math::RoundOp) { return call("round"); })
      .Case([&](math::FloorOp) { return call("floor"); })
      .Case([&](math::CeilOp) { return call("ceil"); })
      .Case([&](math::TruncOp) { return call("trunc"); })
      .Case([&](math::PowFOp) { return call("pow"); })
      .Case([&](math::ExpM1Op) { return call("expm1"); })
      .Case([&](math::Log1pOp) { return call("log1p"); })
      .Case([&](math::Log2Op) { return call("log2"); })
      .Case([&](math::Log10Op) { return call("log10"); })
      .Case([&](math::SinOp) { return call("sin"); })
      .Case([&](math::CosOp) { return call("cos"); })
      .Case([&](math::TanOp) { return call("tan"); })
      .Case([&](math::AtanOp) { return call("atan"); })
      .Case([&](math::Atan2Op) { return call("atan2"); })
      .Case([&](math::CbrtOp) { return call("cbrt"); })
      .Case([&](math::CopySignOp) { return call("copysign"); })
      .Default([&](Operation *) {
        return op->emitOpError() << "cannot print as CUDA";
      });
}

LogicalResult CUDAEmitter::emitFor(scf::ForOp op) {
  // Results live in variables declared before the loop; the iteration
  // arguments are the same variables.
  for (auto [result, init, iterArg] :
       llvm::zip(op.getResults(), op.getInitArgs(), op.getRegionIterArgs())) {
    FailureOr<std::string> type = typeName(result.getType(), op);
    if (failed(type))
      return failure();
    std::string n = fresh(result);
    names[iterArg] = n;
    line() << *type << " " << n << " = " << name(init) << ";\n";
  }
  std::string iv = fresh(op.getInductionVar(), "i");
  line() << "for (" << indexName() << " " << iv << " = "
         << name(op.getLowerBound()) << "; " << iv << " < "
         << name(op.getUpperBound()) << "; " << iv
         << " += " << name(op.getStep()) << ") {\n";
  ++indent;
  if (failed(emitBlock(*op.getBody())))
    return failure();
  auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
  // Through temporaries: a yield may swap the iteration arguments.
  SmallVector<std::string> temps;
  for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
    FailureOr<std::string> type = typeName(v.getType(), yield);
    if (failed(type))
      return failure();
    std::string t = "t" + std::to_string(nextValue++);
    line() << *type << " " << t << " = " << name(v) << ";\n";
    temps.push_back(t);
  }
  for (auto [result, t] : llvm::zip(op.getResults(), temps))
    line() << name(result) << " = " << t << ";\n";
  --indent;
  line() << "}\n";
  return success();
}

LogicalResult CUDAEmitter::emitIf(scf::IfOp op) {
  for (Value result : op.getResults()) {
    FailureOr<std::string> type = typeName(result.getType(), op);
    if (failed(type))
      return failure();
    line() << *type << " " << fresh(result) << ";\n";
  }
  auto branch = [&](Region &region) -> LogicalResult {
    ++indent;
    Block &block = region.front();
    if (failed(emitBlock(block)))
      return failure();
    auto yield = cast<scf::YieldOp>(block.getTerminator());
    for (auto [result, v] : llvm::zip(op.getResults(), yield.getOperands()))
      line() << name(result) << " = " << name(v) << ";\n";
    --indent;
    return success();
  };
  line() << "if (" << name(op.getCondition()) << ") {\n";
  if (failed(branch(op.getThenRegion())))
    return failure();
  if (!op.getElseRegion().empty()) {
    line() << "} else {\n";
    if (failed(branch(op.getElseRegion())))
      return failure();
  }
  line() << "}\n";
  return success();
}

LogicalResult CUDAEmitter::emitBlock(Block &block) {
  for (Operation &op : block)
    if (failed(emitOp(op)))
      return failure();
  return success();
}

LogicalResult CUDAEmitter::emitOp(Operation &op) {
  auto bin = [&](const char *o) {
    return define(&op, name(op.getOperand(0)) + " " + o + " " +
                           name(op.getOperand(1)));
  };
  auto ubin = [&](const char *o) {
    std::string u = unsignedOf(op.getResult(0).getType());
    FailureOr<std::string> t = typeName(op.getResult(0).getType(), &op);
    if (failed(t))
      return failure();
    return define(&op, "(" + *t + ")((" + u + ")" + name(op.getOperand(0)) +
                           " " + o + " (" + u + ")" + name(op.getOperand(1)) +
                           ")");
  };
  // Integer add, sub and mul wrap (in unsigned arithmetic); on i1 they are
  // xor and and. Index arithmetic is printed plainly.
  auto ibin = [&](const char *o) {
    Type t = op.getResult(0).getType();
    if (t.isIndex())
      return bin(o);
    std::string a = name(op.getOperand(0)), b = name(op.getOperand(1));
    if (t.isInteger(1)) {
      llvm::StringRef op1(o);
      return op1 == "*"    ? define(&op, a + " & " + b)
             : op1 == "<<" ? bin(o)
                           : define(&op, a + " ^ " + b);
    }
    FailureOr<std::string> type = typeName(t, &op);
    if (failed(type))
      return failure();
    std::string w = wrappingTypeOf(t);
    return define(&op, "(" + *type + ")((" + w + ")" + a + " " + o + " (" + w +
                           ")" + b + ")");
  };
  auto pick = [&](const char *o, bool isUnsigned) {
    std::string a = name(op.getOperand(0)), b = name(op.getOperand(1));
    if (isUnsigned) {
      std::string u = unsignedOf(op.getResult(0).getType());
      return define(&op, "(" + u + ")" + a + " " + o + " (" + u + ")" + b +
                             " ? " + a + " : " + b);
    }
    return define(&op, signedValue(op.getOperand(0), a) + " " + o + " " +
                           signedValue(op.getOperand(1), b) + " ? " + a +
                           " : " + b);
  };
  auto fcall = [&](const char *f32, const char *f64) {
    bool isF32 = op.getResult(0).getType().isF32();
    return define(&op, std::string(isF32 ? f32 : f64) + "(" +
                           name(op.getOperand(0)) + ", " +
                           name(op.getOperand(1)) + ")");
  };
  auto dim = [&](const char *var, gpu::Dimension d) {
    return define(&op, "(" + indexName() + ")" + var + "." +
                           stringifyDimension(d).str());
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](arith::ConstantOp c) { return emitConstant(c); })
      .Case<arith::AddFOp>([&](auto) { return bin("+"); })
      .Case<arith::SubFOp>([&](auto) { return bin("-"); })
      .Case<arith::MulFOp>([&](auto) { return bin("*"); })
      .Case<arith::AddIOp>([&](auto) { return ibin("+"); })
      .Case<arith::SubIOp>([&](auto) { return ibin("-"); })
      .Case<arith::MulIOp>([&](auto) { return ibin("*"); })
      .Case<arith::DivFOp, arith::DivSIOp>([&](auto) { return bin("/"); })
      .Case<arith::RemSIOp>([&](auto) { return bin("%"); })
      .Case<arith::AndIOp>([&](auto) { return bin("&"); })
      .Case<arith::OrIOp>([&](auto) { return bin("|"); })
      .Case<arith::XOrIOp>([&](auto) { return bin("^"); })
      .Case<arith::ShLIOp>([&](auto) { return ibin("<<"); })
      .Case<arith::ShRSIOp>([&](auto) { return bin(">>"); })
      .Case<arith::DivUIOp>([&](auto) { return ubin("/"); })
      .Case<arith::RemUIOp>([&](auto) { return ubin("%"); })
      .Case<arith::ShRUIOp>([&](auto) { return ubin(">>"); })
      .Case([&](arith::CeilDivUIOp c) {
        std::string u = unsignedOf(c.getType());
        std::string a = "(" + u + ")" + name(c.getLhs());
        std::string b = "(" + u + ")" + name(c.getRhs());
        FailureOr<std::string> t = typeName(c.getType(), &op);
        if (failed(t))
          return failure();
        return define(&op,
                      "(" + *t + ")((" + a + " + " + b + " - 1) / " + b + ")");
      })
      .Case<arith::MinUIOp>([&](auto) { return pick("<", true); })
      .Case<arith::MaxUIOp>([&](auto) { return pick(">", true); })
      .Case<arith::MinSIOp>([&](auto) { return pick("<", false); })
      .Case<arith::MaxSIOp>([&](auto) { return pick(">", false); })
      .Case<arith::MaximumFOp>(
          [&](auto) { return fcall("nf_maximumf", "nf_maximumf"); })
      .Case<arith::MinimumFOp>(
          [&](auto) { return fcall("nf_minimumf", "nf_minimumf"); })
      .Case<arith::MaxNumFOp>([&](auto) { return fcall("fmaxf", "fmax"); })
      .Case<arith::MinNumFOp>([&](auto) { return fcall("fminf", "fmin"); })
      .Case<arith::RemFOp>([&](auto) { return fcall("fmodf", "fmod"); })
      .Case([&](arith::NegFOp n) {
        return define(&op, "-" + name(n.getOperand()));
      })
      .Case([&](arith::SelectOp s) {
        return define(&op, name(s.getCondition()) + " ? " +
                               name(s.getTrueValue()) + " : " +
                               name(s.getFalseValue()));
      })
      .Case([&](arith::CmpFOp c) { return emitCmpF(c); })
      .Case([&](arith::CmpIOp c) { return emitCmpI(c); })
      .Case<arith::ExtFOp, arith::TruncFOp, arith::IndexCastOp,
            arith::IndexCastUIOp, arith::SIToFPOp, arith::UIToFPOp,
            arith::FPToSIOp, arith::FPToUIOp, arith::ExtSIOp, arith::ExtUIOp,
            arith::TruncIOp, arith::BitcastOp>(
          [&](Operation *c) { return emitCast(c); })
      .Case([&](memref::LoadOp l) -> LogicalResult {
        FailureOr<std::string> at = address(&op, l.getMemRef(), l.getIndices());
        if (failed(at))
          return failure();
        if (isWorkgroup(l.getMemRef()))
          return define(&op, "*" + *at);
        return define(&op, "nf_ldg" + *at);
      })
      .Case([&](memref::StoreOp s) -> LogicalResult {
        FailureOr<std::string> at = address(&op, s.getMemRef(), s.getIndices());
        if (failed(at))
          return failure();
        if (isWorkgroup(s.getMemRef()))
          line() << "*" << *at << " = " << name(s.getValue()) << ";\n";
        else
          line() << storeFn(op) << "(" << *at << ", " << name(s.getValue())
                 << ");\n";
        return success();
      })
      .Case([&](vector::LoadOp l) -> LogicalResult {
        if (l.getVectorType().getRank() != 1)
          return l.emitOpError()
                 << "cannot print type " << l.getVectorType() << " as CUDA";
        FailureOr<std::string> at = address(&op, l.getBase(), l.getIndices());
        FailureOr<std::string> type = typeName(l.getVectorType(), &op);
        if (failed(at) || failed(type))
          return failure();
        if (isWorkgroup(l.getBase()))
          return define(&op, "*(const " + *type + " *)" + *at);
        return define(&op, "nf_ldg((const " + *type + " *)" + *at + ")");
      })
      .Case([&](vector::StoreOp s) -> LogicalResult {
        if (s.getVectorType().getRank() != 1)
          return s.emitOpError()
                 << "cannot print type " << s.getVectorType() << " as CUDA";
        FailureOr<std::string> at = address(&op, s.getBase(), s.getIndices());
        FailureOr<std::string> type = typeName(s.getVectorType(), &op);
        if (failed(at) || failed(type))
          return failure();
        if (isWorkgroup(s.getBase()))
          line() << "*(" << *type << " *)" << *at << " = "
                 << name(s.getValueToStore()) << ";\n";
        else
          line() << storeFn(op) << "((" << *type << " *)" << *at << ", "
                 << name(s.getValueToStore()) << ");\n";
        return success();
      })
      .Case([&](vector::ExtractOp e) -> LogicalResult {
        VectorType from = e.getSourceVectorType();
        if (!e.getDynamicPosition().empty() ||
            int64_t(e.getStaticPosition().size()) != from.getRank() ||
            from.getRank() > 2)
          return e.emitOpError()
                 << "cannot print as CUDA: only a constant element of a 1-D "
                    "or 2-D vector";
        int64_t lane = e.getStaticPosition()[0];
        if (from.getRank() == 2)
          lane = lane * from.getDimSize(1) + e.getStaticPosition()[1];
        return define(&op,
                      name(e.getVector()) + ".v[" + std::to_string(lane) + "]");
      })
      .Case([&](vector::ExtractStridedSliceOp e) -> LogicalResult {
        // Whole rows of a 2-D vector, or a run of a 1-D one: consecutive
        // elements of the row-major order.
        VectorType from = e.getSourceVectorType(), to = e.getType();
        auto ints = [](ArrayAttr a) {
          SmallVector<int64_t> v;
          for (Attribute x : a)
            v.push_back(cast<IntegerAttr>(x).getInt());
          return v;
        };
        SmallVector<int64_t> offsets = ints(e.getOffsets());
        SmallVector<int64_t> strides = ints(e.getStrides());
        bool rows = from.getRank() <= 2 && offsets.size() == 1 &&
                    llvm::all_of(strides, [](int64_t x) { return x == 1; });
        FailureOr<std::string> type = typeName(to, &op);
        if (!rows || failed(type))
          return e.emitOpError()
                 << "cannot print as CUDA: only whole rows of a vector";
        int64_t first =
            offsets[0] * (from.getRank() == 2 ? from.getDimSize(1) : 1);
        std::string elems;
        for (int64_t i = 0; i < to.getNumElements(); ++i)
          elems += (i ? ", " : "") + name(e.getVector()) + ".v[" +
                   std::to_string(first + i) + "]";
        return define(&op, *type + "{{" + elems + "}}");
      })
      .Case([&](nvgpu::LdMatrixOp l) -> LogicalResult {
        auto [index, disp] = displaced(l.getIndices());
        FailureOr<std::string> at = address(&op, l.getSrcMemref(), index);
        if (failed(at))
          return failure();
        return define(&op, "nf_ldmatrix<" + std::to_string(l.getNumTiles()) +
                               ", " + (l.getTranspose() ? "true" : "false") +
                               (disp ? ", " + std::to_string(disp) : "") + ">" +
                               *at);
      })
      .Case([&](nvgpu::MmaSyncOp m) -> LogicalResult {
        std::array<int64_t, 3> shape = m.getMmaShapeAsArray();
        auto c = cast<VectorType>(m.getMatrixC().getType());
        Type a = getElementTypeOrSelf(m.getMatrixA().getType());
        // m16n8k16 on f16/bf16, or m16n8k8 on f32 as tf32.
        bool tf32 = m.getTf32Enabled().has_value();
        bool k16 = shape == std::array<int64_t, 3>{16, 8, 16} && !tf32 &&
                   (a.isF16() || a.isBF16());
        bool k8 =
            shape == std::array<int64_t, 3>{16, 8, 8} && tf32 && a.isF32();
        if (!c.getElementType().isF32() || !(k16 || k8))
          return m.emitOpError()
                 << "cannot print as CUDA: only m16n8k16 on f16 or bf16, or "
                    "m16n8k8 on tf32, with f32 accumulators";
        return define(
            &op, std::string(k8 ? "nf_mma_m16n8k8_tf32(" : "nf_mma_m16n8k16(") +
                     name(m.getMatrixA()) + ", " + name(m.getMatrixB()) + ", " +
                     name(m.getMatrixC()) + ")");
      })
      .Case([&](nvgpu::DeviceAsyncCopyOp c) -> LogicalResult {
        auto [dstIndex, disp] = displaced(c.getDstIndices());
        FailureOr<std::string> dst = address(&op, c.getDst(), dstIndex);
        FailureOr<std::string> src =
            address(&op, c.getSrc(), c.getSrcIndices());
        if (failed(dst) || failed(src))
          return failure();
        int64_t bytes =
            c.getDstElements().getZExtValue() *
            cast<MemRefType>(c.getDst().getType()).getElementTypeBitWidth() / 8;
        std::string srcBytes = std::to_string(bytes);
        if (Value n = c.getSrcElements())
          srcBytes = "(int)" + name(n) + " * " +
                     std::to_string(bytes / c.getDstElements().getZExtValue());
        int64_t elementBytes =
            cast<MemRefType>(c.getDst().getType()).getElementTypeBitWidth() / 8;
        std::string displacement =
            disp ? ", " + std::to_string(disp * elementBytes) : "";
        line() << "nf_cp_async<" << bytes << displacement << ">(" << *dst
               << ", " << *src << ", " << srcBytes << ");\n";
        return define(&op, "0");
      })
      .Case([&](nvgpu::DeviceAsyncCreateGroupOp) -> LogicalResult {
        line() << "nf_cp_async_commit();\n";
        return define(&op, "0");
      })
      .Case([&](nvgpu::DeviceAsyncWaitOp w) -> LogicalResult {
        line() << "nf_cp_async_wait<" << w.getNumGroups().value_or(0)
               << ">();\n";
        return success();
      })
      .Case([&](nf::WarpgroupMmaOp w) -> LogicalResult {
        if (!isWorkgroup(w.getMemref()))
          return w.emitOpError()
                 << "cannot print as CUDA: wgmma operands outside the "
                    "workgroup's memory";
        FailureOr<std::string> a = address(&op, w.getMemref(), w.getA());
        FailureOr<std::string> b = address(&op, w.getMemref(), w.getB());
        if (failed(a) || failed(b))
          return failure();
        auto flag = [](bool x) { return x ? "true" : "false"; };
        std::string args;
        llvm::raw_string_ostream as(args);
        as << w.getN() << ", " << flag(w.getAMnMajor()) << ", "
           << flag(w.getBMnMajor()) << ", " << w.getASwizzle() << ", "
           << w.getALeading() << ", " << w.getAStride() << ", "
           << w.getBSwizzle() << ", " << w.getBLeading() << ", "
           << w.getBStride();
        return define(&op, "nf_wgmma<" + args + ">(" + *a + ", " + *b + ", " +
                               name(w.getAcc()) + ")");
      })
      .Case([&](nf::WarpgroupFenceOperandOp f) {
        return define(&op, "nf_wgmma_fence_operand(" + name(f.getAcc()) + ")");
      })
      .Case([&](nf::WarpgroupFenceOp) {
        line() << "nf_wgmma_fence();\n";
        return success();
      })
      .Case([&](nf::WarpgroupCommitOp) {
        line() << "nf_wgmma_commit();\n";
        return success();
      })
      .Case([&](nf::WarpgroupWaitOp w) {
        line() << "nf_wgmma_wait<" << w.getPending() << ">();\n";
        return success();
      })
      .Case([&](nf::AsyncProxyFenceOp) {
        line() << "nf_fence_proxy_async();\n";
        return success();
      })
      .Case([&](nf::SetMaxRegistersOp op) {
        line() << "nf_setmaxnreg<" << (op.getIncrease() ? "true" : "false")
               << ", " << op.getCount() << ">();\n";
        return success();
      })
      .Case([&](nf::MbarrierInitOp m) -> LogicalResult {
        FailureOr<std::string> at = address(&op, m.getBarriers(), m.getIndex());
        if (failed(at))
          return failure();
        line() << "nf_mbarrier_init(" << *at << ", " << m.getCount() << "u);\n";
        return success();
      })
      .Case([&](nf::MbarrierInitFenceOp) {
        line() << "nf_mbarrier_init_fence();\n";
        return success();
      })
      .Case([&](nf::MbarrierArriveExpectTxOp m) -> LogicalResult {
        FailureOr<std::string> at = address(&op, m.getBarriers(), m.getIndex());
        if (failed(at))
          return failure();
        line() << "nf_mbarrier_arrive_expect_tx(" << *at << ", " << m.getBytes()
               << "u);\n";
        return success();
      })
      .Case([&](nf::MbarrierArriveOp m) -> LogicalResult {
        FailureOr<std::string> at = address(&op, m.getBarriers(), m.getIndex());
        if (failed(at))
          return failure();
        if (Value rank = m.getRank())
          line() << "nf_mbarrier_arrive_cluster(" << *at << ", unsigned("
                 << name(rank) << "));\n";
        else
          line() << "nf_mbarrier_arrive(" << *at << ");\n";
        return success();
      })
      .Case([&](nf::MbarrierWaitOp m) -> LogicalResult {
        FailureOr<std::string> at = address(&op, m.getBarriers(), m.getIndex());
        if (failed(at))
          return failure();
        line() << "nf_mbarrier_wait(" << *at << ", unsigned("
               << name(m.getParity()) << "));\n";
        return success();
      })
      .Case([&](nf::TmaLoadOp t) -> LogicalResult {
        if (!isWorkgroup(t.getMemref()) || !isWorkgroup(t.getBarriers()))
          return t.emitOpError() << "cannot print as CUDA: a TMA load outside "
                                    "the workgroup's memory";
        FailureOr<std::string> dst = address(&op, t.getMemref(), t.getOffset());
        FailureOr<std::string> bar =
            address(&op, t.getBarriers(), t.getIndex());
        if (failed(dst) || failed(bar))
          return failure();
        Value mask = t.getMulticast();
        line() << (mask ? "nf_tma_load_multicast<" : "nf_tma_load<")
               << t.getCoords().size() << ">(" << *dst << ", "
               << name(t.getMap()) << ", " << *bar;
        if (mask)
          os << ", (unsigned short)(" << name(mask) << ")";
        for (Value c : t.getCoords())
          os << ", int(" << name(c) << ")";
        os << ");\n";
        return success();
      })
      .Case([&](vector::FromElementsOp f) -> LogicalResult {
        FailureOr<std::string> type = typeName(f.getType(), &op);
        if (failed(type))
          return failure();
        std::string elems;
        for (auto [i, v] : llvm::enumerate(f.getElements()))
          elems += (i ? ", " : "") + name(v);
        return define(&op, *type + "{{" + elems + "}}");
      })
      .Case(
          [&](gpu::ThreadIdOp t) { return dim("threadIdx", t.getDimension()); })
      .Case([&](gpu::BlockIdOp t) { return dim("blockIdx", t.getDimension()); })
      .Case(
          [&](gpu::BlockDimOp t) { return dim("blockDim", t.getDimension()); })
      .Case([&](gpu::GridDimOp t) { return dim("gridDim", t.getDimension()); })
      .Case([&](gpu::ShuffleOp s) -> LogicalResult {
        if (!s.getValid().use_empty())
          return s.emitOpError()
                 << "cannot print as CUDA: the validity result is used";
        const char *fn = nullptr;
        switch (s.getMode()) {
        case gpu::ShuffleMode::XOR:
          fn = "__shfl_xor_sync";
          break;
        case gpu::ShuffleMode::DOWN:
          fn = "__shfl_down_sync";
          break;
        case gpu::ShuffleMode::UP:
          fn = "__shfl_up_sync";
          break;
        case gpu::ShuffleMode::IDX:
          fn = "__shfl_sync";
          break;
        }
        FailureOr<std::string> type =
            typeName(s.getShuffleResult().getType(), &op);
        if (failed(type))
          return failure();
        std::string n = fresh(s.getShuffleResult());
        line() << *type << " " << n << " = " << fn << "(0xffffffffu, "
               << name(s.getValue()) << ", " << name(s.getOffset()) << ", "
               << name(s.getWidth()) << ");\n";
        return success();
      })
      .Case([&](gpu::BarrierOp) {
        line() << "__syncthreads();\n";
        return success();
      })
      .Case([&](nf::NamedBarrierOp barrier) {
        line() << "nf_named_barrier(" << barrier.getId() << ", "
               << barrier.getThreads() << ");\n";
        return success();
      })
      .Case([&](nf::ClusterBarrierOp barrier) {
        line() << (barrier.getRelaxed() ? "nf_cluster_sync_relaxed();\n"
                                        : "nf_cluster_sync();\n");
        return success();
      })
      .Case([&](nf::GridBarrierOp barrier) -> LogicalResult {
        line() << "nf_grid_sync((unsigned *)" << name(barrier.getCounter())
               << ");\n";
        return success();
      })
      .Case([&](nf::ClusterStoreOp st) -> LogicalResult {
        if (!isWorkgroup(st.getMemref()))
          return st.emitOpError()
                 << "cannot print as CUDA: a cluster store into memory that "
                    "is not the workgroup's";
        FailureOr<std::string> at = address(&op, st.getMemref(), st.getIndex());
        if (failed(at))
          return failure();
        line() << "nf_cluster_st(" << *at << ", (unsigned)"
               << name(st.getRank()) << ", " << name(st.getValue()) << ");\n";
        return success();
      })
      .Case([&](gpu::ReturnOp) {
        line() << "return;\n";
        return success();
      })
      .Case([&](scf::ForOp f) { return emitFor(f); })
      .Case([&](scf::IfOp i) { return emitIf(i); })
      .Case([&](scf::YieldOp) { return success(); }) // by the parent
      .Default([&](Operation *o) -> LogicalResult {
        if (o->getDialect() && isa<math::MathDialect>(o->getDialect()))
          return emitMath(o);
        return o->emitOpError() << "cannot print as CUDA";
      });
}

LogicalResult CUDAEmitter::emitKernel(gpu::GPUFuncOp func) {
  if (!func.isKernel())
    return func.emitOpError() << "cannot print a device function as CUDA "
                                 "(only kernels)";
  if (!func.getBody().hasOneBlock())
    return func.emitOpError()
           << "cannot print a kernel of several blocks as CUDA";
  names.clear();
  nextValue = 0;
  auto bits = func->getAttrOfType<IntegerAttr>("nf.index_bits");
  index32 = bits && bits.getInt() == 32;
  if (bits && !index32 && bits.getInt() != 64)
    return func.emitOpError() << "has nf.index_bits = " << bits.getInt()
                              << "; CUDA kernels take 32 or 64";
  // An index argument's value comes from the host as 64 bits.
  if (index32 &&
      llvm::any_of(func.getArgumentTypes(), [](Type t) { return t.isIndex(); }))
    return func.emitOpError()
           << "has nf.index_bits = 32 and index arguments, which the host "
              "passes as 64 bits";
  Block &entry = func.getBody().front();
  // Parameters: flat buffers as restrict pointers (const when never
  // written), scalars by value.
  std::string params;
  unsigned numParams = func.getFunctionType().getNumInputs();
  for (unsigned i = 0; i < numParams; ++i) {
    BlockArgument arg = func.getArgument(i);
    std::string n = "a" + std::to_string(i);
    names[arg] = n;
    std::string decl;
    if (auto memref = dyn_cast<MemRefType>(arg.getType())) {
      FailureOr<std::string> element = typeName(memref.getElementType(), func);
      if (failed(element))
        return failure();
      bool written = llvm::any_of(arg.getUsers(), [&](Operation *user) {
        return isa<memref::StoreOp, vector::StoreOp, nf::GridBarrierOp>(user);
      });
      decl = (written ? "" : "const ") + *element + " *__restrict__ " + n;
    } else if (isa<nf::TensorMapType>(arg.getType())) {
      // A TMA load takes the parameter's address: __grid_constant__ keeps
      // it in parameter memory.
      decl = "const __grid_constant__ nf_tensor_map " + n;
    } else {
      FailureOr<std::string> type = typeName(arg.getType(), func);
      if (failed(type))
        return failure();
      decl = *type + " " + n;
    }
    params += (i ? ", " : "") + decl;
  }
  std::string bounds;
  if (std::optional<ArrayRef<int32_t>> block = func.getKnownBlockSize()) {
    int64_t threads = 1;
    for (int32_t d : *block)
      threads *= d;
    bounds = "__launch_bounds__(" + std::to_string(threads);
    if (auto minBlocks =
            func->getAttrOfType<IntegerAttr>("nf.min_blocks_per_sm"))
      bounds += ", " + std::to_string(minBlocks.getInt());
    bounds += ") ";
  }
  // Blocks launched in clusters along x (sm_90 and newer).
  int64_t cluster = 1;
  if (auto blocks = func->getAttrOfType<IntegerAttr>(nf::kClusterBlocksAttr)) {
    cluster = blocks.getInt();
    if (cluster < 1 || cluster > 8)
      return func.emitOpError() << "cannot print a cluster of " << cluster
                                << " blocks as CUDA (1 to 8)";
    bounds += "__cluster_dims__(" + std::to_string(cluster) + ", 1, 1) ";
  }
  // A kernel that synchronizes its grid (launched cooperatively).
  bool gridSync =
      func.walk([](nf::GridBarrierOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
  if (gridSync && cluster > 1)
    return func.emitOpError()
           << "cannot print a kernel with both clusters and a grid barrier";
  if (auto schedule = func->getAttrOfType<StringAttr>("nf.schedule"))
    os << "// " << func.getName() << ": " << schedule.getValue() << "\n";
  os << "extern \"C\" __global__ void " << bounds << func.getName() << "("
     << params << ") {\n";
  // Static __shared__ arrays, or views of the one dynamic buffer where
  // they are over 48 KiB (the launch gives its size).
  cuda::SharedMemoryLayout smem = cuda::sharedMemoryLayout(func);
  // wgmma's and TMA's swizzles repeat every 1024 bytes of the shared
  // address: the buffers they read or write are aligned so.
  auto swizzled = [](Value buffer) {
    return llvm::any_of(buffer.getUsers(), [&](Operation *user) {
      if (auto t = dyn_cast<nf::TmaLoadOp>(user))
        return t.getMemref() == buffer;
      return isa<nf::WarpgroupMmaOp>(user);
    });
  };
  bool wgmma = llvm::any_of(func.getWorkgroupAttributions(), swizzled);
  if (smem.dynamic())
    line() << (wgmma ? "NF_DYNAMIC_SMEM_ALIGNED(nf_smem, 1024);\n"
                     : "NF_DYNAMIC_SMEM(nf_smem);\n");
  for (auto [i, buffer] : llvm::enumerate(func.getWorkgroupAttributions())) {
    auto type = cast<MemRefType>(buffer.getType());
    FailureOr<std::string> element = typeName(type.getElementType(), func);
    if (failed(element))
      return failure();
    if (type.getRank() != 1 || !type.hasStaticShape())
      return func.emitOpError()
             << "cannot print workgroup memory of type " << type << " as CUDA";
    std::string n = "s" + std::to_string(i);
    names[buffer] = n;
    bool aligned = swizzled(buffer);
    if (aligned && smem.dynamic() && smem.offsets[i] % 1024)
      return func.emitOpError()
             << "cannot print a wgmma or TMA kernel whose workgroup buffer "
             << i << " is not 1024-byte aligned in its dynamic shared memory";
    if (smem.dynamic())
      line() << *element << " *const " << n << " = reinterpret_cast<"
             << *element << " *>(nf_smem + " << smem.offsets[i] << ");\n";
    else if (aligned)
      line() << "NF_SHARED_ALIGNED(" << *element << ", " << n << ", "
             << type.getDimSize(0) << ", 1024);\n";
    else
      line() << "NF_SHARED(" << *element << ", " << n << ", "
             << type.getDimSize(0) << ");\n";
  }
  if (!func.getPrivateAttributions().empty())
    return func.emitOpError() << "cannot print private attributions as CUDA";
  if (failed(emitBlock(entry)))
    return failure();
  if (gridSync)
    os << "}\nNF_SIM_GRID_ENTRY(" << func.getName() << ")\n\n";
  else if (cluster > 1)
    os << "}\nNF_SIM_CLUSTER_ENTRY(" << func.getName() << ", " << cluster
       << ")\n\n";
  else
    os << "}\nNF_SIM_ENTRY(" << func.getName() << ")\n\n";
  return success();
}

} // namespace

LogicalResult nf::translateToCUDA(ModuleOp module, llvm::raw_ostream &out,
                                  const CUDAEmitOptions &options) {
  // Printed to a string first: nothing is written when an op fails.
  std::string text;
  llvm::raw_string_ostream os(text);
  SmallVector<gpu::GPUFuncOp> kernels;
  module.walk([&](gpu::GPUFuncOp f) { kernels.push_back(f); });
  if (kernels.empty() && !options.allowNoKernels)
    return module.emitError()
           << "no GPU kernels to print: the module holds no gpu.func (lower "
              "nf ops with --nf-cuda-pipeline first)";
  os << "// Generated by normfuse (nf-translate --nf-to-cuda) for "
     << options.target << ": " << kernels.size() << " kernel"
     << (kernels.size() == 1 ? "" : "s") << ".\n";
  os << kPrelude << "\n";
  CUDAEmitter emitter(os);
  for (gpu::GPUFuncOp kernel : kernels)
    if (failed(emitter.emitKernel(kernel)))
      return failure();
  out << text;
  return success();
}
