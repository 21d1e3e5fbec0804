"""CUDA arrays and streams, without a GPU: device arrays refused where the
target takes host arrays, streams parsed and refused there, and the cuda
target's side of a call (what reaches the kernel, which library allocates
the results, which stream runs it) checked on a cuda Function whose kernel
is replaced by a recorder (device_fakes.RecordingImpl). The same on a real
GPU: test_cuda_devices.py."""

import os
import re
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import normfuse
from conftest import layer_norm_ir, layer_norm_reference, relu_ir
from device_fakes import (KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED, KDL_ROCM,
                          FakeDeviceArray, RecordingImpl, fake_cupy, fake_torch)

HOST_TARGETS = ["cpu", "cuda-sim"]


def ln_args(rows=3, cols=13):
    return (np.ones((rows, cols), np.float32), np.ones(cols, np.float32),
            np.zeros(cols, np.float32))


def poisoned(rows=3, cols=13):
    return (np.full((rows, cols), np.nan, np.float32),
            np.full((rows, 1), np.nan, np.float32),
            np.full((rows, 1), np.nan, np.float32))


@pytest.fixture(scope="module", params=HOST_TARGETS)
def host_ln(request):
    return normfuse.compile(layer_norm_ir(rows=3, cols=13), "ln",
                            target=request.param)


def refused_message(what, target):
    return (f"{what} of @ln is in CUDA device memory; the {target} target "
            'takes host arrays (compile with target="cuda" to pass device '
            "arrays)")


# --- host targets refuse device arrays and streams ----------------------------

@pytest.mark.parametrize("position", [0, 2])
def test_a_device_argument_is_refused_on_a_host_target_naming_it(host_ln, position):
    args = list(ln_args())
    args[position] = FakeDeviceArray(args[position].shape)
    out = poisoned()
    with pytest.raises(ValueError) as error:
        host_ln(*args, out=out)
    assert str(error.value) == refused_message(f"argument {position + 1}",
                                               host_ln.target)
    assert all(np.isnan(a).all() for a in out)


def test_a_device_output_is_refused_on_a_host_target_naming_it(host_ln):
    out = list(poisoned())
    out[1] = FakeDeviceArray((3, 1))
    with pytest.raises(ValueError) as error:
        host_ln(*ln_args(), out=out)
    assert str(error.value) == refused_message("output 2", host_ln.target)
    assert np.isnan(out[0]).all() and np.isnan(out[2]).all()
    assert np.isnan(out[1].host).all()


def test_managed_memory_counts_as_device_memory(host_ln):
    x = FakeDeviceArray((3, 13), device=(KDL_CUDA_MANAGED, 0))
    with pytest.raises(ValueError) as error:
        host_ln(x, *ln_args()[1:])
    assert str(error.value) == refused_message("argument 1", host_ln.target)


def test_a_device_array_is_refused_before_its_dtype_is_checked():
    fn = normfuse.compile(relu_ir(shape="2x8"), "relu")
    with pytest.raises(ValueError, match="is in CUDA device memory"):
        fn(FakeDeviceArray((2, 8), dtype="f64"))


def test_memory_of_another_device_type_is_refused():
    fn = normfuse.compile(relu_ir(shape="2x8"), "relu")
    with pytest.raises(ValueError) as error:
        fn(FakeDeviceArray((2, 8), device=(KDL_ROCM, 0)))
    assert str(error.value) == (
        "argument 1 of @relu is in the memory of DLPack device type 10, which "
        "normfuse cannot read (it takes host arrays, and CUDA device arrays on "
        "the cuda target)")


def test_page_locked_host_memory_is_host_memory():
    fn = normfuse.compile(relu_ir(shape="2x8"), "relu")
    x = FakeDeviceArray((2, 8), device=(KDL_CUDA_HOST, 0), fill=-1.0)
    x.host[0, 3] = 2.0
    y = fn(x)
    np.testing.assert_array_equal(y, np.maximum(x.host, 0))


