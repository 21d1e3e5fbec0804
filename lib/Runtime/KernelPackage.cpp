//===- KernelPackage.cpp - compiled nf functions, for the runtime alone ---===//
//
// Part of normfuse. See KernelPackage.h. The manifest is JSON, read by a
// small parser of its own (objects, arrays, strings, integers and booleans:
// what the format uses) so that the runtime keeps no dependency.
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/KernelPackage.h"

#include "ManifestJson.h"
#include "normfuse/Runtime/NpyFile.h"
#include "normfuse/Runtime/Sha256.h"

#include <cctype>
#include <limits>
#include <map>
#include <memory>

using namespace normfuse::runtime;
using normfuse::runtime::json::Json;
using normfuse::runtime::json::Reader;

static bool isPlainFileName(const std::string &name);

namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxDim = std::numeric_limits<unsigned>::max();
/// The most blocks of a cluster (the non-portable size of sm_90).
constexpr int64_t kMaxClusterBlocks = 16;

bool readTensorMap(Reader &r, const Json &j, const std::string &path,
                   const LaunchPlan &plan,
                   const std::vector<size_t> &constantBytes, LaunchArg &arg);
uint64_t bytesOf(const LaunchPlan &plan,
                 const std::vector<size_t> &constantBytes,
                 const LaunchArg &arg);

/// A launch argument: {"buffer": i}, {"temporary": i}, {"constant": i},
/// {"integer": v} or {"tensor_map": {...}}; `constantBytes` are the
/// entry's constants' sizes.
bool readArg(Reader &r, const Json &j, const std::string &path,
             const LaunchPlan &plan, const std::vector<size_t> &constantBytes,
             LaunchArg &arg) {
  // An integer computed when the plan is resolved: {"integer": v,
  // "computed": i}.
  if (j.kind == Json::Kind::Object && j.object.size() == 2 &&
      j.object.count("integer") && j.object.count("computed")) {
    arg.kind = LaunchArg::Kind::Integer;
    return r.integer(j, "integer", std::numeric_limits<int64_t>::min(), kMaxInt,
                     path, arg.value) &&
           r.integer(j, "computed", 0, int64_t(plan.integers.size()) - 1, path,
                     arg.computed);
  }
  if (j.kind != Json::Kind::Object || j.object.size() != 1)
    return r.failAt(path, "is not one of {\"buffer\": i}, {\"temporary\": i}, "
                          "{\"constant\": i}, {\"integer\": v}, "
                          "{\"integer\": v, \"computed\": i}, "
                          "{\"tensor_map\": {...}}"),
           false;
  const std::string &key = j.object.begin()->first;
  if (key == "buffer") {
    arg.kind = LaunchArg::Kind::Buffer;
    return r.integer(j, key, 0, int64_t(plan.bufferBytes.size()) - 1, path,
                     arg.index);
  }
  if (key == "temporary") {
    arg.kind = LaunchArg::Kind::Temporary;
    return r.integer(j, key, 0, int64_t(plan.temporaryBytes.size()) - 1, path,
                     arg.index);
  }
  if (key == "constant") {
    arg.kind = LaunchArg::Kind::Constant;
    return r.integer(j, key, 0, int64_t(constantBytes.size()) - 1, path,
                     arg.index);
  }
  if (key == "integer") {
    arg.kind = LaunchArg::Kind::Integer;
    return r.integer(j, key, std::numeric_limits<int64_t>::min(), kMaxInt, path,
                     arg.value);
  }
  if (key == "tensor_map")
    return readTensorMap(r, j.object.begin()->second, path + ".tensor_map",
                         plan, constantBytes, arg);
  return r.failAt(path, "has the unknown key \"" + key + "\""), false;
}

