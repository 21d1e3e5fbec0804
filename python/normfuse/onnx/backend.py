"""normfuse as an ONNX backend (onnx.backend.base.Backend), so that ONNX's
own test runner (onnx.backend.test.BackendTest) drives it:

    import onnx.backend.test
    from normfuse.onnx.backend import NormfuseBackend
    tests = onnx.backend.test.BackendTest(NormfuseBackend, __name__)

Device "CPU" runs on the cpu target, "CUDA" on the GPU. CudaSimBackend
runs "CPU" on the cuda-sim target instead: the CUDA kernels on normfuse's
simulator, which is how CI checks them without a GPU."""

from __future__ import annotations

import ctypes
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep

from . import NotConstant
from . import compile as _compile


def _cuda_device_present() -> bool:
    """Whether the CUDA driver loads and sees a device."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return (driver.cuInit(0) == 0 and driver.cuDeviceGetCount(ctypes.byref(count)) == 0
            and count.value > 0)


class NormfuseRep(BackendRep):
    """A compiled model: run(inputs) takes the graph's inputs (a sequence
    in order, or a dict by name) and returns its outputs in order.

    Where an operator needs a constant (axes, a shape, a bound) that the
    model passes as a graph input, as ONNX's node tests do, the model is
    compiled at run time with that input's value as a constant, once per
    distinct value."""

    def __init__(self, model: onnx.ModelProto, target: str):
        self.model = model
        self.target = target
        initializers = {i.name for i in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in initializers]
        self.constant_inputs: Tuple[str, ...] = ()
        self.fn = None
        # The function the last run called (the model, or a specialization).
        self.last_function = None
        self._specialized: Dict[tuple, Any] = {}
        try:
            self.fn = _compile(model, target=target)
        except NotConstant as e:
            if not e.graph_inputs:
                raise
            self.constant_inputs = e.graph_inputs

    def _arrays(self, inputs: Any) -> List[np.ndarray]:
        if isinstance(inputs, dict):
            missing = [n for n in self.input_names if n not in inputs]
            if missing:
                raise ValueError(f"no value for inputs {missing}")
            inputs = [inputs[n] for n in self.input_names]
        elif isinstance(inputs, np.ndarray):
            inputs = [inputs]
        if len(inputs) != len(self.input_names):
            raise ValueError(f"{len(inputs)} inputs for a model of {len(self.input_names)}")
        return [np.require(a, requirements="C") for a in inputs]

    def _specialize(self, by_name: Dict[str, np.ndarray]):
        while True:
            key = tuple((n, by_name[n].dtype.str, by_name[n].shape, by_name[n].tobytes())
                        for n in self.constant_inputs)
            if key in self._specialized:
                return self._specialized[key]
            constants = {n: by_name[n] for n in self.constant_inputs}
            try:
                fn = _compile(self.model, target=self.target, constants=constants)
            except NotConstant as e:
                new = [n for n in e.graph_inputs if n not in self.constant_inputs]
                if not new:
                    raise
                self.constant_inputs += tuple(new)
                continue
            self._specialized[key] = fn
            return fn

    def run(self, inputs: Any, **kwargs) -> Sequence[np.ndarray]:
        arrays = self._arrays(inputs)
        fn = self.fn
        if fn is None:
            fn = self._specialize(dict(zip(self.input_names, arrays)))
        by_name = dict(zip(self.input_names, arrays))
        self.last_function = fn
        outputs = fn(*[by_name[p.name] for p in fn.onnx.inputs])
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        return tuple(outputs)


class NormfuseBackend(Backend):
    """ONNX models on normfuse: device "CPU" is the cpu target, "CUDA" the GPU."""

    cpu_target = "cpu"

    @classmethod
    def _target(cls, device: str) -> str:
        kind = str(device).split(":")[0].upper()
        if kind == "CPU":
            return cls.cpu_target
        if kind == "CUDA":
            return "cuda"
        raise ValueError(f"unknown device {device!r}")

    @classmethod
    def supports_device(cls, device: str) -> bool:
        try:
            target = cls._target(device)
        except ValueError:
            return False
        if target != "cuda":
            return True
        return _cuda_device_present()

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs) -> NormfuseRep:
        super().prepare(model, device, **kwargs)
        return NormfuseRep(model, cls._target(device))

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)


class CudaSimBackend(NormfuseBackend):
    """Device "CPU" on the cuda-sim target: the CUDA kernels, simulated."""

    cpu_target = "cuda-sim"
