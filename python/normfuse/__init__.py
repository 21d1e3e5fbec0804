"""normfuse: fused normalization and epilogue kernels, compiled from MLIR and
called on the arrays you already have.

    import numpy as np, normfuse
    layer_norm = normfuse.compile("model.mlir", "layer_norm")
    y, mean, rstd = layer_norm(x, scale, bias)

`compile` takes MLIR text or the path of a .mlir file (a `str` without a `{`
is read as a path), fuses it (raises decomposed TOSA/arith chains to nf ops
and fuses each producer with its pointwise neighbours) unless `fuse=False`,
and returns a `Function`. A call takes arrays in argument order: NumPy arrays
(f16, f32, f64, and ml_dtypes.bfloat16) or anything that speaks DLPack
(PyTorch, JAX), without copying them, and returns NumPy arrays, or writes
into the arrays given as `out=`.

Errors raise exceptions carrying normfuse's message: `CompileError` for IR
that does not parse, verify or lower, or an unknown function; `TypeError`
for a wrong number of arguments or a wrong dtype; `ValueError` for a wrong
shape, a non-contiguous array or an array outside host memory. A rejected
call writes nothing.
"""

from __future__ import annotations

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


class Function:
    """A compiled function. Call it with arrays in argument order."""

    def __init__(self, impl, threads: int):
        self._impl = impl
        self._threads = threads
        self._signature = Signature(
            _signature(impl.inputs), _signature(impl.outputs)
        )
        self._static = all(
            d is not None for t in self._signature.outputs for d in t.shape
        )

    @property
    def name(self) -> str:
        return self._impl.name

    @property
    def target(self) -> str:
        return self._impl.target

    @property
    def signature(self) -> Signature:
        return self._signature

    def __repr__(self) -> str:
        return f"<normfuse.Function @{self.name} {self._signature} on {self.target}>"

    def __call__(self, *arrays, out=None):
        """Runs the function; returns its result (a tuple when it has
        several), or `out` when given."""
        inputs, in_views = self._inputs(arrays)
        outputs, out_views, results = self._outputs(arrays, out)
        self._impl.run(inputs, in_views, outputs, out_views, self._threads)
        return results

    def bench(self, *arrays, runs: int = 100, out=None) -> BenchResult:
        """Times `runs` calls (after one untimed call) on these arrays."""
        if not isinstance(runs, int) or isinstance(runs, bool) or runs < 1:
            raise ValueError(f"runs must be a positive integer, not {runs!r}")
        inputs, in_views = self._inputs(arrays)
        outputs, out_views, _ = self._outputs(arrays, out)
        seconds = self._impl.bench(
            inputs, in_views, outputs, out_views, self._threads, runs
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

    def _array(self, a, role: str, index: int):
        """(the array as the extension takes it, whether it is a uint16 view
        of bf16 data)"""
        if isinstance(a, np.ndarray):
            if a.dtype == _BF16:
                return a.view(np.uint16), True
            return a, False
        if isinstance(a, np.generic):
            return self._array(np.asarray(a), role, index)
        if hasattr(a, "__dlpack__"):
            return a, False
        raise TypeError(
            f"{role} {index + 1} of @{self.name} is a {type(a).__name__}, "
            "not an array (a NumPy array or an object with __dlpack__)"
        )

    def _inputs(self, arrays):
        if len(arrays) != len(self._signature.inputs):
            raise self._arity("arguments", len(self._signature.inputs), len(arrays))
        pairs = [self._array(a, "argument", i) for i, a in enumerate(arrays)]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    def _outputs(self, arrays, out):
        """(output arrays, their bf16 flags, what the call returns)"""
        count = len(self._signature.outputs)
        if out is not None:
            given = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            if len(given) != count:
                raise self._arity("results", count, len(given))
            pairs = [self._array(a, "output", i) for i, a in enumerate(given)]
            return [p[0] for p in pairs], [p[1] for p in pairs], out
        if self._static:
            shapes = [t.shape for t in self._signature.outputs]
        else:
            shapes = self._impl.output_shapes(
                [tuple(int(d) for d in a.shape) for a in arrays]
            )
        results = [
            np.empty(tuple(shape), _NUMPY_DTYPES[t.dtype])
            for shape, t in zip(shapes, self._signature.outputs)
        ]
        pairs = [self._array(a, "output", i) for i, a in enumerate(results)]
        returned = results[0] if count == 1 else tuple(results)
        return [p[0] for p in pairs], [p[1] for p in pairs], returned


def compile(
    source: Source,
    entry: str,
    *,
    fuse: bool = True,
    target: str = "cpu",
    threads: Optional[int] = None,
) -> Function:
    """Compiles function `entry` of `source` (MLIR text or a .mlir path).

    fuse: run the fusion pipeline first (the default); False runs the
      function op by op as written.
    target: "cpu" (LLVM JIT for this CPU), "cuda-sim" (the CUDA kernels on
      normfuse's CPU simulator: slow, for checking), or "cuda" (the GPU).
    threads: CPU threads for each call (1 to 1024); None lets OpenMP choose.
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
    text, is_path = _read_source(source)
    impl = _normfuse.compile(text, is_path, entry.lstrip("@"), target, bool(fuse))
    return Function(impl, threads or 0)


def fuse(source: Source) -> str:
    """The module after normfuse's fusion pipeline, as MLIR text."""
    text, name = _source_text(source)
    return _normfuse.fuse(text, name)


def kernel_graph(source: Source, *, fuse: bool = False) -> str:
    """The graph of kernels of every function in the module as Graphviz DOT
    (after the fusion pipeline when `fuse`)."""
    text, name = _source_text(source)
    return _normfuse.kernel_graph(text, bool(fuse), name)
