#!/usr/bin/env python3
"""The GPU run's test steps, without lit, FileCheck or pytest (none of them
is on the GPU machine):

    device_tests.py lit    --bundle DIR --references DIR [--target cuda]
    device_tests.py gtest  --bundle DIR [--target cuda] [--deadline T]
    device_tests.py onnx   [--target cuda]
    device_tests.py pytest

  lit    test/Tools/nf-run/cuda-gpu.test and
         test/Tools/nf-package-run/cuda-gpu.test, their RUN lines in Python
         (the same npy_tool.py checks, the same patterns as the CHECK
         lines); the packages those tests make with nf-package come from
         make_references.py (no nf-package on the GPU machine).
  gtest  the bundle's GoogleTest binaries on the device: NFRuntimeTests
         (driver, NVRTC, kernel cache, packages: all of it),
         NFJITTests filtered to the CUDA target's tests (DTypeCoverage
         cases named *_cuda: DTypeCoverageOnGPUTest, instantiated by
         NF_TEST_GPU=1, in 4 shards at once; the device-buffer and stream
         tests), and
         NFNVRTCTests (NVRTC 13 compiles every kernel, resource report,
         SASS) where the bundle has it; NFCUDATests runs kernels in the
         simulator (CI's job) and is not run. NF_GPU_GTEST_FILTER_<BINARY>
         replaces a filter. A filter that matches nothing is reported as
         such, not as a pass.
  onnx   ONNX's BatchNormalization training-mode node tests (the cases of
         python/tests/test_onnx_conformance.py) through the Python package
         on the target.
  pytest python/tests/test_cuda_devices.py, the package on PyTorch CUDA
         tensors and CuPy arrays (it skips itself without a GPU and
         PyTorch: recorded as skipped, not passed).

With --jsonl each check's record is appended as it ends. Exit status 1 if
any check failed.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTEST_FILES = ("test_cuda_devices.py",)
NPY_TOOL = os.path.join(ROOT, "test/Tools/nf-run/Inputs/npy_tool.py")
LN_MLIR = os.path.join(ROOT, "test/Tools/nf-run/Inputs/layer_norm.mlir")

# The CUDA tests of each binary: in NFJITTests, DTypeCoverageOnGPUTest
# (every op and dtype on the cuda target, `*_cuda`, instantiated by
# NF_TEST_GPU) and the device-buffer and stream tests.
# NFCUDATests runs the CUDA kernels in the simulator, on the CPU: CI runs
# it; the device has nothing to add to it (None: not run, said so). The
# simulator compiles its kernels with clang++-19, which the device lacks, so
# NFJITTests' simulator tests stay here too (*Simulator*).
GTEST_FILTERS = {
    "NFRuntimeTests": "*",
    "NFJITTests": ("*DTypeCoverage*_cuda:*Device*:*CudaStream*:*Streams*:*CudaTarget*:*CUDATarget*:"
                   "*OnDevice*:*OnTheGpu*:*OnTheGPU*-StreamingStoresTest.*:*Simulator*"),
    "NFCUDATests": None,
    "NFNVRTCTests": "*",
}
# Processes a binary's tests are split across (GTEST_TOTAL_SHARDS) on the GPU.
SHARDS = {"NFJITTests": 8}
GTEST_FILTERS_SIM = {
    "NFRuntimeTests": "*",
    "NFJITTests": "*DeviceMemory*:*CudaStream*",
    "NFCUDATests": None,
}


class Step:
    def __init__(self, jsonl):
        self.out = open(jsonl, "a") if jsonl else None
        self.failed = 0

    def record(self, rec):
        if self.out:
            self.out.write(json.dumps(rec) + "\n")
            self.out.flush()
        if rec.get("ok") is False:
            self.failed += 1
        status = "ok  " if rec.get("ok") else ("skip" if rec.get("ok") is None else "FAIL")
        print(f"{status} {rec['check']}" + (f": {rec['detail']}" if rec.get("detail") else ""), flush=True)
        for message in rec.get("failure_messages", []):
            print("     " + message.replace("\n", "\n     "), flush=True)


def sh(cmd, env=None, timeout=120):
    """(returncode, stdout, stderr) of a command."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout} s"