/// A tensor map argument's object: {"of": {"buffer": i} (or a temporary or
/// constant), "element": "f16", "dims": [...], "strides": [...], "box":
/// [...], "swizzle": s}, the dimensions the innermost first.
bool readTensorMap(Reader &r, const Json &j, const std::string &path,
                   const LaunchPlan &plan,
                   const std::vector<size_t> &constantBytes, LaunchArg &arg) {
  if (j.kind != Json::Kind::Object)
    return r.failAt(path, "is not an object"), false;
  const Json *of = r.field(j, "of", Json::Kind::Object, path);
  const Json *element = r.field(j, "element", Json::Kind::String, path);
  const Json *dims = r.field(j, "dims", Json::Kind::Array, path);
  const Json *strides = r.field(j, "strides", Json::Kind::Array, path);
  const Json *box = r.field(j, "box", Json::Kind::Array, path);
  int64_t swizzle = 0;
  if (!of || !element || !dims || !strides || !box ||
      !r.integer(j, "swizzle", 0, 128, path, swizzle))
    return false;
  LaunchArg buffer;
  if (!readArg(r, *of, path + ".of", plan, constantBytes, buffer))
    return false;
  if (buffer.kind == LaunchArg::Kind::Integer ||
      buffer.kind == LaunchArg::Kind::TensorMap)
    return r.failAt(path + ".of", "is not a buffer, temporary or constant"),
           false;
  TensorMapSpec &spec = arg.map;
  if (!TensorMapSpec::fromName(element->string, spec.element))
    return r.failAt(path + ".element", "is not \"f16\", \"bf16\" or \"f32\""),
           false;
  size_t rank = dims->array.size();
  if (rank < 1 || rank > 5 || box->array.size() != rank ||
      strides->array.size() != rank - 1)
    return r.failAt(path, "does not hold 1 to 5 dims, as many box sizes and "
                          "one stride fewer"),
           false;
  auto read = [&](const Json &list, size_t i, int64_t max, int64_t &out) {
    const Json &v = list.array[i];
    if (v.kind != Json::Kind::Integer || v.integer < 1 || v.integer > max)
      return r.failAt(path, "holds a size that is not from 1 to " +
                                std::to_string(max)),
             false;
    out = v.integer;
    return true;
  };
  spec.rank = int(rank);
  spec.swizzle = int(swizzle);
  for (size_t d = 0; d < rank; ++d) {
    int64_t dim = 0, size = 0, stride = 0;
    if (!read(*dims, d, int64_t(1) << 32, dim) || !read(*box, d, 256, size) ||
        (d && !read(*strides, d - 1, int64_t(1) << 40, stride)))
      return false;
    spec.dims[d] = uint64_t(dim);
    spec.box[d] = uint32_t(size);
    if (d)
      spec.strides[d - 1] = uint64_t(stride);
  }
  std::string why;
  if (!spec.check(0, bytesOf(plan, constantBytes, buffer), why))
    return r.failAt(path, "is " + why), false;
  arg.kind = LaunchArg::Kind::TensorMap;
  arg.mapOf = buffer.kind;
  arg.index = buffer.index;
  return true;
}

/// The bytes of the buffer, temporary or constant `arg` points at.
uint64_t bytesOf(const LaunchPlan &plan,
                 const std::vector<size_t> &constantBytes,
                 const LaunchArg &arg) {
  if (arg.kind == LaunchArg::Kind::TensorMap)
    return bytesOf(plan, constantBytes, arg.mapped());
  if (arg.kind == LaunchArg::Kind::Constant)
    return constantBytes[arg.index];
  return arg.kind == LaunchArg::Kind::Buffer ? plan.bufferBytes[arg.index]
                                             : plan.temporaryBytes[arg.index];
}

bool readDims(Reader &r, const Json &entry, const std::string &key,
              const std::string &path, unsigned (&dims)[3], int64_t least = 1) {
  const Json *a = r.field(entry, key, Json::Kind::Array, path);
  if (!a)
    return false;
  if (a->array.size() != 3)
    return r.failAt(path + "." + key, "does not hold 3 sizes"), false;
  for (int d = 0; d < 3; ++d) {
    const Json &v = a->array[d];
    if (v.kind != Json::Kind::Integer || v.integer < least ||
        v.integer > kMaxDim)
      return r.failAt(path + "." + key, "holds a size that is not from " +
                                            std::to_string(least) + " to " +
                                            std::to_string(kMaxDim)),
             false;
    dims[d] = unsigned(v.integer);
  }
  return true;
}

