//===- ToCUDATranslation.cpp - nf-translate --nf-to-cuda --------*- C++ -*-===//
//
// Part of normfuse. The `nf-to-cuda` translation: lowers a module of nf ops
// with nf-cuda-pipeline (a module already lowered is printed as it is) and
// prints its kernels as CUDA C++. With --cuda-binaries=DIR it also compiles
// them ahead of time with NVRTC for each architecture of --cuda-arch, as
// nvcc's -gencode does: each architecture lowers its own copy of the module
// (its schedules differ), and DIR gets kernels.<arch>.cu with its cubin
// (sm_XY) or PTX (compute_XY).
//
//===----------------------------------------------------------------------===//

#include "normfuse/Codegen/CUDA/Schedule.h"
#include "normfuse/Codegen/Pipelines.h"
#include "normfuse/InitDialects.h"
#include "normfuse/Runtime/Nvrtc.h"
#include "normfuse/Support/UpstreamGuards.h"
#include "normfuse/Support/UpstreamIRGuards.h"
#include "normfuse/Target/CUDAEmitter.h"
#include "normfuse/Target/GpuCost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/ParseUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::nf;

/// The GPU targets of a --cuda-arch list ("sm_80,h100-pcie,compute_90").
static SmallVector<std::string> splitArchs(StringRef list) {
  SmallVector<StringRef> parts;
  list.split(parts, ',', -1, /*KeepEmpty=*/false);
  SmallVector<std::string> archs;
  for (StringRef part : parts)
    archs.push_back(part.trim().str());
  return archs;
}

/// The part of a file name that stands for GPU target `text`: the text with
/// each ':' a '.' ("sm_90.sms=114").
static std::string fileStem(StringRef text) {
  std::string stem = text.str();
  std::replace(stem.begin(), stem.end(), ':', '.');
  return stem;
}

/// `module` (nf ops, or kernels already lowered) printed as CUDA for the GPU
/// target `arch`, f32 products on tensor cores as tf32 when `tf32`.
static LogicalResult printForArch(ModuleOp module, const std::string &arch,
                                  bool tf32, llvm::raw_ostream &os,
                                  bool allowNoKernels = false) {
  bool hasKernels = false;
  module.walk([&](gpu::GPUFuncOp) { hasKernels = true; });
  if (!hasKernels) {
    // A module of nf ops on tensors is lowered here first, with the
    // schedules of `arch`.
    PassManager pm(module.getContext());
    CUDAPipelineOptions pipeline;
    pipeline.arch = arch;
    pipeline.allowTf32 = tf32;
    buildCUDAPipeline(pm, pipeline);
    if (failed(pm.run(module)))
      return failure();
  }
  CUDAEmitOptions options;
  options.target = arch;
  options.allowNoKernels = allowNoKernels;
  return translateToCUDA(module, os, options);
}

/// Writes `bytes` to `path` through a temporary renamed into place.
static LogicalResult writeFile(Operation *op, const std::string &path,
                               StringRef bytes) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file)
    return emitError(op->getLoc()) << error;
  file->os() << bytes;
  file->os().flush();
  if (file->os().has_error())
    return emitError(op->getLoc()) << "cannot write " << path;
  file->keep();
  return success();
}

/// The module of the main file of `sourceMgr`, parsed and verified, or
/// null after an error: constructs that crash MLIR 19's parser are refused
/// before it runs (normfuse/Support/UpstreamGuards.h), as nf-opt does.
static OwningOpRef<Operation *>
parseForTool(const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
             MLIRContext *context) {
  const llvm::MemoryBuffer *text =
      sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
  if (auto crash = normfuse::findUpstreamCrash(text->getBuffer(),
                                               text->getBufferIdentifier())) {
    llvm::errs() << *crash << "\n";
    return nullptr;
  }
  DialectRegistry registry;
  registerAllDialects(registry);
  context->appendDialectRegistry(registry);
  OwningOpRef<Operation *> parsed = parseSourceFileForTool(
      sourceMgr, ParserConfig(context), /*insertImplicitModule=*/true);
  if (!parsed) // the parser verifies too
    return nullptr;
  if (failed(normfuse::checkUpstreamIRCrashes(parsed.get())))
    return nullptr;
  if (!isa<ModuleOp>(parsed.get())) {
    emitError(parsed->getLoc()) << "expected a builtin.module";
    return nullptr;
  }
  return parsed;
}

