/*===- CudaSimABI.h - C ABI of simulated CUDA modules ----------*- C -*-===//
//
// Part of normfuse. Plain C declarations shared by the simulator header
// (lib/Runtime/Sim/nf_cuda_sim.h, force-included into every .cu compiled
// for the host) and the host library that loads the resulting shared object
// (normfuse/Runtime/CudaSim.h). Every simulated module exports the functions
// whose pointer types are declared here; nothing else crosses the boundary.
//
//===----------------------------------------------------------------------===*/

#ifndef NORMFUSE_RUNTIME_CUDASIMABI_H
#define NORMFUSE_RUNTIME_CUDASIMABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bumped whenever anything below changes. */
#define NF_SIM_ABI_VERSION 6

/** The most threads, and blocks, the simulator runs together: a cluster's,
 * or the whole grid of a kernel that synchronizes it (nf_grid_sync), which
 * a GPU launches cooperatively. A runtime plans such grids within these, as
 * it plans them within what a GPU holds at once. */
#define NF_SIM_MAX_RUN_THREADS 8192
#define NF_SIM_MAX_RUN_BLOCKS 64

/** The order in which a block's threads run between two synchronizations. */
enum {
  NF_SIM_ORDER_FORWARD = 0, /**< thread 0 first */
  NF_SIM_ORDER_REVERSE = 1, /**< the last thread first */
  NF_SIM_ORDER_SHUFFLE = 2, /**< a seeded random permutation, new each round */
  /** Forward inside a block; of the blocks that run together (a cluster's,
   * a synchronizing grid's), the first block runs while any of its
   * threads can, and a later one only while all before it wait or have
   * exited: as far apart as the blocks can get. */
  NF_SIM_ORDER_STAGGER = 3
};

/** One device buffer of a launch; global accesses must fall inside one. */
typedef struct nf_sim_buffer {
  const void *base;
  size_t size;      /**< in bytes */
  const char *name; /**< for messages; may be NULL ("buffer #i") */
  int readOnly;     /**< nonzero: a global store into it is an error */
} nf_sim_buffer;

/** A TMA tensor map as the simulator reads it: what a GPU runtime gives
 * cuTensorMapEncodeTiled (tiled mode, no interleave, zeros outside the
 * tensor), in the 128 bytes of the kernel's tensor-map parameter. */
typedef struct nf_sim_tensor_map {
  const void *base;
  int rank;         /**< 1 to 5 */
  int elementBytes; /**< 1, 2, 4 or 8 */
  int swizzle;      /**< 0, 32, 64 or 128 bytes */
  int reserved;
  uint64_t dims[5];    /**< elements, the innermost dimension first */
  uint64_t strides[4]; /**< bytes from one index to the next of dims 1 on */
  uint32_t box[5];     /**< the elements one load copies, per dimension */
} nf_sim_tensor_map;

/** What one launch did, summed over all blocks. */
typedef struct nf_sim_stats {
  uint64_t bytesLoaded; /**< by nf_ldg */
  uint64_t bytesStored; /**< by nf_stg */
  uint64_t loads;       /**< nf_ldg calls */
  uint64_t stores;      /**< nf_stg calls */
  uint64_t barriers;    /**< completed __syncthreads(), per block */
  uint64_t shuffles;    /**< completed warp operations, per warp */
  uint64_t blocks;
  uint64_t threads;
  uint64_t maxThreadLoads;  /**< the most nf_ldg calls of one thread */
  uint64_t clusterBarriers; /**< completed cluster barriers, per cluster */
  uint64_t clusterStores;   /**< stores into another block's shared memory */
} nf_sim_stats;

/** int nf_sim_abi_version(void): NF_SIM_ABI_VERSION of the module. */
typedef int (*nf_sim_abi_version_fn)(void);
/** int nf_sim_num_kernels(void): kernels registered by NF_SIM_ENTRY. */
typedef int (*nf_sim_num_kernels_fn)(void);
/** const char *nf_sim_kernel_name(int i): NULL when out of range. */
typedef const char *(*nf_sim_kernel_name_fn)(int);
/** int nf_sim_kernel_num_params(int i): -1 when out of range. */
typedef int (*nf_sim_kernel_num_params_fn)(int);

/**
 * int nf_sim_launch(kernel, grid, block, dynamicSmemBytes, args, numArgs,
 *                   buffers, numBuffers, order, seed, stats, error,
 *                   errorSize)
 *
 * Runs `kernel` to completion. `args` holds a pointer to each argument, as
 * cuLaunchKernel's kernelParams; `numArgs` < 0 skips the count check.
 * `order` is an NF_SIM_ORDER_* value. Returns 0 on success; otherwise a
 * NUL-terminated message is left in `error` (when errorSize > 0). `stats`
 * may be NULL.
 */
typedef int (*nf_sim_launch_fn)(const char *kernel, const unsigned grid[3],
                                const unsigned block[3],
                                size_t dynamicSmemBytes, void **args,
                                int numArgs, const nf_sim_buffer *buffers,
                                int numBuffers, int order, unsigned seed,
                                nf_sim_stats *stats, char *error,
                                size_t errorSize);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NORMFUSE_RUNTIME_CUDASIMABI_H */
