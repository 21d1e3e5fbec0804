//===- LaunchPlan.h - the host side of a compiled nf function ---*- C++ -*-===//
//
// Part of normfuse. What a runtime does to run a function whose kernels
// were printed as CUDA: the constants to upload (once), the temporaries to
// allocate, then the kernel launches (and copies) in order, each launch
// with its grid, block, shared memory and arguments (a function buffer, a
// temporary, a constant, or an integer). It is
// read off the host function that the nf-cuda-pipeline leaves beside the
// kernels (normfuse/Target/LaunchPlanFromIR.h), for static shapes; plain C++,
// so that runtimes without MLIR can use it.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_RUNTIME_LAUNCHPLAN_H
#define NORMFUSE_RUNTIME_LAUNCHPLAN_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace normfuse::runtime {

/// A TMA tensor map of a buffer (nf.tensor_map, sm_90): the tensor the
/// buffer holds and how a load's box lands in shared memory, which a
/// runtime encodes where the buffer lies (cuTensorMapEncodeTiled: tiled,
/// no interleave, zeros outside the tensor).
struct TensorMapSpec {
  enum class Element { F16, BF16, F32 };
  Element element = Element::F16;
  int rank = 0;
  /// Elements, the innermost dimension first.
  uint64_t dims[5] = {0, 0, 0, 0, 0};
  /// Bytes from one index of dimension d + 1 to the next.
  uint64_t strides[4] = {0, 0, 0, 0};
  /// Elements one load copies, per dimension.
  uint32_t box[5] = {0, 0, 0, 0, 0};
  /// 0, 32, 64 or 128 bytes.
  int swizzle = 0;

  size_t elementBytes() const { return element == Element::F32 ? 4 : 2; }
  /// "f16", "bf16", "f32"; and back (false for another name).
  static const char *name(Element e);
  static bool fromName(const std::string &name, Element &e);
  /// Whether cuTensorMapEncodeTiled takes it for a buffer at `base` of
  /// `bytes` bytes, the tensor inside the buffer: false, and why.
  bool check(uintptr_t base, size_t bytes, std::string &error) const;
};

/// One argument of a launch.
struct LaunchArg {
  enum class Kind {
    /// Buffer `index` of the function: its inputs, then its outputs.
    Buffer,
    /// Temporary `index` of the plan.
    Temporary,
    /// The 64-bit integer `value` (an index argument).
    Integer,
    /// Constant `index` of the plan (read-only: kernels never write it).
    Constant,
    /// The tensor map `map` of the buffer, temporary or constant `index`
    /// (of kind `mapOf`), 128 bytes passed by value.
    TensorMap,
  };
  Kind kind = Kind::Integer;
  int64_t index = 0;
  int64_t value = 0;
  /// An Integer computed when the module is loaded: its value is then
  /// plan.integers[computed]'s (see Residency); -1: `value` as it is.
  int64_t computed = -1;
  /// A TensorMap's buffer kind, and the map.
  Kind mapOf = Kind::Buffer;
  TensorMapSpec map;

  /// A TensorMap's buffer, as an argument of its own.
  LaunchArg mapped() const {
    LaunchArg a;
    a.kind = mapOf;
    a.index = index;
    return a;
  }
};

/// A tensor map's 128 bytes as a kernel parameter (CUtensorMap's size and
/// alignment).
struct alignas(64) TensorMapBytes {
  unsigned char bytes[128];
};

/// How many blocks of one kernel the device runs at once, on all its
/// multiprocessors together: known only once the kernel is compiled and
/// loaded (registers limit it), it sizes the persistent and one-wave grids.
/// A plan is read with `planned` blocks; a runtime computes the device's
/// count and resolves the plan with it (resolveResidencies).
struct Residency {
  std::string kernel;
  unsigned block = 1;
  size_t sharedMemoryBytes = 0;
  /// The target's count from threads and shared memory alone (registers
  /// can only lower it): the plan's values as read.
  int64_t planned = 1;
  /// The kernel runs in clusters of this many blocks: the count is of
  /// whole clusters (cuOccupancyMaxActiveClusters on a GPU), and resolving
  /// rounds it down to a multiple of them, at least one cluster.
  int64_t clusterBlocks = 1;
  /// The count the plan's values were last resolved with (0: planned).
  int64_t resolved = 0;
  int64_t current() const { return resolved ? resolved : planned; }
};

