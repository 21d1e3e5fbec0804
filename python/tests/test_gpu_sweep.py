"""bench/gpu/sweep.py's tile variants across a resume: after a wgmma tile
lost the CUDA context (a case-failed record naming it), the resumed sweep
records every wgmma variant as skipped, saying why, and still measures the
others; a TMA tile's loss skips only the TMA tiles, a warp-specialized
tile's only those (a multicast one's only those), and the widest kind any
loss names wins; without such
a record it measures them all. A trailing attempt record (the process hung
in that measurement, or died) is recorded as that case's failure and skips
its kind of tile the same way, as does a package check of that kind that
timed out; the watchdog ends a measurement with no result. On cuda-sim,
one small product case."""

import json
import os
import subprocess
import sys
import time

from conftest import EXAMPLES

SWEEP = EXAMPLES.parent / "bench" / "gpu" / "sweep.py"
CASE = "matmul/forward/f16/16x32x48"
WGMMA = "128x128x32/3/4x1/wgmma"
TMA = "128x128x32/3/4x1/wgmma/tma"
WS = "128x128x32/3/4x1/wgmma/tma/ws"
MC = "128x128x32/3/4x1/wgmma/tma/ws/mc"
PP = "64x128x32/3/4x1/wgmma/tma/ws/pp"
MCPP = "128x128x32/3/4x1/wgmma/tma/ws/mc/pp"
MMA = "64x64x32/3/2x2"


def resumed_sweep(tmp_path, earlier, variants=(WGMMA, MMA), checked=None, all_records=False):
    records = tmp_path / "sweep.jsonl"
    records.write_text("".join(json.dumps(r) + "\n" for r in earlier))
    env = dict(os.environ, NF_SWEEP_TILE_VARIANTS=",".join(variants))
    extra = []
    if checked is not None:
        (tmp_path / "check.jsonl").write_text("".join(json.dumps(r) + "\n" for r in checked))
        extra = ["--check-records", str(tmp_path / "check.jsonl")]
    subprocess.run([sys.executable, str(SWEEP), "--jsonl", str(records), "--target", "cuda-sim",
                    "--small", "--resume", "--filter", f"^{CASE}$", "--budget-s", "60",
                    "--deadline", str(time.time() + 120), *extra],
                   env=env, check=True, capture_output=True, text=True, timeout=300)
    cases = [json.loads(line) for line in records.read_text().splitlines()]
    systems = next(r for r in cases if r.get("kind") == "case" and r["id"] == CASE)["systems"]
    return (systems, cases) if all_records else systems


def test_a_wgmma_tile_that_lost_the_context_is_skipped_after_the_resume(tmp_path):
    lost = {"kind": "case-failed", "id": "matmul/forward/bf16/4x4x4",
            "system": f"normfuse {WGMMA}", "failure": "CUDA context lost: an illegal instruction"}
    systems = resumed_sweep(tmp_path, [lost])
    assert systems[f"normfuse {WGMMA}"] == {
        "skipped": f"normfuse {WGMMA} lost the CUDA context in matmul/forward/bf16/4x4x4"}
    assert systems[f"normfuse {MMA}"]["ok"] is True
    assert systems["normfuse"]["ok"] is True


def test_without_such_a_loss_every_tile_variant_is_measured(tmp_path):
    other = {"kind": "case-failed", "id": "layer_norm/forward/f32/4x4",
             "system": "normfuse", "failure": "CUDA context lost: an illegal address"}
    systems = resumed_sweep(tmp_path, [other], (WGMMA, WS, MC, MMA))
    assert "skipped" not in systems[f"normfuse {WGMMA}"]
    assert systems[f"normfuse {WGMMA}"]["ok"] is True
    assert systems[f"normfuse {WS}"]["ok"] is True
    assert systems[f"normfuse {MC}"]["ok"] is True
    assert systems[f"normfuse {MMA}"]["ok"] is True


def test_a_tma_tile_that_lost_the_context_skips_only_the_tma_tiles(tmp_path):
    lost = {"kind": "case-failed", "id": "matmul/forward/bf16/4x4x4",
            "system": f"normfuse {TMA}", "failure": "CUDA context lost: an illegal instruction"}
    systems = resumed_sweep(tmp_path, [lost], (TMA, WGMMA))
    assert systems[f"normfuse {TMA}"] == {
        "skipped": f"normfuse {TMA} lost the CUDA context in matmul/forward/bf16/4x4x4"}
    assert systems[f"normfuse {WGMMA}"]["ok"] is True


