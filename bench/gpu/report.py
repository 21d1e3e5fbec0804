#!/usr/bin/env python3
"""The GPU run's table and plots, from its JSON (run_steps.py calls it at
the end of a run; on its own it redoes them from a results file):

    report.py RESULTS.json [--plots | --families | --check-dry-run]

table(): the steps, the checks' tallies, then the sweep: one line per tier-1
case (each system's median ms and fraction of the copy, normfuse's error)
and, per op, direction and dtype, the median fraction of copy of each system
over the sizes. plots(): a PNG per family (matplotlib, Agg) of achieved GB/s
against size, one line per system, the copy as the ceiling (and TFLOP/s for
matmul and conv2d): row norms, NHWC group norm, the NCHW channel norms,
matmul and conv2d, the examples; 5 files. families(): the summary
bench/README.md quotes, one line per op family (f32 and bf16 together):
normfuse's median fraction of copy and range (TFLOP/s for the products),
each peer's median speed ratio, and how often normfuse was the fastest.
"""
import json
import os
import statistics
import sys

SYSTEMS = ("normfuse", "eager", "compile", "liger", "copy")
# plot file suffix: families it shows
# (5 files: with the JSON and the log, 7 of the 8 a GPU machine returns,
# one to spare for a JSON rewrite a kill interrupts.)
PLOT_FAMILIES = {
    "row_norms": ["layer_norm", "rms_norm"],
    "group_norm_nhwc": ["group_norm_nhwc"],
    "channel_norms_nchw": ["channel_norms_nchw"],
    "matmul_conv2d": ["matmul", "conv2d_nhwc", "conv2d_nchw"],
    "examples": ["examples"],
}


def _ms(entry):
    return entry.get("median_ms") if isinstance(entry, dict) else None


def _fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def sweep_cases(doc):
    return [r for r in doc.get("results", {}).get("sweep", []) if r.get("kind") in ("case", "case-failed")]