/// An integer of the plan computed from residencies when it is resolved,
/// as the host function computes it: a constant, a residency, or an
/// operation on integers before it (their indexes in `operands`).
struct PlanInteger {
  enum class Op {
    Constant, // operands[0]
    Resident, // residency operands[0]
    Add,
    Sub,
    Mul,
    And,
    Or,
    MinU,
    MaxU,
    MinS,
    MaxS,
    DivU,
    CeilDivU,
    RemU,
    DivS,
    RemS,
    Eq,
    Ne,
    Slt,
    Sle,
    Sgt,
    Sge,
    Ult,
    Ule,
    Ugt,
    Uge,
    Select, // operands[0] ? operands[1] : operands[2]
  };
  Op op = Op::Constant;
  int64_t operands[3] = {0, 0, 0};

  /// How many operands `op` takes (a Constant's and a Resident's are not
  /// integers of the plan).
  static int numOperands(Op op);
  /// "add", "ceildivu", ...; and back (false for an unknown name).
  static const char *name(Op op);
  static bool fromName(const std::string &name, Op &op);
};

struct Launch {
  std::string kernel;
  unsigned grid[3] = {1, 1, 1};
  /// The plan integer each grid size is, or -1 (see LaunchArg::computed).
  int64_t gridComputed[3] = {-1, -1, -1};
  unsigned block[3] = {1, 1, 1};
  size_t sharedMemoryBytes = 0;
  std::vector<LaunchArg> args;
  /// The kernel synchronizes its whole grid (nf_grid_sync), so every block
  /// must be resident at once: a runtime launches it cooperatively
  /// (cuLaunchCooperativeKernel), which refuses a grid the device cannot
  /// hold rather than hang, and the simulator runs its blocks together.
  bool cooperative = false;
  /// A persistent grid's work: where the grid is min(units, a residency),
  /// the units its blocks loop over, as last resolved (0: no such grid).
  int64_t persistentUnits = 0;
  /// The registers a thread the kernel must be compiled to, at least, or
  /// 0: its warpgroups hand registers to each other (setmaxnreg) out of the
  /// block's at launch, counted from this many a thread; compiled to fewer,
  /// an increase would wait forever, so a runtime refuses to launch it
  /// (checkCompiledRegisters).
  int64_t launchRegisters = 0;

  /// Whether the grid has no blocks (a computed grid of 0: nothing runs).
  bool emptyGrid() const { return !grid[0] || !grid[1] || !grid[2]; }
};

/// A device-to-device copy of `bytes` (a returned argument, or a value
/// returned twice, gets a buffer of its own this way).
struct Copy {
  LaunchArg from, to;
  size_t bytes = 0;
};

/// One step of a plan: a launch or a copy.
struct Step {
  enum class Kind { Launch, Copy };
  Kind kind = Kind::Launch;
  Launch launch;
  Copy copy;
};

struct LaunchPlan {
  /// Bytes of each function buffer (inputs, then outputs).
  std::vector<size_t> bufferBytes;
  size_t numInputs = 0;
  /// Bytes of each temporary, allocated before the first launch and freed
  /// after the last.
  std::vector<size_t> temporaryBytes;
  /// The bytes of each constant tensor the kernels read (weights, tables):
  /// a runtime uploads each once and keeps it while it keeps the kernels.
  /// Shared, so that copies of a plan (a kernel's, a package's) hold one
  /// copy of the bytes, and a runtime can key its uploads by their address.
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> constants;
  /// In order.
  std::vector<Step> steps;
  /// The residencies and the integers computed from them (see Residency);
  /// `temporaryComputed`, empty or one per temporary, holds the plan
  /// integer each temporary's bytes are, or -1.
  std::vector<Residency> residencies;
  std::vector<PlanInteger> integers;
  std::vector<int64_t> temporaryComputed;
  /// The temporaries a runtime fills with zero bytes when it allocates them
  /// (a grid barrier's counter), in increasing order; the others start
  /// undefined (the simulator and the GPU check poison them).
  std::vector<int64_t> zeroedTemporaries;

