"""Converters: one function per ONNX operator, writing TOSA (elementwise
arithmetic, reductions, data movement) or nf ops (the norms, GELU,
products) for nodes with run-time inputs. Constant-only nodes never get
here: the importer folds them. Each converter takes the node's context
and inputs (Value, NumPy array or None) and returns its outputs."""

from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

from . import _mlir
from ._importer import Context, element_of_onnx, onnx_type_name
from ._mlir import FLOATS, Value, f64_literal, i64_array

CONVERTERS: Dict[str, Callable] = {}


def converts(*names: str, since: int = 6):
    """Registers fn for operators `names`, versions `since` and newer
    (through the importer's MAX_OPSET). The default, 6, is where ONNX
    dropped the legacy `consumed_inputs` attributes; operators whose
    semantics the importer relies on came later say so (multidirectional
    broadcasting: 7, variadic broadcasting: 8, ...)."""
    def register(fn):
        def convert(ctx, ins):
            return fn(ctx, ins)
        convert.since = since
        for name in names:
            CONVERTERS[name] = convert
        return fn
    return register


# --- helpers ----------------------------------------------------------------

def _broadcast_shape(ctx: Context, *xs) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*(ctx.shape(x) for x in xs)))
    except ValueError:
        shapes = ", ".join(str(list(ctx.shape(x))) for x in xs)
        raise ctx.error(f"shapes {shapes} do not broadcast") from None


def _same_element(ctx: Context, *xs) -> str:
    elements = {ctx.element(x) for x in xs if x is not None}
    if len(elements) != 1:
        raise ctx.error(f"operands of different element types {sorted(elements)}")
    return elements.pop()


def _float_only(ctx: Context, element: str) -> None:
    if element not in FLOATS:
        raise ctx.error(f"takes floating-point tensors here, not {element}")


def _elementwise(ctx: Context, name: str, xs, element: Optional[str] = None,
                 attrs: str = "") -> Value:
    """`name` on xs broadcast to one shape (TOSA broadcasts equal ranks)."""
    shape = _broadcast_shape(ctx, *xs)
    operand_element = _same_element(ctx, *xs)
    xs = [ctx.to_rank(x, len(shape)) for x in xs]
    return ctx.op(name, xs, shape, element or operand_element, attrs)