/// The report of nf-gpu-cost for `module` on the first target of `archs`.
static LogicalResult printCost(ModuleOp module, ArrayRef<std::string> archs,
                               bool tf32, llvm::raw_ostream &os) {
  if (archs.empty())
    return emitError(module.getLoc()) << "--cuda-arch names no architecture";
  std::string error;
  std::optional<cuda::GpuTarget> target =
      cuda::GpuTarget::parse(archs.front(), error);
  if (!target)
    return emitError(module.getLoc()) << "--cuda-arch: " << error;
  llvm::StringMap<unsigned> outputs;
  for (auto f : module.getOps<func::FuncOp>()) {
    outputs[f.getName()] = f.getNumResults();
    // The costs are of one launch plan: sizes must be known.
    for (auto [i, type] : llvm::enumerate(f.getFunctionType().getInputs()))
      if (auto shaped = dyn_cast<ShapedType>(type);
          shaped && !shaped.hasStaticShape())
        return emitError(f.getLoc())
               << "nf-gpu-cost needs static shapes: argument #" << i << " of @"
               << f.getName() << " is " << type;
  }
  std::string source;
  llvm::raw_string_ostream sourceOs(source);
  // A function that launches nothing costs nothing.
  if (failed(printForArch(module, archs.front(), tf32, sourceOs,
                          /*allowNoKernels=*/true)))
    return failure();
  // Registers from ptxas where NVRTC is at hand and the target is real.
  llvm::StringMap<int64_t> registers;
  std::vector<std::pair<std::string, int64_t>> spills;
  std::string from;
  bool hasKernels = false;
  module.walk([&](gpu::GPUFuncOp) { hasKernels = true; });
  auto nvrtc = normfuse::runtime::Nvrtc::open(error);
  if (!hasKernels) {
    from = "(no kernels)";
  } else if (!nvrtc) {
    from = "unknown (" + error +
           "): blocks/SM count threads, blocks and "
           "shared memory only";
  } else if (target->isPtx()) {
    from = "unknown (" + target->arch +
           " is PTX): blocks/SM count threads, blocks and shared memory only";
  } else {
    std::map<std::string, normfuse::runtime::Nvrtc::KernelResources> res;
    if (!nvrtc->kernelResources(source, target->arch, res, error))
      return emitError(module.getLoc()) << error;
    for (const auto &[name, r] : res) {
      registers[name] = r.registers;
      if (r.spillBytes)
        spills.emplace_back(name, r.spillBytes);
    }
    from = "from ptxas (" + nvrtc->version() + ", " + target->arch + ")";
  }
  FailureOr<std::vector<FunctionCost>> costs =
      estimateGpuCost(module, *target, outputs, registers);
  if (failed(costs))
    return failure();
  printGpuCost(*costs, *target, from, os);
  // A kernel that spills moves local memory the table does not count.
  for (const auto &[name, bytes] : spills)
    os << "spills: " << name << " " << bytes
       << " bytes of local memory stored and loaded (ptxas)\n";
  return success();
}

