"""normfuse: fused normalization and epilogue kernels, compiled from MLIR and
called on the arrays you already have.

    import numpy as np, normfuse
    layer_norm = normfuse.compile("model.mlir", "layer_norm")
    y, mean, rstd = layer_norm(x, scale, bias)

`compile` takes MLIR text or the path of a .mlir file (a `str` without a `{`
is read as a path), fuses it (raises decomposed TOSA/arith chains to nf ops
and fuses each producer with its pointwise neighbours) unless `fuse=False`,
and returns a `Function`. A call, `fn(*arrays, out=None, stream=None)`,
takes arrays in argument order: NumPy arrays (f16, f32, f64, and
ml_dtypes.bfloat16) or anything that speaks DLPack (PyTorch, JAX), without
copying them, and returns NumPy arrays, or writes into the arrays given as
`out=`.

On target="cuda", arrays in CUDA device memory (PyTorch CUDA tensors, CuPy
arrays, any DLPack producer on device 0) are used in place, and results
are allocated on the device by the library of the first device argument
(torch.empty, cupy.empty; another library's arrays need `out=`). A call
runs on `stream` (an int CUstream handle, 0 the legacy default stream, or a
torch.cuda.Stream or cupy.cuda.Stream), by default on PyTorch's current
stream when an array is a PyTorch tensor, else CuPy's for CuPy arrays, else
0; it returns once its work is enqueued. Host arrays may be mixed in: they
are copied to the device and back, and the call then waits for its stream.
The cpu and cuda-sim targets take host arrays and no stream. PyTorch and
CuPy are imported only for arrays of theirs.

Errors raise exceptions carrying normfuse's message: `CompileError` for IR
that does not parse, verify or lower, or an unknown function; `TypeError`
for a wrong number of arguments or a wrong dtype, or a stream of the wrong
type; `ValueError` for a wrong shape, a non-contiguous array, an array in
memory the target cannot take (device arrays on cpu and cuda-sim), or a
stream on a target other than cuda. A rejected call writes nothing.
"""

from __future__ import annotations

import importlib
import os
import statistics
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple, Union

import ml_dtypes
import numpy as np

from . import _normfuse
from ._normfuse import CompileError

__all__ = [
    "BenchResult",
    "CompileError",
    "Function",
    "Signature",
    "TensorType",
    "compile",
    "fuse",
    "kernel_graph",
]

TARGETS = ("cpu", "cuda-sim", "cuda")
# The most threads a CPU call may ask for (nf-run's bound too).
MAX_THREADS = 1024

_NUMPY_DTYPES = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "ui8": np.dtype(np.uint8),
    "ui16": np.dtype(np.uint16),
    "ui32": np.dtype(np.uint32),
    "ui64": np.dtype(np.uint64),
}
_BF16 = np.dtype(ml_dtypes.bfloat16)

Source = Union[str, bytes, "os.PathLike[str]"]


@dataclass(frozen=True)
class TensorType:
    """One argument or result: its dtype ("f16", "bf16", "f32", "f64") and
    shape, with None for a dynamic dimension."""

    dtype: str
    shape: Tuple[Optional[int], ...]

    def __str__(self) -> str:
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        return f"tensor<{dims}{self.dtype}>"


@dataclass(frozen=True)
class Signature:
    """What a Function takes and returns."""

    inputs: Tuple[TensorType, ...]
    outputs: Tuple[TensorType, ...]

    def __str__(self) -> str:
        ins = ", ".join(map(str, self.inputs))
        outs = ", ".join(map(str, self.outputs))
        return f"({ins}) -> ({outs})"


@dataclass(frozen=True)
class BenchResult:
    """The times of `runs` calls after one untimed warm-up call."""

    runs: int
    median_ms: float
    min_ms: float
    mean_ms: float
    times_ms: Tuple[float, ...]

    def __str__(self) -> str:
        return (
            f"{self.runs} runs: median {self.median_ms:.4f} ms, "
            f"min {self.min_ms:.4f} ms, mean {self.mean_ms:.4f} ms"
        )


