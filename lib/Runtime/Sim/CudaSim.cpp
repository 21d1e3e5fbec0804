//===- CudaSim.cpp - run printed CUDA kernels on the host CPU ---*- C++ -*-===//
//
// Part of normfuse. See CudaSim.h. The compiler runs through posix_spawnp
// with an argument vector (no shell), its output goes to a log file in a
// fresh temporary directory, and the shared object is opened RTLD_LOCAL so
// that modules never see each other's symbols. GCC also gets -fno-weak (see
// compilerFacts) and the simulator header precompiled (precompiledHeader).
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/CudaSim.h"

/// The compiler when neither the options nor $NF_SIM_CXX name one: the one
/// this library was built with, which is known to be installed.
#ifndef NF_SIM_DEFAULT_CXX
#define NF_SIM_DEFAULT_CXX "c++"
#endif

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <spawn.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace normfuse::runtime;

namespace {

/// Serializes all simulated launches in the process.
std::mutex &getLaunchMutex() {
  static std::mutex mutex;
  return mutex;
}

std::string getEnv(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

std::vector<std::string> splitAtSpaces(const std::string &text) {
  std::vector<std::string> words;
  std::istringstream stream(text);
  for (std::string word; stream >> word;)
    words.push_back(word);
  return words;
}

/// A temporary directory whose listed files are removed with it.
struct TempDir {
  std::string path;
  std::vector<std::string> files;
  bool keep = false;

  ~TempDir() {
    if (keep || path.empty())
      return;
    for (const std::string &file : files)
      ::unlink(file.c_str());
    ::rmdir(path.c_str());
  }
  std::string add(const char *name) {
    files.push_back(path + "/" + name);
    return files.back();
  }
};

bool writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out.flush());
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Runs `argv` with stdout and stderr in `logPath`; the exit status, or -1
/// with `error` set when it could not run.
int runCommand(const std::vector<std::string> &argv, const std::string &logPath,
               std::string &error) {
  std::vector<char *> cargv;
  for (const std::string &arg : argv)
    cargv.push_back(const_cast<char *>(arg.c_str()));
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  int rc =
      posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    error = "cannot run '" + argv[0] + "': " + std::strerror(rc);
    return -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      error = std::string("waitpid: ") + std::strerror(errno);
      return -1;
    }
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  error = "'" + argv[0] + "' was killed by signal " +
          std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return -1;
}

/// What the compiler predefines (`-dM -E`), which names its version, and
/// whether it is GCC, which needs -fno-weak: it refuses to mix the COMDAT
/// statics of inline functions and templates with other variables in one
/// named section, and every __shared__ variable is in section nf_smem.
/// Asked once per compiler command; an error here is left for the real
/// compile to report.
struct CompilerFacts {
  bool gcc = false, clang = false;
  std::string macros;
};

CompilerFacts compilerFacts(const std::vector<std::string> &compiler,
                            TempDir &dir) {
  static std::mutex mutex;
  static std::map<std::string, CompilerFacts> cache;
  std::string key;
  for (const std::string &word : compiler)
    key += word + " ";
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  std::vector<std::string> argv = compiler;
  for (const char *arg : {"-dM", "-E", "-x", "c++", "/dev/null"})
    argv.push_back(arg);
  std::string logPath = dir.add("macros.txt"), error;
  if (runCommand(argv, logPath, error) != 0)
    return {};
  CompilerFacts facts;
  facts.macros = readFile(logPath);
  facts.clang = facts.macros.find("#define __clang__ ") != std::string::npos;
  facts.gcc = facts.macros.find("#define __GNUC__ ") != std::string::npos &&
              !facts.clang;
  cache[key] = facts;
  return facts;
}

std::mutex &getStatsMutex() {
  static std::mutex mutex;
  return mutex;
}

SimCompileStats &getStats() {
  static SimCompileStats stats;
  return stats;
}

void count(uint64_t SimCompileStats::*field) {
  std::lock_guard<std::mutex> lock(getStatsMutex());
  ++(getStats().*field);
}

/// Whether this CPU has x86's FMA instructions.
bool hostHasFma() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

/// FNV-1a, 64 bits, in hex: names an entry and fingerprints a file's text
/// (an entry's key is also kept whole and compared).
std::string fingerprint(const std::string &text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text)
    h = (h ^ c) * 0x100000001b3ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

