//===- LaunchPlan.cpp - the host side of a compiled nf function -----------===//
//
// Part of normfuse. See LaunchPlan.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/LaunchPlan.h"

#include <algorithm>
#include <climits>

using namespace normfuse::runtime;

namespace {
using Op = PlanInteger::Op;
struct OpInfo {
  Op op;
  const char *name;
  int operands;
};
constexpr OpInfo kOps[] = {
    {Op::Constant, "constant", 0},
    {Op::Resident, "resident", 0},
    {Op::Add, "add", 2},
    {Op::Sub, "sub", 2},
    {Op::Mul, "mul", 2},
    {Op::And, "and", 2},
    {Op::Or, "or", 2},
    {Op::MinU, "minu", 2},
    {Op::MaxU, "maxu", 2},
    {Op::MinS, "mins", 2},
    {Op::MaxS, "maxs", 2},
    {Op::DivU, "divu", 2},
    {Op::CeilDivU, "ceildivu", 2},
    {Op::RemU, "remu", 2},
    {Op::DivS, "divs", 2},
    {Op::RemS, "rems", 2},
    {Op::Eq, "eq", 2},
    {Op::Ne, "ne", 2},
    {Op::Slt, "slt", 2},
    {Op::Sle, "sle", 2},
    {Op::Sgt, "sgt", 2},
    {Op::Sge, "sge", 2},
    {Op::Ult, "ult", 2},
    {Op::Ule, "ule", 2},
    {Op::Ugt, "ugt", 2},
    {Op::Uge, "uge", 2},
    {Op::Select, "select", 3},
};
const OpInfo &info(Op op) {
  for (const OpInfo &i : kOps)
    if (i.op == op)
      return i;
  return kOps[0];
}
} // namespace

int PlanInteger::numOperands(Op op) { return info(op).operands; }
const char *PlanInteger::name(Op op) { return info(op).name; }
bool PlanInteger::fromName(const std::string &name, Op &op) {
  for (const OpInfo &i : kOps)
    if (name == i.name) {
      op = i.op;
      return true;
    }
  return false;
}

bool normfuse::runtime::evaluatePlanOp(PlanInteger::Op op, const int64_t *in,
                                       int64_t &out, std::string &error) {
  auto u = [](int64_t v) { return uint64_t(v); };
  bool divides = op == Op::DivU || op == Op::CeilDivU || op == Op::RemU ||
                 op == Op::DivS || op == Op::RemS;
  if (divides && in[1] == 0)
    return error = "divides by zero", false;
  if ((op == Op::DivS || op == Op::RemS) && in[0] == INT64_MIN && in[1] == -1)
    return error = "overflows", false;
  switch (op) {
  case Op::Constant:
  case Op::Resident:
    return error = "is not an operation", false;
  // Two's complement wrapping, as MLIR's arith ops define it.
  case Op::Add:
    out = int64_t(u(in[0]) + u(in[1]));
    break;
  case Op::Sub:
    out = int64_t(u(in[0]) - u(in[1]));
    break;
  case Op::Mul:
    out = int64_t(u(in[0]) * u(in[1]));
    break;
  case Op::And:
    out = in[0] & in[1];
    break;
  case Op::Or:
    out = in[0] | in[1];
    break;
  case Op::MinU:
    out = int64_t(std::min(u(in[0]), u(in[1])));
    break;
  case Op::MaxU:
    out = int64_t(std::max(u(in[0]), u(in[1])));
    break;
  case Op::MinS:
    out = std::min(in[0], in[1]);
    break;
  case Op::MaxS:
    out = std::max(in[0], in[1]);
    break;
  case Op::DivU:
    out = int64_t(u(in[0]) / u(in[1]));
    break;
  case Op::CeilDivU:
    out = int64_t(u(in[0]) / u(in[1]) + (u(in[0]) % u(in[1]) != 0));
    break;
  case Op::RemU:
    out = int64_t(u(in[0]) % u(in[1]));
    break;
  case Op::DivS:
    out = in[0] / in[1];
    break;
  case Op::RemS:
    out = in[0] % in[1];
    break;
  case Op::Eq:
    out = in[0] == in[1];
    break;
  case Op::Ne:
    out = in[0] != in[1];
    break;
  case Op::Slt:
    out = in[0] < in[1];
    break;
  case Op::Sle:
    out = in[0] <= in[1];
    break;
  case Op::Sgt:
    out = in[0] > in[1];
    break;
  case Op::Sge:
    out = in[0] >= in[1];
    break;
  case Op::Ult:
    out = u(in[0]) < u(in[1]);
    break;
  case Op::Ule:
    out = u(in[0]) <= u(in[1]);
    break;
  case Op::Ugt:
    out = u(in[0]) > u(in[1]);
    break;
  case Op::Uge:
    out = u(in[0]) >= u(in[1]);
    break;
  case Op::Select:
    out = in[0] ? in[1] : in[2];
    break;
  }
  return true;
}

