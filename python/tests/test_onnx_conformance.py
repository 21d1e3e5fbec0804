"""ONNX's own BatchNormalization training-mode node tests, run through
normfuse: the cases and their expected outputs come from the onnx package's
test generator (onnx.backend.test.case.node.batch_normalization), which
writes the .pb files of ONNX's node test suite; outputs must agree within
that suite's tolerance (rtol 1e-3, atol 1e-7).

ONNX's momentum weighs the old running value (nf's weighs the new one:
1 - momentum) and its running variance takes the biased batch variance
(nf.batch_norm_training's unbiased_running_var = false)."""

import os

import numpy as np
import pytest

import normfuse

onnx = pytest.importorskip("onnx")
from onnx.backend.test.case.node import batch_normalization  # noqa: E402


def onnx_training_cases():
    """(name, attributes, inputs, outputs) of every training-mode case."""
    cases = []

    def expect(node, inputs, outputs, name, **_):
        attrs = {a.name: onnx.helper.get_attribute_value(a)
                 for a in node.attribute}
        if attrs.get("training_mode"):
            cases.append((name, attrs, inputs, outputs))

    saved = batch_normalization.expect
    batch_normalization.expect = expect
    try:
        np.random.seed(0)
        batch_normalization.BatchNormalization.export_train()
    finally:
        batch_normalization.expect = saved
    return cases


CASES = onnx_training_cases()


def batch_norm_ir(shape, epsilon, momentum, unbiased):
    t = "tensor<%sxf32>" % "x".join(map(str, shape))
    c = "tensor<%dxf32>" % shape[1]
    return f"""
func.func @bn(%x: {t}, %s: {c}, %b: {c}, %m: {c}, %v: {c})
    -> ({t}, {c}, {c}, {c}, {c}) {{
  %y, %bm, %br, %nm, %nv = nf.batch_norm_training %x scale %s bias %b running(%m, %v)
      {{epsilon = {epsilon:.17e}, momentum = {momentum:.17e},
        unbiased_running_var = {"true" if unbiased else "false"}}}
      : ({t}, {c}, {c}, {c}, {c}) -> ({t}, {c}, {c}, {c}, {c})
  return %y, %bm, %br, %nm, %nv : {t}, {c}, {c}, {c}, {c}
}}"""


def test_the_onnx_package_has_both_training_mode_cases():
    assert sorted(name for name, *_ in CASES) == [
        "test_batchnorm_epsilon_training_mode",
        "test_batchnorm_example_training_mode"]


# On a GPU (bench/gpu/run.sh sets NF_TEST_GPU), the cuda target too.
TARGETS = ["cpu", "cuda-sim"] + (["cuda"] if os.environ.get("NF_TEST_GPU") else [])


@pytest.mark.parametrize("target", TARGETS, ids=[t.replace("-", "_") for t in TARGETS])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_onnx_training_mode_node_test_agrees(case, target):
    name, attrs, (x, s, b, mean, var), (y, out_mean, out_var) = case
    epsilon = float(attrs.get("epsilon", 1e-5))
    momentum = 1.0 - float(attrs.get("momentum", 0.9))
    fn = normfuse.compile(batch_norm_ir(x.shape, epsilon, momentum, False),
                          "bn", target=target)
    ny, _, _, nm, nv = fn(x, s, b, mean, var)
    np.testing.assert_allclose(ny, y, rtol=1e-3, atol=1e-7)
    np.testing.assert_allclose(nm, out_mean, rtol=1e-3, atol=1e-7)
    np.testing.assert_allclose(nv, out_var, rtol=1e-3, atol=1e-7)


def test_pytorchs_unbiased_update_differs_by_n_over_n_minus_1():
    name, attrs, (x, s, b, mean, var), (y, out_mean, out_var) = CASES[0]
    momentum = 1.0 - float(attrs.get("momentum", 0.9))
    fn = normfuse.compile(batch_norm_ir(x.shape, 1e-5, momentum, True), "bn")
    nv = fn(x, s, b, mean, var)[4]
    n = x.size // x.shape[1]
    batch_var = x.transpose(1, 0, 2, 3).reshape(x.shape[1], -1).astype(
        np.float64).var(axis=1)
    expected = (1 - momentum) * var + momentum * batch_var * n / (n - 1)
    np.testing.assert_allclose(nv, expected, rtol=1e-5)
    assert not np.allclose(nv, out_var, rtol=1e-3, atol=1e-7)