def _axis(ctx: Context, axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def _axes_input(ctx: Context, ins, attr_name: str = "axes", input_index: int = 1,
                since: int = 13) -> Optional[List[int]]:
    """The axes of a reduction, squeeze or unsqueeze: an attribute before
    version `since` of the operator, an optional constant input from it on."""
    if ctx.version < since:
        axes = ctx.attr(attr_name)
        return None if axes is None else [int(a) for a in axes]
    if len(ins) <= input_index or ins[input_index] is None:
        return None
    return [int(a) for a in ctx.constant_input(ins[input_index], "axes").reshape(-1)]



# --- elementwise ------------------------------------------------------------

@converts("Add", since=7)
def _add(ctx, ins):
    return [_elementwise(ctx, "tosa.add", ins[:2])]


@converts("Sub", since=7)
def _sub(ctx, ins):
    return [_elementwise(ctx, "tosa.sub", ins[:2])]


@converts("Mul", since=7)
def _mul(ctx, ins):
    return [_elementwise(ctx, "tosa.mul", ins[:2], attrs="shift = 0 : i8")]


def _divide(ctx: Context, a, b):
    element = _same_element(ctx, a, b)
    if element not in FLOATS:
        # TOSA divides i32 only: narrower integers go through i32.
        if element not in ("i8", "i16", "i32", "ui8", "ui16"):
            raise ctx.error(f"integer division of {element} is not supported")
        wide = [ctx.cast(x, "i32") for x in (a, b)]
        return ctx.cast(_elementwise(ctx, "tosa.int_div", wide), element)
    shape = _broadcast_shape(ctx, a, b)
    if not isinstance(b, Value):
        # By a constant: times its reciprocal (what exporters to TOSA
        # write, and what raising reads, as in a mean's sum * (1/n)).
        reciprocal = (np.asarray(1.0, np.float64) / np.asarray(b, np.float64))
        return _elementwise(ctx, "tosa.mul", [a, reciprocal.astype(np.asarray(b).dtype)],
                            attrs="shift = 0 : i8")
    if ctx.shape(a) == shape and ctx.shape(b) == shape:
        return ctx.op("arith.divf", [a, b], shape, element)
    # TOSA has no float division; a broadcast divisor is a reciprocal
    # times (the form raising reads as 1/x).
    b = ctx.op("tosa.reciprocal", [b], ctx.shape(b), element)
    return _elementwise(ctx, "tosa.mul", [a, b], attrs="shift = 0 : i8")


@converts("Div", since=7)
def _div(ctx, ins):
    return [_divide(ctx, ins[0], ins[1])]


@converts("Pow", since=7)
def _pow(ctx, ins):
    x, y = ins[:2]
    element = ctx.element(x)
    _float_only(ctx, element)
    if ctx.element(y) != element:
        y = ctx.cast(y, element)
    return [_elementwise(ctx, "tosa.pow", [x, y])]


def _variadic(tosa_name: str):
    def convert(ctx, ins):
        xs = [x for x in ins if x is not None]
        if not xs:
            raise ctx.error("has no inputs")
        y = xs[0]
        for x in xs[1:]:
            y = _elementwise(ctx, tosa_name, [y, x])
        return [ctx.value(y)]
    return convert


converts("Max", since=8)(_variadic("tosa.maximum"))
converts("Min", since=8)(_variadic("tosa.minimum"))
converts("Sum", since=8)(_variadic("tosa.add"))


@converts("Mean", since=8)
def _mean(ctx, ins):
    (total,) = _variadic("tosa.add")(ctx, ins)
    element = total.element
    _float_only(ctx, element)
    n = len([x for x in ins if x is not None])
    if n == 1:
        return [total]
    return [_elementwise(ctx, "tosa.mul", [total, ctx.splat(1.0 / n, element, total.rank)],
                         attrs="shift = 0 : i8")]


def _unary(name: str, floats_only: bool = True):
    def convert(ctx, ins):
        x = ctx.value(ins[0])
        if floats_only:
            _float_only(ctx, x.element)
        return [ctx.op(name, [x], x.shape, x.element)]
    return convert


for _onnx, _tosa in [("Exp", "tosa.exp"), ("Log", "tosa.log"), ("Erf", "tosa.erf"),
                     ("Tanh", "tosa.tanh"), ("Sigmoid", "tosa.sigmoid"),
                     ("Reciprocal", "tosa.reciprocal"), ("Floor", "tosa.floor"),
                     ("Ceil", "tosa.ceil"), ("Sin", "tosa.sin"), ("Cos", "tosa.cos"),
                     ("Sqrt", "math.sqrt")]:
    # Erf from 9, Sin and Cos from 7: their first versions.
    converts(_onnx)(_unary(_tosa))
converts("Neg")(_unary("tosa.negate", floats_only=False))
converts("Abs")(_unary("tosa.abs", floats_only=False))
converts("Not", since=1)(_unary("tosa.logical_not", floats_only=False))


@converts("Identity", since=1)
def _identity(ctx, ins):
    return [ins[0]]


@converts("Dropout", since=7)
def _dropout(ctx, ins):
    training = ins[2] if len(ins) > 2 else None
    if training is not None and bool(ctx.constant_input(training, "training_mode")):
        raise ctx.error("training-mode dropout is not supported")
    # Inference: the identity, and a mask that keeps everything.
    return [ins[0], np.ones(ctx.shape(ins[0]), np.bool_)]


def _clamp(ctx: Context, x: Value, low: float, high: float) -> Value:
    _float_only(ctx, x.element)
    return ctx.op("tosa.clamp", [x], x.shape, x.element,
                  f"max_fp = {_f32_attr(high)} : f32, max_int = 0 : i64, "
                  f"min_fp = {_f32_attr(low)} : f32, min_int = 0 : i64")


def _f32_attr(value: float) -> str:
    return "0x%08X" % np.array(value, np.float32).view(np.uint32)


@converts("Relu")
def _relu(ctx, ins):
    return [_clamp(ctx, ctx.value(ins[0]), 0.0, math.inf)]


@converts("Clip", since=11)
def _clip(ctx, ins):
    x = ctx.value(ins[0])
    low = ctx.constant_input(ins[1], "min").item() if len(ins) > 1 and ins[1] is not None else -math.inf
    high = ctx.constant_input(ins[2], "max").item() if len(ins) > 2 and ins[2] is not None else math.inf
    # min above max clips everything to max (ONNX's and NumPy's rule).
    return [_clamp(ctx, x, min(low, high), high)]


@converts("LeakyRelu")
def _leaky_relu(ctx, ins):
    x = ctx.value(ins[0])
    _float_only(ctx, x.element)
    alpha = float(ctx.attr("alpha", 0.01))
    zero = ctx.splat(0, x.element, x.rank)
    positive = _elementwise(ctx, "tosa.greater_equal", [x, zero], element="i1")
    scaled = _elementwise(ctx, "tosa.mul", [x, ctx.splat(alpha, x.element, x.rank)],
                          attrs="shift = 0 : i8")
    return [ctx.op("tosa.select", [positive, x, scaled], x.shape, x.element)]


def _nf_unary(ctx: Context, op: str, x: Value, attrs: str = "") -> Value:
    _float_only(ctx, x.element)
    attr_text = f" {{{attrs}}}" if attrs else ""
    (y,) = ctx.body.custom(lambda outs: f"{op} {x.ssa}{attr_text} : {x.type}",
                           [(x.shape, x.element)])
    return y


@converts("Gelu", since=20)
def _gelu(ctx, ins):
    approximate = ctx.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise ctx.error(f"unknown approximate={approximate!r}")
    return [_nf_unary(ctx, "nf.gelu", ctx.value(ins[0]),
                      f"approximate = #nf.approximation<{approximate}>")]


# --- comparisons and selection -----------------------------------------------

@converts("Equal", since=7)
def _equal(ctx, ins):
    return [_elementwise(ctx, "tosa.equal", ins[:2], element="i1")]


@converts("Greater", since=7)
def _greater(ctx, ins):
    return [_elementwise(ctx, "tosa.greater", ins[:2], element="i1")]


@converts("GreaterOrEqual", since=12)
def _greater_equal(ctx, ins):
    return [_elementwise(ctx, "tosa.greater_equal", ins[:2], element="i1")]


@converts("Less", since=7)
def _less(ctx, ins):
    return [_elementwise(ctx, "tosa.greater", ins[1::-1], element="i1")]


@converts("LessOrEqual", since=12)
def _less_equal(ctx, ins):
    return [_elementwise(ctx, "tosa.greater_equal", ins[1::-1], element="i1")]


@converts("And", since=7)
def _and(ctx, ins):
    return [_elementwise(ctx, "tosa.logical_and", ins[:2])]


@converts("Or", since=7)
def _or(ctx, ins):
    return [_elementwise(ctx, "tosa.logical_or", ins[:2])]


@converts("Xor", since=7)
def _xor(ctx, ins):
    return [_elementwise(ctx, "tosa.logical_xor", ins[:2])]


@converts("Where", since=9)
def _where(ctx, ins):
    cond, a, b = ins[:3]
    if ctx.element(cond) != "i1":
        raise ctx.error("the condition must be a bool tensor")
    shape = _broadcast_shape(ctx, cond, a, b)
    element = _same_element(ctx, a, b)
    xs = [ctx.to_rank(x, len(shape)) for x in (cond, a, b)]
    return [ctx.op("tosa.select", xs, shape, element)]


@converts("Cast", "CastLike", since=6)
def _cast(ctx, ins):
    x = ctx.value(ins[0])
    if ctx.node.op_type == "CastLike":
        target = ctx.element(ins[1])
    else:
        to = int(ctx.attr("to"))
        target = element_of_onnx(to)
        if target is None:
            raise ctx.error(f"cannot cast to {onnx_type_name(to)}")
    if x.element == target:
        return [x]
    if target == "i1":
        zero = ctx.splat(0, x.element, x.rank)
        is_zero = ctx.op("tosa.equal", [x, zero], x.shape, "i1")
        return [ctx.op("tosa.logical_not", [is_zero], x.shape, "i1")]
    if x.element in FLOATS and target not in FLOATS:
        # ONNX truncates toward zero; tosa.cast rounds to nearest.
        zero = ctx.splat(0, x.element, x.rank)
        negative = ctx.op("tosa.greater", [zero, x], x.shape, "i1")
        up = ctx.op("tosa.ceil", [x], x.shape, x.element)
        down = ctx.op("tosa.floor", [x], x.shape, x.element)
        x = ctx.op("tosa.select", [negative, up, down], x.shape, x.element)
    return [ctx.cast(x, target)]


# --- reductions -------------------------------------------------------------

_REDUCE = {"ReduceSum": "tosa.reduce_sum", "ReduceMean": "tosa.reduce_sum",
           "ReduceMax": "tosa.reduce_max", "ReduceMin": "tosa.reduce_min",
           "ReduceProd": "tosa.reduce_prod", "ReduceSumSquare": "tosa.reduce_sum",
           "ReduceL2": "tosa.reduce_sum"}


def _reduce(ctx: Context, name: str, x: Value, axes: Sequence[int], keepdims: bool) -> Value:
    shape = list(x.shape)
    for axis in sorted(set(axes)):
        shape[axis] = 1
        x = ctx.op(name, [x], tuple(shape), x.element, f"axis = {axis} : i32")
    return x


@converts(*_REDUCE, since=11)
def _reduction(ctx, ins):
    op = ctx.node.op_type
    x = ctx.value(ins[0])
    since = 13 if op == "ReduceSum" else 18
    axes = _axes_input(ctx, ins, since=since)
    keepdims = bool(ctx.attr("keepdims", 1))
    if not axes:
        if ctx.attr("noop_with_empty_axes", 0):
            return [x]
        axes = list(range(x.rank))
    axes = sorted({_axis(ctx, a, x.rank) for a in axes})
    if op in ("ReduceMean", "ReduceSumSquare", "ReduceL2"):
        _float_only(ctx, x.element)
    if op in ("ReduceSumSquare", "ReduceL2"):
        x = ctx.op("tosa.mul", [x, x], x.shape, x.element, "shift = 0 : i8")
    count = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    if count == 0:
        # A reduction over no elements is its identity (ONNX's values).
        shape = [1 if i in axes else d for i, d in enumerate(x.shape)]
        if not keepdims:
            shape = [d for i, d in enumerate(x.shape) if i not in axes]
        identity = {"ReduceProd": 1, "ReduceMax": -math.inf, "ReduceMin": math.inf,
                    "ReduceMean": math.nan}.get(op, 0)
        if x.element == "i1":
            identity = {"ReduceMax": False, "ReduceMin": True, "ReduceProd": True}.get(op, False)
        elif identity in (-math.inf, math.inf) and x.element not in FLOATS:
            info = np.iinfo(_mlir.NUMPY[x.element])
            identity = info.min if identity < 0 else info.max
        return [np.full(shape, identity, _mlir.NUMPY[x.element])]
    y = _reduce(ctx, _REDUCE[op], x, axes, keepdims)
    if op == "ReduceMean":
        y = ctx.op("tosa.mul", [y, ctx.splat(1.0 / count if count else math.nan,
                                                   y.element, y.rank)],
                   y.shape, y.element, "shift = 0 : i8")
    elif op == "ReduceL2":
        y = ctx.op("math.sqrt", [y], y.shape, y.element)
    if not keepdims:
        y = ctx.reshape(y, [d for i, d in enumerate(x.shape) if i not in axes])
    return [y]


def _softmax_parts(ctx: Context, x: Value):
    _float_only(ctx, x.element)
    axis = _axis(ctx, int(ctx.attr("axis", -1)), x.rank)
    peak = _reduce(ctx, "tosa.reduce_max", x, [axis], True)
    shifted = _elementwise(ctx, "tosa.sub", [x, peak])
    e = ctx.op("tosa.exp", [shifted], x.shape, x.element)
    total = _reduce(ctx, "tosa.reduce_sum", e, [axis], True)
    return shifted, e, total


@converts("Softmax", since=13)
def _softmax(ctx, ins):
    _, e, total = _softmax_parts(ctx, ctx.value(ins[0]))
    return [_divide(ctx, e, total)]


@converts("LogSoftmax", since=13)
def _log_softmax(ctx, ins):
    shifted, _, total = _softmax_parts(ctx, ctx.value(ins[0]))
    log_total = ctx.op("tosa.log", [total], total.shape, total.element)
    return [_elementwise(ctx, "tosa.sub", [shifted, log_total])]


# --- data movement ----------------------------------------------------------

@converts("Reshape", since=5)
def _reshape(ctx, ins):
    x = ctx.value(ins[0])
    target = [int(d) for d in ctx.constant_input(ins[1], "shape").reshape(-1)]
    allowzero = bool(ctx.attr("allowzero", 0))
    shape = []
    for i, d in enumerate(target):
        if d == 0 and not allowzero:
            if i >= x.rank:
                raise ctx.error(f"shape {target} copies dimension {i}, which the input lacks")
            d = x.shape[i]
        shape.append(d)
    if shape.count(-1) > 1:
        raise ctx.error(f"shape {target} has more than one -1")
    size = int(np.prod(x.shape))
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1]))
        if known == 0 or size % known:
            raise ctx.error(f"cannot reshape {list(x.shape)} to {target}")
        shape[shape.index(-1)] = size // known
    if int(np.prod(shape)) != size or any(d < 0 for d in shape):
        raise ctx.error(f"cannot reshape {list(x.shape)} to {target}")
    return [ctx.reshape(x, shape)]


