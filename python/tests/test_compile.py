"""normfuse.compile: sources, options, and every way a request fails."""

import os
import subprocess
import sys

import numpy as np
import pytest

import normfuse
from conftest import (EXAMPLES, layer_norm_ir, layer_norm_reference, matmul_ir,
                      relu_ir, round_to_tf32)


def test_compile_takes_mlir_text_and_reports_the_signature():
    fn = normfuse.compile(layer_norm_ir(rows="?", cols=13), "ln")
    assert fn.name == "ln"
    assert fn.target == "cpu"
    assert str(fn.signature) == (
        "(tensor<?x13xf32>, tensor<13xf32>, tensor<13xf32>) -> "
        "(tensor<?x13xf32>, tensor<?x1xf32>, tensor<?x1xf32>)"
    )
    assert fn.signature.inputs[0] == normfuse.TensorType("f32", (None, 13))
    assert repr(fn).startswith("<normfuse.Function @ln (tensor<?x13xf32>")


def test_compile_takes_a_path_as_str_or_pathlib(tmp_path):
    path = tmp_path / "relu.mlir"
    path.write_text(relu_ir())
    for source in (path, str(path)):
        fn = normfuse.compile(source, "relu")
        assert str(fn.signature) == "(tensor<?x8xf32>) -> (tensor<?x8xf32>)"


def test_compile_accepts_an_entry_written_with_its_at_sign():
    assert normfuse.compile(relu_ir(), "@relu").name == "relu"


def test_compile_runs_the_shipped_examples_after_fusing_them():
    fn = normfuse.compile(EXAMPLES / "transformer_block_tosa.mlir",
                          "transformer_mlp_block_tosa")
    assert len(fn.signature.inputs) == 7


def test_a_missing_file_raises_file_not_found():
    with pytest.raises(FileNotFoundError, match="no MLIR file 'missing.mlir'"):
        normfuse.compile("missing.mlir", "f")


def test_a_source_that_is_neither_text_nor_path_raises_type_error():
    with pytest.raises(TypeError, match="source must be MLIR text or a path, not int"):
        normfuse.compile(42, "f")


def test_ir_that_does_not_parse_raises_compile_error_with_the_location():
    with pytest.raises(normfuse.CompileError) as info:
        normfuse.compile("func.func @f( {", "f")
    assert "the IR does not parse or verify" in str(info.value)
    assert "<ir>:1:" in str(info.value)


def test_ir_that_does_not_verify_raises_compile_error_with_the_verifier_message():
    bad = """
func.func @ln(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %y, %m, %r = nf.layer_norm %x {axis = 5 : i64} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y, %m, %r : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}
"""
    with pytest.raises(normfuse.CompileError, match="axis"):
        normfuse.compile(bad, "ln")


COMPLEX_REAL_SPLAT = """
func.func @f() -> tensor<1xcomplex<f32>> {
  %c = arith.constant dense<0.5> : tensor<1xcomplex<f32>>
  return %c : tensor<1xcomplex<f32>>
}
"""


@pytest.mark.parametrize("call", ["compile", "fuse", "kernel_graph"])
def test_ir_that_crashes_mlir_once_parsed_raises_compile_error(call):
    # MLIR 19 parses this constant and then crashes printing or reading it
    # (docs/UpstreamGuards.md).
    run = {
        "compile": lambda: normfuse.compile(COMPLEX_REAL_SPLAT, "f"),
        "fuse": lambda: normfuse.fuse(COMPLEX_REAL_SPLAT),
        "kernel_graph": lambda: normfuse.kernel_graph(COMPLEX_REAL_SPLAT),
    }[call]
    with pytest.raises(normfuse.CompileError, match=r"<ir>:3:8: a dense literal of 'complex<f32>' elements needs \(real, imaginary\) pairs"):
        run()