  /// One line per temporary and step, for messages and tests.
  std::string str() const;
  /// Whether every computed index and operand points where it must (an
  /// integer at earlier integers, a residency in range): false, and why,
  /// for a plan read from a file that does not.
  bool checkComputed(std::string &error) const;
};

/// `op` of `in` (as many as it takes), as MLIR's arith ops define it: false,
/// and why, for a division by zero or INT64_MIN / -1.
bool evaluatePlanOp(PlanInteger::Op op, const int64_t *in, int64_t &out,
                    std::string &error);

/// The plan's computed values (grids, integer arguments, temporaries'
/// bytes) from `resident(r)`, the blocks of residency r the device holds,
/// taken from 1 to r.planned (and kept in r.resolved): false, and why,
/// where a grid leaves 0 to 2^32 - 1, a size goes negative or a division is
/// by zero. A launch whose computed grid is 0 blocks launches nothing (the
/// runtimes skip it): a host function chooses between kernels by what the
/// device holds this way (a one-kernel schedule where every block it needs
/// is resident, its fallback where not).
bool resolveResidencies(
    LaunchPlan &plan, const std::function<int64_t(const Residency &)> &resident,
    std::string &error);

/// cuLaunchKernel's parameters of `launch`: each argument's value in
/// `pointers` (a buffer or temporary's address, from `pointerOf(arg)`),
/// `integers` (an Integer) or `maps` (a TensorMap, which `encodeMap(arg,
/// its buffer's address, bytes)` fills: false, and why in `error`, where
/// it cannot), and in `params` a pointer to that value.
template <typename Pointer, typename PointerOf, typename EncodeMap>
bool makeLaunchParams(const Launch &launch, PointerOf pointerOf,
                      EncodeMap encodeMap, std::vector<Pointer> &pointers,
                      std::vector<int64_t> &integers,
                      std::vector<TensorMapBytes> &maps,
                      std::vector<void *> &params, std::string &error) {
  pointers.assign(launch.args.size(), Pointer());
  integers.assign(launch.args.size(), 0);
  maps.assign(launch.args.size(), TensorMapBytes());
  params.assign(launch.args.size(), nullptr);
  for (size_t a = 0; a < launch.args.size(); ++a) {
    const LaunchArg &arg = launch.args[a];
    if (arg.kind == LaunchArg::Kind::Integer) {
      integers[a] = arg.value;
      params[a] = &integers[a];
    } else if (arg.kind == LaunchArg::Kind::TensorMap) {
      if (!encodeMap(arg, pointerOf(arg.mapped()), maps[a], error))
        return false;
      params[a] = &maps[a];
    } else {
      pointers[a] = pointerOf(arg);
      params[a] = &pointers[a];
    }
  }
  return true;
}

/// Whether `launch`'s kernel, compiled to `compiled` registers a thread
/// (CU_FUNC_ATTRIBUTE_NUM_REGS), has the registers its setmaxnreg counts on
/// (Launch::launchRegisters): false, and why, where it has fewer.
bool checkCompiledRegisters(const Launch &launch, int64_t compiled,
                            std::string &error);

/// Bytes of `arg`, a buffer, temporary or constant of `plan` (a tensor
/// map's buffer's).
size_t bytesOf(const LaunchPlan &plan, const LaunchArg &arg);

/// "buffer 2", "temporary 0", "constant 1", "768", "the tensor map of
/// buffer 0".
std::string describe(const LaunchArg &arg);

} // namespace normfuse::runtime

#endif // NORMFUSE_RUNTIME_LAUNCHPLAN_H
