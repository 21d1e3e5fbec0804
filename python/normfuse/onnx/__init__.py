"""ONNX models in: `import_model` writes an ONNX graph as MLIR (TOSA for
the arithmetic and data movement, nf ops for the norms, GELU and the
products), `compile` returns a callable like `normfuse.compile`'s.

    import normfuse.onnx
    fn = normfuse.onnx.compile("model.onnx", target="cpu")
    (y,) = fn(x)                      # arrays in the graph's input order

Inputs with dynamic dimensions need their sizes: `input_shapes={"x": (8,
128, 768)}`. Initializers become constants; nodes whose inputs are all
constants (shape arithmetic) are folded by ONNX's reference evaluator.
Opsets 13 to 23 of the default domain are read. Anything else (an
operator the importer does not know, a malformed model, a dynamic
dimension with no size) raises OnnxImportError naming the node, and
nothing is compiled. `python -m normfuse.onnx model.onnx -o model.mlir`
writes the MLIR for nf-run and nf-opt. See docs/ONNX.md.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from ._importer import (MAX_OPSET, MIN_OPSET, Imported, ModelSource, NotConstant,
                        OnnxImportError, Port, import_graph)
from ._ops import CONVERTERS

__all__ = ["OnnxImportError", "NotConstant", "Imported", "Port", "SUPPORTED_OPERATORS",
           "import_model", "import_graph", "compile", "MIN_OPSET", "MAX_OPSET"]

# The operators with run-time inputs the importer writes as MLIR (any
# operator whose inputs are all constants is folded instead).
SUPPORTED_OPERATORS = tuple(sorted(CONVERTERS))


def import_model(model: ModelSource, input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
                 entry: str = "main") -> str:
    """The model (a path, its bytes or an onnx.ModelProto) as MLIR text:
    one function `entry` taking the graph's inputs and returning its
    outputs, in their order."""
    return import_graph(model, input_shapes, entry).text


def compile(model: ModelSource, *, target: str = "cpu", fuse: bool = True,
            input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
            constants: Optional[Mapping[str, "np.ndarray"]] = None,
            threads: Optional[int] = None):
    """The model compiled for `target` ("cpu", "cuda-sim", "cuda"): a
    normfuse.Function taking the graph's inputs in order and returning
    its outputs. `constants` gives graph inputs values fixed at compile
    time (they are then no longer arguments): what an operator needs
    constant, such as axes or a shape, may come from one. `fn.onnx` holds
    the Imported description (names, shapes, element types, MLIR text)."""
    import normfuse  # noqa: PLC0415 (normfuse imports nothing from here)

    imported = import_graph(model, input_shapes, constants=constants)
    fn = normfuse.compile(imported.text, imported.entry, fuse=fuse, target=target,
                          threads=threads)
    fn.onnx = imported
    return fn
