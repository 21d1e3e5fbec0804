//===- GpuCost.cpp - what each CUDA kernel is predicted to cost -----------===//
//
// Part of normfuse. See GpuCost.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Target/GpuCost.h"
#include "normfuse/Codegen/CUDA/SharedMemory.h"
#include "normfuse/Dialect/NF/IR/NFOps.h"
#include "normfuse/Target/LaunchPlanFromIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <set>

using namespace mlir;
using namespace mlir::nf;
using normfuse::runtime::GpuTarget;
using normfuse::runtime::LaunchArg;
using normfuse::runtime::LaunchPlan;

/// The gpu.func a launch of `plan`'s host names (`kernel`: its symbol's
/// leaf), or null.
static gpu::GPUFuncOp findKernel(ModuleOp module, llvm::StringRef kernel) {
  gpu::GPUFuncOp found;
  module.walk([&](gpu::GPUFuncOp f) {
    if (f.getName() == kernel)
      found = f;
  });
  return found;
}

/// Each distinct buffer, temporary and constant of `args`, once (a tensor
/// map's as its buffer's: TMA reads the same bytes).
static uint64_t argumentBytes(const LaunchPlan &plan,
                              llvm::ArrayRef<LaunchArg> args) {
  std::set<std::pair<int, int64_t>> seen;
  uint64_t bytes = 0;
  for (const LaunchArg &arg : args) {
    LaunchArg buffer =
        arg.kind == LaunchArg::Kind::TensorMap ? arg.mapped() : arg;
    if (buffer.kind != LaunchArg::Kind::Integer &&
        seen.insert({int(buffer.kind), buffer.index}).second)
      bytes += normfuse::runtime::bytesOf(plan, buffer);
  }
  return bytes;
}

FailureOr<std::vector<FunctionCost>>
nf::estimateGpuCost(ModuleOp module, const GpuTarget &target,
                    const llvm::StringMap<unsigned> &numOutputs,
                    const llvm::StringMap<int64_t> &registers) {
  std::vector<FunctionCost> costs;
  for (auto host : module.getOps<func::FuncOp>()) {
    if (host.isExternal())
      continue;
    auto outputs = numOutputs.find(host.getName());
    FailureOr<LaunchPlan> plan =
        readLaunchPlan(host, outputs == numOutputs.end() ? 0 : outputs->second);
    if (failed(plan))
      return failure();
    // Grids sized by residency as the runtime sizes them on loading: from
    // the registers each kernel takes where they are known.
    std::string error;
    if (!normfuse::runtime::resolveResidencies(
            *plan,
            [&](const normfuse::runtime::Residency &r) -> int64_t {
              auto regs = registers.find(r.kernel);
              gpu::GPUFuncOp f = findKernel(module, r.kernel);
              if (regs == registers.end() || regs->second < 0 || !f)
                return r.planned;
              return target.multiprocessors *
                     target
                         .occupancy(r.block, regs->second,
                                    cuda::sharedMemoryLayout(f).bytes)
                         .blocks;
            },
            error))
      return host.emitOpError() << "cannot size its grids: " << error,
             failure();
    FunctionCost cost;
    cost.function = host.getName().str();
    for (size_t bytes : plan->bufferBytes)
      cost.ioBytes += bytes;
    for (const normfuse::runtime::Step &step : plan->steps) {
      if (step.kind != normfuse::runtime::Step::Kind::Launch)
        continue;
      const normfuse::runtime::Launch &launch = step.launch;
      // A fallback not taken on this target (its grid resolved to 0).
      if (launch.emptyGrid())
        continue;
      KernelCost k;
      k.kernel = launch.kernel;
      k.grid = uint64_t(launch.grid[0]) * launch.grid[1] * launch.grid[2];
      k.block = uint64_t(launch.block[0]) * launch.block[1] * launch.block[2];
      k.sharedBytes = launch.sharedMemoryBytes;
      int64_t cluster = 1;
      if (gpu::GPUFuncOp f = findKernel(module, launch.kernel)) {
        if (auto s = f->getAttrOfType<StringAttr>("nf.schedule"))
          k.schedule = s.str();
        if (auto c = f->getAttrOfType<IntegerAttr>(nf::kClusterBlocksAttr))
          cluster = std::max<int64_t>(1, c.getInt());
        k.sharedBytes = std::max<uint64_t>(
            k.sharedBytes, uint64_t(cuda::sharedMemoryLayout(f).bytes));
      }
      if (auto r = registers.find(launch.kernel); r != registers.end())
        k.registers = r->second;
      k.occupancy =
          target.occupancy(int64_t(k.block), std::max<int64_t>(0, k.registers),
                           int64_t(k.sharedBytes));
      // Units only where a block walks more than one.
      if (launch.persistentUnits > 0 &&
          uint64_t(launch.persistentUnits) > k.grid)
        k.units = uint64_t(launch.persistentUnits);
      // (In whole clusters, for a kernel in clusters.)
      uint64_t resident = uint64_t(k.occupancy.blocks) *
                          target.multiprocessors / cluster * cluster;
      k.waves =
          resident ? double(k.units ? k.units : k.grid) / double(resident) : 0;
      k.bytes = argumentBytes(*plan, launch.args);
      cost.kernels.push_back(std::move(k));
    }
    costs.push_back(std::move(cost));
  }
  return costs;
}