@pytest.mark.parametrize("stream", [0, 7, types.SimpleNamespace(cuda_stream=7)])
def test_a_stream_is_refused_on_a_host_target(host_ln, stream):
    out = poisoned()
    with pytest.raises(ValueError) as error:
        host_ln(*ln_args(), out=out, stream=stream)
    assert str(error.value) == f"stream applies to the cuda target, not {host_ln.target}"
    assert all(np.isnan(a).all() for a in out)


def test_bench_refuses_a_stream_on_a_host_target(host_ln):
    with pytest.raises(ValueError, match="stream applies to the cuda target"):
        host_ln.bench(*ln_args(), runs=1, stream=0)


# --- streams --------------------------------------------------------------

class CupyLikeStream:
    ptr = 0x1234


class ProtocolStream:
    def __cuda_stream__(self):
        return (0, 0x4321)


@pytest.mark.parametrize("stream,handle", [
    (0, 0),
    (2**64 - 1, 2**64 - 1),
    (types.SimpleNamespace(cuda_stream=0xabc), 0xabc),
    (CupyLikeStream(), 0x1234),
    (ProtocolStream(), 0x4321),
])
def test_a_stream_is_an_int_or_an_object_with_its_handle(stream, handle):
    assert normfuse._stream_handle(stream) == handle


@pytest.mark.parametrize("stream,kind", [
    ("0", "str"), (1.0, "float"), (True, "bool"), ([0], "list"),
])
def test_a_stream_of_another_type_raises_type_error(stream, kind):
    with pytest.raises(TypeError) as error:
        normfuse._stream_handle(stream)
    assert f"not {kind}" in str(error.value)
    assert "stream must be an int" in str(error.value)


def test_a_stream_object_whose_handle_is_not_an_int_raises_type_error():
    with pytest.raises(TypeError, match=r"not str \(the handle of a SimpleNamespace\)"):
        normfuse._stream_handle(types.SimpleNamespace(cuda_stream="7"))


@pytest.mark.parametrize("handle", [-1, 2**64])
def test_a_stream_handle_out_of_range_raises_value_error(handle):
    with pytest.raises(ValueError, match=re.escape(f"(0 to 2**64-1), not {handle}")):
        normfuse._stream_handle(handle)


# --- what the C++ half hands the kernel ---------------------------------------

def test_a_device_array_reaches_the_kernel_in_place_as_device_memory():
    fn = normfuse.compile(layer_norm_ir(rows=3, cols=13), "ln")
    x = FakeDeviceArray((3, 13))
    managed = FakeDeviceArray((3, 1), device=(KDL_CUDA_MANAGED, 0))
    host = poisoned()
    refs = fn._impl.tensor_refs([x, *ln_args()[1:]], [False] * 3,
                                [host[0], managed, host[2]], [False] * 3, "cuda")
    assert refs[0] == ("cuda", x.address, "f32", (3, 13), (13, 1))
    assert refs[1][0] == refs[2][0] == "host"
    assert refs[4] == ("cuda", managed.address, "f32", (3, 1), (1, 1))
    assert refs[3] == ("host", host[0].ctypes.data, "f32", (3, 13), (13, 1))


def test_a_described_buffer_reaches_the_kernel_as_described():
    fn = normfuse.compile(relu_ir(shape="?x8"), "relu")
    y = np.empty((4, 8), np.float32)
    refs = fn._impl.tensor_refs([(0x10000, (4, 8), (8, 1), "f32", KDL_CUDA, 0)],
                                [False], [y], [False], None)
    assert refs[0] == ("cuda", 0x10000, "f32", (4, 8), (8, 1))


def test_a_described_buffer_of_another_dtype_raises_type_error_naming_it():
    fn = normfuse.compile(relu_ir(shape="2x8"), "relu")
    with pytest.raises(TypeError) as error:
        fn._impl.tensor_refs([(0x10000, (2, 8), (8, 1), "int32", KDL_CUDA, 0)],
                             [False], [np.empty((2, 8), np.float32)], [False], None)
    assert str(error.value) == ("argument 1 of @relu has dtype int32; it takes "
                                "f32 (tensor<2x8xf32>)")


# --- PyTorch tensors, read by their attributes (a fake torch) -----------------

@pytest.fixture
def torch(monkeypatch):
    module = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", module)
    return module


