"""The GPU run's comparison of a program's results with the CPU's
(bench/gpu/references.py): each result is held to the tolerance of the
program's least precise floating-point type; integer and bool results match
bit for bit."""

import importlib.util

import numpy as np

from conftest import EXAMPLES

spec = importlib.util.spec_from_file_location("gpu_references", EXAMPLES.parent / "bench" / "gpu" / "references.py")
refs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(refs)


def test_the_loosest_float_type_is_the_one_of_the_largest_tolerance():
    assert refs.loosest_float(["f32", "f16", "f64"]) == "f16"
    assert refs.loosest_float(["bf16", "f16"]) == "bf16"
    assert refs.loosest_float(["f32"]) == "f32"
    assert refs.loosest_float(["i32", "i1"]) is None


def test_an_f32_result_of_f16_data_is_held_to_the_f16_tolerance(tmp_path):
    cpu = np.linspace(-1, 1, 64).astype(np.float32)
    gpu = cpu + np.float32(1e-3)  # an f16 rounding's worth: over f32's 1e-4
    entry = refs.digest_output(cpu, "f32", 1, str(tmp_path), "mean")
    error, worst = refs.compare_output(gpu, entry, str(tmp_path))
    assert error is not None and "over 0.0001" in error
    entry["tolerance_dtype"] = "f16"
    error, worst = refs.compare_output(gpu, entry, str(tmp_path))
    assert error is None
    assert abs(worst - 1e-3) < 1e-6


def test_integer_results_must_match_bit_for_bit_whole_or_by_digest(tmp_path):
    cpu = np.arange(-50, 50, dtype=np.int32).reshape(4, 25)
    entry = refs.digest_output(cpu, "i32", 1, str(tmp_path), "small")
    assert "full" in entry
    assert refs.compare_output(cpu.copy(), entry, str(tmp_path)) == (None, 0.0)
    off = cpu.copy()
    off[3, 24] += 1
    error, worst = refs.compare_output(off, entry, str(tmp_path))
    assert error == "1 of 100 elements differ (integers are exact)" and worst is None
    error, _ = refs.compare_output(cpu.astype(np.int64), entry, str(tmp_path))
    assert error == "elements of int64, expected i32"
    # Past FULL_BYTES: only the SHA-256 travels.
    big = np.zeros(refs.FULL_BYTES + 1, dtype=np.bool_)
    entry = refs.digest_output(big, "i1", 2, str(tmp_path), "big")
    assert "full" not in entry
    assert refs.compare_output(big.copy(), entry, str(tmp_path)) == (None, 0.0)
    big[-1] = True
    error, _ = refs.compare_output(big, entry, str(tmp_path))
    assert error == "the elements differ (SHA-256; integers are exact)"


def test_integer_inputs_are_small_and_the_same_from_the_same_seed():
    signed = refs.make_input([1000], "i8", 7, "uniform")
    assert signed.dtype == np.int8 and signed.min() >= -100 and signed.max() <= 100
    assert signed.min() < 0 < signed.max()
    unsigned = refs.make_input([1000], "ui16", 7, "uniform")
    assert unsigned.dtype == np.uint16 and unsigned.max() <= 200
    positive = refs.make_input([1000], "i64", 7, "positive")
    assert positive.min() >= 1 and positive.max() <= 100
    bools = refs.make_input([2, 500], "i1", 7, "uniform")
    assert bools.dtype == np.bool_ and 0 < bools.sum() < 1000
    assert refs.sha256(signed) == refs.sha256(refs.make_input([1000], "i8", 7, "uniform"))