def lost_in(tile, case="matmul/forward/bf16/4x4x4"):
    return {"kind": "case-failed", "id": case, "system": f"normfuse {tile}",
            "failure": "CUDA context lost: an illegal instruction"}


def test_a_warp_specialized_tile_that_lost_the_context_skips_only_those(tmp_path):
    systems = resumed_sweep(tmp_path, [lost_in(WS)], (WS, MC, TMA))
    why = f"normfuse {WS} lost the CUDA context in matmul/forward/bf16/4x4x4"
    assert systems[f"normfuse {WS}"] == {"skipped": why}
    assert systems[f"normfuse {MC}"] == {"skipped": why}
    assert systems[f"normfuse {TMA}"]["ok"] is True


def test_a_multicast_tile_that_lost_the_context_skips_only_those(tmp_path):
    systems = resumed_sweep(tmp_path, [lost_in(MC)], (MC, WS))
    assert systems[f"normfuse {MC}"] == {
        "skipped": f"normfuse {MC} lost the CUDA context in matmul/forward/bf16/4x4x4"}
    assert systems[f"normfuse {WS}"]["ok"] is True


def test_a_pingpong_tile_that_lost_the_context_skips_only_the_pingpong_tiles(tmp_path):
    systems = resumed_sweep(tmp_path, [lost_in(PP)], (PP, MCPP, MC, WS))
    why = f"normfuse {PP} lost the CUDA context in matmul/forward/bf16/4x4x4"
    assert systems[f"normfuse {PP}"] == {"skipped": why}
    assert systems[f"normfuse {MCPP}"] == {"skipped": why}
    assert systems[f"normfuse {MC}"]["ok"] is True
    assert systems[f"normfuse {WS}"]["ok"] is True


def test_losses_of_two_kinds_that_hold_neither_skip_both(tmp_path):
    # A multicast tile lost, then (in another run) a pingpong one: each
    # skips its own kind, the tile of both the first's reason.
    systems = resumed_sweep(tmp_path, [lost_in(MC, "matmul/forward/f16/4x4x4"), lost_in(PP)],
                            (MC, PP, MCPP, WS))
    mc_why = f"normfuse {MC} lost the CUDA context in matmul/forward/f16/4x4x4"
    assert systems[f"normfuse {MC}"] == {"skipped": mc_why}
    assert systems[f"normfuse {MCPP}"] == {"skipped": mc_why}
    assert systems[f"normfuse {PP}"] == {
        "skipped": f"normfuse {PP} lost the CUDA context in matmul/forward/bf16/4x4x4"}
    assert systems[f"normfuse {WS}"]["ok"] is True


def test_the_widest_kind_of_tile_lost_is_skipped_whatever_the_order(tmp_path):
    # A TMA tile lost, then a warp-specialized one (in another run): every
    # TMA-fed tile stays skipped.
    systems = resumed_sweep(tmp_path, [lost_in(TMA, "matmul/forward/f16/4x4x4"), lost_in(WS)],
                            (WS, TMA, MMA))
    why = f"normfuse {TMA} lost the CUDA context in matmul/forward/f16/4x4x4"
    assert systems[f"normfuse {WS}"] == {"skipped": why}
    assert systems[f"normfuse {TMA}"] == {"skipped": why}
    assert systems[f"normfuse {MMA}"]["ok"] is True


def attempt(tile, case="matmul/forward/bf16/4x4x4"):
    return {"kind": "attempt", "id": case, "system": f"normfuse {tile}", "hang_s": 90}


def test_a_measurement_the_process_ended_in_fails_its_case_and_skips_its_kind(tmp_path):
    systems, records = resumed_sweep(tmp_path, [attempt(MMA, "matmul/forward/f16/8x8x8"), attempt(WS)],
                                     (WS, MC, TMA), all_records=True)
    failed = [r for r in records if r.get("kind") == "case-failed"]
    assert failed == [{"kind": "case-failed", "id": "matmul/forward/bf16/4x4x4", "system": f"normfuse {WS}",
                       "failure": "no result within 90 s: the process hung or died in this measurement"}]
    why = f"normfuse {WS} hung in matmul/forward/bf16/4x4x4"
    assert systems[f"normfuse {WS}"] == {"skipped": why}
    assert systems[f"normfuse {MC}"] == {"skipped": why}
    assert systems[f"normfuse {TMA}"]["ok"] is True