def test_torch_cpu_tensors_run_on_the_cpu_target(torch, rng):
    fn = normfuse.compile(layer_norm_ir(rows="?", cols=13), "ln")
    x = rng.standard_normal((5, 13), dtype=np.float32)
    g = rng.standard_normal(13, dtype=np.float32)
    b = rng.standard_normal(13, dtype=np.float32)
    y, _, _ = fn(torch.tensor(x, device="cpu"), torch.tensor(g, device="cpu"),
                 torch.tensor(b, device="cpu"))
    assert isinstance(y, np.ndarray)
    np.testing.assert_allclose(y, layer_norm_reference(x, g, b)[0], rtol=0, atol=2e-5)


def test_a_torch_cpu_tensor_is_written_in_place_as_out(torch):
    fn = normfuse.compile(relu_ir(shape="2x8"), "relu")
    y = torch.tensor(np.full((2, 8), 5, np.float32), device="cpu")
    assert fn(-np.ones((2, 8), np.float32), out=y) is y
    np.testing.assert_array_equal(y.array, 0)


@pytest.mark.parametrize("target", HOST_TARGETS)
def test_a_torch_cuda_tensor_is_refused_on_a_host_target(torch, target):
    fn = normfuse.compile(relu_ir(shape="2x8"), "relu", target=target)
    with pytest.raises(ValueError) as error:
        fn(torch.tensor(np.ones((2, 8), np.float32)))
    assert str(error.value) == (
        f"argument 1 of @relu is in CUDA device memory; the {target} target takes "
        'host arrays (compile with target="cuda" to pass device arrays)')
    assert torch.empty_calls == []


def test_a_torch_tensor_of_another_dtype_raises_type_error(torch):
    fn = normfuse.compile(relu_ir(shape="2x8"), "relu")
    x = torch.tensor(np.ones((2, 8), np.int32), torch.int32, device="cpu")
    with pytest.raises(TypeError) as error:
        fn(x)
    assert str(error.value) == ("argument 1 of @relu has dtype i32; it takes "
                                "f32 (tensor<2x8xf32>)")


def test_a_non_contiguous_torch_tensor_raises_value_error(torch):
    fn = normfuse.compile(relu_ir(shape="2x8"), "relu")
    wide = torch.tensor(np.ones((2, 16), np.float32), device="cpu")
    wide.array = wide.array[:, ::2]
    with pytest.raises(ValueError, match="contiguous"):
        fn(wide)


# --- the cuda target's side of a call (a recorded kernel) ---------------------

def cuda_function(ir, entry, check="cuda"):
    """A cuda-target Function whose kernel records its calls (see
    RecordingImpl for `check`)."""
    impl = RecordingImpl(normfuse.compile(ir, entry)._impl, check)
    return normfuse.Function(impl, 0), impl


def test_torch_device_arguments_get_torch_results_on_their_device_and_stream(torch):
    fn, impl = cuda_function(layer_norm_ir(rows="?", cols=13), "ln")
    x = torch.tensor(np.ones((4, 13), np.float32), index=0)
    g, b = (torch.tensor(a, index=0) for a in ln_args()[1:])
    y, mean, rstd = fn(x, g, b)
    assert [type(r) for r in (y, mean, rstd)] == [torch.Tensor] * 3
    assert torch.empty_calls == [((4, 13), torch.float32, x.device),
                                 ((4, 1), torch.float32, x.device),
                                 ((4, 1), torch.float32, x.device)]
    (call,) = impl.calls
    assert call["stream"] == 0x5000
    assert call["refs"][0] == ("cuda", x.data_ptr(), "f32", (4, 13), (13, 1))
    assert call["refs"][3] == ("cuda", y.data_ptr(), "f32", (4, 13), (13, 1))
    assert [r[0] for r in call["refs"]] == ["cuda"] * 6


def test_torch_bf16_results_are_allocated_as_torch_bfloat16(torch):
    fn, impl = cuda_function(relu_ir(dtype="bf16", shape="2x8"), "relu")
    x = torch.tensor(np.zeros((2, 8), np.uint16), torch.bfloat16)
    y = fn(x)
    assert y.dtype is torch.bfloat16
    assert impl.calls[0]["refs"][1][2] == "bf16"