def npy_tool(*args):
    return sh([sys.executable, NPY_TOOL, *args])


def lit(args, step):
    """cuda-gpu.test of nf-run and of nf-package-run."""
    nf_run = os.path.join(args.bundle, "bin", "nf-run")
    pkg_run = os.path.join(args.bundle, "bin", "nf-package-run")
    sim = args.target != "cuda"
    with tempfile.TemporaryDirectory() as t:
        env = dict(os.environ, NF_KERNEL_CACHE_DIR=os.path.join(t, "cache"))
        x = os.path.join(t, "x.npy")
        npy_tool("gauss", x, "<f4", "4,13", "1")

        # nf-run/cuda-gpu.test
        rc, out, err = sh([nf_run, LN_MLIR, "--entry", "ln", "--target", args.target, "--input", x,
                           "--output", f"{t}/y.npy", "--output", f"{t}/mean.npy"], env)
        ok = rc == 0
        detail = err.strip()[-400:]
        if ok:
            rc2, out2, _ = npy_tool("check-layer-norm", x, f"{t}/y.npy", f"{t}/mean.npy", "1e-5")
            ok = re.search(r"max abs error .*: ok", out2) is not None
            detail = out2.strip()
        step.record({"check": "nf-run/cuda-gpu.test: ln on the target agrees with float64", "ok": ok,
                     "detail": detail})
        if sim:
            step.record({"check": "nf-run/cuda-gpu.test: the kernel cache has a [0-9a-f]+.bin entry",
                         "ok": None, "detail": "skipped on cuda-sim (no NVRTC, no kernel cache)"})
        else:
            cache = os.path.join(t, "cache")
            names = os.listdir(cache) if os.path.isdir(cache) else []
            ok = any(re.fullmatch(r"[0-9a-f]+\.bin", n) for n in names)
            step.record({"check": "nf-run/cuda-gpu.test: the kernel cache has a [0-9a-f]+.bin entry",
                         "ok": ok, "detail": " ".join(names[:4]) or "empty"})
        dy, c = f"{t}/dy.npy", f"{t}/c.npy"
        npy_tool("gauss", dy, "<f4", "2,3,4,4", "4")
        npy_tool("gauss", c, "<f4", "3", "5")
        common = ["--entry", "bn_grad", "--input", dy, "--input", dy, "--input", c, "--input", c]
        rc1, _, err1 = sh([nf_run, LN_MLIR, *common, "--target", args.target, "--output", f"{t}/dx-gpu.npy"], env)
        rc2, _, err2 = sh([nf_run, LN_MLIR, *common, "--output", f"{t}/dx-cpu.npy"], env)
        ok, detail = rc1 == 0 and rc2 == 0, (err1 + err2).strip()[-400:]
        if ok:
            _, out3, _ = npy_tool("close", f"{t}/dx-gpu.npy", f"{t}/dx-cpu.npy", "1e-5")
            ok = re.search(r"max abs difference .*: ok", out3) is not None
            detail = out3.strip()
        step.record({"check": "nf-run/cuda-gpu.test: bn_grad on the target gives the CPU's numbers", "ok": ok,
                     "detail": detail})

        # nf-package-run/cuda-gpu.test
        packages = os.path.join(args.references, "packages")
        for folder, bench, pattern, what in (
                ("ln-source", "5", r"@ln on .+ \(CUDA source compiled by NVRTC for (sm|compute)_[0-9]+\)",
                 "from CUDA source through NVRTC"),
                ("ln-ptx-compute_75", "1", r"@ln on .+ \(PTX compute_75 \(compiled by the driver\)\)",
                 "from compute_75 PTX through the driver")):
            package = os.path.join(packages, folder)
            name = f"nf-package-run/cuda-gpu.test: a package runs {what}"
            if not os.path.isdir(package):
                step.record({"check": name, "ok": False, "detail": f"no package {package} (make_references.py)"})
                continue
            cmd = [pkg_run, package, "--entry", "ln", "--input", x, "--output", f"{t}/py.npy",
                   "--output", f"{t}/pmean.npy", "--target", args.target]
            if sim:
                if folder != "ln-source":
                    step.record({"check": name, "ok": None, "detail": "skipped on cuda-sim (PTX needs a driver)"})
                    continue
            else:
                cmd += ["--bench", bench]
            rc, out, err = sh(cmd, env)
            ok, detail = rc == 0, (err.strip() or out.strip())[-400:] or f"on {args.target}"
            if ok and not sim:
                ok = re.search(pattern, out) is not None
                detail = "stdout lacks " + pattern if not ok else out.strip().splitlines()[0]
                if ok and folder == "ln-source":
                    line = next((l for l in out.splitlines() if l.startswith("{")), "")
                    ok = re.search(r'\{"entry": "ln", "target": "cuda", "runs": 5, .*"fraction_of_copy": [0-9.]+\}',
                                   line) is not None
                    detail += "; " + (line if ok else "no JSON line with fraction_of_copy")
            if ok:
                _, out2, _ = npy_tool("check-layer-norm", x, f"{t}/py.npy", f"{t}/pmean.npy", "1e-5")
                ok = re.search(r"max abs error .*: ok", out2) is not None
                detail += "; " + out2.strip()
            step.record({"check": name, "ok": ok, "detail": detail})


