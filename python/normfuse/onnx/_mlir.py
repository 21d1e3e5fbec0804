"""MLIR text for the ONNX importer: element types, tensor types, constants
and ops in MLIR's generic form (which every op parses in, whatever its
custom syntax), written into one function body."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

from normfuse import _NUMPY_DTYPES

# MLIR element type -> NumPy dtype: the dtypes normfuse's functions take.
# TOSA's integers are signless; an unsigned ONNX tensor keeps its width and
# is written uiN (the compiler reads it as unsigned).
NUMPY = dict(_NUMPY_DTYPES)
FLOATS = ("f16", "bf16", "f32", "f64")


def element_of(dtype: np.dtype) -> Optional[str]:
    """The MLIR element type of a NumPy dtype, None for one MLIR has none of."""
    dtype = np.dtype(dtype)
    for name, d in NUMPY.items():
        if d == dtype:
            return name
    return None


def tensor_type(shape: Sequence[int], element: str) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{element}>"


def f64_literal(value: float) -> str:
    """A float attribute's text that reads back as exactly `value`."""
    value = float(value)
    if not np.isfinite(value):
        return "0x%016X" % np.array(value, np.float64).view(np.uint64)
    return "%.17e" % value


def i64_array(values: Sequence[int]) -> str:
    return "array<i64" + "".join(
        (": " if i == 0 else ", ") + str(int(v)) for i, v in enumerate(values)
    ) + ">"


def _hex_bits(array: np.ndarray) -> str:
    return "0x" + array.tobytes().hex().upper()


def _scalar_literal(value, element: str) -> str:
    if element == "i1":
        return "true" if bool(value) else "false"
    if element in FLOATS:
        # The bits, as MLIR reads a hexadecimal float literal: exact for
        # every value, NaN and infinities included.
        bits = np.array(value, NUMPY[element])
        return "0x" + bits.tobytes()[::-1].hex().upper()
    return str(int(value))


def dense_literal(array: np.ndarray, element: str) -> str:
    """`dense<...> : tensor<...>` holding `array` exactly."""
    array = np.require(np.asarray(array, NUMPY[element]), requirements="C")
    type_ = tensor_type(array.shape, element)
    flat = array.reshape(-1)
    if flat.size == 0:
        return f"dense<> : {type_}"
    if flat.size == 1 or bool(np.all(flat.view(np.uint8).reshape(flat.size, -1)
                                     == flat[:1].view(np.uint8))):
        return f"dense<{_scalar_literal(flat[0], element)}> : {type_}"
    if element == "i1":
        body = ", ".join("true" if v else "false" for v in flat)
        return f"dense<{_nest(body, array.shape)}> : {type_}"
    # Raw little-endian bytes: exact, and as long as the data, not more.
    return f'dense<"{_hex_bits(array)}"> : {type_}'


def _nest(flat_body: str, shape) -> str:
    items = flat_body.split(", ")
    def build(dims, items):
        if not dims:
            return items[0], items[1:]
        out = []
        for _ in range(dims[0]):
            text, items = build(dims[1:], items)
            out.append(text)
        return "[" + ", ".join(out) + "]", items
    return build(list(shape), items)[0]


@dataclass(frozen=True)
class Value:
    """A tensor computed at run time: its SSA name, shape and element type."""

    ssa: str
    shape: Tuple[int, ...]
    element: str

    @property
    def type(self) -> str:
        return tensor_type(self.shape, self.element)

    @property
    def rank(self) -> int:
        return len(self.shape)


class Body:
    """The lines of one function body, with fresh SSA names."""

    def __init__(self):
        self.lines: List[str] = []
        self._next = 0

    def mark(self) -> int:
        """Where the body ends now, for rewind."""
        return len(self.lines)

    def rewind(self, mark: int) -> None:
        """Drops the lines written since `mark`."""
        del self.lines[mark:]

    def fresh(self) -> str:
        name = f"%{self._next}"
        self._next += 1
        return name

    def op(self, name: str, operands: Sequence[Value],
           results: Sequence[Tuple[Sequence[int], str]], attrs: str = "") -> List[Value]:
        """One op in generic form; `results` are (shape, element) pairs."""
        outs = [Value(self.fresh(), tuple(int(d) for d in s), e) for s, e in results]
        lhs = ", ".join(v.ssa for v in outs)
        args = ", ".join(v.ssa for v in operands)
        in_types = ", ".join(v.type for v in operands)
        out_types = ", ".join(v.type for v in outs)
        if len(outs) != 1:
            out_types = f"({out_types})"
        attr_text = f" {{{attrs}}}" if attrs else ""
        self.lines.append(
            f'  {lhs} = "{name}"({args}){attr_text} : ({in_types}) -> {out_types}')
        return outs

    def custom(self, text_fn, results: Sequence[Tuple[Sequence[int], str]]) -> List[Value]:
        """One op in its custom syntax: text_fn(results) is the line after
        `results =`."""
        outs = [Value(self.fresh(), tuple(int(d) for d in s), e) for s, e in results]
        lhs = ", ".join(v.ssa for v in outs)
        self.lines.append(f"  {lhs} = {text_fn(outs)}")
        return outs

    def constant(self, array: np.ndarray, element: str) -> Value:
        array = np.asarray(array)
        (v,) = self.op("tosa.const", [], [(array.shape, element)],
                       "value = " + dense_literal(array, element))
        return v