/// A list of integers from -1 to `size` - 1 (computed indexes).
bool readIndexes(Reader &r, const Json &array, const std::string &path,
                 int64_t size, std::vector<int64_t> &out) {
  for (const Json &v : array.array) {
    if (v.kind != Json::Kind::Integer || v.integer < -1 || v.integer >= size)
      return r.failAt(path, "holds something that is not -1 or an integer of "
                            "the plan"),
             false;
    out.push_back(v.integer);
  }
  return true;
}

/// The plan's optional "residencies" and "integers" (LaunchPlan.h).
bool readComputed(Reader &r, const Json &j, const std::string &path,
                  LaunchPlan &plan) {
  if (j.object.count("residencies")) {
    const Json *list = r.field(j, "residencies", Json::Kind::Array, path);
    for (size_t i = 0; list && i < list->array.size(); ++i) {
      std::string at = path + ".residencies[" + std::to_string(i) + "]";
      const Json &e = list->array[i];
      const Json *kernel = r.field(e, "kernel", Json::Kind::String, at);
      int64_t block, shared, planned, cluster = 1;
      if (!kernel || !r.integer(e, "block", 1, kMaxDim, at, block) ||
          !r.integer(e, "shared_memory_bytes", 0, kMaxInt, at, shared) ||
          !r.integer(e, "planned", 1, kMaxInt, at, planned) ||
          (e.object.count("cluster_blocks") &&
           !r.integer(e, "cluster_blocks", 1, kMaxClusterBlocks, at, cluster)))
        return false;
      plan.residencies.push_back(
          {kernel->string, unsigned(block), size_t(shared), planned, cluster});
    }
    if (!list)
      return false;
  }
  if (j.object.count("integers")) {
    const Json *list = r.field(j, "integers", Json::Kind::Array, path);
    for (size_t i = 0; list && i < list->array.size(); ++i) {
      std::string at = path + ".integers[" + std::to_string(i) + "]";
      const Json &e = list->array[i];
      PlanInteger n;
      if (e.kind != Json::Kind::Array || e.array.empty() ||
          e.array[0].kind != Json::Kind::String ||
          !PlanInteger::fromName(e.array[0].string, n.op))
        return r.failAt(at, "is not [\"operation\", operands...]"), false;
      bool leaf = n.op == PlanInteger::Op::Constant ||
                  n.op == PlanInteger::Op::Resident;
      size_t operands = leaf ? 1 : size_t(PlanInteger::numOperands(n.op));
      if (e.array.size() != operands + 1)
        return r.failAt(at, "does not have " + std::to_string(operands) +
                                " operands"),
               false;
      for (size_t o = 0; o < operands; ++o) {
        if (e.array[o + 1].kind != Json::Kind::Integer)
          return r.failAt(at, "has an operand that is not an integer"), false;
        n.operands[o] = e.array[o + 1].integer;
      }
      plan.integers.push_back(n);
    }
    if (!list)
      return false;
  }
  if (j.object.count("zeroed_temporaries")) {
    const Json *list =
        r.field(j, "zeroed_temporaries", Json::Kind::Array, path);
    if (!list)
      return false;
    for (const Json &v : list->array) {
      if (v.kind != Json::Kind::Integer || v.integer < 0 ||
          v.integer >= int64_t(plan.temporaryBytes.size()))
        return r.failAt(path + ".zeroed_temporaries",
                        "holds something that is not a temporary of the "
                        "plan"),
               false;
      plan.zeroedTemporaries.push_back(v.integer);
    }
  }
  if (j.object.count("temporary_computed")) {
    const Json *list =
        r.field(j, "temporary_computed", Json::Kind::Array, path);
    if (!list ||
        !readIndexes(r, *list, path + ".temporary_computed",
                     int64_t(plan.integers.size()), plan.temporaryComputed))
      return false;
  }
  return true;
}