def gtest(args, step):
    filters = GTEST_FILTERS if args.target == "cuda" else GTEST_FILTERS_SIM
    tests = os.path.join(args.bundle, "tests")
    for binary, default in filters.items():
        path = os.path.join(tests, binary)
        name = f"gtest {binary}"
        flt = os.environ.get(f"NF_GPU_GTEST_FILTER_{binary}", default)
        if flt is None:
            step.record({"check": name, "ok": None,
                         "detail": "not run: its tests run the CUDA kernels in the simulator (CI runs them)"})
            continue
        if not os.path.exists(path):
            if binary == "NFNVRTCTests":
                step.record({"check": name, "ok": None, "detail": "not in the bundle"})
            else:
                step.record({"check": name, "ok": False, "detail": f"not in the bundle ({path})"})
            continue
        left = args.deadline - time.time()
        if left < 10:
            step.record({"check": name, "ok": None, "detail": "skipped: the time box ran out"})
            continue
        # NF_TEST_GPU instantiates DTypeCoverageOnGPUTest (every op and dtype
        # on the cuda target); its 240 cases run in shards at once.
        env = dict(os.environ, **({"NF_TEST_GPU": "1"} if args.target == "cuda" else {}))
        shards = SHARDS.get(binary, 1) if args.target == "cuda" else 1
        counts = {"tests": 0, "failures": 0, "disabled": 0, "skipped": 0}
        failed_names, messages, rc, out, err = [], [], 0, "", ""
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as t:
            procs = []
            for i in range(shards):
                shard_env = dict(env, GTEST_TOTAL_SHARDS=str(shards), GTEST_SHARD_INDEX=str(i)) if shards > 1 else env
                report = os.path.join(t, f"report{i}.json")
                log = open(os.path.join(t, f"log{i}.txt"), "w+")
                procs.append((subprocess.Popen([path, f"--gtest_filter={flt}", "--gtest_brief=1",
                                                f"--gtest_output=json:{report}"], stdout=log,
                                               stderr=subprocess.STDOUT, env=shard_env), report, log))
            for proc, report, log in procs:
                try:
                    code = proc.wait(timeout=max(5, args.deadline - time.time() - 3))
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                    code = 124
                rc = rc or code
                log.seek(0)
                text = log.read()
                out += text[-600:]
                if os.path.exists(report):
                    data = json.load(open(report))
                    counts["tests"] += data.get("tests", 0)
                    counts["failures"] += data.get("failures", 0)
                    counts["disabled"] += data.get("disabled", 0)
                    for suite in data.get("testsuites", []):
                        for case in suite.get("testsuite", []):
                            if case.get("result") == "SKIPPED":
                                counts["skipped"] += 1
                            if case.get("failures"):
                                failed_names.append(f"{suite['name']}.{case['name']}")
                                # GoogleTest's own words (file:line and the
                                # expectation), so that a failure on the GPU
                                # can be read without running it again.
                                messages.append(f"{suite['name']}.{case['name']}: " + " | ".join(
                                    f.get("failure", "")[:600] for f in case["failures"][:3]))
            seconds = round(time.perf_counter() - start, 1)
        rec = {"check": name, "filter": flt, "seconds": seconds, **counts, "failed_tests": failed_names[:50],
               "failure_messages": messages[:20]}
        if rc == 124:
            rec.update(ok=False, detail=f"timed out after {seconds} s")
        elif counts["tests"] == 0 and rc == 0:
            rec.update(ok=None, detail=f"the filter {flt} matched no test")
        else:
            rec.update(ok=rc == 0 and counts["failures"] == 0,
                       detail=f"{counts['tests']} tests, {counts['failures']} failed, "
                              f"{counts['skipped']} skipped, {seconds} s"
                              + (f"; failed: {', '.join(failed_names[:10])}" if failed_names else "")
                              + ("" if rc == 0 or failed_names else f"; exit {rc}: {(err or out)[-300:]}"))
        step.record(rec)


