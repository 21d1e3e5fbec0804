"""bench/gpu/check.py on a kernel that never finishes: the case is recorded
as timed out after --case-timeout-s, and the later cases of the same kernel
(its family and wgmma tile kind) as skipped, saying which case timed out,
while another kind's cases still run; a case cut short by the check's own
time box is no sign of a hang. The "tool" here is a script that never
returns, so no package, GPU or simulator is needed. The sanitizers take
one case of each kernel kind; every package case has a name of its own."""

import json
import os
import subprocess
import sys
import time

from conftest import EXAMPLES

CHECK = EXAMPLES.parent / "bench" / "gpu" / "check.py"
WS_F16 = "matmul_bias_gelu_37x72x136_f16_wgmma_ws"
WS_BF16 = "matmul_bias_gelu_37x72x136_bf16_wgmma_ws"
TMA_F16 = "matmul_bias_gelu_37x72x136_f16_wgmma_tma"


def run_check(tmp_path, *extra):
    """check.py's records, by case, of the three cases run by a tool that
    never returns."""
    hang = tmp_path / "hang.sh"
    hang.write_text("#!/bin/sh\nexec sleep 30\n")
    hang.chmod(0o755)
    packages = tmp_path / "packages"
    packages.mkdir()
    (packages / "cases.json").write_text(json.dumps([{"name": n} for n in (WS_F16, WS_BF16, TMA_F16)]))
    records = tmp_path / "check.jsonl"
    proc = subprocess.run([sys.executable, str(CHECK), "--tool", str(hang), "--packages", str(packages),
                           "--target", "cuda-sim", "--filter", "37x72x136", "--jsonl", str(records),
                           *extra],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return {r["case"]: r.get("error") or r.get("skipped")
            for r in map(json.loads, records.read_text().splitlines())}


def test_a_case_that_times_out_skips_the_later_cases_of_its_kernel(tmp_path):
    got = run_check(tmp_path, "--case-timeout-s", "1")
    assert got == {WS_F16: "timed out after 1.0 s",
                   WS_BF16: f"{WS_F16}, of the same kernel, timed out",
                   TMA_F16: "timed out after 1.0 s"}


def test_a_case_the_time_box_cuts_short_is_not_taken_for_a_hang(tmp_path):
    # The first case (in cases.py's order) runs until the box is out
    # (about 10 s, not its 30); the rest are skipped for the box, none for
    # a hang.
    got = run_check(tmp_path, "--case-timeout-s", "30", "--deadline", str(time.time() + 12))
    assert sorted(v.startswith("the check's time box ran out after ") for v in got.values()) == [
        False, False, True], got
    assert all(v.startswith("the check's time box ran out") for v in got.values()), got


def test_the_sanitizers_take_the_smallest_passed_case_of_each_kernel_kind():
    # Of the package cases (bench/gpu/cases.py): every wgmma kernel (the
    # cp.async, TMA, warp-specialized, multicast and pingpong ones) is its
    # own kind, each sanitized once, on its smallest case that passed.
    sys.path.insert(0, str(CHECK.parent))
    import cases
    import check
    every = [c for c in cases.all_cases() if c.family == "matmul wgmma"]
    kinds = {check.kernel_kind(c) for c in every}
    assert kinds == {"matmul wgmma" + s for s in ("_wgmma", "_wgmma_tma", "_wgmma_ws", "_wgmma_mc",
                                                 "_wgmma_pp")}
    chosen = check.sanitized_cases(every, set())
    assert sorted(c.name for c in chosen) == sorted(
        f"matmul_bias_gelu_37x{k}_{d}_wgmma{s}"
        for k, d, s in (("45x70", "f16", ""), ("72x136", "f16", "_tma"), ("72x136", "f16", "_ws"),
                        ("72x136", "f16", "_mc"), ("72x136", "f16", "_pp")))
    # Where the smallest failed, the next smallest of its kind.
    passed = {c.name for c in every} - {"matmul_bias_gelu_37x72x136_f16_wgmma_pp"}
    chosen = {check.kernel_kind(c): c.name for c in check.sanitized_cases(every, passed)}
    assert chosen["matmul wgmma_wgmma_pp"] == "matmul_bias_gelu_37x72x136_bf16_wgmma_pp"


def test_every_package_case_has_a_name_of_its_own():
    # nf-package refuses an entry named twice: one duplicate would cost the
    # device call its packages.
    sys.path.insert(0, str(CHECK.parent))
    import cases
    names = [c.name for c in cases.all_cases()]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []


def test_a_wrong_result_says_where_its_wrong_elements_lie():
    # A product whose columns 8..15 of every 16 are wrong (a fragment's
    # second half) and one element never written (NaN): the message names
    # the count, the first wrong element and the period of the pattern.
    sys.path.insert(0, str(CHECK.parent))
    import numpy as np
    import check
    want = np.arange(64 * 48, dtype=np.float64).reshape(64, 48) / 1000
    got = want.copy()
    got[:, 8:16] += 1
    got[:, 40:48] += 1
    assert check.where_wrong(got.ravel(), want.ravel(), (64, 48), 4.0, 1e-2) == (
        "1024 of 3072 elements wrong, the first at (0, 8): 1.008 for 0.008; "
        "rows 0..63 of 64; columns 8..47 of 48, 8..15 mod 16")
    got = want.copy()
    got[37, 5] = np.nan
    assert check.where_wrong(got.ravel(), want.ravel(), (64, 48), 4.0, 1e-2) == (
        "1 of 3072 elements wrong (1 not finite), the first at (37, 5): nan for 1.781; "
        "rows 37..37 of 64, 5 mod 8; columns 5..5 of 48, 5 mod 8")
    # A batch's odd rows of 2 x 32 x 48, and a vector's tail.
    got = want.copy().reshape(2, 32, 48)
    got[:, 1::2] = 0
    assert check.where_wrong(got.ravel(), want.ravel(), (2, 32, 48), 4.0, 1e-3).endswith(
        "rows 1..31 of 32, 1, 3, 5, 7 mod 8; columns 0..47 of 48")
    got = want.ravel().copy()
    got[3000:] = np.nan
    assert check.where_wrong(got, want.ravel(), (3072,), 4.0, 1e-3).endswith(
        "elements 3000..3071 of 3072, 56..127 mod 128")
    assert check.where_wrong(want.ravel(), want.ravel(), (64, 48), 4.0, 1e-3) == (
        "no element out of tolerance")