def _read_source(source: Source) -> Tuple[str, bool]:
    """(MLIR text or a path, whether it is a path)."""
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
        if not isinstance(source, str):
            source = source.decode()
    elif isinstance(source, bytes):
        source = source.decode()
    elif not isinstance(source, str):
        raise TypeError(
            f"source must be MLIR text or a path, not {type(source).__name__}"
        )
    else:
        if "{" in source:
            return source, False
    if not os.path.isfile(source):
        raise FileNotFoundError(
            f"no MLIR file {source!r} (a source without '{{' is read as a path)"
        )
    return source, True


def _source_text(source: Source) -> Tuple[str, str]:
    """(MLIR text, the name its diagnostics give)."""
    text, is_path = _read_source(source)
    if not is_path:
        return text, "<ir>"
    with open(text, encoding="utf-8") as f:
        return f.read(), text


def _signature(types) -> Tuple[TensorType, ...]:
    return tuple(TensorType(dtype, tuple(shape)) for dtype, shape in types)


# DLPack's device types (dlpack.h's DLDeviceType).
_KDL_CPU = 1
_KDL_CUDA = 2
_KDL_CUDA_MANAGED = 13
_CUDA_DEVICE_TYPES = (_KDL_CUDA, _KDL_CUDA_MANAGED)


class _NumPy:
    """NumPy arrays: handed over by the buffer protocol; bf16
    (ml_dtypes.bfloat16) as a uint16 view flagged as bf16."""

    def ref(self, a, cuda):
        """(what the extension takes, whether it is a bf16 view, whether
        it is in CUDA memory); `cuda`: whether the caller needs the last."""
        if a.dtype == _BF16:
            return a.view(np.uint16), True, False
        return a, False, False


class _Scalar(_NumPy):
    """NumPy scalars, as 0-d arrays."""

    def ref(self, a, cuda):
        return _NumPy.ref(self, np.asarray(a), cuda)


class _DLPack:
    """Anything else with __dlpack__ (JAX, ...): handed over by DLPack."""

    def ref(self, a, cuda):
        if not cuda:
            return a, False, False
        device = getattr(a, "__dlpack_device__", None)
        return a, False, device is not None and device()[0] in _CUDA_DEVICE_TYPES


class _Torch:
    """PyTorch tensors. CPU and CUDA tensors are described by their
    attributes (address, shape, strides, dtype, device), which costs less
    than a DLPack export; tensors on other devices go by DLPack (which says
    where they are). Results are allocated with torch.empty, by PyTorch's
    caching allocator; the default stream is PyTorch's current one."""

    def __init__(self, torch):
        self.torch = torch
        self.names = {
            torch.float16: "f16",
            torch.bfloat16: "bf16",
            torch.float32: "f32",
            torch.float64: "f64",
        }
        # Bool and integers (uint16 to uint64 are PyTorch 2.3's).
        for torch_name, name in (("bool", "i1"), ("int8", "i8"), ("int16", "i16"),
                                 ("int32", "i32"), ("int64", "i64"), ("uint8", "ui8"),
                                 ("uint16", "ui16"), ("uint32", "ui32"),
                                 ("uint64", "ui64")):
            dtype = getattr(torch, torch_name, None)
            if dtype is not None:
                self.names[dtype] = name
        self.dtypes = {name: dtype for dtype, name in self.names.items()}
        # The current stream's handle without making a Stream object (what
        # torch._inductor's generated code calls); the public API otherwise.
        self.raw_stream = getattr(
            getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None
        )

    def ref(self, t, cuda):
        if t.is_cuda:
            device = _KDL_CUDA
        elif t.is_cpu:
            device = _KDL_CPU
        else:
            return t, False, False
        dtype = t.dtype
        name = self.names.get(dtype) or str(dtype).rpartition(".")[2]
        described = (t.data_ptr(), t.shape, t.stride(), name, device, t.get_device())
        return described, False, cuda and device == _KDL_CUDA

    def empty(self, shape, dtype, like):
        return self.torch.empty(shape, dtype=self.dtypes[dtype], device=like.device)

    def current_stream(self, like):
        if self.raw_stream is not None:
            return self.raw_stream(like.get_device())
        return self.torch.cuda.current_stream(like.device).cuda_stream


