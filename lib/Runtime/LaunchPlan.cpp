//===- LaunchPlan.cpp - the host side of a compiled nf function -----------===//
//
// Part of normfuse. See LaunchPlan.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/LaunchPlan.h"

using namespace normfuse::runtime;

std::string normfuse::runtime::describe(const LaunchArg &a) {
  switch (a.kind) {
  case LaunchArg::Kind::Buffer:
    return "buffer " + std::to_string(a.index);
  case LaunchArg::Kind::Temporary:
    return "temporary " + std::to_string(a.index);
  case LaunchArg::Kind::Integer:
    return std::to_string(a.value);
  case LaunchArg::Kind::Constant:
    return "constant " + std::to_string(a.index);
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
  case LaunchArg::Kind::Integer:
    break;
  }
  return 0;
}

std::string normfuse::runtime::LaunchPlan::str() const {
  std::string s;
  for (size_t i = 0; i < constants.size(); ++i)
    s += "constant " + std::to_string(i) + ": " +
         std::to_string(constants[i]->size()) + " bytes\n";
  for (size_t i = 0; i < temporaryBytes.size(); ++i)
    s += "temporary " + std::to_string(i) + ": " +
         std::to_string(temporaryBytes[i]) + " bytes\n";
  for (const Step &step : steps) {
    if (step.kind == Step::Kind::Copy) {
      s += "copy " + std::to_string(step.copy.bytes) + " bytes from " +
           describe(step.copy.from) + " to " + describe(step.copy.to) + "\n";
      continue;
    }
    const Launch &l = step.launch;
    s += "launch " + l.kernel + " grid (" + std::to_string(l.grid[0]) + ", " +
         std::to_string(l.grid[1]) + ", " + std::to_string(l.grid[2]) +
         ") block (" + std::to_string(l.block[0]) + ", " +
         std::to_string(l.block[1]) + ", " + std::to_string(l.block[2]) +
         ") shared " + std::to_string(l.sharedMemoryBytes) + " args (";
    for (size_t j = 0; j < l.args.size(); ++j)
      s += (j ? ", " : "") + describe(l.args[j]);
    s += ")\n";
  }
  return s;
}