@converts("Flatten", since=1)
def _flatten(ctx, ins):
    x = ctx.value(ins[0])
    axis = int(ctx.attr("axis", 1))
    if not -x.rank <= axis <= x.rank:
        raise ctx.error(f"axis {axis} is out of range for rank {x.rank}")
    if axis < 0:
        axis += x.rank
    outer = int(np.prod(x.shape[:axis]))
    return [ctx.reshape(x, (outer, int(np.prod(x.shape[axis:]))))]


@converts("Squeeze", since=11)
def _squeeze(ctx, ins):
    x = ctx.value(ins[0])
    axes = _axes_input(ctx, ins)
    if axes is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    axes = {_axis(ctx, a, x.rank) for a in axes}
    if any(x.shape[a] != 1 for a in axes):
        raise ctx.error(f"cannot squeeze axes {sorted(axes)} of shape {list(x.shape)}")
    return [ctx.reshape(x, [d for i, d in enumerate(x.shape) if i not in axes])]


@converts("Unsqueeze", since=11)
def _unsqueeze(ctx, ins):
    x = ctx.value(ins[0])
    axes = _axes_input(ctx, ins)
    if axes is None:
        raise ctx.error("has no axes")
    rank = x.rank + len(axes)
    axes = {_axis(ctx, a, rank) for a in axes}
    dims = iter(x.shape)
    return [ctx.reshape(x, [1 if i in axes else next(dims) for i in range(rank)])]