def test_results_follow_the_first_device_argument_mixed_with_host_arrays(torch):
    fn, impl = cuda_function(layer_norm_ir(rows=3, cols=13), "ln")
    x, g, b = ln_args()
    on_device = torch.tensor(g, index=0)
    y, _, _ = fn(x, on_device, b)
    assert isinstance(y, torch.Tensor)
    assert [r[0] for r in impl.calls[0]["refs"]] == ["host", "cuda", "host",
                                                     "cuda", "cuda", "cuda"]
    assert impl.calls[0]["stream"] == 0x5000


def test_host_arguments_on_the_cuda_target_get_numpy_results_and_stream_0(torch):
    fn, impl = cuda_function(layer_norm_ir(rows=3, cols=13), "ln")
    y, _, _ = fn(*ln_args())
    assert isinstance(y, np.ndarray)
    assert impl.calls[0]["stream"] == 0
    assert torch.empty_calls == []
    assert all(r[0] == "host" for r in impl.calls[0]["refs"])


def test_device_out_is_written_in_place_and_allocates_nothing(torch):
    fn, impl = cuda_function(layer_norm_ir(rows=3, cols=13), "ln")
    out = (FakeDeviceArray((3, 13)), FakeDeviceArray((3, 1)), FakeDeviceArray((3, 1)))
    assert fn(*ln_args(), out=out) is out
    refs = impl.calls[0]["refs"]
    assert refs[3:] == [("cuda", a.address, "f32", a.shape, (a.shape[1], 1))
                        for a in out]
    # Arrays of another library say nothing of a stream: the legacy default.
    assert impl.calls[0]["stream"] == 0
    assert torch.empty_calls == []


def test_a_torch_out_sets_the_default_stream(torch):
    fn, impl = cuda_function(relu_ir(shape="2x8"), "relu", check=None)
    y = torch.tensor(np.zeros((2, 8), np.float32), index=3)
    fn(np.ones((2, 8), np.float32), out=y)
    assert impl.calls[0]["stream"] == 0x5003


@pytest.mark.parametrize("what", ["torch", "dlpack"])
def test_an_array_on_another_cuda_device_is_refused_on_the_cuda_target(torch, what):
    fn, impl = cuda_function(relu_ir(shape="2x8"), "relu")
    y = FakeDeviceArray((2, 8))
    x = (torch.tensor(np.ones((2, 8), np.float32), index=1) if what == "torch"
         else FakeDeviceArray((2, 8), device=(KDL_CUDA, 1)))
    with pytest.raises(ValueError) as error:
        fn(x, out=y)
    assert str(error.value) == (
        "argument 1 of @relu is on CUDA device 1; the cuda target runs on device 0 "
        "(CUDA_VISIBLE_DEVICES chooses which GPU that is)")


def test_managed_memory_of_any_device_is_taken_on_the_cuda_target():
    fn, impl = cuda_function(relu_ir(shape="2x8"), "relu")
    x = FakeDeviceArray((2, 8), device=(KDL_CUDA_MANAGED, 1))
    fn(x, out=FakeDeviceArray((2, 8)))
    assert impl.calls[0]["refs"][0][:2] == ("cuda", x.address)


def test_device_arguments_of_another_library_need_out():
    fn, impl = cuda_function(relu_ir(shape="2x8"), "relu")
    with pytest.raises(ValueError) as error:
        fn(FakeDeviceArray((2, 8)))
    assert str(error.value) == (
        "argument 1 of @relu is a CUDA array of device_fakes.FakeDeviceArray; "
        "normfuse allocates device results with PyTorch or CuPy only: pass out= "
        "(arrays to write the results into)")
    assert impl.calls == []


@pytest.mark.parametrize("stream,handle", [
    (0x99, 0x99), (types.SimpleNamespace(cuda_stream=0x98), 0x98),
    (CupyLikeStream(), 0x1234),
])
def test_an_explicit_stream_is_the_one_the_call_runs_on(torch, stream, handle):
    fn, impl = cuda_function(relu_ir(shape="2x8"), "relu")
    fn(torch.tensor(np.ones((2, 8), np.float32)), stream=stream)
    assert impl.calls[0]["stream"] == handle