bool readPlan(Reader &r, const Json &j, const std::string &path,
              const std::vector<size_t> &constantBytes, LaunchPlan &plan) {
  int64_t numInputs;
  const Json *buffers = r.field(j, "buffer_bytes", Json::Kind::Array, path);
  const Json *temps = r.field(j, "temporary_bytes", Json::Kind::Array, path);
  const Json *steps = r.field(j, "steps", Json::Kind::Array, path);
  if (!buffers || !temps || !steps)
    return false;
  for (auto [list, out, name] :
       {std::tuple<const Json *, std::vector<size_t> *, const char *>{
            buffers, &plan.bufferBytes, "buffer_bytes"},
        {temps, &plan.temporaryBytes, "temporary_bytes"}})
    for (const Json &v : list->array) {
      if (v.kind != Json::Kind::Integer || v.integer < 0)
        return r.failAt(path + "." + name,
                        "holds something that is not a size"),
               false;
      out->push_back(size_t(v.integer));
    }
  if (!r.integer(j, "num_inputs", 0, int64_t(plan.bufferBytes.size()), path,
                 numInputs) ||
      !readComputed(r, j, path, plan))
    return false;
  plan.numInputs = size_t(numInputs);
  for (size_t i = 0; i < steps->array.size(); ++i) {
    const Json &s = steps->array[i];
    std::string at = path + ".steps[" + std::to_string(i) + "]";
    Step step;
    if (s.kind == Json::Kind::Object && s.object.count("launch")) {
      const Json *l = r.field(s, "launch", Json::Kind::Object, at);
      const Json *kernel =
          l ? r.field(*l, "kernel", Json::Kind::String, at + ".launch")
            : nullptr;
      const Json *args =
          l ? r.field(*l, "args", Json::Kind::Array, at + ".launch") : nullptr;
      int64_t shared;
      if (!kernel || !args ||
          !readDims(r, *l, "grid", at + ".launch", step.launch.grid, 0) ||
          !readDims(r, *l, "block", at + ".launch", step.launch.block) ||
          !r.integer(*l, "shared_memory_bytes", 0, kMaxInt, at + ".launch",
                     shared))
        return false;
      if (l->object.count("grid_computed")) {
        const Json *g =
            r.field(*l, "grid_computed", Json::Kind::Array, at + ".launch");
        std::vector<int64_t> computed;
        if (!g || !readIndexes(r, *g, at + ".launch.grid_computed",
                               int64_t(plan.integers.size()), computed))
          return false;
        if (computed.size() != 3)
          return r.failAt(at + ".launch.grid_computed", "does not hold 3"),
                 false;
        std::copy(computed.begin(), computed.end(), step.launch.gridComputed);
      }
      for (int d = 0; d < 3; ++d)
        if (step.launch.grid[d] == 0 && step.launch.gridComputed[d] < 0)
          return r.failAt(at + ".launch.grid",
                          "holds a size of 0 that is not computed"),
                 false;
      if (l->object.count("cooperative")) {
        const Json *c =
            r.field(*l, "cooperative", Json::Kind::Bool, at + ".launch");
        if (!c)
          return false;
        step.launch.cooperative = c->boolean;
      }
      // Registers a thread the kernel's setmaxnreg counts on: at most 255
      // (ptxas' most), a multiple of 8 (setmaxnreg's).
      if (l->object.count("launch_registers")) {
        int64_t registers;
        if (!r.integer(*l, "launch_registers", 8, 255, at + ".launch",
                       registers))
          return false;
        if (registers % 8)
          return r.failAt(at + ".launch.launch_registers",
                          "is not a multiple of 8"),
                 false;
        step.launch.launchRegisters = registers;
      }
      step.kind = Step::Kind::Launch;
      step.launch.kernel = kernel->string;
      step.launch.sharedMemoryBytes = size_t(shared);
      for (size_t k = 0; k < args->array.size(); ++k) {
        LaunchArg arg;
        if (!readArg(r, args->array[k],
                     at + ".launch.args[" + std::to_string(k) + "]", plan,
                     constantBytes, arg))
          return false;
        step.launch.args.push_back(arg);
      }
    } else if (s.kind == Json::Kind::Object && s.object.count("copy")) {
      const Json *c = r.field(s, "copy", Json::Kind::Object, at);
      const Json *from =
          c ? r.field(*c, "from", Json::Kind::Object, at + ".copy") : nullptr;
      const Json *to =
          c ? r.field(*c, "to", Json::Kind::Object, at + ".copy") : nullptr;
      int64_t bytes;
      if (!from || !to ||
          !readArg(r, *from, at + ".copy.from", plan, constantBytes,
                   step.copy.from) ||
          !readArg(r, *to, at + ".copy.to", plan, constantBytes,
                   step.copy.to) ||
          !r.integer(*c, "bytes", 0, kMaxInt, at + ".copy", bytes))
        return false;
      if (step.copy.from.kind == LaunchArg::Kind::Integer ||
          step.copy.to.kind == LaunchArg::Kind::Integer ||
          step.copy.from.kind == LaunchArg::Kind::TensorMap ||
          step.copy.to.kind == LaunchArg::Kind::TensorMap)
        return r.failAt(at + ".copy",
                        "copies from or to an integer or a tensor map"),
               false;
      if (step.copy.to.kind == LaunchArg::Kind::Constant)
        return r.failAt(at + ".copy", "copies into a constant"), false;
      step.kind = Step::Kind::Copy;
      step.copy.bytes = size_t(bytes);
      if (step.copy.bytes > bytesOf(plan, constantBytes, step.copy.from) ||
          step.copy.bytes > bytesOf(plan, constantBytes, step.copy.to))
        return r.failAt(at + ".copy",
                        "copies more bytes than its buffers hold"),
               false;
    } else {
      return r.failAt(at, "is neither {\"launch\": ...} nor {\"copy\": ...}"),
             false;
    }
    plan.steps.push_back(std::move(step));
  }
  std::string why;
  if (!plan.checkComputed(why))
    return r.failAt(path, why), false;
  return true;
}

