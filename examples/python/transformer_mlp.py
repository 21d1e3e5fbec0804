#!/usr/bin/env python3
"""A transformer MLP block through normfuse, checked against NumPy.

The block is examples/transformer_block.mlir (BERT-base sizes, f16
activations): h = gelu_tanh(x @ W1 + b1) @ W2 + b2; y = layer_norm(x + h).
normfuse fuses it into three kernels (each matmul with its epilogue, then
the residual add with the LayerNorm) and runs it on the CPU; NumPy computes
the same block in float64. Prints both times and the largest difference,
and exits non-zero when the results disagree.

    PYTHONPATH=build/python .venv/bin/python examples/python/transformer_mlp.py
"""

import pathlib
import sys
import time

import numpy as np

import normfuse

BLOCK = pathlib.Path(__file__).resolve().parents[1] / "transformer_block.mlir"
BATCH, SEQ, HIDDEN, INTER = 8, 128, 768, 3072


def gelu_tanh(v):
    return 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v**3)))


def numpy_block(x, w1, b1, w2, b2, gamma, beta, eps=1e-12):
    """The block in float64: (y, mean, rstd)."""
    x, w1, b1, w2, b2 = (a.astype(np.float64) for a in (x, w1, b1, w2, b2))
    h = gelu_tanh(x @ w1 + b1) @ w2 + b2
    r = x + h
    mean = r.mean(axis=-1, keepdims=True)
    var = ((r - mean) ** 2).mean(axis=-1, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    return (r - mean) * rstd * gamma + beta, mean, rstd


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SEQ, HIDDEN)).astype(np.float16)
    w1 = (rng.standard_normal((HIDDEN, INTER)) / np.sqrt(HIDDEN)).astype(np.float16)
    b1 = (0.1 * rng.standard_normal(INTER)).astype(np.float16)
    w2 = (rng.standard_normal((INTER, HIDDEN)) / np.sqrt(INTER)).astype(np.float16)
    b2 = (0.1 * rng.standard_normal(HIDDEN)).astype(np.float16)
    gamma = (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
    beta = (0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
    args = (x, w1, b1, w2, b2, gamma, beta)

    start = time.perf_counter()
    block = normfuse.compile(BLOCK, "transformer_mlp_block")
    print(f"compiled {block} in {time.perf_counter() - start:.2f} s")

    y, mean, rstd = block(*args)
    bench = block.bench(*args, runs=5)
    print(f"normfuse:  {bench}")

    start = time.perf_counter()
    ref_y, ref_mean, ref_rstd = numpy_block(*args)
    numpy_ms = (time.perf_counter() - start) * 1e3
    print(f"NumPy (float64): {numpy_ms:.1f} ms")

    errors = {
        "y": np.abs(y.astype(np.float64) - ref_y).max(),
        "mean": np.abs(mean - ref_mean).max(),
        "rstd": np.abs(rstd - ref_rstd).max() / np.abs(ref_rstd).max(),
    }
    print("largest difference from NumPy: " +
          ", ".join(f"{k} {v:.2e}" for k, v in errors.items()))
    # y is stored as f16 (a relative step of 2^-11 near its largest values).
    ok = errors["y"] < 2e-2 and errors["mean"] < 2e-3 and errors["rstd"] < 2e-3
    print("normfuse matches NumPy" if ok else "normfuse DISAGREES with NumPy")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