@converts("Transpose", since=1)
def _transpose(ctx, ins):
    x = ctx.value(ins[0])
    perm = ctx.attr("perm")
    perm = list(range(x.rank))[::-1] if perm is None else [int(p) for p in perm]
    if sorted(perm) != list(range(x.rank)):
        raise ctx.error(f"perm {perm} is not a permutation of {x.rank} axes")
    return [ctx.transpose(x, perm)]


@converts("Expand", since=8)
def _expand(ctx, ins):
    x = ctx.value(ins[0])
    target = [int(d) for d in ctx.constant_input(ins[1], "shape").reshape(-1)]
    shape = _broadcast_shape(ctx, x, np.empty(target, np.bool_))
    return [ctx.broadcast_to(x, shape)]


@converts("Concat", since=4)
def _concat(ctx, ins):
    xs = [x for x in ins if x is not None]
    element = _same_element(ctx, *xs)
    rank = len(ctx.shape(xs[0]))
    axis = _axis(ctx, int(ctx.attr("axis")), rank)
    shapes = [ctx.shape(x) for x in xs]
    for s in shapes:
        if len(s) != rank or any(a != b for i, (a, b) in enumerate(zip(s, shapes[0])) if i != axis):
            raise ctx.error(f"cannot concatenate shapes {[list(s) for s in shapes]} on axis {axis}")
    xs = [x for x in xs if ctx.shape(x)[axis] != 0]
    shape = list(shapes[0])
    shape[axis] = sum(s[axis] for s in shapes)
    if len(xs) == 1:
        return [xs[0]]
    return [ctx.op("tosa.concat", xs, shape, element, f"axis = {axis} : i32")]


def _gather_axis(ctx: Context, x: Value, axis: int, indices: np.ndarray) -> Value:
    """x's slices `indices` (any shape) along `axis`, by tosa.gather over
    x seen as [outer, K, inner]."""
    k = x.shape[axis]
    indices = np.asarray(indices, np.int64)
    if np.any(indices < -k) or np.any(indices >= k):
        raise ctx.error(f"an index is out of range for a dimension of {k}")
    indices = np.where(indices < 0, indices + k, indices)
    outer = int(np.prod(x.shape[:axis]))
    inner = int(np.prod(x.shape[axis + 1:]))
    count = int(indices.size)
    result_shape = x.shape[:axis] + indices.shape + x.shape[axis + 1:]
    if count == 0 or outer == 0 or inner == 0:
        return ctx.value(np.zeros(result_shape, _mlir.NUMPY[x.element]))
    flat = indices.reshape(-1)
    if count == 1 or np.all(np.diff(flat) == 1):
        # A run of consecutive indices is a slice.
        start = [0] * x.rank
        size = list(x.shape)
        start[axis], size[axis] = int(flat[0]), count
        sliced = ctx.op("tosa.slice", [x], size, x.element,
                        f"size = {i64_array(size)}, start = {i64_array(start)}")
        return ctx.reshape(sliced, result_shape)
    values = ctx.reshape(x, (outer, k, inner))
    table = ctx.value(np.broadcast_to(flat.astype(np.int32), (outer, count)).copy())
    gathered = ctx.op("tosa.gather", [values, table], (outer, count, inner), x.element)
    return ctx.reshape(gathered, result_shape)


@converts("Gather", since=1)
def _gather(ctx, ins):
    x = ctx.value(ins[0])
    indices = ctx.constant_input(ins[1], "indices")
    axis = _axis(ctx, int(ctx.attr("axis", 0)), x.rank)
    return [_gather_axis(ctx, x, axis, indices)]