class _CuPy:
    """CuPy arrays (CUDA memory): handed over by DLPack. Results are
    allocated with cupy.empty on the array's device, by CuPy's memory pool;
    the default stream is CuPy's current one."""

    def __init__(self, cupy):
        self.cupy = cupy

    def ref(self, a, cuda):
        return a, False, cuda

    def empty(self, shape, dtype, like):
        with like.device:
            return self.cupy.empty(shape, _NUMPY_DTYPES[dtype])

    def current_stream(self, like):
        with like.device:
            return self.cupy.cuda.get_current_stream().ptr


_NUMPY = _NumPy()
_SCALAR = _Scalar()
_DLPACK = _DLPack()
# How each type of array is handed over, found on its first call.
_LIBRARIES = {np.ndarray: _NUMPY}
# One _Torch or _CuPy per module object.
_MODULE_LIBRARIES = {}


def _module_library(name: str, kind):
    module = importlib.import_module(name)
    library = _MODULE_LIBRARIES.get(module)
    if library is None:
        library = _MODULE_LIBRARIES[module] = kind(module)
    return library


def _find_library(tp):
    """How arrays of type `tp` are handed over, or None for a type that is
    not an array. PyTorch and CuPy are imported only here, for a type that
    comes from them (so they are imported already)."""
    if issubclass(tp, np.ndarray):
        return _NUMPY
    if issubclass(tp, np.generic):
        return _SCALAR
    packages = {c.__module__.partition(".")[0] for c in tp.__mro__}
    if "torch" in packages:
        torch = _module_library("torch", _Torch)
        if issubclass(tp, torch.torch.Tensor):
            return torch
    if "cupy" in packages:
        cupy = _module_library("cupy", _CuPy)
        if issubclass(tp, cupy.cupy.ndarray):
            return cupy
    if hasattr(tp, "__dlpack__"):
        return _DLPACK
    return None


def _library(a):
    tp = type(a)
    try:
        return _LIBRARIES[tp]
    except KeyError:
        library = _LIBRARIES[tp] = _find_library(tp)
        return library


# The largest CUstream handle.
_MAX_STREAM = 2**64 - 1


def _stream_handle(stream) -> int:
    """The CUstream handle of `stream`: an int (0 is the legacy default
    stream), or an object with .cuda_stream (torch.cuda.Stream), .ptr
    (cupy.cuda.Stream) or __cuda_stream__() (the CUDA stream protocol)."""
    handle = stream
    if not isinstance(stream, int):
        if hasattr(stream, "cuda_stream"):
            handle = stream.cuda_stream
        elif hasattr(stream, "ptr"):
            handle = stream.ptr
        elif hasattr(stream, "__cuda_stream__"):
            handle = stream.__cuda_stream__()[1]
        else:
            raise TypeError(
                "stream must be an int (a CUstream handle, 0 for the legacy "
                "default stream) or a stream object with .cuda_stream "
                "(torch.cuda.Stream) or .ptr (cupy.cuda.Stream), not "
                f"{type(stream).__name__}"
            )
    if not isinstance(handle, int) or isinstance(handle, bool):
        raise TypeError(
            f"stream must be an int or a stream object, not {type(handle).__name__}"
            + ("" if handle is stream else f" (the handle of a {type(stream).__name__})")
        )
    if not 0 <= handle <= _MAX_STREAM:
        raise ValueError(f"stream must be a CUstream handle (0 to 2**64-1), not {handle}")
    return handle


