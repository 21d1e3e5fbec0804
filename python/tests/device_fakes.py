"""Stand-ins for CUDA arrays, PyTorch, CuPy and a cuda-target Function, so
that everything about device arrays short of running a kernel is tested
where there is no GPU (CI, the development machines).

- `FakeDeviceArray`: an object with `__dlpack__`/`__dlpack_device__` whose
  DLPack capsule (built with ctypes) says it lives on a CUDA device (or any
  DLPack device); its address is a host buffer's, never read on the device
  types normfuse refuses.
- `fake_torch()`, `fake_cupy()`: modules named `torch` and `cupy` with just
  what normfuse uses (tensor attributes, empty, the current stream); put
  them in sys.modules with monkeypatch.
- `RecordingImpl`: a cuda-target `_normfuse.Function` that runs nothing: it
  records each call and what the C++ half would hand the kernel (through
  the real function's `tensor_refs`).
"""

import ctypes
import types

import numpy as np

# DLPack's device types and dtype codes (dlpack.h).
KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_ROCM = 10
KDL_CUDA_MANAGED = 13
_DTYPE_CODES = {"f16": (2, 16), "f32": (2, 32), "f64": (2, 64), "bf16": (4, 16),
                "i32": (0, 32)}
_NUMPY_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64,
                 "bf16": np.uint16, "i32": np.int32}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    # No deleter: the memory belongs to the FakeDeviceArray.
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeDeviceArray:
    """An array whose DLPack export says it is on DLPack device `device`
    ((2, 0): CUDA device 0). Its memory is a host buffer (`host`), so its
    address is real; nothing on a GPU ever reads it."""

    def __init__(self, shape, dtype="f32", device=(KDL_CUDA, 0), fill=np.nan):
        numpy_dtype = np.dtype(_NUMPY_DTYPES[dtype])
        self.host = np.full(shape, fill if numpy_dtype.kind == "f" else 0,
                            numpy_dtype)
        self.shape = tuple(shape)
        self.dtype_name = dtype
        self.dlpack_device = device
        self._exports = []  # every struct handed out, alive as long as this

    @property
    def address(self):
        return self.host.ctypes.data

    def __dlpack_device__(self):
        return self.dlpack_device

    def __dlpack__(self, **kwargs):
        ndim = len(self.shape)
        shape = (ctypes.c_int64 * max(ndim, 1))(*self.shape)
        strides = (ctypes.c_int64 * max(ndim, 1))(
            *(s // self.host.itemsize for s in self.host.strides))
        code, bits = _DTYPE_CODES[self.dtype_name]
        managed = _DLManagedTensor()
        t = managed.dl_tensor
        t.data = self.address
        t.device = _DLDevice(*self.dlpack_device)
        t.ndim = ndim
        t.dtype = _DLDataType(code, bits, 1)
        t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
        self._exports.append((managed, shape, strides))
        return _capsule_new(ctypes.addressof(managed), b"dltensor", None)


class _TorchDType:
    def __init__(self, name, numpy_dtype):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)

    def __repr__(self):
        return f"torch.{self.name}"


class _TorchDevice:
    def __init__(self, type, index=None):
        self.type = type
        self.index = index

    def __eq__(self, other):
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


def fake_torch():
    """A module `torch` with a Tensor class over NumPy memory, four float
    dtypes and int32, torch.empty (which records its calls in
    `torch.empty_calls`), and the current stream of each CUDA device
    (0x5000 + the device's index)."""
    torch = types.ModuleType("torch")
    torch.float16 = _TorchDType("float16", np.float16)
    torch.bfloat16 = _TorchDType("bfloat16", np.uint16)
    torch.float32 = _TorchDType("float32", np.float32)
    torch.float64 = _TorchDType("float64", np.float64)
    torch.int32 = _TorchDType("int32", np.int32)

    class Tensor:
        """A tensor over a NumPy array: its "device memory" when on cuda."""

        def __init__(self, array, dtype, device=_TorchDevice("cuda", 0)):
            self.array = array
            self.dtype = dtype
            self.device = device

        @property
        def shape(self):
            return tuple(self.array.shape)

        @property
        def is_cuda(self):
            return self.device.type == "cuda"

        @property
        def is_cpu(self):
            return self.device.type == "cpu"

        def data_ptr(self):
            return self.array.ctypes.data

        def stride(self):
            return tuple(s // self.array.itemsize for s in self.array.strides)

        def get_device(self):
            return self.device.index if self.is_cuda else -1

    Tensor.__module__ = "torch"
    torch.Tensor = Tensor
    torch.device = _TorchDevice
    torch.empty_calls = []

    def tensor(array, dtype=None, device="cuda", index=0):
        dtype = dtype or {np.dtype(d.numpy): d for d in (
            torch.float16, torch.float32, torch.float64)}[np.asarray(array).dtype]
        return Tensor(np.ascontiguousarray(array), dtype,
                      _TorchDevice(device, index if device == "cuda" else None))

    def empty(shape, dtype, device):
        torch.empty_calls.append((tuple(shape), dtype, device))
        fill = np.nan if dtype.numpy.kind == "f" else 0
        return Tensor(np.full(shape, fill, dtype.numpy), dtype, device)

    torch.tensor = tensor
    torch.empty = empty
    torch._C = types.SimpleNamespace(
        _cuda_getCurrentRawStream=lambda index: 0x5000 + index)
    return torch


def fake_cupy():
    """A module `cupy` whose ndarray is a FakeDeviceArray on CUDA device 0,
    with cupy.empty (calls recorded in `cupy.empty_calls`, with the device
    current at the time) and a current stream of handle 0x7000."""
    cupy = types.ModuleType("cupy")
    current = []

    class Device:
        def __init__(self, id):
            self.id = id

        def __enter__(self):
            current.append(self.id)

        def __exit__(self, *exc):
            current.pop()

    class ndarray(FakeDeviceArray):
        def __init__(self, shape, dtype="f32"):
            super().__init__(shape, dtype)
            self.device = Device(0)

    ndarray.__module__ = "cupy"
    cupy.ndarray = ndarray
    cupy.empty_calls = []

    def empty(shape, dtype):
        cupy.empty_calls.append((tuple(shape), np.dtype(dtype),
                                 current[-1] if current else None))
        name = {np.dtype(v): k for k, v in _NUMPY_DTYPES.items()}[np.dtype(dtype)]
        return ndarray(shape, name)

    cupy.empty = empty
    cupy.cuda = types.SimpleNamespace(
        get_current_stream=lambda: types.SimpleNamespace(ptr=0x7000))
    return cupy


class RecordingImpl:
    """A cuda-target `_normfuse.Function` for tests without a GPU: the real
    function `real` (compiled for another target) gives the signature and
    result shapes, and `tensor_refs` what the kernel would be handed, its
    memory checked as the cuda target checks it (or not, `check=None`); a
    call runs nothing. Each call is recorded in `calls` as a dict with the
    refs, the stream and the threads."""

    target = "cuda"

    def __init__(self, real, check="cuda"):
        self.real = real
        self.check = check
        self.name = real.name
        self.inputs = real.inputs
        self.outputs = real.outputs
        self.calls = []
        self.shape_queries = 0

    def output_shapes(self, shapes):
        self.shape_queries += 1
        return self.real.output_shapes(shapes)

    def run(self, inputs, in_views, outputs, out_views, threads, stream, sim_order):
        self.calls.append(dict(
            refs=self.real.tensor_refs(inputs, in_views, outputs, out_views,
                                       self.check),
            stream=stream, threads=threads))

    def bench(self, inputs, in_views, outputs, out_views, threads, stream, sim_order, runs):
        self.run(inputs, in_views, outputs, out_views, threads, stream, sim_order)
        self.calls[-1]["runs"] = runs
        return [1e-3] * runs
