"""ONNX's own backend test runner (onnx.backend.test.BackendTest) driving
normfuse.onnx's backend over every node test whose operators the importer
converts (onnx_backend_cases.py), on the cpu and cuda-sim targets, and on
the cuda target where a GPU is present. Outputs must match ONNX's
expected ones within each test's tolerance (rtol 1e-3, atol 1e-7 unless
the test says otherwise). A test that fails with an error one of
onnx_backend_cases.KNOWN_LIMITS names is an expected failure, reported
with that reason; docs/ONNX-backend.md tabulates them."""

import re

import pytest

onnx = pytest.importorskip("onnx")
import onnx.backend.test  # noqa: E402

import onnx_backend_cases as cases  # noqa: E402
from normfuse.onnx.backend import CudaSimBackend, NormfuseBackend, NormfuseRep  # noqa: E402


def _xfail_known(error: BaseException) -> None:
    reason = cases.known_limit(error)
    if reason is not None:
        pytest.xfail(f"known limit: {reason}")


class _CheckedRep:
    def __init__(self, rep: NormfuseRep):
        self.rep = rep

    def run(self, inputs, **kwargs):
        try:
            outputs = self.rep.run(inputs, **kwargs)
        except Exception as e:  # noqa: BLE001 (classified, then re-raised)
            _xfail_known(e)
            raise
        if not self.rep.last_function.onnx.inputs:
            # Every input it needed was specialized as a constant and the
            # whole graph folded at import: nothing of normfuse's ran.
            pytest.xfail(f"known limit: {cases.FOLDED_REASON}")
        return outputs


def _checked(backend):
    class Checked(backend):
        @classmethod
        def prepare(cls, model, device="CPU", **kwargs):
            try:
                return _CheckedRep(backend.prepare(model, device, **kwargs))
            except Exception as e:  # noqa: BLE001
                _xfail_known(e)
                raise

    Checked.__name__ = backend.__name__
    return Checked


_SELECTED = sorted(c.name for c in cases.selected_cases())
_PATTERN = "^(" + "|".join(re.escape(n) for n in _SELECTED) + ")_(cpu|cuda)$"


def _test_classes(backend, prefix: str):
    """The runner's test classes with the selected tests only (the runner
    would otherwise list every other test of its suite as skipped)."""
    runner = onnx.backend.test.BackendTest(_checked(backend), __name__)
    runner.include(_PATTERN)
    keep = re.compile(_PATTERN)
    devices = [d for d in ("CPU", "CUDA") if backend.supports_device(d)]
    suffixes = tuple("_" + d.lower() for d in devices)
    classes = {}
    for name, cls in runner.test_cases.items():
        for attr in [a for a in vars(cls) if a.startswith("test_")]:
            if not (keep.match(attr) and attr.endswith(suffixes)):
                delattr(cls, attr)
        if any(a.startswith("test_") for a in vars(cls)):
            classes[prefix + name] = cls
    return classes


# "CPU" is the cpu target for NormfuseBackend and cuda-sim for
# CudaSimBackend; NormfuseBackend's "CUDA" (the GPU) only where one is.
globals().update(_test_classes(NormfuseBackend, "Cpu"))
globals().update(_test_classes(CudaSimBackend, "CudaSim"))


def test_the_selection_covers_every_converted_operator():
    """Each operator the importer converts has node tests selected, bar
    those ONNX's suite tests only alongside an unconverted operator."""
    selected = cases.selected_cases()
    tested = {op for c in selected for op in cases.operators(c)}
    untested = set(cases.normfuse.onnx.SUPPORTED_OPERATORS) - tested
    assert untested == set(), untested
    assert len(selected) > 700
