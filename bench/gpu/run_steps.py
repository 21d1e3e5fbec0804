#!/usr/bin/env python3
"""The steps of bench/gpu/run.sh (which unpacks the bundle, sets the
environment and calls this), each a child process with its own time box,
so that one failing or overrunning step costs only its own results:

  lit         test/Tools/{nf-run,nf-package-run}/cuda-gpu.test, in Python
  references  nf-run --target cuda on the shipped examples and the TOSA
              programs of test/, against the CPU's results made here
  check       every case of bench/gpu/cases.py from the kernel packages,
              against float64, with CUDA-event timings beside a copy
  gtest       the bundle's GoogleTests of the CUDA target
  onnx        ONNX's BatchNormalization training cases on the target
  pytest      python/tests/test_cuda_devices.py (the package on CUDA tensors)
  nvrtc       NVRTC costs: cold compile, memory-cache hit, disk-cache hit
  sweep       normfuse against PyTorch eager, torch.compile, Liger and a
              copy (bench/gpu/sweep.py)
  sanitizers  compute-sanitizer memcheck and racecheck, once per family
  report      the table (end of the log) and a PNG per family

Every record goes to one JSON, rewritten (whole, by rename) after each step
and every few seconds while one runs, so the JSON is there whatever stops
the run; the log gets every line of every step. Both are named
OUT/bench/results/gpu-<suite>-<device>-<date>.{json,txt}; the PNGs
-<family>.png beside them (5: with the JSON and the log, 7 of the 8
files a GPU machine gives back).
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from sweep import read_records, trailing_attempt  # noqa: E402

# step: (default time box in s, or None for "what is left")
BOXES = {"lit": 30, "references": 60, "check": 80, "gtest": 75, "onnx": 20, "pytest": 30, "nvrtc": 25,
         "cost": 20, "sweep": None, "sanitizers": None}
ORDER = ["lit", "references", "check", "gtest", "onnx", "pytest", "nvrtc", "cost", "sweep", "sanitizers"]
# Kept back from the sweep for the sanitizers, and from everything for the
# report.
SANITIZER_RESERVE_S = 60
REPORT_RESERVE_S = 15


def ended_in_a_measurement(jsonl):
    """Whether the sweep's records end in an attempt with no case record
    after it (bench/gpu/sweep.py)."""
    return trailing_attempt(read_records(jsonl)) is not None


def sh(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def device_info(target):
    info = {"target": target}
    if shutil.which("nvidia-smi"):
        q = sh(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap,memory.total",
                "--format=csv,noheader"]).splitlines()
        if q:
            parts = [p.strip() for p in q[0].split(",")]
            info.update(zip(("gpu", "driver", "compute_capability", "memory"), parts))
        m = re.search(r"CUDA Version:\s*([0-9.]+)", sh(["nvidia-smi"]))
        info["driver_cuda"] = m.group(1) if m else None
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else "")
    if nvcc:
        m = re.search(r"release ([0-9.]+)", sh([nvcc, "--version"]))
        info["toolkit_cuda"] = m.group(1) if m else None
    info.setdefault("gpu", "no GPU")
    info.setdefault("driver", "none")
    return info


def short_name(gpu, target):
    m = re.search(r"(h100|h200|a100|l40s|b200|gh200|l4|a10g)", gpu.lower())
    return m.group(1) if m else re.sub(r"[^a-z0-9]+", "-", target.lower())


class Run:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.deadline = args.started + args.budget_s
        self.tmp = args.tmp
        self.info = device_info(args.target)
        self.date = time.strftime("%Y-%m-%d", time.gmtime())
        results = os.path.join(args.out, "bench", "results")
        os.makedirs(results, exist_ok=True)
        self.stem = os.path.join(results, f"gpu-{args.suite}-{short_name(self.info['gpu'], args.target)}-{self.date}")
        self.log = open(self.stem + ".txt", "a")
        self.doc = {
            "suite": args.suite, "date": self.date, "command": args.command,
            "target": args.target, "device": self.info,
            "normfuse": {"bundle_version": args.bundle_version, "bundle": args.bundle_source,
                         "tree": args.tree},
            "budget_s": args.budget_s, "steps": [], "results": {},
        }
        self.jsonl = {}
        self.stop = threading.Event()
        threading.Thread(target=self.autosave, daemon=True).start()

    def say(self, text):
        with self.lock:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
            self.log.write(text + "\n")
            self.log.flush()

    def left(self):
        return self.deadline - time.time()

    def collect(self):
        for name, path in self.jsonl.items():
            records = read_records(path)
            # The sweep's attempts, but the one still without a result.
            current = trailing_attempt(records)
            self.doc["results"][name] = [r for r in records if r is current or
                                         r.get("kind") not in ("attempt", "attempt-done")]
        # The sweep's first record names the Python side's versions.
        env = next((r for r in self.doc["results"].get("sweep", []) if r.get("kind") == "environment"), None)
        if env:
            self.doc["versions"] = {k: env.get(k) for k in ("python", "numpy", "torch", "torch_cuda", "triton",
                                                             "liger_kernel", "cudnn", "gpu", "capability")}
            self.doc["versions"]["normfuse"] = self.args.bundle_version

    def save(self):
        with self.lock:
            self.collect()
            self.doc["saved_at_s"] = round(time.time() - self.args.started, 1)
            tmp = self.stem + ".json.tmp"
            with open(tmp, "w") as f:
                json.dump(self.doc, f, indent=1)
            os.replace(tmp, self.stem + ".json")

    def autosave(self):
        while not self.stop.wait(10):
            try:
                self.save()
            except Exception as e:  # noqa: BLE001
                self.say(f"run_steps: saving the JSON failed: {e}")

    def step(self, name, cmd, box, env=None, records=None):
        """Runs `cmd` within `box` seconds; the step's entry."""
        box = max(0.0, min(box, self.left() - REPORT_RESERVE_S))
        entry = {"step": name, "box_s": round(box, 1), "command": " ".join(cmd)}
        if box < 5:
            entry.update(status="skipped", reason="no time left in the run's budget")
            self.say(f"\n=== {name}: skipped (no time left)")
            self.doc["steps"].append(entry)
            self.save()
            return entry
        if records:
            self.jsonl[records] = os.path.join(self.tmp, f"{records}.jsonl")
        self.say(f"\n=== {name} (time box {box:.0f} s, {self.left():.0f} s left in the run)")
        start = time.time()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=env, start_new_session=True, errors="replace")
        tail = []

        def pump():
            for line in proc.stdout:
                line = line.rstrip("\n")
                tail.append(line)
                del tail[:-40]
                self.say(line)
        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            rc = proc.wait(timeout=box)
            status = "ok" if rc == 0 else "failed"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            rc, status = None, "timed out"
        reader.join(timeout=5)
        entry.update(status=status, exit_status=rc, seconds=round(time.time() - start, 1))
        if status != "ok":
            entry["log_tail"] = tail[-15:]
        self.say(f"=== {name}: {status} in {entry['seconds']} s")
        self.doc["steps"].append(entry)
        self.save()
        return entry


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--bundle-source", default="")
    parser.add_argument("--bundle-version", default="")
    parser.add_argument("--checks", required=True, help="the unpacked build/gpu-check")
    parser.add_argument("--out", required=True)
    parser.add_argument("--tmp", required=True)
    parser.add_argument("--target", default="cuda")
    parser.add_argument("--suite", default="full")
    parser.add_argument("--started", type=float, default=time.time())
    parser.add_argument("--budget-s", type=float, default=450)
    parser.add_argument("--command", default="bench/gpu/run.sh")
    parser.add_argument("--tree", default="")
    parser.add_argument("--steps", default=",".join(ORDER))
    parser.add_argument("--filter", default="", help="check.py --filter (the package cases)")
    parser.add_argument("--small", action="store_true", help="the sweep's small shapes (the dry run)")
    parser.add_argument("--preamble", default="", help="a file of lines to put first in the log")
    args = parser.parse_args()
    run = Run(args)
    if args.preamble and os.path.exists(args.preamble):
        for line in open(args.preamble):
            run.say(line.rstrip("\n"))
    run.say(f"# normfuse GPU run: {run.info.get('gpu')}, driver {run.info.get('driver')}, CUDA "
            f"{run.info.get('driver_cuda') or '-'} (toolkit {run.info.get('toolkit_cuda') or '-'}), {run.date}, "
            f"target {args.target}, suite {args.suite}")
    run.say(f"# command: {args.command}")
    run.say(f"# normfuse: bundle {args.bundle_version or '?'} ({args.bundle_source}); tree {args.tree}")
    run.save()
    py = sys.executable
    steps = [s for s in args.steps.split(",") if s]
    cuda = args.target == "cuda"
    bin_ = lambda tool: os.path.join(args.bundle, "bin", tool)  # noqa: E731
    refs_dir = os.path.join(args.checks, "references")
    box = lambda name: float(os.environ.get(f"NF_GPU_BOX_{name.upper()}", BOXES[name] or 0))  # noqa: E731
    failed = []

    # Off the GPU the simulator runs the kernels: small cases only.
    sim_limit = [] if cuda else ["--max-elements", os.environ.get("NF_GPU_SIM_MAX_ELEMENTS", "300000")]

    def deadline(b):
        return str(time.time() + min(b, run.left() - REPORT_RESERVE_S))

    for name in ORDER:
        if name not in steps:
            continue
        if name == "lit":
            e = run.step(name, [py, f"{HERE}/device_tests.py", "lit", "--bundle", args.bundle, "--references",
                                refs_dir, "--target", args.target, "--jsonl", f"{args.tmp}/lit.jsonl"],
                         box(name), records="lit")
        elif name == "references":
            b = box(name)
            e = run.step(name, [py, f"{HERE}/check_references.py", "--nf-run", bin_("nf-run"), "--references",
                                refs_dir, "--target", args.target, "--jsonl", f"{args.tmp}/references.jsonl",
                                "--deadline", deadline(b - 3), *sim_limit], b, records="references")
        elif name == "check":
            b = box(name)
            cmd = [py, f"{HERE}/check.py", "--tool", bin_("nf-package-run"), "--packages", args.checks,
                   "--target", args.target, "--filter", args.filter, "--jsonl", f"{args.tmp}/check.jsonl",
                   "--deadline", deadline(b - 3), *sim_limit]
            if cuda:
                cmd += ["--bench", "5"]
            e = run.step(name, cmd, b, records="check")
        elif name == "gtest":
            b = box(name)
            e = run.step(name, [py, f"{HERE}/device_tests.py", "gtest", "--bundle", args.bundle, "--target",
                                args.target, "--jsonl", f"{args.tmp}/gtest.jsonl", "--deadline", deadline(b - 3)],
                         b, records="gtest")
        elif name == "onnx":
            b = box(name)
            e = run.step(name, [py, f"{HERE}/device_tests.py", "onnx", "--target", args.target, "--jsonl",
                                f"{args.tmp}/onnx.jsonl", "--deadline", deadline(b - 2)], b, records="onnx")
        elif name == "pytest":
            b = box(name)
            e = run.step(name, [py, f"{HERE}/device_tests.py", "pytest", "--target", args.target, "--jsonl",
                                f"{args.tmp}/pytest.jsonl", "--deadline", deadline(b - 2)], b, records="pytest")
        elif name == "nvrtc":
            e = run.step(name, [py, f"{HERE}/nvrtc_costs.py", "--target", args.target, "--jsonl",
                                f"{args.tmp}/nvrtc.jsonl"], box(name), records="nvrtc")
        elif name == "cost":
            # The predicted costs (docs/CUDA.md "Predicted costs") for this
            # GPU, in the log beside what the sweep measures.
            e = run.step(name, [f"{HERE}/gpu_cost.sh", os.path.dirname(bin_("nf-run")), args.target],
                         box(name))
        elif name == "sweep":
            reserve = SANITIZER_RESERVE_S if (cuda and "sanitizers" in steps) else 0
            sweep_box = float(os.environ.get("NF_GPU_BOX_SWEEP", 0)) or (run.left() - reserve - REPORT_RESERVE_S)
            # NF_GPU_SWEEP_PREFIX: a profiler to run the sweep under (for
            # example ncu with a kernel filter and --log-file $OUT/ncu.txt).
            prefix = shlex.split(os.path.expandvars(os.environ.get("NF_GPU_SWEEP_PREFIX", "")))
            cmd = prefix + [py, f"{HERE}/sweep.py", "--jsonl", f"{args.tmp}/sweep.jsonl", "--target", args.target,
                            "--check-records", f"{args.tmp}/check.jsonl"]
            if args.small:
                cmd.append("--small")
            sweep_end = time.time() + sweep_box
            e = None
            for attempt in range(4):
                b = sweep_end - time.time()
                if attempt and b < 30:
                    break
                e = run.step(name if not attempt else f"sweep (resumed, {attempt})",
                             cmd + ["--budget-s", str(max(1, b - 5)), "--deadline", str(sweep_end - 5)]
                             + (["--resume"] if attempt else []), b, records="sweep")
                # 3: the CUDA context was lost; a trailing attempt: the
                # process hung (its watchdog ended it) or died in a
                # measurement. Either way, go on after that case.
                if e.get("exit_status") == 3:
                    failed.append("sweep (a CUDA error lost the context; resumed after that case)")
                elif e.get("status") == "failed" and ended_in_a_measurement(f"{args.tmp}/sweep.jsonl"):
                    failed.append("sweep (hung or died in a measurement; resumed after that case)")
                else:
                    break
        elif name == "sanitizers":
            sanitizer = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
            if not cuda or not os.path.exists(sanitizer):
                why = (f"target {args.target}: compute-sanitizer needs a GPU" if not cuda
                       else f"no compute-sanitizer ({sanitizer})")
                run.say(f"\n=== sanitizers: skipped ({why})")
                run.doc["steps"].append({"step": name, "status": "skipped", "reason": why})
                run.save()
                continue
            b = float(os.environ.get("NF_GPU_BOX_SANITIZERS", 0)) or (run.left() - REPORT_RESERVE_S)
            e = run.step(name, [py, f"{HERE}/check.py", "--tool", bin_("nf-package-run"), "--packages",
                                args.checks, "--target", args.target, "--filter", args.filter,
                                "--sanitizer", sanitizer, "--sanitize-from", f"{args.tmp}/check.jsonl",
                                "--jobs", "6", "--jsonl", f"{args.tmp}/sanitizers.jsonl",
                                "--deadline", deadline(b - 3)], b, records="sanitizers")
        if e is not None and e.get("status") not in ("ok", "skipped"):
            failed.append(name)

    run.stop.set()
    run.save()
    run.say("\n=== report")
    try:
        import report
        for line in report.table(run.doc):
            run.say(line)
        files, notes = report.plots(run.doc, run.stem)
        run.doc["plots"] = [os.path.basename(f) for f in files]
        for note in notes:
            run.say(f"plots: {note}")
        for f in files:
            run.say(f"plot: {f}")
    except Exception as e:  # noqa: BLE001
        import traceback
        run.say(f"report failed: {type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}")
        failed.append("report")
    run.doc["failed_steps"] = failed
    run.doc["seconds"] = round(time.time() - args.started, 1)
    run.save()
    run.say(f"\nresults: {run.stem}.json, {run.stem}.txt; {run.doc['seconds']} s in all"
            + (f"; steps that failed or ran out of time: {', '.join(failed)}" if failed else "; every step ok"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
