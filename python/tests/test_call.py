"""Calling a compiled function: arrays in, arrays out, every dtype, dynamic
shapes, out=, DLPack, bench."""

import ml_dtypes
import numpy as np
import pytest

import normfuse
from conftest import DLPackOnly, layer_norm_ir, layer_norm_reference, relu_ir


def test_layer_norm_returns_its_three_results_close_to_float64(rng):
    fn = normfuse.compile(layer_norm_ir(rows="?", cols=13), "ln")
    x = rng.standard_normal((5, 13), dtype=np.float32) * 3 + 7
    g = rng.standard_normal(13, dtype=np.float32)
    b = rng.standard_normal(13, dtype=np.float32)
    y, mean, rstd = fn(x, g, b)
    ref_y, ref_mean, ref_rstd = layer_norm_reference(x, g, b)
    assert (y.shape, mean.shape, rstd.shape) == ((5, 13), (5, 1), (5, 1))
    assert y.dtype == mean.dtype == np.float32
    np.testing.assert_allclose(y, ref_y, rtol=0, atol=2e-5)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-6)
    np.testing.assert_allclose(rstd, ref_rstd, rtol=1e-5)


def test_a_function_with_one_result_returns_an_array_not_a_tuple():
    fn = normfuse.compile(relu_ir(shape="2x8"), "relu")
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)
    y = fn(x)
    assert isinstance(y, np.ndarray)
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_dynamic_dimensions_specialize_on_each_call(rng):
    fn = normfuse.compile(relu_ir(shape="?x8"), "relu")
    for rows in (1, 3, 1000):
        x = rng.standard_normal((rows, 8), dtype=np.float32)
        np.testing.assert_array_equal(fn(x), np.maximum(x, 0))


@pytest.mark.parametrize("dtype,name,atol", [
    (np.float16, "f16", 4e-3),
    (ml_dtypes.bfloat16, "bf16", 3e-2),
    (np.float64, "f64", 1e-12),
])
def test_each_storage_dtype_runs_with_at_least_float32_statistics(rng, dtype, name, atol):
    stats = "f64" if name == "f64" else "f32"
    fn = normfuse.compile(layer_norm_ir(dtype=name, rows=4, cols=64, stats=stats), "ln")
    x = (rng.standard_normal((4, 64)) * 2 + 1).astype(dtype)
    g = np.ones(64, np.float64 if name == "f64" else np.float32)
    b = np.zeros_like(g)
    y, mean, rstd = fn(x, g, b)
    assert y.dtype == np.dtype(dtype)
    ref_y, ref_mean, _ = layer_norm_reference(x.astype(np.float64), g, b)
    # The result is rounded to its storage type once.
    np.testing.assert_allclose(y.astype(np.float64), ref_y, rtol=0,
                               atol=atol * np.abs(ref_y).max())
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-5)


def test_out_writes_into_the_given_arrays_and_returns_them(rng):
    fn = normfuse.compile(layer_norm_ir(rows=3, cols=13), "ln")
    x = rng.standard_normal((3, 13), dtype=np.float32)
    g = np.ones(13, np.float32)
    b = np.zeros(13, np.float32)
    out = (np.full((3, 13), np.nan, np.float32), np.full((3, 1), np.nan, np.float32),
           np.full((3, 1), np.nan, np.float32))
    returned = fn(x, g, b, out=out)
    assert returned is out
    np.testing.assert_allclose(out[0], layer_norm_reference(x, g, b)[0], atol=2e-5)


def test_out_takes_a_single_array_for_a_single_result():
    fn = normfuse.compile(relu_ir(shape="2x8"), "relu")
    x = -np.ones((2, 8), np.float32)
    y = np.full((2, 8), 5, np.float32)
    assert fn(x, out=y) is y
    np.testing.assert_array_equal(y, 0)


def test_bf16_arrays_go_in_and_out_of_the_kernel_as_ml_dtypes(rng):
    fn = normfuse.compile(relu_ir(dtype="bf16", shape="3x8"), "relu")
    x = rng.standard_normal((3, 8)).astype(ml_dtypes.bfloat16)
    y = fn(x)
    assert y.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(y.astype(np.float32),
                                  np.maximum(x.astype(np.float32), 0))


def test_arrays_reached_only_by_dlpack_are_used_in_place(rng):
    fn = normfuse.compile(relu_ir(shape="4x8"), "relu")
    x = rng.standard_normal((4, 8), dtype=np.float32)
    y = np.zeros((4, 8), np.float32)
    # The kernel writes into y's own memory through the DLPack capsule.
    fn(DLPackOnly(x), out=DLPackOnly(y))
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_a_numpy_scalar_is_a_zero_dimensional_array():
    t = "tensor<f32>"
    ir = f"""
func.func @relu0(%x: {t}) -> {t} {{
  %0 = nf.relu %x : {t}
  return %0 : {t}
}}
"""
    fn = normfuse.compile(ir, "relu0")
    assert fn(np.float32(-2.5)) == 0
    assert fn(np.float32(2.5)) == 2.5


