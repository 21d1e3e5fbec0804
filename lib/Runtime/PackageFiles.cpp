//===- PackageFiles.cpp - a package entry run on .npy files ---------------===//
//
// Part of normfuse. See PackageFiles.h.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/PackageFiles.h"
#include "normfuse/Runtime/HostMemory.h"
#include "normfuse/Runtime/NpyFile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

using namespace normfuse::runtime;

std::string normfuse::runtime::formatTensorType(const PackageArg &arg) {
  std::string s = "tensor<";
  for (int64_t d : arg.shape)
    s += std::to_string(d) + "x";
  return s + arg.dtype + ">";
}

static std::string formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The median of `values` (sorted in place).
static double median(std::vector<double> &values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::string normfuse::runtime::formatPlanTimings(const std::string &entry,
                                                 size_t bytes,
                                                 PlanTimings timings) {
  if (timings.runs.empty() || timings.copies.empty())
    return "  no runs timed\n";
  std::string report;
  unsigned runs = unsigned(timings.runs.size());
  double runMs = median(timings.runs), copyMs = median(timings.copies);
  double minMs = timings.runs.front();
  double gbps = bytes / (runMs * 1e-3) / 1e9;
  double copyGbps = bytes / (copyMs * 1e-3) / 1e9;
  report += "  CUDA events, median of " + std::to_string(runs) +
            " runs; copy: a device copy of the same bytes\n";
  report += "  median_ms       min_ms          bytes      GB/s   copy_ms  "
            "copy_GB/s  of_copy\n";
  char line[1024];
  std::snprintf(line, sizeof(line),
                "%11.4f %12.4f %14zu %9.2f %9.4f %10.2f %8.3f\n", runMs, minMs,
                bytes, gbps, copyMs, copyGbps, copyMs / runMs);
  report += line;
  std::snprintf(line, sizeof(line),
                "{\"entry\": \"%s\", \"target\": \"cuda\", \"runs\": %u, "
                "\"median_s\": %.9g, \"min_s\": %.9g, \"bytes\": %zu, "
                "\"gbps\": %.4f, \"copy_median_s\": %.9g, "
                "\"copy_gbps\": %.4f, \"fraction_of_copy\": %.4f}\n",
                entry.c_str(), runs, runMs * 1e-3, minMs * 1e-3, bytes, gbps,
                copyMs * 1e-3, copyGbps, copyMs / runMs);
  report += line;
  return report;
}

bool normfuse::runtime::runPackageOnFiles(PackageRunner &runner,
                                          const PackageFileRun &run,
                                          std::string &report,
                                          std::string &error) {
  const PackageEntry *entry = runner.package().find(run.entry);
  if (!entry) {
    std::string names;
    for (const PackageEntry &e : runner.package().entries)
      names += (names.empty() ? "" : ", ") + e.name;
    error = "the package has no entry '" + run.entry +
            "' (it has: " + (names.empty() ? "none" : names) + ")";
    return false;
  }
  const std::string at = "@" + run.entry;
  size_t numInputs = entry->plan.numInputs;
  size_t numOutputs = entry->args.size() - numInputs;
  if (run.inputs.size() != numInputs) {
    error = at + " takes " + std::to_string(numInputs) + " inputs, got " +
            std::to_string(run.inputs.size()) + " --input files";
    return false;
  }
  if (run.outputs.size() > numOutputs) {
    error = at + " has " + std::to_string(numOutputs) + " results, got " +
            std::to_string(run.outputs.size()) + " --output files";
    return false;
  }

  std::vector<NpyArray> in(numInputs);
  for (size_t i = 0; i < numInputs; ++i) {
    if (!readNpyFile(run.inputs[i], in[i], error))
      return false;
    const PackageArg &want = entry->args[i];
    if (run.bf16FromF32 && want.dtype == "bf16" && in[i].dtype == "f32")
      in[i] = convertF32ToBF16(in[i]);
    if (in[i].dtype != want.dtype) {
      error = run.inputs[i] + ": holds " + in[i].dtype + " data; argument #" +
              std::to_string(i) + " of " + at + " is " +
              formatTensorType(want) +
              (want.dtype == "bf16" && in[i].dtype == "f32"
                   ? " (--bf16-from-f32 converts f32 files)"
                   : "");
      return false;
    }
    if (in[i].shape != want.shape) {
      error = run.inputs[i] + ": has shape " + formatShape(in[i].shape) +
              "; argument #" + std::to_string(i) + " of " + at + " is " +
              formatTensorType(want);
      return false;
    }
  }

  // The sizes come from the manifest: checked against the machine's memory
  // before anything is allocated (the simulator's temporaries live in host
  // memory too).
  uint64_t hostBytes = 0;
  for (size_t o = numInputs; o < entry->args.size(); ++o)
    hostBytes += entry->plan.bufferBytes[o];
  if (runner.target() == PackageTarget::CUDASim)
    for (size_t bytes : entry->plan.temporaryBytes)
      hostBytes += bytes;
  uint64_t memory = physicalMemoryBytes();
  if (hostBytes > memory) {
    error = "the results of " + at + " take " + std::to_string(hostBytes) +
            " bytes, more than this machine's " + std::to_string(memory) +
            " bytes of memory";
    return false;
  }
  std::vector<NpyArray> out(numOutputs);
  std::vector<const void *> inPointers;
  std::vector<void *> outPointers;
  size_t bytes = 0;
  for (NpyArray &a : in) {
    inPointers.push_back(a.data.data());
    bytes += a.data.size();
  }
  for (size_t o = 0; o < numOutputs; ++o) {
    const PackageArg &arg = entry->args[numInputs + o];
    out[o].dtype = arg.dtype;
    out[o].shape = arg.shape;
    out[o].data.assign(entry->plan.bufferBytes[numInputs + o], 0);
    outPointers.push_back(out[o].data.data());
    bytes += out[o].data.size();
  }

  if (!runner.run(run.entry, inPointers, outPointers, error))
    return false;

  if (run.bench > 0) {
    constexpr unsigned kWarmup = 3;
    report += at + " on " + runner.description() + " (" +
              runner.loadedFrom(run.entry) + ")\n";
    if (runner.target() == PackageTarget::CUDA) {
      PlanTimings timings;
      if (!runner.time(run.entry, inPointers, kWarmup, run.bench, timings,
                       error))
        return false;
      report += formatPlanTimings(run.entry, bytes, timings);
    } else {
      for (unsigned i = 0; i < kWarmup; ++i)
        if (!runner.run(run.entry, inPointers, outPointers, error))
          return false;
      std::vector<double> seconds;
      for (unsigned i = 0; i < run.bench; ++i) {
        auto start = std::chrono::steady_clock::now();
        if (!runner.run(run.entry, inPointers, outPointers, error))
          return false;
        seconds.push_back(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
      }
      double med = median(seconds);
      char line[1024];
      report += "  wall clock of whole simulated runs, median of " +
                std::to_string(run.bench) + " (not a GPU's speed)\n";
      std::snprintf(line, sizeof(line),
                    "{\"entry\": \"%s\", \"target\": \"cuda-sim\", \"runs\": "
                    "%u, \"median_s\": %.9g, \"min_s\": %.9g, \"bytes\": "
                    "%zu}\n",
                    run.entry.c_str(), run.bench, med, seconds.front(), bytes);
      report += line;
    }
  }

  std::vector<const NpyArray *> written;
  for (size_t o = 0; o < run.outputs.size(); ++o)
    written.push_back(&out[o]);
  return writeNpyFiles(run.outputs, written, error);
}
