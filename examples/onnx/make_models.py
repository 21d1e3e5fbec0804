#!/usr/bin/env python3
"""Writes the ONNX examples with onnx.helper (no download, no framework):

  transformer_mlp.onnx  a transformer MLP block as torch.onnx exports it
                        at opset 17: MatMul + Add bias, GELU spelled with
                        Erf, MatMul + Add bias, the residual Add, and
                        LayerNorm decomposed (ReduceMean, Sub, Pow,
                        ReduceMean, Add, Sqrt, Div, Mul, Add). 64 tokens of
                        width 64, a hidden layer of 256; f32 weights from
                        a fixed seed.

    python examples/onnx/make_models.py [--out DIR]   (default: beside it)
"""

import argparse
import pathlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = pathlib.Path(__file__).resolve().parent
TOKENS, WIDTH, HIDDEN = 64, 64, 256


def transformer_mlp() -> onnx.ModelProto:
    rng = np.random.default_rng(2026)

    def weight(name, *shape, scale=1.0):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name)

    def scalar(name, value):
        return numpy_helper.from_array(np.array(value, np.float32), name)

    initializers = [
        weight("w1", WIDTH, HIDDEN, scale=WIDTH ** -0.5), weight("b1", HIDDEN, scale=0.1),
        weight("w2", HIDDEN, WIDTH, scale=HIDDEN ** -0.5), weight("b2", WIDTH, scale=0.1),
        weight("gamma", WIDTH, scale=0.1), weight("beta", WIDTH, scale=0.1),
        scalar("sqrt2", np.sqrt(2.0)), scalar("one", 1.0), scalar("half", 0.5),
        scalar("two", 2.0), scalar("eps", 1e-5),
        numpy_helper.from_array(np.array([-1], np.int64), "last"),
    ]
    nodes = [
        # up projection, bias, GELU as 0.5 * x * (1 + erf(x / sqrt(2)))
        helper.make_node("MatMul", ["x", "w1"], ["up"]),
        helper.make_node("Add", ["up", "b1"], ["h"]),
        helper.make_node("Div", ["h", "sqrt2"], ["h_s"]),
        helper.make_node("Erf", ["h_s"], ["erf"]),
        helper.make_node("Add", ["erf", "one"], ["erf1"]),
        helper.make_node("Mul", ["h", "erf1"], ["h_erf"]),
        helper.make_node("Mul", ["h_erf", "half"], ["act"]),
        # down projection, bias, residual
        helper.make_node("MatMul", ["act", "w2"], ["down"]),
        helper.make_node("Add", ["down", "b2"], ["db"]),
        helper.make_node("Add", ["x", "db"], ["r"]),
        # LayerNorm over the last axis, decomposed
        helper.make_node("ReduceMean", ["r", "last"], ["mean"], keepdims=1),
        helper.make_node("Sub", ["r", "mean"], ["d"]),
        helper.make_node("Pow", ["d", "two"], ["d2"]),
        helper.make_node("ReduceMean", ["d2", "last"], ["var"], keepdims=1),
        helper.make_node("Add", ["var", "eps"], ["ve"]),
        helper.make_node("Sqrt", ["ve"], ["std"]),
        helper.make_node("Div", ["d", "std"], ["n"]),
        helper.make_node("Mul", ["n", "gamma"], ["ng"]),
        helper.make_node("Add", ["ng", "beta"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "transformer_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [TOKENS, WIDTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [TOKENS, WIDTH])],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              producer_name="normfuse examples/onnx/make_models.py")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=HERE)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "transformer_mlp.onnx"
    path.write_bytes(transformer_mlp().SerializeToString())
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
