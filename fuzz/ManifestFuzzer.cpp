//===- ManifestFuzzer.cpp - fuzz the kernel package manifest reader -------===//
//
// Part of normfuse. Any text goes through readManifest: it returns a
// package or an error, never crashes; a package it accepts writes a
// manifest that reads back to the same text, and its plans resolve for a
// device of one resident block and of the planned count, or refuse to,
// without crashing.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/KernelPackage.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size), error;
  auto package = normfuse::runtime::readManifest(text, error);
  if (!package)
    return 0;
  std::string written = normfuse::runtime::writeManifest(*package);
  auto again = normfuse::runtime::readManifest(written, error);
  if (!again || normfuse::runtime::writeManifest(*again) != written)
    std::abort(); // what we write, we must read back the same
  for (const normfuse::runtime::PackageEntry &entry : package->entries)
    for (bool one : {true, false}) {
      normfuse::runtime::LaunchPlan plan = entry.plan;
      normfuse::runtime::resolveResidencies(
          plan,
          [&](const normfuse::runtime::Residency &r) {
            return one ? int64_t(1) : r.planned;
          },
          error);
    }
  return 0;
}
