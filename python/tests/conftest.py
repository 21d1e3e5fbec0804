"""Shared IR and float64 references for the normfuse package's tests."""

import os
import pathlib

import numpy as np
import pytest

EXAMPLES = pathlib.Path(
    os.environ.get(
        "NF_EXAMPLES_DIR", pathlib.Path(__file__).resolve().parents[2] / "examples"
    )
)


def layer_norm_ir(dtype="f32", rows="?", cols=13, name="ln", stats="f32"):
    """A LayerNorm over the last axis with scale and bias of `stats` dtype,
    returning y, mean and rstd (f32, or f64 for f64 input)."""
    acc = "f64" if dtype == "f64" else "f32"
    x = f"tensor<{rows}x{cols}x{dtype}>"
    p = f"tensor<{cols}x{stats}>"
    s = f"tensor<{rows}x1x{acc}>"
    return f"""
func.func @{name}(%x: {x}, %g: {p}, %b: {p}) -> ({x}, {s}, {s}) {{
  %y, %m, %r = nf.layer_norm %x scale %g bias %b {{axis = 1 : i64, epsilon = 1.0e-5}}
      : ({x}, {p}, {p}) -> ({x}, {s}, {s})
  return %y, %m, %r : {x}, {s}, {s}
}}
"""


def relu_ir(dtype="f32", shape="?x8", name="relu"):
    t = f"tensor<{shape}x{dtype}>"
    return f"""
func.func @{name}(%x: {t}) -> {t} {{
  %0 = nf.relu %x : {t}
  return %0 : {t}
}}
"""


def matmul_ir(m, k, n, name="mm"):
    """An f32 (m, k) @ (k, n) matmul."""
    a, b, y = (f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>",
               f"tensor<{m}x{n}xf32>")
    return (f"func.func @{name}(%a: {a}, %b: {b}) -> {y} {{\n"
            f"  %c = nf.matmul %a, %b : {a}, {b} -> {y}\n"
            f"  return %c : {y}\n}}\n")


def round_to_tf32(x):
    """f32 rounded to 10 fraction bits, to nearest with ties away from zero
    (PTX's cvt.rna.tf32.f32), for finite x."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def layer_norm_reference(x, g, b, eps=1e-5):
    """(y, mean, rstd) in float64."""
    x = np.asarray(x, np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    y = (x - mean) * rstd * np.asarray(g, np.float64) + np.asarray(b, np.float64)
    return y, mean, rstd


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


class DLPackOnly:
    """An array that can only be reached through DLPack (no buffer
    protocol), as a PyTorch or JAX tensor is."""

    def __init__(self, array):
        self.array = array
        self.shape = array.shape

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()
