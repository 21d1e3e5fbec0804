"""The cases the GPU check runs: every CUDA op family, in f32, f16 and bf16,
at shapes that reach every row-norm schedule (short rows, medium rows held
in registers, long rows streamed, rows of 2^20 split across blocks), odd
sizes, 1-element rows and batch 1.

Each case is a one-function .mlir module (`@f`) that make_packages.py turns
into a kernel package here, and a float64 reference that check.py computes
(with PyTorch on the GPU machine). Plain Python: importing it needs neither
the compiler nor PyTorch.
"""

import re
from dataclasses import dataclass, field
from typing import Callable, List, Sequence, Tuple

EPS = 1e-5
DTYPES = ("f32", "f16", "bf16")


@dataclass
class Case:
    name: str
    ir: str
    # (shape, dtype, kind) per argument; kind: "data", "scale" (near 1),
    # "positive" (an rstd), "small" (a mean near 0).
    inputs: List[Tuple[Tuple[int, ...], str, str]]
    # (ops, float64 arrays...) -> float64 arrays, one per result; `ops` is
    # check.py's array backend (PyTorch, or NumPy where PyTorch is missing).
    reference: Callable
    # The dtype that sets the tolerance (the data's).
    dtype: str
    # The schedule or family this case is for, for the report.
    family: str
    results: List[Tuple[Tuple[int, ...], str]] = field(default_factory=list)
    # Whether every dimension is dynamic in the IR: the package then holds
    # the shape-generic kernels (sizes as arguments) with the plan for the
    # input shapes (nf-package --input-shapes).
    dynamic: bool = False
    # The GPU target the case needs, where not the packages' own ("sm_90a":
    # wgmma): make_packages.py packages such cases apart, into
    # binaries-<arch> and source-<arch>.
    arch: str = ""


