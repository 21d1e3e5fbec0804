"""bench/gpu/report.py --families: the per-family summary bench/README.md
quotes from a GPU run's JSON."""

import importlib.util
import pathlib

from conftest import EXAMPLES

spec = importlib.util.spec_from_file_location("gpu_report", EXAMPLES.parent / "bench" / "gpu" / "report.py")
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)


def case(op, direction, normfuse_ms, copy_ms, dtype="f32", **peers):
    systems = {"normfuse": {"median_ms": normfuse_ms, "fraction_of_copy": copy_ms / normfuse_ms},
               "copy": {"median_ms": copy_ms}}
    systems.update({p: {"median_ms": ms} for p, ms in peers.items()})
    return {"kind": "case", "id": f"{op}/{direction}/{dtype}", "op": op, "direction": direction,
            "dtype": dtype, "systems": systems}


def doc(*cases):
    return {"results": {"sweep": [{"kind": "environment"}, *cases]}}


def test_a_family_line_gives_medians_ranges_peer_counts_and_wins():
    lines = report.families(doc(
        case("layer_norm", "forward", 2.0, 1.0, eager=4.0, liger=1.0),
        case("layer_norm", "forward", 1.0, 1.0, eager=3.0, compile=2.0),
        case("layer_norm", "forward", 4.0, 1.0, eager=2.0),
        case("layer_norm", "backward", 1.0, 1.0, eager=2.0),  # another family
    ))
    assert lines[2] == "| LayerNorm forward | 3 | 0.50 (0.25-1.00) of copy | 2.00 | 2.00 (1) | 0.50 (1) | 1 |"
    assert lines[3] == "| LayerNorm backward | 1 | 1.00 (1.00-1.00) of copy | 2.00 | - | - | 1 |"
    assert len(lines) == 4


def test_products_are_summarised_in_tflops_and_untimed_cases_are_left_out():
    mm = case("matmul+bias+gelu", "forward", 1.0, 0.1, eager=0.5)
    mm["systems"]["normfuse"]["tflops"] = 15.2
    untimed = case("matmul+bias+gelu", "forward", 1.0, 0.1)
    del untimed["systems"]["normfuse"]["median_ms"]
    lines = report.families(doc(mm, untimed))
    assert lines[2:] == ["| matmul + bias + GELU, f32 | 1 | 15-15 TFLOP/s | 0.50 | - | - | 0 |"]


def test_products_of_each_precision_have_a_line_of_their_own():
    """The SIMT kernel's f32, the tensor cores' tf32 and f16/bf16 are
    summarised apart, each against the peer at the same precision."""
    rows = []
    for dtype, tflops in (("f32", 20.0), ("tf32", 90.0), ("bf16", 150.0), ("f16", 160.0)):
        c = case("conv2d+bias+relu", "forward", 1.0, 0.1, dtype=dtype, eager=0.5)
        c["systems"]["normfuse"]["tflops"] = tflops
        rows.append(c)
    lines = report.families(doc(*rows))
    assert lines[2:] == [
        "| conv2d 3x3 + bias + ReLU NHWC, f16/bf16 | 2 | 150-160 TFLOP/s | 0.50 | - | - | 0 |",
        "| conv2d 3x3 + bias + ReLU NHWC, f32 | 1 | 20-20 TFLOP/s | 0.50 | - | - | 0 |",
        "| conv2d 3x3 + bias + ReLU NHWC, tf32 | 1 | 90-90 TFLOP/s | 0.50 | - | - | 0 |"]
