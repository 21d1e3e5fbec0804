#!/usr/bin/env python3
"""The speed sweep of the GPU run (bench/gpu/run.sh calls it): normfuse,
through its Python package on PyTorch CUDA tensors, against PyTorch eager,
torch.compile, Liger-Kernel's Triton kernels where Liger has the op, and a
device-to-device copy of the same bytes (the ceiling), in one process.

    sweep.py --jsonl RECORDS.jsonl [--budget-s S] [--deadline UNIX_TIME]
             [--compile-budget-s S] [--runs N] [--filter REGEX]
             [--small] [--target cuda|cuda-sim] [--resume] [--hang-s S]
             [--check-records CHECK.jsonl]

Each case: fresh inputs (random, seeded by the case), normfuse compiled for
the case's static shapes; for each system 3 warm-up calls, then --runs timed
calls, each with CUDA events around the call alone; before each timed call,
not timed, normfuse's outputs (written in place through out=) are filled
with NaN and a 256 MiB buffer (more than any L2) is written to flush the
L2. The median is reported, with the minimum. Every system's first output
is compared with float64 (PyTorch float64 on the device) and every normfuse
output too: max |out - ref| / max(1, max |ref|), non-finite elements an
error. Bytes are what the op must read and write (every input and output of
the normfuse function once); the copy moves the same number of bytes
(half read, half written), and each system's fraction of copy is copy ms /
its ms. Matmul and conv cases also get TFLOP/s.

Cases run in tiers (tier 1: one or two shapes of every family; then the
rest), most important first, until the budget (--budget-s, or --deadline)
is spent; torch.compile's compiles have their own budget
(--compile-budget-s; the first call of a compiled function at each new
shape, timed, is its compile or recompile: once the budget is spent, a
case whose shape the compiled function has not seen gets no torch.compile
figure, so that recompiles cannot eat the time of whole cases). What does
not fit is recorded as skipped, with the reason.
Every record is appended to RECORDS.jsonl as soon as it is known, so a
time box that kills the process loses nothing finished. A CUDA error that
poisons the context ends the process with exit status 3 (the caller may
run it again with --resume, which skips the recorded cases). A kernel that
never finishes would block the process until the time box: before each of
normfuse's measurements an "attempt" record names the case and the system,
and a watchdog (--hang-s, on a GPU) ends the process if the measurement
has no result in time. A resumed sweep records a trailing attempt, one
with no case record after it, as that case's failure; a wgmma tile that
hung or lost the context has its kind of tile skipped from then on, as has
one whose package check timed out (--check-records, check.py's records),
and any of normfuse's systems that hung (the automatic choice, a tile or
a row schedule) is skipped for the rest of that op, direction and dtype.

Without PyTorch or without a GPU (--small, target cuda-sim: the dry run),
normfuse runs on NumPy host arrays in the CUDA simulator on small shapes,
checked against NumPy float64, and every timing and every peer is recorded
as skipped with the reason: no figure here is a measurement of a GPU.
"""
import argparse
import faulthandler
import json
import math
import os
import re
import statistics
import sys
import time
import traceback
import zlib
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EPS = 1e-5
SYSTEMS = ("normfuse", "eager", "compile", "liger", "copy")
# Largest max |out - ref| / max(1, max |ref|) accepted, by storage dtype
# (bench/gpu/cases.py's, looser for the examples' chains of kernels).
# "tf32": f32 data multiplied as tf32 (allow_tf32): operands rounded to 10
# fraction bits.
TOLERANCE = {"f32": 1e-4, "tf32": 5e-3, "f16": 4e-3, "bf16": 3e-2}
CHAIN_TOLERANCE = {"f32": 1e-4, "f16": 1e-2, "bf16": 6e-2}
FLUSH_BYTES = 256 << 20


class ContextLost(Exception):
    """A CUDA error after which the context is unusable."""


# --------------------------------------------------------------------------
# Array backends: PyTorch on the GPU, NumPy on the host (dry run).


class TorchBackend:
    name = "torch"

    def __init__(self):
        import torch
        self.t = torch
        self.F = torch.nn.functional
        self.device = "cuda"
        self.dtypes = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
        self.flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")

    def gen(self, seed):
        g = self.t.Generator(device=self.device)
        g.manual_seed(seed)
        return g

    def randn(self, shape, dtype, gen, scale=1.0, shift=0.0):
        x = self.t.randn(shape, generator=gen, device=self.device, dtype=self.t.float32)
        return (x * scale + shift).to(self.dtypes[dtype])

    def uniform(self, shape, dtype, gen, low, high):
        x = self.t.rand(shape, generator=gen, device=self.device, dtype=self.t.float32)
        return (low + (high - low) * x).to(self.dtypes[dtype])

    def empty(self, shape, dtype):
        return self.t.empty(shape, dtype=self.dtypes[dtype], device=self.device)

    def f64(self, a):
        return a.double()

    def poison(self, a):
        a.fill_(float("nan"))

    def error(self, got, ref):
        """(max |got - ref| / max(1, max |ref|), count of non-finite)"""
        got = got.double().reshape(ref.shape)
        bad = int((~self.t.isfinite(got)).sum())
        scale = max(1.0, float(ref.abs().max())) if ref.numel() else 1.0
        diff = float((got - ref).abs().nan_to_num(float("inf")).max()) if ref.numel() else 0.0
        return diff / scale, bad

    def nbytes(self, a):
        return a.numel() * a.element_size()

    def sync(self):
        self.t.cuda.synchronize()

    # float64 math for the references
    def mean(self, x, axes):
        return x.mean(dim=axes, keepdim=True)

    def sum(self, x, axes):
        return x.sum(dim=axes)

    def sqrt(self, x):
        return self.t.sqrt(x)

    def exp(self, x):
        return self.t.exp(x)

    def tanh(self, x):
        return self.t.tanh(x)

    def erf(self, x):
        return self.t.erf(x)

    def einsum(self, spec, *args):
        return self.t.einsum(spec, *args)

    def permute(self, x, p):
        return x.permute(*p)

    def pad_hw(self, x, p):
        return self.F.pad(x, (p, p, p, p))


class NumpyBackend:
    name = "numpy"

    def __init__(self):
        import numpy
        import ml_dtypes
        self.np = numpy
        self.dtypes = {"f32": numpy.float32, "bf16": ml_dtypes.bfloat16, "f16": numpy.float16}
        self._erf = numpy.vectorize(math.erf)

    def gen(self, seed):
        return self.np.random.default_rng(seed)

    def randn(self, shape, dtype, gen, scale=1.0, shift=0.0):
        return (gen.standard_normal(shape) * scale + shift).astype(self.np.float32).astype(self.dtypes[dtype])

    def uniform(self, shape, dtype, gen, low, high):
        return gen.uniform(low, high, shape).astype(self.np.float32).astype(self.dtypes[dtype])

    def empty(self, shape, dtype):
        return self.np.empty(shape, self.dtypes[dtype])

    def f64(self, a):
        return self.np.asarray(a).astype(self.np.float64)

    def poison(self, a):
        a[...] = self.np.nan

    def error(self, got, ref):
        got = self.np.asarray(got).astype(self.np.float64).reshape(ref.shape)
        bad = int((~self.np.isfinite(got)).sum())
        scale = max(1.0, float(self.np.abs(ref).max(initial=0.0)))
        diff = float(self.np.nan_to_num(self.np.abs(got - ref), nan=self.np.inf).max(initial=0.0))
        return diff / scale, bad

    def nbytes(self, a):
        return a.nbytes

    def sync(self):
        pass

    def mean(self, x, axes):
        return x.mean(axis=axes, keepdims=True)

    def sum(self, x, axes):
        return x.sum(axis=axes)

    def sqrt(self, x):
        return self.np.sqrt(x)

    def exp(self, x):
        return self.np.exp(x)

    def tanh(self, x):
        return self.np.tanh(x)

    def erf(self, x):
        return self._erf(x)

    def einsum(self, spec, *args):
        return self.np.einsum(spec, *args)

    def permute(self, x, p):
        return x.transpose(p)

    def pad_hw(self, x, p):
        return self.np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))