def test_fusion_is_the_default_and_gives_the_op_by_op_result(rng):
    ir = """
func.func @add_ln(%a: tensor<8x32xf32>, %r: tensor<8x32xf32>)
    -> (tensor<8x32xf32>, tensor<8x1xf32>, tensor<8x1xf32>) {
  %s = nf.add %a, %r : tensor<8x32xf32>
  %y, %m, %v = nf.layer_norm %s {axis = 1 : i64}
      : (tensor<8x32xf32>) -> (tensor<8x32xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
  return %y, %m, %v : tensor<8x32xf32>, tensor<8x1xf32>, tensor<8x1xf32>
}
"""
    a = rng.standard_normal((8, 32), dtype=np.float32)
    r = rng.standard_normal((8, 32), dtype=np.float32)
    fused = normfuse.compile(ir, "add_ln")(a, r)
    op_by_op = normfuse.compile(ir, "add_ln", fuse=False)(a, r)
    for got, want in zip(fused, op_by_op):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    assert "nf.fused" in normfuse.fuse(ir)


def test_the_cuda_simulator_target_gives_the_cpu_result(rng):
    ir = layer_norm_ir(rows=6, cols=40)
    x = rng.standard_normal((6, 40), dtype=np.float32)
    g = rng.standard_normal(40, dtype=np.float32)
    b = rng.standard_normal(40, dtype=np.float32)
    sim = normfuse.compile(ir, "ln", target="cuda-sim")
    assert sim.target == "cuda-sim"
    for got, want in zip(sim(x, g, b), layer_norm_reference(x, g, b)):
        np.testing.assert_allclose(got, want, rtol=0, atol=3e-5)


def test_threads_run_the_same_kernel_on_that_many_threads(rng):
    x = rng.standard_normal((64, 8), dtype=np.float32)
    one = normfuse.compile(relu_ir(), "relu", threads=1)
    np.testing.assert_array_equal(one(x), np.maximum(x, 0))


def test_bench_times_each_run_after_a_warm_up(rng):
    fn = normfuse.compile(relu_ir(shape="64x8"), "relu")
    x = rng.standard_normal((64, 8), dtype=np.float32)
    result = fn.bench(x, runs=7)
    assert result.runs == 7 and len(result.times_ms) == 7
    assert min(result.times_ms) == result.min_ms > 0
    assert result.min_ms <= result.median_ms
    assert str(result).startswith("7 runs: median ")


@pytest.mark.parametrize("runs", [0, -3, 1.5, True])
def test_bench_refuses_run_counts_that_are_not_positive_integers(runs):
    fn = normfuse.compile(relu_ir(shape="2x8"), "relu")
    with pytest.raises(ValueError, match="runs must be a positive integer"):
        fn.bench(np.zeros((2, 8), np.float32), runs=runs)


@pytest.mark.parametrize("target", ["cpu", "cuda-sim"])
def test_bool_and_integer_arrays_go_in_and_come_out_with_their_dtypes(target):
    ir = """
func.func @mask(%p: tensor<6xi1>, %a: tensor<6xui16>, %b: tensor<6xui16>, %x: tensor<6xi64>) -> (tensor<6xi1>, tensor<6xui16>, tensor<6xi64>) {
  %gt = tosa.greater %a, %b : (tensor<6xui16>, tensor<6xui16>) -> tensor<6xi1>
  %both = tosa.logical_and %p, %gt : (tensor<6xi1>, tensor<6xi1>) -> tensor<6xi1>
  %sum = tosa.add %a, %b : (tensor<6xui16>, tensor<6xui16>) -> tensor<6xui16>
  %zero = "tosa.const"() <{value = dense<0> : tensor<1xi64>}> : () -> tensor<1xi64>
  %kept = tosa.select %both, %x, %zero : (tensor<6xi1>, tensor<6xi64>, tensor<1xi64>) -> tensor<6xi64>
  return %both, %sum, %kept : tensor<6xi1>, tensor<6xui16>, tensor<6xi64>
}
"""
    fn = normfuse.compile(ir, "mask", target=target)
    assert [t.dtype for t in fn.signature.inputs] == ["i1", "ui16", "ui16", "i64"]
    p = np.array([True, True, False, True, True, True])
    a = np.array([40000, 1, 65535, 7, 0, 50000], np.uint16)
    b = np.array([1, 40000, 0, 7, 65535, 20000], np.uint16)
    x = np.array([2**62, -5, 3, 4, 5, -(2**63)], np.int64)
    both, total, kept = fn(p, a, b, x)
    assert (both.dtype, total.dtype, kept.dtype) == (np.bool_, np.uint16, np.int64)
    np.testing.assert_array_equal(both, [True, False, False, False, False, True])
    np.testing.assert_array_equal(total, a + b)  # wraps modulo 2^16
    np.testing.assert_array_equal(kept, [2**62, 0, 0, 0, 0, -(2**63)])
    with pytest.raises(TypeError, match=r"argument 2 of @mask has dtype i16; it takes ui16"):
        fn(p, a.astype(np.int16), b, x)
