"""The GPU run's comparison of a program's results with the CPU's
(bench/gpu/references.py): each result is held to the tolerance of the
program's least precise floating-point type."""

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
