#!/usr/bin/env python3
"""ONNX Runtime's CPU norms against the copy ceiling, as a peer of
nf-bench-cpu-norms (bench/cpu/norm_bench.cpp).

    ort_norms.py [--threads T] [--runs R] [--mib M] [--json FILE]
                 [--cpp-json FILE] [--only OP[,OP...]]

For each case, one ONNX model with one norm node is built in memory with the
`onnx` package and run by onnxruntime's CPUExecutionProvider
(intra_op_num_threads=T, inter_op_num_threads=1, sequential execution,
ORT_ENABLE_ALL graph optimizations). Inputs and outputs are bound once with
io_binding to preallocated arrays, so a timed run is the kernel, not
allocation or copies in and out of Python. The kernel and a copy of the same
bytes are timed alternately (R runs each after 2 warm-ups; medians), as in
norm_bench.cpp, so both see the same machine conditions.

Cases: the C++ benchmark's LayerNorm / RMSNorm cases (rows x cols, norm over
the last axis, same shapes and dtypes: f32 32768x1024 and 8192x4096, bf16
and f16 65536x1024, 128 MiB inputs), plus GroupNorm (32 groups), BatchNorm
(inference) and InstanceNorm on NCHW inputs N x 320 x 128 x 128 with N the
least that makes the input at least M MiB (f32: N=7, 140 MiB; f16: N=13,
130 MiB). ONNX defines these three ops on NCHW (channels-first) only; ORT's
NHWC GroupNorm (com.microsoft.GroupNorm) has no CPU kernel.

Ops and opsets (ai.onnx domain):
  layer_norm     LayerNormalization-17, axis=-1, output Y only (no Mean /
                 InvStdDev). Scale and bias have X's type (the opset binds
                 them to the same T), so the f16 case has f16 parameters
                 where the C++ case has f32 ones.
  rms_norm       RMSNormalization-23, axis=-1 (the installed ORT must know
                 opset 23; otherwise the case reports "no kernel").
  group_norm     GroupNormalization-21 (per-channel scale and bias; opset 18
                 had per-group ones and was deprecated for it).
  batch_norm     BatchNormalization-15, inference (running mean / var inputs).
  instance_norm  InstanceNormalization-22.
eps is 1e-5 throughout.

Found with onnxruntime 1.31.1 (CPUExecutionProvider, x86-64): LayerNorm
has f32, f16 and bf16 kernels (bf16 runs at a few percent of copy);
RMSNormalization-23 has f32 and f16 kernels, none for bf16. There is no
GroupNormalization kernel at opset 18 or 21: ORT accepts both and inlines
the ONNX function body (about 30 nodes: Reshape, ReduceMean, Sub, Mul, Sqrt,
Div, Add, Cast), which is what the group_norm rows time. BatchNorm and
InstanceNorm have f32 kernels only: for f16 ORT inserts Casts to f32 around
them; for bf16 the session fails.

What ORT actually ran is recorded per case ("ort_graph", "kernel"): the
optimized graph of the same model on a small shape is saved and its nodes
listed. "native" is a single kernel; "inserted casts" means ORT had no kernel
for that dtype and wrapped an f32 kernel in Cast nodes (extra passes over
memory); "decomposed" means ORT has no kernel for the op and inlined its
ONNX function body (many nodes, full-size intermediates); "no kernel" means
the session could not be created or run, with ORT's message.

Bytes per case are what the graph must move: the input read, the output
written, plus parameters (scale, bias; mean / var for BatchNorm). (The C++
kernels also write per-row statistics: +0.05-0.1% bytes, not counted here.)

The copy ceiling: numpy.copyto of bytes/2 into bytes/2 (read + write =
bytes), split into T contiguous slices run on a pool of T Python threads;
copyto releases the GIL around its memcpy, so this is the same parallel
memcpy that norm_bench.cpp's nfbench::parallelCopy does with OpenMP. The
alternatives inside ORT were rejected: Identity may be elided or alias its
input, a same-type Cast is a plain single-threaded copy in ORT (not T
threads), and Add(x, 0) does arithmetic and is not a copy. Given
--cpp-json (the C++ benchmark's JSON from the same machine), each case also
records the C++ copy figure for the same case, the ratio of the two copy
figures (how far apart the two ceilings are) and the nf kernel's figures.

ORT's thread pool spins for a while after each run by default; on a
machine with as few cores as threads those spinning threads would take cores
from the copy timed right after it, so spinning is turned off
(session.intra_op.allow_spinning=0; --spin turns it back on).

Before timing, every case is checked against a float64 numpy reference on a
small shape (relative L2 error); a case that fails is not timed. After
timing, the first row (LayerNorm / RMSNorm) or first sample (NCHW ops) of the
timed output, poisoned with NaN beforehand, is checked again.
"""

