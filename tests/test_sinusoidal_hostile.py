"""sinusoidal, frequencies, shift_matrix and SinusoidalPositionalEncoding against hostile
input: bad arguments refused naming the argument, expected and got; longdouble and float16
dtypes, the float32 bound at the edge of its range, and left-padded positions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import posenc
from conftest import make, to_numpy
from oracle import sinusoidal as oracle
from posenc.torch import SinusoidalPositionalEncoding


@pytest.mark.parametrize(
    "dim,exc,match",
    [
        (7, ValueError, r"dim must be a positive even integer, got 7"),
        (0, ValueError, r"dim must be a positive even integer, got 0"),
        (-4, ValueError, r"dim must be a positive even integer, got -4"),
        (4.0, TypeError, r"dim must be a positive even integer, got 4\.0 \(float\)"),
        ("8", TypeError, r"dim must be a positive even integer, got '8'"),
        (True, TypeError, r"dim must be a positive even integer, got True"),
    ],
)
@pytest.mark.parametrize("fn", ["sinusoidal", "frequencies", "shift_matrix", "module"])
def test_bad_dim(fn, dim, exc, match):
    call = {
        "sinusoidal": lambda: posenc.sinusoidal(4, dim),
        "frequencies": lambda: posenc.frequencies(dim),
        "shift_matrix": lambda: posenc.shift_matrix(1, dim),
        "module": lambda: SinusoidalPositionalEncoding(dim),
    }[fn]
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize(
    "base,exc,match",
    [
        (0, ValueError, r"base must be a finite number > 0 and != 1, got 0\.0"),
        (-10000.0, ValueError, r"base must be a finite number > 0 and != 1, got -10000\.0"),
        (1, ValueError, r"base must be a finite number > 0 and != 1, got 1\.0"),
        (float("inf"), ValueError, r"base must be a finite real number, got inf"),
        (float("nan"), ValueError, r"base must be a finite real number, got nan"),
        (1j, TypeError, r"base must be a finite real number, got 1j"),
        ("1e4", TypeError, r"base must be a finite real number, got '1e4'"),
    ],
)
@pytest.mark.parametrize("fn", ["sinusoidal", "frequencies", "shift_matrix"])
def test_bad_base(fn, base, exc, match):
    call = {
        "sinusoidal": lambda: posenc.sinusoidal(4, 8, base=base),
        "frequencies": lambda: posenc.frequencies(8, base=base),
        "shift_matrix": lambda: posenc.shift_matrix(1, 8, base=base),
    }[fn]
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize(
    "positions,exc,match",
    [
        (np.array([0.0, np.nan]), ValueError, "positions must be finite"),
        (np.array([np.inf]), ValueError, "positions must be finite"),
        (
            np.array([1 + 2j]),
            TypeError,
            "positions must hold real numbers, got ndarray of dtype complex128",
        ),
        (
            np.array([True, False]),
            TypeError,
            "positions must hold real numbers, got ndarray of dtype bool",
        ),
        (np.array(["a"]), TypeError, "positions must hold real numbers"),
        (-3, ValueError, "positions as an int is a count of positions and must be >= 0, got -3"),
        (True, TypeError, "positions must be an int or an array of real numbers, got True"),
        (2.5, TypeError, "positions must be an int count or an array of positions, got 2.5"),
        (torch.tensor([0.0, float("nan")], device="cpu"), ValueError, "positions must be finite"),
        (
            torch.tensor([1 + 1j], device="cpu"),
            TypeError,
            "positions must hold real numbers, got Tensor of dtype torch.complex64",
        ),
        (
            torch.tensor([True], device="cpu"),
            TypeError,
            "positions must hold real numbers, got Tensor of dtype torch.bool",
        ),
    ],
)
def test_bad_positions(positions, exc, match):
    with pytest.raises(exc, match=match):
        posenc.sinusoidal(positions, 8)


@pytest.mark.parametrize("layout", ["halves", "INTERLEAVED", None, 0])
def test_bad_layout(layout):
    with pytest.raises(ValueError, match=r"layout must be one of 'interleaved', 'concat', got"):
        posenc.sinusoidal(4, 8, layout=layout)
    with pytest.raises(ValueError, match=r"layout must be one of 'interleaved', 'concat', got"):
        SinusoidalPositionalEncoding(8, layout=layout)


@pytest.mark.parametrize(
    "positions,dtype,match",
    [
        (4, np.int32, "dtype must be a NumPy floating dtype, got int32"),
        (
            4,
            torch.float32,
            "dtype must be a NumPy floating dtype for NumPy/int input, got torch.float32",
        ),
        (torch.arange(4), np.float32, "dtype must be a floating torch.dtype for tensor input"),
        (
            torch.arange(4),
            torch.int64,
            "dtype must be a floating torch.dtype for tensor input, got torch.int64",
        ),
    ],
)
def test_bad_dtype(positions, dtype, match):
    with pytest.raises(TypeError, match=match):
        posenc.sinusoidal(positions, 8, dtype=dtype)


@pytest.mark.parametrize("offset", [float("nan"), float("inf"), "3", None])
def test_bad_offset_for_shift_matrix(offset):
    with pytest.raises((TypeError, ValueError), match="offset must be a finite real number"):
        posenc.shift_matrix(offset, 8)


@pytest.mark.parametrize("shape", [(2, 5, 6), (2, 5, 10), (8,)])
def test_module_rejects_wrong_width(shape):
    module = SinusoidalPositionalEncoding(8, max_len=16)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., seq, 8\).*got shape"):
        module(torch.zeros(shape))


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"max_len": 0}, ValueError, "max_len must be a positive integer, got 0"),
        ({"max_len": 2.5}, TypeError, "max_len must be a positive integer"),
        ({"dropout": 1.5}, ValueError, r"dropout must be a probability in \[0, 1\), got 1.5"),
        ({"dropout": -0.1}, ValueError, "dropout must be a probability"),
        ({"base": "x"}, TypeError, "base must be a finite real number, got .x."),
        ({"base": 1.0}, ValueError, "base must be a finite number > 0 and != 1"),
    ],
)
def test_module_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        SinusoidalPositionalEncoding(8, **kwargs)


@pytest.mark.parametrize("offset", [1.5, "2", None])
def test_module_bad_offset(offset):
    with pytest.raises(TypeError, match="offset must be an integer"):
        SinusoidalPositionalEncoding(8, max_len=16)(torch.zeros(1, 3, 8), offset=offset)


# --- dtypes: longdouble computed in (at least) float64 ------------------------------------------


@pytest.mark.values
def test_longdouble_is_computed_in_float64():
    positions = np.arange(1000, 1300)
    got = posenc.sinusoidal(positions, 64, dtype=np.longdouble)
    assert got.dtype == np.longdouble
    # float32 work (the old behaviour) differs from the float64 table by ~1e-8
    np.testing.assert_array_equal(got.astype(np.float64), posenc.sinusoidal(positions, 64))
    scattered = np.array([5.25, -3.0, 1e6])
    np.testing.assert_array_equal(
        posenc.sinusoidal(scattered, 8, dtype=np.longdouble).astype(np.float64),
        posenc.sinusoidal(scattered, 8),
    )


@pytest.mark.values
def test_float16_numpy_output_is_float32_rounded_once():
    positions = np.arange(2**20 - 64, 2**20)
    got = posenc.sinusoidal(positions, 64, dtype=np.float16)
    assert got.dtype == np.float16
    want = posenc.sinusoidal(positions, 64)
    assert np.abs(got.astype(np.float64) - want).max() <= 2**-11 + 2.4e-7


# --- the float32 bound at its edge, |p| <= 2**31 -------------------------------------------------

BOUND = 2.4e-7  # the docstring's promise
EDGE = 2**31


def _two_product(a, b):
    """``a * b == hi + lo`` exactly (Dekker, with Veltkamp splitting), elementwise float64."""

    def split(x):
        c = 134217729.0 * x  # 2**27 + 1
        high = c - (c - x)
        return high, x - high

    hi = a * b
    ah, al = split(a)
    bh, bl = split(b)
    lo = ((ah * bh - hi) + ah * bl + al * bh) + al * bl
    return hi, lo


def _exact_table(positions, dim):
    """sin / cos(p w_i) with the float64 ladder w_i, to ~1e-16: the angle kept as hi + lo."""
    w = posenc.frequencies(dim)
    hi, lo = _two_product(np.asarray(positions, np.float64)[:, None], w[None, :])
    out = np.empty((len(positions), dim))
    out[:, 0::2] = np.sin(hi) * np.cos(lo) + np.cos(hi) * np.sin(lo)
    out[:, 1::2] = np.cos(hi) * np.cos(lo) - np.sin(hi) * np.sin(lo)
    return out


@pytest.mark.values
def test_exact_reference_is_exact():
    """The reference agrees with the oracle (Python floats) where both are exact: small p."""
    positions = np.arange(-40, 40) * 3.5
    np.testing.assert_allclose(
        _exact_table(positions, 16), np.array(oracle(positions.tolist(), 16)), rtol=0, atol=1e-14
    )
    hi, lo = _two_product(np.array([EDGE - 1.0]), np.array([0.1]))
    assert lo[0] != 0 and hi[0] + lo[0] == hi[0]  # lo holds what float64 rounds away


@pytest.mark.values
@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("kind", ["steps", "negative_steps", "scattered"])
def test_float32_bound_holds_up_to_the_edge(backend, kind, device):
    if kind == "steps":  # the anchor-and-rotation path, last rows before the edge
        positions = np.arange(EDGE - 1024, EDGE + 1)
    elif kind == "negative_steps":
        positions = -np.arange(EDGE - 1024, EDGE + 1)
    else:  # the direct float64 path
        positions = np.random.default_rng(2).integers(EDGE - 2**24, EDGE + 1, size=400)
    f32 = np.float32 if backend == "numpy" else torch.float32
    got = to_numpy(posenc.sinusoidal(make(backend, positions, device), 128, dtype=f32))
    err = np.abs(got - _exact_table(positions, 128)).max()
    assert err <= BOUND, err


@pytest.mark.values
def test_past_the_edge_float64_itself_cannot_keep_the_bound():
    """Why the range stops: at 2**33 the float64 angle p * w alone is off by more than 2.4e-7."""
    positions = np.arange(2**33 - 256, 2**33)
    w = posenc.frequencies(128)
    angle = positions[:, None].astype(np.float64) * w
    plain = np.empty((len(positions), 128))
    plain[:, 0::2], plain[:, 1::2] = np.sin(angle), np.cos(angle)
    assert np.abs(plain - _exact_table(positions, 128)).max() > BOUND


# --- left padding: first row in steps, later rows not --------------------------------------------


@pytest.mark.values
@pytest.mark.parametrize("layout", ["interleaved", "concat"])
def test_left_padding_rows_are_exact(backend, layout, device):
    mask = np.array(
        [[1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]]
    )
    ids = posenc.position_ids(mask, pad_value=1) + 1000  # row 0 in steps, rows 1-2 not
    assert not np.array_equal(ids[1], ids[1, 0] + np.arange(6))
    dt = np.float64 if backend == "numpy" else torch.float64
    got = to_numpy(posenc.sinusoidal(make(backend, ids, device), 10, layout=layout, dtype=dt))
    want = np.array(oracle(ids.ravel().tolist(), 10, 10000.0, layout)).reshape(4, 6, 10)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    # and every real token gets the row of its sequence alone
    alone = posenc.sinusoidal(np.arange(6) + 1000, 10, layout=layout)
    np.testing.assert_allclose(got[1, 2:], alone[:4], rtol=0, atol=1e-12)