def table(doc):
    lines = ["", "## steps", "| step | status | s | box s |", "| --- | --- | ---: | ---: |"]
    for s in doc.get("steps", []):
        lines.append(f"| {s['step']} | {s.get('status')}{' (' + s['reason'] + ')' if s.get('reason') else ''} | "
                     f"{s.get('seconds', '-')} | {s.get('box_s', '-')} |")
    res = doc.get("results", {})
    lines += ["", "## checks"]
    lit = res.get("lit", [])
    if lit:
        lines.append(f"cuda-gpu.test equivalents: {sum(r.get('ok') is True for r in lit)} ok, "
                     f"{sum(r.get('ok') is False for r in lit)} failed, {sum(r.get('ok') is None for r in lit)} skipped")
    refs = res.get("references", [])
    if refs:
        agree = sum(bool(r.get("ok")) and not r.get("refused_as_expected") for r in refs)
        refused = sum(bool(r.get("refused_as_expected")) for r in refs)
        bad = [r["id"] for r in refs if r.get("ok") is False]
        skipped = sum(r.get("ok") is None for r in refs)
        lines.append(f"nf-run vs the CPU's results: {agree} agree, {refused} refused as on cuda-sim, "
                     f"{len(bad)} failed, {skipped} skipped" + (f": {', '.join(bad[:8])}" if bad else ""))
    check = res.get("check", [])
    if check:
        bad = [r["case"] for r in check if r.get("ok") is False]
        lines.append(f"package cases vs float64: {sum(r.get('ok') is True for r in check)} passed, {len(bad)} failed, "
                     f"{sum(r.get('ok') is None for r in check)} skipped" + (f": {', '.join(bad[:8])}" if bad else ""))
        fracs = [r["bench"]["fraction_of_copy"] for r in check if r.get("bench") and "fraction_of_copy" in r["bench"]]
        if fracs:
            lines.append(f"  package cases' fraction of copy (hot L2: not flushed, small cases fit in it): median {statistics.median(fracs):.2f}, "
                         f"min {min(fracs):.2f}, max {max(fracs):.2f} ({len(fracs)} cases)")
    for r in res.get("gtest", []):
        lines.append(f"{r['check']}: {'ok' if r.get('ok') else 'FAILED' if r.get('ok') is False else 'skipped'}"
                     f" ({r.get('detail', '')})")
    for r in res.get("pytest", []):
        lines.append(f"{r['check']}: {'ok' if r.get('ok') else 'FAILED' if r.get('ok') is False else 'skipped'}"
                     f" ({r.get('detail', '')})")
    onnx = res.get("onnx", [])
    if onnx:
        lines.append(f"ONNX BatchNormalization: {sum(bool(r.get('ok')) for r in onnx)} of {len(onnx)} agree")
    for r in res.get("nvrtc", []):
        t = r.get("times_ms", {})
        if not r.get("ok"):
            lines.append(f"compile costs ({r.get('target')}): FAILED: {'; '.join(r.get('failures', []))[-300:]}")
            continue
        lines.append(f"compile ms ({r.get('target')}): cold {t.get('cold')}, memory hit {t.get('memory_hit')}, "
                     f"disk hit {t.get('disk_hit')} (its memory hit {t.get('memory_hit_after_disk')})"
                     + (f"; {r['note']}" if r.get("note") else ""))
    san = res.get("sanitizers", [])
    if san:
        bad = [r["case"] for r in san if not r.get("ok")]
        lines.append(f"compute-sanitizer: {len(san) - len(bad)} of {len(san)} families clean"
                     + (f"; not clean: {', '.join(bad)}" if bad else ""))

    cases = sweep_cases(doc)
    if not cases:
        return lines
    env = next((r for r in doc["results"]["sweep"] if r.get("kind") == "environment"), {})
    lines += ["", f"## sweep ({len(cases)} cases; torch {env.get('torch', '-')}, triton {env.get('triton', '-')}, "
              f"liger {env.get('liger_kernel', '-')})"]
    timed = [r for r in cases if _ms(r.get("systems", {}).get("normfuse", {})) is not None]
    nf_ok = sum(bool(r.get("systems", {}).get("normfuse", {}).get("ok")) for r in cases)
    skipped = [r for r in cases if r.get("skipped")]
    lines.append(f"normfuse within tolerance of float64 in {nf_ok} of {len(cases) - len(skipped)} cases run; "
                 f"{len(timed)} timed; {len(skipped)} skipped"
                 + (f" ({skipped[0]['skipped']})" if skipped else ""))
    if not timed:
        note = next((r["systems"]["normfuse"].get("timing") for r in cases
                     if r.get("systems", {}).get("normfuse", {}).get("timing")), "")
        if note:
            lines.append(f"no timings: {note}")
    head = "| case | MiB | " + " | ".join(f"{s} ms (x copy)" for s in SYSTEMS[:-1]) + " | copy ms | nf error |"
    lines += ["", head, "|" + " --- |" * 2 + " ---: |" * (len(SYSTEMS) + 1)]
    for r in cases:
        if r.get("tier") != 1 or r.get("skipped"):
            continue
        sy = r.get("systems", {})
        cells = []
        for s in SYSTEMS[:-1]:
            e = sy.get(s, {})
            if _ms(e) is not None:
                cells.append(f"{e['median_ms']:.3f} ({e.get('fraction_of_copy', 0):.2f})")
            elif e.get("failure"):
                cells.append("error")
            else:
                cells.append("-")
        nf = sy.get("normfuse", {})
        err = _fmt(nf.get("error"), ".2g") + ("" if nf.get("ok", True) else " FAIL")
        if r.get("failure") or nf.get("failure"):
            err = "FAILED"
        lines.append(f"| {r['id']} | {r.get('bytes', 0) / 2**20:.1f} | " + " | ".join(cells) +
                     f" | {_fmt(_ms(sy.get('copy', {})))} | {err} |")
    groups = {}
    for r in timed:
        groups.setdefault((r["op"], r["direction"], r["dtype"]), []).append(r)
    if groups:
        lines += ["", "median fraction of copy over the sizes (cases):",
                  "| op | dir | dtype | " + " | ".join(SYSTEMS[:-1]) + " | nf worst error |",
                  "| --- | --- | --- |" + " ---: |" * len(SYSTEMS)]
        for (op, d, dt), rs in groups.items():
            cells = []
            for s in SYSTEMS[:-1]:
                f = [x["systems"][s]["fraction_of_copy"] for x in rs if "fraction_of_copy" in x["systems"].get(s, {})]
                cells.append(f"{statistics.median(f):.2f} ({len(f)})" if f else "-")
            worst = max((x["systems"]["normfuse"].get("error", 0) or 0) for x in rs)
            lines.append(f"| {op} | {d} | {dt} | " + " | ".join(cells) + f" | {worst:.2g} |")
    return lines


