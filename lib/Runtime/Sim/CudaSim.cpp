//===- CudaSim.cpp - run printed CUDA kernels on the host CPU ---*- C++ -*-===//
//
// Part of normfuse. See CudaSim.h. The compiler runs through posix_spawnp
// with an argument vector (no shell), its output goes to a log file in a
// fresh temporary directory, and the shared object is opened RTLD_LOCAL so
// that modules never see each other's symbols. GCC also gets -fno-weak (see
// isGcc).
//
//===----------------------------------------------------------------------===//

#include "normfuse/Runtime/CudaSim.h"

/// The compiler when neither the options nor $NF_SIM_CXX name one: the one
/// this library was built with, which is known to be installed.
#ifndef NF_SIM_DEFAULT_CXX
#define NF_SIM_DEFAULT_CXX "c++"
#endif

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
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

/// Whether `compiler` is GCC, which needs -fno-weak: it refuses to mix the
/// COMDAT statics of inline functions and templates with other variables in
/// one named section, and every __shared__ variable is in section nf_smem.
/// Asked once per compiler command; an error here is left for the real
/// compile to report.
bool isGcc(const std::vector<std::string> &compiler, TempDir &dir) {
  static std::mutex mutex;
  static std::map<std::string, bool> cache;
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
    return false;
  std::string macros = readFile(logPath);
  bool gcc = macros.find("#define __GNUC__ ") != std::string::npos &&
             macros.find("#define __clang__ ") == std::string::npos;
  cache[key] = gcc;
  return gcc;
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

  bool gcc = isGcc(argv, dir);
  for (const char *flag : {"-std=c++17", optLevel.c_str(), "-g0", "-fPIC",
                           "-shared", "-DNF_CUDA_SIM", "-include"})
    argv.push_back(flag);
  argv.push_back(header);
  if (gcc)
    argv.push_back("-fno-weak");
  argv.insert(argv.end(), options.extraFlags.begin(), options.extraFlags.end());
  for (const std::string &arg : {std::string("-x"), std::string("c++"), cuPath,
                                 std::string("-o"), soPath})
    argv.push_back(arg);

  std::string runError;
  int status = runCommand(argv, logPath, runError);
  if (status != 0) {
    std::string command;
    for (const std::string &arg : argv)
      command += (command.empty() ? "" : " ") + arg;
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
