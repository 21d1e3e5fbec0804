"""bench/gpu/sweep.py's tile variants across a resume: after a wgmma tile
lost the CUDA context (a case-failed record naming it), the resumed sweep
records every wgmma variant as skipped, saying why, and still measures the
others; a TMA tile's loss skips only the TMA tiles, a warp-specialized
tile's only those (a multicast one's only those), and the widest kind any
loss names wins; without such
a record it measures them all. On cuda-sim, one small product case."""

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
MMA = "64x64x32/3/2x2"


def resumed_sweep(tmp_path, earlier, variants=(WGMMA, MMA)):
    records = tmp_path / "sweep.jsonl"
    records.write_text("".join(json.dumps(r) + "\n" for r in earlier))
    env = dict(os.environ, NF_SWEEP_TILE_VARIANTS=",".join(variants))
    subprocess.run([sys.executable, str(SWEEP), "--jsonl", str(records), "--target", "cuda-sim",
                    "--small", "--resume", "--filter", f"^{CASE}$", "--budget-s", "60",
                    "--deadline", str(time.time() + 120)],
                   env=env, check=True, capture_output=True, text=True, timeout=300)
    cases = [json.loads(line) for line in records.read_text().splitlines()]
    return next(r for r in cases if r.get("kind") == "case" and r["id"] == CASE)["systems"]


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


def test_the_widest_kind_of_tile_lost_is_skipped_whatever_the_order(tmp_path):
    # A TMA tile lost, then a warp-specialized one (in another run): every
    # TMA-fed tile stays skipped.
    systems = resumed_sweep(tmp_path, [lost_in(TMA, "matmul/forward/f16/4x4x4"), lost_in(WS)],
                            (WS, TMA, MMA))
    why = f"normfuse {TMA} lost the CUDA context in matmul/forward/f16/4x4x4"
    assert systems[f"normfuse {WS}"] == {"skipped": why}
    assert systems[f"normfuse {TMA}"] == {"skipped": why}
    assert systems[f"normfuse {MMA}"]["ok"] is True