class Shape:
    """An array that has a shape and nothing else: what --compile-only
    builds cases with (their MLIR, without allocating their data)."""

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.ndim = len(self.shape)
        self.size = math.prod(self.shape)

    def _op(self, other):
        import numpy
        return Shape(numpy.broadcast_shapes(self.shape, getattr(other, "shape", ())))

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _op
    __truediv__ = __rtruediv__ = __pow__ = __gt__ = _op

    def __neg__(self):
        return self

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            shape = tuple(self.size // known if d == -1 else d for d in shape)
        return Shape(shape)

    def permute(self, *p):
        return Shape([self.shape[i] for i in p])

    def astype(self, _):
        return self

    float = t = lambda self: self  # noqa: E731


class ShapeBackend(NumpyBackend):
    name = "numpy"

    def randn(self, shape, dtype, gen, scale=1.0, shift=0.0):
        return Shape(shape)

    def uniform(self, shape, dtype, gen, low, high):
        return Shape(shape)

    def f64(self, a):
        return a

    def mean(self, x, axes):
        return Shape(1 if i in axes else d for i, d in enumerate(x.shape))

    def sqrt(self, x):
        return x

    exp = tanh = erf = sqrt


# --------------------------------------------------------------------------
# float64 math shared by the references (B: a backend, arrays in float64).


def gelu(B, x):
    return 0.5 * x * (1 + B.erf(x / math.sqrt(2)))


def gelu_tanh(B, x):
    return 0.5 * x * (1 + B.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(B, x):
    return x / (1 + B.exp(-x))


def silu_grad(B, dy, x):
    s = 1 / (1 + B.exp(-x))
    return dy * s * (1 + x * (1 - s))


def layer_norm_ref(B, x, g, b, eps, axis):
    axes = tuple(range(axis, x.ndim))
    m = B.mean(x, axes)
    r = 1 / B.sqrt(B.mean((x - m) ** 2, axes) + eps)
    y = (x - m) * r
    y = y * g if g is not None else y
    y = y + b if b is not None else y
    return y, m, r


def group_norm_nhwc_ref(B, x, g, b, groups, eps):
    n, h, w, c = x.shape
    xg = x.reshape(n, h * w, groups, c // groups)
    m = B.mean(xg, (1, 3))
    r = 1 / B.sqrt(B.mean((xg - m) ** 2, (1, 3)) + eps)
    y = ((xg - m) * r).reshape(n, h, w, c) * g + b
    return y, m.reshape(n, groups), r.reshape(n, groups)


def group_norm_nchw_ref(B, x, g, b, groups, eps):
    n, c = x.shape[:2]
    xg = x.reshape(n, groups, -1)
    m = B.mean(xg, (2,))
    r = 1 / B.sqrt(B.mean((xg - m) ** 2, (2,)) + eps)
    y = ((xg - m) * r).reshape(x.shape) * g.reshape(1, c, 1, 1) + b.reshape(1, c, 1, 1)
    return y, m.reshape(n, groups), r.reshape(n, groups)


def conv_nhwc_ref(B, x, w, pad):
    """x (N, H, W, C), w (O, KH, KW, C), stride 1 -> (N, OH, OW, O)."""
    xn = B.pad_hw(B.permute(x, (0, 3, 1, 2)), pad)
    kh, kw = w.shape[1], w.shape[2]
    oh, ow = xn.shape[2] - kh + 1, xn.shape[3] - kw + 1
    y = 0
    for i in range(kh):
        for j in range(kw):
            y = y + B.einsum("nchw,oc->nhwo", xn[:, :, i:i + oh, j:j + ow], w[:, i, j, :])
    return y


# --------------------------------------------------------------------------
# Cases.


def seed_of(*parts):
    """A seed from the case's description (the same in every process)."""
    return zlib.crc32(repr(parts).encode())


def _t(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def _func(args, results, body, returned):
    sig = ", ".join(f"%{n}: {_t(s, d)}" for n, s, d in args)
    res = ", ".join(_t(s, d) for s, d in results)
    return (f"func.func @f({sig}) -> ({res}) {{\n{body}\n"
            f"  return {', '.join(returned)} : {res}\n}}\n")


@dataclass
class Built:
    """One case made concrete on a backend."""
    mlir: str
    inputs: list
    out_specs: List[Tuple[tuple, str]]
    # () -> float64 references, one per normfuse output
    reference: Callable
    # peer name -> (() -> outputs whose first one is compared with
    # reference()[0]) or a string saying why there is none
    peers: Dict[str, object] = field(default_factory=dict)
    flops: float = 0.0
    entry: str = "f"
    source_path: Optional[str] = None
    # Keyword arguments of normfuse.compile beyond the target
    # ({"allow_tf32": True}).
    nf_options: Dict[str, object] = field(default_factory=dict)
    # torch.backends flags the peers run under, set around each of their
    # calls and restored after ({"cudnn.allow_tf32": False}: cuDNN's f32
    # convolutions in f32, not PyTorch's default tf32).
    peer_flags: Dict[str, bool] = field(default_factory=dict)


def with_backend_flags(t, flags, call):
    """`call` run with each torch.backends flag of `flags` ("cudnn.allow_tf32",
    "cuda.matmul.allow_tf32") set to its value, and reset after."""
    if not flags:
        return call

    def flagged():
        saved = []
        try:
            for name, value in flags.items():
                *path, attr = name.split(".")
                owner = t.backends
                for part in path:
                    owner = getattr(owner, part)
                saved.append((owner, attr, getattr(owner, attr)))
                setattr(owner, attr, value)
            return call()
        finally:
            for owner, attr, value in reversed(saved):
                setattr(owner, attr, value)
    return flagged


@dataclass
class Case:
    family: str
    op: str
    direction: str
    dtype: str
    shape: tuple
    tier: int
    build: Callable  # (backend, torch_available) -> Built
    chain: bool = False

    @property
    def id(self):
        return f"{self.op}/{self.direction}/{self.dtype}/" + "x".join(map(str, self.shape))


def _grad_peer(B, forward, inputs, dy):
    """() -> grads of forward(*inputs) for dy (the graph made once)."""
    t = B.t
    leaves = [a.detach().requires_grad_(True) for a in inputs]
    y = forward(*leaves)
    return lambda: t.autograd.grad(y, leaves, dy, retain_graph=True)


# Liger's row kernels hold a row in one block: calculate_settings refuses
# rows over 65536 elements (liger_kernel/ops/utils.py).
LIGER_MAX_COLUMNS = 65536
LIGER_TOO_LONG = f"Liger's row kernels stop at {LIGER_MAX_COLUMNS} columns"


def _liger(name):
    """Liger's autograd Function `name` from its module, or why not."""
    try:
        if name == "layer_norm":
            from liger_kernel.ops.layer_norm import LigerLayerNormFunction as f
        elif name == "rms_norm":
            from liger_kernel.ops.rms_norm import LigerRMSNormFunction as f
        elif name == "group_norm":
            from liger_kernel.ops.group_norm import LigerGroupNormFunction as f
        else:
            return None, "Liger has no such kernel"
        return f, None
    except Exception as e:  # noqa: BLE001
        return None, f"liger-kernel not importable: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def row_norm_case(op, direction, dtype, rows, cols, tier):
    """layer_norm / rms_norm over the last axis of (rows, cols); scale (and
    bias) of the data's dtype; backward from dy and the saved statistics."""
    x_t, v_t, s_t = (rows, cols), (cols,), (rows, 1)

    def build(B, peers_ok):
        gen = B.gen(seed_of((op, direction, dtype, rows, cols)))
        x = B.randn(x_t, dtype, gen, 1.0, 0.5)
        g = B.randn(v_t, dtype, gen, 0.1, 1.0)
        b = B.randn(v_t, dtype, gen, 0.1, 0.0)
        ln = op == "layer_norm"
        if direction == "forward":
            if ln:
                body = (f"  %y, %m, %r = nf.layer_norm %x scale %g bias %b {{axis = 1 : i64, "
                        f"epsilon = {EPS:e}}} : ({_t(x_t, dtype)}, {_t(v_t, dtype)}, "
                        f"{_t(v_t, dtype)}) -> ({_t(x_t, dtype)}, {_t(s_t, 'f32')}, {_t(s_t, 'f32')})")
                args = [("x", x_t, dtype), ("g", v_t, dtype), ("b", v_t, dtype)]
                inputs = [x, g, b]
            else:
                body = (f"  %y, %r = nf.rms_norm %x scale %g {{axis = 1 : i64, epsilon = {EPS:e}}}"
                        f" : ({_t(x_t, dtype)}, {_t(v_t, dtype)}) -> ({_t(x_t, dtype)}, {_t(s_t, 'f32')})")
                args = [("x", x_t, dtype), ("g", v_t, dtype)]
                inputs = [x, g]
            mlir = _func(args, [(x_t, dtype)], body, ["%y"])

            def reference():
                xx, gg, bb = B.f64(x), B.f64(g), B.f64(b) if ln else None
                if ln:
                    return [layer_norm_ref(B, xx, gg, bb, EPS, 1)[0]]
                r = 1 / B.sqrt(B.mean(xx * xx, (1,)) + EPS)
                return [xx * r * gg]
            built = Built(mlir, inputs, [(x_t, dtype)], reference)
            if peers_ok:
                F = B.F
                # Shape-generic (torch.compile's wrapper is made once per op
                # and direction and serves every shape).
                if ln:
                    fn = lambda x_, g_, b_: F.layer_norm(x_, x_.shape[-1:], g_, b_, EPS)  # noqa: E731
                else:
                    fn = lambda x_, g_: F.rms_norm(x_, x_.shape[-1:], g_, EPS)  # noqa: E731
                built.peers["eager"] = lambda: fn(*inputs)
                built.peers["compile"] = ("compile", fn, inputs, None)
                lf, why = _liger(op)
                if cols > LIGER_MAX_COLUMNS:
                    built.peers["liger"] = LIGER_TOO_LONG
                elif lf is None:
                    built.peers["liger"] = why
                elif ln:
                    built.peers["liger"] = lambda: lf.apply(x, g, b, EPS)
                else:
                    built.peers["liger"] = lambda: lf.apply(x, g, EPS, 0.0, "llama", True)
            return built

        # backward: dy, x, saved statistics (f32, from float64), scale
        dy = B.randn(x_t, dtype, gen)
        xx = B.f64(x)
        if ln:
            _, m64, r64 = layer_norm_ref(B, xx, None, None, EPS, 1)
            m = m64.float() if B.name == "torch" else m64.astype("float32")
        else:
            r64 = 1 / B.sqrt(B.mean(xx * xx, (1,)) + EPS)
        r = r64.float() if B.name == "torch" else r64.astype("float32")
        if ln:
            body = (f"  %dx, %dg, %db = nf.layer_norm_grad %dy, %x, %m, %r scale %g {{axis = 1 : i64}}"
                    f" : ({_t(x_t, dtype)}, {_t(x_t, dtype)}, {_t(s_t, 'f32')}, {_t(s_t, 'f32')}, "
                    f"{_t(v_t, dtype)}) -> ({_t(x_t, dtype)}, {_t(v_t, dtype)}, {_t(v_t, dtype)})")
            args = [("dy", x_t, dtype), ("x", x_t, dtype), ("m", s_t, "f32"), ("r", s_t, "f32"),
                    ("g", v_t, dtype)]
            inputs = [dy, x, m, r, g]
            outs = [(x_t, dtype), (v_t, dtype), (v_t, dtype)]
            returned = ["%dx", "%dg", "%db"]
        else:
            body = (f"  %dx, %dg = nf.rms_norm_grad %dy, %x, %r scale %g {{axis = 1 : i64}}"
                    f" : ({_t(x_t, dtype)}, {_t(x_t, dtype)}, {_t(s_t, 'f32')}, {_t(v_t, dtype)})"
                    f" -> ({_t(x_t, dtype)}, {_t(v_t, dtype)})")
            args = [("dy", x_t, dtype), ("x", x_t, dtype), ("r", s_t, "f32"), ("g", v_t, dtype)]
            inputs = [dy, x, r, g]
            outs = [(x_t, dtype), (v_t, dtype)]
            returned = ["%dx", "%dg"]
        mlir = _func(args, outs, body, returned)

        def reference():
            d, xv, gg, rr = B.f64(dy), B.f64(x), B.f64(g), B.f64(r)
            xhat = (xv - B.f64(m)) * rr if ln else xv * rr
            dxhat = d * gg
            if ln:
                dx = rr * (dxhat - B.mean(dxhat, (1,)) - xhat * B.mean(dxhat * xhat, (1,)))
                return [dx, B.sum(d * xhat, (0,)), B.sum(d, (0,))]
            dx = rr * (dxhat - xhat * B.mean(dxhat * xhat, (1,)))
            return [dx, B.sum(d * xhat, (0,))]
        built = Built(mlir, inputs, outs, reference)
        if peers_ok:
            F = B.F
            if ln:
                fwd = lambda x_, g_, b_: F.layer_norm(x_, x_.shape[-1:], g_, b_, EPS)  # noqa: E731
                leaves = [x, g, b]
            else:
                fwd = lambda x_, g_: F.rms_norm(x_, x_.shape[-1:], g_, EPS)  # noqa: E731
                leaves = [x, g]
            built.peers["eager"] = _grad_peer(B, fwd, leaves, dy)
            built.peers["compile"] = ("compile", fwd, leaves, dy)
            lf, why = _liger(op)
            if cols > LIGER_MAX_COLUMNS:
                built.peers["liger"] = LIGER_TOO_LONG
            elif lf is None:
                built.peers["liger"] = why
            elif ln:
                built.peers["liger"] = _grad_peer(B, lambda x_, g_, b_: lf.apply(x_, g_, b_, EPS), leaves, dy)
            else:
                # Liger's default (in_place=True) writes dx over dy: its
                # own copy of dy (its values change after the first call,
                # whose result is the one checked; the time does not).
                built.peers["liger"] = _grad_peer(
                    B, lambda x_, g_: lf.apply(x_, g_, EPS, 0.0, "llama", True), leaves, dy.clone())
        return built

    return Case(op, op, direction, dtype, (rows, cols), tier, build)


def group_norm_nhwc_case(direction, dtype, n, h, w, c, with_silu, tier, groups=32):
    x_t, v_t, s_t = (n, h, w, c), (c,), (n, groups)
    # (A group a channel is an instance norm, and named so.)
    op = ("instance_norm_nhwc" if groups == c else "group_norm_nhwc") + ("+silu" if with_silu else "")
    lay = "{layout = #nf.layout<nhwc>, num_groups = %d : i64}" % groups

    def build(B, peers_ok):
        gen = B.gen(seed_of((op, direction, dtype, x_t)))
        x = B.randn(x_t, dtype, gen, 1.0, 0.5)
        g = B.randn(v_t, dtype, gen, 0.1, 1.0)
        b = B.randn(v_t, dtype, gen, 0.1, 0.0)
        if direction == "forward":
            body = (f"  %y, %m, %r = nf.group_norm %x scale %g bias %b {lay} : ({_t(x_t, dtype)}, "
                    f"{_t(v_t, dtype)}, {_t(v_t, dtype)}) -> ({_t(x_t, dtype)}, {_t(s_t, 'f32')}, "
                    f"{_t(s_t, 'f32')})")
            if with_silu:
                body += f"\n  %z = nf.silu %y : {_t(x_t, dtype)}"
            mlir = _func([("x", x_t, dtype), ("g", v_t, dtype), ("b", v_t, dtype)], [(x_t, dtype)],
                         body, ["%z" if with_silu else "%y"])

            def reference():
                y = group_norm_nhwc_ref(B, B.f64(x), B.f64(g), B.f64(b), groups, EPS)[0]
                return [silu(B, y) if with_silu else y]
            built = Built(mlir, [x, g, b], [(x_t, dtype)], reference)
            if peers_ok:
                F = B.F

                def fn(x_, g_, b_):
                    y = F.group_norm(x_.permute(0, 3, 1, 2), groups, g_, b_, EPS)
                    return F.silu(y) if with_silu else y
                built.peers["eager"] = lambda: fn(x, g, b)
                built.peers["compile"] = ("compile", fn, [x, g, b], None)
                built.peers["liger"] = "Liger's group norm takes NCHW only (no channels-last kernel)"
            return built

        dy = B.randn(x_t, dtype, gen)
        y64, m64, r64 = group_norm_nhwc_ref(B, B.f64(x), B.f64(g), B.f64(b), groups, EPS)
        tofloat = (lambda a: a.float()) if B.name == "torch" else (lambda a: a.astype("float32"))
        m, r = tofloat(m64), tofloat(r64)
        ypre = (y64.to(B.dtypes[dtype]) if B.name == "torch" else y64.astype(B.dtypes[dtype]))
        grad = (f"nf.group_norm_grad %d, %x, %m, %r scale %g {lay} : ({_t(x_t, dtype)}, {_t(x_t, dtype)}, "
                f"{_t(s_t, 'f32')}, {_t(s_t, 'f32')}, {_t(v_t, dtype)}) -> ({_t(x_t, dtype)}, "
                f"{_t(v_t, dtype)}, {_t(v_t, dtype)})")
        if with_silu:
            body = (f"  %d = nf.silu_grad %dy, %yp : {_t(x_t, dtype)}\n  %dx, %dg, %db = {grad}")
            args = [("dy", x_t, dtype), ("yp", x_t, dtype), ("x", x_t, dtype), ("m", s_t, "f32"),
                    ("r", s_t, "f32"), ("g", v_t, dtype)]
            inputs = [dy, ypre, x, m, r, g]
        else:
            body = f"  %dx, %dg, %db = {grad.replace('%d,', '%dy,', 1)}"
            args = [("dy", x_t, dtype), ("x", x_t, dtype), ("m", s_t, "f32"), ("r", s_t, "f32"),
                    ("g", v_t, dtype)]
            inputs = [dy, x, m, r, g]
        outs = [(x_t, dtype), (v_t, dtype), (v_t, dtype)]
        mlir = _func(args, outs, body, ["%dx", "%dg", "%db"])

        def reference():
            d = B.f64(dy)
            if with_silu:
                d = silu_grad(B, d, B.f64(ypre))
            xv, gg = B.f64(x), B.f64(g)
            mm, rr = B.f64(m).reshape(n, 1, groups, 1), B.f64(r).reshape(n, 1, groups, 1)
            cg = c // groups
            xhat = (xv.reshape(n, h * w, groups, cg) - mm) * rr
            gdy = (d * gg).reshape(n, h * w, groups, cg)
            dx = rr * (gdy - B.mean(gdy, (1, 3)) - xhat * B.mean(gdy * xhat, (1, 3)))
            xh = xhat.reshape(n, h, w, c)
            return [dx.reshape(n, h, w, c), B.sum(d * xh, (0, 1, 2)), B.sum(d, (0, 1, 2))]
        built = Built(mlir, inputs, outs, reference)
        if peers_ok:
            F = B.F

            def fwd(x_, g_, b_):
                y = F.group_norm(x_.permute(0, 3, 1, 2), groups, g_, b_, EPS)
                return F.silu(y) if with_silu else y
            dy_nchw = dy.permute(0, 3, 1, 2)
            built.peers["eager"] = _grad_peer(B, fwd, [x, g, b], dy_nchw)
            built.peers["compile"] = ("compile", fwd, [x, g, b], dy_nchw)
            built.peers["liger"] = "Liger's group norm takes NCHW only (no channels-last kernel)"
        return built

    return Case("group_norm_nhwc", op, direction, dtype, x_t, tier, build)


def channel_norm_case(op, dtype, shape, tier, groups=32, direction="forward"):
    """group_norm (NCHW), instance_norm or batch_norm_training, forward;
    batch_norm_training backward too (nf.batch_norm_grad from the batch's
    statistics)."""
    n, c = shape[:2]
    x_t, v_t = shape, (c,)

    def build(B, peers_ok):
        gen = B.gen(seed_of((op, dtype, shape) + ((direction,) if direction != "forward" else ())))
        x = B.randn(x_t, dtype, gen, 1.0, 0.5)
        g = B.randn(v_t, dtype, gen, 0.1, 1.0)
        b = B.randn(v_t, dtype, gen, 0.1, 0.0)
        T = lambda s, d=dtype: _t(s, d)  # noqa: E731
        if op == "batch_norm_training" and direction == "backward":
            dy = B.randn(x_t, dtype, gen)
            gf = B.randn(v_t, "f32", gen, 0.1, 1.0)
            bf = B.randn(v_t, "f32", gen, 0.1, 0.0)
            xv = B.f64(x)
            m64 = B.mean(xv, (0, 2, 3))
            r64 = 1 / B.sqrt(B.mean((xv - m64) ** 2, (0, 2, 3)) + EPS)
            tofloat = (lambda a: a.float()) if B.name == "torch" else (lambda a: a.astype("float32"))
            m, r = tofloat(m64.reshape(c)), tofloat(r64.reshape(c))
            st = (c,)
            body = (f"  %dx, %dg, %db = nf.batch_norm_grad %dy, %x, %m, %r scale %g : ({T(x_t)}, {T(x_t)}, "
                    f"{T(st, 'f32')}, {T(st, 'f32')}, {T(st, 'f32')}) -> ({T(x_t)}, {T(st, 'f32')}, "
                    f"{T(st, 'f32')})")
            outs = [(x_t, dtype), (st, "f32"), (st, "f32")]
            mlir = _func([("dy", x_t, dtype), ("x", x_t, dtype), ("m", st, "f32"), ("r", st, "f32"),
                          ("g", st, "f32")], outs, body, ["%dx", "%dg", "%db"])

            def reference():
                d, gg = B.f64(dy), B.f64(gf).reshape(1, c, 1, 1)
                mm, rr = B.f64(m).reshape(1, c, 1, 1), B.f64(r).reshape(1, c, 1, 1)
                xhat = (B.f64(x) - mm) * rr
                gdy = d * gg
                dx = rr * (gdy - B.mean(gdy, (0, 2, 3)) - xhat * B.mean(gdy * xhat, (0, 2, 3)))
                return [dx, B.sum(d * xhat, (0, 2, 3)).reshape(c), B.sum(d, (0, 2, 3)).reshape(c)]
            built = Built(mlir, [dy, x, m, r, gf], outs, reference)
            if peers_ok:
                F = B.F
                fwd = lambda x_, g_, b_: F.batch_norm(x_, None, None, g_, b_, True, 0.1, EPS)  # noqa: E731
                built.peers["eager"] = _grad_peer(B, fwd, [x, gf, bf], dy)
                built.peers["compile"] = ("compile", fwd, [x, gf, bf], dy)
                built.peers["liger"] = "Liger has no batch norm kernel"
            return built
        if op == "batch_norm_training":
            rm = B.randn(v_t, "f32", gen, 0.1, 0.0)
            rv = B.uniform(v_t, "f32", gen, 0.5, 1.5)
            st = (c,)
            body = (f"  %y, %bm, %br, %nm, %nv = nf.batch_norm_training %x scale %g bias %b running(%rm, %rv)"
                    f" {{epsilon = {EPS:e}, momentum = 1.0e-01}} : ({T(x_t)}, {T(v_t)}, {T(v_t)}, "
                    f"{T(st, 'f32')}, {T(st, 'f32')}) -> ({T(x_t)}, {T(st, 'f32')}, {T(st, 'f32')}, "
                    f"{T(st, 'f32')}, {T(st, 'f32')})")
            outs = [(x_t, dtype), (st, "f32"), (st, "f32"), (st, "f32"), (st, "f32")]
            mlir = _func([("x", x_t, dtype), ("g", v_t, dtype), ("b", v_t, dtype), ("rm", st, "f32"),
                          ("rv", st, "f32")], outs, body, ["%y", "%bm", "%br", "%nm", "%nv"])
            inputs = [x, g, b, rm, rv]

            def reference():
                xv = B.f64(x)
                m = B.mean(xv, (0, 2, 3))
                var = B.mean((xv - m) ** 2, (0, 2, 3))
                r = 1 / B.sqrt(var + EPS)
                y = (xv - m) * r * B.f64(g).reshape(1, c, 1, 1) + B.f64(b).reshape(1, c, 1, 1)
                count = xv.size if B.name == "numpy" else xv.numel()
                count //= c
                m, var, r = m.reshape(c), var.reshape(c), r.reshape(c)
                return [y, m, r, 0.9 * B.f64(rm) + 0.1 * m,
                        0.9 * B.f64(rv) + 0.1 * var * count / (count - 1)]
            built = Built(mlir, inputs, outs, reference)
            if peers_ok:
                F = B.F
                fn = lambda x_, g_, b_, rm_, rv_: F.batch_norm(x_, rm_, rv_, g_, b_, True, 0.1, EPS)  # noqa: E731
                # Their own running statistics (updated in place by each call).
                eager_stats, compile_stats = [rm.clone(), rv.clone()], [rm.clone(), rv.clone()]
                built.peers["eager"] = lambda: fn(x, g, b, *eager_stats)
                built.peers["compile"] = ("compile", fn, [x, g, b, *compile_stats], None)
                built.peers["liger"] = "Liger has no batch norm kernel"
            return built

        G = c if op == "instance_norm" else groups
        st = (n, G)
        if op == "instance_norm":
            body = (f"  %y, %m, %r = nf.instance_norm %x scale %g bias %b {{layout = #nf.layout<nchw>}} : "
                    f"({T(x_t)}, {T(v_t)}, {T(v_t)}) -> ({T(x_t)}, {T(st, 'f32')}, {T(st, 'f32')})")
        else:
            body = (f"  %y, %m, %r = nf.group_norm %x scale %g bias %b {{layout = #nf.layout<nchw>, "
                    f"num_groups = {G} : i64}} : ({T(x_t)}, {T(v_t)}, {T(v_t)}) -> ({T(x_t)}, "
                    f"{T(st, 'f32')}, {T(st, 'f32')})")
        mlir = _func([("x", x_t, dtype), ("g", v_t, dtype), ("b", v_t, dtype)], [(x_t, dtype)], body, ["%y"])

        def reference():
            return [group_norm_nchw_ref(B, B.f64(x), B.f64(g), B.f64(b), G, EPS)[0]]
        built = Built(mlir, [x, g, b], [(x_t, dtype)], reference)
        if peers_ok:
            F = B.F
            if op == "instance_norm":
                fn = lambda x_, g_, b_: F.instance_norm(x_, weight=g_, bias=b_, eps=EPS)  # noqa: E731
                built.peers["liger"] = "Liger has no instance norm kernel"
            else:
                fn = lambda x_, g_, b_: F.group_norm(x_, G, g_, b_, EPS)  # noqa: E731
                lf, why = _liger("group_norm")
                built.peers["liger"] = why if lf is None else (lambda: lf.apply(x, g, b, c, G, EPS))
            built.peers["eager"] = lambda: fn(x, g, b)
            built.peers["compile"] = ("compile", fn, [x, g, b], None)
        return built

    family = "channel_norms_nchw"
    return Case(family, op, direction, dtype, shape, tier, build)


def matmul_case(dtype, m, k, n_, tier, approximate="none", family="matmul", op=None, batch=None,
                act="gelu", chain=False, bias=True):
    """matmul (+ bias) (+ GELU): a (M, K) or (B, S, K) @ w (K, N) + c. Without
    `bias`, the plain product, whose peers are torch.matmul (cuBLAS) and its
    compiled form."""
    a_t = (m, k) if batch is None else (*batch, k)
    y_t = a_t[:-1] + (n_,)
    w_t, c_t = (k, n_), (n_,)
    rows = math.prod(a_t[:-1])
    if not bias:
        return plain_matmul_case(dtype, a_t, n_, tier, family)
    op = op or ("matmul+bias+gelu" + ("_tanh" if approximate == "tanh" else ""))

    def build(B, peers_ok):
        gen = B.gen(seed_of((op, dtype, a_t, n_)))
        a = B.randn(a_t, dtype, gen)
        w = B.randn(w_t, dtype, gen, 1 / math.sqrt(k))
        c = B.randn(c_t, dtype, gen, 0.1)
        body = (f"  %p = nf.matmul %a, %w : {_t(a_t, dtype)}, {_t(w_t, dtype)} -> {_t(y_t, dtype)}\n"
                f"  %q = nf.bias_add %p, %c {{layout = #nf.layout<nhwc>}} : {_t(y_t, dtype)}, {_t(c_t, dtype)}")
        ret = "%q"
        if act == "gelu":
            attr = " {approximate = #nf.approximation<tanh>}" if approximate == "tanh" else ""
            body += f"\n  %z = nf.gelu %q{attr} : {_t(y_t, dtype)}"
            ret = "%z"
        mlir = _func([("a", a_t, dtype), ("w", w_t, dtype), ("c", c_t, dtype)], [(y_t, dtype)], body, [ret])

        def reference():
            y = B.einsum("...k,kn->...n", B.f64(a), B.f64(w)) + B.f64(c)
            if act != "gelu":
                return [y]
            return [gelu_tanh(B, y) if approximate == "tanh" else gelu(B, y)]
        built = Built(mlir, [a, w, c], [(y_t, dtype)], reference, flops=2.0 * rows * k * n_)
        if peers_ok:
            F = B.F

            def fn(a_, wt_, c_):  # nn.Linear's form: weight (N, K), bias in the GEMM
                y = F.linear(a_, wt_, c_)
                return F.gelu(y, approximate=approximate) if act == "gelu" else y
            wt = w.t()  # a transposed view, no copy
            built.peers["eager"] = lambda: fn(a, wt, c)
            built.peers["compile"] = ("compile", fn, [a, wt, c], None)
            built.peers["liger"] = "Liger has no matmul epilogue kernel"
        return built

    return Case(family, op, "forward", dtype, a_t + (n_,), tier, build, chain)


def plain_matmul_case(dtype, a_t, n_, tier, family):
    """matmul alone: a (M, K) @ w (K, N), against torch.matmul (cuBLAS).
    dtype "tf32": f32 data on tensor cores (normfuse's allow_tf32, cuBLAS
    with torch.backends.cuda.matmul.allow_tf32 set around each call)."""
    k = a_t[-1]
    y_t, w_t = a_t[:-1] + (n_,), (k, n_)
    rows = math.prod(a_t[:-1])
    tf32 = dtype == "tf32"
    data = "f32" if tf32 else dtype

    def build(B, peers_ok):
        gen = B.gen(seed_of(("matmul", dtype, a_t, n_)))
        a = B.randn(a_t, data, gen)
        w = B.randn(w_t, data, gen, 1 / math.sqrt(k))
        body = f"  %p = nf.matmul %a, %w : {_t(a_t, data)}, {_t(w_t, data)} -> {_t(y_t, data)}"
        mlir = _func([("a", a_t, data), ("w", w_t, data)], [(y_t, data)], body, ["%p"])
        built = Built(mlir, [a, w], [(y_t, data)], lambda: [B.einsum("...k,kn->...n", B.f64(a), B.f64(w))],
                      flops=2.0 * rows * k * n_, nf_options={"allow_tf32": True} if tf32 else {})
        if peers_ok:
            def fn(a_, w_):
                return a_ @ w_
            if tf32:
                built.peer_flags = {"cuda.matmul.allow_tf32": True}
                built.peers["eager"] = lambda: fn(a, w)
                built.peers["compile"] = ("torch.compile reads allow_tf32 when it compiles, a process-wide "
                                          "flag this sweep leaves off; eager's cuBLAS tf32 is the peer")
            else:
                built.peers["eager"] = lambda: fn(a, w)
                built.peers["compile"] = ("compile", fn, [a, w], None)
            built.peers["liger"] = "Liger has no matmul kernel"
        return built

    return Case(family, "matmul", "forward", dtype, a_t + (n_,), tier, build)


def conv_case(dtype, n, hw, cin, cout, tier, kernel=3, residual=False, act="relu", family="conv2d_nhwc",
              op=None, chain=False, layout="nhwc"):
    """conv2d (stride 1, same padding) NHWC (or NCHW) + bias (+ ReLU) (+ residual).
    f32 is f32 on both sides (cuDNN with torch.backends.cudnn.allow_tf32
    off around each call: PyTorch's default, on, would multiply as tf32);
    dtype "tf32" is f32 data on tensor cores on both (normfuse's allow_tf32,
    cuDNN's tf32)."""
    pad = kernel // 2
    tf32 = dtype == "tf32"
    case_dtype, dtype = dtype, ("f32" if tf32 else dtype)
    nchw = layout == "nchw"
    x_t, w_t, y_t, c_t = (n, hw, hw, cin), (cout, kernel, kernel, cin), (n, hw, hw, cout), (cout,)
    if nchw:
        x_t, w_t, y_t = (n, cin, hw, hw), (cout, cin, kernel, kernel), (n, cout, hw, hw)
        family = "conv2d_nchw" if family == "conv2d_nhwc" else family
    op = op or ("conv2d_nchw+bias+relu" if nchw else "conv2d+bias+relu")

    def build(B, peers_ok):
        gen = B.gen(seed_of((op, dtype, x_t, cout)))
        x = B.randn(x_t, dtype, gen)
        w = B.randn(w_t, dtype, gen, 1 / math.sqrt(cin * kernel * kernel))
        c = B.randn(c_t, dtype, gen, 0.1)
        res = B.randn(y_t, dtype, gen) if residual else None
        attrs = (f"{{strides = array<i64: 1, 1>, padding = array<i64: {pad}, {pad}, {pad}, {pad}>, "
                 f"layout = #nf.layout<{layout}>}}")
        body = (f"  %y = nf.conv2d %x, %w {attrs} : {_t(x_t, dtype)}, {_t(w_t, dtype)} -> {_t(y_t, dtype)}\n"
                f"  %b = nf.bias_add %y, %c {{layout = #nf.layout<{layout}>}} : {_t(y_t, dtype)}, "
                f"{_t(c_t, dtype)}")
        ret = "%b"
        if act == "relu":
            body += f"\n  %z = nf.relu %b : {_t(y_t, dtype)}"
            ret = "%z"
        args = [("x", x_t, dtype), ("w", w_t, dtype), ("c", c_t, dtype)]
        inputs = [x, w, c]
        if residual:
            body += f"\n  %s = nf.add %r, {ret} : {_t(y_t, dtype)}"
            ret = "%s"
            args.append(("r", y_t, dtype))
            inputs.append(res)
        mlir = _func(args, [(y_t, dtype)], body, [ret])

        def reference():
            xr, wr = B.f64(x), B.f64(w)
            if nchw:
                xr, wr = B.permute(xr, (0, 2, 3, 1)), B.permute(wr, (0, 2, 3, 1))
            y = conv_nhwc_ref(B, xr, wr, pad) + B.f64(c)
            if act == "relu":
                y = y * (y > 0)
            if nchw:
                y = B.permute(y, (0, 3, 1, 2))
            if residual:
                y = B.f64(res) + y
            return [y]
        built = Built(mlir, inputs, [(y_t, dtype)], reference,
                      flops=2.0 * n * hw * hw * cout * cin * kernel * kernel,
                      nf_options={"allow_tf32": True} if tf32 else {},
                      peer_flags={"cudnn.allow_tf32": tf32} if dtype == "f32" else {})
        if peers_ok:
            F = B.F
            # NHWC: a channels-last OIHW view of the filter.
            w_oihw = w if nchw else w.permute(0, 3, 1, 2)

            def fn(x_, w_, c_, *r_):
                y = F.conv2d(x_ if nchw else x_.permute(0, 3, 1, 2), w_, c_, padding=pad)
                if act == "relu":
                    y = F.relu(y)
                if r_:
                    y = (r_[0] if nchw else r_[0].permute(0, 3, 1, 2)) + y
                return y
            args_t = [x, w_oihw, c] + ([res] if residual else [])
            built.peers["eager"] = lambda: fn(*args_t)
            built.peers["compile"] = ("compile", fn, args_t, None)
            built.peers["liger"] = "Liger has no convolution kernel"
        return built

    return Case(family, op, "forward", case_dtype, x_t + (cout,), tier, build, chain)


def add_layer_norm_case(dtype, shape, tier):
    """The transformer example's last kernel: layer_norm(x + h) (scale and
    bias f32, epsilon 1e-12), returning y, mean and rstd."""
    c = shape[-1]
    s_t, v_t = shape[:-1] + (1,), (c,)
    axis = len(shape) - 1

    def build(B, peers_ok):
        gen = B.gen(seed_of(("add+layer_norm", dtype, shape)))
        x = B.randn(shape, dtype, gen)
        h = B.randn(shape, dtype, gen)
        g = B.randn(v_t, "f32", gen, 0.1, 1.0)
        b = B.randn(v_t, "f32", gen, 0.1)
        body = (f"  %s = nf.add %x, %h : {_t(shape, dtype)}\n"
                f"  %y, %m, %r = nf.layer_norm %s scale %g bias %b {{axis = {axis} : i64, epsilon = 1.0e-12}}"
                f" : ({_t(shape, dtype)}, {_t(v_t, 'f32')}, {_t(v_t, 'f32')}) -> ({_t(shape, dtype)}, "
                f"{_t(s_t, 'f32')}, {_t(s_t, 'f32')})")
        outs = [(shape, dtype), (s_t, "f32"), (s_t, "f32")]
        mlir = _func([("x", shape, dtype), ("h", shape, dtype), ("g", v_t, "f32"), ("b", v_t, "f32")],
                     outs, body, ["%y", "%m", "%r"])

        def reference():
            s = B.f64(x) + B.f64(h)
            y, m, r = layer_norm_ref(B, s, B.f64(g), B.f64(b), 1e-12, axis)
            return [y, m, r]
        built = Built(mlir, [x, h, g, b], outs, reference)
        if peers_ok:
            F = B.F
            fn = lambda x_, h_, g_, b_: F.layer_norm(x_ + h_, x_.shape[-1:], g_, b_, 1e-12)  # noqa: E731
            # PyTorch's CUDA layer_norm takes its scale and bias in the
            # input's dtype (pytorch/pytorch#135969): converted once here.
            gx, bx = g.to(x.dtype), b.to(x.dtype)
            built.peers["eager"] = lambda: fn(x, h, gx, bx)
            built.peers["compile"] = ("compile", fn, [x, h, gx, bx], None)
            built.peers["liger"] = "not a Liger op (a residual add before the norm)"
        return built

    return Case("examples", "add+layer_norm", "forward", dtype, shape, tier, build, True)


def example_block_case(path, entry, dtype, tier):
    """A whole shipped example function, compiled from its file (the TOSA
    ones raised and fused by normfuse), against the same block in PyTorch."""
    transformer = "transformer" in path
    tosa = "tosa" in path

    def build(B, peers_ok):
        gen = B.gen(seed_of((path, entry)))
        if transformer:
            rows = (1, 1024) if tosa else (8, 128)
            x = B.randn(rows + (768,), dtype, gen)
            w1 = B.randn(((1,) if tosa else ()) + (768, 3072), dtype, gen, 1 / math.sqrt(768))
            b1 = B.randn((3072,), dtype, gen, 0.1)
            w2 = B.randn(((1,) if tosa else ()) + (3072, 768), dtype, gen, 1 / math.sqrt(3072))
            b2 = B.randn((768,), dtype, gen, 0.1)
            gm = B.randn((768,), "f32", gen, 0.1, 1.0)
            bt = B.randn((768,), "f32", gen, 0.1)
            inputs = [x, w1, b1, w2, b2, gm, bt]
            eps = 1e-5 if tosa else 1e-12
            outs = [(rows + (768,), dtype)] + ([] if tosa else [(rows + (1,), "f32")] * 2)

            def reference():
                f = [B.f64(a) for a in inputs]
                W1 = f[1][0] if tosa else f[1]
                W2 = f[3][0] if tosa else f[3]
                h = B.einsum("...k,kn->...n", gelu_tanh(B, B.einsum("...k,kn->...n", f[0], W1) + f[2]), W2) + f[4]
                y, m, r = layer_norm_ref(B, f[0] + h, f[5], f[6], eps, 2)
                return [y] if tosa else [y, m, r]
            flops = 2.0 * 2 * math.prod(rows) * 768 * 3072
        else:
            x_t, w_t = (2, 32, 32, 320), (320, 3, 3, 320)
            x = B.randn(x_t, dtype, gen)
            vs = [B.randn((320,), dtype, gen, 0.1, 1.0), B.randn((320,), dtype, gen, 0.1)]
            w1 = B.randn(w_t, dtype, gen, 1 / math.sqrt(2880))
            b1 = B.randn((320,), dtype, gen, 0.1)
            vs2 = [B.randn((320,), dtype, gen, 0.1, 1.0), B.randn((320,), dtype, gen, 0.1)]
            w2 = B.randn(w_t, dtype, gen, 1 / math.sqrt(2880))
            b2 = B.randn((320,), dtype, gen, 0.1)
            inputs = [x, vs[0], vs[1], w1, b1, vs2[0], vs2[1], w2, b2]
            outs = [(x_t, dtype)]

            def reference():
                f = [B.f64(a) for a in inputs]
                h = silu(B, group_norm_nhwc_ref(B, f[0], f[1], f[2], 32, EPS)[0])
                h = conv_nhwc_ref(B, h, f[3], 1) + f[4]
                h = silu(B, group_norm_nhwc_ref(B, h, f[5], f[6], 32, EPS)[0])
                return [f[0] + conv_nhwc_ref(B, h, f[7], 1) + f[8]]
            flops = 2.0 * 2 * 2 * 32 * 32 * 320 * 320 * 9
        mlir = open(os.path.join(ROOT, path)).read()
        # f32 blocks: the peers' convolutions in f32 too (cuDNN's tf32 off).
        built = Built(mlir, inputs, outs, reference, flops=flops, entry=entry, source_path=path,
                      peer_flags={"cudnn.allow_tf32": False} if dtype == "f32" else {})
        if peers_ok:
            F = B.F
            if transformer:
                def fn(X, W1, B1, W2, B2, G, Bt):
                    wa = W1[0] if tosa else W1
                    wb = W2[0] if tosa else W2
                    h = F.gelu(X @ wa + B1, approximate="tanh") @ wb + B2
                    # Scale and bias in the input's dtype, as PyTorch's
                    # CUDA layer_norm takes them (768 elements a call).
                    return F.layer_norm(X + h, (768,), G.to(X.dtype), Bt.to(X.dtype), eps)
            else:
                def fn(X, G1, Be1, W1, B1, G2, Be2, W2, B2):
                    xc = X.permute(0, 3, 1, 2)
                    h = F.silu(F.group_norm(xc, 32, G1, Be1, EPS))
                    h = F.conv2d(h, W1.permute(0, 3, 1, 2), B1, padding=1)
                    h = F.silu(F.group_norm(h, 32, G2, Be2, EPS))
                    return xc + F.conv2d(h, W2.permute(0, 3, 1, 2), B2, padding=1)
            built.peers["eager"] = lambda: fn(*inputs)
            built.peers["compile"] = ("compile", fn, inputs, None)
            built.peers["liger"] = "not a Liger op (a whole block)"
        return built

    shape = (8, 128, 768) if (transformer and not tosa) else (1, 1024, 768) if transformer else (2, 32, 32, 320)
    return Case("examples", f"block:{entry}", "forward", dtype, shape, tier, build, True)


def rows_for(cols, dtype, data_bytes):
    return max(1, -(-data_bytes // (cols * (4 if dtype == "f32" else 2))))


def all_cases(small: bool) -> List[Case]:
    """Every case, tier by tier (the order they run in)."""
    cases = []
    dtypes = ("f32", "bf16")
    if small:
        for dtype in dtypes:
            for op in ("layer_norm", "rms_norm"):
                for direction in ("forward", "backward"):
                    cases.append(row_norm_case(op, direction, dtype, 4, 1000 if dtype == "bf16" else 128, 1))
        for direction in ("forward", "backward"):
            for s in (False, True):
                cases.append(group_norm_nhwc_case(direction, "f32", 1, 3, 5, 64, s, 1))
        for op in ("group_norm", "instance_norm", "batch_norm_training"):
            cases.append(channel_norm_case(op, "f32", (2, 64, 3, 3), 1))
        cases.append(channel_norm_case("batch_norm_training", "f32", (2, 64, 3, 3), 1,
                                       direction="backward"))
        cases.append(matmul_case("f32", 16, 32, 48, 1))
        cases.append(matmul_case("f16", 16, 32, 48, 1, bias=False))
        cases.append(matmul_case("tf32", 16, 32, 48, 1, bias=False))
        cases.append(conv_case("f32", 1, 5, 8, 16, 1))
        cases.append(conv_case("tf32", 1, 5, 8, 16, 1))
        cases.append(matmul_case("f16", 0, 32, 64, 1, "tanh", "examples", batch=(2, 8), chain=True))
        cases.append(add_layer_norm_case("f16", (2, 8, 64), 1))
        cases.append(conv_case("f16", 1, 5, 16, 16, 1, residual=True, act=None, family="examples",
                               op="conv2d+bias+add", chain=True))
        return cases
    data = 256 << 20
    # tier 1: one shape of every family (the row norms at 4096, the SD
    # UNet's first GroupNorm, the examples' fused groups, ResNet-50's
    # 56x56x256, the BERT MLP, ResNet-50's first 3x3 conv), then a second
    # shape of the row norms and GroupNorm; tier 2 and 3: the rest.
    tiers: Dict[int, List[Case]] = {1: [], 2: [], 3: []}

    def row_norms(cols, tier):
        for op in ("layer_norm", "rms_norm"):
            for direction in ("forward", "backward"):
                for dtype in dtypes:
                    tiers[tier].append(row_norm_case(op, direction, dtype, rows_for(cols, dtype, data), cols, tier))

    def group_norms(shape, tier):
        for direction in ("forward", "backward"):
            for with_silu in (True, False):
                for dtype in dtypes:
                    tiers[tier].append(group_norm_nhwc_case(direction, dtype, *shape, with_silu, tier))

    def channel_norms(shape, tier):
        for op in ("group_norm", "instance_norm", "batch_norm_training"):
            for dtype in dtypes:
                tiers[tier].append(channel_norm_case(op, dtype, shape, tier))
        for dtype in dtypes:
            tiers[tier].append(channel_norm_case("batch_norm_training", dtype, shape, tier,
                                                 direction="backward"))

    row_norms(4096, 1)
    group_norms((2, 64, 64, 320), 1)
    # The shipped examples' fused groups, at the examples' f16.
    gn_silu = group_norm_nhwc_case("forward", "f16", 2, 32, 32, 320, True, 1)
    gn_silu.family, gn_silu.chain = "examples", True
    tiers[1] += [matmul_case("f16", 0, 768, 3072, 1, "tanh", "examples", batch=(8, 128), chain=True),
                 matmul_case("f16", 0, 3072, 768, 1, family="examples", op="matmul+bias", batch=(8, 128),
                             act=None, chain=True),
                 add_layer_norm_case("f16", (8, 128, 768), 1),
                 gn_silu,
                 conv_case("f16", 2, 32, 320, 320, 1, act=None, family="examples", op="conv2d+bias", chain=True),
                 conv_case("f16", 2, 32, 320, 320, 1, residual=True, act=None, family="examples",
                           op="conv2d+bias+add", chain=True)]
    channel_norms((32, 256, 56, 56), 1)
    for dtype in dtypes:
        tiers[1].append(matmul_case(dtype, 4096, 768, 3072, 1))
    # The plain product against cuBLAS at transformer shapes (issue 31's
    # measure), f16 and bf16: the tensor cores' schedules.
    # f32 as tf32 beside them (an option, off by default).
    for dtype in ("f16", "bf16", "tf32"):
        tiers[1].append(matmul_case(dtype, 4096, 768, 3072, 1, bias=False))
    # f32 convolutions also as tf32 on both sides (cuDNN's default in
    # PyTorch; normfuse's allow_tf32).
    for dtype in dtypes + ("tf32",):
        tiers[1].append(conv_case(dtype, 32, 56, 64, 64, 1))
        # PyTorch's default layout: the input gathered one element at a time.
        tiers[2].append(conv_case(dtype, 32, 56, 64, 64, 2, layout="nchw"))
    row_norms(1024, 1)
    group_norms((1, 256, 256, 128), 1)
    # tier 2
    for cols in (128, 1000, 5121, 8192, 16384, 65536, 262144):
        row_norms(cols, 2)
    # The whole example functions (the TOSA ones raised and fused).
    tiers[2] += [example_block_case("examples/transformer_block.mlir", "transformer_mlp_block", "f16", 2),
                 example_block_case("examples/unet_block.mlir", "unet_resnet_block", "f16", 2),
                 example_block_case("examples/transformer_block_tosa.mlir", "transformer_mlp_block_tosa", "f32", 2),
                 example_block_case("examples/unet_block_tosa.mlir", "unet_resnet_block_tosa", "f32", 2)]
    for shape in ((2, 32, 32, 640), (2, 16, 16, 1280), (1, 64, 64, 320)):
        group_norms(shape, 2)
    # Instance norms in NHWC (group norms of one-channel groups) on small
    # images: across the channels since 2026-11-29, warp rows before.
    for shape in ((32, 7, 7, 512), (32, 14, 14, 256)):
        for dtype in dtypes:
            tiers[2].append(group_norm_nhwc_case("forward", dtype, *shape, False, 2, groups=shape[3]))
    for shape in ((32, 64, 112, 112), (32, 512, 28, 28)):
        channel_norms(shape, 2)
    for dtype in dtypes:
        tiers[2].append(matmul_case(dtype, 4096, 4096, 11008, 2))
    for m, k, n_ in ((4096, 4096, 4096), (16384, 8192, 8192), (512, 768, 768)):
        for dtype in ("f16", "bf16"):
            tiers[2].append(matmul_case(dtype, m, k, n_, 2, bias=False))
    for hw, ch in ((28, 128), (14, 256)):
        for dtype in dtypes + ("tf32",):
            tiers[2].append(conv_case(dtype, 32, hw, ch, ch, 2))
    # tier 3
    for cols in (256, 512, 2048, 32768, 131072):
        row_norms(cols, 3)
    for shape in ((1, 32, 32, 640), (1, 16, 16, 1280)):
        group_norms(shape, 3)
    for shape in ((32, 1024, 14, 14), (32, 2048, 7, 7)):
        channel_norms(shape, 3)
    for m, k, n_ in ((512, 768, 3072), (512, 4096, 11008)):
        for dtype in dtypes:
            tiers[3].append(matmul_case(dtype, m, k, n_, 3))
    for dtype in dtypes + ("tf32",):
        tiers[3].append(conv_case(dtype, 32, 7, 512, 512, 3))
    # Within tier 1, one case of each (family, op, direction) first, so that
    # a short budget still measures every family once.
    seen, first, rest = set(), [], []
    for c in tiers[1]:
        key = (c.family, c.op, c.direction)
        (rest if key in seen else first).append(c)
        seen.add(key)
    tiers[1] = first + rest
    for tier in (1, 2, 3):
        cases += tiers[tier]
    return cases


# --------------------------------------------------------------------------
# Running a case.


# The kinds of wgmma tile a lost context skips, the widest first: a loss
# of one skips every tile whose text holds it ("/ws" the "/ws/mc" and
# "/ws/pp" tiles too; "/mc" and "/pp" only their own).
WGMMA_KINDS = ("/wgmma", "/wgmma/tma", "/ws", "/mc", "/pp")
# The kind of tile of each wgmma package case (bench/gpu/cases.py's
# suffixes).
CHECK_SUFFIX_KINDS = {"_wgmma": "/wgmma", "_wgmma_tma": "/wgmma/tma",
                      "_wgmma_ws": "/ws", "_wgmma_mc": "/mc", "_wgmma_pp": "/pp"}


def read_records(path):
    """The records of a JSON-lines file (none if it does not exist), less
    any line that is not JSON (a line cut short when a process ended)."""
    records = []
    if os.path.exists(path):
        for line in open(path):
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
    return records


def trailing_attempt(records):
    """The last attempt with no record of its end or its case after it
    (the measurement the process ended in), or None."""
    last = None
    for r in records:
        if r.get("kind") == "attempt":
            last = r
        elif r.get("kind") in ("attempt-done", "case", "case-failed"):
            last = None
    return last


def tile_variants(family, env=os.environ):
    """The tensor-core tiles a product family's f16/bf16 cases run again
    under ("128x256x32/3/2x4,..." as NF_CUDA_TENSOR_CORE_TILE takes each):
    NF_SWEEP_TILE_VARIANTS's for the matmuls and NHWC convolutions, the
    convolutions NF_SWEEP_CONV_TILE_VARIANTS's instead where it is set
    (their N is the output channels, often 64: tiles of their own)."""
    if family not in ("matmul", "conv2d_nhwc"):
        return []
    text = env.get("NF_SWEEP_TILE_VARIANTS", "")
    if family == "conv2d_nhwc" and "NF_SWEEP_CONV_TILE_VARIANTS" in env:
        text = env["NF_SWEEP_CONV_TILE_VARIANTS"]
    return [t for t in text.split(",") if t]


def tile_kind(system):
    """The kind of wgmma tile `system` ("normfuse <tile>") runs, or None."""
    for kind in ("/pp", "/mc", "/ws"):
        if system.endswith(kind):
            return kind
    if "/wgmma" not in system:
        return None
    return "/wgmma/tma" if system.endswith("/tma") else "/wgmma"


def record_loss(system, why, losses):
    """`losses` ({kind: why}) with `system`'s kind of wgmma tile lost for
    `why` (the first reason a kind was lost for is kept; nothing where
    `system` is no wgmma tile)."""
    kind = tile_kind(system)
    if kind and kind not in losses:
        return {**losses, kind: why}
    return losses


def skip_reason(tile, losses):
    """Why `tile` is skipped: the reason of the widest kind lost that it
    is of, or "" where none."""
    for kind in WGMMA_KINDS:
        if kind in losses and kind in tile:
            return losses[kind]
    return ""


class Sweep:
    def __init__(self, args, B, torch_ok):
        self.args = args
        self.B = B
        self.torch_ok = torch_ok
        self.compile_spent = 0.0
        # The system being measured (a context lost names it), and the
        # kinds of wgmma tile lost before a resume, with why ({kind: why};
        # skip_reason): "/wgmma", every wgmma tile; "/wgmma/tma", the ones
        # TMA loads feed; "/ws", the warp-specialized ones; "/mc", those in
        # clusters that share B's tiles; "/pp", those in two teams.
        self.system = "normfuse"
        self.lost_tiles = {}
        # Why normfuse's own kernels (a system: "normfuse", or "normfuse
        # <row schedule>") are skipped for an op, direction and dtype: one
        # of them hung in an earlier case, and would likely hang again.
        self.hung_kernels = {}
        self.compiled = {}
        self.compiled_shapes = {}
        self.out = open(args.jsonl, "a")
        try:
            import normfuse
            self.nf, self.nf_missing = normfuse, None
        except Exception as e:  # noqa: BLE001  (the peers are still worth timing)
            self.nf, self.nf_missing = None, f"import normfuse failed: {type(e).__name__}: {e}"

    def emit(self, record):
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()

    def left(self):
        return self.args.deadline - time.time()

    # -- hangs
    def attempt(self, case, system, hang_s=None):
        """Records that `system` runs in `case` next and, with --hang-s
        (or `hang_s`), ends the process if it has no result that soon (a
        resumed sweep then finds the attempt with nothing after it)."""
        hang_s = self.args.hang_s if hang_s is None else hang_s
        self.emit({"kind": "attempt", "id": case.id, "system": system, "hang_s": hang_s})
        if hang_s > 0:
            faulthandler.dump_traceback_later(hang_s, exit=True)

    def attempt_done(self, case, system):
        """Records that the attempt ended (with a result or an error), so
        that a process that dies later is not blamed on it."""
        faulthandler.cancel_dump_traceback_later()
        self.emit({"kind": "attempt-done", "id": case.id, "system": system})

    # -- timing
    def timed(self, call, poison=(), runs=None):
        """(median ms, min ms, runs) of `call` with CUDA events; L2 flushed and
        `poison` outputs filled with NaN before each timed call."""
        t = self.B.t
        for _ in range(3):
            call()
        t.cuda.synchronize()
        start = time.perf_counter()
        call()
        t.cuda.synchronize()
        once = time.perf_counter() - start
        runs = runs or self.args.runs
        runs = max(3, min(runs, int(1.5 / max(once, 1e-6))))
        pairs = []
        for _ in range(runs):
            for o in poison:
                o.fill_(float("nan"))
            self.B.flush.zero_()
            s, e = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            s.record()
            call()
            e.record()
            pairs.append((s, e))
        t.cuda.synchronize()
        times = [s.elapsed_time(e) for s, e in pairs]
        return statistics.median(times), min(times), runs

    def host_timed(self, call, runs=5):
        """Median wall time of a call with the device synchronized after it
        (launch overhead included, no flush): a check that the call's work
        is on the stream the CUDA events time."""
        sync = self.B.t.cuda.synchronize
        times = []
        for _ in range(runs):
            sync()
            start = time.perf_counter()
            call()
            sync()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)

    def compile_peer(self, spec, case):
        """(callable or None, why not, compile seconds)"""
        _, fn, inputs, dy = spec
        t = self.B.t
        key = (case.op, case.direction)
        # A shape the compiled function has not run is a compile (or a
        # recompile: automatic dynamic shapes make the second one dynamic).
        shape = (case.dtype, tuple(case.shape))
        if shape not in self.compiled_shapes.get(key, set()):
            if self.compile_spent >= self.args.compile_budget_s:
                return None, f"torch.compile budget ({self.args.compile_budget_s:.0f} s) spent", None
            if self.left() < 45:
                return None, "too little sweep time left for a compile", None
        self.compiled_shapes.setdefault(key, set()).add(shape)
        if key not in self.compiled:
            self.compiled[key] = t.compile(fn)
        cfn = self.compiled[key]
        if cfn is None:
            return None, f"torch.compile of {case.op} {case.direction} failed earlier", None
        start = time.perf_counter()
        try:
            if dy is None:
                cfn(*inputs)
                call = lambda: cfn(*inputs)  # noqa: E731
            else:
                call = _grad_peer(self.B, cfn, inputs, dy)
                call()
            t.cuda.synchronize()
        except Exception:
            # A failed compile still spent its time, and would fail again.
            self.compiled[key] = None
            raise
        finally:
            first = time.perf_counter() - start
            self.compile_spent += first
        return call, None, first

    def run_case(self, case):
        self.system = "normfuse"
        B = self.B
        rec = {"kind": "case", "id": case.id, "family": case.family, "op": case.op,
               "direction": case.direction, "dtype": case.dtype, "shape": list(case.shape),
               "tier": case.tier, "systems": {}}
        built = case.build(B, self.torch_ok)
        rec["bytes"] = int(sum(B.nbytes(a) for a in built.inputs) +
                           sum(math.prod(s) * (4 if d == "f32" else 2) for s, d in built.out_specs))
        if built.flops:
            rec["flops"] = built.flops
        refs = None

        def measure(tile=None, row_schedule=None):
            """normfuse's record, compiled with NF_CUDA_TENSOR_CORE_TILE=tile
            or row_norm_schedule=row_schedule where one is given (a tuning
            experiment)."""
            nonlocal refs
            nf = {}
            saved = os.environ.get("NF_CUDA_TENSOR_CORE_TILE")
            system = (self.system if tile else
                      "normfuse " + row_schedule if row_schedule else "normfuse")
            self.attempt(case, system)
            try:
                if self.nf is None:
                    raise RuntimeError(self.nf_missing)
                if tile:
                    os.environ["NF_CUDA_TENSOR_CORE_TILE"] = tile
                start = time.perf_counter()
                options = dict(built.nf_options)
                if row_schedule:
                    options["row_norm_schedule"] = row_schedule
                fn = self.nf.compile(built.mlir, built.entry, target=self.args.target, **options)
                nf["compile_s"] = round(time.perf_counter() - start, 3)
                outs = [B.empty(s, d) for s, d in built.out_specs]
                for o in outs:
                    B.poison(o)
                ins, out_t = built.inputs, tuple(outs)
                call = lambda: fn(*ins, out=out_t)  # noqa: E731
                call()
                B.sync()
                if refs is None:
                    refs = built.reference()
                errs = [B.error(o, r) for o, r in zip(outs, refs)]
                nf["error"] = max(e for e, _ in errs)
                nf["errors"] = [e for e, _ in errs]
                nf["nonfinite"] = sum(b for _, b in errs)
                tol = (CHAIN_TOLERANCE if case.chain else TOLERANCE)[case.dtype]
                nf["tolerance"] = tol
                nf["ok"] = nf["nonfinite"] == 0 and nf["error"] <= tol
                if self.torch_ok:
                    nf["median_ms"], nf["min_ms"], nf["runs"] = self.timed(call, outs)
                    # What the last timed call wrote (outputs poisoned before
                    # each): the same check again (a race shows up here).
                    B.sync()
                    again = [B.error(o, r) for o, r in zip(outs, refs)]
                    nf["error_after_timing"] = max(e for e, _ in again)
                    nf["ok"] = nf["ok"] and sum(b for _, b in again) == 0 and nf["error_after_timing"] <= tol
                    nf["host_ms"] = self.host_timed(call)
                else:
                    nf["timing"] = "skipped: " + self.no_timing
            except Exception as e:  # noqa: BLE001
                nf["ok"] = False
                nf["failure"] = f"{type(e).__name__}: {e}"[:1500]
                self.check_context(e)
            finally:
                self.attempt_done(case, system)
                if saved is None:
                    os.environ.pop("NF_CUDA_TENSOR_CORE_TILE", None)
                else:
                    os.environ["NF_CUDA_TENSOR_CORE_TILE"] = saved
            return nf

        def kernel_key(system):
            return (case.op, case.direction, case.dtype, system)

        def measure_unless_hung(system, **kwargs):
            why = self.hung_kernels.get(kernel_key(system))
            return {"skipped": why} if why else measure(**kwargs)

        rec["systems"]["normfuse"] = measure_unless_hung("normfuse")
        # The f16/bf16 products again under each tensor-core tile listed
        # (tile_variants), as systems "normfuse <tile>" (every product of
        # known sizes takes them, K split where the tiles are too few).
        if case.dtype in ("f16", "bf16"):
            for tile in tile_variants(case.family):
                why = skip_reason(tile, self.lost_tiles)
                if why:
                    rec["systems"]["normfuse " + tile] = {"skipped": why}
                    continue
                self.system = "normfuse " + tile
                rec["systems"]["normfuse " + tile] = measure_unless_hung("normfuse " + tile, tile=tile)
                self.system = "normfuse"
        # NF_SWEEP_ROW_VARIANTS: the layer and RMS norms and their
        # gradients, the forward group and instance norms (NCHW too),
        # BatchNorm training and the NHWC group norms' gradients again under
        # each row-norm schedule listed, as systems "normfuse <schedule>",
        # beside the automatic choice. Timings want the full-size forms
        # ("split-row:full,cluster-row:full"; the plain names are the
        # tests' small blocks and, for gradients, two blocks); "split-row"
        # also takes BatchNorm's three kernels in NCHW and its gradient's
        # four, not their one kernels; "channels-last-groups" the NHWC
        # group norms' three kernels and their gradients' four, not the one
        # kernel.
        if case.op in ("layer_norm", "rms_norm") or (
                case.op in ("group_norm", "instance_norm") and case.direction == "forward") \
                or case.op == "batch_norm_training" or case.family == "group_norm_nhwc":
            for schedule in filter(None, os.environ.get("NF_SWEEP_ROW_VARIANTS", "").split(",")):
                rec["systems"]["normfuse " + schedule] = measure_unless_hung(
                    "normfuse " + schedule, row_schedule=schedule)
        # peers
        # NF_SWEEP_PEERS: the peers to run (a comma list; all by default).
        asked = os.environ.get("NF_SWEEP_PEERS")
        for name in ("eager", "compile", "liger"):
            self.system = name
            if not self.torch_ok:
                rec["systems"][name] = {"skipped": self.no_peers}
                continue
            if asked is not None and name not in asked.split(","):
                rec["systems"][name] = {"skipped": "not asked for (NF_SWEEP_PEERS)"}
                continue
            spec = built.peers.get(name)
            entry = {}
            # A peer's first call may be a compile: a longer watchdog.
            self.attempt(case, name, 3 * self.args.hang_s)
            try:
                if isinstance(spec, str) or spec is None:
                    entry["skipped"] = spec or "no such peer"
                else:
                    if isinstance(spec, tuple):
                        call, why, first = self.compile_peer(spec, case)
                        if call is None:
                            rec["systems"][name] = {"skipped": why}
                            continue
                        if first is not None:
                            entry["first_call_s"] = round(first, 2)
                    else:
                        call = spec
                    call = with_backend_flags(B.t, built.peer_flags, call)
                    got = call()
                    got = got[0] if isinstance(got, (tuple, list)) else got
                    if refs is None:
                        refs = built.reference()
                    ref0 = refs[0]
                    if got.shape != ref0.shape:
                        got = got.permute(0, 2, 3, 1) if got.dim() == 4 else got
                    entry["error"], entry["nonfinite"] = B.error(got, ref0)
                    entry["median_ms"], entry["min_ms"], entry["runs"] = self.timed(call)
            except Exception as e:  # noqa: BLE001
                entry["failure"] = f"{type(e).__name__}: {e}"[:800]
                self.check_context(e)
            finally:
                self.attempt_done(case, name)
            rec["systems"][name] = entry
        # the copy of the same bytes
        if self.torch_ok:
            t = B.t
            half = rec["bytes"] // 2
            src = t.empty(half, dtype=t.uint8, device="cuda")
            dst = t.empty_like(src)
            cp = {}
            cp["median_ms"], cp["min_ms"], cp["runs"] = self.timed(lambda: dst.copy_(src))
            rec["systems"]["copy"] = cp
            del src, dst
            for entry in rec["systems"].values():
                if "median_ms" in entry:
                    entry["gbps"] = rec["bytes"] / entry["median_ms"] / 1e6
                    entry["fraction_of_copy"] = cp["median_ms"] / entry["median_ms"]
                    if built.flops:
                        entry["tflops"] = built.flops / entry["median_ms"] / 1e9
        else:
            rec["systems"]["copy"] = {"skipped": self.no_timing}
        return rec

    def check_context(self, e):
        text = str(e)
        if self.torch_ok and re.search(r"illegal (memory|address|instruction)|misaligned address|"
                                       r"unspecified launch failure|CUDA_ERROR_LAUNCH_FAILED|"
                                       r"CUDA_ERROR_ILLEGAL", text):
            raise ContextLost(text.splitlines()[0] if text else type(e).__name__)


def environment(torch_ok, target):
    env = {"kind": "environment", "target": target, "python": sys.version.split()[0]}
    try:
        import numpy
        env["numpy"] = numpy.__version__
    except ImportError:
        pass
    try:
        import normfuse
        env["normfuse_module"] = getattr(normfuse, "__file__", "")
    except Exception as e:  # noqa: BLE001
        env["normfuse_module"] = f"not importable: {e}"
    if torch_ok:
        import torch
        env.update(torch=torch.__version__, torch_cuda=torch.version.cuda,
                   gpu=torch.cuda.get_device_name(0),
                   capability=".".join(map(str, torch.cuda.get_device_capability(0))),
                   allow_tf32_matmul=torch.backends.cuda.matmul.allow_tf32,
                   allow_tf32_cudnn=torch.backends.cudnn.allow_tf32,
                   cudnn=torch.backends.cudnn.version(),
                   cudnn_benchmark=torch.backends.cudnn.benchmark,
                   l2_bytes=getattr(torch.cuda.get_device_properties(0), "L2_cache_size", None))
        try:
            import triton
            env["triton"] = triton.__version__
        except ImportError:
            env["triton"] = None
        try:
            from importlib.metadata import version
            env["liger_kernel"] = version("liger-kernel")
        except Exception:  # noqa: BLE001
            env["liger_kernel"] = None
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jsonl", required=True)
    parser.add_argument("--budget-s", type=float, default=float(os.environ.get("NF_SWEEP_BUDGET_S", 240)))
    parser.add_argument("--deadline", type=float, default=0)
    parser.add_argument("--compile-budget-s", type=float,
                        default=float(os.environ.get("NF_SWEEP_COMPILE_BUDGET_S", 90)))
    parser.add_argument("--runs", type=int, default=int(os.environ.get("NF_SWEEP_RUNS", 10)))
    parser.add_argument("--filter", default=os.environ.get("NF_SWEEP_FILTER", ""))
    parser.add_argument("--target", default="cuda")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--resume", action="store_true", help="skip cases RECORDS.jsonl has")
    parser.add_argument("--hang-s", type=float, default=None,
                        help="end the process when one of normfuse's measurements has no result "
                             "after this long (default 90 on a GPU, off on cuda-sim; 0: off)")
    parser.add_argument("--check-records", default="",
                        help="check.py's records: wgmma tiles whose package case timed out are skipped")
    parser.add_argument("--list", action="store_true", help="print the cases and exit")
    parser.add_argument("--compile-only", action="store_true",
                        help="compile every case's MLIR for --target (no data, no run) and exit")
    args = parser.parse_args()
    if args.hang_s is None:
        args.hang_s = 90.0 if args.target == "cuda" else 0.0
    start = time.time()
    args.deadline = min(args.deadline or float("inf"), start + args.budget_s)
    cases = [c for c in all_cases(args.small) if re.search(args.filter, c.id)]
    if args.list:
        for c in cases:
            print(c.tier, c.family, c.id)
        print(len(cases), "cases")
        return 0
    if args.compile_only:
        import normfuse
        failed = 0
        for c in cases:
            built = c.build(ShapeBackend(), False)
            start = time.perf_counter()
            try:
                normfuse.compile(built.mlir, built.entry, target=args.target)
                print(f"ok   {c.id} ({time.perf_counter() - start:.1f} s)", flush=True)
            except Exception as e:  # noqa: BLE001
                failed += 1
                print(f"FAIL {c.id}: {type(e).__name__}: {e}", flush=True)
        print(f"{len(cases) - failed} of {len(cases)} cases compiled for {args.target}")
        return 1 if failed else 0
    done, hung, lost_tiles, hung_kernels = set(), None, {}, {}
    if args.resume:
        earlier = read_records(args.jsonl)
        hung = trailing_attempt(earlier)
        if hung:
            # The process ended in this measurement (the watchdog, or a
            # crash): that case's failure.
            hung = {"kind": "case-failed", "id": hung["id"], "system": hung["system"],
                    "failure": f"no result within {hung.get('hang_s', 0):g} s: the process hung "
                               "or died in this measurement"}
            earlier.append(hung)
        for r in earlier:
            if r.get("kind") in ("case", "case-failed"):
                done.add(r["id"])
            if r.get("kind") == "case-failed":
                system = r.get("system", "")
                hang = str(r.get("failure", "")).startswith("no result within")
                why = (f"{system} hung in {r['id']}" if hang
                       else f"{system} lost the CUDA context in {r['id']}")
                lost_tiles = record_loss(system, why, lost_tiles)
                # normfuse's own kernel for the op, direction and dtype
                # (a case id's first three parts) would likely hang again.
                if hang and system.startswith("normfuse"):
                    hung_kernels[tuple(r["id"].split("/")[:3]) + (system,)] = why
    if args.check_records:
        # A wgmma package case that timed out in the check (check.py).
        for r in read_records(args.check_records):
            kind = CHECK_SUFFIX_KINDS.get(re.sub(r".*(_wgmma\w*)$|.*", r"\1", r.get("case", "")))
            if kind and str(r.get("error") or "").startswith("timed out"):
                lost_tiles = record_loss(
                    "normfuse " + kind, f"the package check of {r['case']} timed out",
                    lost_tiles)
    torch_ok, why = False, ""
    if args.target == "cuda":
        try:
            import torch
            torch_ok = torch.cuda.is_available()
            why = "" if torch_ok else "PyTorch sees no CUDA device"
        except ImportError:
            why = "PyTorch is not installed"
    else:
        why = f"target {args.target}: no GPU"
    if torch_ok:
        torch.backends.cudnn.benchmark = True
        import torch._dynamo
        # Every shape and dtype gets compiled code, not a silent fallback
        # to eager after the default 8 recompiles.
        for knob in ("cache_size_limit", "recompile_limit"):
            if hasattr(torch._dynamo.config, knob):
                setattr(torch._dynamo.config, knob, 256)
        # The backward peers call autograd.grad with retain_graph=True (one
        # graph, timed many times), which a compiled backward with donated
        # buffers (the default since PyTorch 2.6) refuses.
        try:
            import torch._functorch.config as functorch_config
            if hasattr(functorch_config, "donated_buffer"):
                functorch_config.donated_buffer = False
        except ImportError:
            pass
        B = TorchBackend()
    else:
        B = NumpyBackend()
    sweep = Sweep(args, B, torch_ok)
    # A wgmma tile (never run on a GPU before 2026-11-28) that lost the
    # context would lose it again in every product case: after one, the
    # resumed sweep times the others without them (a TMA tile's loss skips
    # only the TMA tiles, a warp-specialized one's only those).
    sweep.lost_tiles = lost_tiles
    sweep.hung_kernels = hung_kernels
    sweep.no_timing = f"{why}: no timing (the dry run measures nothing)"
    sweep.no_peers = f"{why}: peers not run"
    if hung:
        sweep.emit(hung)
        print(f"sweep: {hung['system']} had no result in {hung['id']}", flush=True)
    if not args.resume:
        env = environment(torch_ok, args.target)
        env.update(settings={"runs": args.runs, "warmup": 3, "flush_bytes": FLUSH_BYTES if torch_ok else 0,
                             "budget_s": args.budget_s, "compile_budget_s": args.compile_budget_s,
                             "small": args.small, "tolerance": TOLERANCE, "chain_tolerance": CHAIN_TOLERANCE,
                             "cases": len(cases),
                             "torch_compile": "torch.compile(fn), default mode, automatic dynamic shapes",
                             "poisoned": "normfuse's outputs (out=), before every timed call"})
        sweep.emit(env)
    ran = 0
    for i, case in enumerate(cases):
        if case.id in done:
            continue
        if sweep.left() < (3 if not torch_ok else 8):
            for rest in cases[i:]:
                if rest.id not in done:
                    sweep.emit({"kind": "case", "id": rest.id, "family": rest.family, "op": rest.op,
                                "direction": rest.direction, "dtype": rest.dtype, "shape": list(rest.shape),
                                "tier": rest.tier, "skipped": "the sweep's budget was spent"})
            break
        t0 = time.perf_counter()
        try:
            rec = sweep.run_case(case)
        except ContextLost as e:
            sweep.emit({"kind": "case-failed", "id": case.id, "family": case.family, "op": case.op,
                        "direction": case.direction, "dtype": case.dtype, "shape": list(case.shape),
                        "tier": case.tier, "system": sweep.system, "failure": f"CUDA context lost: {e}"})
            print(f"sweep: CUDA context lost in {case.id}: {e}", flush=True)
            return 3
        except Exception as e:  # noqa: BLE001
            rec = {"kind": "case", "id": case.id, "family": case.family, "op": case.op,
                   "direction": case.direction, "dtype": case.dtype, "shape": list(case.shape),
                   "tier": case.tier, "failure": f"{type(e).__name__}: {e}"[:1500],
                   "traceback": traceback.format_exc()[-1500:]}
        rec["seconds"] = round(time.perf_counter() - t0, 2)
        sweep.emit(rec)
        ran += 1
        nf = rec.get("systems", {}).get("normfuse", {})
        line = f"{case.id}: normfuse "
        if "median_ms" in nf:
            line += f"{nf['median_ms']:.4f} ms ({nf.get('fraction_of_copy', 0):.2f} of copy)"
        line += f" err {nf['error']:.2g}" if "error" in nf else f" FAILED {nf.get('failure', rec.get('failure', ''))[:200]}"
        for name in ("eager", "compile", "liger"):
            e = rec.get("systems", {}).get(name, {})
            if "median_ms" in e:
                line += f" | {name} {e['median_ms']:.4f} ms"
        print(line, flush=True)
        if torch_ok and i % 8 == 7:
            B.t.cuda.empty_cache()
    print(f"sweep: {ran} cases in {time.time() - start:.0f} s "
          f"(torch.compile first calls {sweep.compile_spent:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
