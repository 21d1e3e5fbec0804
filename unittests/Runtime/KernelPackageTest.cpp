//===- KernelPackageTest.cpp - the kernel package manifest
//-----------------===//
//
// Part of normfuse. A manifest written and read back is the same package;
// every corruption of one is an error that names what is wrong and where.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/KernelPackage.h"
#include "normfuse/Runtime/Sha256.h"

#include <gtest/gtest.h>

using namespace normfuse::runtime;

namespace {

/// @ln: one f32 (4, 13) input, one (4, 13) output, a 64-byte temporary,
/// a launch and a copy.
KernelPackage layerNormPackage() {
  PackageEntry e;
  e.name = "ln";
  e.source = "ln.cu";
  e.args = {{PackageArg::Role::Input, "f32", {4, 13}},
            {PackageArg::Role::Output, "f32", {4, 13}}};
  e.binaries = {{"sm_90", "ln.sm_90.cubin"},
                {"compute_90", "ln.compute_90.ptx"}};
  e.plan.numInputs = 1;
  e.plan.bufferBytes = {208, 208};
  e.plan.temporaryBytes = {64};
  Step launch;
  launch.launch.kernel = "ln_rows";
  launch.launch.grid[0] = 4;
  launch.launch.block[0] = 128;
  launch.launch.sharedMemoryBytes = 512;
  LaunchArg buffer0, temp0, cols;
  buffer0.kind = LaunchArg::Kind::Buffer;
  temp0.kind = LaunchArg::Kind::Temporary;
  cols.value = -13;
  launch.launch.args = {buffer0, temp0, cols};
  Step copy;
  copy.kind = Step::Kind::Copy;
  copy.copy.from = buffer0;
  copy.copy.to.kind = LaunchArg::Kind::Buffer;
  copy.copy.to.index = 1;
  copy.copy.bytes = 208;
  e.plan.steps = {launch, copy};
  KernelPackage p;
  p.entries.push_back(e);
  return p;
}

TEST(KernelPackageTest, AManifestReadsBackAsTheSamePackage) {
  std::string text = writeManifest(layerNormPackage());
  std::string error;
  auto read = readManifest(text, error);
  ASSERT_TRUE(read) << error << "\n" << text;
  EXPECT_EQ(writeManifest(*read), text);
  const PackageEntry *e = read->find("ln");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(read->find("missing"), nullptr);
  EXPECT_EQ(e->source, "ln.cu");
  ASSERT_EQ(e->args.size(), 2u);
  EXPECT_EQ(e->args[1].role, PackageArg::Role::Output);
  EXPECT_EQ(e->args[1].shape, (std::vector<int64_t>{4, 13}));
  EXPECT_EQ(e->binaries[1].arch, "compute_90");
  EXPECT_EQ(e->plan.temporaryBytes, std::vector<size_t>{64});
  ASSERT_EQ(e->plan.steps.size(), 2u);
  const Launch &l = e->plan.steps[0].launch;
  EXPECT_EQ(l.kernel, "ln_rows");
  EXPECT_EQ(l.grid[0], 4u);
  EXPECT_EQ(l.block[0], 128u);
  EXPECT_EQ(l.block[1], 1u);
  EXPECT_EQ(l.sharedMemoryBytes, 512u);
  EXPECT_EQ(l.args[1].kind, LaunchArg::Kind::Temporary);
  EXPECT_EQ(l.args[2].value, -13);
  EXPECT_EQ(e->plan.steps[1].kind, Step::Kind::Copy);
  EXPECT_EQ(e->plan.steps[1].copy.bytes, 208u);
}

/// The text of `package`'s manifest with `from` replaced by `to`.
std::string corrupted(const std::string &from, const std::string &to,
                      const KernelPackage &package = layerNormPackage()) {
  std::string text = writeManifest(package);
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

std::string readError(const std::string &text) {
  std::string error;
  auto package = readManifest(text, error);
  EXPECT_FALSE(package) << text;
  return error;
}

TEST(KernelPackageTest, ControlCharactersInStringsReadBackTheSame) {
  // A tab read from "\t" used to be written raw, which the reader refuses
  // (found by nf-fuzz-manifest: fuzz/regressions/manifest).
  KernelPackage p = layerNormPackage();
  std::string name = "ln\t\n\x01\x1f\"\\rows";
  p.entries[0].plan.steps[0].launch.kernel = name;
  std::string text = writeManifest(p);
  EXPECT_NE(text.find("\"ln\\t\\n\\u0001\\u001f\\\"\\\\rows\""),
            std::string::npos)
      << text;
  std::string error;
  auto read = readManifest(text, error);
  ASSERT_TRUE(read) << error << "\n" << text;
  EXPECT_EQ(read->entries[0].plan.steps[0].launch.kernel, name);
  EXPECT_EQ(writeManifest(*read), text);
  // \u escapes beyond ASCII, or short ones, are errors.
  EXPECT_NE(readError(corrupted("\"ln_rows\"", "\"ln\\u00e9\""))
                .find("a \\u escape beyond ASCII"),
            std::string::npos);
  EXPECT_NE(readError(corrupted("\"ln_rows\"", "\"ln\\u0g\""))
                .find("a \\u escape without four hex digits"),
            std::string::npos);
}

TEST(KernelPackageTest, EveryCorruptionIsAnErrorThatSaysWhereAndWhat) {
  std::string text = writeManifest(layerNormPackage());
  EXPECT_EQ(readError(text.substr(0, text.size() / 2))
                .rfind("manifest.json, byte ", 0),
            0u);
  EXPECT_EQ(readError(""), "manifest.json, byte 0: the text ends where a "
                           "value should be");
  EXPECT_EQ(readError(corrupted("\"version\": 4", "\"version\": 5")),
            "manifest.json: (top).version is 5, not from 1 to 4");
  EXPECT_EQ(readError(corrupted("normfuse-kernel-package", "zip")),
            "manifest.json: (top).format is not \"normfuse-kernel-package\"");
  EXPECT_EQ(readError(corrupted("{\"temporary\": 0}", "{\"temporary\": 1}")),
            "manifest.json: entries[0].plan.steps[0].launch.args[1].temporary "
            "is 1, not from 0 to 0");
  EXPECT_EQ(readError(corrupted("{\"buffer\": 1}", "{\"buffer\": 7}")),
            "manifest.json: entries[0].plan.steps[1].copy.to.buffer is 7, not "
            "from 0 to 1");
  EXPECT_EQ(readError(corrupted("\"bytes\": 208", "\"bytes\": 209")),
            "manifest.json: entries[0].plan.steps[1].copy copies more bytes "
            "than its buffers hold");
  EXPECT_EQ(readError(corrupted("\"grid\": [4, 1, 1]", "\"grid\": [0, 1, 1]")),
            "manifest.json: entries[0].plan.steps[0].launch.grid holds a size "
            "of 0 that is not computed");
  EXPECT_EQ(readError(corrupted("\"grid\": [4, 1, 1]", "\"grid\": [-1, 1, 1]")),
            "manifest.json: entries[0].plan.steps[0].launch.grid holds a size "
            "that is not from 0 to 4294967295");
  EXPECT_EQ(readError(corrupted("\"shape\": [4, 13]", "\"shape\": [-4, 13]")),
            "manifest.json: entries[0].args[0] has an unknown dtype, a "
            "negative dimension or more than 2^63 bytes");
  EXPECT_EQ(readError(corrupted("\"dtype\": \"f32\"", "\"dtype\": \"i4\"")),
            "manifest.json: entries[0].args[0] has an unknown dtype, a "
            "negative dimension or more than 2^63 bytes");
  EXPECT_EQ(readError(corrupted("\"shape\": [4, 13]",
                                "\"shape\": [4611686018427387904, 13]")),
            "manifest.json: entries[0].args[0] has an unknown dtype, a "
            "negative dimension or more than 2^63 bytes");
  EXPECT_EQ(readError(corrupted("\"buffer_bytes\": [208, 208]",
                                "\"buffer_bytes\": [208, 416]")),
            "manifest.json: entries[0].plan.buffer_bytes[1] is not the size "
            "of argument 1");
  EXPECT_EQ(readError(corrupted("\"role\": \"input\"", "\"role\": \"output\"")),
            "manifest.json: entries[0].plan does not have one buffer per "
            "argument");
  EXPECT_EQ(readError(corrupted("\"source\": \"ln.cu\"", "\"source\": 3")),
            "manifest.json: entries[0].source is not a string");
  EXPECT_EQ(readError(corrupted("\"num_inputs\": 1", "\"num_inputs\": 1.5")),
            "manifest.json, byte " +
                std::to_string(text.find("\"num_inputs\": 1") + 15) +
                ": a number that is not an integer");
  EXPECT_EQ(readError(corrupted("\"num_inputs\": 1", "\"num_inputs\": "
                                                     "99999999999999999999")),
            "manifest.json, byte " +
                std::to_string(text.find("\"num_inputs\": 1") + 33) +
                ": an integer beyond 64 bits");
  EXPECT_EQ(readError(corrupted("\"name\": \"ln\"",
                                "\"name\": \"ln\", \"name\": \"x\"")),
            "manifest.json, byte " +
                std::to_string(text.find("\"name\": \"ln\"") + 25) +
                ": the key \"name\" appears twice");
  EXPECT_EQ(readError(std::string(100, '[') + std::string(100, ']')),
            "manifest.json, byte 65: nesting deeper than 64");
}

TEST(KernelPackageTest, ArgumentBytesCountEveryDTypeAndRefuseOverflow) {
  EXPECT_EQ(argumentBytes("bf16", {3, 5}), 30u);
  EXPECT_EQ(argumentBytes("f64", {}), 8u);
  EXPECT_EQ(argumentBytes("f16", {0, 7}), 0u);
  EXPECT_EQ(argumentBytes("f32", {int64_t(1) << 61}), std::nullopt);
  EXPECT_EQ(argumentBytes("f32", {-1}), std::nullopt);
  EXPECT_EQ(argumentBytes("u8", {1}), std::nullopt);
}

} // namespace

namespace {
/// The layer-norm package with two constants (8 and 4 bytes), the first
/// read by its launch, the second copied into the output.
KernelPackage packageWithConstants(std::string &file) {
  KernelPackage p = layerNormPackage();
  PackageEntry &e = p.entries[0];
  file = std::string("01234567") + "abcd";
  e.constantsFile = "ln.constants";
  e.constantBytes = {8, 4};
  e.constantsSha256 = sha256Hex(file);
  LaunchArg c0, c1;
  c0.kind = c1.kind = LaunchArg::Kind::Constant;
  c1.index = 1;
  e.plan.steps[0].launch.args.push_back(c0);
  e.plan.steps[1].copy.from = c1;
  e.plan.steps[1].copy.bytes = 4;
  return p;
}
} // namespace

TEST(KernelPackageTest, ConstantsReadBackAndLoadOnlyFromTheirOwnBytes) {
  std::string file;
  std::string text = writeManifest(packageWithConstants(file));
  std::string error;
  auto read = readManifest(text, error);
  ASSERT_TRUE(read) << error << "\n" << text;
  EXPECT_EQ(writeManifest(*read), text);
  PackageEntry entry = read->entries[0];
  EXPECT_EQ(entry.constantBytes, (std::vector<size_t>{8, 4}));
  EXPECT_EQ(entry.plan.steps[0].launch.args.back().kind,
            LaunchArg::Kind::Constant);
  // The file splits into the constants; any other bytes are refused.
  ASSERT_TRUE(loadConstants(entry, file, error)) << error;
  ASSERT_EQ(entry.plan.constants.size(), 2u);
  EXPECT_EQ(std::string(entry.plan.constants[1]->begin(),
                        entry.plan.constants[1]->end()),
            "abcd");
  EXPECT_FALSE(loadConstants(entry, file + "x", error));
  EXPECT_EQ(error, "ln.constants holds 13 bytes; the manifest's constants "
                   "of @ln take 12");
  std::string edited = file;
  edited[3] = 'X';
  EXPECT_FALSE(loadConstants(entry, edited, error));
  EXPECT_EQ(error, "ln.constants is not the file the manifest names (its "
                   "SHA-256 differs): the package is corrupt or was edited");

  auto corrupt = [&](const std::string &from, const std::string &to) {
    std::string t = text;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return readError(t.replace(at, from.size(), to));
  };
  EXPECT_EQ(corrupt("{\"constant\": 0}", "{\"constant\": 2}"),
            "manifest.json: entries[0].plan.steps[0].launch.args[3].constant "
            "is 2, not from 0 to 1");
  EXPECT_EQ(corrupt("\"to\": {\"buffer\": 1}", "\"to\": {\"constant\": 0}"),
            "manifest.json: entries[0].plan.steps[1].copy copies into a "
            "constant");
  EXPECT_EQ(corrupt("\"bytes\": [8, 4]", "\"bytes\": [8, 3]"),
            "manifest.json: entries[0].plan.steps[1].copy copies more bytes "
            "than its buffers hold");
  EXPECT_EQ(corrupt("\"file\": \"ln.constants\"", "\"file\": \"../x\""),
            "manifest.json: entries[0].constants.file is not a file name of "
            "the package folder");
  EXPECT_EQ(corrupt("\"sha256\": \"", "\"sha256\": \"Z"),
            "manifest.json: entries[0].constants.sha256 is not 64 lowercase "
            "hex digits");
  EXPECT_EQ(corrupt("\"bytes\": [8, 4]", "\"bytes\": [8, -4]"),
            "manifest.json: entries[0].constants.bytes holds something that "
            "is not a size, or sizes beyond 2^63 bytes");
}

namespace {

/// layerNormPackage with its launch's grid, its third argument and its
/// temporary's bytes computed from one residency: grid min(r, 4), the
/// argument the same, the temporary 16 bytes a block.
KernelPackage residentPackage() {
  KernelPackage p = layerNormPackage();
  LaunchPlan &plan = p.entries[0].plan;
  plan.residencies = {{"ln_rows", 128, 512, 264}};
  using Op = PlanInteger::Op;
  plan.integers = {{Op::Resident, {0, 0, 0}},
                   {Op::Constant, {4, 0, 0}},
                   {Op::MinU, {0, 1, 0}},
                   {Op::Constant, {16, 0, 0}},
                   {Op::Mul, {2, 3, 0}}};
  plan.temporaryComputed = {4};
  Launch &l = plan.steps[0].launch;
  l.gridComputed[0] = 2;
  l.args[2].value = 4;
  l.args[2].computed = 2;
  return p;
}

TEST(KernelPackageTest, ComputedGridsReadBackAndResolveForTheDevice) {
  std::string text = writeManifest(residentPackage());
  EXPECT_NE(text.find("\"residencies\": [{\"kernel\": \"ln_rows\", \"block\": "
                      "128, \"shared_memory_bytes\": 512, \"planned\": 264}]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"integers\": [[\"resident\", 0], [\"constant\", 4], "
                      "[\"minu\", 0, 1], [\"constant\", 16], [\"mul\", 2, 3]]"),
            std::string::npos)
      << text;
  std::string error;
  auto read = readManifest(text, error);
  ASSERT_TRUE(read) << error << "\n" << text;
  EXPECT_EQ(writeManifest(*read), text);

  LaunchPlan plan = read->entries[0].plan;
  const Residency *asked = nullptr;
  ASSERT_TRUE(resolveResidencies(
      plan,
      [&](const Residency &r) {
        asked = &r;
        return int64_t(3);
      },
      error))
      << error;
  ASSERT_NE(asked, nullptr);
  EXPECT_EQ(asked->kernel, "ln_rows");
  EXPECT_EQ(asked->block, 128u);
  EXPECT_EQ(asked->sharedMemoryBytes, 512u);
  EXPECT_EQ(plan.steps[0].launch.grid[0], 3u);
  EXPECT_EQ(plan.steps[0].launch.args[2].value, 3);
  EXPECT_EQ(plan.temporaryBytes[0], 48u);
  // A device count is taken from 1 to the planned count: 0 blocks is 1,
  // more than planned is planned (then min(264, 4) = 4).
  for (auto [count, grid] :
       {std::pair<int64_t, unsigned>{0, 1}, {-5, 1}, {100000, 4}}) {
    int64_t given = count;
    ASSERT_TRUE(resolveResidencies(
        plan, [&](const Residency &) { return given; }, error));
    EXPECT_EQ(plan.steps[0].launch.grid[0], grid) << given;
    EXPECT_EQ(plan.temporaryBytes[0], 16u * grid) << given;
  }
}

TEST(KernelPackageTest, ComputedValuesThatPointNowhereAreErrors) {
  auto replaced = [](const std::string &from, const std::string &to) {
    return corrupted(from, to, residentPackage());
  };
  EXPECT_EQ(readError(replaced("[\"minu\", 0, 1]", "[\"minu\", 0, 3]")),
            "manifest.json: entries[0].plan integer 2 reads an integer that "
            "is not before it");
  EXPECT_EQ(readError(replaced("[\"resident\", 0]", "[\"resident\", 1]")),
            "manifest.json: entries[0].plan integer 0 reads a residency the "
            "plan does not have");
  EXPECT_EQ(readError(replaced("[\"minu\", 0, 1]", "[\"pow\", 0, 1]")),
            "manifest.json: entries[0].plan.integers[2] is not "
            "[\"operation\", operands...]");
  EXPECT_EQ(readError(replaced("[\"minu\", 0, 1]", "[\"minu\", 0]")),
            "manifest.json: entries[0].plan.integers[2] does not have 2 "
            "operands");
  EXPECT_EQ(readError(replaced("\"computed\": 2", "\"computed\": 5")),
            "manifest.json: entries[0].plan.steps[0].launch.args[2].computed "
            "is 5, not from 0 to 4");
  EXPECT_EQ(readError(replaced("\"grid_computed\": [2, -1, -1]",
                               "\"grid_computed\": [2, -1]")),
            "manifest.json: entries[0].plan.steps[0].launch.grid_computed "
            "does not hold 3");
  EXPECT_EQ(readError(replaced("\"planned\": 264", "\"planned\": 0")),
            "manifest.json: entries[0].plan.residencies[0].planned is 0, not "
            "from 1 to 9223372036854775807");
  // What only resolving finds is an error then, saying what.
  using Op = PlanInteger::Op;
  struct Case {
    Op op;
    int64_t a, b;
    std::string message;
  };
  for (const Case &c :
       {Case{Op::DivU, 0, 1, "integer 2 divides by zero"},
        Case{Op::Sub, 1, 0, "launch of ln_rows has a grid size of -2"}}) {
    LaunchPlan plan = residentPackage().entries[0].plan;
    plan.integers = {{Op::Resident, {0, 0, 0}},
                     {Op::Constant, {0, 0, 0}},
                     {c.op, {c.a, c.b, 0}}};
    plan.temporaryComputed = {-1};
    std::string error;
    EXPECT_FALSE(resolveResidencies(
        plan, [](const Residency &) { return int64_t(2); }, error));
    EXPECT_EQ(error, c.message);
  }
}

// A kernel in clusters of two: its residency says so in the manifest, and
// resolves to whole clusters (at least one) whatever count a device gives,
// so its grid min(r, 4) is 2 or 4 blocks, never 1 or 3.
TEST(KernelPackageTest, AClusterKernelsResidencyResolvesToWholeClusters) {
  KernelPackage p = residentPackage();
  p.entries[0].plan.residencies[0].clusterBlocks = 2;
  std::string text = writeManifest(p);
  EXPECT_NE(text.find("\"planned\": 264, \"cluster_blocks\": 2}"),
            std::string::npos)
      << text;
  std::string error;
  auto read = readManifest(text, error);
  ASSERT_TRUE(read) << error;
  EXPECT_EQ(writeManifest(*read), text);
  LaunchPlan plan = read->entries[0].plan;
  ASSERT_EQ(plan.residencies[0].clusterBlocks, 2);
  for (auto [count, grid] : {std::pair<int64_t, unsigned>{1, 2},
                             {2, 2},
                             {3, 2},
                             {5, 4},
                             {100000, 4}}) {
    int64_t given = count;
    ASSERT_TRUE(resolveResidencies(
        plan, [&](const Residency &) { return given; }, error))
        << error;
    EXPECT_EQ(plan.steps[0].launch.grid[0], grid) << given;
  }
  EXPECT_EQ(
      readError(corrupted("\"cluster_blocks\": 2", "\"cluster_blocks\": 0", p)),
      "manifest.json: entries[0].plan.residencies[0].cluster_blocks is 0, "
      "not from 1 to 16");
}

// A one-kernel schedule and its fallback (the channels-last group norm's):
// the first launch cooperative, with a zeroed counter, its grid 4 blocks
// where the device holds them and 0 otherwise; the fallback's grid the
// other way round. Both read back as written, and resolve to exactly one
// of the two.
TEST(KernelPackageTest, OneKernelOrItsFallbackResolvesByWhatTheDeviceHolds) {
  KernelPackage p = layerNormPackage();
  LaunchPlan &plan = p.entries[0].plan;
  plan.temporaryBytes = {64, 4};
  plan.zeroedTemporaries = {1};
  plan.residencies = {{"ln_one", 128, 0, 264}};
  using Op = PlanInteger::Op;
  plan.integers = {{Op::Resident, {0, 0, 0}}, {Op::Constant, {4, 0, 0}},
                   {Op::Ule, {1, 0, 0}},      {Op::Constant, {0, 0, 0}},
                   {Op::Select, {2, 1, 3}},   {Op::Select, {2, 3, 1}}};
  Step one = plan.steps[0];
  one.launch.kernel = "ln_one";
  one.launch.cooperative = true;
  one.launch.gridComputed[0] = 4;
  LaunchArg counter;
  counter.kind = LaunchArg::Kind::Temporary;
  counter.index = 1;
  one.launch.args.push_back(counter);
  plan.steps[0].launch.gridComputed[0] = 5;
  plan.steps[0].launch.grid[0] = 0;
  plan.steps.insert(plan.steps.begin(), one);

  std::string text = writeManifest(p);
  EXPECT_NE(text.find("\"temporary_bytes\": [64, 4], \"zeroed_temporaries\": "
                      "[1]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"cooperative\": true"), std::string::npos) << text;
  EXPECT_NE(text.find("\"grid\": [0, 1, 1], \"grid_computed\": [5, -1, -1]"),
            std::string::npos)
      << text;
  std::string error;
  auto read = readManifest(text, error);
  ASSERT_TRUE(read) << error << "\n" << text;
  EXPECT_EQ(writeManifest(*read), text);
  const LaunchPlan &readPlan = read->entries[0].plan;
  EXPECT_TRUE(readPlan.steps[0].launch.cooperative);
  EXPECT_FALSE(readPlan.steps[1].launch.cooperative);
  EXPECT_EQ(readPlan.zeroedTemporaries, std::vector<int64_t>{1});

  for (auto [resident, oneGrid, fallbackGrid] :
       {std::tuple<int64_t, unsigned, unsigned>{264, 4, 4}, {3, 0, 4}}) {
    LaunchPlan resolved = readPlan;
    int64_t held = resident;
    ASSERT_TRUE(resolveResidencies(
        resolved, [&](const Residency &) { return held; }, error))
        << error;
    EXPECT_EQ(resolved.steps[0].launch.grid[0], oneGrid) << resident;
    EXPECT_EQ(resolved.steps[1].launch.grid[0], oneGrid ? 0u : fallbackGrid)
        << resident;
    EXPECT_EQ(resolved.steps[0].launch.emptyGrid(), oneGrid == 0);
    EXPECT_EQ(resolved.residencies[0].resolved, resident);
  }
  EXPECT_EQ(readError(corrupted("\"zeroed_temporaries\": [1]",
                                "\"zeroed_temporaries\": [2]", p)),
            "manifest.json: entries[0].plan.zeroed_temporaries holds something "
            "that is not a temporary of the plan");
  EXPECT_EQ(readError(corrupted("\"zeroed_temporaries\": [1]",
                                "\"zeroed_temporaries\": [1, 1]", p)),
            "manifest.json: entries[0].plan zeroes a temporary it does not "
            "have, or one twice");
  EXPECT_EQ(
      readError(corrupted("\"cooperative\": true", "\"cooperative\": 1", p)),
      "manifest.json: entries[0].plan.steps[0].launch.cooperative is "
      "not a boolean");
}

// A kernel whose warpgroups hand registers to each other (setmaxnreg)
// carries the registers a thread they are counted from: written only
// where set, read back the same, refused where ptxas could not give it
// (over 255) or setmaxnreg could not count it (not a multiple of 8). A
// runtime refuses to launch the kernel compiled to fewer (it would hang):
// the check says which kernel, what it has and what it needs.
TEST(KernelPackageTest, ALaunchSaysTheRegistersItsKernelsSetmaxnregCountsOn) {
  KernelPackage p = layerNormPackage();
  EXPECT_EQ(writeManifest(p).find("launch_registers"), std::string::npos);
  Launch &launch = p.entries[0].plan.steps[0].launch;
  launch.launchRegisters = 168;
  std::string text = writeManifest(p);
  EXPECT_NE(text.find("\"shared_memory_bytes\": 512, \"launch_registers\": "
                      "168, \"args\""),
            std::string::npos)
      << text;
  std::string error;
  auto read = readManifest(text, error);
  ASSERT_TRUE(read) << error << "\n" << text;
  EXPECT_EQ(writeManifest(*read), text);
  const Launch &back = read->entries[0].plan.steps[0].launch;
  EXPECT_EQ(back.launchRegisters, 168);
  EXPECT_NE(read->entries[0].plan.str().find(" registers 168 args ("),
            std::string::npos)
      << read->entries[0].plan.str();
  // A manifest of version 3 (none of them) is still read.
  std::string old = corrupted("\"version\": 4", "\"version\": 3");
  ASSERT_TRUE(readManifest(old, error)) << error;

  EXPECT_TRUE(checkCompiledRegisters(back, 168, error)) << error;
  EXPECT_TRUE(checkCompiledRegisters(back, 255, error)) << error;
  EXPECT_FALSE(checkCompiledRegisters(back, 160, error));
  EXPECT_EQ(error, "kernel ln_rows was compiled to 160 registers a thread, "
                   "but its warpgroups hand registers to each other "
                   "(setmaxnreg) counting on 168: launched, it would wait "
                   "forever, so it is not launched");
  Launch plain;
  EXPECT_TRUE(checkCompiledRegisters(plain, 24, error));

  EXPECT_EQ(readError(corrupted("\"launch_registers\": 168",
                                "\"launch_registers\": 170", p)),
            "manifest.json: entries[0].plan.steps[0].launch.launch_registers "
            "is not a multiple of 8");
  EXPECT_EQ(readError(corrupted("\"launch_registers\": 168",
                                "\"launch_registers\": 256", p)),
            "manifest.json: entries[0].plan.steps[0].launch.launch_registers "
            "is 256, not from 8 to 255");
  EXPECT_EQ(readError(corrupted("\"launch_registers\": 168",
                                "\"launch_registers\": true", p)),
            "manifest.json: entries[0].plan.steps[0].launch.launch_registers "
            "is not an integer");
}

/// @ln's package with a tensor map of its input (4 rows of 13 f32, rows
/// padded to 16 elements: 4 x 64 bytes would overrun 208, so the map reads
/// 3 rows of 16) as a third argument of its launch.
KernelPackage tensorMapPackage() {
  KernelPackage p = layerNormPackage();
  LaunchArg map;
  map.kind = LaunchArg::Kind::TensorMap;
  map.mapOf = LaunchArg::Kind::Buffer;
  map.index = 0;
  map.map.element = TensorMapSpec::Element::F32;
  map.map.rank = 2;
  map.map.dims[0] = 12;
  map.map.dims[1] = 3;
  map.map.strides[0] = 64;
  map.map.box[0] = 8;
  map.map.box[1] = 2;
  map.map.swizzle = 32;
  p.entries[0].plan.steps[0].launch.args.push_back(map);
  return p;
}

TEST(KernelPackageTest, ATensorMapArgumentReadsBackTheSame) {
  std::string text = writeManifest(tensorMapPackage());
  EXPECT_NE(text.find("{\"tensor_map\": {\"of\": {\"buffer\": 0}, "
                      "\"element\": \"f32\", \"dims\": [12, 3], "
                      "\"strides\": [64], \"box\": [8, 2], \"swizzle\": 32}}"),
            std::string::npos)
      << text;
  std::string error;
  auto read = readManifest(text, error);
  ASSERT_TRUE(read) << error << "\n" << text;
  EXPECT_EQ(writeManifest(*read), text);
  const LaunchArg &map = read->entries[0].plan.steps[0].launch.args[3];
  EXPECT_EQ(map.kind, LaunchArg::Kind::TensorMap);
  EXPECT_EQ(describe(map), "the tensor map of buffer 0");
  EXPECT_EQ(map.map.strides[0], 64u);
  EXPECT_EQ(map.map.box[1], 2u);
}

TEST(KernelPackageTest, ATensorMapThatCuTensorMapEncodeTiledRefusesIsAnError) {
  const KernelPackage p = tensorMapPackage();
  const std::string map =
      "manifest.json: entries[0].plan.steps[0].launch.args[3].tensor_map";
  const std::string at = map + " ";
  EXPECT_EQ(
      readError(corrupted("\"element\": \"f32\"", "\"element\": \"f64\"", p)),
      map + ".element is not \"f16\", \"bf16\" or \"f32\"");
  EXPECT_EQ(readError(corrupted("\"box\": [8, 2]", "\"box\": [6, 2]", p)),
            at + "is a tensor map whose box rows are 24 bytes (a multiple of "
                 "16, at most the swizzle's width)");
  EXPECT_EQ(readError(corrupted("\"box\": [8, 2]", "\"box\": [16, 2]", p)),
            at + "is a tensor map whose box rows are 64 bytes (a multiple of "
                 "16, at most the swizzle's width)");
  EXPECT_EQ(readError(corrupted("\"strides\": [64]", "\"strides\": [56]", p)),
            at + "is a tensor map with a stride of 56 bytes (a multiple of "
                 "16 below 2^40)");
  EXPECT_EQ(readError(corrupted("\"dims\": [12, 3]", "\"dims\": [12, 4]", p)),
            at + "is a tensor map reaching byte 240 of a buffer of 208");
  // Sizes whose product wraps past 2^64 reach past every buffer.
  EXPECT_EQ(readError(corrupted("\"dims\": [12, 3], \"strides\": [64]",
                                "\"dims\": [12, 4294967296], \"strides\": "
                                "[1099511627760]",
                                p)),
            at + "is a tensor map reaching past byte 2^64 of a buffer of 208");
  EXPECT_EQ(readError(corrupted("\"strides\": [64]", "\"strides\": []", p)),
            at + "does not hold 1 to 5 dims, as many box sizes and one stride "
                 "fewer");
  EXPECT_EQ(readError(corrupted("\"of\": {\"buffer\": 0}",
                                "\"of\": {\"integer\": 0}", p)),
            map + ".of is not a buffer, temporary or constant");
  // A runtime refuses a buffer TMA cannot address.
  std::string error;
  EXPECT_FALSE(
      p.entries[0].plan.steps[0].launch.args[3].map.check(0x1008, 208, error));
  EXPECT_EQ(error, "a tensor map of a buffer not 16-byte aligned (TMA needs "
                   "16)");
}

} // namespace