# (label, ops, direction) of families(); ops of one label are pooled.
# (label, ops, direction, dtypes or None for all): the products one row per
# precision, so that the SIMT kernel's f32, the tensor cores' tf32 and their
# f16/bf16 (each against the peer's same precision) are not one median.
HALF = ("f16", "bf16")
FAMILY_ROWS = [
    ("LayerNorm forward", ("layer_norm",), "forward", None),
    ("RMSNorm forward", ("rms_norm",), "forward", None),
    ("LayerNorm backward", ("layer_norm",), "backward", None),
    ("RMSNorm backward", ("rms_norm",), "backward", None),
    ("GroupNorm NHWC (+SiLU) forward", ("group_norm_nhwc", "group_norm_nhwc+silu"), "forward", None),
    ("GroupNorm NHWC (+SiLU) backward", ("group_norm_nhwc", "group_norm_nhwc+silu"), "backward", None),
    ("GroupNorm NCHW forward", ("group_norm",), "forward", None),
    ("BatchNorm training forward", ("batch_norm_training",), "forward", None),
    ("InstanceNorm forward", ("instance_norm",), "forward", None),
    ("matmul + bias + GELU, f16/bf16", ("matmul+bias+gelu",), "forward", HALF),
    ("matmul + bias + GELU, f32", ("matmul+bias+gelu",), "forward", ("f32",)),
    ("matmul alone, f16/bf16 (vs eager: cuBLAS)", ("matmul",), "forward", HALF),
    ("matmul alone, tf32 (vs eager: cuBLAS tf32)", ("matmul",), "forward", ("tf32",)),
    ("conv2d 3x3 + bias + ReLU NHWC, f16/bf16", ("conv2d+bias+relu",), "forward", HALF),
    ("conv2d 3x3 + bias + ReLU NHWC, f32", ("conv2d+bias+relu",), "forward", ("f32",)),
    ("conv2d 3x3 + bias + ReLU NHWC, tf32", ("conv2d+bias+relu",), "forward", ("tf32",)),
    ("conv2d 3x3 + bias + ReLU NCHW", ("conv2d_nchw+bias+relu",), "forward", None),
]