def _t(shape: Sequence[int], dtype: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def _func(args, results, body, returned) -> str:
    sig = ", ".join(f"%{n}: {_t(s, d)}" for n, s, d in args)
    res = ", ".join(_t(s, d) for s, d in results)
    return (f"func.func @f({sig}) -> ({res}) {{\n{body}\n"
            f"  return {', '.join(returned)} : {res}\n}}\n")


def layer_norm(rows: int, cols: int, dtype: str) -> Case:
    x, g, s = (rows, cols), (cols,), (rows, 1)
    results = [(x, dtype), (s, "f32"), (s, "f32")]
    body = (f"  %y, %m, %r = nf.layer_norm %x scale %g bias %b "
            f"{{axis = 1 : i64, epsilon = {EPS:e}}} : ({_t(x, dtype)}, "
            f"{_t(g, 'f32')}, {_t(g, 'f32')}) -> ({_t(x, dtype)}, "
            f"{_t(s, 'f32')}, {_t(s, 'f32')})")

    def ref(ops, x, g, b):
        m = ops.mean(x, 1)
        r = 1 / ops.sqrt(ops.mean((x - m) ** 2, 1) + EPS)
        return [(x - m) * r * g + b, m, r]

    return Case(f"layer_norm_{rows}x{cols}_{dtype}",
                _func([("x", x, dtype), ("g", g, "f32"), ("b", g, "f32")],
                      results, body, ["%y", "%m", "%r"]),
                [(x, dtype, "data"), (g, "f32", "scale"), (g, "f32", "data")],
                ref, dtype, "layer_norm", results)


def rms_norm_gelu(rows: int, cols: int, dtype: str) -> Case:
    """RMSNorm with its GELU epilogue fused (nf-fuse-pipeline)."""
    x, g, s = (rows, cols), (cols,), (rows, 1)
    results = [(x, dtype), (s, "f32")]
    body = (f"  %y, %r = nf.rms_norm %x scale %g {{axis = 1 : i64, epsilon = "
            f"{EPS:e}}} : ({_t(x, dtype)}, {_t(g, 'f32')}) -> "
            f"({_t(x, dtype)}, {_t(s, 'f32')})\n"
            f"  %z = nf.gelu %y : {_t(x, dtype)}")

    def ref(ops, x, g):
        r = 1 / ops.sqrt(ops.mean(x * x, 1) + EPS)
        return [ops.gelu(x * r * g), r]

    return Case(f"rms_norm_gelu_{rows}x{cols}_{dtype}",
                _func([("x", x, dtype), ("g", g, "f32")], results, body,
                      ["%z", "%r"]),
                [(x, dtype, "data"), (g, "f32", "scale")], ref, dtype,
                "rms_norm+gelu", results)


def layer_norm_grad(rows: int, cols: int, dtype: str) -> Case:
    x, g, s = (rows, cols), (cols,), (rows, 1)
    results = [(x, dtype), (g, "f32"), (g, "f32")]
    body = (f"  %dx, %dg, %db = nf.layer_norm_grad %dy, %x, %m, %r scale %g "
            f"{{axis = 1 : i64}} : ({_t(x, dtype)}, {_t(x, dtype)}, "
            f"{_t(s, 'f32')}, {_t(s, 'f32')}, {_t(g, 'f32')}) -> "
            f"({_t(x, dtype)}, {_t(g, 'f32')}, {_t(g, 'f32')})")

    def ref(ops, dy, x, m, r, g):
        xhat = (x - m) * r
        dxhat = dy * g
        dx = r * (dxhat - ops.mean(dxhat, 1) - xhat * ops.mean(dxhat * xhat, 1))
        return [dx, ops.sum0(dy * xhat), ops.sum0(dy)]

    return Case(f"layer_norm_grad_{rows}x{cols}_{dtype}",
                _func([("dy", x, dtype), ("x", x, dtype), ("m", s, "f32"),
                       ("r", s, "f32"), ("g", g, "f32")], results, body,
                      ["%dx", "%dg", "%db"]),
                [(x, dtype, "data"), (x, dtype, "data"), (s, "f32", "small"),
                 (s, "f32", "positive"), (g, "f32", "scale")],
                ref, dtype, "layer_norm_grad", results)


def group_norm(n: int, c: int, h: int, w: int, groups: int, nhwc: bool,
               dtype: str) -> Case:
    x = (n, h, w, c) if nhwc else (n, c, h, w)
    g, s = (c,), (n, groups)
    results = [(x, dtype), (s, "f32"), (s, "f32")]
    layout = "nhwc" if nhwc else "nchw"
    body = (f"  %y, %m, %r = nf.group_norm %x scale %g bias %b {{layout = "
            f"#nf.layout<{layout}>, num_groups = {groups} : i64}} : "
            f"({_t(x, dtype)}, {_t(g, 'f32')}, {_t(g, 'f32')}) -> "
            f"({_t(x, dtype)}, {_t(s, 'f32')}, {_t(s, 'f32')})")

    def ref(ops, x, g, b):
        nchw = ops.permute(x, (0, 3, 1, 2)) if nhwc else x
        grouped = nchw.reshape(n, groups, -1)
        m = ops.mean(grouped, 2)
        r = 1 / ops.sqrt(ops.mean((grouped - m) ** 2, 2) + EPS)
        y = ((grouped - m) * r).reshape(n, c, h, w)
        y = y * g.reshape(1, c, 1, 1) + b.reshape(1, c, 1, 1)
        if nhwc:
            y = ops.permute(y, (0, 2, 3, 1))
        return [y, m.reshape(n, groups), r.reshape(n, groups)]

    return Case(f"group_norm_{layout}_{n}x{c}x{h}x{w}_g{groups}_{dtype}",
                _func([("x", x, dtype), ("g", g, "f32"), ("b", g, "f32")],
                      results, body, ["%y", "%m", "%r"]),
                [(x, dtype, "data"), (g, "f32", "scale"), (g, "f32", "data")],
                ref, dtype, f"group_norm_{layout}", results)


def group_norm_grad(n: int, c: int, h: int, w: int, groups: int, nhwc: bool,
                    dtype: str) -> Case:
    """group_norm_grad with a scale (groups == c: instance_norm_grad)."""
    x = (n, h, w, c) if nhwc else (n, c, h, w)
    g, s = (c,), (n, groups)
    layout = "nhwc" if nhwc else "nchw"
    instance = groups == c
    op = "nf.instance_norm_grad" if instance else "nf.group_norm_grad"
    attrs = (f"{{layout = #nf.layout<{layout}>}}" if instance else
             f"{{layout = #nf.layout<{layout}>, num_groups = {groups} : i64}}")
    results = [(x, dtype), (g, "f32"), (g, "f32")]
    body = (f"  %dx, %dg, %db = {op} %dy, %x, %m, %r scale %g {attrs} : "
            f"({_t(x, dtype)}, {_t(x, dtype)}, {_t(s, 'f32')}, "
            f"{_t(s, 'f32')}, {_t(g, 'f32')}) -> ({_t(x, dtype)}, "
            f"{_t(g, 'f32')}, {_t(g, 'f32')})")

    def ref(ops, dy, xv, m, r, gv):
        if nhwc:
            dy, xv = (ops.einsum("nhwc->nchw", t) for t in (dy, xv))
        mm, rr = m.reshape(n, groups, 1), r.reshape(n, groups, 1)
        xhat = ((xv.reshape(n, groups, -1) - mm) * rr).reshape(n, c, h, w)
        gdy = dy * gv.reshape(1, c, 1, 1)
        gg, gx = gdy.reshape(n, groups, -1), (gdy * xhat).reshape(n, groups, -1)
        dx = rr * (gg - ops.mean(gg, 2) - xhat.reshape(n, groups, -1) * ops.mean(gx, 2))
        dx = dx.reshape(n, c, h, w)
        if nhwc:
            dx = ops.einsum("nchw->nhwc", dx)
        return [dx, ops.einsum("nchw->c", dy * xhat), ops.einsum("nchw->c", dy)]

    name = "instance_norm_grad" if instance else f"group_norm_grad_g{groups}"
    return Case(f"{name}_{layout}_{n}x{c}x{h}x{w}_{dtype}",
                _func([("dy", x, dtype), ("x", x, dtype), ("m", s, "f32"),
                       ("r", s, "f32"), ("g", g, "f32")], results, body,
                      ["%dx", "%dg", "%db"]),
                [(x, dtype, "data"), (x, dtype, "data"), (s, "f32", "small"),
                 (s, "f32", "positive"), (g, "f32", "scale")],
                ref, dtype, f"group_norm_grad_{layout}", results)


def batch_norm_training(n: int, c: int, h: int, w: int, dtype: str) -> Case:
    """NCHW, with scale, bias and running statistics (momentum 0.1, the
    running variance unbiased, as PyTorch): y, the batch mean and rstd, and
    the new running mean and variance."""
    x, p = (n, c, h, w), (c,)
    results = [(x, dtype)] + [(p, "f32")] * 4
    ty, tp = _t(x, dtype), _t(p, "f32")
    body = (f"  %y, %m, %r, %nm, %nv = nf.batch_norm_training %x scale %g "
            f"bias %b running(%rm, %rv) {{layout = #nf.layout<nchw>, epsilon "
            f"= {EPS:e}}} : ({ty}, {tp}, {tp}, {tp}, {tp}) -> ({ty}, {tp}, "
            f"{tp}, {tp}, {tp})")

    def ref(ops, x, g, b, rm, rv):
        # (ops.mean keeps the reduced dimension.)
        per = ops.permute(x.reshape(n, c, h * w), (1, 0, 2)).reshape(c, -1)
        m = ops.mean(per, 1).reshape(c)
        var = ops.mean((per - m.reshape(c, 1)) ** 2, 1).reshape(c)
        r = 1 / ops.sqrt(var + EPS)
        y = (x - m.reshape(1, c, 1, 1)) * r.reshape(1, c, 1, 1)
        y = y * g.reshape(1, c, 1, 1) + b.reshape(1, c, 1, 1)
        count = n * h * w
        unbiased = var * count / (count - 1)
        return [y, m, r, 0.9 * rm + 0.1 * m, 0.9 * rv + 0.1 * unbiased]

    return Case(f"batch_norm_training_nchw_{n}x{c}x{h}x{w}_{dtype}",
                _func([("x", x, dtype), ("g", p, "f32"), ("b", p, "f32"),
                       ("rm", p, "f32"), ("rv", p, "f32")],
                      results, body, ["%y", "%m", "%r", "%nm", "%nv"]),
                [(x, dtype, "data"), (p, "f32", "scale"), (p, "f32", "data"),
                 (p, "f32", "small"), (p, "f32", "positive")],
                ref, dtype, "batch_norm_training_nchw", results)


def batch_norm_grad(n: int, c: int, h: int, w: int, dtype: str) -> Case:
    """NCHW, with a scale: dx, dscale and dbias from dy, x and the saved
    per-channel mean and rstd."""
    x, p = (n, c, h, w), (c,)
    results = [(x, dtype), (p, "f32"), (p, "f32")]
    ty, tp = _t(x, dtype), _t(p, "f32")
    body = (f"  %dx, %dg, %db = nf.batch_norm_grad %dy, %x, %m, %r scale %g "
            f"{{layout = #nf.layout<nchw>}} : ({ty}, {ty}, {tp}, {tp}, {tp}) "
            f"-> ({ty}, {tp}, {tp})")

    def ref(ops, dy, x, m, r, g):
        # Per channel: (C, N x H x W).
        def per(a):
            return ops.permute(a.reshape(n, c, h * w), (1, 0, 2)).reshape(c, -1)
        dyc, rc = per(dy), r.reshape(c, 1)
        xhat = (per(x) - m.reshape(c, 1)) * rc
        gdy = dyc * g.reshape(c, 1)
        dx = rc * (gdy - ops.mean(gdy, 1) - xhat * ops.mean(gdy * xhat, 1))
        dx = ops.permute(dx.reshape(c, n, h * w), (1, 0, 2)).reshape(n, c, h, w)
        return [dx, ops.sum0(ops.permute(dyc * xhat, (1, 0))),
                ops.sum0(ops.permute(dyc, (1, 0)))]

    return Case(f"batch_norm_grad_nchw_{n}x{c}x{h}x{w}_{dtype}",
                _func([("dy", x, dtype), ("x", x, dtype), ("m", p, "f32"),
                       ("r", p, "f32"), ("g", p, "f32")], results, body,
                      ["%dx", "%dg", "%db"]),
                [(x, dtype, "data"), (x, dtype, "data"), (p, "f32", "small"),
                 (p, "f32", "positive"), (p, "f32", "scale")],
                ref, dtype, "batch_norm_grad_nchw", results)


def pointwise(op: str, rows: int, cols: int, dtype: str) -> Case:
    x = (rows, cols)
    attr = (" {approximate = #nf.approximation<tanh>}"
            if op == "gelu_tanh" else "")
    name = "gelu" if op == "gelu_tanh" else op
    body = f"  %y = nf.{name} %x{attr} : {_t(x, dtype)}"

    def ref(ops, x):
        return [getattr(ops, op)(x)]

    return Case(f"{op}_{rows}x{cols}_{dtype}",
                _func([("x", x, dtype)], [(x, dtype)], body, ["%y"]),
                [(x, dtype, "data")], ref, dtype, op, [(x, dtype)])


def matmul_bias_gelu(m: int, k: int, n: int, dtype: str) -> Case:
    a, b, c, y = (m, k), (k, n), (n,), (m, n)
    body = (f"  %p = nf.matmul %a, %b : {_t(a, dtype)}, {_t(b, dtype)} -> "
            f"{_t(y, dtype)}\n"
            f"  %q = nf.bias_add %p, %c {{layout = #nf.layout<nhwc>}} : "
            f"{_t(y, dtype)}, {_t(c, dtype)}\n"
            f"  %z = nf.gelu %q : {_t(y, dtype)}")

    def ref(ops, a, b, c):
        return [ops.gelu(ops.einsum("mk,kn->mn", a, b) + c)]

    return Case(f"matmul_bias_gelu_{m}x{k}x{n}_{dtype}",
                _func([("a", a, dtype), ("b", b, dtype), ("c", c, dtype)],
                      [(y, dtype)], body, ["%z"]),
                [(a, dtype, "data"), (b, dtype, "data"), (c, dtype, "data")],
                ref, dtype, "matmul", [(y, dtype)])


def wgmma(case: Case, schedule: str) -> Case:
    """`case` (a product) under a written wgmma schedule (sm_90a), as
    family "<family> wgmma", named "<name>_wgmma" ("<name>_wgmma_tma"
    where TMA loads stage the operands, "<name>_wgmma_ws" where a producer
    warpgroup issues them, "<name>_wgmma_mc" where clusters of two share
    B's tiles, "<name>_wgmma_pp" where two teams of consumers take turns)."""
    attr = 'nf.gpu_schedule = "' + schedule + '"'
    ir = re.sub(r"(nf\.(?:matmul|conv2d) %\w+, %\w+ )(\{?)",
                lambda m: m.group(1) + ("{" + attr + ", " if m.group(2) else "{" + attr + "} "),
                case.ir, count=1)
    assert ir != case.ir, case.name
    suffix = ("_wgmma_pp" if schedule.endswith(" pingpong") else
              "_wgmma_mc" if schedule.endswith(" multicast") else
              "_wgmma_ws" if schedule.endswith(" warp-specialized") else
              "_wgmma_tma" if schedule.endswith(" tma") else "_wgmma")
    return Case(case.name + suffix, ir, case.inputs, case.reference,
                case.dtype, case.family + " wgmma", case.results, arch="sm_90a")


def _conv_out(size: int, k: int, stride: int, pad: int) -> int:
    return (size + 2 * pad - k) // stride + 1


def _nchw(ops, x, nhwc):
    return ops.einsum("nhwc->nchw", x) if nhwc else x


def _oihw(ops, w, nhwc):
    return ops.einsum("ohwi->oihw", w) if nhwc else w


def _conv_ref(ops, x, w, stride, pad, oh, ow):
    """y = conv2d(x, w) in NCHW / OIHW, one einsum per filter tap."""
    xp = ops.pad(x, pad, pad, pad, pad)
    y = 0
    for kh in range(w.shape[2]):
        for kw in range(w.shape[3]):
            window = xp[:, :, kh:kh + stride * (oh - 1) + 1:stride,
                        kw:kw + stride * (ow - 1) + 1:stride]
            y = y + ops.einsum("nchw,oc->nohw", window, w[:, :, kh, kw])
    return y


def conv_bias_relu(n: int, c: int, hw: int, o: int, stride: int, nhwc: bool,
                   dtype: str) -> Case:
    """conv2d 3x3 (padding 1) + bias + relu, fused into one kernel."""
    oh = _conv_out(hw, 3, stride, 1)
    x = (n, hw, hw, c) if nhwc else (n, c, hw, hw)
    w = (o, 3, 3, c) if nhwc else (o, c, 3, 3)
    y = (n, oh, oh, o) if nhwc else (n, o, oh, oh)
    layout = "nhwc" if nhwc else "nchw"
    attrs = (f"{{strides = array<i64: {stride}, {stride}>, padding = "
             f"array<i64: 1, 1, 1, 1>, layout = #nf.layout<{layout}>}}")
    body = (f"  %y = nf.conv2d %x, %w {attrs} : {_t(x, dtype)}, "
            f"{_t(w, dtype)} -> {_t(y, dtype)}\n"
            f"  %b = nf.bias_add %y, %c {{layout = #nf.layout<{layout}>}} : "
            f"{_t(y, dtype)}, {_t((o,), dtype)}\n"
            f"  %z = nf.relu %b : {_t(y, dtype)}")

    def ref(ops, xv, wv, cv):
        out = _conv_ref(ops, _nchw(ops, xv, nhwc), _oihw(ops, wv, nhwc),
                        stride, 1, oh, oh) + cv.reshape(1, o, 1, 1)
        out = ops.relu(out)
        return [ops.einsum("nchw->nhwc", out) if nhwc else out]

    return Case(f"conv_bias_relu_{layout}_{n}x{c}x{hw}x{hw}_o{o}_s{stride}_{dtype}",
                _func([("x", x, dtype), ("w", w, dtype), ("c", (o,), dtype)],
                      [(y, dtype)], body, ["%z"]),
                [(x, dtype, "data"), (w, dtype, "data"), ((o,), dtype, "data")],
                ref, dtype, f"conv2d_{layout}", [(y, dtype)])


def conv_grads(n: int, c: int, hw: int, o: int, stride: int, dtype: str) -> Case:
    """conv2d_backprop_input and _filter (NCHW, 3x3, padding 1)."""
    oh = _conv_out(hw, 3, stride, 1)
    x, w, dy = (n, c, hw, hw), (o, c, 3, 3), (n, o, oh, oh)
    attrs = (f"{{strides = array<i64: {stride}, {stride}>, padding = "
             f"array<i64: 1, 1, 1, 1>}}")
    body = (f"  %dx = nf.conv2d_backprop_input %dy, %w {attrs} : "
            f"{_t(dy, dtype)}, {_t(w, dtype)} -> {_t(x, dtype)}\n"
            f"  %dw = nf.conv2d_backprop_filter %x, %dy {attrs} : "
            f"{_t(x, dtype)}, {_t(dy, dtype)} -> {_t(w, dtype)}")

    def ref(ops, xv, wv, dyv):
        size = stride * (oh - 1) + 1
        dxp = ops.zeros((n, c, hw + 2, hw + 2))
        dw = ops.zeros((o, c, 3, 3))
        xp = ops.pad(xv, 1, 1, 1, 1)
        for kh in range(3):
            for kw in range(3):
                dxp[:, :, kh:kh + size:stride, kw:kw + size:stride] += \
                    ops.einsum("nohw,oc->nchw", dyv, wv[:, :, kh, kw])
                window = xp[:, :, kh:kh + size:stride, kw:kw + size:stride]
                dw[:, :, kh, kw] = ops.einsum("nchw,nohw->oc", window, dyv)
        return [dxp[:, :, 1:hw + 1, 1:hw + 1], dw]

    return Case(f"conv_grads_{n}x{c}x{hw}x{hw}_o{o}_s{stride}_{dtype}",
                _func([("x", x, dtype), ("w", w, dtype), ("dy", dy, dtype)],
                      [(x, dtype), (w, dtype)], body, ["%dx", "%dw"]),
                [(x, dtype, "data"), (w, dtype, "data"), (dy, dtype, "data")],
                ref, dtype, "conv2d_grads", [(x, dtype), (w, dtype)])


def shape_generic(case: Case) -> Case:
    """`case` with every dimension of every tensor dynamic."""
    def dynamic_type(m):
        dims = m.group(1).split("x")
        return "tensor<" + "?x" * len(dims) + m.group(2) + ">"
    ir = re.sub(r"tensor<([0-9]+(?:x[0-9]+)*)x(f32|f16|bf16)>", dynamic_type,
                case.ir)
    return Case(case.name + "_dynamic", ir, case.inputs, case.reference,
                case.dtype, case.family + "_dynamic", case.results, True)


def all_cases() -> List[Case]:
    cases = []
    for dtype in DTYPES:
        # Short rows (a warp or less per row), medium rows (a block, in
        # registers), long rows (split), 2^20 (split across blocks), odd
        # sizes (peeled: 16383 beside 16384 shows what peeling costs),
        # 1-element rows.
        for rows, cols in [(4096, 64), (512, 1024), (64, 16384), (64, 16383),
                           (2, 1 << 20), (3, 1001), (7, 1)]:
            cases.append(layer_norm(rows, cols, dtype))
        for rows, cols in [(2048, 128), (256, 4096), (1, 1 << 20)]:
            cases.append(rms_norm_gelu(rows, cols, dtype))
        # Gradients: warp rows, odd block rows (peeled: a head of 0 to 7
        # elements, 1000 rows of 5121 over more rows than the device holds
        # blocks, so each block's rows start at one offset within a vector
        # row after row), and on sm_90 clusters of 4 blocks (16384) and of
        # 8 blocks of 512 threads (65536).
        for rows, cols in [(512, 1024), (3, 1001), (1000, 5121), (4096, 64), (128, 16384),
                           (16, 65536)]:
            cases.append(layer_norm_grad(rows, cols, dtype))
        # Batch 1, the case PyTorch is slow on (NHWC), and an odd one.
        cases.append(group_norm(1, 320, 64, 64, 32, True, dtype))
        cases.append(group_norm(1, 320, 64, 64, 32, False, dtype))
        cases.append(group_norm(3, 6, 5, 7, 3, True, dtype))
        for op in ("relu", "silu", "gelu", "gelu_tanh"):
            cases.append(pointwise(op, 1023, 1025, dtype))
        # The tiled products: a BERT-sized MLP matmul with its epilogue, an
        # odd one, convolutions in both layouts, the conv gradients.
        cases.append(matmul_bias_gelu(512, 768, 3072, dtype))
        cases.append(matmul_bias_gelu(37, 45, 70, dtype))
        cases.append(conv_bias_relu(2, 64, 32, 64, 1, True, dtype))
        cases.append(conv_bias_relu(1, 5, 17, 6, 2, False, dtype))
        cases.append(conv_grads(2, 8, 17, 12, 2, dtype))
        # The same on wgmma (sm_90a, never chosen by default yet): a tile of
        # two warpgroups of m64n256 in 4 stages of 64-wide K, the odd one
        # on one warpgroup (K of 45 staged element by element), the
        # convolution (64 filters) on one warpgroup of m64n64.
        if dtype != "f32":
            cases.append(wgmma(matmul_bias_gelu(512, 768, 3072, dtype),
                               "tensor-core-product tile=128x256x64 warps=8x1 stages=4 wgmma"))
            cases.append(wgmma(matmul_bias_gelu(37, 45, 70, dtype),
                               "tensor-core-product tile=128x128x32 warps=4x1 stages=3 wgmma"))
            cases.append(wgmma(conv_bias_relu(2, 64, 32, 64, 1, True, dtype),
                               "tensor-core-product tile=128x64x32 warps=4x1 stages=3 wgmma"))
            # TMA loads staging them (2026-11-29, never run on a GPU): the
            # MLP tile, and an odd M with K and N of whole 16-byte rows
            # (the boxes' zeros past M, N and K).
            cases.append(wgmma(matmul_bias_gelu(512, 768, 3072, dtype),
                               "tensor-core-product tile=128x256x64 warps=8x1 stages=4 wgmma tma"))
            cases.append(wgmma(matmul_bias_gelu(37, 72, 136, dtype),
                               "tensor-core-product tile=128x128x64 warps=4x1 stages=3 wgmma tma"))
            # Warp specialized (2026-11-29, never run on a GPU): a producer
            # warpgroup's TMA loads, two consumer warpgroups of m64n256 in
            # 3 stages; the odd one on one consumer warpgroup.
            cases.append(wgmma(matmul_bias_gelu(512, 768, 3072, dtype),
                               "tensor-core-product tile=128x256x64 warps=8x1 stages=3 wgmma tma "
                               "warp-specialized"))
            cases.append(wgmma(matmul_bias_gelu(37, 72, 136, dtype),
                               "tensor-core-product tile=128x128x64 warps=4x1 stages=3 wgmma tma "
                               "warp-specialized"))
            # In clusters of two sharing B's tiles (multicast TMA loads;
            # 2026-11-29, never run on a GPU); the odd one's second block
            # past M.
            cases.append(wgmma(matmul_bias_gelu(512, 768, 3072, dtype),
                               "tensor-core-product tile=128x256x64 warps=8x1 stages=3 wgmma tma "
                               "warp-specialized multicast"))
            cases.append(wgmma(matmul_bias_gelu(37, 72, 136, dtype),
                               "tensor-core-product tile=128x128x64 warps=4x1 stages=3 wgmma tma "
                               "warp-specialized multicast"))
            # Two teams of consumers taking turns (pingpong; 2026-11-29,
            # never run on a GPU), each a whole 128 x 128 tile in 4
            # stages; the odd one's second team idle.
            cases.append(wgmma(matmul_bias_gelu(512, 768, 3072, dtype),
                               "tensor-core-product tile=128x128x64 warps=4x1 stages=4 wgmma tma "
                               "warp-specialized pingpong"))
            cases.append(wgmma(matmul_bias_gelu(37, 72, 136, dtype),
                               "tensor-core-product tile=64x128x64 warps=4x1 stages=3 wgmma tma "
                               "warp-specialized pingpong"))
            # The convolution warp specialized, its producer gathering by
            # cp.async (session 23, never run on a GPU), alone and in two
            # teams.
            cases.append(wgmma(conv_bias_relu(2, 64, 32, 64, 1, True, dtype),
                               "tensor-core-product tile=128x64x32 warps=4x1 stages=3 wgmma "
                               "warp-specialized"))
            cases.append(wgmma(conv_bias_relu(2, 64, 32, 64, 1, True, dtype),
                               "tensor-core-product tile=128x64x32 warps=4x1 stages=3 wgmma "
                               "warp-specialized pingpong"))
        # The group and instance norm gradients: batch 1 NHWC (SD-sized),
        # an odd NCHW one.
        cases.append(group_norm_grad(1, 320, 32, 32, 32, True, dtype))
        cases.append(group_norm_grad(2, 6, 5, 7, 6, False, dtype))
        # BatchNorm training and its gradient in NCHW, one kernel each:
        # ResNet's last stage (odd 7 x 7 planes, single elements; more
        # channels than blocks) and an odd one.
        cases.append(batch_norm_training(8, 512, 7, 7, dtype))
        cases.append(batch_norm_training(3, 6, 5, 7, dtype))
        cases.append(batch_norm_grad(8, 512, 7, 7, dtype))
        cases.append(batch_norm_grad(3, 6, 5, 7, dtype))
        # Shape-generic kernels (every size an argument) of each family.
        for case in (layer_norm(3, 1001, dtype),
                     group_norm(3, 6, 5, 7, 3, True, dtype),
                     group_norm_grad(2, 6, 5, 7, 6, False, dtype),
                     matmul_bias_gelu(37, 45, 70, dtype),
                     conv_bias_relu(1, 5, 17, 6, 2, False, dtype)):
            cases.append(shape_generic(case))
    return cases


def tolerance(dtype: str) -> float:
    """The largest |result - reference| / max(1, max |reference|) allowed:
    a few units in the last place of the storage type."""
    return {"f32": 1e-4, "f16": 4e-3, "bf16": 3e-2}[dtype]
