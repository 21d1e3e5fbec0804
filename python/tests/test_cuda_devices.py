"""The cuda target on PyTorch CUDA tensors and CuPy arrays: in place, on
the caller's stream, results allocated by the caller's library. Needs a GPU
and PyTorch: skipped unless torch.cuda.is_available() (CuPy's tests also
need CuPy). Every result is checked against float64 NumPy; tolerances are
stated where they are used. What needs no GPU is in test_device_arrays.py."""

import numpy as np
import pytest

import normfuse
from conftest import (layer_norm_ir, layer_norm_reference, matmul_ir, relu_ir,
                      round_to_tf32)

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device for PyTorch", allow_module_level=True)

ROWS, COLS = 64, 768
# f32 LayerNorm of 768 columns against float64, |y| up to about 5.
ATOL_F32 = 5e-5
# The CUDA stream sleeps this many clock cycles (tens of milliseconds)
# before the values a test reads are written.
SLEEP_CYCLES = 50_000_000


@pytest.fixture(scope="module")
def ln():
    return normfuse.compile(layer_norm_ir(rows="?", cols=COLS), "ln", target="cuda")


@pytest.fixture
def inputs():
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(ROWS, COLS, generator=g) * 3 + 7
    scale = torch.randn(COLS, generator=g)
    bias = torch.randn(COLS, generator=g)
    return x.cuda(), scale.cuda(), bias.cuda()


def check_layer_norm(x, scale, bias, y, mean, rstd, atol=ATOL_F32):
    ref_y, ref_mean, ref_rstd = layer_norm_reference(
        *(t.double().cpu().numpy() for t in (x, scale, bias)))
    np.testing.assert_allclose(y.double().cpu().numpy(), ref_y, rtol=0, atol=atol)
    np.testing.assert_allclose(mean.double().cpu().numpy(), ref_mean, rtol=1e-6)
    np.testing.assert_allclose(rstd.double().cpu().numpy(), ref_rstd, rtol=1e-5)


def nan_like(t, shape=None):
    return torch.full(shape or t.shape, float("nan"), dtype=t.dtype, device=t.device)


def test_torch_tensors_give_torch_results_on_their_device(ln, inputs):
    y, mean, rstd = ln(*inputs)
    for r, shape in ((y, (ROWS, COLS)), (mean, (ROWS, 1)), (rstd, (ROWS, 1))):
        assert isinstance(r, torch.Tensor)
        assert r.device == inputs[0].device and r.dtype == torch.float32
        assert tuple(r.shape) == shape
    torch.cuda.synchronize()
    check_layer_norm(*inputs, y, mean, rstd)


def test_out_writes_torch_tensors_in_place(ln, inputs):
    x = inputs[0]
    out = (nan_like(x), nan_like(x, (ROWS, 1)), nan_like(x, (ROWS, 1)))
    pointers = [t.data_ptr() for t in out]
    assert ln(*inputs, out=out) is out
    assert [t.data_ptr() for t in out] == pointers
    torch.cuda.synchronize()
    check_layer_norm(*inputs, *out)


def test_bf16_tensors(inputs):
    fn = normfuse.compile(layer_norm_ir(dtype="bf16", rows=ROWS, cols=COLS),
                          "ln", target="cuda")
    x, scale, bias = inputs
    y, mean, rstd = fn(x.bfloat16(), scale, bias)
    assert y.dtype == torch.bfloat16
    torch.cuda.synchronize()
    ref_y, _, _ = layer_norm_reference(
        *(t.double().cpu().numpy() for t in (x.bfloat16(), scale, bias)))
    # Rounded to bf16 once: 2^-8 of the largest |y|.
    np.testing.assert_allclose(y.double().cpu().numpy(), ref_y, rtol=0,
                               atol=2**-8 * np.abs(ref_y).max())


def test_f32_matmul_as_tf32_on_the_tensor_cores():
    # Tails in M, N and K; B is [K, N] (its fragments loaded element by
    # element), A by ldmatrix.
    m, k, n = 300, 776, 520
    fn = normfuse.compile(matmul_ir(m, k, n), "mm", target="cuda",
                          allow_tf32=True)
    g = torch.Generator().manual_seed(7)
    a, b = torch.randn(m, k, generator=g), torch.randn(k, n, generator=g)
    y = fn(a.cuda(), b.cuda())
    torch.cuda.synchronize()
    got = y.double().cpu().numpy()
    rounded = (round_to_tf32(a.numpy()).astype(np.float64)
               @ round_to_tf32(b.numpy()).astype(np.float64))
    exact = a.double().numpy() @ b.double().numpy()
    scale = np.abs(rounded).max()
    # The tf32-rounded operands' product, summed in f32 in the tensor
    # cores' order: f32's rounding of sums of 776 terms. Not f32's product.
    assert np.abs(got - rounded).max() / scale < 1e-5
    assert np.abs(got - exact).max() / scale > 1e-5