std::string normfuse::runtime::describe(const LaunchArg &a) {
  switch (a.kind) {
  case LaunchArg::Kind::Buffer:
    return "buffer " + std::to_string(a.index);
  case LaunchArg::Kind::Temporary:
    return "temporary " + std::to_string(a.index);
  case LaunchArg::Kind::Integer:
    return std::to_string(a.value) +
           (a.computed >= 0 ? " (integer " + std::to_string(a.computed) + ")"
                            : "");
  case LaunchArg::Kind::Constant:
    return "constant " + std::to_string(a.index);
  case LaunchArg::Kind::TensorMap:
    return "the tensor map of " + describe(a.mapped());
  }
  return "?";
}

size_t normfuse::runtime::bytesOf(const LaunchPlan &plan, const LaunchArg &a) {
  switch (a.kind) {
  case LaunchArg::Kind::Buffer:
    return plan.bufferBytes[a.index];
  case LaunchArg::Kind::Temporary:
    return plan.temporaryBytes[a.index];
  case LaunchArg::Kind::Constant:
    return plan.constants[a.index]->size();
  case LaunchArg::Kind::TensorMap:
    return bytesOf(plan, a.mapped());
  case LaunchArg::Kind::Integer:
    break;
  }
  return 0;
}

const char *normfuse::runtime::TensorMapSpec::name(Element e) {
  switch (e) {
  case Element::F16:
    return "f16";
  case Element::BF16:
    return "bf16";
  case Element::F32:
    return "f32";
  }
  return "?";
}

bool normfuse::runtime::TensorMapSpec::fromName(const std::string &name,
                                                Element &e) {
  for (Element x : {Element::F16, Element::BF16, Element::F32})
    if (name == TensorMapSpec::name(x)) {
      e = x;
      return true;
    }
  return false;
}

bool normfuse::runtime::TensorMapSpec::check(uintptr_t base, size_t bytes,
                                             std::string &error) const {
  auto fail = [&](const std::string &why) {
    error = "a tensor map " + why;
    return false;
  };
  if (rank < 1 || rank > 5)
    return fail("of " + std::to_string(rank) + " dimensions (1 to 5)");
  if (base % 16)
    return fail("of a buffer not 16-byte aligned (TMA needs 16)");
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return fail("with a swizzle of " + std::to_string(swizzle) + " bytes");
  uint64_t inner = uint64_t(box[0]) * elementBytes();
  if (inner % 16 || (swizzle && inner > uint64_t(swizzle)))
    return fail("whose box rows are " + std::to_string(inner) +
                " bytes (a multiple of 16, at most the swizzle's width)");
  // The last element lies inside the buffer (strides of no overlap checked
  // by the lowering; here only that nothing is read past the end).
  // (Sums past 2^64 wrap: such a map reaches past every buffer.)
  uint64_t last = 0;
  bool wraps = false;
  for (int d = 0; d < rank; ++d) {
    if (dims[d] < 1 || dims[d] > (uint64_t(1) << 32) || box[d] < 1 ||
        box[d] > 256)
      return fail("with dimension " + std::to_string(d) + " of " +
                  std::to_string(dims[d]) + " elements and a box of " +
                  std::to_string(box[d]));
    uint64_t stride = d ? strides[d - 1] : elementBytes(), reach = 0;
    if (d && (stride % 16 || stride >= (uint64_t(1) << 40)))
      return fail("with a stride of " + std::to_string(stride) +
                  " bytes (a multiple of 16 below 2^40)");
    wraps |= __builtin_mul_overflow(dims[d] - 1, stride, &reach);
    wraps |= __builtin_add_overflow(last, reach, &last);
  }
  wraps |= __builtin_add_overflow(last, elementBytes(), &last);
  if (wraps)
    return fail("reaching past byte 2^64 of a buffer of " +
                std::to_string(bytes));
  if (last > bytes)
    return fail("reaching byte " + std::to_string(last) + " of a buffer of " +
                std::to_string(bytes));
  return true;
}

