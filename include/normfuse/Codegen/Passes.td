//===- Passes.td - normfuse code generation passes ---------*- tablegen -*-===//
//
// Part of normfuse. Passes that lower nf ops towards machine code. The CPU
// path: nf-lower-to-loops turns nf ops into scf/vector loops over buffers,
// nf-expand-math rewrites transcendental functions as vectorizable
// polynomials; the nf-cpu-pipeline (Pipelines.h) strings them together with
// bufferization and the conversion to the LLVM dialect. TOSA ops beside the
// nf ops take upstream's route: nf-lower-tosa-to-linalg before
// bufferization, nf-lower-linalg-to-loops after it.
//
//===----------------------------------------------------------------------===//

#ifndef NORMFUSE_CODEGEN_PASSES_TD
#define NORMFUSE_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def NFLowerToLoopsPass : Pass<"nf-lower-to-loops", "ModuleOp"> {
  let summary = "Lower nf ops to parallel loops over buffers";
  let description = [{
    Rewrites every nf op of a function on tensors as loops over its
    operands' buffers (`bufferization.to_memref`) that write freshly
    allocated result buffers (returned through `bufferization.to_tensor`),
    so that one-shot bufferization can take the function from there.

    Rows (the outer dimensions of a norm, chunks of a pointwise op) become an
    `scf.parallel` loop; the inner loops work on `vector-width` lanes with a
    scalar tail. Reductions accumulate in f32 (f64 for f64 data), in blocks
    of vectors whose partial sums are combined in f64, and the variance is
    computed in two passes over the row (never E[x^2] - E[x]^2). f16 and bf16
    data are loaded and stored as such and extended to f32 for arithmetic.

    An `nf.fused` whose body is a forward norm (layer, rms, group or
    instance norm) with pointwise ops before and after it, or a matmul with
    pointwise ops after it, becomes the producer's one loop nest: the ops
    before it run on its input as it is loaded, those after it on its result
    before it is stored, and no intermediate tensor is written. Any other
    `nf.fused` is inlined and its ops lowered one after the other.

    Channels-last GroupNorm and InstanceNorm of many images cut the images
    into one slice per thread, which takes a call to the OpenMP runtime's
    `omp_get_max_threads`; the pass declares it in the module (and removes
    the declaration if nothing calls it), so it runs on modules.

    An nf op this pass cannot lower yet is reported as an error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"8",
           "Lanes of the inner vector loops (1 disables vectorization)">
  ];
}

