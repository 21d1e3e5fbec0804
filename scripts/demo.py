#!/usr/bin/env python3
"""normfuse's main job on the shipped examples, through the Python package.

For each function of examples/*.mlir and each ONNX model of
examples/onnx/*.onnx (imported by normfuse.onnx): raise and fuse it,
compile it both op by op and fused, run both on the same random inputs on
the CPU (and on the GPU when one is usable), and print the kernels before
and after, the median time of each with the speedup, and the largest
difference between the two results (and, for an ONNX model, between the
fused results and ONNX's reference evaluator's). The fused function also
runs on the CUDA kernels: on the GPU, or where there is none once in the
simulator (cuda-sim) at the example's own shapes; the demo prints their
kernel launches and largest difference from the CPU's results. The kernel graphs before and after go to OUT as DOT and, where
Graphviz's `dot` is installed, SVG.

    PYTHONPATH=build/python .venv/bin/python scripts/demo.py [--out DIR] [--runs N]
"""

import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import time

import numpy as np

import normfuse
import normfuse.onnx

ROOT = pathlib.Path(__file__).resolve().parents[1]
# How far fused and op-by-op results may differ, relative to the largest
# result: op by op rounds every intermediate to the storage type, fused
# keeps them in f32.
TOLERANCE = {"f16": 2e-2, "bf16": 8e-2, "f32": 1e-4, "f64": 1e-10}


def kernel_counts(dot):
    """{function: kernels} from a kernel graph's cluster labels."""
    return dict(re.findall(r'label="@([\w.$-]+): (\d+) kernels"', dot))


def fused_kernels(dot):
    """The op lists of the fused kernels in a kernel graph."""
    return [label.replace("\\n", " ") for label in
            re.findall(r'label="nf\.fused\\n([^"]*)"', dot)]


def random_inputs(signature, rng):
    """Uniform(-1, 1) inputs of the signature's types (static shapes)."""
    arrays = []
    for t in signature.inputs:
        dtype = normfuse._NUMPY_DTYPES[t.dtype]
        arrays.append(rng.uniform(-1, 1, t.shape).astype(dtype))
    return arrays


def largest_difference(a_results, b_results):
    """(largest |a - b|, the largest |b|) over every result."""
    diff = scale = 0.0
    for a, b in zip(a_results, b_results):
        a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
        diff = max(diff, float(np.abs(a64 - b64).max(initial=0)))
        scale = max(scale, float(np.abs(b64).max(initial=0)))
    return diff, scale


def runs_text(n):
    return "one run" if n == 1 else f"median of {n}"


def as_tuple(results):
    return results if isinstance(results, tuple) else (results,)


def render(dot_text, out, name, have_dot):
    """Writes OUT/NAME.dot and, with Graphviz, OUT/NAME.svg; the file to
    look at."""
    dot_path, svg_path = out / f"{name}.dot", out / f"{name}.svg"
    dot_path.write_text(dot_text)
    if not have_dot:
        return dot_path
    subprocess.run(["dot", "-Tsvg", str(dot_path), "-o", str(svg_path)],
                   check=True)
    return svg_path


def timed(fn, inputs, runs):
    """(results, median ms, how many runs it is the median of). A call of
    over a second (the TOSA examples op by op) is timed once, by the call
    that gives the results."""
    start = time.perf_counter()
    results = as_tuple(fn(*inputs))
    once_ms = (time.perf_counter() - start) * 1e3
    if once_ms > 1000:
        return results, once_ms, 1
    return results, fn.bench(*inputs, runs=runs).median_ms, runs


def gpu_target():
    """("cuda", None) where a GPU is usable, else (None, the reason)."""
    probe = "func.func @p(%x: tensor<4xf32>) -> tensor<4xf32> {\n" \
            "  %0 = nf.relu %x : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n"
    try:
        normfuse.compile(probe, "p", target="cuda")
        return "cuda", None
    except normfuse.CompileError as error:
        return None, str(error).splitlines()[0]


def onnx_reference(path, inputs):
    """The ONNX model's outputs for `inputs` by ONNX's reference evaluator."""
    from onnx.reference import ReferenceEvaluator  # noqa: PLC0415

    model = ReferenceEvaluator(str(path))
    return tuple(model.run(None, dict(zip(model.input_names, inputs))))