std::string normfuse::runtime::LaunchPlan::str() const {
  std::string s;
  for (size_t i = 0; i < constants.size(); ++i)
    s += "constant " + std::to_string(i) + ": " +
         std::to_string(constants[i]->size()) + " bytes\n";
  for (size_t i = 0; i < residencies.size(); ++i) {
    const Residency &r = residencies[i];
    s += "residency " + std::to_string(i) + ": " + r.kernel + " block " +
         std::to_string(r.block) + " shared " +
         std::to_string(r.sharedMemoryBytes) + " planned " +
         std::to_string(r.planned) +
         (r.clusterBlocks > 1
              ? " in clusters of " + std::to_string(r.clusterBlocks)
              : std::string()) +
         "\n";
  }
  for (size_t i = 0; i < integers.size(); ++i) {
    const PlanInteger &n = integers[i];
    s += "integer " + std::to_string(i) + ": " + PlanInteger::name(n.op);
    if (n.op == PlanInteger::Op::Constant || n.op == PlanInteger::Op::Resident)
      s += " " + std::to_string(n.operands[0]);
    for (int o = 0; o < PlanInteger::numOperands(n.op); ++o)
      s += std::string(o ? ", " : " ") + "integer " +
           std::to_string(n.operands[o]);
    s += "\n";
  }
  for (size_t i = 0; i < temporaryBytes.size(); ++i) {
    s += "temporary " + std::to_string(i) + ": " +
         std::to_string(temporaryBytes[i]) + " bytes";
    if (i < temporaryComputed.size() && temporaryComputed[i] >= 0)
      s += " (integer " + std::to_string(temporaryComputed[i]) + ")";
    if (std::count(zeroedTemporaries.begin(), zeroedTemporaries.end(),
                   int64_t(i)))
      s += " zeroed";
    s += "\n";
  }
  for (const Step &step : steps) {
    if (step.kind == Step::Kind::Copy) {
      s += "copy " + std::to_string(step.copy.bytes) + " bytes from " +
           describe(step.copy.from) + " to " + describe(step.copy.to) + "\n";
      continue;
    }
    const Launch &l = step.launch;
    s += "launch " + l.kernel + " grid (";
    for (int d = 0; d < 3; ++d)
      s += (d ? ", " : "") + std::to_string(l.grid[d]) +
           (l.gridComputed[d] >= 0
                ? " (integer " + std::to_string(l.gridComputed[d]) + ")"
                : "");
    s += ") block (" + std::to_string(l.block[0]) + ", " +
         std::to_string(l.block[1]) + ", " + std::to_string(l.block[2]) +
         ") shared " + std::to_string(l.sharedMemoryBytes) +
         (l.cooperative ? " cooperative" : "") +
         (l.launchRegisters ? " registers " + std::to_string(l.launchRegisters)
                            : "") +
         " args (";
    for (size_t j = 0; j < l.args.size(); ++j)
      s += (j ? ", " : "") + describe(l.args[j]);
    s += ")\n";
  }
  return s;
}

bool LaunchPlan::checkComputed(std::string &error) const {
  int64_t n = int64_t(integers.size());
  for (int64_t i = 0; i < n; ++i) {
    const PlanInteger &v = integers[size_t(i)];
    if (v.op == PlanInteger::Op::Resident &&
        (v.operands[0] < 0 || v.operands[0] >= int64_t(residencies.size())))
      return error = "integer " + std::to_string(i) +
                     " reads a residency the plan does not have",
             false;
    for (int o = 0; o < PlanInteger::numOperands(v.op); ++o)
      if (v.operands[o] < 0 || v.operands[o] >= i)
        return error = "integer " + std::to_string(i) +
                       " reads an integer that is not before it",
               false;
  }
  for (const Residency &r : residencies)
    if (r.planned < 1 || r.block < 1 || r.clusterBlocks < 1)
      return error = "residency of " + r.kernel +
                     " plans fewer than one block, blocks of no threads or "
                     "clusters of no blocks",
             false;
  auto inRange = [&](int64_t index) { return index >= -1 && index < n; };
  if (!temporaryComputed.empty() &&
      temporaryComputed.size() != temporaryBytes.size())
    return error = "computes the bytes of " +
                   std::to_string(temporaryComputed.size()) +
                   " temporaries; it has " +
                   std::to_string(temporaryBytes.size()),
           false;
  for (size_t i = 0; i < zeroedTemporaries.size(); ++i)
    if (zeroedTemporaries[i] < 0 ||
        zeroedTemporaries[i] >= int64_t(temporaryBytes.size()) ||
        (i && zeroedTemporaries[i] <= zeroedTemporaries[i - 1]))
      return error = "zeroes a temporary it does not have, or one twice", false;
  bool ok =
      std::all_of(temporaryComputed.begin(), temporaryComputed.end(), inRange);
  for (const Step &step : steps) {
    if (step.kind != Step::Kind::Launch)
      continue;
    for (int64_t g : step.launch.gridComputed)
      ok &= inRange(g);
    for (const LaunchArg &a : step.launch.args)
      ok &= inRange(a.computed) &&
            (a.computed < 0 || a.kind == LaunchArg::Kind::Integer);
  }
  if (!ok)
    return error = "computes a value from an integer it does not have", false;
  return true;
}