/// `bytes` in MB (10^6), with up to three decimals.
static std::string megabytes(uint64_t bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.3f", double(bytes) / 1e6);
  return s;
}

void nf::printGpuCost(llvm::ArrayRef<FunctionCost> costs,
                      const GpuTarget &target, llvm::StringRef registersFrom,
                      llvm::raw_ostream &os) {
  os << "GPU cost on " << target.name() << " (" << target.arch << ": "
     << target.multiprocessors << " SMs of "
     << target.maxThreadsPerMultiprocessor << " threads, "
     << target.maxBlocksPerMultiprocessor << " blocks, "
     << target.registersPerMultiprocessor << " registers, "
     << target.sharedBytesPerMultiprocessor / 1024 << " KiB shared memory; L2 "
     << target.l2Bytes / (1024 * 1024) << " MiB); registers " << registersFrom
     << "\n";
  os << "bytes: each buffer a kernel takes, once (MB = 10^6 bytes); units: "
        "the work a persistent grid's blocks loop over; waves: the grid (or "
        "those units) over the blocks every SM holds at once\n";
  for (const FunctionCost &f : costs) {
    os << "\n@" << f.function << ": " << f.kernels.size() << " launch"
       << (f.kernels.size() == 1 ? "" : "es");
    uint64_t total = 0;
    for (const KernelCost &k : f.kernels)
      total += k.bytes;
    os << ", " << megabytes(total) << " MB by the kernels, "
       << megabytes(f.ioBytes) << " MB in and out\n";
    if (f.kernels.empty())
      continue;
    const char *heads[] = {"kernel",
                           "grid",
                           "units",
                           "block",
                           "regs",
                           "smem",
                           "blocks/SM (limit)",
                           "waves",
                           "MB",
                           "schedule"};
    os << llvm::format("  %-40s %8s %8s %5s %5s %7s %20s %7s %10s  %s\n",
                       heads[0], heads[1], heads[2], heads[3], heads[4],
                       heads[5], heads[6], heads[7], heads[8], heads[9]);
    for (const KernelCost &k : f.kernels) {
      std::string regs =
          k.registers < 0 ? std::string("?") : std::to_string(k.registers);
      std::string blocks =
          std::to_string(k.occupancy.blocks) + " (" + k.occupancy.limit + ")";
      std::string units = k.units ? std::to_string(k.units) : "-";
      os << llvm::format("  %-40s %8llu %8s %5llu %5s %7llu %20s %7.2f %10s  "
                         "%s\n",
                         k.kernel.c_str(), (unsigned long long)k.grid,
                         units.c_str(), (unsigned long long)k.block,
                         regs.c_str(), (unsigned long long)k.sharedBytes,
                         blocks.c_str(), k.waves, megabytes(k.bytes).c_str(),
                         k.schedule.c_str());
    }
  }
}