def test_an_attempt_with_its_case_record_after_it_is_no_hang(tmp_path):
    done = {"kind": "case", "id": "matmul/forward/bf16/4x4x4", "systems": {}}
    systems, records = resumed_sweep(tmp_path, [attempt(WS), done], (WS,), all_records=True)
    assert not [r for r in records if r.get("kind") == "case-failed"]
    assert systems[f"normfuse {WS}"]["ok"] is True


def test_a_package_check_that_timed_out_skips_its_kind_and_a_wrong_one_does_not(tmp_path):
    checked = [{"case": "matmul_bias_gelu_37x72x136_f16_wgmma_ws", "ok": False,
                "error": "timed out after 45 s"},
               {"case": "matmul_bias_gelu_37x72x136_f16_wgmma_tma", "ok": False,
                "error": "result 0: relative difference 0.5 over 0.01"}]
    systems = resumed_sweep(tmp_path, [], (MC, TMA), checked)
    assert systems[f"normfuse {MC}"] == {
        "skipped": "the package check of matmul_bias_gelu_37x72x136_f16_wgmma_ws timed out"}
    assert systems[f"normfuse {TMA}"]["ok"] is True


def test_the_watchdog_ends_a_measurement_that_has_no_result(tmp_path):
    # Sweep.attempt with a one-second limit, then a "kernel" that never
    # returns: the process ends on its own, and run_steps sees where.
    records = tmp_path / "sweep.jsonl"
    script = f"""
import sys, time, types
sys.path.insert(0, {str(SWEEP.parent)!r})
import sweep
out = open({str(records)!r}, "a")
fake = types.SimpleNamespace(args=types.SimpleNamespace(hang_s=1.0),
                             emit=lambda r: (out.write(sweep.json.dumps(r) + "\\n"), out.flush()))
sweep.Sweep.attempt(fake, types.SimpleNamespace(id="matmul/forward/f16/8x8x8"), "normfuse {WS}")
time.sleep(60)
"""
    start = time.time()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and time.time() - start < 30, proc.stderr
    assert "Timeout" in proc.stderr
    assert [json.loads(line) for line in records.read_text().splitlines()] == [
        attempt(WS, "matmul/forward/f16/8x8x8") | {"hang_s": 1.0}]
    sys.path.insert(0, str(SWEEP.parent))
    import run_steps
    assert run_steps.ended_in_a_measurement(str(records))
    with open(records, "a") as f:
        f.write(json.dumps({"kind": "case", "id": "matmul/forward/f16/8x8x8", "systems": {}}) + "\n")
    assert not run_steps.ended_in_a_measurement(str(records))


def test_an_attempt_that_ended_is_not_blamed_for_a_later_death():
    # A crash in a peer after normfuse's measurements names the peer's
    # attempt, not the last tile's.
    sys.path.insert(0, str(SWEEP.parent))
    import sweep
    done = {"kind": "attempt-done", "id": "matmul/forward/bf16/4x4x4", "system": f"normfuse {WS}"}
    eager = {"kind": "attempt", "id": "matmul/forward/bf16/4x4x4", "system": "eager", "hang_s": 270}
    assert sweep.trailing_attempt([attempt(WS), done]) is None
    assert sweep.trailing_attempt([attempt(WS), done, eager]) == eager
    assert sweep.record_loss("eager", "eager hung", {}) == {}


def test_a_hung_normfuse_kernel_is_skipped_for_the_rest_of_its_op_direction_and_dtype(tmp_path):
    # The automatic choice hung in another f16 matmul; an mma.sync tile
    # variant hung in one too: both are skipped here, the other tile runs.
    systems = resumed_sweep(tmp_path, [
        {"kind": "case-failed", "id": "matmul/forward/f16/4x4x4", "system": f"normfuse {MMA}",
         "failure": "no result within 90 s: the process hung or died in this measurement"},
        {"kind": "attempt", "id": "matmul/forward/f16/8x8x8", "system": "normfuse", "hang_s": 90}],
        (MMA, TMA))
    assert systems["normfuse"] == {"skipped": "normfuse hung in matmul/forward/f16/8x8x8"}
    assert systems[f"normfuse {MMA}"] == {"skipped": f"normfuse {MMA} hung in matmul/forward/f16/4x4x4"}
    assert systems[f"normfuse {TMA}"]["ok"] is True