@pytest.mark.parametrize("dtype,cols", [("f32", 16384), ("bf16", 65536),
                                        ("f32", 262144), ("f16", 20001)])
def test_rows_on_thread_block_clusters(dtype, cols):
    # sm_90 spreads these rows over clusters of 2, 8, 8 and 3 blocks (the
    # last peeled), one kernel each; the split row is the same numbers in
    # two kernels. Both against float64, relative to the largest |y|: f32
    # to 1e-5, bf16 and f16 to one rounding (2^-8, 2^-10).
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("thread-block clusters need sm_90")
    rows = 6
    g = torch.Generator().manual_seed(11)
    x = torch.randn(rows, cols, generator=g) * 2 + 3
    scale, bias = torch.randn(cols, generator=g), torch.randn(cols, generator=g)
    torch_dtype = {"f32": torch.float32, "bf16": torch.bfloat16,
                   "f16": torch.float16}[dtype]
    xd = x.to(torch_dtype)
    ref_y, ref_mean, ref_rstd = layer_norm_reference(
        *(t.double().numpy() for t in (xd, scale, bias)))
    tol = {"f32": 1e-5, "bf16": 2**-8, "f16": 2**-10}[dtype]
    for schedule, launches in (("auto", 1), ("split-row", 2)):
        fn = normfuse.compile(layer_norm_ir(dtype=dtype, rows=rows, cols=cols),
                              "ln", target="cuda", row_norm_schedule=schedule)
        assert fn.launches == launches
        y, mean, rstd = fn(xd.cuda(), scale.cuda(), bias.cuda())
        torch.cuda.synchronize()
        err = np.abs(y.double().cpu().numpy() - ref_y).max() / np.abs(ref_y).max()
        assert err < tol, (schedule, err)
        np.testing.assert_allclose(mean.double().cpu().numpy(), ref_mean, rtol=1e-5)
        np.testing.assert_allclose(rstd.double().cpu().numpy(), ref_rstd, rtol=1e-5)