def run_pytest(args, step, files, check, select=None, env=None):
    """Runs pytest on python/tests/FILES (tests whose id matches `select`,
    a -k expression) and records one check: passed, failed, or skipped
    (a module that skips itself: no GPU, no PyTorch)."""
    tests = [os.path.join(ROOT, "python/tests", t) for t in files]
    import importlib.util
    if importlib.util.find_spec("pytest") is None:
        step.record({"check": check, "ok": False, "detail": "pytest is not importable (carry its wheel)"})
        return
    with tempfile.TemporaryDirectory() as t:
        xml = os.path.join(t, "junit.xml")
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
                f"--junitxml={xml}", *tests] + (["-k", select] if select else [])
        rc, out, err = sh(argv, timeout=max(5, args.deadline - time.time() - 3),
                          env={**os.environ, **(env or {})})
        summary = next((l for l in reversed(out.splitlines()) if re.search(r"\d+ (passed|failed|skipped|error)", l)),
                       out.strip().splitlines()[-1] if out.strip() else err.strip()[-300:])
        failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", out, re.M)
        # A module that skips itself (no GPU, no PyTorch) collects no test:
        # exit status 5.
        skipped_all = rc in (0, 5) and "passed" not in summary and "failed" not in summary and "skipped" in summary
        reason = re.findall(r"SKIPPED \[\d+\] [^:]+:\d*:? ?(.*)", out)
        step.record({"check": check,
                     "ok": None if skipped_all else rc == 0,
                     "detail": summary.strip("= ") + (f"; {reason[0]}" if skipped_all and reason else "")
                     + (f"; failed: {', '.join(failed[:10])}" if failed else ""),
                     "exit_status": rc, "failed_tests": failed[:50]})


def onnx_step(args, step):
    """ONNX's BatchNormalization training-mode node tests
    (python/tests/test_onnx_conformance.py) on the target: NF_TEST_GPU adds
    the cuda target to its targets."""
    select = "cuda_sim" if args.target == "cuda-sim" else "cuda and not cuda_sim"
    run_pytest(args, step, ["test_onnx_conformance.py"],
               f"onnx BatchNormalization (test_onnx_conformance.py) on {args.target}",
               select=select, env={"NF_TEST_GPU": "1"} if args.target == "cuda" else None)


def pytest_step(args, step):
    """python/tests/test_cuda_devices.py (the Python package on PyTorch CUDA
    tensors and CuPy arrays; skipped by itself without a GPU and PyTorch)."""
    run_pytest(args, step, PYTEST_FILES, f"pytest {' '.join(PYTEST_FILES)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("lit", "gtest", "onnx", "pytest"))
    parser.add_argument("--bundle", default="")
    parser.add_argument("--references", default=os.path.join(ROOT, "build/gpu-check/references"))
    parser.add_argument("--target", default="cuda")
    parser.add_argument("--jsonl", default="")
    parser.add_argument("--deadline", type=float, default=0)
    args = parser.parse_args()
    args.deadline = args.deadline or time.time() + 3600
    step = Step(args.jsonl)
    {"lit": lit, "gtest": gtest, "onnx": onnx_step, "pytest": pytest_step}[args.what](args, step)
    return 1 if step.failed else 0


if __name__ == "__main__":
    sys.exit(main())