class Function:
    """A compiled function. Call it with arrays in argument order."""

    def __init__(self, impl, threads: int, sim_order: str = "forward"):
        self._impl = impl
        self._threads = threads
        self._sim_order = sim_order
        self._signature = Signature(
            _signature(impl.inputs), _signature(impl.outputs)
        )
        self._name = impl.name
        self._target = impl.target
        self._cuda = self._target == "cuda"
        self._num_inputs = len(self._signature.inputs)
        self._num_outputs = len(self._signature.outputs)
        self._out_dtypes = tuple(t.dtype for t in self._signature.outputs)
        self._out_numpy_dtypes = tuple(_NUMPY_DTYPES[d] for d in self._out_dtypes)
        if all(d is not None for t in self._signature.outputs for d in t.shape):
            self._out_shapes = tuple(t.shape for t in self._signature.outputs)
        else:
            self._out_shapes = None
        # Result shapes by input shapes (dynamic dimensions).
        self._shapes_by_inputs = {}

    @property
    def name(self) -> str:
        return self._name

    @property
    def target(self) -> str:
        return self._target

    @property
    def signature(self) -> Signature:
        return self._signature

    @property
    def launches(self) -> Optional[int]:
        """The GPU kernels one call launches (cuda and cuda-sim targets);
        None on the CPU, which runs one host function, and for a function
        of dynamic shape (its launch plan is made per input shapes)."""
        return self._impl.launches

    def __repr__(self) -> str:
        return f"<normfuse.Function @{self.name} {self._signature} on {self.target}>"

    def __call__(self, *arrays, out=None, stream=None):
        """Runs the function; returns its result (a tuple when it has
        several), or `out` when given. On the cuda target it runs on
        `stream` (see `compile`)."""
        inputs, in_views, outputs, out_views, handle, returned = self._call(
            arrays, out, stream
        )
        self._impl.run(
            inputs, in_views, outputs, out_views, self._threads, handle, self._sim_order
        )
        return returned

    def bench(self, *arrays, runs: int = 100, out=None, stream=None) -> BenchResult:
        """Times `runs` calls (after one untimed call) on these arrays, by
        the host's clock. With device arrays, each call is timed until its
        stream has finished (the stream is synchronized after each call)."""
        if not isinstance(runs, int) or isinstance(runs, bool) or runs < 1:
            raise ValueError(f"runs must be a positive integer, not {runs!r}")
        inputs, in_views, outputs, out_views, handle, _ = self._call(
            arrays, out, stream
        )
        seconds = self._impl.bench(
            inputs, in_views, outputs, out_views, self._threads, handle, self._sim_order, runs
        )
        times = tuple(s * 1e3 for s in seconds)
        return BenchResult(
            runs=runs,
            median_ms=statistics.median(times),
            min_ms=min(times),
            mean_ms=statistics.fmean(times),
            times_ms=times,
        )

    def _arity(self, what: str, want: int, got: int) -> TypeError:
        return TypeError(
            f"@{self.name} takes {want} {what} ({self._signature}), got {got}"
        )

    def _refs(self, arrays, role: str):
        """(what the extension takes, bf16 flags, [(index, library, array)]
        of the arrays in CUDA memory (found on the cuda target only))"""
        cuda = self._cuda
        refs = []
        views = []
        on_device = []
        for i, a in enumerate(arrays):
            library = _library(a)
            if library is None:
                raise TypeError(
                    f"{role} {i + 1} of @{self.name} is a {type(a).__name__}, "
                    "not an array (a NumPy array or an object with __dlpack__)"
                )
            ref, view, device = library.ref(a, cuda)
            refs.append(ref)
            views.append(view)
            if device:
                on_device.append((i, library, a))
        return refs, views, on_device

    def _call(self, arrays, out, stream):
        """(inputs, their bf16 flags, outputs, theirs, the stream handle,
        what the call returns)"""
        if len(arrays) != self._num_inputs:
            raise self._arity("arguments", self._num_inputs, len(arrays))
        inputs, in_views, on_device = self._refs(arrays, "argument")
        if out is None:
            results = self._allocate(arrays, on_device)
            outputs, out_views, _ = self._refs(results, "output")
            returned = results[0] if self._num_outputs == 1 else tuple(results)
        else:
            given = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            if len(given) != self._num_outputs:
                raise self._arity("results", self._num_outputs, len(given))
            outputs, out_views, out_on_device = self._refs(given, "output")
            on_device += out_on_device
            returned = out
        if stream is not None:
            if not self._cuda:
                raise ValueError(
                    f"stream applies to the cuda target, not {self._target}"
                )
            handle = _stream_handle(stream)
        elif on_device:
            handle = self._current_stream(on_device)
        else:
            handle = 0
        return inputs, in_views, outputs, out_views, handle, returned

    @staticmethod
    def _current_stream(on_device) -> int:
        """The stream a call on these device arrays runs on by default:
        PyTorch's current stream when one is a PyTorch tensor, else CuPy's
        when one is a CuPy array, else the legacy default stream."""
        fallback = None
        for _, library, a in on_device:
            if isinstance(library, _Torch):
                return library.current_stream(a)
            if fallback is None and isinstance(library, _CuPy):
                fallback = (library, a)
        return fallback[0].current_stream(fallback[1]) if fallback else 0

    def _result_shapes(self, arrays):
        if self._out_shapes is not None:
            return self._out_shapes
        key = tuple(tuple(a.shape) for a in arrays)
        shapes = self._shapes_by_inputs.get(key)
        if shapes is None:
            shapes = self._impl.output_shapes(
                [tuple(int(d) for d in shape) for shape in key]
            )
            shapes = self._shapes_by_inputs[key] = tuple(tuple(s) for s in shapes)
        return shapes

    def _allocate(self, arrays, on_device):
        """New results: NumPy arrays, or on the cuda target with an
        argument in device memory, device arrays of the first such
        argument's library."""
        shapes = self._result_shapes(arrays)
        if not on_device:
            return [np.empty(s, d) for s, d in zip(shapes, self._out_numpy_dtypes)]
        index, library, like = on_device[0]
        what = f"argument {index + 1} of @{self.name}"
        if not isinstance(library, (_Torch, _CuPy)):
            raise ValueError(
                f"{what} is a CUDA array of {type(like).__module__}."
                f"{type(like).__qualname__}; normfuse allocates device results "
                "with PyTorch or CuPy only: pass out= (arrays to write the "
                "results into)"
            )
        if isinstance(library, _CuPy) and "bf16" in self._out_dtypes:
            result = self._out_dtypes.index("bf16") + 1
            raise ValueError(
                f"result {result} of @{self.name} is bf16, and CuPy has no "
                f"bfloat16 dtype to allocate it on the device of {what}: pass "
                "out= (e.g. PyTorch tensors of torch.bfloat16)"
            )
        return [
            library.empty(s, d, like) for s, d in zip(shapes, self._out_dtypes)
        ]


