"""Which of ONNX's backend node tests normfuse runs, and the limits it
knows it has, each with its reason.

Selected: every node test (onnx.backend.test's generated cases, with the
`_expanded` variants that spell an operator as its function body) whose
graph uses only operators the importer converts (Constant nodes are
folded). A selected test either passes, or fails with an error message
that one of KNOWN_LIMITS matches: an expected failure, reported with that
limit's reason. Anything else, and every wrong result, is a failure."""

from __future__ import annotations

import re
import warnings
from typing import Dict, List, Optional, Tuple

import numpy as np
import onnx

import normfuse.onnx

# (message pattern, reason). Order matters: the first match names it.
KNOWN_LIMITS: List[Tuple[str, str]] = [
    (r"cannot run on the CUDA target",
     "an op with no CUDA kernel yet: a pad of a run-time value or sizes "
     "(issue 29)"),
    (r"element type (float8|float4|u?int[24]\b|string|complex)|cannot cast to "
     r"(float8|float4|u?int[24]\b|string|complex)",
     "an element type outside normfuse's (8-bit and 4-bit floats, 2-bit and 4-bit integers, strings)"),
    (r"takes floating-point tensors here, not u?i\d+|integer division of ui(32|64)",
     "integer arithmetic the importer writes for floats only (Pow, Clip, MaxPool; "
     "u32/u64 Div)"),
    (r"ceil_mode=1 is not supported", "pooling with ceil_mode=1"),
    (r"dilated pooling is not supported", "dilated pooling"),
    (r"count_include_pad=1 with padding", "average pooling that counts the padding"),
    (r"only 2-D pooling", "1-D and 3-D pooling"),
    (r"training-mode dropout", "training-mode Dropout (random masks)"),
    (r"\(MaxPool\): output '[^']*' is not supported", "MaxPool's indices output"),
    (r"is not a tensor", "optional and sequence types"),
    (r"\(Pad\): mode '(edge|reflect|wrap)' is not supported", "Pad's edge, reflect and wrap modes"),
    (r"\(Pad\): negative pads", "Pad with negative pads (cropping)"),
]


# A test whose graph folds whole at import (its inputs specialized as
# constants) is not counted as a pass: ONNX's reference evaluator computed it.
FOLDED_REASON = ("folded whole at import by ONNX's reference evaluator (integer or "
                 "shape inputs specialized as constants): no normfuse kernel ran")


def known_limit(error: BaseException) -> Optional[str]:
    """The reason for `error` if it is a known limit, else None."""
    message = str(error)
    for pattern, reason in KNOWN_LIMITS:
        if re.search(pattern, message):
            return reason
    return None


def node_cases() -> List[object]:
    """onnx.backend.test's node test cases (generated in memory)."""
    from onnx.backend.test.loader import load_node_model_tests  # noqa: PLC0415

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.random.seed(0)
        return load_node_model_tests()


def operators(case) -> List[str]:
    return sorted({n.op_type for n in case.model.graph.node})


# Operators the importer always folds (they have no inputs).
FOLDED_ONLY = {"Constant"}


def is_selected(case) -> bool:
    supported = set(normfuse.onnx.SUPPORTED_OPERATORS) | FOLDED_ONLY
    return all(n.domain in ("", "ai.onnx") for n in case.model.graph.node) and \
        set(operators(case)) <= supported


def selected_cases() -> List[object]:
    return [c for c in node_cases() if is_selected(c)]


def operator_of(case, by_name: Dict[str, object]) -> str:
    """The operator a test is about: its own single operator, or that of
    the test it expands (test_x_expanded, test_x_expanded_ver18)."""
    base = re.sub(r"_expanded(_ver\d+)?$", "", case.name)
    twin = by_name.get(base, case)
    ops = [n.op_type for n in twin.model.graph.node if n.op_type not in FOLDED_ONLY]
    return ops[0] if len(set(ops)) == 1 else "+".join(sorted(set(ops))) or "Constant"


def to_array(x) -> np.ndarray:
    if isinstance(x, onnx.TensorProto):
        return onnx.numpy_helper.to_array(x)
    return np.asarray(x)