def families(doc):
    """One line per FAMILY_ROWS entry over the sweep's timed cases: normfuse's
    fraction of copy, median (min-max), or TFLOP/s (min-max) for products;
    "vs" a peer = median over the cases both ran of peer ms / normfuse ms
    (above 1: normfuse is faster), with their count where a peer ran fewer
    cases than normfuse; fastest = cases where normfuse's median
    was below every peer's that ran."""
    timed = [r for r in sweep_cases(doc) if _ms(r.get("systems", {}).get("normfuse", {})) is not None]
    peers = ("eager", "compile", "liger")
    lines = ["| op | cases | normfuse | " + " | ".join(f"vs {p}" for p in peers) + " | fastest of all |",
             "| --- | ---: | --- |" + " ---: |" * (len(peers) + 1)]
    for label, ops, direction, dtypes in FAMILY_ROWS:
        rs = [r for r in timed if r["op"] in ops and r["direction"] == direction
              and (dtypes is None or r.get("dtype") in dtypes)]
        if not rs:
            continue
        nf = [r["systems"]["normfuse"] for r in rs]
        if all("tflops" in e for e in nf):
            t = [e["tflops"] for e in nf]
            own = f"{min(t):.0f}-{max(t):.0f} TFLOP/s"
        else:
            f = [e["fraction_of_copy"] for e in nf]
            own = f"{statistics.median(f):.2f} ({min(f):.2f}-{max(f):.2f}) of copy"
        cells, fastest = [], 0
        for r in rs:
            mine = r["systems"]["normfuse"]["median_ms"]
            others = [_ms(r["systems"].get(p, {})) for p in peers]
            fastest += all(o is None or mine < o for o in others)
        for p in peers:
            ratios = [_ms(r["systems"][p]) / r["systems"]["normfuse"]["median_ms"]
                      for r in rs if _ms(r["systems"].get(p, {})) is not None]
            count = "" if len(ratios) == len(rs) else f" ({len(ratios)})"
            cells.append(f"{statistics.median(ratios):.2f}{count}" if ratios else "-")
        lines.append(f"| {label} | {len(rs)} | {own} | " + " | ".join(cells) + f" | {fastest} |")
    return lines


def plots(doc, stem):
    """(files written, notes)"""
    cases = [r for r in sweep_cases(doc) if "systems" in r]
    if not any(_ms(r["systems"].get("normfuse", {})) is not None or _ms(r["systems"].get("copy", {})) is not None
               for r in cases):
        return [], ["no timed sweep case: no plots"]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], ["matplotlib is not installed: no plots"]
    style = {"normfuse": ("C0", "o", "-"), "eager": ("C1", "s", "-"), "compile": ("C2", "^", "-"),
             "liger": ("C3", "D", "-"), "copy": ("k", "", "--")}
    files, notes = [], []
    for suffix, families in PLOT_FAMILIES.items():
        rs = [r for r in cases if r["family"] in families]
        if not rs:
            continue
        panels = {}
        for r in rs:
            op = "fused groups and blocks" if suffix == "examples" else r["op"]
            panels.setdefault((op, r["direction"], r["dtype"]), []).append(r)
        keys = sorted(panels)
        producers = suffix == "matmul_conv2d"
        rows = len(keys) * (2 if producers else 1)
        cols = 1
        if not producers and len(keys) > 2:
            cols = 2
            rows = -(-len(keys) // 2)
        width = 10 if suffix == "examples" else 6.5 * cols
        fig, axes = plt.subplots(rows, cols, figsize=(width, 3.2 * rows), squeeze=False)
        flat = [a for row in axes for a in row]
        for i, key in enumerate(keys):
            group = panels[key]
            row_norm = suffix == "row_norms"
            xs_of = (lambda r: r["shape"][-1]) if row_norm else (lambda r: r.get("bytes", 0) / 2**20)
            group.sort(key=xs_of)
            metrics = [("gbps", "GB/s")] + ([("tflops", "TFLOP/s")] if producers else [])
            for j, (metric, label) in enumerate(metrics):
                ax = flat[i * len(metrics) + j] if producers else flat[i]
                if suffix == "examples":
                    names = [r["op"] + "\n" + "x".join(map(str, r["shape"])) for r in group]
                    width = 0.8 / len(SYSTEMS)
                    for k, s in enumerate(SYSTEMS):
                        ys = [r["systems"].get(s, {}).get(metric) or 0 for r in group]
                        ax.bar([n + k * width for n in range(len(group))], ys, width, label=s, color=style[s][0])
                    ax.set_xticks([n + 0.4 for n in range(len(group))])
                    ax.set_xticklabels(names, fontsize=6, rotation=30, ha="right")
                else:
                    for s in SYSTEMS:
                        pts = [(xs_of(r), r["systems"].get(s, {}).get(metric)) for r in group]
                        pts = [(x, y) for x, y in pts if y]
                        if not pts:
                            continue
                        color, marker, line = style[s]
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker or None, linestyle=line,
                                color=color, label=s + (" (ceiling)" if s == "copy" else ""))
                    ax.set_xscale("log", base=2)
                    ax.set_xlabel("row length" if row_norm else "MiB read + written")
                ax.set_ylabel(label)
                ax.set_ylim(bottom=0)
                ax.set_title(f"{key[0]} {key[1]} {key[2]}", fontsize=9)
                ax.grid(True, alpha=0.3)
                if ax.get_legend_handles_labels()[0]:
                    ax.legend(fontsize=7)
        for ax in flat[len(keys) * (2 if producers else 1):]:
            ax.axis("off")
        device = doc.get("device", {}).get("gpu", "")
        fig.suptitle(f"normfuse {suffix}: {device}, {doc.get('date', '')} (CUDA events, medians)", fontsize=10)
        fig.tight_layout()
        path = f"{stem}-{suffix}.png"
        fig.savefig(path, dpi=80)
        plt.close(fig)
        files.append(path)

    return files, notes