/// The folder precompiled headers live in by default (see
/// SimCompileOptions::pchDirectory).
std::string defaultPchDirectory() {
  if (const char *dir = std::getenv("NF_SIM_PCH_DIR"))
    return dir;
  if (std::string xdg = getEnv("XDG_CACHE_HOME"); !xdg.empty())
    return xdg + "/normfuse/sim-pch";
  if (std::string home = getEnv("HOME"); !home.empty())
    return home + "/.cache/normfuse/sim-pch";
  return "";
}

/// The files a make rule (`-MMD -MF`) lists after its target's colon.
std::vector<std::string> ruleDependencies(const std::string &rule) {
  std::vector<std::string> files;
  size_t colon = rule.find(": ");
  if (colon == std::string::npos)
    return files;
  std::string word;
  for (size_t i = colon + 2; i <= rule.size(); ++i) {
    char c = i < rule.size() ? rule[i] : ' ';
    if (c == '\\' && i + 1 < rule.size() && rule[i + 1] == '\n') {
      ++i;
      c = ' ';
    } else if (c == '\\' && i + 1 < rule.size() && rule[i + 1] == ' ') {
      word += rule[++i];
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\t') {
      if (!word.empty())
        files.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  return files;
}

/// A line per file: its path, modification time (Clang refuses a
/// precompiled header whose files changed it) and its text's fingerprint;
/// empty when one cannot be read.
std::string describeFiles(const std::vector<std::string> &files) {
  std::string lines;
  for (const std::string &file : files) {
    struct stat st;
    std::ifstream in(file, std::ios::binary);
    if (!in || ::stat(file.c_str(), &st) != 0)
      return "";
    std::ostringstream text;
    text << in.rdbuf();
    lines += file + "\t" + std::to_string(st.st_mtim.tv_sec) + "." +
             std::to_string(st.st_mtim.tv_nsec) + "\t" +
             fingerprint(text.str()) + "\n";
  }
  return lines;
}

bool writeFileAtomically(const std::string &path, const std::string &text) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  if (!writeFile(tmp, text) || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

bool makeDirectories(const std::string &path) {
  for (size_t at = 1; at <= path.size(); ++at)
    if (at == path.size() || path[at] == '/') {
      std::string prefix = path.substr(0, at);
      if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
        return false;
    }
  return true;
}

/// Removes what a process killed while making an entry in `folder` left:
/// its temporary files (".tmp." in the name) older than ten minutes (one
/// takes a second to make).
void removeStaleTemporaries(const std::string &folder) {
  namespace fs = std::filesystem;
  std::error_code error;
  auto now = fs::file_time_type::clock::now();
  for (const auto &e : fs::directory_iterator(folder, error))
    if (e.path().filename().string().find(".tmp.") != std::string::npos &&
        now - e.last_write_time(error) > std::chrono::minutes(10))
      fs::remove(e.path(), error);
}

/// The entries a folder of precompiled headers keeps: making one past it
/// removes the least recently used (a checkout, a flag set and a compiler
/// each have their own, and a test or a wheel in a temporary folder makes
/// a new one every run).
constexpr size_t kMaxPchEntries = 16;

/// Whether `name` is an entry's (the 16 hex digits of a key's
/// fingerprint): a folder of precompiled headers may be one a user named
/// and hold other things, which pruning leaves alone.
bool isEntryName(const std::string &name) {
  return name.size() == 16 && std::all_of(name.begin(), name.end(), [](char c) {
           return std::isxdigit((unsigned char)c);
         });
}

/// Keeps the kMaxPchEntries most recently used entries of `root` (by their
/// key.txt's time, which each use sets), counting `made`: removes older
/// ones unused for ten minutes (a concurrent compile may be reading one;
/// were it removed, that compile would fall back to the plain header).
void pruneEntries(const std::string &root, const std::string &made) {
  namespace fs = std::filesystem;
  std::error_code error;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  for (const auto &e : fs::directory_iterator(root, error)) {
    std::error_code ec;
    if (!e.is_directory(ec) || !isEntryName(e.path().filename().string()) ||
        e.path() == fs::path(made) || !fs::exists(e.path() / "include.h", ec))
      continue;
    auto used = fs::last_write_time(e.path() / "key.txt", ec);
    if (ec)
      used = fs::last_write_time(e.path(), ec);
    if (!ec)
      entries.push_back({used, e.path()});
  }
  if (entries.size() < kMaxPchEntries)
    return;
  std::sort(entries.begin(), entries.end(),
            [](const auto &a, const auto &b) { return a.first > b.first; });
  auto now = fs::file_time_type::clock::now();
  for (size_t i = kMaxPchEntries - 1; i < entries.size(); ++i)
    if (now - entries[i].first > std::chrono::minutes(10))
      fs::remove_all(entries[i].second, error);
}

/// Serializes this process's making of entries.
std::mutex &getPchMutex() {
  static std::mutex mutex;
  return mutex;
}

/// The simulator header precompiled for `flags` (the compiler's command and
/// every flag of a module's compile but the header, the source and the
/// output; GCC or Clang, whose file is `suffix`, .gch or .pch), made in
/// `root` on first use: the path to give -include (the compiler finds the
/// precompiled file beside it), or empty where there is none (the module
/// then includes the header itself).
///
/// An entry is the folder <root>/<fingerprint of the key>: `include.h` (a
/// line that includes the header by its absolute path), `include.h.gch`
/// (or .pch) and `key.txt`: the key (the flags, the compiler's predefined
/// macros, the header's path), then a line per file the header includes from
/// outside the system's folders (GCC's -MMD), with its text's fingerprint.
/// A process checks an entry once, and makes it again (under temporary
/// names, renamed into place: a concurrent compile sees the old entry or
/// the new) where the key or a file differs. A module that fails to compile
/// with the entry (Clang and, told to, GCC fail on one that does not fit)
/// is compiled again without it, and the entry made again on next use
/// (SimCompileStats::pchFallbacks). Each use sets key.txt's time, and
/// making an entry prunes the folder to the entries used last
/// (pruneEntries).
std::string precompiledHeader(const std::vector<std::string> &flags,
                              const std::string &macros,
                              const std::string &header,
                              const std::string &suffix,
                              const std::string &root, TempDir &dir) {
  char *resolved = ::realpath(header.c_str(), nullptr);
  if (!resolved)
    return "";
  std::string absolute = resolved;
  std::free(resolved);
  std::string key;
  for (const std::string &flag : flags)
    key += flag + " ";
  key += "\nmacros " + fingerprint(macros) + "\nheader " + absolute + "\n";
  std::string entry = root + "/" + fingerprint(key);
  std::string include = entry + "/include.h", gch = include + suffix,
              keyPath = entry + "/key.txt";

  std::lock_guard<std::mutex> lock(getPchMutex());
  // The entry as kept: its key, and its files as they are now.
  std::string kept = readFile(keyPath);
  if (kept.compare(0, key.size(), key) == 0 &&
      ::access(gch.c_str(), R_OK) == 0) {
    std::vector<std::string> files;
    std::istringstream lines(kept.substr(key.size()));
    for (std::string line; std::getline(lines, line);)
      files.push_back(line.substr(0, line.find('\t')));
    if (!files.empty() && describeFiles(files) == kept.substr(key.size())) {
      // Used now: the entries kept are the ones used last.
      ::utimensat(AT_FDCWD, keyPath.c_str(), nullptr, 0);
      return include;
    }
  }
  // include.h is written once: a compile reading the entry meanwhile
  // sees it unchanged (Clang checks its time).
  std::string line = "#include \"" + absolute + "\"\n";
  if (!makeDirectories(entry) ||
      (readFile(include) != line && !writeFileAtomically(include, line)))
    return "";
  removeStaleTemporaries(entry);
  std::string tmp = gch + ".tmp." + std::to_string(::getpid());
  std::string rule = dir.add("pch.d"), log = dir.add("pch.log"), error;
  std::vector<std::string> argv = flags;
  for (const std::string &arg :
       {std::string("-x"), std::string("c++-header"), include,
        std::string("-o"), tmp, std::string("-MMD"), std::string("-MF"), rule})
    argv.push_back(arg);
  std::string files;
  if (runCommand(argv, log, error) == 0)
    files = describeFiles(ruleDependencies(readFile(rule)));
  if (files.empty() || ::rename(tmp.c_str(), gch.c_str()) != 0 ||
      !writeFileAtomically(keyPath, key + files)) {
    ::unlink(tmp.c_str());
    return "";
  }
  count(&SimCompileStats::headersPrecompiled);
  pruneEntries(root, entry);
  return include;
}

/// Unkeys `include`'s entry, which a module failed to compile with and
/// passed without: the next compile that wants it makes it again.
void discardPrecompiledHeader(const std::string &include) {
  std::string entry = include.substr(0, include.rfind('/'));
  std::lock_guard<std::mutex> lock(getPchMutex());
  ::unlink((entry + "/key.txt").c_str());
}

} // namespace

std::unique_ptr<SimModule>
SimModule::compile(const std::string &cudaSource, std::string &error,
                   const SimCompileOptions &options) {
  std::string header = options.headerPath;
  if (header.empty())
    header = getEnv("NF_SIM_HEADER");
#ifdef NF_CUDA_SIM_HEADER
  if (header.empty())
    header = NF_CUDA_SIM_HEADER;
#endif
  if (header.empty()) {
    error = "no CUDA simulator header: set SimCompileOptions::headerPath or "
            "$NF_SIM_HEADER";
    return nullptr;
  }
  if (::access(header.c_str(), R_OK) != 0) {
    error = "cannot read the CUDA simulator header '" + header + "'";
    return nullptr;
  }
  std::vector<std::string> argv = splitAtSpaces(options.compiler);
  if (argv.empty())
    argv = splitAtSpaces(getEnv("NF_SIM_CXX"));
  if (argv.empty())
    argv = {NF_SIM_DEFAULT_CXX};

  std::string optLevel = options.optLevel;
  if (optLevel.empty())
    optLevel = getEnv("NF_SIM_OPT");
  if (optLevel.empty())
    optLevel = "-O1";
  if (optLevel.size() != 3 || optLevel.compare(0, 2, "-O") != 0 ||
      optLevel[2] < '0' || optLevel[2] > '3') {
    error = "the simulator's optimization level is '" + optLevel +
            "' (-O0, -O1, -O2 or -O3; $NF_SIM_OPT)";
    return nullptr;
  }

  std::string tmp = getEnv("TMPDIR");
  std::string pattern = (tmp.empty() ? "/tmp" : tmp) + "/nf-sim-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    error = "cannot create a temporary directory from '" + pattern +
            "': " + std::strerror(errno);
    return nullptr;
  }
  TempDir dir;
  dir.path = buf.data();
  dir.keep = options.keepTemps;
  std::string cuPath = dir.add("kernel.cu"), soPath = dir.add("kernel.so"),
              logPath = dir.add("compile.log");
  if (!writeFile(cuPath, cudaSource)) {
    error = "cannot write '" + cuPath + "'";
    return nullptr;
  }

  CompilerFacts facts = compilerFacts(argv, dir);
  // The flags the header is compiled with, precompiled or not.
  for (const char *flag :
       {"-std=c++17", optLevel.c_str(), "-g0", "-fPIC", "-DNF_CUDA_SIM"})
    argv.push_back(flag);
  if (facts.gcc)
    argv.push_back("-fno-weak");
  // The module runs on this CPU: where it has FMA, mma.sync's and wgmma's
  // fused multiply-adds (std::fma) are one instruction, not a call into
  // libm (the transformer example's product in 13.5 s instead of 18.7,
  // the same bits). No other multiply and add is fused, as without it.
  if (hostHasFma() && (facts.gcc || facts.clang))
    argv.insert(argv.end(), {"-mfma", "-ffp-contract=off"});
  argv.insert(argv.end(), options.extraFlags.begin(), options.extraFlags.end());
  std::string pchRoot =
      options.pchDirectory ? *options.pchDirectory : defaultPchDirectory();
  std::string pch;
  if ((facts.gcc || facts.clang) && !pchRoot.empty())
    pch = precompiledHeader(argv, facts.macros, header,
                            facts.gcc ? ".gch" : ".pch", pchRoot, dir);
  auto run = [&](const std::string &include, std::string &command,
                 std::string &runError) {
    std::vector<std::string> full = argv;
    // GCC reads the header's text where the precompiled one does not fit;
    // made an error, the entry is made again (Clang fails anyway).
    if (include == pch && facts.gcc)
      full.insert(full.end(), {"-Winvalid-pch", "-Werror=invalid-pch"});
    for (const std::string &arg :
         {std::string("-shared"), std::string("-include"), include,
          std::string("-x"), std::string("c++"), cuPath, std::string("-o"),
          soPath})
      full.push_back(arg);
    command.clear();
    for (const std::string &arg : full)
      command += (command.empty() ? "" : " ") + arg;
    return runCommand(full, logPath, runError);
  };
  std::string command, runError;
  int status = -1;
  if (!pch.empty()) {
    count(&SimCompileStats::modulesWithPch);
    status = run(pch, command, runError);
  }
  if (status != 0) {
    // Without the precompiled header: the only try, or the second (then
    // the entry was at fault where this one passes).
    status = run(header, command, runError);
    if (status == 0 && !pch.empty()) {
      count(&SimCompileStats::pchFallbacks);
      discardPrecompiledHeader(pch);
    }
  }
  count(&SimCompileStats::modules);
  if (status != 0) {
    error = "compiling the simulated CUDA module failed";
    error += status < 0 ? ": " + runError
                        : " (exit status " + std::to_string(status) + ")";
    error += "\ncommand: " + command + "\n" + readFile(logPath);
    return nullptr;
  }
  std::unique_ptr<SimModule> module = load(soPath, error);
  if (module && options.keepTemps)
    module->keptDir = dir.path;
  return module;
}

SimCompileStats SimModule::compileStats() {
  std::lock_guard<std::mutex> lock(getStatsMutex());
  return getStats();
}

std::unique_ptr<SimModule> SimModule::load(const std::string &sharedObject,
                                           std::string &error) {
  std::unique_ptr<SimModule> module(new SimModule());
  module->handle = ::dlopen(sharedObject.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!module->handle) {
    const char *message = ::dlerror();
    error = "cannot load '" + sharedObject +
            "': " + (message ? message : "unknown error");
    return nullptr;
  }
  auto lookup = [&](const char *name) -> void * {
    void *symbol = ::dlsym(module->handle, name);
    if (!symbol)
      error = "'" + sharedObject + "' is not a simulated CUDA module (no " +
              name + ")";
    return symbol;
  };
  auto version =
      reinterpret_cast<nf_sim_abi_version_fn>(lookup("nf_sim_abi_version"));
  if (!version)
    return nullptr;
  if (version() != NF_SIM_ABI_VERSION) {
    error = "'" + sharedObject + "' has simulator ABI version " +
            std::to_string(version()) + ", expected " +
            std::to_string(NF_SIM_ABI_VERSION);
    return nullptr;
  }
  module->launchFn =
      reinterpret_cast<nf_sim_launch_fn>(lookup("nf_sim_launch"));
  module->numKernelsFn =
      reinterpret_cast<nf_sim_num_kernels_fn>(lookup("nf_sim_num_kernels"));
  module->kernelNameFn =
      reinterpret_cast<nf_sim_kernel_name_fn>(lookup("nf_sim_kernel_name"));
  module->numParamsFn = reinterpret_cast<nf_sim_kernel_num_params_fn>(
      lookup("nf_sim_kernel_num_params"));
  if (!module->launchFn || !module->numKernelsFn || !module->kernelNameFn ||
      !module->numParamsFn)
    return nullptr;
  return module;
}

SimModule::~SimModule() {
  if (handle)
    ::dlclose(handle);
}

std::vector<std::string> SimModule::getKernelNames() const {
  std::vector<std::string> names;
  for (int i = 0, e = numKernelsFn(); i < e; ++i)
    names.push_back(kernelNameFn(i));
  return names;
}

int SimModule::getNumParams(const std::string &kernel) const {
  for (int i = 0, e = numKernelsFn(); i < e; ++i)
    if (kernel == kernelNameFn(i))
      return numParamsFn(i);
  return -1;
}

bool SimModule::launch(const std::string &kernel, Dim3 grid, Dim3 block,
                       size_t dynamicSmemBytes, void **args,
                       const std::vector<SimBuffer> &buffers, SimStats *stats,
                       std::string &error, SimOrder order, unsigned seed,
                       int numArgs) {
  std::vector<nf_sim_buffer> cbuffers;
  for (const SimBuffer &buffer : buffers)
    cbuffers.push_back({buffer.base, buffer.size,
                        buffer.name.empty() ? nullptr : buffer.name.c_str(),
                        buffer.readOnly ? 1 : 0});
  unsigned cgrid[3] = {grid.x, grid.y, grid.z};
  unsigned cblock[3] = {block.x, block.y, block.z};
  char message[4096] = {0};
  nf_sim_stats cstats = {};
  int rc;
  {
    std::lock_guard<std::mutex> lock(getLaunchMutex());
    rc = launchFn(kernel.c_str(), cgrid, cblock, dynamicSmemBytes, args,
                  numArgs, cbuffers.data(), static_cast<int>(cbuffers.size()),
                  static_cast<int>(order), seed, &cstats, message,
                  sizeof(message));
  }
  if (stats)
    *stats = {
        cstats.bytesLoaded,     cstats.bytesStored,  cstats.loads,
        cstats.stores,          cstats.barriers,     cstats.shuffles,
        cstats.blocks,          cstats.threads,      cstats.maxThreadLoads,
        cstats.clusterBarriers, cstats.clusterStores};
  if (rc != 0) {
    error = message[0] ? message : "simulated launch failed";
    return false;
  }
  return true;
}
