"""The ONNX graph walk: a model's inputs become the function's arguments,
its initializers and every node whose inputs are all known constants
become NumPy arrays (folded by ONNX's own reference evaluator, so shape
arithmetic disappears), and every other node is written as TOSA or nf ops
by its converter in _ops.py."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import onnx
from onnx import numpy_helper

from . import _mlir
from ._mlir import Body, Value

# The opsets of the default domain the importer reads: every operator
# version through opset MAX_OPSET was reviewed against its converter.
# Models of opsets MIN_OPSET and newer import whole; older ones where each
# node's operator version is one its converter reads (CONVERTERS' `since`).
MIN_OPSET = 13
MAX_OPSET = 28
# The oldest opset a model may import (a converter may still refuse an
# operator version older than it reads).
OLDEST_OPSET = 1

_ELEMENTS = {
    onnx.TensorProto.FLOAT: "f32",
    onnx.TensorProto.FLOAT16: "f16",
    onnx.TensorProto.BFLOAT16: "bf16",
    onnx.TensorProto.DOUBLE: "f64",
    onnx.TensorProto.BOOL: "i1",
    onnx.TensorProto.INT8: "i8",
    onnx.TensorProto.INT16: "i16",
    onnx.TensorProto.INT32: "i32",
    onnx.TensorProto.INT64: "i64",
    onnx.TensorProto.UINT8: "ui8",
    onnx.TensorProto.UINT16: "ui16",
    onnx.TensorProto.UINT32: "ui32",
    onnx.TensorProto.UINT64: "ui64",
}


class OnnxImportError(ValueError):
    """A model the importer cannot write as MLIR; the message names the
    node (its name, or its index and operator) and what is wrong."""


class NotConstant(OnnxImportError):
    """A node needs a constant (axes, a shape, a bound) where the model
    gives a run-time tensor. `graph_inputs` names the graph inputs that
    tensor is computed from: passing their values as constants
    (import_graph's `constants`) makes it one."""

    def __init__(self, message: str, graph_inputs: Tuple[str, ...]):
        super().__init__(message)
        self.graph_inputs = graph_inputs


def element_of_onnx(elem_type: int) -> Optional[str]:
    return _ELEMENTS.get(elem_type)


def onnx_type_name(elem_type: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"an unknown element type ({elem_type})"


@dataclass(frozen=True)
class Port:
    """One argument or result of the imported function."""

    name: str
    shape: Tuple[int, ...]
    element: str


@dataclass(frozen=True)
class Imported:
    """An imported model: the MLIR module text, and its function's name,
    arguments and results (in the ONNX graph's input and output order)."""

    text: str
    entry: str
    inputs: Tuple[Port, ...]
    outputs: Tuple[Port, ...]


ModelSource = Union[str, bytes, "os.PathLike[str]", onnx.ModelProto]


def load(model: ModelSource) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        return model
    try:
        if isinstance(model, bytes):
            return onnx.load_model_from_string(model)
        path = os.fspath(model)
        if not os.path.isfile(path):
            raise OnnxImportError(f"no ONNX model {path!r}")
        return onnx.load(path)
    except OnnxImportError:
        raise
    except Exception as e:  # protobuf's DecodeError and friends
        raise OnnxImportError(f"not a valid ONNX model: {e}") from None


def _opset(model: onnx.ModelProto) -> int:
    versions = {o.domain: o.version for o in model.opset_import}
    version = versions.get("", versions.get("ai.onnx"))
    if version is None:
        raise OnnxImportError("the model imports no opset of the default ONNX domain")
    if not OLDEST_OPSET <= version <= MAX_OPSET:
        raise OnnxImportError(
            f"the model's opset is {version}; the importer reads opsets "
            f"{MIN_OPSET} to {MAX_OPSET} (onnx.version_converter converts others)")
    return version


def _input_shape(info: onnx.ValueInfoProto, given: Mapping[str, Sequence[int]]) -> Tuple[int, ...]:
    tensor = info.type.tensor_type
    if info.name in given:
        shape = tuple(int(d) for d in given[info.name])
        if tensor.HasField("shape"):
            declared = tensor.shape.dim
            if len(declared) != len(shape) or any(
                    d.HasField("dim_value") and d.dim_value != s
                    for d, s in zip(declared, shape)):
                raise OnnxImportError(
                    f"input {info.name!r}: the given shape {list(shape)} does not "
                    f"match the model's {_shape_text(tensor.shape)}")
        if any(s < 0 for s in shape):
            raise OnnxImportError(f"input {info.name!r}: negative size in {list(shape)}")
        return shape
    if not tensor.HasField("shape"):
        raise OnnxImportError(
            f"input {info.name!r} has no shape in the model; give it: "
            f"input_shapes={{{info.name!r}: (...)}}")
    shape = []
    for i, d in enumerate(tensor.shape.dim):
        if not d.HasField("dim_value"):
            what = repr(d.dim_param) if d.dim_param else "unknown"
            raise OnnxImportError(
                f"input {info.name!r} has a dynamic dimension {i} ({what}); "
                f"give its size: input_shapes={{{info.name!r}: (...)}}")
        shape.append(int(d.dim_value))
    return tuple(shape)


def _shape_text(shape: onnx.TensorShapeProto) -> str:
    return "[" + ", ".join(str(d.dim_value) if d.HasField("dim_value")
                           else (d.dim_param or "?") for d in shape.dim) + "]"


def _port_element(info: onnx.ValueInfoProto, what: str) -> str:
    if not info.type.HasField("tensor_type"):
        raise OnnxImportError(f"{what} {info.name!r} is not a tensor")
    elem = info.type.tensor_type.elem_type
    element = element_of_onnx(elem)
    if element is None:
        raise OnnxImportError(
            f"{what} {info.name!r} has element type {onnx_type_name(elem)}, "
            "which normfuse does not take")
    return element


class Context:
    """What a converter works with: the node, its attributes, the body it
    writes into, and helpers for the shapes TOSA needs spelled out."""

    def __init__(self, importer: "_Importer", node: onnx.NodeProto, index: int):
        self.importer = importer
        self.body: Body = importer.body
        self.node = node
        self.index = index
        self.opset = importer.opset
        self.version = importer.operator_version(node.op_type)
        self.attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}

    # --- errors ---------------------------------------------------------
    def where(self) -> str:
        name = f"{self.node.name!r}" if self.node.name else f"#{self.index}"
        return f"node {name} ({self.node.op_type})"

    def error(self, message: str) -> OnnxImportError:
        return OnnxImportError(f"{self.where()}: {message}")

    # --- attributes -----------------------------------------------------
    def attr(self, name: str, default=None):
        value = self.attrs.get(name, default)
        if isinstance(value, bytes):
            value = value.decode()
        return value

    # --- values ---------------------------------------------------------
    def value(self, x) -> Value:
        """A run-time value for x, writing a constant for an array."""
        if isinstance(x, Value):
            return x
        return self.importer.constant(np.asarray(x))

    def constant_input(self, x, what: str) -> np.ndarray:
        if isinstance(x, Value):
            raise NotConstant(
                f"{self.where()}: {what} must be a constant (an initializer or "
                "computed from constants), not a run-time tensor",
                tuple(sorted(self.importer.sources.get(x.ssa, ()))))
        if x is None:
            raise self.error(f"{what} is missing")
        return np.asarray(x)

    def element(self, x) -> str:
        if isinstance(x, Value):
            return x.element
        element = _mlir.element_of(np.asarray(x).dtype)
        if element is None:
            raise self.error(f"a constant of dtype {np.asarray(x).dtype} has no MLIR type")
        return element

    @staticmethod
    def shape(x) -> Tuple[int, ...]:
        return x.shape if isinstance(x, Value) else tuple(np.shape(x))

    def splat(self, value, element: str, rank: int) -> Value:
        return self.importer.constant(np.full((1,) * rank, value, _mlir.NUMPY[element]))

    # --- shapes ---------------------------------------------------------
    def reshape(self, x, shape: Sequence[int]):
        shape = tuple(int(d) for d in shape)
        if not isinstance(x, Value):
            return np.reshape(np.asarray(x), shape)
        if x.shape == shape:
            return x
        (y,) = self.body.op("tosa.reshape", [x], [(shape, x.element)],
                            "new_shape = " + _mlir.i64_array(shape))
        return y

    def to_rank(self, x, rank: int):
        shape = self.shape(x)
        return self.reshape(x, (1,) * (rank - len(shape)) + tuple(shape))

    def transpose(self, x, perm: Sequence[int]):
        perm = [int(p) for p in perm]
        if not isinstance(x, Value):
            return np.transpose(np.asarray(x), perm)
        if perm == list(range(len(perm))):
            return x
        perms = self.importer.constant(np.array(perm, np.int32))
        shape = tuple(x.shape[p] for p in perm)
        (y,) = self.body.op("tosa.transpose", [x, perms], [(shape, x.element)])
        return y

    def cast(self, x, element: str):
        if not isinstance(x, Value):
            return np.asarray(x).astype(_mlir.NUMPY[element])
        if x.element == element:
            return x
        (y,) = self.body.op("tosa.cast", [x], [(x.shape, element)])
        return y

    def broadcast_to(self, x, shape: Sequence[int]) -> Value:
        """x repeated to `shape` (numpy's rules) by a tosa.tile."""
        shape = tuple(shape)
        if not isinstance(x, Value):
            return self.value(np.broadcast_to(np.asarray(x), shape))
        x = self.to_rank(x, len(shape))
        if x.shape == shape:
            return x
        multiples = [t if s == 1 else 1 for s, t in zip(x.shape, shape)]
        (y,) = self.body.op("tosa.tile", [x], [(shape, x.element)],
                            "multiples = " + _mlir.i64_array(multiples))
        return y

    def op(self, name: str, operands, shape, element: str, attrs: str = "") -> Value:
        (y,) = self.body.op(name, [self.value(o) for o in operands],
                            [(shape, element)], attrs)
        return y


class _Importer:
    def __init__(self, model: onnx.ModelProto, input_shapes, entry: str, constants):
        self.model = model
        self.opset = _opset(model)
        self.body = Body()
        self.entry = entry
        self.input_shapes = dict(input_shapes or {})
        self.given_constants = dict(constants or {})
        # The graph inputs each run-time value is computed from.
        self.sources: Dict[str, frozenset] = {}
        self._versions: Dict[str, int] = {}
        self._constants: Dict[Tuple[str, Tuple[int, ...], bytes], Value] = {}

    def operator_version(self, op_type: str) -> int:
        """The version of `op_type` in the model's opset (0 if ONNX has no
        such operator)."""
        if op_type not in self._versions:
            try:
                schema = onnx.defs.get_schema(op_type, self.opset, "")
                self._versions[op_type] = schema.since_version
            except Exception:
                self._versions[op_type] = 0
        return self._versions[op_type]

    def constant(self, array: np.ndarray) -> Value:
        element = _mlir.element_of(array.dtype)
        if element is None:
            raise OnnxImportError(f"a constant of dtype {array.dtype} has no MLIR type")
        key = (element, array.shape, array.tobytes())
        if key not in self._constants:
            self._constants[key] = self.body.constant(array, element)
        return self._constants[key]

    def run(self) -> Imported:
        from ._ops import CONVERTERS  # noqa: PLC0415 (cycle)

        graph = self.model.graph
        env: Dict[str, object] = {}
        for init in graph.initializer:
            try:
                env[init.name] = numpy_helper.to_array(init)
            except Exception as e:
                raise OnnxImportError(f"initializer {init.name!r}: {e}") from None
        for init in graph.sparse_initializer:
            raise OnnxImportError(f"sparse initializer {init.values.name!r} is not supported")

        args: List[Value] = []
        inputs: List[Port] = []
        names = {i.name for i in graph.input}
        for what, given in (("input_shapes", self.input_shapes),
                            ("constants", self.given_constants)):
            unknown = set(given) - names
            if unknown:
                raise OnnxImportError(
                    f"{what} names {sorted(unknown)}, which the model has no input called")
        for name, array in self.given_constants.items():
            env[name] = np.asarray(array)
        for info in graph.input:
            if info.name in env:  # an initializer listed as an input too
                continue
            element = _port_element(info, "input")
            shape = _input_shape(info, self.input_shapes)
            value = Value(f"%arg{len(args)}", shape, element)
            args.append(value)
            self.sources[value.ssa] = frozenset([info.name])
            inputs.append(Port(info.name, shape, element))
            env[info.name] = value

        for index, node in enumerate(graph.node):
            ctx = Context(self, node, index)
            if node.domain not in ("", "ai.onnx"):
                raise ctx.error(f"operator domain {node.domain!r} is not supported")
            ins = []
            for name in node.input:
                if name == "":
                    ins.append(None)
                elif name not in env:
                    raise ctx.error(f"input {name!r} is not defined before the node")
                else:
                    ins.append(env[name])
            if any(isinstance(x, Value) for x in ins):
                converter = CONVERTERS.get(node.op_type)
                if converter is None or ctx.version == 0:
                    raise ctx.error(f"unsupported operator {node.op_type!r}")
                if ctx.version < converter.since:
                    raise ctx.error(
                        f"{node.op_type}-{ctx.version} (opset {self.opset}) is older than "
                        f"the importer reads ({node.op_type}-{converter.since} and newer)")
                self._check_arity(ctx)
                mark = self.body.mark()
                constants = len(self._constants)
                try:
                    outs = converter(ctx, ins)
                except NotConstant:
                    raise
                except OnnxImportError as e:
                    # Integer arithmetic the importer cannot write (i64
                    # division, ...) on values computed from graph inputs:
                    # what those inputs would fold away as constants.
                    runtime = [x for x in ins if isinstance(x, Value)]
                    sources = frozenset().union(*(self.sources.get(x.ssa, ()) for x in runtime))
                    if sources and all(x.element not in _mlir.FLOATS for x in runtime):
                        raise NotConstant(f"{e} (computed from graph inputs "
                                          f"{', '.join(sorted(sources))}: constants only)",
                                          tuple(sorted(sources))) from None
                    raise
                except Exception as e:  # a malformed node: attributes of the wrong type, ...
                    raise ctx.error(f"cannot convert the node ({type(e).__name__}: {e})") from None
                sources = frozenset().union(
                    *(self.sources.get(x.ssa, ()) for x in ins if isinstance(x, Value)))
                for o in outs:
                    if isinstance(o, Value) and o.ssa not in self.sources:
                        self.sources[o.ssa] = sources
                if all(not isinstance(o, Value) or 0 in o.shape for o in outs):
                    # Empty results hold no data: constants, and what
                    # computed them goes (TOSA has no zero-sized tensors).
                    self.body.rewind(mark)
                    for key in list(self._constants)[constants:]:
                        del self._constants[key]
                    outs = [np.zeros(o.shape, _mlir.NUMPY[o.element])
                            if isinstance(o, Value) else o for o in outs]
            else:
                outs = self.fold(ctx, ins)
            outs = list(outs)
            for name, out in zip(node.output, outs + [None] * len(node.output)):
                if name == "":
                    continue
                if out is None:
                    raise ctx.error(f"output {name!r} is not supported")
                env[name] = out

        results: List[Value] = []
        outputs: List[Port] = []
        for info in graph.output:
            if info.name not in env:
                raise OnnxImportError(f"graph output {info.name!r} is never computed")
            value = env[info.name]
            if not isinstance(value, Value):
                value = self.constant(np.asarray(value))
            declared = info.type.tensor_type if info.type.HasField("tensor_type") else None
            if declared is not None and declared.elem_type:
                element = element_of_onnx(declared.elem_type)
                if element != value.element:
                    raise OnnxImportError(
                        f"graph output {info.name!r}: computed as {value.element}, "
                        f"declared {onnx_type_name(declared.elem_type)}")
            results.append(value)
            outputs.append(Port(info.name, value.shape, value.element))

        sig_args = ", ".join(f"{a.ssa}: {a.type}" for a in args)
        sig_results = ", ".join(r.type for r in results)
        lines = [f"func.func @{self.entry}({sig_args}) -> ({sig_results}) {{"]
        lines += self.body.lines
        ret = ", ".join(r.ssa for r in results)
        lines.append(f"  return {ret} : {sig_results}" if results else "  return")
        lines.append("}")
        return Imported("\n".join(lines) + "\n", self.entry, tuple(inputs), tuple(outputs))

    def _check_arity(self, ctx: Context) -> None:
        """The node's input and output counts are ones its schema allows."""
        schema = onnx.defs.get_schema(ctx.node.op_type, self.opset, "")
        inputs, outputs = len(ctx.node.input), len(ctx.node.output)
        if not schema.min_input <= inputs <= schema.max_input:
            raise ctx.error(f"has {inputs} inputs; {ctx.node.op_type}-{ctx.version} takes "
                            f"{schema.min_input} to {schema.max_input}")
        if not schema.min_output <= outputs <= schema.max_output:
            raise ctx.error(f"has {outputs} outputs; {ctx.node.op_type}-{ctx.version} gives "
                            f"{schema.min_output} to {schema.max_output}")

    def fold(self, ctx: Context, ins) -> List[np.ndarray]:
        """A node with only constant inputs, computed by ONNX's reference
        evaluator at the model's opset."""
        from onnx.reference import ReferenceEvaluator  # noqa: PLC0415

        node = onnx.NodeProto()
        node.CopyFrom(ctx.node)
        names = [f"in{i}" if n else "" for i, n in enumerate(node.input)]
        del node.input[:]
        node.input.extend(names)
        feeds = {n: np.asarray(x) for n, x in zip(names, ins) if n}
        try:
            evaluator = ReferenceEvaluator(node, opsets={"": self.opset})
            outs = evaluator.run(None, feeds)
        except Exception as e:
            raise ctx.error(f"cannot fold its constant inputs: {e}") from None
        return [np.asarray(o) for o in outs]


def import_graph(model: ModelSource, input_shapes=None, entry: str = "main",
                 constants=None) -> Imported:
    """The model as MLIR. input_shapes: sizes of inputs with dynamic
    dimensions, by name. constants: values of graph inputs to import as
    constants (no longer arguments), by name."""
    model = load(model)
    if not model.graph.node and not model.graph.output:
        raise OnnxImportError("the model's graph is empty")
    if not entry.isidentifier():
        raise OnnxImportError(f"entry {entry!r} is not a function name")
    return _Importer(model, input_shapes, entry, constants).run()
