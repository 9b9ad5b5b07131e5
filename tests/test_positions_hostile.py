"""The positions rule (only a Python int is a count) and position_ids' pad_value deprecation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import posenc
from conftest import make, to_numpy

pytestmark = pytest.mark.values  # values are read throughout: skipped under --device meta

# --- the positions rule: only a Python int is a count -----------------------------------------

# every function of sinusoidal.py / naive.py that takes positions, with its other arguments
POSITION_FUNCTIONS = {
    "sinusoidal": lambda p, **kw: posenc.sinusoidal(p, 8, **kw),
    "integer": lambda p, **kw: posenc.integer(p, **kw),
    "normalized": lambda p, **kw: posenc.normalized(p, 16, **kw),
    "binary": lambda p, **kw: posenc.binary(p, 4, **kw),
    "periodic": lambda p, **kw: posenc.periodic(p, 5, **kw),
}
WIDTH = {"sinusoidal": 8, "integer": 1, "normalized": 1, "binary": 4, "periodic": 5}


def _equals_numpy(t, want):
    """A float64 tensor against NumPy's values: bit for bit on the CPU (one libm, the angles
    formed alike). On another device the angles are the same float64 numbers, but sin and cos are
    the device's own, not correctly rounded (CUDA's double sin, cos: within 2 ulp; the cuda leg
    measured 1 ulp, 0.38268343236508984 against NumPy's 0.3826834323650899): 2 ulp there."""
    got = t.cpu().numpy()
    if t.device.type == "cpu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_array_max_ulp(got, want, maxulp=2)


@pytest.mark.parametrize("fn", sorted(POSITION_FUNCTIONS))
def test_numpy_scalar_0d_array_and_0d_tensor_are_one_position(fn):
    call = POSITION_FUNCTIONS[fn]
    ids = np.array([3, 7])
    want = call(np.array([7]))[0]  # the row of position 7
    for single in (ids[1], np.int32(7), np.uint8(7), np.array(7), np.float64(7.0), np.float32(7.0)):
        got = call(single)
        assert isinstance(got, np.ndarray) and got.shape == (WIDTH[fn],), (type(single), got.shape)
        np.testing.assert_array_equal(got, want)
    t = call(torch.tensor(7), dtype=torch.float64)
    assert isinstance(t, torch.Tensor) and tuple(t.shape) == (WIDTH[fn],)
    _equals_numpy(t, want)


@pytest.mark.parametrize("fn", sorted(POSITION_FUNCTIONS))
def test_python_int_is_a_count(fn):
    got = POSITION_FUNCTIONS[fn](7)
    assert got.shape == (7, WIDTH[fn])
    np.testing.assert_array_equal(got, POSITION_FUNCTIONS[fn](np.arange(7)))


def test_the_issue_example_numpy_and_tensor_agree():
    """sinusoidal(np.array([3, 7])[1], 8) was (7, 8); the tensor version (8,)."""
    a = posenc.sinusoidal(np.array([3, 7])[1], 8)
    b = posenc.sinusoidal(torch.tensor([3, 7])[1], 8, dtype=torch.float64)
    assert a.shape == tuple(b.shape) == (8,)
    _equals_numpy(b, a)


@pytest.mark.parametrize("fn", sorted(POSITION_FUNCTIONS))
@pytest.mark.parametrize(
    "bad,exc,match",
    [
        (True, TypeError, r"positions must be an int or an array of real numbers, got True"),
        (np.bool_(True), TypeError, r"positions must hold real numbers, got ndarray of dtype bool"),
        (
            2.0,
            TypeError,
            r"positions must be an int count or an array of positions, got 2\.0 \(float\)",
        ),
        (
            np.complex128(1j),
            TypeError,
            r"positions must hold real numbers, got ndarray of dtype complex128",
        ),
        (np.float64(np.nan), ValueError, r"positions must be finite"),
        (10**30, ValueError, r"positions as an int is a count of positions and must be <= 2\*\*53"),
        (2**53 + 1, ValueError, r"must be <= 2\*\*53 .*got 9007199254740993"),
    ],
)
def test_bad_scalars_are_refused(fn, bad, exc, match):
    with pytest.raises(exc, match=match):
        POSITION_FUNCTIONS[fn](bad)


def test_huge_grid_sizes_name_the_argument():
    with pytest.raises(ValueError, match=r"height must be <= 2\*\*53 .*got 10{30}"):
        posenc.sincos_2d(10**30, 2, 8)
    with pytest.raises(ValueError, match=r"width must be <= 2\*\*53"):
        posenc.sincos_2d(2, 10**30, 8, like=torch.zeros(1))


# --- position_ids: the pad_value default is deprecated ----------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_pad_value_default_warns_when_it_matters(backend):
    padded = make(backend, [[0, 1, 1], [1, 1, 1]])
    with pytest.warns(
        DeprecationWarning,
        match=r"the default pad_value changes from 1 to 0 in posenc 0\.3; pass pad_value explicitly",
    ) as record:
        ids = posenc.position_ids(padded)
    assert record[0].filename == __file__  # stacklevel: the warning points at the caller
    np.testing.assert_array_equal(to_numpy(ids), [[1, 0, 1], [0, 1, 2]])  # still 1 for now
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for pad in (0, 1):
            posenc.position_ids(padded, pad_value=pad)
        posenc.position_ids(make(backend, [[1, 1, 1]]))  # no padding: the default changes nothing
