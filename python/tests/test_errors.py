"""Every wrong call raises TypeError or ValueError with normfuse's message,
and writes nothing."""

import numpy as np
import pytest

import normfuse
from conftest import layer_norm_ir, relu_ir


@pytest.fixture(scope="module")
def ln():
    return normfuse.compile(layer_norm_ir(rows=3, cols=13), "ln")


def args(rows=3, cols=13):
    return (np.ones((rows, cols), np.float32), np.ones(cols, np.float32),
            np.zeros(cols, np.float32))


def poisoned():
    return (np.full((3, 13), np.nan, np.float32),
            np.full((3, 1), np.nan, np.float32),
            np.full((3, 1), np.nan, np.float32))


def assert_untouched(out):
    for a in out:
        assert np.isnan(a).all()


def test_a_wrong_number_of_arguments_raises_type_error(ln):
    with pytest.raises(TypeError, match=r"@ln takes 3 arguments \(.*\), got 2"):
        ln(*args()[:2])


def test_a_wrong_number_of_outputs_raises_type_error(ln):
    with pytest.raises(TypeError, match=r"@ln takes 3 results \(.*\), got 2"):
        ln(*args(), out=poisoned()[:2])


def test_a_wrong_dtype_raises_type_error_naming_the_argument(ln):
    x, g, b = args()
    with pytest.raises(TypeError,
                       match=r"argument 1 of @ln has dtype f64; it takes f32 "
                             r"\(tensor<3x13xf32>\)"):
        ln(x.astype(np.float64), g, b)


def test_an_integer_array_raises_type_error(ln):
    x, g, b = args()
    with pytest.raises(TypeError, match="argument 2 of @ln has dtype i32"):
        ln(x, g.astype(np.int32), b)


def test_an_output_of_the_wrong_dtype_raises_type_error_and_writes_nothing(ln):
    out = poisoned()
    wrong = (out[0], out[1], np.zeros((3, 1), np.float16))
    with pytest.raises(TypeError, match="output 3 of @ln has dtype f16"):
        ln(*args(), out=wrong)
    assert_untouched(out[:2])


def test_a_wrong_shape_raises_value_error(ln):
    with pytest.raises(ValueError, match="shape"):
        ln(*args(rows=4))


def test_an_output_of_the_wrong_shape_raises_value_error_and_writes_nothing(ln):
    out = poisoned()
    wrong = (out[0], out[1], np.zeros((4, 1), np.float32))
    with pytest.raises(ValueError, match="shape"):
        ln(*args(), out=wrong)
    assert_untouched(out[:2])


def test_a_non_contiguous_array_raises_value_error(ln):
    x, g, b = args()
    wide = np.ones((3, 26), np.float32)
    with pytest.raises(ValueError, match="contiguous"):
        ln(wide[:, ::2], g, b)


def test_a_non_contiguous_output_raises_value_error_and_writes_nothing(ln):
    out = poisoned()
    wide = np.full((3, 26), np.nan, np.float32)
    with pytest.raises(ValueError, match="contiguous"):
        ln(*args(), out=(wide[:, ::2], out[1], out[2]))
    assert np.isnan(wide).all()
    assert_untouched(out[1:])


def test_inputs_whose_shapes_disagree_raise_value_error():
    ir = """
func.func @add(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = nf.add %a, %b : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
"""
    fn = normfuse.compile(ir, "add")
    with pytest.raises(ValueError):
        fn(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32))


def test_something_that_is_not_an_array_raises_type_error(ln):
    with pytest.raises(TypeError, match="argument 1 of @ln is a list, not an array"):
        ln([[1.0] * 13] * 3, *args()[1:])


def test_a_read_only_output_is_refused():
    fn = normfuse.compile(relu_ir(shape="2x8"), "relu")
    y = np.zeros((2, 8), np.float32)
    y.setflags(write=False)
    with pytest.raises(TypeError):
        fn(np.ones((2, 8), np.float32), out=y)
    assert (y == 0).all()


def test_a_read_only_input_is_accepted():
    fn = normfuse.compile(relu_ir(shape="2x8"), "relu")
    x = -np.ones((2, 8), np.float32)
    x.setflags(write=False)
    np.testing.assert_array_equal(fn(x), 0)