@converts("Slice", since=10)
def _slice(ctx, ins):
    x = ctx.value(ins[0])
    starts = ctx.constant_input(ins[1], "starts").reshape(-1)
    ends = ctx.constant_input(ins[2], "ends").reshape(-1)
    axes = (ctx.constant_input(ins[3], "axes").reshape(-1)
            if len(ins) > 3 and ins[3] is not None else np.arange(len(starts)))
    steps = (ctx.constant_input(ins[4], "steps").reshape(-1)
             if len(ins) > 4 and ins[4] is not None else np.ones(len(starts), np.int64))
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ctx.error("starts, ends, axes and steps differ in length")
    y = x
    for start, end, axis, step in zip(starts, ends, axes, steps):
        axis = _axis(ctx, int(axis), x.rank)
        if step == 0:
            raise ctx.error("a step of 0")
        # Python's slicing clamps the bounds as ONNX's Slice does.
        picked = np.arange(x.shape[axis])[slice(int(start), int(end), int(step))]
        if len(picked) == y.shape[axis] and np.all(picked == np.arange(y.shape[axis])):
            continue
        y = _gather_axis(ctx, y, axis, picked)
        y = ctx.value(y)
    return [y]


@converts("Pad", since=11)
def _pad(ctx, ins):
    x = ctx.value(ins[0])
    mode = ctx.attr("mode", "constant")
    if mode != "constant":
        raise ctx.error(f"mode {mode!r} is not supported (only 'constant')")
    pads = [int(p) for p in ctx.constant_input(ins[1], "pads").reshape(-1)]
    value = (ctx.constant_input(ins[2], "constant_value").reshape(-1)
             if len(ins) > 2 and ins[2] is not None else np.zeros(1))
    axes = (ctx.constant_input(ins[3], "axes").reshape(-1)
            if len(ins) > 3 and ins[3] is not None else np.arange(x.rank))
    axes = [_axis(ctx, int(a), x.rank) for a in axes]
    if len(pads) != 2 * len(axes):
        raise ctx.error(f"pads {pads} do not have {2 * len(axes)} values")
    if any(p < 0 for p in pads):
        raise ctx.error(f"negative pads {pads} (cropping) are not supported")
    before, after = [0] * x.rank, [0] * x.rank
    for i, a in enumerate(axes):
        before[a], after[a] = pads[i], pads[len(axes) + i]
    if not any(before) and not any(after):
        return [x]
    shape = tuple(d + b + e for d, b, e in zip(x.shape, before, after))
    padding = ctx.value(np.array(list(zip(before, after)), np.int64))
    fill = ctx.value(np.array(value[0] if value.size else 0, _mlir.NUMPY[x.element]))
    return [ctx.op("tosa.pad", [x, padding, fill], shape, x.element)]