def NFExpandMathPass : Pass<"nf-expand-math"> {
  let summary = "Expand math functions into vectorizable arithmetic";
  let description = [{
    Rewrites `math.tanh`, `math.erf`, `math.exp` and friends on f32 scalars
    and vectors as MLIR's polynomial approximations, which vectorize,
    expands bf16 conversions into integer arithmetic the host CPU supports,
    and signed floor and ceiling divisions (which the LLVM conversion does
    not take) into a division and a correction.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def NFLowerTosaToLinalgPass : Pass<"nf-lower-tosa-to-linalg", "func::FuncOp"> {
  let summary = "Lower TOSA ops and arith/math ops on tensors to linalg";
  let description = [{
    Runs upstream's tosa-make-broadcastable, tosa-to-linalg-named,
    tosa-to-linalg, tosa-to-arith, tosa-to-tensor and
    convert-elementwise-to-linalg on a function that holds a TOSA op or an
    elementwise arith/math op on tensors, leaving linalg, tensor and arith
    ops on tensors for one-shot bufferization. A function without such ops
    is left untouched (the greedy rewrites among these passes would fold
    nf ops too). No canonicalization: nf ops must reach nf-lower-to-loops
    unchanged.

    First, a function with unsigned (or signed) integer types is rewritten
    over signless integers, which upstream's lowerings take: the same bits
    in every buffer, with unsigned comparisons, maximum, minimum,
    reductions, argmax and casts rewritten to keep their meaning
    (normfuse/Codegen/Common/SignlessIntegers.h); an op whose meaning on
    unsigned integers normfuse does not keep is an error at it.

    The tensor arguments of a lowered function are marked
    `bufferization.writable = false`: linalg ops may name an input as their
    output, and bufferization must copy it rather than write the caller's
    buffer.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::index::IndexDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def NFLowerLinalgToLoopsPass : Pass<"nf-lower-linalg-to-loops", "func::FuncOp"> {
  let summary = "Lower linalg ops on buffers to loops";
  let description = [{
    Rewrites each linalg op on buffers as loops: its parallel dimensions as
    one `scf.parallel` (which the CPU pipeline hands to OpenMP), its
    reductions as `scf.for` inside. A sum (a body that adds a term to the
    output, over one reduction dimension) is taken in f64 and rounded once
    into the output, not added into it term by term. Convolutions become
    sequential loops: LLVM 19's OpenMP translation crashes on them as
    parallel loops. Only
    the linalg ops are rewritten: the rest of the function is left as it
    is.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def NFChooseGPUSchedulesPass : Pass<"nf-choose-gpu-schedules", "ModuleOp"> {
  let summary = "Write each op's GPU schedule on it";
  let description = [{
    The first step of `nf-lower-to-gpu`, alone: every forward row norm
    (`nf.layer_norm`, `nf.rms_norm`, `nf.group_norm`, `nf.instance_norm`,
    inside an `nf.fused` group or not), every norm gradient, every
    per-channel reduction (`nf.bias_add_grad`, the batch norms), every
    matrix product (`nf.matmul`, `nf.conv2d` and its gradients, alone or
    an `nf.fused` group's producer), every elementwise op (`nf.relu`,
    `nf.gelu`, `nf.silu`, `nf.add`, `nf.mul`, `nf.bias_add`, the
    activation gradients, `nf.batch_norm_inference`), every
    `linalg.generic` (all-parallel, or a reduction), `tensor.pad` and
    concat (a chain of `tensor.insert_slice`s, the schedule on its last)
    without an `nf.gpu_schedule` attribute gets the schedule the CUDA
    schedule layer chooses for the `arch` given, as text
    (`"cluster-row threads-per-row=256 rows-per-block=1 vector=4
    registers=8 cluster=4"`, `"tensor-core-product tile=128x128x32
    warps=2x2 stages=3"`); one that has the attribute keeps it, checked
    against the op: a schedule that cannot run the op (a vector that does
    not divide its rows, threads whose registers do not hold a row, a
    cluster on a target without clusters, tensor cores for f64, ...) is an
    error at the op, with the reason. `nf-lower-to-gpu` reads the
    attribute and chooses no schedule itself, so a schedule can be seen,
    written by hand or by a tuner, and lowered. Inside `nf-lower-to-gpu`
    this step runs after TOSA (and arith/math on tensors) is lowered to
    linalg, elementwise generics are fused and named linalg ops are
    generalized, so that every kernel's op exists to carry its schedule;
    run alone, it schedules the ops the input has.
  }];
  // A product's static sizes are read from the index arithmetic its
  // lowering builds, in a scratch block.
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect"
  ];
  let options = [
    Option<"arch", "arch", "std::string",
           /*default=*/"::normfuse::runtime::kDefaultGpuTarget",
           "The GPU target the schedules are chosen for (as nf-lower-to-gpu's)">,
    Option<"rowNormSchedule", "row-norm-schedule", "std::string",
           /*default=*/"\"auto\"",
           "Force the row-norm schedule (as nf-lower-to-gpu's)">,
    Option<"allowTf32", "allow-tf32", "bool", /*default=*/"false",
           "f32 products may run on tensor cores as tf32 (as nf-lower-to-gpu's)">
  ];
}

def NFLowerToGPUPass : Pass<"nf-lower-to-gpu", "ModuleOp"> {
  let summary = "Lower nf ops to GPU kernels launched from the host function";
  let description = [{
    Rewrites every nf op of a function on tensors as a kernel (a `gpu.func`
    in the module's `gpu.module @nf_kernels`, written with gpu, scf, arith,
    math, memref and vector ops) and its `gpu.launch_func` from the
    function, on the op's buffers (`bufferization.to_memref`) and freshly
    allocated result buffers (`bufferization.to_tensor`), so that one-shot
    bufferization takes the host function from there: its launches, their
    grid and block sizes and the temporaries between them are all in the
    IR. Kernels take flat `memref<?xT>` buffers and `index` sizes; each
    records the schedule it follows (`nf.schedule`, chosen by the CUDA
    schedule layer for the `arch` given) and its block size
    (`known_block_size`). Row norms are lowered by the schedule written on
    them (`nf.gpu_schedule`), which the pass's first step
    (`nf-choose-gpu-schedules`) chooses where none is. `nf-translate --nf-to-cuda` prints the kernels as
    CUDA C++.

    Lowered today: every nf op (norms and their gradients, pointwise ops,
    channel reductions, matmul and conv2d and their gradients). An
    `nf.fused` norm or product with pointwise ops around it becomes one
    kernel (two for a split row); any other `nf.fused` group is inlined and
    its ops run one kernel each. TOSA ops, and arith/math ops on tensors,
    go to linalg first as on the CPU (`nf-lower-tosa-to-linalg`); chains of
    elementwise linalg ops are fused, and each linalg op whose loops are all
    parallel (elementwise ops, broadcasts, transposes) becomes one kernel
    reading its operands through their indexing maps, a splat constant as
    an immediate, any other constant as a buffer (a memref.global after
    bufferization, which the launch plan uploads once). Reductions, slices,
    pads, concatenations, gathers, windows (pooling), argmax and integer
    tensors get kernels too, and `tosa.matmul`/`tosa.conv2d` run on the nf
    product kernels (docs/CUDA.md); any other op is reported as an error
    naming it and the reason.
  }];
  let dependentDialects = [
    "::mlir::nf::NFDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::index::IndexDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
  let options = [
    Option<"arch", "arch", "std::string",
           /*default=*/"::normfuse::runtime::kDefaultGpuTarget",
           "The GPU target the schedules are chosen for: sm_XY or "
           "compute_XY (75 and up) or a part (h100-pcie, a100, ...), "
           "optionally with :key=value figures (sm_90:sms=114)">,
    Option<"rowNormSchedule", "row-norm-schedule", "std::string",
           /*default=*/"\"auto\"",
           "Force the row-norm schedule: auto, warp-rows, block-row-registers, "
           "block-row-streaming, split-row, channels-last-groups (group "
           "and instance norms in NHWC; auto for the rest) or cluster-row "
           "(layer and RMS norms on a target with clusters; auto for the "
           "rest), sized for tests; with ':full' (split-row:full) at the "
           "sizes the schedule layer gives the kind">,
    Option<"allowTf32", "allow-tf32", "bool", /*default=*/"false",
           "Run f32 matmuls and convolutions on tensor cores as tf32 "
           "(sm_80 and newer): operands rounded to 10 fraction bits, f32 "
           "sums. Off, f32 products keep full f32 precision">
  ];
}

def NFElideResultCopiesPass : Pass<"nf-elide-result-copies", "func::FuncOp"> {
  let summary = "Write results of dynamic shape straight into their out-parameters";
  let description = [{
    Part of `nf-cuda-pipeline`, after bufferization. Bufferization leaves a
    result of dynamic shape in a fresh allocation (sized on the host),
    copied into its out-parameter at the end (it hoists only static
    allocations); on the GPU that copy is a second pass over the result.
    Where the allocation is the copy's whole source, is used only before
    the copy, has the out-parameter's type, and the out-parameter is used by
    nothing else, the out-parameter takes the allocation's place and the
    copy goes. Anything else is left as it is.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

#endif // NORMFUSE_CODEGEN_PASSES_TD

def NFAlignStreamingStoresPass : Pass<"nf-align-streaming-stores"> {
  let summary = "State the alignment of nf's non-temporal vector stores";
  let description = [{
    The nf loop lowering emits a non-temporal vector store only at an
    address that is a multiple of 16 bytes (it checks the outputs' base
    pointers at run time and emits them only for rows of whole vectors of
    a multiple of 16 bytes: see StreamingStores in
    lib/Codegen/CPU/LoopUtils.h). The memref-to-LLVM conversion gives every
    store the alignment of its element type, and x86 then splits an
    under-aligned non-temporal vector store into 8-byte ones, which are
    slower than plain stores. This pass, run on the LLVM dialect, sets the
    alignment of each non-temporal `llvm.store` of a vector of a multiple
    of 16 bytes to 16, in the functions that lowering marked with the unit
    attribute `nf.streaming_stores`; other functions are left alone.
  }];
}