def test_a_hang_in_another_dtype_skips_nothing(tmp_path):
    systems = resumed_sweep(tmp_path, [
        {"kind": "attempt", "id": "matmul/forward/bf16/8x8x8", "system": "normfuse", "hang_s": 90}],
        (MMA,))
    assert systems["normfuse"]["ok"] is True
    assert systems[f"normfuse {MMA}"]["ok"] is True


def test_the_convolutions_take_their_own_tile_variants_where_set():
    sys.path.insert(0, str(SWEEP.parent))
    import sweep
    env = {"NF_SWEEP_TILE_VARIANTS": f"{WS},{MMA}"}
    assert sweep.tile_variants("matmul", env) == [WS, MMA]
    assert sweep.tile_variants("conv2d_nhwc", env) == [WS, MMA]
    assert sweep.tile_variants("layer_norm", env) == []
    env["NF_SWEEP_CONV_TILE_VARIANTS"] = f"{PP},"
    assert sweep.tile_variants("matmul", env) == [WS, MMA]
    assert sweep.tile_variants("conv2d_nhwc", env) == [PP]
    env["NF_SWEEP_CONV_TILE_VARIANTS"] = ""
    assert sweep.tile_variants("conv2d_nhwc", env) == []


def test_the_peers_run_under_the_backend_flags_of_their_case_which_are_restored_after():
    sys.path.insert(0, str(SWEEP.parent))
    import types
    import sweep
    t = types.SimpleNamespace(backends=types.SimpleNamespace(
        cudnn=types.SimpleNamespace(allow_tf32=True),
        cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False))))
    seen = []

    def call():
        seen.append((t.backends.cudnn.allow_tf32, t.backends.cuda.matmul.allow_tf32))
        return "out"
    flagged = sweep.with_backend_flags(t, {"cudnn.allow_tf32": False, "cuda.matmul.allow_tf32": True}, call)
    assert flagged() == "out"
    assert seen == [(False, True)]
    assert (t.backends.cudnn.allow_tf32, t.backends.cuda.matmul.allow_tf32) == (True, False)

    def fails():
        seen.append(t.backends.cudnn.allow_tf32)
        raise RuntimeError("peer failed")
    try:
        sweep.with_backend_flags(t, {"cudnn.allow_tf32": False}, fails)()
        raise AssertionError("the peer's failure was swallowed")
    except RuntimeError:
        pass
    assert seen[-1] is False and t.backends.cudnn.allow_tf32 is True
    assert sweep.with_backend_flags(t, {}, call) is call


def test_f32_convolutions_are_f32_on_both_sides_and_tf32_ones_tf32_on_both():
    """PyTorch multiplies f32 convolutions as tf32 by default
    (torch.backends.cudnn.allow_tf32): the f32 cases turn that off for the
    peers, and the tf32 cases compare normfuse's allow_tf32 with it on."""
    sys.path.insert(0, str(SWEEP.parent))
    import sweep
    by_id = {c.id: c for c in sweep.all_cases(small=False)}
    for hw, ch in ((56, 64), (28, 128), (14, 256), (7, 512)):
        f32 = by_id[f"conv2d+bias+relu/forward/f32/32x{hw}x{hw}x{ch}x{ch}"].build(sweep.ShapeBackend(), False)
        tf32 = by_id[f"conv2d+bias+relu/forward/tf32/32x{hw}x{hw}x{ch}x{ch}"].build(sweep.ShapeBackend(), False)
        assert (f32.peer_flags, f32.nf_options) == ({"cudnn.allow_tf32": False}, {})
        assert (tf32.peer_flags, tf32.nf_options) == ({"cudnn.allow_tf32": True}, {"allow_tf32": True})
        assert tf32.mlir == f32.mlir  # the same f32 program, compiled with allow_tf32
    bf16 = by_id["conv2d+bias+relu/forward/bf16/32x56x56x64x64"].build(sweep.ShapeBackend(), False)
    assert bf16.peer_flags == {}
    block = by_id["block:unet_resnet_block_tosa/forward/f32/2x32x32x320"].build(sweep.ShapeBackend(), False)
    assert block.peer_flags == {"cudnn.allow_tf32": False}