@converts("Split", since=13)
def _split(ctx, ins):
    x = ctx.value(ins[0])
    axis = _axis(ctx, int(ctx.attr("axis", 0)), x.rank)
    outputs = len(ctx.node.output)
    if len(ins) > 1 and ins[1] is not None:
        sizes = [int(n) for n in ctx.constant_input(ins[1], "split").reshape(-1)]
    else:
        parts = int(ctx.attr("num_outputs", outputs))
        size = -(-x.shape[axis] // parts)  # the last part may be smaller
        sizes = [min(size, x.shape[axis] - i * size) for i in range(parts)]
    if len(sizes) != outputs or sum(sizes) != x.shape[axis] or min(sizes) < 0:
        raise ctx.error(f"cannot split {x.shape[axis]} into {sizes} for {outputs} outputs")
    results, start = [], 0
    for n in sizes:
        results.append(_gather_axis(ctx, x, axis, np.arange(start, start + n)))
        start += n
    return results


@converts("Shape", since=1)
def _shape(ctx, ins):
    shape = np.array(ctx.shape(ins[0]), np.int64)
    rank = len(shape)
    start = int(ctx.attr("start", 0))
    end = ctx.attr("end")
    end = rank if end is None else int(end)
    return [shape[slice(max(-rank, min(start, rank)), max(-rank, min(end, rank)))]]


@converts("ConstantOfShape", "Range", since=1)
def _constant_only(ctx, ins):
    """Operators whose inputs must be constants (a shape, bounds): folded,
    or refused (NotConstant) for a run-time input."""
    for i, x in enumerate(ins):
        if x is not None:
            ctx.constant_input(x, f"input {i}")
    return ctx.importer.fold(ctx, ins)


@converts("Size", since=1)
def _size(ctx, ins):
    return [np.array(int(np.prod(ctx.shape(ins[0]))), np.int64)]


# --- products ---------------------------------------------------------------

def _matmul(ctx: Context, a, b, transpose_a=False, transpose_b=False) -> Value:
    a, b = ctx.value(a), ctx.value(b)
    element = _same_element(ctx, a, b)
    _float_only(ctx, element)
    squeeze = []
    if a.rank == 1:
        a = ctx.reshape(a, (1, a.shape[0]))
        squeeze.append(-2)
    if b.rank == 1:
        b = ctx.reshape(b, (b.shape[0], 1))
        squeeze.append(-1)
    m, ka = (a.shape[-1], a.shape[-2]) if transpose_a else a.shape[-2:]
    kb, n = (b.shape[-1], b.shape[-2]) if transpose_b else b.shape[-2:]
    if ka != kb:
        raise ctx.error(f"cannot multiply {list(a.shape)} by {list(b.shape)}")
    batch_a, batch_b = a.shape[:-2], b.shape[:-2]
    if batch_a != batch_b and batch_a and batch_b:
        try:
            batch = tuple(np.broadcast_shapes(batch_a, batch_b))
        except ValueError:
            raise ctx.error(f"batch shapes {list(batch_a)} and {list(batch_b)} do not broadcast") from None
        a = ctx.broadcast_to(a, batch + a.shape[-2:])
        b = ctx.broadcast_to(b, batch + b.shape[-2:])
    batch = a.shape[:-2] or b.shape[:-2]
    shape = tuple(batch) + (m, n)
    attrs = [name for flag, name in ((transpose_a, "transpose_lhs"),
                                      (transpose_b, "transpose_rhs")) if flag]
    attr_text = f" {{{', '.join(attrs)}}}" if attrs else ""
    (y,) = ctx.body.custom(
        lambda outs: f"nf.matmul {a.ssa}, {b.ssa}{attr_text} : {a.type}, {b.type} -> {outs[0].type}",
        [(shape, element)])
    if squeeze:
        y = ctx.reshape(y, [d for i, d in enumerate(shape) if i - len(shape) not in squeeze])
    return y


@converts("MatMul", since=1)
def _matmul_node(ctx, ins):
    return [_matmul(ctx, ins[0], ins[1])]


@converts("Gemm", since=7)
def _gemm(ctx, ins):
    a, b = ins[0], ins[1]
    c = ins[2] if len(ins) > 2 else None
    if len(ctx.shape(a)) != 2 or len(ctx.shape(b)) != 2:
        raise ctx.error("A and B must be matrices")
    alpha = float(ctx.attr("alpha", 1.0))
    beta = float(ctx.attr("beta", 1.0))
    y = _matmul(ctx, a, b, bool(ctx.attr("transA", 0)), bool(ctx.attr("transB", 0)))
    if alpha != 1.0:
        y = ctx.op("tosa.mul", [y, ctx.splat(alpha, y.element, 2)], y.shape, y.element,
                   "shift = 0 : i8")
    if c is not None and beta != 0.0:
        if beta != 1.0:
            c = (np.asarray(c) * np.asarray(beta, np.asarray(c).dtype)
                 if not isinstance(c, Value) else
                 _elementwise(ctx, "tosa.mul", [c, ctx.splat(beta, c.element, c.rank)],
                              attrs="shift = 0 : i8"))
        if _broadcast_shape(ctx, y, c) != y.shape:
            raise ctx.error(f"C of shape {list(ctx.shape(c))} does not broadcast to {list(y.shape)}")
        y = _elementwise(ctx, "tosa.add", [y, c])
    return [y]


def _conv_padding(ctx: Context, spatial, kernel, strides, dilations) -> List[int]:
    """ONNX's pads (or auto_pad) as [begin..., end...] per spatial dim."""
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    rank = len(spatial)
    if auto_pad in ("NOTSET", ""):
        pads = [int(p) for p in ctx.attr("pads", [0] * 2 * rank)]
        if len(pads) != 2 * rank:
            raise ctx.error(f"pads {pads} do not have {2 * rank} values")
        return pads
    if auto_pad == "VALID":
        return [0] * 2 * rank
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise ctx.error(f"unknown auto_pad {auto_pad!r}")
    begin, end = [], []
    for size, k, s, d in zip(spatial, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small = total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else total - small)
        end.append(total - begin[-1])
    return begin + end


@converts("Conv", since=1)
def _conv(ctx, ins):
    x, w = ctx.value(ins[0]), ins[1]
    bias = ins[2] if len(ins) > 2 else None
    element = _same_element(ctx, x, w)
    _float_only(ctx, element)
    wshape = ctx.shape(w)
    if x.rank not in (3, 4) or len(wshape) != x.rank:
        raise ctx.error(f"only 1-D and 2-D convolutions are supported (input {list(x.shape)}, "
                        f"filter {list(wshape)})")
    one_d = x.rank == 3
    if one_d:
        x = ctx.reshape(x, x.shape + (1,))
        w = ctx.reshape(w, tuple(wshape) + (1,))
        wshape = ctx.shape(w)
    spatial = x.shape[2:]
    kernel = wshape[2:]
    strides = [int(s) for s in ctx.attr("strides", [1] * (2 - one_d))] + [1] * one_d
    dilations = [int(d) for d in ctx.attr("dilations", [1] * (2 - one_d))] + [1] * one_d
    pads = _conv_padding(ctx, spatial[: 2 - one_d], kernel[: 2 - one_d],
                         strides[: 2 - one_d], dilations[: 2 - one_d])
    if one_d:
        pads = [pads[0], 0, pads[1], 0]
    group = int(ctx.attr("group", 1))
    channels, out_channels = x.shape[1], wshape[0]
    if group < 1 or channels % group or out_channels % group or wshape[1] * group != channels:
        raise ctx.error(f"group {group} does not fit input channels {channels} "
                        f"and filter {list(wshape)}")
    padding = [pads[0], pads[2], pads[1], pads[3]]
    out_spatial = [(size + padding[2 * i] + padding[2 * i + 1] - d * (k - 1) - 1) // s + 1
                   for i, (size, k, s, d) in enumerate(zip(spatial, kernel, strides, dilations))]
    if any(o <= 0 for o in out_spatial):
        raise ctx.error(f"the output would be empty ({out_spatial})")
    attrs = (f"dilations = {i64_array(dilations)}, layout = #nf.layout<nchw>, "
             f"padding = {i64_array(padding)}, strides = {i64_array(strides)}")

    def conv(xg, wg) -> Value:
        wg = ctx.value(wg)
        shape = (xg.shape[0], wg.shape[0], *out_spatial)
        (y,) = ctx.body.custom(
            lambda outs: f"nf.conv2d {xg.ssa}, {wg.ssa} {{{attrs}}} : {xg.type}, {wg.type} -> {outs[0].type}",
            [(shape, element)])
        return y

    if group == 1:
        y = conv(x, w)
    else:
        per_in, per_out = channels // group, out_channels // group
        parts = []
        for g in range(group):
            xg = _gather_axis(ctx, x, 1, np.arange(g * per_in, (g + 1) * per_in))
            wg = (np.asarray(w)[g * per_out:(g + 1) * per_out] if not isinstance(w, Value)
                  else _gather_axis(ctx, w, 0, np.arange(g * per_out, (g + 1) * per_out)))
            parts.append(conv(ctx.value(xg), wg))
        y = ctx.op("tosa.concat", parts, (x.shape[0], out_channels, *out_spatial), element,
                   "axis = 1 : i32")
    if bias is not None:
        b = ctx.value(ctx.cast(bias, element) if ctx.element(bias) != element else bias)
        if b.shape != (out_channels,):
            raise ctx.error(f"bias of shape {list(b.shape)} for {out_channels} channels")
        (y,) = ctx.body.custom(
            lambda outs: f"nf.bias_add {y.ssa}, {b.ssa} {{layout = #nf.layout<nchw>}} : {y.type}, {b.type}",
            [(y.shape, element)])
    if one_d:
        y = ctx.reshape(y, y.shape[:3])
    return [y]


def _pool(ctx: Context, x: Value, op: str) -> Value:
    if x.rank != 4:
        raise ctx.error("only 2-D pooling (NCHW) is supported")
    _float_only(ctx, x.element)
    kernel = [int(k) for k in ctx.attr("kernel_shape")]
    strides = [int(s) for s in ctx.attr("strides", [1, 1])]
    dilations = [int(d) for d in ctx.attr("dilations", [1, 1])]
    if dilations != [1, 1]:
        raise ctx.error("dilated pooling is not supported")
    if ctx.attr("ceil_mode", 0):
        raise ctx.error("ceil_mode=1 is not supported")
    pads = _conv_padding(ctx, x.shape[2:], kernel, strides, dilations)
    pad = [pads[0], pads[2], pads[1], pads[3]]
    if op == "tosa.avg_pool2d" and ctx.attr("count_include_pad", 0) and any(pad):
        raise ctx.error("count_include_pad=1 with padding is not supported")
    out = [(size + pad[2 * i] + pad[2 * i + 1] - k) // s + 1
           for i, (size, k, s) in enumerate(zip(x.shape[2:], kernel, strides))]
    nhwc = ctx.transpose(x, [0, 2, 3, 1])
    attrs = f"kernel = {i64_array(kernel)}, pad = {i64_array(pad)}, stride = {i64_array(strides)}"
    if op == "tosa.avg_pool2d":
        if x.element == "f64":
            raise ctx.error("f64 average pooling is not supported")
        attrs = "acc_type = f32, " + attrs
    y = ctx.op(op, [nhwc], (x.shape[0], out[0], out[1], x.shape[1]), x.element, attrs)
    return ctx.transpose(y, [0, 3, 1, 2])


@converts("MaxPool", since=1)
def _max_pool(ctx, ins):
    return [_pool(ctx, ctx.value(ins[0]), "tosa.max_pool2d"), None]


@converts("AveragePool", since=1)
def _average_pool(ctx, ins):
    return [_pool(ctx, ctx.value(ins[0]), "tosa.avg_pool2d")]


@converts("GlobalAveragePool", "GlobalMaxPool", since=1)
def _global_pool(ctx, ins):
    x = ctx.value(ins[0])
    _float_only(ctx, x.element)
    axes = list(range(2, x.rank))
    if ctx.node.op_type == "GlobalMaxPool":
        return [_reduce(ctx, "tosa.reduce_max", x, axes, True)]
    y = _reduce(ctx, "tosa.reduce_sum", x, axes, True)
    count = int(np.prod(x.shape[2:]))
    return [ctx.op("tosa.mul", [y, ctx.splat(1.0 / count, y.element, y.rank)],
                   y.shape, y.element, "shift = 0 : i8")]


# --- normalizations -----------------------------------------------------------

def _stats_element(ctx: Context, element: str) -> str:
    """The element type of saved statistics: stash_type (float32 by default)."""
    stash = int(ctx.attr("stash_type", 1))
    stats = element_of_onnx(stash)
    if stats not in ("f32", "f64"):
        raise ctx.error(f"stash_type {onnx_type_name(stash)} is not supported")
    if stats == "f32" and element == "f64":
        return "f64"  # computed in f64, as nf does for f64; cast below
    return stats


def _affine(ctx: Context, p, shape, element: str, what: str) -> Optional[Value]:
    """A scale or bias as the norm takes it: shape `shape`, its element
    type the input's."""
    if p is None:
        return None
    try:
        np.broadcast_shapes(ctx.shape(p), tuple(shape))
    except ValueError:
        raise ctx.error(f"{what} of shape {list(ctx.shape(p))} does not broadcast to "
                        f"{list(shape)}") from None
    if tuple(ctx.shape(p)) != tuple(shape):
        if len(ctx.shape(p)) > len(shape):
            p = ctx.reshape(p, [d for d in ctx.shape(p)][-len(shape):])
        p = ctx.broadcast_to(p, shape)
    if ctx.element(p) != element:
        p = ctx.cast(p, element)
    return ctx.value(p)


def _nf_norm(ctx: Context, op: str, x: Value, operands, attrs: str, results):
    parts = [x.ssa] + [f"{kw} {v.ssa}" for kw, v in operands if v is not None]
    types = [x.type] + [v.type for _, v in operands if v is not None]
    outs = ctx.body.custom(
        lambda outs: f"{op} {' '.join(parts)} {{{attrs}}} : ({', '.join(types)}) -> "
                     f"({', '.join(o.type for o in outs)})",
        results)
    return outs


def _stats_out(ctx: Context, v: Value, want: str):
    return ctx.cast(v, want) if v.element != want else v


@converts("LayerNormalization", since=17)
def _layer_norm(ctx, ins):
    x = ctx.value(ins[0])
    _float_only(ctx, x.element)
    axis = _axis(ctx, int(ctx.attr("axis", -1)), x.rank)
    eps = float(ctx.attr("epsilon", 1e-5))
    shape = x.shape[axis:]
    scale = _affine(ctx, ins[1] if len(ins) > 1 else None, shape, x.element, "Scale")
    bias = _affine(ctx, ins[2] if len(ins) > 2 else None, shape, x.element, "B")
    stats = "f64" if x.element == "f64" else "f32"
    stat_shape = x.shape[:axis] + (1,) * (x.rank - axis)
    y, mean, rstd = _nf_norm(ctx, "nf.layer_norm", x, [("scale", scale), ("bias", bias)],
                             f"axis = {axis} : i64, epsilon = {f64_literal(eps)}",
                             [(x.shape, x.element), (stat_shape, stats), (stat_shape, stats)])
    want = element_of_onnx(int(ctx.attr("stash_type", 1))) or "f32"
    return [y, _stats_out(ctx, mean, want), _stats_out(ctx, rstd, want)]


@converts("RMSNormalization", since=23)
def _rms_norm(ctx, ins):
    x = ctx.value(ins[0])
    _float_only(ctx, x.element)
    axis = _axis(ctx, int(ctx.attr("axis", -1)), x.rank)
    eps = float(ctx.attr("epsilon", 1e-5))
    scale = _affine(ctx, ins[1] if len(ins) > 1 else None, x.shape[axis:], x.element, "scale")
    stats = "f64" if x.element == "f64" else "f32"
    stat_shape = x.shape[:axis] + (1,) * (x.rank - axis)
    y, _ = _nf_norm(ctx, "nf.rms_norm", x, [("scale", scale)],
                    f"axis = {axis} : i64, epsilon = {f64_literal(eps)}",
                    [(x.shape, x.element), (stat_shape, stats)])
    return [y]


def _channel_affine(ctx: Context, p, channels: int, groups: int, element: str, what: str):
    if p is None:
        return None
    shape = ctx.shape(p)
    if shape == (groups,) and groups != channels:
        # GroupNormalization-18: one scale and bias per group.
        per = channels // groups
        if isinstance(p, Value):
            p = ctx.reshape(ctx.broadcast_to(ctx.reshape(p, (groups, 1)), (groups, per)),
                            (channels,))
        else:
            p = np.repeat(np.asarray(p), per)
    elif shape != (channels,):
        raise ctx.error(f"{what} of shape {list(shape)} for {channels} channels")
    if ctx.element(p) != element:
        p = ctx.cast(p, element)
    return ctx.value(p)


@converts("GroupNormalization", "InstanceNormalization", since=6)
def _group_norm(ctx, ins):
    x = ctx.value(ins[0])
    _float_only(ctx, x.element)
    if x.rank < 3:
        raise ctx.error(f"the input must have a channel and spatial dimensions, not shape {list(x.shape)}")
    channels = x.shape[1]
    instance = ctx.node.op_type == "InstanceNormalization"
    groups = channels if instance else int(ctx.attr("num_groups"))
    if groups <= 0 or channels % groups:
        raise ctx.error(f"num_groups {groups} does not divide {channels} channels")
    eps = float(ctx.attr("epsilon", 1e-5))
    scale = _channel_affine(ctx, ins[1] if len(ins) > 1 else None, channels, groups, x.element, "scale")
    bias = _channel_affine(ctx, ins[2] if len(ins) > 2 else None, channels, groups, x.element, "bias")
    stats = "f64" if x.element == "f64" else "f32"
    op = "nf.instance_norm" if instance else "nf.group_norm"
    attrs = f"epsilon = {f64_literal(eps)}" + ("" if instance else f", num_groups = {groups} : i64")
    y, _, _ = _nf_norm(ctx, op, x, [("scale", scale), ("bias", bias)], attrs,
                       [(x.shape, x.element), ((x.shape[0], groups), stats),
                        ((x.shape[0], groups), stats)])
    return [y]


@converts("BatchNormalization", since=9)
def _batch_norm(ctx, ins):
    x = ctx.value(ins[0])
    _float_only(ctx, x.element)
    if x.rank < 2:
        raise ctx.error(f"the input must have a channel dimension, not shape {list(x.shape)}")
    channels = x.shape[1]
    eps = float(ctx.attr("epsilon", 1e-5))
    scale, bias, mean, var = ins[1:5]
    for p, what in ((scale, "scale"), (bias, "B"), (mean, "input_mean"), (var, "input_var")):
        if ctx.shape(p) != (channels,):
            raise ctx.error(f"{what} of shape {list(ctx.shape(p))} for {channels} channels")
    scale = ctx.value(ctx.cast(scale, x.element) if ctx.element(scale) != x.element else scale)
    bias = ctx.value(ctx.cast(bias, x.element) if ctx.element(bias) != x.element else bias)
    stats = "f64" if x.element == "f64" else "f32"
    mean_element = ctx.element(mean)
    mean = ctx.value(ctx.cast(mean, stats))
    var = ctx.value(ctx.cast(var, stats))
    operands = f"{x.ssa} scale {scale.ssa} bias {bias.ssa} running({mean.ssa}, {var.ssa})"
    types = ", ".join(v.type for v in (x, scale, bias, mean, var))
    if not ctx.attr("training_mode", 0):
        (y,) = ctx.body.custom(
            lambda outs: f"nf.batch_norm_inference {operands} {{epsilon = {f64_literal(eps)}}} "
                         f": ({types}) -> {outs[0].type}",
            [(x.shape, x.element)])
        return [y]
    momentum = 1.0 - float(ctx.attr("momentum", 0.9))
    c = (channels,)
    y, _, _, new_mean, new_var = ctx.body.custom(
        lambda outs: f"nf.batch_norm_training {operands} {{epsilon = {f64_literal(eps)}, "
                     f"momentum = {f64_literal(momentum)}, unbiased_running_var = false}} "
                     f": ({types}) -> ({', '.join(o.type for o in outs)})",
        [(x.shape, x.element), (c, stats), (c, stats), (c, stats), (c, stats)])
    return [y, _stats_out(ctx, new_mean, mean_element), _stats_out(ctx, new_var, mean_element)]