def compile(
    source: Source,
    entry: str,
    *,
    fuse: bool = True,
    target: str = "cpu",
    threads: Optional[int] = None,
    allow_tf32: bool = False,
    row_norm_schedule: str = "auto",
    sim_order: str = "forward",
    cuda_arch: Optional[str] = None,
) -> Function:
    """Compiles function `entry` of `source` (MLIR text or a .mlir path).

    fuse: run the fusion pipeline first (the default); False runs the
      function op by op as written.
    target: "cpu" (LLVM JIT for this CPU), "cuda-sim" (the CUDA kernels on
      normfuse's CPU simulator: slow, for checking), or "cuda" (the GPU,
      which also takes CUDA device arrays and a stream; see the module's
      documentation).
    threads: CPU threads for each call (1 to 1024); None lets OpenMP choose.
    allow_tf32: run f32 matmuls and convolutions on tensor cores as tf32
      (cuda and cuda-sim targets, sm_80 and newer), as PyTorch's
      allow_tf32: each operand rounded to 10 fraction bits, products summed
      in f32. Off by default: f32 products keep f32 precision.
    row_norm_schedule: how layer and RMS norms run on the cuda targets:
      "auto" (the schedule layer's choice for the shape and GPU), or one
      forced for every row norm: "warp-rows", "block-row-registers",
      "block-row-streaming", "split-row", "channels-last-groups" or
      "channels-last-one-kernel" (group norms in NHWC) or "cluster-row"
      (GPUs with thread-block clusters). These are sized for tests (small
      blocks and chunks, gradients on two blocks, so that small shapes
      reach every path); with ":full" ("split-row:full") the kind runs at
      the sizes the schedule layer gives it, for comparing schedules on a
      GPU (docs/CUDA.md).
    sim_order: cuda-sim: the order the simulator runs each block's threads
      in between synchronizations: "forward", "reverse", "shuffle" or
      "shuffle:SEED" (a new permutation each round), or "stagger" (forward,
      a cluster's blocks as far apart as they can run). A kernel without
      races gives the same results in every order: running in several is a
      check for races.
    cuda_arch: cuda-sim: the GPU its kernels are made for, as nf-run's
      --cuda-arch takes it: sm_XY (75 and up; "sm_90a" for the Hopper
      kernels: wgmma, TMA, clusters), or a part ("a100", "h100-pcie"),
      optionally with figures ("sm_90:sms=114"). None: an H100 SXM
      (sm_90). The cuda target compiles for the GPU it finds.
    """
    if not isinstance(entry, str):
        raise TypeError(f"entry must be a function name, not {type(entry).__name__}")
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r} (one of {', '.join(TARGETS)})")
    if threads is not None:
        if not isinstance(threads, int) or isinstance(threads, bool):
            raise TypeError(f"threads must be an integer, not {threads!r}")
        if not 1 <= threads <= MAX_THREADS:
            raise ValueError(f"threads must be from 1 to {MAX_THREADS}, not {threads}")
        if target != "cpu":
            raise ValueError(f"threads applies to the cpu target, not {target}")
    if not isinstance(allow_tf32, bool):
        raise TypeError(f"allow_tf32 must be True or False, not {allow_tf32!r}")
    if allow_tf32 and target == "cpu":
        raise ValueError("allow_tf32 applies to the cuda and cuda-sim targets, not cpu")
    if not isinstance(row_norm_schedule, str):
        raise TypeError(f"row_norm_schedule must be a string, not {row_norm_schedule!r}")
    if not isinstance(sim_order, str):
        raise TypeError(f"sim_order must be a string, not {sim_order!r}")
    _normfuse.check_sim_order(sim_order)
    if sim_order != "forward" and target != "cuda-sim":
        raise ValueError(f"sim_order applies to the cuda-sim target, not {target}")
    text, is_path = _read_source(source)
    if cuda_arch is not None and not isinstance(cuda_arch, str):
        raise TypeError(f"cuda_arch must be a string, not {cuda_arch!r}")
    impl = _normfuse.compile(
        text, is_path, entry.lstrip("@"), target, bool(fuse), allow_tf32, row_norm_schedule,
        cuda_arch or ""
    )
    return Function(impl, threads or 0, sim_order)


def fuse(source: Source) -> str:
    """The module after normfuse's fusion pipeline, as MLIR text."""
    text, name = _source_text(source)
    return _normfuse.fuse(text, name)


def kernel_graph(source: Source, *, fuse: bool = False) -> str:
    """The graph of kernels of every function in the module as Graphviz DOT
    (after the fusion pipeline when `fuse`)."""
    text, name = _source_text(source)
    return _normfuse.kernel_graph(text, bool(fuse), name)
