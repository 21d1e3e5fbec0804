//===- PackageFiles.h - a package entry run on .npy files -------*- C++ -*-===//
//
// Part of normfuse. What nf-package-run and `nf-run PACKAGE` do: read .npy
// inputs, check them against a package entry's arguments, run the entry,
// optionally time it, and write .npy outputs all or nothing. Plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_PACKAGEFILES_H
#define NORMFUSE_RUNTIME_PACKAGEFILES_H

#include "normfuse/Runtime/PackageRunner.h"

#include <string>
#include <vector>

namespace normfuse::runtime {

struct PackageFileRun {
  std::string entry;
  /// One .npy file per input argument, in order.
  std::vector<std::string> inputs;
  /// Where to write the first outputs.size() results; the others are
  /// computed and discarded.
  std::vector<std::string> outputs;
  /// Runs to time after 3 warm-up runs (0: none): CUDA events around the
  /// launches on the cuda target, next to a device copy of the same bytes;
  /// the wall clock of whole runs in the simulator.
  unsigned bench = 0;
  /// Converts f32 input files to bf16 where the entry takes bf16.
  bool bf16FromF32 = false;
};

/// The run above; the bench table and JSON line are appended to `report`.
/// False with `error` (one line) on any problem, with no file written.
bool runPackageOnFiles(PackageRunner &runner, const PackageFileRun &run,
                       std::string &report, std::string &error);

/// The table and JSON line of CUDA-event timings of `entry`, whose buffers
/// hold `bytes`: median and minimum, GB/s, and the copy of the same bytes.
std::string formatPlanTimings(const std::string &entry, size_t bytes,
                              PlanTimings timings);

/// "tensor<4x13xf32>".
std::string formatTensorType(const PackageArg &arg);

} // namespace normfuse::runtime

#endif // NORMFUSE_RUNTIME_PACKAGEFILES_H