/// A string JSON can hold as it is written here.
std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\t') {
      out += "\\t";
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x20) {
      static const char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[(c >> 4) & 0xf];
      out += hex[c & 0xf];
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string writeArg(const LaunchArg &arg) {
  switch (arg.kind) {
  case LaunchArg::Kind::Buffer:
    return "{\"buffer\": " + std::to_string(arg.index) + "}";
  case LaunchArg::Kind::Temporary:
    return "{\"temporary\": " + std::to_string(arg.index) + "}";
  case LaunchArg::Kind::Integer:
    return "{\"integer\": " + std::to_string(arg.value) +
           (arg.computed >= 0
                ? ", \"computed\": " + std::to_string(arg.computed)
                : std::string()) +
           "}";
  case LaunchArg::Kind::Constant:
    return "{\"constant\": " + std::to_string(arg.index) + "}";
  case LaunchArg::Kind::TensorMap: {
    const TensorMapSpec &m = arg.map;
    std::string dims, strides, box;
    for (int d = 0; d < m.rank; ++d) {
      dims += (d ? ", " : "") + std::to_string(m.dims[d]);
      box += (d ? ", " : "") + std::to_string(m.box[d]);
      if (d)
        strides += (d > 1 ? ", " : "") + std::to_string(m.strides[d - 1]);
    }
    return "{\"tensor_map\": {\"of\": " + writeArg(arg.mapped()) +
           ", \"element\": \"" + TensorMapSpec::name(m.element) +
           "\", \"dims\": [" + dims + "], \"strides\": [" + strides +
           "], \"box\": [" + box +
           "], \"swizzle\": " + std::to_string(m.swizzle) + "}}";
  }
  }
  return "";
}

template <typename T, typename F>
std::string list(const std::vector<T> &items, F format,
                 const char *separator = ", ") {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? separator : "") + format(items[i]);
  return out + "]";
}