void nf::registerToCUDATranslation() {
  static llvm::cl::opt<std::string> archList(
      "cuda-arch",
      llvm::cl::desc("GPU targets, comma-separated: sm_XY (a cubin with "
                     "--cuda-binaries) or compute_XY (PTX) with XY at least "
                     "75, or a part (h100-pcie, a100, ...), each optionally "
                     "with :key=value figures (sm_90:sms=114; "
                     "normfuse/Runtime/GpuTarget.h). The first one's CUDA "
                     "is printed; default sm_90"),
      llvm::cl::init(normfuse::runtime::kDefaultGpuTarget));
  static llvm::cl::opt<bool> allowTf32(
      "allow-tf32",
      llvm::cl::desc("Lower f32 matmuls and convolutions to tensor-core "
                     "kernels as tf32 (sm_80 and newer)"),
      llvm::cl::init(false));
  static llvm::cl::opt<std::string> binaries(
      "cuda-binaries",
      llvm::cl::desc("Compile ahead of time with NVRTC, for each --cuda-arch, "
                     "into this folder: kernels.<target>.cu and "
                     "kernels.<target>.cubin (sm_XY) or .ptx (compute_XY), "
                     "each ':' of the target a '.'"),
      llvm::cl::init(""));
  // A translation from the source text, not from a parsed module, so that
  // constructs that crash MLIR 19's parser are refused before it runs
  // (normfuse/Support/UpstreamGuards.h), as nf-opt does.
  TranslateRegistration registration(
      "nf-to-cuda", "print nf kernels as CUDA C++",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         llvm::raw_ostream &os, MLIRContext *context) -> LogicalResult {
        OwningOpRef<Operation *> parsed = parseForTool(sourceMgr, context);
        if (!parsed)
          return failure();
        Operation *op = parsed.get();
        auto module = cast<ModuleOp>(op);
        SmallVector<std::string> archs = splitArchs(archList);
        if (archs.empty())
          return emitError(op->getLoc()) << "--cuda-arch names no architecture";
        SmallVector<cuda::GpuTarget> targets;
        llvm::StringSet<> stems;
        for (const std::string &arch : archs) {
          std::string error;
          std::optional<cuda::GpuTarget> target =
              cuda::GpuTarget::parse(arch, error);
          if (!target)
            return emitError(op->getLoc()) << "--cuda-arch: " << error;
          if (!stems.insert(fileStem(arch)).second)
            return emitError(op->getLoc())
                   << "--cuda-arch names '" << arch << "' twice";
          targets.push_back(*target);
        }
        if (archs.size() > 1 && binaries.empty())
          return emitError(op->getLoc())
                 << "several --cuda-arch need "
                    "--cuda-binaries=DIR to compile them into";
        std::unique_ptr<normfuse::runtime::Nvrtc> nvrtc;
        if (!binaries.empty()) {
          std::string error;
          nvrtc = normfuse::runtime::Nvrtc::open(error);
          if (!nvrtc)
            return emitError(op->getLoc()) << "--cuda-binaries: " << error;
          if (auto ec = llvm::sys::fs::create_directories(binaries.getValue()))
            return emitError(op->getLoc())
                   << "cannot create " << binaries.getValue() << ": "
                   << ec.message();
        }
        // Each architecture lowers a copy of the module with its own
        // schedules; the first one's CUDA goes to the output.
        std::string printed;
        for (auto [i, arch] : llvm::enumerate(archs)) {
          OwningOpRef<ModuleOp> copy = module.clone();
          std::string source;
          llvm::raw_string_ostream sourceOs(source);
          if (failed(printForArch(*copy, arch, allowTf32, sourceOs)))
            return failure();
          if (i == 0)
            printed = source;
          if (!nvrtc)
            continue;
          std::string binary, error;
          if (!nvrtc->compile(source, targets[i].arch, binary, error))
            return emitError(op->getLoc())
                   << "NVRTC failed for " << arch << ":\n"
                   << error;
          llvm::SmallString<256> base(binaries.getValue());
          llvm::sys::path::append(base, "kernels." + fileStem(arch));
          bool ptx = targets[i].isPtx();
          // PTX is text: without the NUL that ends NVRTC's buffer.
          if (ptx)
            binary = StringRef(binary).rtrim('\0').str();
          if (failed(writeFile(op, (base + ".cu").str(), source)) ||
              failed(writeFile(op, (base + (ptx ? ".ptx" : ".cubin")).str(),
                               binary)))
            return failure();
        }
        os << printed;
        return success();
      });
  TranslateRegistration cost(
      "nf-gpu-cost",
      "print each CUDA kernel's predicted cost on the first --cuda-arch "
      "target: grid, registers, blocks an SM, waves, bytes",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         llvm::raw_ostream &os, MLIRContext *context) -> LogicalResult {
        OwningOpRef<Operation *> parsed = parseForTool(sourceMgr, context);
        if (!parsed)
          return failure();
        return printCost(cast<ModuleOp>(parsed.get()), splitArchs(archList),
                         allowTf32, os);
      });
}