def test_a_bad_stream_on_the_cuda_target_raises_type_error():
    fn, impl = cuda_function(relu_ir(shape="2x8"), "relu")
    with pytest.raises(TypeError, match="stream must be an int"):
        fn(np.ones((2, 8), np.float32), stream="default")
    assert impl.calls == []


def test_bench_passes_the_stream_on_the_cuda_target(torch):
    fn, impl = cuda_function(relu_ir(shape="2x8"), "relu", check=None)
    result = fn.bench(torch.tensor(np.ones((2, 8), np.float32), index=1), runs=3)
    assert result.runs == 3
    assert impl.calls[0]["stream"] == 0x5001 and impl.calls[0]["runs"] == 3


def test_result_shapes_are_asked_once_per_set_of_input_shapes(torch):
    fn, impl = cuda_function(relu_ir(shape="?x8"), "relu")
    for rows in (2, 3, 2, 3, 2):
        y = fn(torch.tensor(np.ones((rows, 8), np.float32)))
        assert y.shape == (rows, 8)
    assert impl.shape_queries == 2


@pytest.fixture
def cupy(monkeypatch):
    module = fake_cupy()
    monkeypatch.setitem(sys.modules, "cupy", module)
    return module


def test_cupy_device_arguments_get_cupy_results_and_cupy_s_stream(cupy):
    fn, impl = cuda_function(layer_norm_ir(rows=3, cols=13), "ln")
    x = cupy.ndarray((3, 13))
    y, _, _ = fn(x, *ln_args()[1:])
    assert isinstance(y, cupy.ndarray)
    assert cupy.empty_calls == [((3, 13), np.dtype(np.float32), 0),
                                ((3, 1), np.dtype(np.float32), 0),
                                ((3, 1), np.dtype(np.float32), 0)]
    call = impl.calls[0]
    assert call["stream"] == 0x7000
    assert call["refs"][0] == ("cuda", x.address, "f32", (3, 13), (13, 1))
    assert call["refs"][3] == ("cuda", y.address, "f32", (3, 13), (13, 1))


def test_cupy_cannot_allocate_bf16_results(cupy):
    fn, impl = cuda_function(relu_ir(dtype="bf16", shape="2x8"), "relu")
    with pytest.raises(ValueError) as error:
        fn(cupy.ndarray((2, 8), "bf16"))
    assert str(error.value) == (
        "result 1 of @relu is bf16, and CuPy has no bfloat16 dtype to allocate it "
        "on the device of argument 1 of @relu: pass out= (e.g. PyTorch tensors of "
        "torch.bfloat16)")
    assert impl.calls == []


def test_torch_s_stream_wins_over_cupy_s_but_the_first_device_argument_allocates(
        torch, cupy):
    fn, impl = cuda_function(
        """
func.func @add(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = nf.add %a, %b : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
""", "add")
    y = fn(cupy.ndarray((2, 8)), torch.tensor(np.ones((2, 8), np.float32)))
    assert isinstance(y, cupy.ndarray)
    assert impl.calls[0]["stream"] == 0x5000


# --- PyTorch and CuPy are imported only for their own arrays ------------------

def test_normfuse_imports_neither_torch_nor_cupy(tmp_path):
    for name in ("torch", "cupy"):
        # SystemExit: not caught by an `except ImportError` (or Exception).
        (tmp_path / f"{name}.py").write_text(
            f"raise SystemExit('normfuse imported {name}')\n")
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import ml_dtypes
        import normfuse
        fn = normfuse.compile('''
        func.func @relu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
          %0 = nf.relu %x : tensor<2x8xf32>
          return %0 : tensor<2x8xf32>
        }''', "relu")
        fn(np.ones((2, 8), np.float32))
        assert "torch" not in sys.modules and "cupy" not in sys.modules
        print("ok")
    """)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(tmp_path)] + [p for p in sys.path if p])
    result = subprocess.run([sys.executable, "-c", script], env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