def test_the_diagnostics_of_a_file_name_the_file(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @f( {")
    with pytest.raises(normfuse.CompileError, match="bad.mlir:1:"):
        normfuse.compile(path, "f")


def test_an_unknown_function_raises_compile_error_listing_the_functions():
    with pytest.raises(normfuse.CompileError,
                       match=r"no function @nope in the module \(it has @relu\)"):
        normfuse.compile(relu_ir(), "nope")


def test_a_signature_the_jit_cannot_take_raises_compile_error():
    ir = """
func.func @i(%x: tensor<4xi4>) -> tensor<4xi4> {
  return %x : tensor<4xi4>
}
"""
    with pytest.raises(normfuse.CompileError,
                       match=r"takes f16, bf16, f32, f64, i1 \(bool\) and 8- to 64-bit integer elements"):
        normfuse.compile(ir, "i")


def test_an_unknown_target_raises_value_error():
    with pytest.raises(ValueError, match="unknown target 'tpu'"):
        normfuse.compile(relu_ir(), "relu", target="tpu")


@pytest.mark.parametrize("threads", [0, -1, 1025])
def test_threads_out_of_range_raise_value_error(threads):
    with pytest.raises(ValueError, match="threads must be from 1 to 1024"):
        normfuse.compile(relu_ir(), "relu", threads=threads)


def test_threads_that_are_not_integers_raise_type_error():
    with pytest.raises(TypeError, match="threads must be an integer"):
        normfuse.compile(relu_ir(), "relu", threads=2.0)


def test_threads_apply_to_the_cpu_target_only():
    with pytest.raises(ValueError, match="threads applies to the cpu target"):
        normfuse.compile(relu_ir(), "relu", target="cuda-sim", threads=2)


def test_every_sim_order_gives_the_forward_orders_bits():
    # A group norm with SiLU in one kernel (its blocks meet at a grid
    # barrier) reversed, shuffled with two seeds and staggered.
    x = np.random.default_rng(3).standard_normal((1, 24, 24, 96)).astype(np.float32)
    forward = normfuse.compile(GROUP_NORM_NHWC, "gn", target="cuda-sim")(x)
    for order in ("reverse", "shuffle", "shuffle:9", "stagger"):
        got = normfuse.compile(GROUP_NORM_NHWC, "gn", target="cuda-sim",
                               sim_order=order)(x)
        assert np.array_equal(got, forward), order


def test_a_sim_order_that_is_not_one_raises_value_error_saying_which_are():
    with pytest.raises(ValueError, match=r"sim_order: unknown thread order 'sideways' "
                       r"\(forward, reverse, shuffle, shuffle:SEED"):
        normfuse.compile(relu_ir(), "relu", target="cuda-sim", sim_order="sideways")
    with pytest.raises(TypeError, match="sim_order must be a string"):
        normfuse.compile(relu_ir(), "relu", target="cuda-sim", sim_order=2)


def test_a_sim_order_applies_to_the_cuda_sim_target_only():
    with pytest.raises(ValueError, match="sim_order applies to the cuda-sim target, not cpu"):
        normfuse.compile(relu_ir(), "relu", sim_order="reverse")


def test_the_cuda_target_without_a_driver_raises_compile_error_naming_the_cause(tmp_path):
    # In a process of its own: the driver is opened once per process.
    script = (
        "import normfuse\n"
        "try:\n"
        "    normfuse.compile(%r, 'relu', target='cuda')\n"
        "except normfuse.CompileError as e:\n"
        "    print('CompileError:', e)\n" % relu_ir(shape="4x8")
    )
    env = dict(os.environ, NF_CUDA_DRIVER=str(tmp_path / "libcuda.so.1"))
    done = subprocess.run([sys.executable, "-c", script], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("CompileError:")
    assert "no NVIDIA driver" in done.stdout


GROUP_NORM_NHWC = """
func.func @gn(%x: tensor<1x24x24x96xf32>) -> tensor<1x24x24x96xf32> {
  %y, %m, %r = nf.group_norm %x {layout = #nf.layout<nhwc>, num_groups = 24 : i64} : (tensor<1x24x24x96xf32>) -> (tensor<1x24x24x96xf32>, tensor<1x24xf32>, tensor<1x24xf32>)
  %a = nf.silu %y : tensor<1x24x24x96xf32>
  return %a : tensor<1x24x24x96xf32>
}
"""


def test_launches_counts_the_cuda_kernels_of_one_call_and_is_none_on_the_cpu():
    # GroupNorm NHWC of 4-channel groups: one kernel (the device holds its
    # blocks), the SiLU in its epilogue when fused; op by op the SiLU is a
    # second. Its three-kernel fallback (partial moments, their finish and
    # the normalize kernel) launches nothing then.
    assert normfuse.compile(GROUP_NORM_NHWC, "gn", target="cuda-sim").launches == 1
    assert normfuse.compile(GROUP_NORM_NHWC, "gn", target="cuda-sim",
                            fuse=False).launches == 2
    assert normfuse.compile(GROUP_NORM_NHWC, "gn", target="cuda-sim",
                            row_norm_schedule="channels-last-groups").launches == 3
    assert normfuse.compile(GROUP_NORM_NHWC, "gn").launches is None


MATMUL_F32 = matmul_ir(20, 24, 12)


def test_allow_tf32_runs_f32_products_on_operands_rounded_to_tf32():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((20, 24)).astype(np.float32)
    b = rng.standard_normal((24, 12)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    rounded = (round_to_tf32(a).astype(np.float64)
               @ round_to_tf32(b).astype(np.float64))
    tf32 = normfuse.compile(MATMUL_F32, "mm", target="cuda-sim",
                            allow_tf32=True)(a, b)
    f32 = normfuse.compile(MATMUL_F32, "mm", target="cuda-sim")(a, b)
    # tf32: the rounded operands' product, summed in f32; by default f32
    # keeps its precision.
    assert np.abs(tf32 - rounded).max() < 1e-5
    assert np.abs(tf32 - exact).max() > 1e-4
    assert np.abs(f32 - exact).max() < 1e-5


@pytest.mark.parametrize("schedule,launches", [
    ("auto", 1), ("warp-rows", 1), ("block-row-registers", 1),
    ("block-row-streaming", 1), ("split-row", 2), ("cluster-row", 1),
    ("split-row:full", 2)])
def test_row_norm_schedule_forces_how_row_norms_run(schedule, launches, rng):
    # 3 rows of 1000: a warp row by default; each forced schedule its own
    # kernels (a split row two, at the tests' small chunks or, ":full", at
    # the schedule layer's), all within f32 rounding of float64.
    x = rng.standard_normal((3, 1000)).astype(np.float32)
    g = rng.standard_normal(1000).astype(np.float32)
    b = rng.standard_normal(1000).astype(np.float32)
    fn = normfuse.compile(layer_norm_ir(rows=3, cols=1000), "ln", target="cuda-sim",
                          row_norm_schedule=schedule)
    assert fn.launches == launches
    y, mean, rstd = fn(x, g, b)
    ry, rmean, rrstd = layer_norm_reference(x, g, b)
    assert np.abs(y - ry).max() < 1e-4
    assert np.abs(mean - rmean).max() < 1e-6
    assert np.abs(rstd - rrstd).max() < 1e-5


def test_row_norm_schedule_is_checked():
    ir = layer_norm_ir(rows=3, cols=1000)
    with pytest.raises(ValueError, match="unknown row_norm_schedule 'fastest' "
                       r"\(auto, warp-rows, .*cluster-row, each optionally with ':full'\)"):
        normfuse.compile(ir, "ln", target="cuda-sim", row_norm_schedule="fastest")
    with pytest.raises(ValueError, match="row_norm_schedule applies to the cuda"):
        normfuse.compile(ir, "ln", row_norm_schedule="split-row")
    with pytest.raises(TypeError, match="row_norm_schedule must be a string"):
        normfuse.compile(ir, "ln", target="cuda-sim", row_norm_schedule=2)


def test_allow_tf32_applies_to_the_cuda_targets_only():
    with pytest.raises(ValueError, match="allow_tf32 applies to the cuda"):
        normfuse.compile(MATMUL_F32, "mm", allow_tf32=True)
    with pytest.raises(TypeError, match="allow_tf32 must be True or False"):
        normfuse.compile(MATMUL_F32, "mm", target="cuda-sim", allow_tf32=1)


WGMMA_MATMUL = """
func.func @mm(%a: tensor<72x64xf16>, %b: tensor<64x136xf16>) -> tensor<72x136xf16> {
  %p = nf.matmul %a, %b {nf.gpu_schedule = "tensor-core-product tile=64x128x32 warps=4x1 stages=3 wgmma tma warp-specialized pingpong"} : tensor<72x64xf16>, tensor<64x136xf16> -> tensor<72x136xf16>
  return %p : tensor<72x136xf16>
}
"""


def test_cuda_arch_makes_the_simulators_kernels_for_that_gpu():
    # sm_90a's warp-specialized wgmma kernel, TMA loads and two teams: run
    # by the simulator against float64; the default target (sm_90) refuses
    # the schedule, saying why.
    gen = np.random.default_rng(5)
    a = gen.standard_normal((72, 64)).astype(np.float16)
    b = gen.standard_normal((64, 136)).astype(np.float16)
    fn = normfuse.compile(WGMMA_MATMUL, "mm", target="cuda-sim", cuda_arch="sm_90a")
    want = a.astype(np.float64) @ b.astype(np.float64)
    got = fn(a, b).astype(np.float64)
    assert np.all(np.abs(got - want) <= 2 ** -9 * np.abs(want) + 1e-3)
    with pytest.raises(normfuse.CompileError, match="wgmma needs sm_90a"):
        normfuse.compile(WGMMA_MATMUL, "mm", target="cuda-sim")


def test_a_cuda_arch_that_is_no_gpu_target_or_not_for_cuda_sim_raises_value_error():
    with pytest.raises(ValueError, match="cuda_arch: .*sm_12"):
        normfuse.compile(relu_ir(), "relu", target="cuda-sim", cuda_arch="sm_12")
    with pytest.raises(ValueError, match="cuda_arch applies to the cuda-sim target, not cpu"):
        normfuse.compile(relu_ir(), "relu", cuda_arch="sm_90a")
    with pytest.raises(TypeError, match="cuda_arch must be a string"):
        normfuse.compile(relu_ir(), "relu", target="cuda-sim", cuda_arch=90)