/// An entry's "constants": {"file": ..., "bytes": [...], "sha256": ...}.
void readConstants(Reader &r, const Json &j, const std::string &path,
                   PackageEntry &entry) {
  std::string at = path + ".constants";
  const Json *c = r.field(j, "constants", Json::Kind::Object, path);
  const Json *file = c ? r.field(*c, "file", Json::Kind::String, at) : nullptr;
  const Json *bytes = c ? r.field(*c, "bytes", Json::Kind::Array, at) : nullptr;
  const Json *digest =
      c ? r.field(*c, "sha256", Json::Kind::String, at) : nullptr;
  if (!file || !bytes || !digest)
    return;
  if (!isPlainFileName(file->string))
    return (void)r.failAt(at + ".file",
                          "is not a file name of the package folder");
  bool hex = digest->string.size() == 64;
  for (char ch : digest->string)
    hex &= (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
  if (!hex)
    return (void)r.failAt(at + ".sha256", "is not 64 lowercase hex digits");
  uint64_t total = 0;
  for (const Json &v : bytes->array) {
    if (v.kind != Json::Kind::Integer || v.integer < 0 ||
        __builtin_add_overflow(total, uint64_t(v.integer), &total) ||
        total > uint64_t(kMaxInt))
      return (void)r.failAt(at + ".bytes",
                            "holds something that is not a size, or sizes "
                            "beyond 2^63 bytes");
    entry.constantBytes.push_back(size_t(v.integer));
  }
  entry.constantsFile = file->string;
  entry.constantsSha256 = digest->string;
}

std::string dims(const unsigned (&d)[3]) {
  return "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " +
         std::to_string(d[2]) + "]";
}

} // namespace

const PackageEntry *KernelPackage::find(const std::string &name) const {
  for (const PackageEntry &e : entries)
    if (e.name == name)
      return &e;
  return nullptr;
}

std::optional<uint64_t>
normfuse::runtime::argumentBytes(const std::string &dtype,
                                 const std::vector<int64_t> &shape) {
  // The dtypes .npy files hold are the ones packages take.
  uint64_t bytes = npyElementSize(dtype);
  if (!bytes)
    return std::nullopt;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(bytes, uint64_t(d), &bytes))
      return std::nullopt;
  if (bytes > uint64_t(kMaxInt))
    return std::nullopt;
  return bytes;
}