bool normfuse::runtime::resolveResidencies(
    LaunchPlan &plan, const std::function<int64_t(const Residency &)> &resident,
    std::string &error) {
  if (!plan.checkComputed(error))
    return false;
  std::vector<int64_t> values(plan.integers.size());
  for (size_t i = 0; i < plan.integers.size(); ++i) {
    const PlanInteger &n = plan.integers[i];
    if (n.op == PlanInteger::Op::Constant) {
      values[i] = n.operands[0];
      continue;
    }
    if (n.op == PlanInteger::Op::Resident) {
      Residency &r = plan.residencies[size_t(n.operands[0])];
      values[i] = std::clamp<int64_t>(resident(r), 1, r.planned);
      if (r.clusterBlocks > 1)
        values[i] = std::max(r.clusterBlocks,
                             values[i] / r.clusterBlocks * r.clusterBlocks);
      r.resolved = values[i];
      continue;
    }
    int64_t in[3] = {0, 0, 0};
    for (int o = 0; o < PlanInteger::numOperands(n.op); ++o)
      in[o] = values[size_t(n.operands[o])];
    std::string why;
    if (!evaluatePlanOp(n.op, in, values[i], why))
      return error = "integer " + std::to_string(i) + " " + why, false;
  }
  for (size_t t = 0; t < plan.temporaryComputed.size(); ++t) {
    if (plan.temporaryComputed[t] < 0)
      continue;
    int64_t bytes = values[size_t(plan.temporaryComputed[t])];
    if (bytes < 0)
      return error = "temporary " + std::to_string(t) + " takes " +
                     std::to_string(bytes) + " bytes",
             false;
    plan.temporaryBytes[t] = size_t(bytes);
  }
  for (Step &step : plan.steps) {
    if (step.kind != Step::Kind::Launch)
      continue;
    Launch &l = step.launch;
    l.persistentUnits = 0;
    for (int d = 0; d < 3; ++d) {
      if (l.gridComputed[d] < 0)
        continue;
      // min(units, a residency): a persistent grid over `units`.
      const PlanInteger &n = plan.integers[size_t(l.gridComputed[d])];
      if (n.op == PlanInteger::Op::MinU)
        for (int o = 0; o < 2; ++o)
          if (plan.integers[size_t(n.operands[o])].op ==
              PlanInteger::Op::Resident)
            l.persistentUnits = values[size_t(n.operands[1 - o])];
      int64_t g = values[size_t(l.gridComputed[d])];
      if (g < 0 || g > int64_t(UINT32_MAX))
        return error = "launch of " + l.kernel + " has a grid size of " +
                       std::to_string(g),
               false;
      l.grid[d] = unsigned(g);
    }
    for (LaunchArg &a : l.args)
      if (a.computed >= 0)
        a.value = values[size_t(a.computed)];
  }
  return true;
}

bool normfuse::runtime::checkCompiledRegisters(const Launch &launch,
                                               int64_t compiled,
                                               std::string &error) {
  if (compiled >= launch.launchRegisters)
    return true;
  error = "kernel " + launch.kernel + " was compiled to " +
          std::to_string(compiled) +
          " registers a thread, but its warpgroups hand registers to each "
          "other (setmaxnreg) counting on " +
          std::to_string(launch.launchRegisters) +
          ": launched, it would wait forever, so it is not launched";
  return false;
}