def run_example(path, out, runs, targets, simulate, have_dot, rng):
    """Prints the example's report; the number of results where fused and
    op by op (or an ONNX model's reference) disagree."""
    disagreements = 0
    is_onnx = path.suffix == ".onnx"
    source = normfuse.onnx.import_model(path) if is_onnx else path.read_text()
    before = normfuse.kernel_graph(source)
    after = normfuse.kernel_graph(source, fuse=True)
    name = path.stem
    graphs = (render(before, out, f"{name}.before", have_dot),
              render(after, out, f"{name}.after", have_dot))
    (out / f"{name}.fused.mlir").write_text(normfuse.fuse(source))
    counts_before, counts_after = kernel_counts(before), kernel_counts(after)
    for function in counts_before:
        print(f"\n=== {path.relative_to(ROOT)} @{function}")
        print(f"kernels: {counts_before[function]} op by op, "
              f"{counts_after[function]} fused")
        for kernel in fused_kernels(after):
            print(f"  fused kernel: {kernel}")
        cpu_results, inputs = None, None
        for target in targets:
            start = time.perf_counter()
            plain = normfuse.compile(source, function, fuse=False, target=target)
            fused = normfuse.compile(source, function, fuse=True, target=target)
            compile_s = time.perf_counter() - start
            if inputs is None:
                inputs = random_inputs(fused.signature, rng)
            plain_results, t_plain, n_plain = timed(plain, inputs, runs)
            fused_results, t_fused, n_fused = timed(fused, inputs, runs)
            diff, scale = largest_difference(fused_results, plain_results)
            print(f"{target}: op by op {t_plain:.2f} ms ({runs_text(n_plain)}), "
                  f"fused {t_fused:.2f} ms ({runs_text(n_fused)}): "
                  f"{t_plain / t_fused:.2f}x; compiled both in {compile_s:.1f} s")
            dtypes = sorted({t.dtype for t in fused.signature.outputs})
            tolerance = max(TOLERANCE[d] for d in dtypes) * max(1.0, scale)
            print(f"  largest difference fused vs op by op: {diff:.3g} "
                  f"(largest result {scale:.3g}; {', '.join(dtypes)} results)")
            if not diff <= tolerance:
                print(f"  DISAGREE: more than {tolerance:.3g}")
                disagreements += 1
            if target == "cpu":
                cpu_results = fused_results
            else:
                disagreements += compare_with_cpu(fused, fused_results,
                                                  cpu_results, tolerance)
            if is_onnx:
                diff, scale = largest_difference(fused_results,
                                                 onnx_reference(path, inputs))
                print(f"  largest difference fused vs ONNX's reference evaluator: "
                      f"{diff:.3g}")
                if not diff <= tolerance:
                    print(f"  DISAGREE: more than {tolerance:.3g}")
                    disagreements += 1
        if simulate:
            disagreements += run_in_simulator(source, function, inputs,
                                              cpu_results)
    print(f"  graphs: {graphs[0]} {graphs[1]}")
    return disagreements


def compare_with_cpu(fused, results, cpu_results, tolerance):
    """Prints the CUDA kernels' launches and their largest difference from
    the CPU's fused results; 1 where they disagree."""
    diff, scale = largest_difference(results, cpu_results)
    print(f"  fused on the CUDA kernels: {fused.launches} launches; largest "
          f"difference from the CPU {diff:.3g} (largest result {scale:.3g})")
    if not diff <= tolerance:
        print(f"  DISAGREE: more than {tolerance:.3g}")
        return 1
    return 0


def run_in_simulator(source, function, inputs, cpu_results):
    """Where no GPU is: the fused function's CUDA kernels once in the
    simulator (at the example's own shapes; its times mean nothing), against
    the CPU on the same inputs; 1 where they disagree."""
    start = time.perf_counter()
    fused = normfuse.compile(source, function, fuse=True, target="cuda-sim")
    results = as_tuple(fused(*inputs))
    dtypes = sorted({t.dtype for t in fused.signature.outputs})
    _, scale = largest_difference(results, cpu_results)
    tolerance = max(TOLERANCE[d] for d in dtypes) * max(1.0, scale)
    print(f"cuda-sim (no GPU here: the CUDA kernels in the simulator, "
          f"{time.perf_counter() - start:.1f} s):")
    return compare_with_cpu(fused, results, cpu_results, tolerance)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "build" / "demo")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    have_dot = shutil.which("dot") is not None
    targets = ["cpu"]
    gpu, why_not = gpu_target()
    if gpu:
        targets.append(gpu)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    disagreements = 0
    examples = sorted((ROOT / "examples").glob("*.mlir")) + \
        sorted((ROOT / "examples" / "onnx").glob("*.onnx"))
    for path in examples:
        disagreements += run_example(path, args.out, args.runs, targets,
                                     not gpu, have_dot, rng)
    ran_on = targets if gpu else targets + ["cuda-sim (fused)"]
    print(f"\ndemo: every example raised, fused, compiled, run and compared on "
          f"{' and '.join(ran_on)} in {time.perf_counter() - start:.1f} s")
    if why_not:
        print(f"demo: no GPU run ({why_not}); the fused CUDA kernels ran in "
              f"the simulator instead")
    if not have_dot:
        print("demo: Graphviz's dot is not installed: graphs written as DOT only")
    if disagreements:
        print(f"demo: {disagreements} results disagree", file=sys.stderr)
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
