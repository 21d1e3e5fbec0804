//===- KernelPackage.h - compiled nf functions, for the runtime alone -*- C++
//-*-===//
//
// Part of normfuse. A kernel package is a folder that holds what a runtime
// without MLIR needs to run nf functions on a GPU: for each entry point its
// printed CUDA (`<entry>.cu`), optional cubins or PTX for listed
// architectures, the constant tensors its kernels read (`<entry>.constants`,
// their bytes one after another, checked against the manifest's sizes and
// SHA-256 when loaded), and `manifest.json`: the entries, each argument's role,
// dtype and shape, and the launch plan (temporaries, then launches and
// copies in order, with grid, block and shared-memory sizes). Plain C++: no
// MLIR or LLVM. Reading checks everything a later launch relies on (every
// size, every index into the buffers and temporaries), so a corrupt or
// hand-edited manifest is an error, never an out-of-bounds launch.
//
// The manifest's format (version 1):
//
//   {"format": "normfuse-kernel-package", "version": 1, "entries": [
//     {"name": "ln", "source": "ln.cu",
//      "args": [{"role": "input", "dtype": "f32", "shape": [4, 13]}, ...],
//      "binaries": [{"arch": "sm_90", "file": "ln.sm_90.cubin"}, ...],
//      "constants": {"file": "ln.constants", "bytes": [52],
//                    "sha256": "<64 hex digits>"},       (only if any)
//      "plan": {"num_inputs": 1, "buffer_bytes": [208, 208],
//               "temporary_bytes": [64],
//               "steps": [
//                 {"launch": {"kernel": "ln_rows", "grid": [4, 1, 1],
//                             "block": [128, 1, 1], "shared_memory_bytes": 0,
//                             "args": [{"buffer": 0}, {"temporary": 0},
//                                      {"constant": 0}, {"integer": 13}]}},
//                 {"copy": {"from": {"buffer": 0}, "to": {"buffer": 1},
//                           "bytes": 208}}]}}]}
//
// A plan whose grids depend on the device (LaunchPlan.h's Residency) also
// holds, after "temporary_bytes":
//
//   "residencies": [{"kernel": "ln_rows", "block": 128,
//                    "shared_memory_bytes": 0, "planned": 1056}],
//   "integers": [["resident", 0], ["constant", 4], ["minu", 0, 1]],
//   "temporary_computed": [-1],                       (only if any)
//
// and the launches that use them "grid_computed": [2, -1, -1] and
// arguments {"integer": 4, "computed": 2}: the values as planned, and the
// plan integer a runtime computes them from when it loads the entry.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_KERNELPACKAGE_H
#define NORMFUSE_RUNTIME_KERNELPACKAGE_H

#include "normfuse/Runtime/LaunchPlan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace normfuse::runtime {

/// One argument of an entry point: a function input or output.
struct PackageArg {
  enum class Role { Input, Output };
  Role role = Role::Input;
  /// "f16", "bf16", "f32", "f64", "i1", "i8" ... "i64", "ui8" ... "ui64".
  std::string dtype;
  std::vector<int64_t> shape;
};

/// A cubin (sm_XY) or PTX (compute_XY) of an entry's source.
struct PackageBinary {
  std::string arch;
  /// A file of the package folder.
  std::string file;
};

struct PackageEntry {
  std::string name;
  /// The printed CUDA: a file of the package folder.
  std::string source;
  /// Inputs first, then outputs, in the function's order.
  std::vector<PackageArg> args;
  std::vector<PackageBinary> binaries;
  /// The constants' file of the package folder ("" when there are none),
  /// the bytes of each constant in it, in order, and its SHA-256.
  std::string constantsFile;
  std::vector<size_t> constantBytes;
  std::string constantsSha256;
  /// Its `constants` are filled by loadConstants.
  LaunchPlan plan;
};

struct KernelPackage {
  /// 2: launches may be cooperative and temporaries zeroed; 3: a
  /// residency may count whole clusters (`cluster_blocks`), which a
  /// runtime that ignored it would size in odd blocks; 4: a launch may
  /// say the registers a thread its kernel's setmaxnreg counts on
  /// (`launch_registers`), which a runtime that ignored it could launch
  /// into a hang (versions 1 to 3, which have none of these, are read as
  /// well).
  static constexpr int kVersion = 4;
  static constexpr int kOldestVersion = 1;
  std::vector<PackageEntry> entries;

  /// The entry called `name`, or null.
  const PackageEntry *find(const std::string &name) const;
};

/// The manifest text of `package`.
std::string writeManifest(const KernelPackage &package);

/// Parses and checks manifest text; none, with `error` naming the problem
/// (and where), when it is not a valid version-1 manifest.
std::optional<KernelPackage> readManifest(const std::string &text,
                                          std::string &error);

/// Fills `entry.plan.constants` from `bytes`, the contents of its
/// constants file; false, with `error` saying why, when their size or
/// SHA-256 is not what the manifest says.
bool loadConstants(PackageEntry &entry, const std::string &bytes,
                   std::string &error);

/// The bytes of an argument of `dtype` and `shape`; none for an unknown
/// dtype, a negative dimension or more than 2^63 bytes.
std::optional<uint64_t> argumentBytes(const std::string &dtype,
                                      const std::vector<int64_t> &shape);

} // namespace normfuse::runtime

#endif // NORMFUSE_RUNTIME_KERNELPACKAGE_H