def dry_run_problems(doc):
    """What is wrong with a dry run's results (bench/gpu/dry_run.sh): a
    step that did not pass (skipped is fine where it says why), a check that
    failed, a sweep case whose normfuse result is off, a figure that looks
    measured."""
    problems = []
    for s in doc.get("steps", []):
        if s.get("status") not in ("ok", "skipped") or (s.get("status") == "skipped" and not s.get("reason")):
            problems.append(f"step {s['step']}: {s.get('status')}")
    for name, records in doc.get("results", {}).items():
        for r in records:
            if r.get("ok") is False:
                problems.append(f"{name}: {r.get('check') or r.get('id') or r.get('case')}: {r.get('error') or r.get('detail')}")
    cases = sweep_cases(doc)
    if not cases:
        problems.append("the sweep recorded no case")
    for r in cases:
        nf = r.get("systems", {}).get("normfuse", {})
        if r.get("skipped"):
            continue
        if not nf.get("ok"):
            problems.append(f"sweep {r['id']}: {nf.get('failure') or r.get('failure') or nf.get('error')}")
        for s, e in r.get("systems", {}).items():
            # "normfuse <variant>": normfuse again under a forced tile or
            # schedule (NF_SWEEP_TILE_VARIANTS, NF_SWEEP_ROW_VARIANTS).
            ours = s == "normfuse" or s.startswith("normfuse ")
            if "median_ms" in e:
                problems.append(f"sweep {r['id']}: {s} has a time on a dry run")
            elif ours and "skipped" not in e.get("timing", ""):
                problems.append(f"sweep {r['id']}: {s}'s timing is not recorded as skipped")
            elif ours and s != "normfuse" and not e.get("ok"):
                problems.append(f"sweep {r['id']}: {s}: {e.get('failure') or e.get('error')}")
            elif not ours and not e.get("skipped"):
                problems.append(f"sweep {r['id']}: {s} is not recorded as skipped")
    return problems


def main() -> int:
    path = sys.argv[1]
    doc = json.load(open(path))
    if "--check-dry-run" in sys.argv:
        problems = dry_run_problems(doc)
        for p in problems[:30]:
            print("dry run:", p)
        print(f"dry run: {'ok' if not problems else str(len(problems)) + ' problems'} ({path})")
        return 1 if problems else 0
    if "--families" in sys.argv:
        print("\n".join(families(doc)))
        return 0
    print("\n".join(table(doc)))
    if "--plots" in sys.argv:
        files, notes = plots(doc, os.path.splitext(path)[0])
        print("\n".join(notes + files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