import argparse
import datetime
import json
import math
import os
import platform
import socket
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

try:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper
except ImportError as e:  # pragma: no cover - reported to the caller
    sys.exit(f"ort_norms.py: needs onnx and onnxruntime ({e}); "
             "pip install onnxruntime onnx numpy")

EPS = 1e-5
GROUPS = 32
CHANNELS, HEIGHT, WIDTH = 320, 128, 128

ONNX_DTYPE = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16,
              "bf16": TensorProto.BFLOAT16}
ESIZE = {"f32": 4, "f16": 2, "bf16": 2}
# Relative L2 error allowed against float64 (as the JIT unit tests allow).
TOLERANCE = {"f32": 1e-5, "f16": 1e-3, "bf16": 8e-3}

OPS = {
    # op: (ONNX op, opset, layout)
    "layer_norm": ("LayerNormalization", 17, "rows x cols, last axis"),
    "rms_norm": ("RMSNormalization", 23, "rows x cols, last axis"),
    "group_norm": ("GroupNormalization", 21, "NCHW"),
    "batch_norm": ("BatchNormalization", 15, "NCHW"),
    "instance_norm": ("InstanceNormalization", 22, "NCHW"),
}


# --- dtypes: bf16 lives in uint16 arrays --------------------------------------

def to_dtype(a, dtype):
    """float array -> array holding `dtype` (bf16 as uint16 bits, rounded to
    nearest even)."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "f32":
        return a
    if dtype == "f16":
        return a.astype(np.float16)
    u = a.view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def to_f64(a, dtype):
    if dtype == "bf16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def poison(a, dtype):
    a.fill(0x7FC0 if dtype == "bf16" else np.nan)


def empty(shape, dtype):
    return np.empty(shape, {"f32": np.float32, "f16": np.float16,
                            "bf16": np.uint16}[dtype])


def ortvalue(a, dtype):
    if dtype == "bf16":
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
            a, TensorProto.BFLOAT16)
    return ort.OrtValue.ortvalue_from_numpy(a)


# --- models and references ----------------------------------------------------

def param_shapes(op, shape):
    """Names and shapes of the parameter inputs after x."""
    if op in ("layer_norm", "rms_norm"):
        names = ["scale", "bias"] if op == "layer_norm" else ["scale"]
        return [(n, [shape[-1]]) for n in names]
    c = [shape[1]]
    if op == "batch_norm":
        return [("scale", c), ("bias", c), ("mean", c), ("var", c)]
    return [("scale", c), ("bias", c)]


def build_model(op, dtype, shape):
    onnx_op, opset, _ = OPS[op]
    t = ONNX_DTYPE[dtype]
    params = param_shapes(op, shape)
    inputs = [helper.make_tensor_value_info("x", t, shape)]
    inputs += [helper.make_tensor_value_info(n, t, s) for n, s in params]
    attrs = {"epsilon": EPS}
    if op in ("layer_norm", "rms_norm"):
        attrs["axis"] = -1
    if op == "group_norm":
        attrs["num_groups"] = GROUPS
    node = helper.make_node(onnx_op, ["x"] + [n for n, _ in params], ["y"],
                            **attrs)
    graph = helper.make_graph(
        [node], op, inputs, [helper.make_tensor_value_info("y", t, shape)])
    opsets = [helper.make_opsetid("", opset)]
    # The least IR version for the opset, not the onnx package's newest
    # (which an older onnxruntime may refuse).
    return helper.make_model(graph, opset_imports=opsets,
                             ir_version=helper.find_min_ir_version_for(opsets))


def make_params(op, shape, rng):
    """float32 parameters (random, so scale and bias are exercised)."""
    out = {}
    for name, s in param_shapes(op, shape):
        if name == "scale":
            out[name] = rng.uniform(0.5, 1.5, s).astype(np.float32)
        elif name == "var":
            out[name] = rng.uniform(0.5, 2.0, s).astype(np.float32)
        else:
            out[name] = rng.standard_normal(s, dtype=np.float32)
    return out


def reference(op, x, p):
    """float64 reference; x and p are float64."""
    if op == "layer_norm":
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + EPS) * p["scale"] + p["bias"]
    if op == "rms_norm":
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS) * p["scale"]
    n, c = x.shape[:2]
    cshape = (1, c) + (1,) * (x.ndim - 2)
    scale = p["scale"].reshape(cshape)
    bias = p["bias"].reshape(cshape)
    if op == "batch_norm":
        return ((x - p["mean"].reshape(cshape)) /
                np.sqrt(p["var"].reshape(cshape) + EPS) * scale + bias)
    g = GROUPS if op == "group_norm" else c
    xg = x.reshape(n, g, -1)
    m = xg.mean(-1, keepdims=True)
    v = ((xg - m) ** 2).mean(-1, keepdims=True)
    return ((xg - m) / np.sqrt(v + EPS)).reshape(x.shape) * scale + bias


def rel_l2(y, ref):
    return float(np.linalg.norm(y - ref) / np.linalg.norm(ref))


# --- sessions -----------------------------------------------------------------

def session_options(threads, spin, optimized_path=None):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.add_session_config_entry("session.intra_op.allow_spinning",
                                "1" if spin else "0")
    so.log_severity_level = 3
    if optimized_path:
        so.optimized_model_filepath = optimized_path
    return so


def make_session(model, threads, spin, optimized_path=None):
    return ort.InferenceSession(model.SerializeToString(),
                                session_options(threads, spin, optimized_path),
                                providers=["CPUExecutionProvider"])


def describe_graph(op, path):
    """(kernel kind, node list) of the optimized graph ORT saved."""
    nodes = [n.op_type for n in onnx.load(path).graph.node]
    onnx_op = OPS[op][0]
    if nodes == [onnx_op]:
        kind = "native"
    elif onnx_op in nodes and set(nodes) <= {onnx_op, "Cast"}:
        kind = "inserted casts"
    elif onnx_op not in nodes:
        kind = "decomposed"
    else:
        kind = "other"
    if len(nodes) > 8:
        shown = f"{len(nodes)} nodes: " + " ".join(sorted(set(nodes)))
    else:
        shown = " -> ".join(nodes)
    return kind, shown


def bound_run(sess, x, params, y, dtype):
    """An io_binding with x, params and y bound; returns (binding, values)
    (the OrtValues must outlive the binding)."""
    io = sess.io_binding()
    vals = [ortvalue(x, dtype)]
    io.bind_ortvalue_input("x", vals[-1])
    for name, a in params.items():
        vals.append(ortvalue(a, dtype))
        io.bind_ortvalue_input(name, vals[-1])
    vals.append(ortvalue(y, dtype))
    io.bind_ortvalue_output("y", vals[-1])
    return io, vals


def small_shape(op, cols):
    return [16, cols] if op in ("layer_norm", "rms_norm") else [2, 64, 9, 7]


def check_small(op, dtype, cols, threads, spin, rng, tmpdir):
    """Runs the op on a small shape against float64. Returns (error, kind,
    graph); raises what ORT raises when it has no kernel."""
    shape = small_shape(op, cols)
    path = os.path.join(tmpdir, f"{op}-{dtype}.onnx")
    sess = make_session(build_model(op, dtype, shape), threads, spin, path)
    kind, graph = describe_graph(op, path)
    x = to_dtype(rng.standard_normal(shape, dtype=np.float32) * 2 + 0.5, dtype)
    p = {k: to_dtype(v, dtype) for k, v in make_params(op, shape, rng).items()}
    y = empty(shape, dtype)
    poison(y, dtype)
    io, _vals = bound_run(sess, x, p, y, dtype)
    sess.run_with_iobinding(io)
    ref = reference(op, to_f64(x, dtype),
                    {k: to_f64(v, dtype) for k, v in p.items()})
    return rel_l2(to_f64(y, dtype), ref), kind, graph


# --- timing -------------------------------------------------------------------

class ParallelCopy:
    """memcpy of `nbytes` on `threads` threads, contiguous slices."""

    def __init__(self, nbytes, threads, pool):
        self.src = np.ones(nbytes, np.uint8)
        self.dst = np.zeros(nbytes, np.uint8)
        self.pool = pool
        self.slices = [slice(i * nbytes // threads, (i + 1) * nbytes // threads)
                       for i in range(threads)]

    def _one(self, s):
        np.copyto(self.dst[s], self.src[s])

    def __call__(self):
        for f in [self.pool.submit(self._one, s) for s in self.slices]:
            f.result()


def time_pair(runs, a, b):
    """Times a and b alternately (runs each, after 2 warm-ups); medians."""
    def once(fn):
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t
    for _ in range(2):
        a()
        b()
    ta, tb = [], []
    for _ in range(runs):
        ta.append(once(a))
        tb.append(once(b))
    return float(np.median(ta)), float(np.median(tb))


# --- cases --------------------------------------------------------------------

def cases(mib):
    out = []
    for cols in (1024, 4096):
        rows = mib * (1 << 20) // (4 * cols)
        out += [("layer_norm", "f32", [rows, cols]),
                ("rms_norm", "f32", [rows, cols])]
    for d in ("bf16", "f16"):
        rows = mib * (1 << 20) // (2 * 1024)
        out += [("layer_norm", d, [rows, 1024]), ("rms_norm", d, [rows, 1024])]
    for op in ("group_norm", "batch_norm", "instance_norm"):
        for d in ("f32", "f16", "bf16"):
            per_sample = CHANNELS * HEIGHT * WIDTH * ESIZE[d]
            n = math.ceil(mib * (1 << 20) / per_sample)
            out.append((op, d, [n, CHANNELS, HEIGHT, WIDTH]))
    return out


def cpp_results(path):
    if not path:
        return {}, None
    with open(path) as f:
        js = json.load(f)
    return ({(r["op"], r["dtype"], r["rows"], r["cols"]): r
             for r in js["results"] if "rows" in r}, js)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run_case(op, dtype, shape, args, pool, rng, tmpdir, cpp):
    onnx_op, opset, layout = OPS[op]
    r = {"op": op, "onnx_op": f"{onnx_op}-{opset}", "layout": layout,
         "dtype": dtype, "shape": shape, "kernel": None, "ort_graph": None,
         "small_check_rel_l2": None, "timed_check_rel_l2": None,
         "bytes": None, "median_ms": None, "copy_median_ms": None,
         "gbps": None, "copy_gbps": None, "fraction_of_copy": None,
         "error": None}
    try:
        err, r["kernel"], r["ort_graph"] = check_small(
            op, dtype, shape[-1], args.threads, args.spin, rng, tmpdir)
    except Exception as e:  # ORT reports a missing kernel by raising
        msg = str(e).strip().splitlines()[0][:300]
        r["kernel"] = "no kernel"
        if f"for {onnx_op}(" not in msg and "NOT_IMPLEMENTED" in msg:
            # No kernel for the op itself: ORT inlined its ONNX function
            # body, and one of those ops has no kernel for the dtype.
            msg = (f"no {onnx_op} kernel for {dtype}; ORT inlined its "
                   f"function body, which failed: {msg}")
        r["error"] = msg
        return r
    r["small_check_rel_l2"] = err
    if not err <= TOLERANCE[dtype]:
        r["error"] = (f"small-shape check failed: rel L2 {err:.2e} > "
                      f"{TOLERANCE[dtype]:.0e}; not timed")
        return r

    sess = make_session(build_model(op, dtype, shape), args.threads, args.spin)
    x = to_dtype(rng.standard_normal(shape, dtype=np.float32), dtype)
    p = {k: to_dtype(v, dtype) for k, v in make_params(op, shape, rng).items()}
    y = empty(shape, dtype)
    poison(y, dtype)
    io, _vals = bound_run(sess, x, p, y, dtype)
    nbytes = x.nbytes + y.nbytes + sum(v.nbytes for v in p.values())
    copy = ParallelCopy(nbytes // 2, args.threads, pool)
    t_kernel, t_copy = time_pair(args.runs,
                                 lambda: sess.run_with_iobinding(io), copy)
    del copy
    # Check the timed output: row 0, or sample 0 of NCHW.
    pf = {k: to_f64(v, dtype) for k, v in p.items()}
    ref = reference(op, to_f64(x[:1], dtype), pf)
    r["timed_check_rel_l2"] = rel_l2(to_f64(y[:1], dtype), ref)
    if not r["timed_check_rel_l2"] <= TOLERANCE[dtype]:
        r["error"] = "timed output differs from the reference"
    r.update(bytes=nbytes, median_ms=t_kernel * 1e3,
             copy_median_ms=t_copy * 1e3, gbps=nbytes / t_kernel / 1e9,
             copy_gbps=nbytes / t_copy / 1e9,
             fraction_of_copy=t_copy / t_kernel)
    c = cpp.get((op, dtype, shape[0], shape[1])) if len(shape) == 2 else None
    if c:
        r["nf"] = {"fused_gbps": c["fused_gbps"], "copy_gbps": c["copy_gbps"],
                   "fraction_of_copy": c["fraction_of_copy"],
                   "ort_copy_over_nf_copy": r["copy_gbps"] / c["copy_gbps"],
                   "ort_time_over_nf_time":
                       t_kernel / c["fused_median_s"]}
    return r


def fmt(v, f):
    return "-" if v is None else format(v, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--mib", type=int, default=128)
    ap.add_argument("--json")
    ap.add_argument("--cpp-json", help="nf-bench-cpu-norms JSON to compare")
    ap.add_argument("--only", help="comma-separated ops to run")
    ap.add_argument("--spin", action="store_true",
                    help="let ORT's thread pool spin between runs")
    args = ap.parse_args()
    ort.set_default_logger_severity(3)
    cpp, cpp_js = cpp_results(args.cpp_json)
    only = set(args.only.split(",")) if args.only else None
    rng = np.random.default_rng(1)
    print(f"onnxruntime {ort.__version__}, onnx {onnx.__version__}, "
          f"numpy {np.__version__}; {args.threads} threads, median of "
          f"{args.runs}; GroupNorm / BatchNorm / InstanceNorm are NCHW "
          "(ONNX's layout)")
    print(f"{'op':<13} {'dtype':<5} {'shape':<18} {'ms':>8} {'GB/s':>6} "
          f"{'copy':>6} {'frac':>5}  {'nf frac':>7}  kernel / ORT graph")
    results = []
    with ThreadPoolExecutor(args.threads) as pool, \
            tempfile.TemporaryDirectory() as tmpdir:
        for op, dtype, shape in cases(args.mib):
            if only and op not in only:
                continue
            r = run_case(op, dtype, shape, args, pool, rng, tmpdir, cpp)
            results.append(r)
            nf = r.get("nf")
            print(f"{op:<13} {dtype:<5} {'x'.join(map(str, shape)):<18} "
                  f"{fmt(r['median_ms'], '8.2f'):>8} {fmt(r['gbps'], '6.1f'):>6} "
                  f"{fmt(r['copy_gbps'], '6.1f'):>6} "
                  f"{fmt(r['fraction_of_copy'], '5.2f'):>5}  "
                  f"{fmt(nf and nf['fraction_of_copy'], '7.2f'):>7}  "
                  f"{r['kernel']}: {r['error'] or r['ort_graph']}",
                  flush=True)
    if args.json:
        js = {
            "benchmark": "ort-norms",
            "date": datetime.datetime.now(datetime.timezone.utc)
            .strftime("%Y-%m-%d"),
            "host": socket.gethostname().split(".")[0],
            "cpu": cpu_model(),
            "threads": args.threads,
            "runs": args.runs,
            "onnxruntime": ort.__version__,
            "onnx": onnx.__version__,
            "numpy": np.__version__,
            "python": platform.python_version(),
            "session": {"providers": ["CPUExecutionProvider"],
                        "intra_op_num_threads": args.threads,
                        "inter_op_num_threads": 1,
                        "execution_mode": "ORT_SEQUENTIAL",
                        "graph_optimization_level": "ORT_ENABLE_ALL",
                        "allow_spinning": args.spin,
                        "io_binding": "inputs and outputs preallocated"},
            "layout": "layer_norm / rms_norm: rows x cols, normalized over "
                      "the last axis; group_norm / batch_norm / instance_norm:"
                      " NCHW (ONNX's layout), 32 groups for group_norm",
            "bytes": "input read + output written + parameters",
            "copy_ceiling": "numpy.copyto of bytes/2 into bytes/2 on a pool "
                            "of `threads` Python threads (contiguous slices),"
                            " timed alternately with the kernel",
            "cpp_json": args.cpp_json and os.path.basename(args.cpp_json),
            "cpp_date": cpp_js and cpp_js.get("date"),
            "results": results,
        }
        with open(args.json, "w") as f:
            json.dump(js, f, indent=1)
            f.write("\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