/// A name of a file in the package folder itself: not empty, no '/', not
/// "." or "..", so that a manifest cannot name files outside its folder.
static bool isPlainFileName(const std::string &name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

bool normfuse::runtime::loadConstants(PackageEntry &entry,
                                      const std::string &bytes,
                                      std::string &error) {
  uint64_t total = 0;
  for (size_t n : entry.constantBytes)
    total += n;
  if (bytes.size() != total) {
    error = entry.constantsFile + " holds " + std::to_string(bytes.size()) +
            " bytes; the manifest's constants of @" + entry.name + " take " +
            std::to_string(total);
    return false;
  }
  if (sha256Hex(bytes) != entry.constantsSha256) {
    error = entry.constantsFile +
            " is not the file the manifest names (its "
            "SHA-256 differs): the package is corrupt or was edited";
    return false;
  }
  entry.plan.constants.clear();
  size_t at = 0;
  for (size_t n : entry.constantBytes) {
    entry.plan.constants.push_back(std::make_shared<std::vector<uint8_t>>(
        bytes.begin() + at, bytes.begin() + at + n));
    at += n;
  }
  return true;
}

/// The plan's residencies, integers and computed temporaries, where it has
/// them: ", \"residencies\": [...], ..." (else nothing).
static std::string writeComputed(const LaunchPlan &plan) {
  if (plan.integers.empty())
    return "";
  auto number = [](auto v) { return std::to_string(v); };
  std::string out =
      ",\n   \"residencies\": " +
      list(plan.residencies,
           [&](const Residency &r) {
             return "{\"kernel\": " + quote(r.kernel) +
                    ", \"block\": " + number(r.block) +
                    ", \"shared_memory_bytes\": " +
                    number(r.sharedMemoryBytes) +
                    ", \"planned\": " + number(r.planned) +
                    (r.clusterBlocks > 1
                         ? ", \"cluster_blocks\": " + number(r.clusterBlocks)
                         : std::string()) +
                    "}";
           }) +
      ",\n   \"integers\": " + list(plan.integers, [&](const PlanInteger &n) {
        bool leaf = n.op == PlanInteger::Op::Constant ||
                    n.op == PlanInteger::Op::Resident;
        int operands = leaf ? 1 : PlanInteger::numOperands(n.op);
        std::string item = std::string("[\"") + PlanInteger::name(n.op) + "\"";
        for (int o = 0; o < operands; ++o)
          item += ", " + number(n.operands[o]);
        return item + "]";
      });
  if (!plan.temporaryComputed.empty())
    out += ", \"temporary_computed\": " + list(plan.temporaryComputed, number);
  return out;
}

std::string normfuse::runtime::writeManifest(const KernelPackage &package) {
  auto number = [](auto v) { return std::to_string(v); };
  std::string out = "{\"format\": \"normfuse-kernel-package\", \"version\": " +
                    std::to_string(KernelPackage::kVersion) +
                    ", \"entries\": [";
  for (size_t e = 0; e < package.entries.size(); ++e) {
    const PackageEntry &entry = package.entries[e];
    const LaunchPlan &plan = entry.plan;
    out += e ? ",\n " : "\n ";
    out +=
        "{\"name\": " + quote(entry.name) +
        ", \"source\": " + quote(entry.source) + ",\n  \"args\": " +
        list(entry.args,
             [&](const PackageArg &a) {
               return std::string("{\"role\": \"") +
                      (a.role == PackageArg::Role::Input ? "input" : "output") +
                      "\", \"dtype\": " + quote(a.dtype) +
                      ", \"shape\": " + list(a.shape, number) + "}";
             }) +
        ",\n  \"binaries\": " +
        list(entry.binaries,
             [&](const PackageBinary &b) {
               return "{\"arch\": " + quote(b.arch) +
                      ", \"file\": " + quote(b.file) + "}";
             }) +
        (entry.constantsFile.empty()
             ? std::string()
             : ",\n  \"constants\": {\"file\": " + quote(entry.constantsFile) +
                   ", \"bytes\": " + list(entry.constantBytes, number) +
                   ", \"sha256\": " + quote(entry.constantsSha256) + "}") +
        ",\n  \"plan\": {\"num_inputs\": " + std::to_string(plan.numInputs) +
        ", \"buffer_bytes\": " + list(plan.bufferBytes, number) +
        ", \"temporary_bytes\": " + list(plan.temporaryBytes, number) +
        (plan.zeroedTemporaries.empty()
             ? std::string()
             : ", \"zeroed_temporaries\": " +
                   list(plan.zeroedTemporaries, number)) +
        writeComputed(plan) + ",\n   \"steps\": " +
        list(
            plan.steps,
            [&](const Step &s) {
              if (s.kind == Step::Kind::Copy)
                return "{\"copy\": {\"from\": " + writeArg(s.copy.from) +
                       ", \"to\": " + writeArg(s.copy.to) +
                       ", \"bytes\": " + std::to_string(s.copy.bytes) + "}}";
              const int64_t *gc = s.launch.gridComputed;
              bool computed = gc[0] >= 0 || gc[1] >= 0 || gc[2] >= 0;
              return "{\"launch\": {\"kernel\": " + quote(s.launch.kernel) +
                     ", \"grid\": " + dims(s.launch.grid) +
                     (computed
                          ? ", \"grid_computed\": " +
                                list(std::vector<int64_t>(gc, gc + 3), number)
                          : std::string()) +
                     ", \"block\": " + dims(s.launch.block) +
                     ", \"shared_memory_bytes\": " +
                     std::to_string(s.launch.sharedMemoryBytes) +
                     (s.launch.cooperative ? ", \"cooperative\": true"
                                           : std::string()) +
                     (s.launch.launchRegisters
                          ? ", \"launch_registers\": " +
                                std::to_string(s.launch.launchRegisters)
                          : std::string()) +
                     ", \"args\": " + list(s.launch.args, writeArg) + "}}";
            },
            ",\n    ") +
        "}}";
  }
  return out + "]}\n";
}

std::optional<KernelPackage>
normfuse::runtime::readManifest(const std::string &text, std::string &error) {
  Json root;
  if (!json::parse(text, root, error))
    return std::nullopt;
  Reader r;
  KernelPackage package;
  const Json *format = r.field(root, "format", Json::Kind::String, "(top)");
  int64_t version;
  const Json *entries = r.field(root, "entries", Json::Kind::Array, "(top)");
  if (format && format->string != "normfuse-kernel-package")
    r.failAt("(top).format", "is not \"normfuse-kernel-package\"");
  if (format && entries &&
      r.integer(root, "version", KernelPackage::kOldestVersion,
                KernelPackage::kVersion, "(top)", version)) {
    for (size_t e = 0; e < entries->array.size() && r.error.empty(); ++e) {
      const Json &j = entries->array[e];
      std::string path = "entries[" + std::to_string(e) + "]";
      PackageEntry entry;
      const Json *name = r.field(j, "name", Json::Kind::String, path);
      const Json *source = r.field(j, "source", Json::Kind::String, path);
      const Json *args = r.field(j, "args", Json::Kind::Array, path);
      const Json *binaries = r.field(j, "binaries", Json::Kind::Array, path);
      const Json *plan = r.field(j, "plan", Json::Kind::Object, path);
      if (!name || !source || !args || !binaries || !plan)
        break;
      entry.name = name->string;
      entry.source = source->string;
      if (!isPlainFileName(entry.source)) {
        r.failAt(path + ".source", "is not a file name of the package folder");
        break;
      }
      if (package.find(entry.name)) {
        r.failAt(path + ".name", "repeats the entry " + quote(entry.name));
        break;
      }
      for (size_t a = 0; a < args->array.size() && r.error.empty(); ++a) {
        std::string at = path + ".args[" + std::to_string(a) + "]";
        const Json &aj = args->array[a];
        const Json *role = r.field(aj, "role", Json::Kind::String, at);
        const Json *dtype = r.field(aj, "dtype", Json::Kind::String, at);
        const Json *shape = r.field(aj, "shape", Json::Kind::Array, at);
        if (!role || !dtype || !shape)
          break;
        PackageArg arg;
        if (role->string != "input" && role->string != "output") {
          r.failAt(at + ".role", "is neither \"input\" nor \"output\"");
          break;
        }
        arg.role = role->string == "input" ? PackageArg::Role::Input
                                           : PackageArg::Role::Output;
        arg.dtype = dtype->string;
        for (const Json &d : shape->array) {
          if (d.kind != Json::Kind::Integer) {
            r.failAt(at + ".shape", "holds something that is not an integer");
            break;
          }
          arg.shape.push_back(d.integer);
        }
        if (r.error.empty() && !argumentBytes(arg.dtype, arg.shape))
          r.failAt(at, "has an unknown dtype, a negative dimension or more "
                       "than 2^63 bytes");
        entry.args.push_back(std::move(arg));
      }
      for (size_t b = 0; b < binaries->array.size() && r.error.empty(); ++b) {
        std::string at = path + ".binaries[" + std::to_string(b) + "]";
        const Json *arch =
            r.field(binaries->array[b], "arch", Json::Kind::String, at);
        const Json *file =
            r.field(binaries->array[b], "file", Json::Kind::String, at);
        if (arch && file && !isPlainFileName(file->string))
          r.failAt(at + ".file", "is not a file name of the package folder");
        else if (arch && file)
          entry.binaries.push_back({arch->string, file->string});
      }
      if (r.error.empty() && j.object.count("constants"))
        readConstants(r, j, path, entry);
      if (!r.error.empty() ||
          !readPlan(r, *plan, path + ".plan", entry.constantBytes, entry.plan))
        break;
      // The plan's buffers are the arguments: inputs first, sizes equal.
      size_t inputs = 0;
      bool ordered = true;
      for (size_t a = 0; a < entry.args.size(); ++a) {
        bool input = entry.args[a].role == PackageArg::Role::Input;
        ordered &= !input || inputs == a;
        inputs += input;
      }
      if (!ordered)
        r.failAt(path + ".args", "do not list every input before the outputs");
      else if (entry.plan.bufferBytes.size() != entry.args.size() ||
               entry.plan.numInputs != inputs)
        r.failAt(path + ".plan", "does not have one buffer per argument");
      for (size_t a = 0; a < entry.args.size() && r.error.empty(); ++a)
        if (*argumentBytes(entry.args[a].dtype, entry.args[a].shape) !=
            entry.plan.bufferBytes[a])
          r.failAt(path + ".plan.buffer_bytes[" + std::to_string(a) + "]",
                   "is not the size of argument " + std::to_string(a));
      package.entries.push_back(std::move(entry));
    }
  }
  if (!r.error.empty()) {
    error = r.error;
    return std::nullopt;
  }
  return package;
}