def group_norm_nhwc_ir(n, h, w, c, groups, dtype):
    t = f"tensor<{n}x{h}x{w}x{c}x{dtype}>"
    p = f"tensor<{c}xf32>"
    st = f"tensor<{n}x{groups}xf32>"
    return f"""
func.func @gn(%x: {t}, %s: {p}, %b: {p}) -> ({t}, {st}, {st}) {{
  %y, %m, %r = nf.group_norm %x scale %s bias %b {{layout = #nf.layout<nhwc>, num_groups = {groups} : i64}} : ({t}, {p}, {p}) -> ({t}, {st}, {st})
  return %y, %m, %r : {t}, {st}, {st}
}}
"""


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_group_norm_nhwc_in_one_kernel_with_a_grid_barrier(dtype):
    # Stable Diffusion's 2x64x64x320 in 32 groups: one cooperative launch
    # (every block resident, a grid barrier between the parts' moments and
    # their combination) where the device holds its grid, the three kernels
    # forced beside it. Against float64, relative to the largest |y|: f32 to
    # 1e-5, bf16 to one rounding (2^-8); the statistics to 1e-5. A second
    # call (a CUDA graph's replay, the counter zeroed again) gives the same
    # bits.
    n, h, w, c, groups = 2, 64, 64, 320, 32
    g = torch.Generator().manual_seed(13)
    x = torch.randn(n, h, w, c, generator=g) * 2 + 3
    scale, bias = torch.randn(c, generator=g), torch.randn(c, generator=g)
    xd = x.to({"f32": torch.float32, "bf16": torch.bfloat16}[dtype])
    xs = xd.double().numpy().reshape(n, h * w, groups, c // groups)
    mean = xs.mean(axis=(1, 3))
    var = ((xs - mean[:, None, :, None]) ** 2).mean(axis=(1, 3))
    rstd = 1.0 / np.sqrt(var + 1e-5)
    ref = ((xs - mean[:, None, :, None]) * rstd[:, None, :, None]).reshape(n, h, w, c)
    ref = ref * scale.double().numpy() + bias.double().numpy()
    tol = {"f32": 1e-5, "bf16": 2**-8}[dtype]
    # 256 blocks of 320 threads, compiled for 2 an SM: an H100's 132 SMs
    # hold them; a device of fewer SMs may take the three kernels.
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    one = (1,) if sms >= 128 else (1, 3)
    for schedule, launches in (("auto", one), ("channels-last-groups", (3,))):
        fn = normfuse.compile(group_norm_nhwc_ir(n, h, w, c, groups, dtype), "gn",
                              target="cuda", row_norm_schedule=schedule)
        assert fn.launches in launches, (schedule, fn.launches)
        args = (xd.cuda(), scale.cuda(), bias.cuda())
        y, m, r = fn(*args)
        y2, _, _ = fn(*args)
        torch.cuda.synchronize()
        err = np.abs(y.double().cpu().numpy() - ref).max() / np.abs(ref).max()
        assert err < tol, (schedule, err)
        np.testing.assert_allclose(m.double().cpu().numpy(), mean, rtol=1e-5)
        np.testing.assert_allclose(r.double().cpu().numpy(), rstd, rtol=1e-5)
        assert torch.equal(y, y2), schedule


def delayed_inputs(stream, inputs):
    """Copies of `inputs` that hold NaN until `stream`, after sleeping, has
    written their values: a kernel that runs on another stream reads NaN."""
    copies = [nan_like(t) for t in inputs]
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        torch.cuda._sleep(SLEEP_CYCLES)
        for copy, t in zip(copies, inputs):
            copy.copy_(t)
    return copies


def test_the_current_torch_stream_is_the_default(ln, inputs):
    stream = torch.cuda.Stream()
    x, scale, bias = delayed_inputs(stream, inputs)
    with torch.cuda.stream(stream):
        y, mean, rstd = ln(x, scale, bias)
    stream.synchronize()
    check_layer_norm(*inputs, y, mean, rstd)


def test_an_explicit_torch_stream(ln, inputs):
    stream = torch.cuda.Stream()
    x, scale, bias = delayed_inputs(stream, inputs)
    out = (nan_like(x), nan_like(x, (ROWS, 1)), nan_like(x, (ROWS, 1)))
    stream.wait_stream(torch.cuda.current_stream())
    ln(x, scale, bias, out=out, stream=stream)
    stream.synchronize()
    check_layer_norm(*inputs, *out)


def test_a_stream_handle_as_an_int(ln, inputs):
    stream = torch.cuda.Stream()
    x, scale, bias = delayed_inputs(stream, inputs)
    out = (nan_like(x), nan_like(x, (ROWS, 1)), nan_like(x, (ROWS, 1)))
    stream.wait_stream(torch.cuda.current_stream())
    ln(x, scale, bias, out=out, stream=stream.cuda_stream)
    stream.synchronize()
    check_layer_norm(*inputs, *out)


def test_host_and_device_arrays_mixed(ln, inputs):
    x, scale, bias = inputs
    host_x = x.cpu().numpy()
    y, mean, rstd = ln(host_x, scale, bias)
    assert isinstance(y, torch.Tensor) and y.is_cuda
    torch.cuda.synchronize()
    check_layer_norm(x, scale, bias, y, mean, rstd)
    # Host results of device arguments: the call waits for them.
    out = (np.full((ROWS, COLS), np.nan, np.float32),
           np.full((ROWS, 1), np.nan, np.float32), np.full((ROWS, 1), np.nan, np.float32))
    ln(x, scale, bias, out=out)
    check_layer_norm(x, scale, bias, *(torch.from_numpy(a) for a in out))


def test_bench_waits_for_the_stream(ln, inputs):
    result = ln.bench(*inputs, runs=5)
    assert result.runs == 5 and result.min_ms > 0
    assert torch.cuda.current_stream().query()


def test_a_non_contiguous_tensor_raises_value_error(ln, inputs):
    x, scale, bias = inputs
    wide = torch.zeros(ROWS, 2 * COLS, device=x.device)
    with pytest.raises(ValueError, match="contiguous"):
        ln(wide[:, ::2], scale, bias)


def test_a_misaligned_tensor_raises_value_error(inputs):
    fn = normfuse.compile(relu_ir(shape="?x8"), "relu", target="cuda")
    flat = torch.zeros(8 * 4 + 1, device="cuda")
    with pytest.raises(ValueError, match="aligned"):
        fn(flat[1:].view(4, 8))


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="one CUDA device")
def test_a_tensor_on_another_device_raises_value_error(ln, inputs):
    x, scale, bias = (t.to("cuda:1") for t in inputs)
    with pytest.raises(ValueError, match="is on CUDA device 1; the cuda target runs on device 0"):
        ln(x, scale, bias)


def test_cupy_arrays(ln, inputs):
    cupy = pytest.importorskip("cupy")
    x, scale, bias = (cupy.asarray(t.cpu().numpy()) for t in inputs)
    y, mean, rstd = ln(x, scale, bias)
    assert isinstance(y, cupy.ndarray)
    stream = cupy.cuda.Stream(non_blocking=True)
    out = (cupy.full((ROWS, COLS), np.nan, np.float32),
           cupy.full((ROWS, 1), np.nan, np.float32), cupy.full((ROWS, 1), np.nan, np.float32))
    cupy.cuda.Device().synchronize()
    ln(x, scale, bias, out=out, stream=stream)
    stream.synchronize()
    for got in ((y, mean, rstd), out):
        check_layer_norm(*inputs, *(torch.from_numpy(cupy.asnumpy(a)) for a in got))
